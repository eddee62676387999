"""The LanceDB `chunks` table's columns: what the build writes for each chunk and what a server reads back.

One row per chunk: its fields (output/chunk.py), the search fields derived from it at build time
(output/derived_fields.py), its web page for website corpora, one column per taxonomy key, and its
vector (or, with passages, a list of them). Every table of this schema_version (output/metadata.py)
has every derived column: a reader does not check for them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .chunk import Chunk, meta_column

# pyarrow, numpy and the derived fields are imported when a table is written or read, not by a no-op build
if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

TABLE = "chunks"
VECTOR_COLUMN = "vector"
SOURCE_URL_COLUMN = "source_url"  # website corpora only: file corpora keep their schema
# What a server keeps in memory per row: where the chunk is and what it is called, and its derived fields.
LIGHT_COLUMNS = ["chunk_id", "filepath", "heading", "breadcrumb", "chunk_index", "metadata"]
DERIVED_COLUMNS = ["code_languages", "content_digest", "content_chars", "navigation", "bare_code", "lead", "tables"]
# Full-text indexed on their own, besides content_text and heading: camelCase identifiers split into words.
SUBWORDS_COLUMN = "content_subwords"


def served_columns(names: list[str], texts: bool = True) -> list[str]:
    """The columns a server holds in memory of a table with these column names (search/published.py, and the
    serving snapshot that stands in for it): the light and derived ones, with `texts` the snippet text and
    its sub-words, and a website corpus's source URL."""
    wanted = LIGHT_COLUMNS + DERIVED_COLUMNS
    if texts:
        wanted += ["content_text"] + ([SUBWORDS_COLUMN] if SUBWORDS_COLUMN in names else [])
    return wanted + ([SOURCE_URL_COLUMN] if SOURCE_URL_COLUMN in names else [])


def table_schema(keys: list[str], dims: int, source_urls: bool, multivector: bool = False) -> pa.Schema:
    """The Arrow schema of a table with taxonomy `keys`, `dims`-long vectors (0: none), a source_url column
    when a chunk has one, and with `multivector` a list of passage vectors per row."""
    import pyarrow as pa

    fields = [
        ("chunk_id", pa.string()),
        ("filepath", pa.string()),
        ("heading", pa.string()),
        ("heading_level", pa.int32()),
        ("breadcrumb", pa.string()),
        ("content", pa.string()),
        ("content_text", pa.string()),
        ("chunk_index", pa.int32()),
        ("metadata", pa.string()),
        (SUBWORDS_COLUMN, pa.string()),
        ("code_languages", pa.string()),
        ("content_chars", pa.int32()),
        ("content_digest", pa.string()),
        ("navigation", pa.float32()),
        ("bare_code", pa.bool_()),
        ("lead", pa.string()),
        ("tables", pa.float32()),
    ]
    if source_urls:
        fields.append((SOURCE_URL_COLUMN, pa.string()))
    fields += [(meta_column(key), pa.string()) for key in keys]
    if dims > 0:  # a chunk with passages has one vector each: a list of them per row (LanceDB's multivector)
        vector = pa.list_(pa.float32(), dims)
        fields.append((VECTOR_COLUMN, pa.list_(vector) if multivector else vector))
    return pa.schema(fields)


def record_batch(
    rows: list[Chunk], vectors: np.ndarray | None, keys: list[str], schema: pa.Schema, counts: list[int] | None = None
) -> pa.RecordBatch:
    """One Arrow batch of rows; with `counts`, `vectors` holds counts[i] passage vectors for row i."""
    import numpy as np
    import pyarrow as pa

    from .derived_fields import (
        bare_code,
        code_languages,
        content_digest,
        lead_sentence,
        navigation_share,
        subwords,
        table_share,
    )

    cols: list[pa.Array] = [
        pa.array([c.chunk_id for c in rows], pa.string()),
        pa.array([c.filepath for c in rows], pa.string()),
        pa.array([c.heading for c in rows], pa.string()),
        pa.array([c.heading_level for c in rows], pa.int32()),
        pa.array([c.breadcrumb for c in rows], pa.string()),
        pa.array([c.content for c in rows], pa.string()),
        pa.array([c.content_text for c in rows], pa.string()),
        pa.array([c.chunk_index for c in rows], pa.int32()),
        pa.array([json.dumps(c.metadata, sort_keys=True) for c in rows], pa.string()),
        pa.array([subwords(f"{c.heading}\n{c.content_text}") for c in rows], pa.string()),
        pa.array([" ".join(code_languages(c.content)) for c in rows], pa.string()),
        pa.array([len(c.content_text) for c in rows], pa.int32()),
        pa.array([content_digest(c.heading, c.content, c.content_text) for c in rows], pa.string()),
        pa.array([navigation_share(c.content) for c in rows], pa.float32()),
        pa.array([bare_code(c.content) for c in rows], pa.bool_()),
        pa.array([lead_sentence(c.content) for c in rows], pa.string()),
        pa.array([round(table_share(c.content), 3) for c in rows], pa.float32()),
    ]
    if SOURCE_URL_COLUMN in schema.names:
        cols.append(pa.array([c.source_url for c in rows], pa.string()))
    cols += [pa.array([c.metadata.get(key) for c in rows], pa.string()) for key in keys]
    if vectors is not None:
        dims = vectors.shape[1]
        flat = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1)
        fixed = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dims)
        if counts is not None:
            fixed = pa.ListArray.from_arrays(pa.array(np.concatenate([[0], np.cumsum(counts)]), pa.int32()), fixed)
        cols.append(fixed)
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def vector_column(schema: Any) -> tuple[int, bool]:
    """(dimensions, whether each row holds a list of passage vectors) of a table's `vector` column;
    (0, False) for a table without vectors."""
    if VECTOR_COLUMN not in schema.names:
        return 0, False
    vector_type = schema.field(VECTOR_COLUMN).type
    multivector = not hasattr(vector_type, "list_size")  # a list of fixed-size lists, not one
    return (vector_type.value_type if multivector else vector_type).list_size, multivector
