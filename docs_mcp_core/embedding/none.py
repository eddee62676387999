"""No vectors: a full-text-only index that never calls an embedding API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from .base import EmbeddingProvider
from .fingerprint import config_fingerprint


class NoneProvider(EmbeddingProvider):
    """Full-text only, no vectors."""

    name = "none"
    model = "none"
    dimensions = 0

    @property
    def config_fingerprint(self) -> str:
        return config_fingerprint(provider=self.name)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        return np.zeros((len(texts), 0), dtype=np.float32)
