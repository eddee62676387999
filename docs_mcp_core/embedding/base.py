"""What an embedding provider is: a class with one method to implement.

A provider embeds a batch of texts (`embed`), says how long its vectors are (`dimensions`) and what
changes them (`config_fingerprint`, the key of its cached vectors); its settings are a pydantic model
of its own (`Settings`: settings.py). Anything else is an optional hook it defines when it needs it
(hooks.py: loading a model, passages, query tuning, usage). The registry finds providers by name,
ours and those other packages declare as `docs_mcp.providers` entry points (registry.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .settings import SettingsModel

if TYPE_CHECKING:  # numpy loads with the provider that makes vectors: a text-only build never imports it
    import numpy as np


class EmbeddingProvider(ABC):
    """Implement `embed`; set `model` and `dimensions`; list in `config_fingerprint` what changes vectors.

    The registry makes a provider from its settings (`Settings(...)` of the values given) with
    `cls(**settings)`, or with its `create` hook when it has one. The class's docstring, first
    paragraph, is its line in `docs-mcp build --help`.
    """

    name: ClassVar[str]  # its name in the registry, in --embedding-provider and in metadata.json
    Settings: ClassVar[type[SettingsModel]] = SettingsModel  # its settings: none by default
    model: str
    dimensions: int  # 0: no vectors (a full-text-only index)
    batch_size: int = 64  # texts per `embed` call
    concurrency: int = 1  # `embed` calls in flight at once (threads)

    @property
    @abstractmethod
    def config_fingerprint(self) -> str:
        """sha256 of everything that changes this provider's vectors (fingerprint.config_fingerprint)."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, shape (len(texts), dimensions), float32, in input order."""

    def describe(self) -> dict[str, object] | None:
        """The `embedding` block of metadata.json (None when there are no vectors): what query embedding
        recreates this provider from (registry.settings_from_metadata), and what identifies its model."""
        if not makes_vectors(self):
            return None
        return {"provider": self.name, "model": self.model, "dimensions": self.dimensions}

    def close(self) -> None:  # noqa: B027 - a provider holding no client or model has nothing to release
        """Release clients or models."""


def makes_vectors(provider: EmbeddingProvider) -> bool:
    return provider.dimensions > 0


@dataclass(frozen=True)
class Usage:
    """What a provider's requests have cost so far, for the build summary and its warnings."""

    tokens: int = 0
    cost: float = 0.0  # estimated, in USD
    truncated: tuple[int, ...] = ()  # lengths of inputs cut to the model's limit
