"""When a table gets an ANN vector index, how it is built, and how searches probe it.

Small tables are searched exactly: the server holds their unit vectors in memory and ranks
them with one matrix product (search/engine.py). From `min_rows` rows up (default
VECTOR_INDEX_MIN_ROWS) the build adds an IVF_HNSW_SQ index on `vector` and the server
asks LanceDB for the nearest rows instead, probing PROBE_SHARE of the partitions and
re-ranking REFINE_FACTOR × the candidates it needs by exact cosine distance
(measured on dub-ts ×10: recall@10 0.97 with these, 0.82 probing a quarter).

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
# IVF_HNSW_SQ beat IVF_PQ on recall at equal latency on dub-ts ×10/×30 (benchmarks/vector_index.py);
# below ~20k rows the in-memory exact ranking is both exact and faster than any ANN query.
VECTOR_INDEX_MIN_ROWS = 20_000
ROWS_PER_PARTITION = 256
MAX_PARTITIONS = 1024
PROBE_SHARE = 0.5
MIN_PROBES = 8  # small tables: (nearly) every partition
REFINE_FACTOR = 2  # the engine asks for 100 candidates: 200 re-ranked exactly
INDEX_KIND = "ivf_hnsw_sq"  # recorded in the content hash: changing the index rewrites the table


@dataclass(frozen=True)
class VectorIndexPolicy:
    """`auto` indexes tables of at least `min_rows` rows; `none` never; `always` whenever there are vectors."""

    mode: str = "auto"
    min_rows: int = VECTOR_INDEX_MIN_ROWS

    def wanted(self, rows: int, has_vectors: bool) -> bool:
        if not has_vectors or rows == 0 or self.mode == "none":
            return False
        return self.mode == "always" or rows >= self.min_rows


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
    return any(list(getattr(i, "columns", [])) == [VECTOR_COLUMN] and str(getattr(i, "index_type", "")) in vector_types
               for i in indices)


def ann_query(builder: Any, rows: int) -> Any:
    """The search parameters for an indexed table: enough probes and an exact re-rank."""
    return builder.nprobes(nprobes(rows)).refine_factor(REFINE_FACTOR)
