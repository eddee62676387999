"""When a table gets an ANN vector index, how it is built, and how searches probe it.

Shared by the build (indexing/table.py) and the read path (search/). Without an index the server
ranks every vector exactly: from a unit-vector matrix in memory while the vectors fit
VECTOR_MEMORY_BYTES, else by LanceDB's flat scan, which grows with the table. An IVF_HNSW_SQ
index replaces both with LanceDB's ANN search, probing PROBE_SHARE of the partitions (at least
MIN_PROBES) and re-ranking REFINE_FACTOR x the candidates by exact cosine distance. So `auto` adds
one exactly when the vectors outgrow the in-memory budget, where it beats the flat scan it
replaces; `--vector-index-min-rows N` sets a row count instead, trading the in-memory matrix
(rows x dims x 4 bytes) for an index query. The figures are in docs/decisions/0005.

The partition count follows from the row count alone, so the server derives the same
number of probes from the table it opens. Training (k-means, graph construction) samples
at random: two builds of one corpus can give slightly different indexes; one published
index answers the same query with the same rows every time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .table_schema import VECTOR_COLUMN

MODES = ("auto", "none", "always")
VECTOR_MEMORY_BYTES = 128 * 2**20  # the vectors a server keeps in memory for exact ranking
ROWS_PER_PARTITION = 256
MAX_PARTITIONS = 1024
PROBE_SHARE = 0.5
MIN_PROBES = 8  # small tables: (nearly) every partition
REFINE_FACTOR = 10  # rows re-ranked exactly per candidate the engine asks for: fewer lose recall on big tables
INDEX_KIND = "ivf_hnsw_sq"  # recorded in the content hash: changing the index rewrites the table
# The longest vector accepted (--embedding-dimensions, metadata.json's embedding.dimensions): twice what
# the largest embedding models make (4,096); more is a typo that would make every row megabytes.
MAX_DIMENSIONS = 8192


@dataclass(frozen=True)
class VectorIndexPolicy:
    """`auto` indexes tables whose vectors outgrow VECTOR_MEMORY_BYTES, or with `min_rows`, tables of
    at least that many rows; `none` never; `always` whenever there are vectors."""

    mode: str = "auto"
    min_rows: int | None = None

    def wanted(self, rows: int, dims: int) -> bool:
        if dims <= 0 or rows == 0 or self.mode == "none":
            return False
        if self.mode == "always":
            return True
        return rows >= self.min_rows if self.min_rows is not None else rows * dims * 4 > VECTOR_MEMORY_BYTES


def partitions(rows: int) -> int:
    """IVF partitions for a table of `rows` rows (the server recomputes it from the row count)."""
    return max(1, min(MAX_PARTITIONS, rows // ROWS_PER_PARTITION))


def nprobes(rows: int) -> int:
    count = partitions(rows)
    return min(count, max(MIN_PROBES, round(count * PROBE_SHARE)))


def index_config(rows: int) -> Any:
    from lancedb.index import IvfHnswSq

    return IvfHnswSq(distance_type="cosine", num_partitions=partitions(rows))


def has_vector_index(indices: list[Any]) -> bool:
    """True when one of a table's index configs (list_indices) is a vector index on `vector`."""
    vector_types = {"IvfPq", "IvfHnswSq", "IvfHnswPq", "IvfFlat", "IvfSq", "IvfRq", "HnswSq"}
    return any(
        list(getattr(i, "columns", [])) == [VECTOR_COLUMN] and str(getattr(i, "index_type", "")) in vector_types
        for i in indices
    )


def ann_query(builder: Any, rows: int) -> Any:
    """The search parameters for an indexed table: enough probes and an exact re-rank."""
    return builder.nprobes(nprobes(rows)).refine_factor(REFINE_FACTOR)
