"""Deterministic vectors from hashed words and word pairs: free, offline, and lexically meaningful.

For tests and CI. Texts that share words get similar vectors, so hybrid ranking can be
exercised end to end without a model.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import DocsMcpError
from ..output.vector_index import MAX_DIMENSIONS
from .base import EmbeddingProvider
from .fingerprint import config_fingerprint
from .settings import SettingsModel, setting

if TYPE_CHECKING:  # imported where vectors are made: naming the provider (the CLI's options) needs no numpy
    import numpy as np

_WORD = re.compile(r"[a-z0-9]+")
DEFAULT_HASH_DIMENSIONS = 256


class HashSettings(SettingsModel):
    dimensions: int | None = setting(help=f"Vector size (default {DEFAULT_HASH_DIMENSIONS}).", ge=1, le=MAX_DIMENSIONS)


class HashProvider(EmbeddingProvider):
    """Deterministic offline vectors for tests."""

    name = "hash"
    inline_queries = True  # microseconds of numpy: no thread hop
    Settings = HashSettings
    model = "hash-v1"
    batch_size = 512

    def __init__(self, dimensions: int | None = None) -> None:
        self.dimensions = dimensions or DEFAULT_HASH_DIMENSIONS
        if self.dimensions < 2:
            raise DocsMcpError("--embedding-dimensions for the hash provider must be at least 2")

    @property
    def config_fingerprint(self) -> str:
        return config_fingerprint(provider=self.name, model=self.model, dimensions=self.dimensions)

    def _vector(self, text: str) -> np.ndarray:
        import numpy as np

        words = _WORD.findall(text.lower())
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
        vec = np.zeros(self.dimensions, dtype=np.float32)
        if not features:
            features = [text]
        for feature in features:
            h = zlib.crc32(feature.encode("utf-8"))
            vec[h % self.dimensions] += 1.0 if (h >> 31) & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[zlib.crc32(text.encode("utf-8")) % self.dimensions] = 1.0
            norm = 1.0
        return vec / norm

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])
