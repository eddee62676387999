"""Embedding providers behind one small protocol, found by name (ours and other packages'), plus the input,
passages and fingerprint every provider shares."""

from .base import EmbeddingProvider, Usage, makes_vectors
from .fingerprint import EMBEDDING_FORMAT_VERSION, config_fingerprint, passage_fingerprint
from .input import multivector, passages, to_embedding_input
from .registry import (
    GROUP,
    default_provider,
    make_provider,
    provider_names,
    resolve_settings,
    setting_specs,
    settings_from_metadata,
)
from .settings import ProviderSettings, SettingsModel, setting

__all__ = [
    "EMBEDDING_FORMAT_VERSION",
    "GROUP",
    "EmbeddingProvider",
    "ProviderSettings",
    "SettingsModel",
    "Usage",
    "config_fingerprint",
    "default_provider",
    "make_provider",
    "makes_vectors",
    "multivector",
    "passage_fingerprint",
    "passages",
    "provider_names",
    "resolve_settings",
    "setting",
    "setting_specs",
    "settings_from_metadata",
    "to_embedding_input",
]
