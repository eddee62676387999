"""The LanceDB `chunks` table: schema, write, publish by version, open.

Each build writes a new version of the table (rows sorted by chunk_id, then its
indexes); metadata.json pins that version, so a reader never sees a half-built
table and keeps its pinned version while the next build writes. Pruning keeps
versions by number (the published one and the one before it), never by age.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS, Bitmap, BTree

from ..embedding.cache import EmbedResult
from ..errors import DocsMcpError
from ..failpoints import pause
from ..output.chunk import Chunk, meta_column, sql_literal
from ..output.layout import OutputLayout
from ..output.metadata import TableVersion
from ..output.table_checksums import SNAPSHOT_FOLDER
from ..output.table_files import (
    complete_versions,
    files_of,
    forget_missing,
    manifests,
    recorded_files,
    remove_files,
    table_dir,
    unrecorded_files,
)
from ..output.table_schema import SUBWORDS_COLUMN, TABLE, VECTOR_COLUMN, record_batch, table_schema
from ..output.vector_index import index_config
from .chunk_lines import ChunkOrder

# Lance deletes versions older than an age; ours are removed by number before it runs (see
# prune_versions), so this age only has to be longer than any real table has existed.
_NEVER_BY_AGE = dt.timedelta(days=3650)


WRITE_BATCH = 2048  # rows per Arrow batch: the table is written as a stream, never built whole in memory


def _rows(
    order: ChunkOrder, vectors: np.ndarray | None, keys: list[str], passages: list[int] | None = None
) -> pa.RecordBatchReader:
    """The table's rows sorted by chunk_id (BM25 ties then come back in a stable order), batch by batch,
    read back from chunks.json a file at a time (`vectors` are in chunks.json's order; with `passages`,
    passages[i] consecutive rows of them belong to chunk i)."""
    if vectors is not None and vectors.shape[1] == 0:
        vectors = None
    starts = np.concatenate([[0], np.cumsum(passages)]) if vectors is not None and passages is not None else None
    multivector = starts is not None
    schema = table_schema(keys, 0 if vectors is None else vectors.shape[1], order.source_urls, multivector)

    def batch(rows: list[Chunk], picked: list[int]) -> pa.RecordBatch:
        if vectors is None or starts is None:
            return record_batch(rows, None if vectors is None else vectors[picked], keys, schema)
        counts = [int(starts[r + 1] - starts[r]) for r in picked]
        taken = np.concatenate([np.arange(starts[r], starts[r + 1]) for r in picked])
        return record_batch(rows, vectors[taken], keys, schema, counts)

    def batches() -> Iterator[pa.RecordBatch]:
        picked: list[int] = []
        rows: list[Chunk] = []
        for row, chunk in order.by_chunk_id():
            picked.append(row)
            rows.append(chunk)
            if len(rows) == WRITE_BATCH:
                yield batch(rows, picked)
                picked, rows = [], []
        if rows:
            yield batch(rows, picked)

    return pa.RecordBatchReader.from_batches(schema, batches())


def connect(out: Path) -> lancedb.DBConnection:
    return lancedb.connect(str(OutputLayout(out).lancedb))


def write_table(
    out: Path,
    chunks_file: Path,
    vectors: np.ndarray | None,
    keys: list[str],
    digest: str,
    *,
    discard_damaged: bool = False,
    vector_index: bool = False,
    passages: list[int] | None = None,
) -> TableVersion:
    """Write a new table version with all its indexes from a build's chunks.json; the caller publishes it.

    With `vector_index` (see vector_index.VectorIndexPolicy) the `vector` column also gets an
    ANN index, which the server then searches instead of ranking every row exactly.

    The files this write adds are returned (TableVersion.files) so a later build can check,
    without LanceDB, that the version is still intact before it republishes it. A table too
    damaged to take a new version (a corrupt manifest) is deleted and written afresh, but only
    with `discard_damaged`: when nothing intact is published there.
    """
    before = files_of(out, TABLE)
    order = ChunkOrder.scan(chunks_file)
    try:
        table = connect(out).create_table(TABLE, data=_rows(order, vectors, keys, passages), mode="overwrite")
    except Exception as exc:  # noqa: BLE001 - LanceDB raises plain errors for a corrupt table
        if not discard_damaged:
            raise DocsMcpError(
                f"cannot write a new version of {table_dir(out, TABLE)} "
                f"({str(exc).splitlines()[0][:200]}); the published index is unchanged"
            ) from None
        shutil.rmtree(table_dir(out, TABLE), ignore_errors=True)
        before = {}
        table = connect(out).create_table(TABLE, data=_rows(order, vectors, keys, passages), mode="overwrite")
    pause("write")
    _create_indexes(table, keys)
    rows = table.count_rows()
    if vector_index and VECTOR_COLUMN in table.schema.names:
        table.create_index(VECTOR_COLUMN, config=index_config(rows))
        # The first optimize after a vector index commits a version of its own: let it happen now,
        # in the version we publish, not in prune_versions (which would leave one never published).
        table.optimize(cleanup_older_than=_NEVER_BY_AGE)
    files = {rel: size for rel, size in files_of(out, TABLE).items() if before.get(rel) != size}
    if vector_index:  # the optimize replaced index files: record only those this version uses
        live = {str(getattr(i, "index_uuid", "")) for i in table.list_indices()}
        files = {
            rel: size for rel, size in files.items() if not rel.startswith("_indices/") or rel.split("/")[1] in live
        }
    return TableVersion(table=TABLE, version=table.version, rows=rows, content_hash=digest, files=files)


INDEX_WORKERS = 2  # indexes built at once


def _create_indexes(table: Any, keys: list[str], replace: bool = False) -> None:
    """Every scalar and full-text index, built over the table's current rows (`replace`: anew).

    Two at a time: each index builds on one core and commits a version of its own, and Lance
    merges concurrent index commits, so this is faster with the same indexes and versions.
    content_text's, the biggest, starts first. An update rebuilds them all, so that BM25
    statistics equal a full build's.
    """
    specs = [
        ("content_text", FTS(with_position=True)),
        ("heading", FTS(with_position=True)),
        ("breadcrumb", FTS()),
        (SUBWORDS_COLUMN, FTS()),
        ("chunk_id", BTree()),
        ("filepath", BTree()),
        *((meta_column(key), Bitmap()) for key in keys),
    ]
    with ThreadPoolExecutor(max_workers=INDEX_WORKERS, thread_name_prefix="docs-mcp-index") as pool:
        futures = [pool.submit(table.create_index, column, config=config, replace=replace) for column, config in specs]
    for future in futures:
        future.result()  # the first failure, after every build has ended


@dataclass
class RowVectors:
    """The vectors of some rows: each chunk's passages' vectors, by chunk ID."""

    by_chunk: dict[str, np.ndarray]  # (passages, dims) per chunk
    dims: int
    multivector: bool  # rows hold a list of vectors (the table was written with passages)

    @classmethod
    def of(cls, chunks: list[Chunk], embedded: EmbedResult) -> RowVectors:
        """Read from the embedding cache: only these chunks' vectors, not the corpus's."""
        prints = embedded.by_chunk()
        vectors = embedded.load_vectors([fp for c in chunks for fp in prints[c.chunk_id]])
        assert vectors is not None  # a table with vectors: the embed step had a cache
        by_chunk: dict[str, np.ndarray] = {}
        start = 0
        for chunk in chunks:
            count = len(prints[chunk.chunk_id])
            by_chunk[chunk.chunk_id] = vectors[start : start + count]
            start += count
        return cls(by_chunk, embedded.dimensions, embedded.passages is not None)

    def batch(self, rows: list[Chunk], keys: list[str], schema: pa.Schema) -> pa.RecordBatch:
        counts = [len(self.by_chunk[c.chunk_id]) for c in rows]
        stacked = np.concatenate([self.by_chunk[c.chunk_id] for c in rows])
        return record_batch(rows, stacked, keys, schema, counts if self.multivector else None)


def update_table(
    out: Path,
    base_version: int,
    changed_files: list[str],
    chunks: list[Chunk],
    keys: list[str],
    digest: str,
    *,
    source_urls: bool,
    vectors: RowVectors | None = None,
) -> TableVersion | None:
    """A new version of a table, made from `base_version` by replacing the rows of `changed_files`
    with `chunks` (theirs now, with `vectors` when the table has vectors), then rebuilding every
    index over the result and compacting it; None when the table is not fit for it (another
    version on top, another schema, files not recorded, an ANN index, which would have to be
    trained again), and the caller writes it whole. `source_urls`: whether any chunk of the
    corpus has one (the column a fresh build would have).

    Search results are those of a table written whole: BM25 statistics come from the rebuilt
    indexes over exactly the live rows, and the engine's candidate lists do not depend on the
    order the rows are stored in (search/engine.py). Versions before it stay as they were, so a
    reader on the published version keeps it; the files this version shares with them are in
    its record, so pruning never takes one it uses.
    """
    base_record = recorded_files(out, TABLE, base_version)
    if base_record is None or not changed_files:
        return None
    table = connect(out).open_table(TABLE)
    if table.version != base_version:
        return None
    schema = table_schema(keys, vectors.dims if vectors else 0, source_urls, bool(vectors and vectors.multivector))
    if table.schema != schema:
        return None
    if vectors is not None and any(VECTOR_COLUMN in (getattr(i, "columns", None) or []) for i in table.list_indices()):
        return None
    before = files_of(out, TABLE)
    table.delete("filepath IN (" + ", ".join(sql_literal(p) for p in sorted(changed_files)) + ")")
    if chunks:
        ordered = sorted(chunks, key=lambda c: c.chunk_id)
        parts = (ordered[i : i + WRITE_BATCH] for i in range(0, len(ordered), WRITE_BATCH))
        batches = (
            vectors.batch(rows, keys, schema) if vectors else record_batch(rows, None, keys, schema) for rows in parts
        )
        table.add(pa.RecordBatchReader.from_batches(schema, batches))
    pause("write")
    _create_indexes(table, keys, replace=True)
    uncompacted = files_of(out, TABLE)
    # Compact now, in the version we publish (the added rows join the others, deleted ones go): the
    # optimize in prune_versions must find nothing to commit, and the table stays one sorted-ish piece.
    table.optimize(cleanup_older_than=_NEVER_BY_AGE)
    live = {str(getattr(i, "index_uuid", "")) for i in table.list_indices()}
    now = files_of(out, TABLE)
    added = {rel: size for rel, size in now.items() if before.get(rel) != size}
    files = {
        rel: size
        for rel, size in {**base_record, **added}.items()
        if (not rel.startswith("_indices/") or rel.split("/")[1] in live) and not rel.startswith(SNAPSHOT_FOLDER)
    }  # the base version's serving snapshot is its own: this one gets its own at publish
    compacted = {rel for rel in now if rel.startswith("data/") and rel not in uncompacted}
    return TableVersion(
        table=TABLE,
        version=table.version,
        rows=table.count_rows(),
        content_hash=digest,
        files=_rows_files_in_use(files, compacted, _version_summary(table)),
    )


def _version_summary(table: Any) -> dict[str, str]:
    """What the table's current version's manifest counts (total_data_files, total_deletion_files…)."""
    try:
        found = [v for v in table.list_versions() if v.get("version") == table.version]
    except Exception:  # noqa: BLE001 - without it the record stays a superset, which is safe
        return {}
    return dict(found[0].get("metadata") or {}) if found else {}


def _rows_files_in_use(files: dict[str, int], compacted: set[str], summary: dict[str, str]) -> dict[str, int]:
    """An updated version's record without the base's data and deletion files when compaction rewrote
    every fragment (its manifest then counts exactly the compacted files and no deletion file). Kept in
    the record, they would stay on disk as long as the version is kept, and each later update on top
    would carry them on; a partial compaction keeps the superset, which only costs disk."""
    rows_file = ("data/", "_deletions/")
    if (
        not compacted
        or summary.get("total_data_files") != str(len(compacted))
        or summary.get("total_deletion_files") != "0"
    ):
        return files
    return {rel: size for rel, size in files.items() if not rel.startswith(rows_file) or rel in compacted}


def open_table(out: Path, version: int | None = None) -> Any:
    table = connect(out).open_table(TABLE)
    if version is not None:
        table.checkout(version)
    return table


def prune_versions(out: Path, table: str, keep: set[int]) -> int:
    """Delete every version of `table` not in `keep` (nor the latest), then the files only they used.

    Versions are chosen by number: the published version and the one published before it
    stay, so a reader still answering from the previous one finishes its requests. Lance's
    cleanup only selects by age, so the unwanted manifests are removed first (they belong to
    superseded or never-published versions, which no reader holds). Then every data and
    index file that is not one of the kept versions' recorded files is deleted, and Lance's
    own cleanup sweeps the rest (all of it when a kept version's files were not recorded).
    Call with the build lock held: no other writer may be adding files. Returns the number
    of versions removed.
    """
    found = manifests(out, table)
    if not found:
        return 0
    latest = max(found)
    kept = {v for v in found if v in keep or v == latest}
    doomed = [v for v in found if v not in kept]
    for version in doomed:
        found[version].unlink(missing_ok=True)
    pause("prune")
    unused = unrecorded_files(out, table, kept)
    if unused is not None:
        remove_files(out, table, unused)
    complete = complete_versions(out, table, kept)
    connect(out).open_table(table).optimize(cleanup_older_than=_NEVER_BY_AGE, delete_unverified=True)
    # Lance removed what no kept version references: files an updated version took over from an
    # older one and no longer uses (replaced deletion files, emptied fragments) leave its record.
    forget_missing(out, table, complete)
    return len(doomed)
