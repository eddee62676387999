"""What a server keeps in memory per index, and that reading the rest from the table answers the same."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.search import Corpus, Library
from docs_mcp_core.search import engine as engine_module
from docs_mcp_core.search import published as published_module
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.library import loaded_embedder

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
