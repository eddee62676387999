"""What a server keeps in memory per index, and that reading the rest from the table answers the same."""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.search import Corpus, Library
from docs_mcp_core.search import engine as engine_module
from docs_mcp_core.search import published as published_module
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.library import loaded_embedder
from docs_mcp_core.search.published import PublishedIndex, unit_rows

QUERIES = ["retry backoff", "idempotency key header", "webhook signature", "rate limits"]


def pages(out: Path, in_memory: bool) -> list[dict]:
    async def run() -> list[dict]:
        engine = SearchEngine(out)
        index = await engine.index()
        assert (index.texts is not None) == in_memory
        found = [(await Library([Corpus("", engine)]).search(q, limit=5)).to_json() for q in QUERIES]
        found.append({"doc": await Library([Corpus("", engine)]).get_doc(found[0]["hits"][0]["chunk_id"], 1)})
        engine.close()
        return found

    return asyncio.run(run())


def test_snippet_text_stays_in_memory_by_its_own_size_and_the_table_answers_the_same(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    chunks = json.loads(OutputLayout(out).chunks.read_text())
    text = sum(len(c["content_text"]) for c in chunks)
    assert OutputLayout(out).chunks.stat().st_size > 2 * text  # chunks.json also holds the Markdown and more
    monkeypatch.setattr(published_module, "MEMORY_TEXT_BYTES", text)  # the snippet text fits: held
    held = pages(out, in_memory=True)
    monkeypatch.setattr(published_module, "MEMORY_TEXT_BYTES", text - 1)  # it does not: read by row ID
    read = pages(out, in_memory=False)
    assert held == read
    assert all(hit["snippet"] for page in held[:-1] for hit in page["hits"])


def test_a_vector_scan_in_a_worker_thread_ranks_as_one_on_the_event_loop(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("hash")))

    def hybrid_pages() -> list[dict]:
        async def run() -> list[dict]:
            engine = SearchEngine(out, embedder_factory=loaded_embedder)
            index = await engine.index()
            assert index.vectors is not None  # the in-memory scan is what is compared
            found = [(await Library([Corpus("", engine)]).search(q, limit=8)).to_json() for q in QUERIES]
            engine.close()
            return found

        return asyncio.run(run())

    monkeypatch.setattr(engine_module, "THREADED_SCAN_BYTES", 0)  # every scan in a worker thread
    threaded = hybrid_pages()
    monkeypatch.setattr(engine_module, "THREADED_SCAN_BYTES", 1 << 40)  # every scan on the event loop
    inline = hybrid_pages()
    assert threaded == inline
    assert all(page["mode"] == "hybrid" and page["hits"] for page in threaded)


def whole(column: object, dims: int, multivector: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The vectors as the server built them before it wrote them a batch at a time: joined, divided, cast."""
    joined = column.combine_chunks()  # type: ignore[attr-defined]
    starts = None
    if multivector:
        lengths = joined.value_lengths().to_numpy(zero_copy_only=False)
        if not np.all(lengths == 1):
            starts = np.concatenate([[0], np.cumsum(lengths[:-1])]).astype(np.int64)
        matrix = joined.flatten().flatten().to_numpy(zero_copy_only=False).reshape(-1, dims)
    else:
        matrix = joined.values.to_numpy(zero_copy_only=False).reshape(-1, dims)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32), starts


@pytest.mark.parametrize("multivector", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectors_written_a_batch_at_a_time_are_the_joined_matrix_normalized(multivector: bool, dtype: type) -> None:
    dims, rng = 8, np.random.default_rng(3)
    rows = rng.normal(size=(40, dims)).astype(dtype)
    rows[5] = 0  # a zero vector stays zero
    value = pa.from_numpy_dtype(dtype)
    single = pa.FixedSizeListArray.from_arrays(pa.array(rows.reshape(-1), type=value), dims)
    if multivector:  # rows of one to three passages
        offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 4, size=20))])
        offsets = offsets[offsets <= len(rows)]
        array = pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), single[: offsets[-1]])
    else:
        array = single
    # batches as a query returns them, one of them a slice of a bigger array
    column = pa.chunked_array([array[:3], array[3:7], pa.concat_arrays([array[7:], array[:2]])[:-2]])
    got, starts = unit_rows(column, dims, multivector)
    want, want_starts = whole(column, dims, multivector)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    assert (starts is None and want_starts is None) or np.array_equal(starts, want_starts)
    assert not got[5].any() or multivector


def test_the_int8_copy_of_the_vectors_is_made_once_the_tables_record_batches_are_dropped(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(published_module, "USE_SNAPSHOT", False)  # the index read from the table, not its snapshot
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("hash")))
    held: list[set[str]] = []

    class Recorded:
        @staticmethod
        def of(vectors: np.ndarray) -> None:
            # the suspended _load coroutine's locals while the copy would be made
            loading = [
                o for o in gc.get_objects() if inspect.iscoroutine(o) and o.cr_code is PublishedIndex._load.__code__
            ]
            held.extend(set(o.cr_frame.f_locals) for o in loading)

    monkeypatch.setattr(published_module, "QuantizedScan", Recorded)
    index = asyncio.run(PublishedIndex(out).open())
    assert index.vectors is not None and len(held) == 1
    assert not held[0] & {"rows", "row_ids", "columns", "sizes"}


def test_word_positions_are_kept_only_for_an_index_of_bounded_text(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The positions take about as many int32 pairs as the text has words: bounded by its characters, not
    only by its chunks (20,000 long chunks would be tens of MB and seconds of CPU)."""
    import threading

    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    text = sum(len(c["content_text"]) for c in json.loads(OutputLayout(out).chunks.read_text()))

    def words_kept() -> bool:
        async def run() -> bool:
            engine = SearchEngine(out)
            index = await engine.index()
            assert index.texts is not None
            index.build_words()
            for thread in threading.enumerate():
                if thread.name == "docs-mcp-chunk-words":
                    thread.join()
            engine.close()
            return index.words is not None

        return asyncio.run(run())

    monkeypatch.setattr(published_module, "MAX_CHARS", text, raising=False)
    assert words_kept()
    monkeypatch.setattr(published_module, "MAX_CHARS", text - 1, raising=False)
    assert not words_kept()
