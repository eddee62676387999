"""The provider interface: identity for fingerprints, and one method that embeds a batch."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class ProviderSettings:
    """Everything a build or server needs to recreate a provider (the API key is never here)."""

    provider: str = "none"
    model: str | None = None
    dimensions: int | None = None
    base_url: str | None = None
    batch_size: int | None = None
    concurrency: int | None = None
    max_retries: int | None = None
    device: str | None = None
    backend: str | None = None  # local provider: onnx or torch (None: onnx when it can run the model)


@dataclass(frozen=True)
class Usage:
    """What a provider's requests have cost so far, for the build summary and its warnings."""

    tokens: int = 0
    cost: float = 0.0  # estimated, in USD
    truncated: tuple[int, ...] = ()  # lengths of inputs cut to the model's limit


class EmbeddingProvider(ABC):
    """Implement `embed`; set name, model and dimensions; list what changes vectors in config_fingerprint.

    Everything else callers use has a default here: override it when a provider differs.
    """

    name: str
    model: str
    dimensions: int
    batch_size: int = 64  # texts per `embed` call
    concurrency: int = 1  # `embed` calls in flight at once (threads)
    cost_per_million_tokens: float = 0.0
    digest: str | None = None  # sha256 of the model's files when they are local: its identity beyond a name
    slow_to_load: bool = False  # `load` takes seconds (a model in memory): run it off the event loop

    @property
    @abstractmethod
    def config_fingerprint(self) -> str: ...

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, shape (len(texts), dimensions), float32, in input order."""

    @property
    def produces_vectors(self) -> bool:
        return self.dimensions > 0

    def describe(self) -> dict[str, object] | None:
        """The `embedding` block of metadata.json (None when there are no vectors)."""
        if not self.produces_vectors:
            return None
        return {"provider": self.name, "model": self.model, "dimensions": self.dimensions}

    def load(self) -> None:
        """Get ready to embed (import libraries, load a model); `embed` calls it when needed."""

    def tune_for_queries(self) -> None:
        """Set up for embedding one short query at a time (a server's query embedder); default: as built."""

    def usage(self) -> Usage:
        """Tokens, estimated cost and truncated inputs so far; free local providers report nothing."""
        return Usage()

    def close(self) -> None:
        """Release clients or models; the default has nothing to release."""
