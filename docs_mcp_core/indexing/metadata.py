"""The `metadata` asset: metadata.json written last, the publish marker servers watch; then what the
published build no longer needs is removed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..chunking.chunker import CHUNKER_VERSION
from ..embedding import EmbeddingProvider
from ..embedding.cache import EmbedResult, commit_cache
from ..failpoints import pause
from ..output.lock import build_lock
from ..output.metadata import (
    PublishedMetadata,
    TableVersion,
    build_metadata,
    write_metadata,
)
from ..output.table_files import (
    forget_records,
    manifests,
    remove_files,
    unrecorded_files,
)
from ..progress import NullReporter, Reporter, Timer
from .contract import ChunkSet
from .description import default_description
from .file_reuse import publish_pending
from .lancedb_index import read_published
from .quarantine import QUARANTINED
from .serving_snapshot import ensure_snapshot

if TYPE_CHECKING:  # object storage is imported only to build for it, cryptography only to sign
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ..output.objectstore import RemoteOutput

QUARANTINE_LISTED = 1000  # quarantined chunk IDs metadata.json names at most (quarantined_count says how many)


def publish_metadata(
    out: Path,
    chunkset: ChunkSet,
    index: TableVersion,
    provider: EmbeddingProvider,
    *,
    description: str | None = None,
    source_commit: str | None = None,
    embedded: EmbedResult | None = None,
    reporter: Reporter | None = None,
    corpus: str | None = None,
    publish_to: RemoteOutput | None = None,
    signer: Ed25519PrivateKey | None = None,
) -> PublishedMetadata:
    """Write metadata.json: from this moment servers switch to the new table version.

    Without a description, one is made from the corpus (`corpus`, else the docs folder's name).

    The version's serving snapshot is written first (serving_snapshot.py), unless it has one.
    Then chunks.json and the build state are moved in, table versions other than this one
    and the one published before it are pruned, and only then is the embedding cache pruned
    to `embedded`'s vectors (commit_cache), so a build that never publishes never takes a
    vector away from the published index.
    """
    out = Path(out)
    with build_lock(out):
        current = read_published(out, NullReporter())  # write_index already warned about a damaged one
        old = current.index if current else None
        previous = old.version if old and old.table == index.table else None
        if previous == index.version:  # republished as is: the version before it stays the one to keep
            previous = old.previous_version if old else None
        if publish_to is None:  # an index on s3:// is read through LanceDB
            ensure_snapshot(out, index)
        entry = index.to_json()
        entry.pop("file_digests", None)  # a kept version's: read again when signing, dropped when not
        if signer is not None:
            from ..output.signed_files import digests

            entry["file_digests"] = digests(out, index.table, index.version)
        if isinstance(previous, int) and previous != index.version:
            entry["previous_version"] = previous
        listed, count = withheld(chunkset)
        metadata = build_metadata(
            description=description or default_description(corpus or Path(chunkset.root).name, chunkset),
            taxonomy=chunkset.taxonomy,
            total_chunks=chunkset.chunk_count,
            total_files=len(chunkset.files),
            source_commit=source_commit,
            embedding=provider.describe(),
            prompts=chunkset.prompts,
            instructions=chunkset.instructions,
            index=entry,
            chunker_version=CHUNKER_VERSION,
            quarantined=listed,
            quarantined_count=count,
        )
        write_metadata(out, metadata, signer)
        pause("publish")
        if index.chunks_sha256:
            publish_pending(out, index.chunks_sha256)
        keep = {index.version} | ({previous} if isinstance(previous, int) else set())
        # An unreadable metadata.json hid which version a running server may still hold: keep them all this time.
        if current is not None:
            _prune(out, index.table, keep)
        if publish_to is not None:  # the mirror is published: copy it up, metadata.json last
            from ..output.objectstore import push

            timer = Timer()
            stats = push(out, publish_to)
            (reporter or NullReporter()).info(
                f"published to {publish_to.url}: {stats.uploaded} files ({stats.uploaded_bytes / 2**20:.1f} MB) "
                f"uploaded, {stats.deleted} deleted in {timer.seconds:.1f}s"
            )
        if embedded is not None:
            commit_cache(embedded, provider, reporter)
    return metadata


def withheld(chunkset: ChunkSet, cap: int | None = None) -> tuple[dict[str, str], int]:
    """The chunks the trust scan quarantined: ID -> the rules that did it and where (`rule (file:line)`),
    the first `cap` (default QUARANTINE_LISTED) in ID order, and how many there are in all. Every server
    reads metadata.json at open, so it stays small however much a corpus trips the scan; the ID order
    lets a reader tell an unlisted ID before the last listed one from one that may be past the cut."""
    found: dict[str, list[str]] = {}
    for path, flag in chunkset.flags():
        if flag.status == QUARANTINED:
            found.setdefault(flag.chunk_id, []).append(f"{flag.rule} ({path}:{flag.line})")
    first = sorted(found.items())[: QUARANTINE_LISTED if cap is None else cap]
    return {chunk_id: ", ".join(dict.fromkeys(rules)) for chunk_id, rules in first}, len(found)


def _prune(out: Path, table: str, keep: set[int]) -> None:
    """Remove table versions not in `keep` and the files only they used (also those of an
    interrupted prune, which a no-op build finds without importing LanceDB)."""
    found = manifests(out, table)
    keep = {v for v in keep if v in found} | ({max(found)} if found else set())
    if set(found) - keep:
        from .table import prune_versions

        prune_versions(out, table, keep)
    else:
        remove_files(out, table, unrecorded_files(out, table, keep) or [])
    forget_records(out, table, keep)
