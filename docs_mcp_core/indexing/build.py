"""The build: every step in a row, as `docs-mcp build` runs it, under the output's build lock.

staged docs (the CLI reads --docs-dir as it is) → chunks → fingerprints → cached_vectors →
lancedb_index → metadata → cache_audit: each step is the module of the Dagster asset of that
name (docs_mcp_pipeline/assets.py), which calls the same function.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..embedding import EmbeddingProvider
from ..embedding.cache import EmbedResult
from ..output.layout import OutputLayout
from ..output.lock import build_lock
from ..output.metadata import (
    PublishedMetadata,
    TableVersion,
)
from ..output.vector_index import VectorIndexPolicy
from ..progress import NullReporter, Reporter, Timer
from .cache_audit import new_build_id, record_build
from .cached_vectors import embed_chunks, load_model_early
from .chunks import chunk_corpus
from .fingerprints import fingerprint_chunks
from .lancedb_index import write_index
from .metadata import publish_metadata

if TYPE_CHECKING:  # object storage is imported only to build for it, cryptography only to sign
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ..output.objectstore import RemoteOutput
    from ..trust.policy import CorpusTrust


@dataclass
class BuildSummary:
    out: str
    files: int
    chunks: int
    reused_files: int
    embedded: EmbedResult
    seconds: float
    index: TableVersion
    metadata: PublishedMetadata


def build(
    docs_dir: Path,
    out: Path,
    provider: EmbeddingProvider,
    *,
    description: str | None = None,
    source_commit: str | None = None,
    cache_dir: Path | None = None,
    rebuild_cache: bool = False,
    force: bool = False,
    corpus: str | None = None,
    reporter: Reporter | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
    pages: list[dict[str, Any]] | None = None,
    vector_index: VectorIndexPolicy | None = None,
    publish_to: RemoteOutput | None = None,
    signer: Ed25519PrivateKey | None = None,
    keep_vectors: Collection[str] = (),
    trust: CorpusTrust | None = None,
) -> BuildSummary:
    """Every step in order, all under the output's build lock; validation errors stop it before anything is written.

    The lock is taken before anything is parsed or paid for, so a second build of the same
    output fails at once instead of embedding everything again. `force` re-parses every
    file, re-embeds every chunk and rewrites the table. `pages`: a website crawl's page events,
    for the audit. `signer`: the key metadata.json is signed with (output/signature.py).
    `keep_vectors`: what the other versions of a versioned corpus use from the shared embedding cache
    (indexing/versioned.py), kept when the cache is pruned.
    """
    reporter = reporter or NullReporter()
    timer = Timer()
    out = Path(out)
    cache_dir = cache_dir or OutputLayout(out).embedding_cache
    with build_lock(out):
        loading = load_model_early(provider, cache_dir, rebuild=rebuild_cache or force)
        try:
            chunkset = chunk_corpus(
                docs_dir,
                reporter,
                reuse_from=None if force else out,
                allow_empty=allow_empty,
                workers=workers,
                spill_dir=OutputLayout(out).state,
                trust_settings=trust,
            )
            if loading is None and chunkset.reparsed:
                loading = load_model_early(provider, cache_dir, changed=True)
            fingerprints = fingerprint_chunks(chunkset, provider)
            embedded = embed_chunks(
                chunkset,
                fingerprints,
                provider,
                cache_dir=cache_dir,
                rebuild_cache=rebuild_cache or force,
                reporter=reporter,
                keep=keep_vectors,
            )
            info = write_index(
                out, chunkset, embedded, reporter, force=force, vector_index=vector_index, publish_to=publish_to
            )
            metadata = publish_metadata(
                out,
                chunkset,
                info,
                provider,
                description=description,
                source_commit=source_commit,
                embedded=embedded,
                reporter=reporter,
                corpus=corpus,
                publish_to=publish_to,
                signer=signer,
            )
            try:
                record_build(
                    out,
                    build_id=new_build_id(),
                    corpus=corpus or out.resolve().name,
                    source_commit=source_commit,
                    chunkset=chunkset,
                    fingerprints=fingerprints,
                    embedded=embedded,
                    provider=provider,
                    table_version=info.version,
                    seconds=timer.seconds,
                    pages=pages,
                    defer=True,
                )
            except Exception as exc:  # noqa: BLE001 - the index is published; a locked audit file must not undo that
                reporter.warn(f"could not record this build in the audit database: {exc}")
            return BuildSummary(
                str(out),
                len(chunkset.files),
                chunkset.chunk_count,
                chunkset.reused,
                embedded,
                timer.seconds,
                info,
                metadata,
            )
        finally:
            if loading is not None:  # embed waited for it already; a failed build waits here
                loading.join()


def build_remote(
    docs_dir: Path,
    url: str,
    provider: EmbeddingProvider,
    *,
    state_dir: Path | None = None,
    reporter: Reporter | None = None,
    **options: Any,
) -> BuildSummary:
    """`build` into the local mirror of `url` (`state_dir`), publishing it there (objectstore.py).

    The mirror is brought up to date before anything is parsed, so unchanged files are reused.
    The build lock is the mirror's: builds of one location from one machine never overlap;
    builds from two machines must be kept apart by whoever schedules them.
    """
    reporter = reporter or NullReporter()
    from ..output.objectstore import RemoteOutput, pull

    remote = RemoteOutput.parse(url)
    local = Path(state_dir) if state_dir else remote.default_state_dir()
    with build_lock(local):
        remote.check_bucket()
        if pull(remote, local, reporter.warn):
            reporter.info(f"state dir {local} brought up to date with {remote.url}")
        summary = build(docs_dir, local, provider, reporter=reporter, publish_to=remote, **options)
    summary.out = remote.url
    return summary
