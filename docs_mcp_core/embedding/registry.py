"""Build a provider from settings; new providers register here."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

from ..errors import DocsMcpError
from .base import BACKENDS, PROVIDERS, EmbeddingProvider, ProviderSettings, provider_setting_fields

__all__ = [
    "BACKENDS",
    "PROVIDERS",
    "default_provider",
    "local_backend",
    "make_provider",
    "resolve_settings",
    "settings_from_metadata",
]


def default_provider() -> tuple[ProviderSettings, str]:
    """What a build uses when no provider is named: semantic (local, onnx, bundled model) where the
    semantic extra is installed, else text-only. Returns the settings and one line saying which and why."""
    from .local import DEFAULT_MODEL
    from .local_onnx import SEMANTIC_EXTRA, has_onnx_model, onnx_available

    if onnx_available() and has_onnx_model(None):
        return (
            ProviderSettings("local", backend="onnx"),
            f"embedding: local (onnx, {DEFAULT_MODEL}), the default; --embedding-provider none for text-only",
        )
    return (
        ProviderSettings("none"),
        f"embedding: none (text-only), the default without the semantic extra; {SEMANTIC_EXTRA} for semantic search",
    )


def resolve_settings(settings: ProviderSettings | None, provider: str | None) -> tuple[ProviderSettings, str | None]:
    """`settings` with `provider` filled in: as named, else local when a backend is named, else the default.
    The second value is the line to show when the default was taken (None otherwise)."""
    base = settings or ProviderSettings()
    if provider is not None:
        return replace(base, provider=provider), None
    if base.backend is not None:
        return replace(base, provider="local"), None
    default, note = default_provider()
    return replace(base, provider=default.provider, backend=default.backend), note


def settings_from_metadata(embedding: dict | None) -> ProviderSettings:
    """Recreate the provider a published index was built with (for query embedding)."""
    if not embedding:
        return ProviderSettings("none")
    recorded = {f.name: embedding.get(f.name) for f, setting in provider_setting_fields() if setting.in_index}
    settings = ProviderSettings(**{**recorded, "provider": str(embedding["provider"])})
    if settings.backend is None and settings.provider in ("local", "sentence-transformers"):
        settings = replace(settings, backend="torch")  # indexes from before the onnx backend
    return settings


def local_backend(settings: ProviderSettings) -> str:
    """The backend asked for, else onnx when it is installed and has the model, else torch."""
    if settings.backend is not None:
        if settings.backend not in BACKENDS:
            raise DocsMcpError(f"unknown embedding backend {settings.backend!r}; choose one of: {', '.join(BACKENDS)}")
        return settings.backend
    if settings.provider == "sentence-transformers" or settings.device not in (None, "cpu"):
        return "torch"
    from .local_onnx import SEMANTIC_EXTRA, has_onnx_model, onnx_available

    if onnx_available() and has_onnx_model(settings.model):
        return "onnx"
    if not onnx_available() and importlib.util.find_spec("sentence_transformers") is None:
        raise DocsMcpError(
            f"the local embedding provider needs a backend: {SEMANTIC_EXTRA} (ONNX Runtime, "
            "offline model included) or pip install 'docs-mcp[local]' (torch)"
        )
    return "torch"


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
            timeout=settings.timeout,
        )
    if name in ("local", "sentence-transformers"):
        if local_backend(settings) == "onnx":
            if settings.device not in (None, "cpu"):
                raise DocsMcpError(
                    f"--embedding-device {settings.device} needs --embedding-backend torch; "
                    "the onnx backend runs on the CPU"
                )
            from .local_onnx import OnnxProvider

            return OnnxProvider(settings.model, batch_size=settings.batch_size, dimensions=settings.dimensions)
        from .local import LocalProvider

        return LocalProvider(
            settings.model, device=settings.device, batch_size=settings.batch_size, dimensions=settings.dimensions
        )
    raise DocsMcpError(f"unknown embedding provider {name!r}; choose one of: {', '.join(PROVIDERS)}")
