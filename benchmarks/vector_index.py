"""Vector index benchmark: recall@10 of the ANN index against exact search, and query latency.

Builds dub-ts ×N (generated copies under /tmp) with the vector index forced on, then for
the dub-ts suite's queries compares, on the same published table:
  exact-memory  the in-memory cosine ranking the server uses below the threshold,
  exact-lance   LanceDB's flat scan (bypass_vector_index),
  indexed       the ANN query the server uses above the threshold (nprobes, refine_factor).

    .venv/bin/python benchmarks/vector_index.py [--copies 10,30] [--provider hash]

`recall_at_10(index_dir, queries)` is importable (benchmarks/scale.py uses it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LANCEDB_LOG", "error")

from docs_mcp_core.output.vector_index import ann_query  # noqa: E402
from docs_mcp_core.search.engine import CANDIDATES  # noqa: E402

CORPUS = REPO / "tests" / "fixtures" / "dub-ts"
SUITE = REPO / "benchmarks" / "suites" / "dub-ts.json"


def suite_queries() -> list[str]:
    return [case["query"] for case in json.loads(SUITE.read_text())["cases"]]


def _published(index_dir: Path) -> tuple[Any, dict[str, Any]]:
    import lancedb

    metadata = json.loads((Path(index_dir) / "metadata.json").read_text())
    table = lancedb.connect(str(Path(index_dir) / ".lancedb")).open_table(metadata["index"]["table"])
    table.checkout(metadata["index"]["version"])
    return table, metadata


def _query_vectors(metadata: dict[str, Any], queries: list[str]) -> np.ndarray:
    from docs_mcp_core.search.library import loaded_embedder

    embedder = loaded_embedder(metadata["embedding"])
    try:
        return np.stack([embedder.embed(q) for q in queries]).astype(np.float32)
    finally:
        embedder.close()


def _pairs(builder: Any, k: int) -> list[tuple[float, str]]:
    rows = builder.select(["chunk_id"]).limit(k).to_arrow()
    return sorted(zip(rows.column("_distance").to_pylist(), rows.column("chunk_id").to_pylist()))


def _ids(builder: Any, k: int) -> list[str]:
    return [cid for _, cid in _pairs(builder, k)]


def tie_aware_recall(table: Any, vector: np.ndarray, rows: int) -> float:
    """Share of the indexed top 10 no farther than the exact 10th (refine_factor makes its distances exact):
    copies of one corpus give many rows at the same distance, and which of them is "the" top 10 is arbitrary."""
    exact = _pairs(table.search(vector).distance_type("cosine").bypass_vector_index(), 10)
    indexed = _pairs(ann_query(table.search(vector).distance_type("cosine"), rows), CANDIDATES)[:10]
    return sum(d <= exact[-1][0] + 1e-6 for d, _ in indexed) / 10 if exact else 1.0


def exact_ids(table: Any, vector: np.ndarray, k: int = 10) -> list[str]:
    return _ids(table.search(vector).distance_type("cosine").bypass_vector_index(), k)


def indexed_ids(table: Any, vector: np.ndarray, rows: int, k: int = 10) -> list[str]:
    """The first `k` of the CANDIDATES rows the engine asks an indexed table for."""
    return _ids(ann_query(table.search(vector).distance_type("cosine"), rows), max(k, CANDIDATES))[:k]


def recall_at_10(index_dir: Path, queries: list[str]) -> float:
    """Mean share of the exact top 10 that the index's ANN search also returns (1.0 without an index)."""
    table, metadata = _published(index_dir)
    rows = table.count_rows()
    vectors = _query_vectors(metadata, queries)
    shares = [len(set(indexed_ids(table, v, rows)) & set(exact_ids(table, v))) / 10 for v in vectors]
    return float(np.mean(shares)) if shares else 1.0


def _p50_ms(fn: Callable[[np.ndarray], Any], vectors: np.ndarray) -> float:
    for v in vectors[:3]:
        fn(v)
    times = []
    for v in vectors:
        start = time.perf_counter()
        fn(v)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def measure(index_dir: Path, queries: list[str], depth: int = 100) -> dict[str, Any]:
    """recall@10, top-1 agreement and p50 of each way to get the `depth` nearest rows."""
    table, metadata = _published(index_dir)
    rows = table.count_rows()
    vectors = _query_vectors(metadata, queries)
    data = table.to_arrow()
    dims = len(vectors[0])
    matrix = data.column("vector").combine_chunks().values.to_numpy(zero_copy_only=False).reshape(-1, dims)
    matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)

    def in_memory(v: np.ndarray) -> np.ndarray:
        sim = matrix @ (v / (np.linalg.norm(v) or 1.0))
        return np.argpartition(-sim, depth - 1)[:depth]

    exact = [exact_ids(table, v) for v in vectors]
    indexed = [indexed_ids(table, v, rows) for v in vectors]
    return {
        "rows": rows,
        "recall@10": round(float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(indexed, exact)])), 3),
        "recall@10_ties": round(float(np.mean([tie_aware_recall(table, v, rows) for v in vectors])), 3),
        "top1": f"{sum(a[:1] == b[:1] for a, b in zip(indexed, exact))}/{len(exact)}",
        "p50_exact_memory_ms": round(_p50_ms(in_memory, vectors), 2),
        "p50_exact_lance_ms": round(_p50_ms(lambda v: exact_ids(table, v, depth), vectors), 2),
        "p50_indexed_ms": round(_p50_ms(lambda v: indexed_ids(table, v, rows, depth), vectors), 2),
    }


def make_copies(corpus: Path, copies: int, root: Path) -> Path:
    """`copies` copies of the corpus side by side (copy01/, copy02/, …): distinct paths, same text."""
    target = root / f"x{copies}"
    if not (target / f"copy{copies:02d}").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        for n in range(1, copies + 1):
            shutil.copytree(corpus, target / f"copy{n:02d}")
    return target


def build_indexed(docs: Path, out: Path, provider_name: str) -> float:
    from docs_mcp_core.embedding import ProviderSettings, make_provider, resolve_settings
    from docs_mcp_core.indexing.build import build
    from docs_mcp_core.output.vector_index import VectorIndexPolicy

    settings, _ = resolve_settings(ProviderSettings(), provider_name)
    provider = make_provider(settings)
    start = time.perf_counter()
    try:
        build(docs, out, provider, vector_index=VectorIndexPolicy("always"))
    finally:
        provider.close()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", default="10,30", help="comma-separated copy counts of dub-ts")
    parser.add_argument("--provider", default="hash", help="embedding provider for the builds")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--work", type=Path, default=Path("/tmp/docs-mcp-vector-bench"))
    args = parser.parse_args()
    queries = suite_queries()
    results = []
    for copies in [int(c) for c in args.copies.split(",")]:
        docs = make_copies(args.corpus, copies, args.work)
        out = args.work / f"index-x{copies}-{args.provider}"
        seconds = build_indexed(docs, out, args.provider)
        result = {"copies": copies, "build_s": round(seconds, 1), **measure(out, queries)}
        results.append(result)
        print(json.dumps(result), flush=True)
    print(
        f"\n{'copies':>6} {'rows':>7} {'recall@10':>9} {'ties ok':>7} {'top1':>6} {'exact mem p50':>13} "
        f"{'exact lance p50':>15} {'indexed p50':>11}"
    )
    for r in results:
        print(
            f"{r['copies']:>6} {r['rows']:>7} {r['recall@10']:>9} {r['recall@10_ties']:>7} {r['top1']:>6} {r['p50_exact_memory_ms']:>10} ms "
            f"{r['p50_exact_lance_ms']:>12} ms {r['p50_indexed_ms']:>8} ms"
        )


if __name__ == "__main__":
    main()
