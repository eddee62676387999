"""The `lancedb_index` asset: chunks.json and a fully indexed table version, written aside (nothing is
published yet). The published version is kept when nothing changed, updated for a small change, else
written whole."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..embedding.cache import EmbedResult
from ..errors import DocsMcpError
from ..failpoints import pause
from ..fsutil import remove_temp_files, write_atomic, write_json_atomic
from ..output.chunk import Chunk
from ..output.layout import CHUNKS, FILE_STATE, METADATA, OutputLayout
from ..output.lock import build_lock
from ..output.metadata import (
    SCHEMA_VERSION,
    PublishedMetadata,
    TableVersion,
    read_metadata,
)
from ..output.table_files import (
    manifests,
    record_files,
    records_problem,
    version_problem,
)
from ..output.vector_index import INDEX_KIND, VectorIndexPolicy
from ..progress import NullReporter, Reporter, counted
from .chunk_lines import SourceUrls
from .contract import ChunkSet
from .file_reuse import (
    chunk_pieces,
    discard_pending,
    pending_paths,
    publish_pending,
    published_files,
    recorded_passages_key,
    write_pending,
    write_pending_chunks,
)
from .passages import recorded_passages

if TYPE_CHECKING:  # object storage is imported only to build for it
    from ..output.objectstore import RemoteOutput


def chunks_json(chunks: list[Chunk]) -> bytes:
    """chunks.json's bytes: a JSON array with one chunk per line (builds stream it: file_reuse.chunk_pieces)."""
    return b"".join(chunk_pieces(sorted(chunks, key=lambda c: (c.filepath, c.chunk_index))))


def index_content_hash(chunks_sha256: str, embedded: EmbedResult, keys: list[str]) -> str:
    """Everything the table is made of: chunks (by chunks.json's sha256), taxonomy columns, and (via fingerprints) vectors."""
    h = hashlib.sha256(f"schema={SCHEMA_VERSION}\0keys={','.join(keys)}\0dims={embedded.dimensions}\0".encode())
    h.update(chunks_sha256.encode())
    if embedded.passages is not None:  # a list of vectors per row (table.py): the layout is part of the table
        h.update(b"passages\0")
    for fp in embedded.fingerprints:
        h.update(fp.encode())
    return h.hexdigest()


def read_published(out: Path, reporter: Reporter) -> PublishedMetadata | None:
    """The published metadata (empty when nothing is published), or None when it is damaged: a warning."""
    try:
        return read_metadata(out) or PublishedMetadata()
    except DocsMcpError as exc:
        reporter.warn(f"ignoring the published index and rebuilding: {exc}")
        return None


def _clean_leftovers(out: Path, published: TableVersion | None) -> None:
    """What a build killed earlier left behind: temp files, and chunks.json/state it wrote aside.

    If it was stopped after publishing metadata.json, its chunks.json is moved in now;
    never-published table versions go when this build prunes (see publish_metadata).
    """
    layout = OutputLayout(out)
    remove_temp_files(layout.root, [CHUNKS, METADATA])
    remove_temp_files(
        layout.state,
        [
            p.name
            for p in (layout.file_state, layout.written, layout.writing_marker, layout.table_files, layout.remote_base)
        ],
    )
    remove_temp_files(layout.pending, [CHUNKS, FILE_STATE])
    if published is not None and published.chunks_sha256:
        publish_pending(out, published.chunks_sha256)
    else:
        discard_pending(out)


UPDATE_MAX_SHARE = 0.1  # a change to at most this share of the rows updates the table; more rewrites it


def _update_published(
    out: Path,
    published: TableVersion,
    chunkset: ChunkSet,
    embedded: EmbedResult,
    keys: list[str],
    digest: str,
    reporter: Reporter,
    source_urls: bool,
) -> TableVersion | None:
    """A new table version made by updating the published one (table.update_table), or None when the
    table is to be written whole: it was not built from the previous chunks, it is damaged, its
    vectors were made under another config or format than this build's (or it does not say: a
    table published before `passages_key`), or the change is not small. With vectors, the kept
    rows' are this build's (same chunks, same passages key: same fingerprints) and the new rows
    get theirs from the embedding cache. `source_urls`: whether a chunk of this build has one
    (seen as chunks.json was written, which it always is when a file changed)."""
    if not chunkset.changed_files or published.chunks_sha256 != chunkset.base_sha256:
        return None
    if embedded.dimensions and not (embedded.passages_key and published.passages_key == embedded.passages_key):
        return None
    changed = set(chunkset.changed_files)
    rows = chunkset.replaced_rows + sum(f.chunks for f in chunkset.files if f.relpath in changed)
    if rows > UPDATE_MAX_SHARE * max(chunkset.chunk_count, 1) or version_problem(out, published) is not None:
        return None
    from .table import RowVectors, update_table

    chunks = chunkset.parsed_chunks()
    vectors = RowVectors.of(chunks, embedded) if embedded.dimensions else None
    marker = OutputLayout(out).writing_marker
    write_atomic(marker, b"")
    updated = update_table(
        out, published.version, chunkset.changed_files, chunks, keys, digest, source_urls=source_urls, vectors=vectors
    )
    marker.unlink()
    if updated is not None:
        reporter.info(
            f"index updated: a new table version, the rows of {counted(len(changed), 'changed file')} replaced "
            "and its indexes rebuilt"
        )
    return updated


def _reuse_problem(out: Path, published: TableVersion) -> tuple[str, bool] | None:
    """Why the published table version cannot simply be republished, and whether it is damage.

    Cheap: a directory listing and a stat per recorded file (a file whose stat changed is read
    and its checksum compared), no LanceDB. Build state that cannot vouch for the version's files
    (table-files.json missing, damaged or without its record) counts as damage: the table is
    rewritten rather than trusted unverified.
    """
    unverified = records_problem(out, published)
    if unverified:
        return f"cannot verify the published table: {unverified}", True
    problem = version_problem(out, published)
    if problem:
        return f"the published index is damaged ({problem})", True
    if max(manifests(out, published.table)) != published.version:
        return "an interrupted build left table versions that were never published", False
    return None


def write_index(
    out: Path,
    chunkset: ChunkSet,
    embedded: EmbedResult,
    reporter: Reporter | None = None,
    *,
    force: bool = False,
    vector_index: VectorIndexPolicy | None = None,
    publish_to: RemoteOutput | None = None,
) -> TableVersion:
    """Write a new, fully indexed table version, and chunks.json aside (nothing is published yet).

    If nothing the table is made of changed and the published version is intact, it is
    reused as is; `force` rewrites it anyway. A damaged published version is rewritten.
    `vector_index` decides whether the vector column gets an ANN index (default: when the
    vectors outgrow the server's in-memory budget); whether it has one is part of the content hash.
    With `publish_to` (an s3:// location), `out` is its local mirror: first brought up to date
    with what is published there.
    """
    reporter = reporter or NullReporter()
    out = Path(out)
    keys = chunkset.taxonomy_keys
    vector_rows = len(embedded.fingerprints) if embedded.cache_dir is not None else 0  # passages included
    ann = (vector_index or VectorIndexPolicy()).wanted(vector_rows or chunkset.chunk_count, embedded.dimensions)
    marker = OutputLayout(out).writing_marker
    with build_lock(out):
        if publish_to is not None and _pull(publish_to, out, reporter):
            reporter.info(f"{out} brought up to date with {publish_to.url}")
        current = read_published(out, reporter)
        published = current.index if current else None
        _clean_leftovers(out, published)
        chunks_sha = chunkset.unchanged_sha256
        chunks_file = OutputLayout(out).chunks  # this build's chunks.json: the table is written from it
        source_urls: SourceUrls | None = None
        if not chunks_sha or published_files(out, chunks_sha)[0] != chunks_file:
            source_urls = SourceUrls()
            chunks_sha = write_pending_chunks(out, source_urls.watch(chunkset.lines()))  # streamed, never held whole
            chunks_file = pending_paths(out)[0]
        digest = index_content_hash(chunks_sha, embedded, keys)
        if ann:  # only then, so the hash of an index without one is what it always was
            digest = hashlib.sha256(f"{digest}\0vector-index={INDEX_KIND}".encode()).hexdigest()
        unchanged = published is not None and published.content_hash == digest
        reuse = unchanged and not marker.exists() and not embedded.forced and not force
        problem = _reuse_problem(out, published) if reuse and published else None
        if problem and problem[1]:
            reporter.warn(f"{problem[0]}; rewriting the table")
        elif problem:
            reporter.info(f"{problem[0]}; writing a new version so they can be removed")
        if reuse and published and not problem:  # the same fingerprints: the same passages key
            info = TableVersion(
                table=published.table,
                version=published.version,
                rows=published.rows,
                content_hash=digest,
                chunks_sha256=chunks_sha,
                passages_key=embedded.passages_key,
                vectors=vector_rows,
                made="kept",
            )
            reporter.info("index unchanged: the published table version is kept")
        elif (
            not (ann or force or embedded.forced)
            and published
            and (
                updated := _update_published(
                    out, published, chunkset, embedded, keys, digest, reporter, bool(source_urls and source_urls.found)
                )
            )
        ):
            info = updated.model_copy(
                update={
                    "chunks_sha256": chunks_sha,
                    "passages_key": embedded.passages_key,
                    "vectors": vector_rows,
                    "made": "updated",
                }
            )
            record_files(out, info.table, info.version, info.files)
        else:
            from .table import write_table  # LanceDB is imported only when a table is written

            write_atomic(marker, b"")
            vectors = embedded.load_vectors()
            intact = published is not None and version_problem(out, published) is None
            if ann:
                reporter.info(f"adding a vector index ({chunkset.chunk_count} rows, --vector-index to change)")
            written = write_table(
                out,
                chunks_file,
                vectors,
                keys,
                digest,
                discard_damaged=not intact,
                vector_index=ann,
                passages=embedded.passages,
            )
            info = written.model_copy(
                update={
                    "chunks_sha256": chunks_sha,
                    "passages_key": embedded.passages_key,
                    "vectors": vector_rows,
                    "made": "written",
                }
            )
            record_files(out, info.table, info.version, info.files)
            marker.unlink()
            indexes = "full-text and vector indexes" if embedded.dimensions else "full-text indexes"
            reporter.info(f"index written: a new table version, {counted(info.rows, 'row')} with {indexes}")
        key = embedded.passages_key if embedded.chunk_ids else None
        if (
            chunkset.hashed
            or chunks_sha != chunkset.unchanged_sha256
            or published_files(out, chunks_sha)[1] is None
            or recorded_passages_key(out, chunks_sha) != key
        ):
            write_pending(
                out, chunks_sha, chunkset.files, chunkset.scanned_ns, recorded_passages(chunkset.files, embedded)
            )
        # else every file was trusted by its recorded stat: the state in place already says all this one would
        write_json_atomic(OutputLayout(out).written, info.to_json())  # the version written, not yet published
    if info.rows != chunkset.chunk_count:
        raise DocsMcpError(f"index has {info.rows} rows but the build has {chunkset.chunk_count} chunks; rebuild")
    pause("written")
    return info


def _pull(remote: RemoteOutput, out: Path, reporter: Reporter) -> bool:
    from ..output.objectstore import pull  # object storage is imported only to build for it

    return pull(remote, out, reporter.warn)
