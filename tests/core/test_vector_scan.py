"""The two-pass exact vector ranking (search/vector_scan.py): the int8 first pass only ever rules
out chunks that cannot be among the best, and search answers as with one exact scan."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import Corpus, Library, vector_scan
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.library import loaded_embedder
from docs_mcp_core.search.vector_scan import QuantizedScan, nearest_rows

DEPTH = 100


def unit_rows(rng: np.random.Generator, count: int, dims: int) -> np.ndarray:
    rows = rng.standard_normal((count, dims)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def corpus(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """4,000 passage vectors of about 2,000 chunks (one to three passages each), with exact duplicates and near ones:
    the ties and near-ties a docs corpus with copied pages has."""
    base = unit_rows(rng, 4000, 384)
    base[100:400] = base[0:300]  # the same passages again
    near = base[400:700] + rng.standard_normal((300, 384)).astype(np.float32) * 1e-3
    base[700:1000] = near / np.linalg.norm(near, axis=1, keepdims=True)
    lengths: list[int] = []
    while sum(lengths) < len(base):
        lengths.append(min(int(rng.integers(1, 4)), len(base) - sum(lengths)))
    return base, np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)


def exact_chunk_scores(vectors: np.ndarray, starts: np.ndarray, query: np.ndarray) -> np.ndarray:
    scores = (vectors.astype(np.float64) @ query.astype(np.float64)).astype(np.float32)
    return np.maximum.reduceat(scores, starts)


@pytest.mark.slow
def test_the_first_pass_keeps_every_chunk_that_can_be_among_the_best() -> None:
    rng = np.random.default_rng(7)
    vectors, starts = corpus(rng)
    scan = QuantizedScan.of(vectors, min_bytes=0)
    assert scan is not None
    allowed = rng.random(len(starts)) < 0.4  # a filter
    pruned = []
    for n in range(60):
        near = vectors[rng.integers(len(vectors))] + rng.standard_normal(384).astype(np.float32) * (0.02 * n)
        query = (near / np.linalg.norm(near)).astype(np.float32)
        mask = allowed if n % 3 == 0 else None
        rows, scores = nearest_rows(vectors, query, starts, mask, DEPTH, scan)
        truth = exact_chunk_scores(vectors, starts, query)
        eligible = np.flatnonzero(mask) if mask is not None else np.arange(len(starts))
        kth = np.sort(truth[eligible])[::-1][DEPTH - 1]
        assert set(eligible[truth[eligible] >= kth]) <= set(rows.tolist())  # nothing that belongs was ruled out
        assert set(rows.tolist()) <= set(eligible.tolist())
        assert np.array_equal(scores, truth[rows])  # the kept chunks are scored exactly
        pruned.append(len(rows))
    assert max(pruned) < len(starts) // 4  # and the first pass did rule most of them out


def test_without_a_first_pass_every_chunk_is_scored() -> None:
    rng = np.random.default_rng(3)
    vectors, starts = corpus(rng)
    query = vectors[5]
    rows, scores = nearest_rows(vectors, query, starts, None, DEPTH, None)
    assert len(rows) == len(starts)
    assert np.allclose(scores, exact_chunk_scores(vectors, starts, query), atol=1e-6)


def test_a_kernel_that_computes_otherwise_gets_no_first_pass() -> None:
    rng = np.random.default_rng(5)
    vectors = unit_rows(rng, 2048, 256)
    scan = QuantizedScan.of(vectors, min_bytes=0)
    assert scan is not None
    packed, scales = scan.buffers[1], scan.buffers[2]
    assert scan._agrees(packed, scales.reshape(len(vectors), -1), vectors)
    # the same check against scales the kernel does not use: what a kernel computing otherwise looks like
    assert not scan._agrees(packed, scales.reshape(len(vectors), -1) * np.float32(1.01), vectors)


def test_small_matrices_and_odd_dimensions_keep_the_exact_scan() -> None:
    rng = np.random.default_rng(1)
    assert QuantizedScan.of(unit_rows(rng, 100, 384)) is None  # below SCAN_BYTES
    assert QuantizedScan.of(unit_rows(rng, 100, 100), min_bytes=0) is None  # not a multiple of the block


def test_hybrid_search_answers_the_same_with_the_first_pass(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("hash")))
    queries = ["retry backoff", "idempotency key header", "webhook signature", "rate limits", "create a shipment"]

    def hybrid_pages(with_scan: bool) -> list[dict]:
        async def run() -> list[dict]:
            engine = SearchEngine(out, embedder_factory=loaded_embedder)
            index = await engine.index()
            assert (index.scan is not None) == with_scan
            found = [(await Library([Corpus("", engine)]).search(q, limit=10)).to_json() for q in queries]
            found += [
                (await Library([Corpus("", engine)]).search(q, limit=10, filters={"language": "python"})).to_json()
                for q in queries
            ]
            engine.close()
            return found

        return asyncio.run(run())

    monkeypatch.setattr(vector_scan, "SCAN_BYTES", 0)
    two_passes = hybrid_pages(with_scan=True)
    monkeypatch.setattr(vector_scan, "SCAN_BYTES", 1 << 40)
    exact = hybrid_pages(with_scan=False)
    assert [[hit["chunk_id"] for hit in page["hits"]] for page in two_passes] == [
        [hit["chunk_id"] for hit in page["hits"]] for page in exact
    ]
    assert all(page["mode"] == "hybrid" and page["hits"] for page in two_passes)
