"""The serving snapshot of a table version: what a server holds in memory of it, written at publish in
files that need neither LanceDB nor pyarrow to read, so a server answers without importing either.

OUT/.lancedb/chunks.lance/_serving/VERSION/ holds
- rows.json: the version's facts (row count, its indexes as `list_indices` describes them, the vector
  dimensions) and, per row in the table's order, its `_rowid`, the light and derived columns,
  content_text, the sub-words, the source URL, and where its `content` ends in content.txt;
- content.txt: every row's Markdown (get_doc's `content`), UTF-8, one after the other, read by offset;
- vectors.npy, and passage-starts.npy when some chunk has several passages: the unit vectors,
  memory-mapped read-only, so the sessions serving one index share their pages.

Inside the table folder, the snapshot is one more set of the version's files: recorded with them
(table-files.json), signed with them, pruned with them. It is written only for an index a server holds
wholly in memory (no ANN index, texts and vectors within the budgets); others are read through LanceDB.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..fsutil import write_atomic
from .layout import OutputLayout

if TYPE_CHECKING:  # numpy is imported when a snapshot is written or read, not by a no-op build
    import numpy as np

FORMAT = 1
FOLDER = "_serving"
HEAD = "rows.json"
CONTENT = "content.txt"
VECTORS = "vectors.npy"
STARTS = "passage-starts.npy"
# The snippet texts a server holds in memory at most (search/published.py); past it, no snapshot is written.
TEXT_BYTES = 64 * 2**20


class SnapshotError(OSError):
    """The snapshot is there but cannot be used (damaged, or written by another format): an OSError, so a
    request that meets it reports the index as unreadable, as for any damaged file of it."""


def prefix(version: int) -> str:
    """The snapshot's files' paths relative to the table folder start with this."""
    return f"{FOLDER}/{version}/"


def folder(out: Path | str, table: str, version: int) -> Path:
    return OutputLayout(out).table(table) / FOLDER / str(version)


def present(out: Path | str, table: str, version: int) -> bool:
    """Whether a snapshot of `version` was written (a stat: nothing is read)."""
    return (folder(out, table, version) / HEAD).is_file()


def unit_rows(column: Any, dims: int, multivector: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """(the `vector` column, a pyarrow ChunkedArray, as unit float32 rows, where each chunk's passages
    start or None when every chunk has one), written straight into one matrix a record batch at a time.

    Joining the batches first, then dividing, then casting would hold the matrix four times at once;
    each row is divided by its own norm, so the rows come out the same either way.
    """
    import numpy as np

    lengths = (
        np.concatenate([chunk.value_lengths().to_numpy(zero_copy_only=False) for chunk in column.chunks])
        if multivector and column.num_chunks
        else None
    )
    total = int(lengths.sum()) if lengths is not None else len(column)
    vectors = np.empty((total, dims), dtype=np.float32)
    at = 0
    for chunk in column.chunks:
        if multivector:  # every passage is a row of the matrix
            part = chunk.flatten().flatten().to_numpy(zero_copy_only=False).reshape(-1, dims)
        else:
            part = chunk.values.slice(chunk.offset * dims, len(chunk) * dims).to_numpy(zero_copy_only=False)
            part = part.reshape(-1, dims)
        norms = np.linalg.norm(part, axis=1, keepdims=True)
        np.divide(part, np.where(norms == 0, 1, norms), out=vectors[at : at + len(part)], casting="same_kind")
        at += len(part)
    starts = None
    if lengths is not None and not np.all(lengths == 1):
        starts = np.concatenate([[0], np.cumsum(lengths[:-1])]).astype(np.int64)
    return vectors, starts


def describe_index(index: Any) -> dict[str, Any]:
    """What the readers ask of one `list_indices` entry (bm25.same_indexes, vector_index.has_vector_index),
    as JSON; not its UUID, which differs from build to build."""
    details = getattr(index, "index_details", None)
    return {
        "columns": list(getattr(index, "columns", [])),
        "index_type": str(getattr(index, "index_type", "")),
        "index_details": dict(details) if details else None,
        "num_indexed_rows": getattr(index, "num_indexed_rows", None),
        "num_unindexed_rows": getattr(index, "num_unindexed_rows", None),
    }


def write(
    target: Path,
    head: dict[str, Any],
    contents: list[str],
    vectors: np.ndarray | None,
    starts: np.ndarray | None,
) -> dict[str, int]:
    """Write a snapshot into the empty folder `target`, rows.json last; returns its files (name -> size).

    `head` holds the facts and columns; the content offsets and the other files' sizes are added here.
    """
    import numpy as np

    target.mkdir(parents=True, exist_ok=True)
    encoded = [text.encode() for text in contents]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64) if encoded else np.empty(0, dtype=np.int64)
    files: dict[str, int] = {}
    write_atomic(target / CONTENT, b"".join(encoded))
    files[CONTENT] = int(ends[-1]) if len(ends) else 0
    for name, array in ((VECTORS, vectors), (STARTS, starts)):
        if array is not None:
            with open(target / name, "wb") as fh:
                np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
            files[name] = (target / name).stat().st_size
    body = dict(head, format=FORMAT, content_ends=ends.tolist(), files=dict(sorted(files.items())))
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    write_atomic(target / HEAD, data)
    files[HEAD] = len(data)
    return files


@dataclass
class Snapshot:
    """A snapshot, read: the facts and columns of rows.json, the vectors mapped, the content by offset."""

    where: Path
    head: dict[str, Any]
    row_ids: np.ndarray
    vectors: np.ndarray | None
    starts: np.ndarray | None
    ends: np.ndarray  # where each row's content ends in content.txt (bytes)
    digest: str = ""  # xxh3-128 of rows.json: what a server's word positions are built from (words_cache.py)

    @property
    def columns(self) -> dict[str, list[Any]]:
        return dict(self.head["columns"])

    @property
    def indices(self) -> list[Any]:
        """The version's indexes, as objects with `list_indices`'s attributes."""
        return [SimpleNamespace(**index) for index in self.head["indices"]]

    def content(self, rows: list[int]) -> list[str]:
        """The Markdown of these rows (places in the table's order), each read by its offsets."""
        found = []
        with open(self.where / CONTENT, "rb") as fh:
            for row in rows:
                start = int(self.ends[row - 1]) if row else 0
                size = int(self.ends[row]) - start
                fh.seek(start)
                data = fh.read(size)
                if len(data) != size:
                    raise SnapshotError(f"{self.where / CONTENT} is shorter than its offsets say")
                found.append(data.decode())
        return found


def read(out: Path | str, table: str, version: int) -> Snapshot | None:
    """The snapshot of `version`, or None when none was written; SnapshotError when it cannot be used."""
    import numpy as np

    where = folder(out, table, version)
    try:
        raw = (where / HEAD).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SnapshotError(f"{where / HEAD}: {exc.strerror or exc}") from None
    try:
        head = json.loads(raw)
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise SnapshotError(f"{where / HEAD} is of another format than this docs-mcp reads")
        if head.get("version") != version or head.get("table") != table:
            raise SnapshotError(f"{where / HEAD} is not the snapshot of table version {version}")
        rows = int(head["rows"])
        for name, size in head["files"].items():
            if name == HEAD or "/" in name or (where / name).stat().st_size != size:
                raise SnapshotError(f"{where / name} does not have the {size} bytes it was written with")
        vectors = np.load(where / VECTORS, mmap_mode="r", allow_pickle=False) if VECTORS in head["files"] else None
        starts = np.load(where / STARTS, allow_pickle=False) if STARTS in head["files"] else None
        ends = np.asarray(head["content_ends"], dtype=np.int64)
        row_ids = np.asarray(head["row_ids"], dtype=np.uint64)
        columns = head["columns"]
        lists = [ends, row_ids, head["sizes"], *columns.values()]
        if "chunk_id" not in columns or any(len(values) != rows for values in lists):
            raise SnapshotError(f"{where / HEAD} does not hold a value of every column for each of its {rows} rows")
        if vectors is not None and (vectors.ndim != 2 or vectors.shape[1] != head["dims"]):
            raise SnapshotError(f"{where / VECTORS} is not a matrix of {head['dims']}-dimensional rows")
    except SnapshotError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"{where} is damaged ({str(exc).splitlines()[0][:200]})") from None
    import xxhash

    return Snapshot(where, head, row_ids, vectors, starts, ends, xxhash.xxh3_128_hexdigest(raw))
