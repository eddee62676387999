"""Embedding providers behind one interface, plus the input and fingerprint they share."""

from .base import EmbeddingProvider, ProviderSettings, Usage
from .fingerprint import EMBEDDING_FORMAT_VERSION, passage_fingerprint
from .input import to_embedding_input
from .registry import BACKENDS, PROVIDERS, default_provider, make_provider, resolve_settings, settings_from_metadata

__all__ = [
    "BACKENDS",
    "EMBEDDING_FORMAT_VERSION",
    "EmbeddingProvider",
    "PROVIDERS",
    "ProviderSettings",
    "default_provider",
    "passage_fingerprint",
    "make_provider",
    "resolve_settings",
    "settings_from_metadata",
    "to_embedding_input",
    "Usage",
]
