"""Build a provider from settings; new providers register here."""

from __future__ import annotations

from ..errors import DocsMcpError
from .base import EmbeddingProvider, ProviderSettings

PROVIDERS = ("none", "hash")


def make_provider(settings: ProviderSettings) -> EmbeddingProvider:
    name = settings.provider
    if name == "none":
        from .none import NoneProvider

        return NoneProvider()
    if name == "hash":
        from .hashing import HashProvider

        return HashProvider(settings.dimensions)
    raise DocsMcpError(f"unknown embedding provider {name!r}; choose one of: {', '.join(PROVIDERS)}")
