"""The ANN vector index: built above a row threshold, searched by the engine instead of the
in-memory exact ranking, and close to it (the exact search's top hit for nearly every query)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import lancedb
import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.vector_index import VECTOR_MEMORY_BYTES, VectorIndexPolicy, has_vector_index
from docs_mcp_core.search import Weights
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.library import loaded_embedder

REPO = Path(__file__).resolve().parents[2]
QUERIES = [case["query"] for case in json.loads((REPO / "benchmarks/suites/dub-ts.json").read_text())["cases"]][:20]


def _cli_build(docs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "docs_mcp_core.cli",
            "build",
            "--docs-dir",
            str(docs),
            "--out",
            str(out),
            "--embedding-provider",
            "hash",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LANCEDB_LOG": "error"},
    )


def _table_has_index(out: Path) -> bool:
    meta = json.loads((out / "metadata.json").read_text())
    table = lancedb.connect(str(out / ".lancedb")).open_table(meta["index"]["table"])
    table.checkout(meta["index"]["version"])
    return has_vector_index(table.list_indices())


async def _vector_rankings(out: Path, *, indexed: bool) -> list[list[str]]:
    engine = SearchEngine(out, Weights(), embedder_factory=loaded_embedder)
    try:
        index = await engine.index()
        assert index.vector_indexed == indexed
        assert (index.vectors is None) == indexed  # an indexed table's vectors are not held in memory
        return [[cid for cid, _ in (await engine.ranked(index, query, None))["vector"]] for query in QUERIES]
    finally:
        engine.close()


@pytest.mark.slow
def test_indexed_table_returns_the_exact_top_hit(dub_ts_docs: Path, tmp_path: Path) -> None:
    exact_out, ann_out = tmp_path / "exact", tmp_path / "ann"
    build(dub_ts_docs, exact_out, make_provider(ProviderSettings("hash")))  # 1,638 rows: exact, in memory
    assert not _table_has_index(exact_out)
    done = _cli_build(dub_ts_docs, ann_out, "--vector-index-min-rows", "500")
    assert done.returncode == 0, done.stderr
    assert "adding a vector index" in done.stderr
    assert _table_has_index(ann_out)

    exact = asyncio.run(_vector_rankings(exact_out, indexed=False))
    ann = asyncio.run(_vector_rankings(ann_out, indexed=True))
    same_top = sum(a[:1] == e[:1] for a, e in zip(ann, exact))
    recall = sum(len(set(a[:10]) & set(e[:10])) for a, e in zip(ann, exact)) / (10 * len(QUERIES))
    print(f"top hit agrees for {same_top}/{len(QUERIES)} queries; recall@10 {recall:.3f}")
    assert same_top >= 18
    assert ann == asyncio.run(_vector_rankings(ann_out, indexed=True))  # one index: same answers every time

    search = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", "search", "--index", str(ann_out), "--json", "retry backoff"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert search.returncode == 0, search.stderr
    assert json.loads(search.stdout)["mode"] == "hybrid"


@pytest.mark.slow
def test_vector_index_policy_and_rebuild_on_change(dub_ts_docs: Path, tmp_path: Path) -> None:
    budget_rows = VECTOR_MEMORY_BYTES // (384 * 4)  # auto: where the server stops ranking in memory
    assert not VectorIndexPolicy().wanted(budget_rows, 384) and VectorIndexPolicy().wanted(budget_rows + 1, 384)
    assert VectorIndexPolicy(min_rows=500).wanted(500, 8) and not VectorIndexPolicy(min_rows=500).wanted(499, 8)
    assert VectorIndexPolicy("always").wanted(1, 8) and not VectorIndexPolicy("always").wanted(10, 0)
    assert not VectorIndexPolicy("none").wanted(10**6, 384)
    out = tmp_path / "out"
    provider = make_provider(ProviderSettings("hash", dimensions=32))
    first = build(dub_ts_docs, out, provider)
    again = build(dub_ts_docs, out, provider, vector_index=VectorIndexPolicy("always"))
    assert again.index.version != first.index.version and _table_has_index(out)  # the setting changes the table
    same = build(dub_ts_docs, out, provider, vector_index=VectorIndexPolicy("always"))
    assert same.index.version == again.index.version  # and a no-op build keeps it
