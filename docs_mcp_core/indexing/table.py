"""The LanceDB `chunks` table: schema, write, publish by version, open.

Each build writes a new version of the table (rows sorted by chunk_id, then its
indexes); metadata.json pins that version, so a reader never sees a half-built
table and keeps its pinned version while the next build writes.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS, Bitmap, BTree

from ..derived_fields import code_languages, content_digest, subwords
from ..models import Chunk, IndexInfo

TABLE = "chunks"
LANCEDB_DIR = ".lancedb"
META_PREFIX = "meta_"


def meta_column(key: str) -> str:
    return META_PREFIX + key


def _arrow_table(chunks: list[Chunk], vectors: np.ndarray | None, keys: list[str]) -> pa.Table:
    order = sorted(range(len(chunks)), key=lambda i: chunks[i].chunk_id)
    rows = [chunks[i] for i in order]
    cols: dict[str, pa.Array] = {
        "chunk_id": pa.array([c.chunk_id for c in rows], pa.string()),
        "filepath": pa.array([c.filepath for c in rows], pa.string()),
        "heading": pa.array([c.heading for c in rows], pa.string()),
        "heading_level": pa.array([c.heading_level for c in rows], pa.int32()),
        "breadcrumb": pa.array([c.breadcrumb for c in rows], pa.string()),
        "content": pa.array([c.content for c in rows], pa.string()),
        "content_text": pa.array([c.content_text for c in rows], pa.string()),
        "chunk_index": pa.array([c.chunk_index for c in rows], pa.int32()),
        "metadata": pa.array([json.dumps(c.metadata, sort_keys=True) for c in rows], pa.string()),
        # derived search fields (fields.py); search.py uses each only when the table has it
        "content_subwords": pa.array([subwords(f"{c.heading}\n{c.content_text}") for c in rows], pa.string()),
        "code_languages": pa.array([" ".join(code_languages(c.content)) for c in rows], pa.string()),
        "content_chars": pa.array([len(c.content_text) for c in rows], pa.int32()),
        "content_digest": pa.array([content_digest(f"{c.heading}\n{c.content_text}") for c in rows], pa.string()),
    }
    for key in keys:
        cols[meta_column(key)] = pa.array([c.metadata.get(key) for c in rows], pa.string())
    if vectors is not None and vectors.shape[1] > 0:
        dims = vectors.shape[1]
        flat = np.ascontiguousarray(vectors[order], dtype=np.float32).reshape(-1)
        cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dims)
    return pa.table(cols)


def connect(out: Path) -> lancedb.DBConnection:
    return lancedb.connect(str(Path(out) / LANCEDB_DIR))


def write_table(out: Path, chunks: list[Chunk], vectors: np.ndarray | None, keys: list[str], digest: str) -> IndexInfo:
    """Write a new table version with all its indexes; the caller publishes it."""
    data = _arrow_table(chunks, vectors, keys)
    db = connect(out)
    table = db.create_table(TABLE, data=data, mode="overwrite")
    table.create_index("heading", config=FTS(with_position=True))
    table.create_index("content_text", config=FTS(with_position=True))
    table.create_index("breadcrumb", config=FTS())
    table.create_index("content_subwords", config=FTS())
    table.create_index("chunk_id", config=BTree())
    table.create_index("filepath", config=BTree())
    for key in keys:
        table.create_index(meta_column(key), config=Bitmap())
    dims = int(vectors.shape[1]) if vectors is not None and vectors.size else 0
    return IndexInfo(TABLE, table.version, data.num_rows, digest, dims)


def open_table(out: Path, version: int | None = None) -> Any:
    table = connect(out).open_table(TABLE)
    if version is not None:
        table.checkout(version)
    return table


def prune_versions(out: Path, keep_from: int | None) -> None:
    """Delete table versions older than `keep_from` (the previously published one stays readable)."""
    if keep_from is None:
        return
    table = connect(out).open_table(TABLE)
    stamps = {v["version"]: v["timestamp"] for v in table.list_versions()}
    if keep_from not in stamps:
        return
    # Lance prunes by age and reports naive local times; turn "older than keep_from" into an age.
    kept_at = stamps[keep_from].astimezone(dt.timezone.utc)
    age = dt.datetime.now(dt.timezone.utc) - kept_at + dt.timedelta(milliseconds=1)
    table.optimize(cleanup_older_than=age)
