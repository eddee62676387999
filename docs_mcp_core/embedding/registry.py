"""Build a provider from settings; new providers register here."""

from __future__ import annotations

from ..errors import DocsMcpError
from .base import EmbeddingProvider, ProviderSettings

PROVIDERS = ("none", "hash", "openai", "local", "sentence-transformers")


def settings_from_metadata(embedding: dict | None) -> ProviderSettings:
    """Recreate the provider a published index was built with (for query embedding)."""
    if not embedding:
        return ProviderSettings("none")
    return ProviderSettings(
        provider=str(embedding["provider"]),
        model=embedding.get("model"),
        dimensions=embedding.get("dimensions"),
        base_url=embedding.get("base_url"),
    )


def make_provider(settings: ProviderSettings) -> EmbeddingProvider:
    name = settings.provider
    if name == "none":
        from .none import NoneProvider

        return NoneProvider()
    if name == "hash":
        from .hashing import HashProvider

        return HashProvider(settings.dimensions)
    if name == "openai":
        from .openai_api import OpenAIProvider

        return OpenAIProvider(
            settings.model,
            settings.dimensions,
            settings.base_url,
            batch_size=settings.batch_size,
            concurrency=settings.concurrency,
            max_retries=settings.max_retries,
        )
    if name in ("local", "sentence-transformers"):
        from .local import LocalProvider

        return LocalProvider(settings.model, device=settings.device, batch_size=settings.batch_size,
                             dimensions=settings.dimensions)
    raise DocsMcpError(f"unknown embedding provider {name!r}; choose one of: {', '.join(PROVIDERS)}")
