"""When a table gets an ANN vector index, how it is built, and how searches probe it.

Shared by the build (indexing/table.py) and the read path (search/engine.py). Without an
index the server ranks every vector exactly: from a unit-vector matrix in memory while the
vectors fit VECTOR_MEMORY_BYTES (under a millisecond at dub-ts x10), else by LanceDB's flat
scan (20 ms at x10, 80 ms at x30, growing with the table). An IVF_HNSW_SQ index replaces
both with LanceDB's ANN search (~12 ms at x10 and x30), probing PROBE_SHARE of the
partitions (at least MIN_PROBES) and re-ranking REFINE_FACTOR x the candidates by exact
cosine distance; recall@10 against exact search: 1.0 at x10 (hash and MiniLM vectors),
0.96 at x30 (hash vectors); benchmarks/vector_index.py. So `auto` adds one exactly when
the vectors outgrow the in-memory budget, where it beats the flat scan it replaces;
`--vector-index-min-rows N` sets a row count instead, trading the in-memory matrix
(rows x dims x 4 bytes) for an index query.

The partition count follows from the row count alone, so the server derives the same
number of probes from the table it opens. Training (k-means, graph construction) samples
at random: two builds of one corpus can give slightly different indexes; one published
index answers the same query with the same rows every time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VECTOR_COLUMN = "vector"
MODES = ("auto", "none", "always")
# IVF_HNSW_SQ beat IVF_PQ on recall at equal latency on dub-ts x10 (0.97 against 0.86 at 16 probes).
VECTOR_MEMORY_BYTES = 128 * 2**20  # the vectors a server keeps in memory for exact ranking (search/engine.py)
ROWS_PER_PARTITION = 256
MAX_PARTITIONS = 1024
PROBE_SHARE = 0.5
MIN_PROBES = 8  # small tables: (nearly) every partition
REFINE_FACTOR = 10  # 1,000 rows re-ranked exactly for the engine's 100 candidates: at dub-ts x30, 2 gave 0.66
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


def vector_column(schema: Any) -> tuple[int, bool]:
    """(dimensions, whether each row holds a list of passage vectors) of a chunks table's `vector`
    column (indexing/table.py writes either layout); (0, False) for a table without vectors."""
    if VECTOR_COLUMN not in schema.names:
        return 0, False
    vector_type = schema.field(VECTOR_COLUMN).type
    multivector = not hasattr(vector_type, "list_size")  # a list of fixed-size lists, not one
    return (vector_type.value_type if multivector else vector_type).list_size, multivector
