"""The `cached_vectors` asset: a vector for every passage of every chunk, cache hits reused and only
misses sent to the provider; and the model load a build starts early."""

from __future__ import annotations

import threading
from collections.abc import Collection
from pathlib import Path

from ..embedding import EmbeddingProvider, hooks, makes_vectors, multivector
from ..embedding.cache import EmbedResult, embed_with_cache, may_hold_vectors
from ..errors import DocsMcpError
from ..progress import Reporter
from .contract import ChunkSet
from .passages import passage_plan


def load_model_early(
    provider: EmbeddingProvider, cache_dir: Path, *, rebuild: bool = False, changed: bool = False
) -> threading.Thread | None:
    """Start loading a slow model in a background thread when this build will embed every chunk, or
    (`changed`: files were parsed because their text changed) probably some.

    Why: on a cold build the load (imports, opening the model) then overlaps parsing instead of
    following it; after an edit, it overlaps the fingerprints and the cache lookup (importing
    LanceDB). Only then: a build that may embed nothing (a no-op rebuild, a touched file) must not
    pay for a model. A failed load is left for the embed step, which loads again and reports it.
    Join the thread before the build returns.
    """
    if not (makes_vectors(provider) and hooks.slow_to_load(provider)):
        return None
    if not (rebuild or changed) and may_hold_vectors(cache_dir, provider):
        return None

    # numpy first, on this thread: the model's runtime imports it in the thread while this one imports it
    # for the embedding cache, and two threads importing numpy at once left one of them a partial module
    # ("cannot import name '__cpu_features__'")
    import numpy  # noqa: F401

    def load() -> None:
        try:
            hooks.load(provider)
        except Exception:  # noqa: BLE001, S110 - the embed step loads again and reports the failure
            pass

    thread = threading.Thread(target=load, name="docs-mcp-load-model", daemon=True)
    thread.start()
    return thread


def embed_chunks(
    chunkset: ChunkSet,
    fingerprints: list[str],
    provider: EmbeddingProvider,
    *,
    cache_dir: Path,
    rebuild_cache: bool = False,
    reporter: Reporter | None = None,
    keep: Collection[str] = (),
) -> EmbedResult:
    """Vectors for every passage of every chunk: cache hits reused, only misses sent to the provider.

    `keep`: fingerprints the other versions of a versioned corpus use (the cache is theirs too)."""
    if not makes_vectors(provider):
        return embed_with_cache(
            [], [], fingerprints, provider, Path(cache_dir), rebuild=rebuild_cache, reporter=reporter
        )
    plan = passage_plan(chunkset, provider)
    ids = [row[0] for row in plan.rows for _ in row[1:]]
    counts = [len(row) - 1 for row in plan.rows]
    if plan.fingerprints != fingerprints:
        raise DocsMcpError(f"{len(fingerprints)} fingerprints for {len(ids)} passages: the chunks changed; build again")
    embedded = embed_with_cache(
        ids,
        lambda missing: plan.texts_of(chunkset, provider, missing),
        fingerprints,
        provider,
        Path(cache_dir),
        rebuild=rebuild_cache,
        reporter=reporter,
        keep=keep,
    )
    # a list of vectors per row only when there are rows: LanceDB fails to create a multivector table from none
    embedded.passages = counts if multivector(provider) and counts else None
    if embedded.stats.embedded:  # the model is loaded: make what its query embedding will open (once per machine)
        hooks.prepare_queries(provider)
    return embedded
