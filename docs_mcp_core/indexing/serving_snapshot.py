"""The serving snapshot (output/serving_snapshot.py) of the table version a build publishes, written
before metadata.json names it: read back through LanceDB with the queries a server opening the version
without one runs, so both hold the same."""

from __future__ import annotations

import asyncio
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..output import serving_snapshot
from ..output.layout import OutputLayout
from ..output.metadata import TableVersion
from ..output.table_checksums import load
from ..output.table_files import add_records
from ..output.table_schema import (
    VECTOR_COLUMN,
    served_columns,
    vector_column,
)
from ..output.vector_index import VECTOR_MEMORY_BYTES, has_vector_index


def ensure_snapshot(out: Path, index: TableVersion) -> None:
    """Give `index` (about to be published) its snapshot, recorded with its files, unless it has one or is
    not an index a server holds in memory. Call with the build lock held."""
    files = load(OutputLayout(out).table_files).files(index.table, index.version)
    if files is None:  # build state that cannot vouch for the version: the server reads it through LanceDB
        return
    prefix = serving_snapshot.prefix(index.version)
    if any(rel.startswith(prefix) for rel in files) and serving_snapshot.present(out, index.table, index.version):
        return
    target = serving_snapshot.folder(out, index.table, index.version)
    shutil.rmtree(target, ignore_errors=True)  # an interrupted write's, never recorded
    with ThreadPoolExecutor(1) as pool:  # its own event loop, whether or not the caller runs one
        written = pool.submit(asyncio.run, _write(out, index.table, index.version, target)).result()
    if written:
        add_records(out, index.table, index.version, {prefix + name: size for name, size in written.items()})


async def _write(out: Path, name: str, version: int, target: Path) -> dict[str, int] | None:
    import lancedb

    db = await lancedb.connect_async(str(OutputLayout(out).lancedb))
    table = await db.open_table(name)
    await table.checkout(version)
    count = max(1, await table.count_rows())
    schema = await table.schema()
    indices = list(await table.list_indices())
    chars = await table.query().select(["content_chars"]).limit(count).to_arrow()
    text_bytes = sum(n or 0 for n in chars.column("content_chars").to_pylist())
    dims, multivector = vector_column(schema)
    if has_vector_index(indices) or text_bytes > serving_snapshot.TEXT_BYTES:
        return None
    wanted = served_columns(schema.names)
    extra = ["content"] + ([VECTOR_COLUMN] if dims else [])
    rows = await table.query().with_row_id().select(wanted + extra).limit(count).to_arrow()
    vectors = starts = None
    if dims:
        vectors, starts = serving_snapshot.unit_rows(rows.column(VECTOR_COLUMN), dims, multivector)
        if vectors.nbytes > VECTOR_MEMORY_BYTES:
            return None
    head: dict[str, Any] = {
        "table": name,
        "version": version,
        "rows": rows.num_rows,
        "count": count,
        "dims": dims,
        "multivector": multivector,
        "vectors": 0 if vectors is None else len(vectors),
        "text_bytes": text_bytes,
        "indices": sorted(
            (serving_snapshot.describe_index(i) for i in indices), key=lambda d: (d["columns"], d["index_type"])
        ),
        "row_ids": rows.column("_rowid").to_pylist(),
        "columns": {column: rows.column(column).to_pylist() for column in wanted},
    }
    contents = rows.column("content").to_pylist()
    head["sizes"] = [len(text) for text in contents]  # characters, as get_doc's offsets count them
    return serving_snapshot.write(target, head, contents, vectors, starts)
