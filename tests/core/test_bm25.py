"""The exact-phrase list answered from memory (search/bm25.py) has LanceDB's rows and scores, to the bit."""

import asyncio
import re
from pathlib import Path

import pytest
from lancedb.query import PhraseQuery

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import bm25
from docs_mcp_core.search import published as published_module
from docs_mcp_core.search.chunk_words import ChunkWords
from docs_mcp_core.search.engine import memory_rows, phrase_rows
from docs_mcp_core.search.filters import Prefilter, prefilter
from docs_mcp_core.search.published import PublishedIndex
from docs_mcp_core.search.text_query import text_query
from docs_mcp_core.search.weights import Weights

W39 = "abcdefghij" * 3 + "abcdefghi"  # LanceDB indexes a token shorter than 40 bytes
EDGE = f"""# Edge cases

## Stop words and repeats

The client sends the request to the server, and the server sends the response back to the client.

## Identifiers and digits

Call WithMaxRetries(5) or set max_retries = 10; HTTP2 and v1.2.3 are supported; a 404 error is not.

## Long words

The {W39} token is kept, the {W39}j token is dropped, and {W39}jk too.

## Beyond ASCII

The café menu lists the crème brûlée; naïve readers ask for a résumé of the menu.

## Emoji

⚠️ Warning: the token⚠️expires after an hour.

## It is what it is

Is it? It is, and it was what it is.
"""
# Every edge the scores depend on: stop words (kept in their place), a word repeated in the query, an
# identifier and digits, tokens of 39 and 40 bytes, a stop word only, words beyond ASCII (sent to LanceDB),
# a word a word beyond ASCII may be folded into ("creme": sent), an emoji's variation selector.
QUERIES = [
    "the client",
    "client sends the request",
    "sends the request to the server",
    "server server",
    "client client sends",
    "max retries",
    "withmaxretries 5",
    "set max_retries",
    "404 error",
    "v1 2 3",
    "http2 and v1",
    f"the {W39} token",
    f"the {W39}j token",
    f"{W39} token is kept",
    "it is what it is",
    "the menu",
    "cafe menu",
    "café menu",
    "creme brulee",
    "warning the token",
    "token expires",
    "parcel tracking",
    "track a parcel",
]
SENT = {"café menu", "creme brulee", "cafe menu", "it is what it is"}  # LanceDB answers these


def _queries(texts: list[str]) -> list[str]:
    """QUERIES, and runs of two to four words from every chunk (phrases some chunk holds)."""
    found = list(QUERIES)
    for text in texts:
        words = re.findall(r"[A-Za-z0-9]+", text)
        found += [" ".join(words[i : i + n]) for n in (2, 3) for i in range(0, max(0, len(words) - n), 30)]
    return list(dict.fromkeys(found))


async def _lancedb(index: PublishedIndex, query: object, where: Prefilter | None) -> list[tuple[str, float]]:
    builder = await index.table.search(query, query_type="fts")
    builder = builder.where(where.sql) if where else builder
    found = await builder.with_row_id().select(["_score"]).limit(10_000).to_arrow()
    return sorted(zip(index.chunk_ids(found.column("_rowid").to_numpy()), found.column("_score").to_pylist()))


async def _compare(out: Path) -> tuple[int, int, list[str]]:
    index = await PublishedIndex(out).open()
    assert index.bm25_here
    index.build_words()
    for _ in range(3000):  # built in a thread
        if index.words is not None:
            break
        await asyncio.sleep(0.01)
    words = index.words
    assert words is not None and words.exact and index.texts is not None
    assert sorted(index.field_words) == ["breadcrumb", "content_subwords", "heading"]
    queries, rows, sent = 0, 0, []
    # a filter on one key, and `language`'s that also lets global guides through (filters.Prefilter)
    filters = [prefilter({"scope": "global-guide"}, index.taxonomy), prefilter({"language": "go"}, index.taxonomy)]
    for query in _queries(list(index.texts.values())):
        holding = words.holding(query)
        found = bm25.full_text(words, index.field_words, query, Weights())
        if holding is None or found is None:
            sent.append(query)
        for where in (None, *filters) if query in QUERIES else (None,):
            if holding is not None:
                lancedb = await _lancedb(index, PhraseQuery(query, "content_text", slop=0), where)
                memory = await (await phrase_rows(index, query, holding, where))(10_000)
                assert sorted((cid, score) for score, cid in memory) == lancedb, (query, where)
                queries, rows = queries + 1, rows + len(lancedb)
            if found is not None:
                lancedb = await _lancedb(index, text_query(query, index, Weights()), where)
                memory = await (await memory_rows(index, *found, where))(10_000)
                assert sorted((cid, score) for score, cid in memory) == lancedb, (query, where)
                queries, rows = queries + 1, rows + len(lancedb)
    return queries, rows, sent


def test_phrase_lists_from_memory_equal_lancedbs(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(published_module, "USE_SNAPSHOT", False)  # the index read from the table, not its snapshot
    (example_docs / "edge-cases.md").write_text(EDGE)
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    queries, rows, sent = asyncio.run(_compare(out))
    assert set(sent) & set(QUERIES) == SENT
    assert queries > 150 and rows > 150


def test_the_counts_lancedb_scores_with() -> None:
    """dl leaves out stop words and tokens of 40 bytes or more but counts words beyond ASCII; N leaves out
    a chunk with no word kept."""
    words = ChunkWords.of(["The client sends it", f"{W39} {W39}j crème", "it is what it is"])
    assert words.lengths.tolist() == [2, 2, 0]
    assert (words.docs, float(words.average)) == (2, 2.0)
    assert words.holding("client sends") is not None and words.holding("creme client") is None
    assert words.holding("crème client") is None  # a query beyond ASCII
    holding = words.holding("the client sends")
    assert holding is not None and holding.tolist() == [0]


def test_membership_in_sorted_positions_is_isins() -> None:
    """bm25.in_sorted answers np.isin for a word's ascending positions: values before, between, at and past
    them, and no positions at all."""
    import numpy as np

    rng = np.random.default_rng(40)
    for size in (0, 1, 2, 7, 300):
        ordered = np.sort(rng.choice(1000, size=size, replace=False)).astype(np.int32)
        values = rng.integers(-5, 1010, size=400).astype(np.int64)
        values[:size] = ordered[: min(size, 400)]
        assert (bm25.in_sorted(values, ordered) == np.isin(values, ordered)).all(), size
