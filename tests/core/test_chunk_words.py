"""The exact-phrase query is skipped only when LanceDB's own phrase query would find nothing."""

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa
import pytest
from click.testing import CliRunner
from lancedb.index import FTS
from lancedb.query import PhraseQuery
from mcp import Client

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import published as published_module
from docs_mcp_core.search.chunk_words import ChunkWords
from docs_mcp_core.search.library import Library
from docs_mcp_core.server import create_server

TEXTS = [
    "Publishing packages to the registry needs a token.",
    "The café menu lists every dish.",
    "Retries back off exponentially: WithMaxRetries(5) sets the limit.",
    "A client sends requests and reads responses.",
]
PHRASES = [
    "published package",  # stems
    "publishing registry",  # both words in one chunk, not side by side
    "cafe menu",  # LanceDB folds é to e
    "which client",  # "which" is a stop word, held by no chunk: LanceDB looks for "client" alone
    "the client of it",
    "client zebra",  # zebra is in no chunk
    "zebra giraffe",
    "max retries",  # "max" is only inside an identifier
    "withmaxretries 5",
    "token registry",  # both in one chunk, in the other order
    "packages to the registry",  # stop words keep their place
    "packages registry",  # ... so without them the words are not side by side
    "menu client",  # in two different chunks
    "how to",  # nothing but stop words
    "naïve client",  # beyond ASCII: always sent
]


def _phrase_rows(tmp_path: Path) -> dict[str, int]:
    table = lancedb.connect(str(tmp_path / "db")).create_table(
        "t", pa.table({"id": list(range(len(TEXTS))), "content_text": TEXTS})
    )
    table.create_index("content_text", config=FTS(with_position=True))
    return {
        phrase: len(
            table.search(PhraseQuery(phrase, "content_text", slop=0), query_type="fts")
            .select(["id", "_score"])
            .to_list()
        )
        for phrase in PHRASES
    }


def test_a_phrase_is_skipped_only_when_lancedb_finds_nothing(tmp_path: Path) -> None:
    found = _phrase_rows(tmp_path)
    words = ChunkWords.of(TEXTS)
    skipped = sorted(p for p in PHRASES if not words.may_match(p))
    assert [p for p in skipped if found[p]] == []  # never a phrase LanceDB finds
    assert skipped == [
        "client zebra",
        "max retries",
        "menu client",
        "packages registry",
        "publishing registry",
        "token registry",
        "zebra giraffe",
    ]
    # found by LanceDB through its stemming, its folding and its stop words: the check must see them all
    assert all(found[p] for p in ["published package", "cafe menu", "which client", "packages to the registry"])


def test_words_beyond_ascii_may_be_any_word() -> None:
    assert ChunkWords.of(["plain words here", "cafe\u0301 with a combining accent"]).may_match("zebra giraffe")
    assert not ChunkWords.of(["plain words here"]).may_match("zebra giraffe")
    assert not ChunkWords.of(["plain words", "клиент 客户 words"]).may_match("zebra words")  # never ASCII
    accented = ChunkWords.of(["the crème sauce", "plain words"])
    assert accented.may_match("creme sauce")  # crème may be indexed as creme
    assert accented.may_match("zebra sauce")  # ... or as anything
    assert not accented.may_match("sauce zebra")
    assert not accented.may_match("plain zebra")


def test_letters_in_circles_and_newer_letters_are_words_as_lancedb_splits_them(tmp_path: Path) -> None:
    """LanceDB takes letters in circles and squares, and letters newer than Python's Unicode database
    (U+088F), for word characters where a regular expression's `\\w` does not."""
    circled = ["Start \u24b6 server now", "the step\u24b6one runs", "plain words"]
    newer = ["begin \u088f finish"]
    table = lancedb.connect(str(tmp_path / "db")).create_table(
        "t", pa.table({"id": list(range(len(circled + newer))), "content_text": circled + newer})
    )
    table.create_index("content_text", config=FTS(with_position=True))
    for texts, phrases in [(circled, ["start the server", "stepaone runs"]), (newer, ["begin the finish"])]:
        words = ChunkWords.of(texts)
        for phrase in phrases:
            assert table.search(PhraseQuery(phrase, "content_text", slop=0), query_type="fts").to_list()
            assert words.may_match(phrase), phrase
    assert not ChunkWords.of(circled).may_match("plain zebra")  # the other chunks are still checked
    assert ChunkWords.of(newer).may_match("zebra giraffe")  # how LanceDB splits it is not known


def test_a_search_sends_no_phrase_query_that_cannot_match(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same rankings, to the score, with fewer exact-phrase queries sent to LanceDB, and no full-text
    query at all once both lists are answered from memory (bm25.py)."""
    monkeypatch.setattr(published_module, "USE_SNAPSHOT", False)  # the index read from the table, not its snapshot
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    heading = json.loads((out / "chunks.json").read_text())[3]["heading"]
    queries = ["how do I track a parcel", "parcel track", "shipping label printer", heading]

    async def rankings(
        in_memory: bool,
    ) -> tuple[list[list[tuple[str, float]]], list[list[tuple[str, float]]], list[int]]:
        library = Library.open([("", out, None)], query_model="none")
        try:
            engine = library.corpora[0].engine
            index = await engine.index()
            index.build_words()
            for _ in range(10_000):  # the words are built in a thread
                if index.words is not None:
                    break
                await asyncio.sleep(0.01)
            words = index.words
            assert words is not None
            assert index.bm25_here
            assert index.bm25_here and index.field_words
            fields = index.field_words
            # else the full-text and exact-phrase lists are answered from memory (bm25.py)
            index.bm25_here = in_memory
            sent = [0, 0]
            full_text = [0, 0]
            search = index.table.search

            async def counted(query: Any, *args: Any, **kwargs: Any) -> Any:
                sent[index.words is not None] += isinstance(query, PhraseQuery) and query.slop == 0
                full_text[index.words is not None] += not isinstance(query, PhraseQuery) or query.slop != 0
                return await search(query, *args, **kwargs)

            index.table.search = counted
            found: tuple[list[list[tuple[str, float]]], ...] = ([], [])
            for with_words in (False, True):
                index.words = words if with_words else None
                index.field_words = fields if with_words and in_memory else {}
                for query in queries:
                    engine._cache.clear()
                    found[with_words].append((await engine.fused(index, query, {}))[0])
            return found[0], found[1], sent + full_text
        finally:
            library.close()

    without, with_words, sent = asyncio.run(rankings(in_memory=False))
    assert with_words == without
    assert sent[0] == len(queries)  # every query has two words or more
    assert 0 < sent[1] < sent[0]
    assert sent[2:] == [len(queries), len(queries)]
    without, in_memory, sent = asyncio.run(rankings(in_memory=True))
    assert in_memory == without
    assert sent == [len(queries), 0, len(queries), 0]  # every list answered from the positions


def test_a_thread_that_cannot_start_leaves_searches_as_before(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No thread to spare (a process or container limit): the search is answered, every phrase query sent."""
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))

    start = threading.Thread.start

    def refused(self: threading.Thread) -> None:
        if self.name == "docs-mcp-chunk-words":  # other threads (LanceDB's reads) start as usual
            raise RuntimeError("can't start new thread")
        start(self)

    monkeypatch.setattr(threading.Thread, "start", refused)

    async def search() -> tuple[list[str], bool]:
        library = Library.open([("", out, None)], query_model="none")
        try:
            found = [hit["chunk_id"] for hit in (await library.search("track a parcel", limit=3)).hits]
            return found, library.corpora[0].engine.current.words is None
        finally:
            library.close()

    found, without_words = asyncio.run(search())
    assert found and without_words


def test_only_a_server_builds_the_word_positions(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`docs-mcp search` answers once and exits: it starts no thread for positions it never uses; a server does."""
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    started: list[str] = []
    start = threading.Thread.start

    def recorded(self: threading.Thread) -> None:
        started.append(self.name)
        start(self)

    monkeypatch.setattr(threading.Thread, "start", recorded)
    for query in ("track a parcel", "shipping label printer"):
        done = CliRunner().invoke(main, ["search", "--index", str(out), query, "--text-only"], catch_exceptions=False)
        assert done.exit_code == 0 and "#" in done.output, done.output
    assert started.count("docs-mcp-chunk-words") == 0, started

    async def serve() -> None:
        async with Client(create_server(out).server) as session:
            for query in ("track a parcel", "shipping label printer"):
                assert not (await session.call_tool("search_docs", {"query": query})).is_error

    asyncio.run(serve())
    assert started.count("docs-mcp-chunk-words") == 1, started
