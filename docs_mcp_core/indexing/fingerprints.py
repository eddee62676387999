"""The `fingerprints` asset: one embedding fingerprint per passage, what decides whether a cached
vector is reusable."""

from __future__ import annotations

from ..embedding import EmbeddingProvider, makes_vectors
from .contract import ChunkSet
from .passages import passage_plan


def fingerprint_chunks(chunkset: ChunkSet, provider: EmbeddingProvider) -> list[str]:
    """One fingerprint per passage, chunk after chunk; none for a provider that makes no vectors
    (nothing is cached for it, and a no-op build then never loads the previous chunks). Files reused
    unchanged keep the fingerprints the last build recorded for them (passages.py)."""
    if not makes_vectors(provider):
        return []
    return passage_plan(chunkset, provider).fingerprints
