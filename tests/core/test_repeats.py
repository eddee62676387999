"""A word the query repeats, in any form, counts once: "give … giving" is not "give" twice."""

from pathlib import Path

import lancedb
import pyarrow as pa
import pytest
from lancedb.index import FTS
from lancedb.query import MatchQuery

from docs_mcp_core.search.repeats import stem, without_repeats

from .test_ranking import _build, _ids, _same_on_two_builds, _write_docs

TIMEOUTS = """# Client

## Timeouts

Every request waits up to 30 seconds for a response, then fails with a timeout error. Pass
`timeout=45` to wait longer, or `timeout=None` to wait for as long as the server takes.
The connect, read and write phases can each take their own limit.
"""

LISTING = """# Listing

## Pages

Awaiting `list()` gives one page of shipments, and iterating it with `for await` gives every
shipment in turn, fetching the next page of results as the loop reaches the end of the last one.
"""

OTHER = """# Caching

## Cache directory

Responses are cached per user. Clear the cache to free disk space, or point it at a shared folder.
"""

TIMEOUTS_ID = "client.md#client/timeouts"
LISTING_ID = "listing.md#listing/pages"
QUERY = "give requests 45 seconds before giving up"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return _write_docs(tmp_path / "docs", {"client.md": TIMEOUTS, "listing.md": LISTING, "caching.md": OTHER})


@pytest.fixture
def built(docs: Path, tmp_path: Path) -> Path:
    return _build(docs, tmp_path / "out")


def test_a_word_said_twice_in_two_forms_counts_once(built: Path) -> None:
    # asked once, "give" does not outweigh the section that has the rest of the question
    assert _ids(built, QUERY)[:2] == [TIMEOUTS_ID, LISTING_ID]
    assert _ids(built, QUERY) == _ids(built, "give requests 45 seconds before up")
    # a chunk that says "give" twice still wins a question that is only about giving
    assert _ids(built, "give giving")[0] == LISTING_ID


def test_repeat_ranking_is_deterministic(docs: Path, tmp_path: Path) -> None:
    _same_on_two_builds(docs, tmp_path / "a", tmp_path / "b", QUERY, "give giving")


def test_later_forms_are_cut_and_numbers_and_stop_words_kept() -> None:
    assert without_repeats("give requests 45 seconds before giving up") == "give requests 45 seconds before up"
    assert without_repeats("Retry retries, retrying") == "Retry ,"
    assert without_repeats("h2 or 1.1, 10.10") == "h2 or 1.1, 10.10"  # a value's digits are not a repeated word
    assert without_repeats("the cache and the index") == "the cache and the index"  # LanceDB drops stop words itself
    assert without_repeats("links.create createLink") == "links.create createLink"  # different words: untouched


def test_the_stems_are_the_ones_lancedb_indexes(tmp_path: Path) -> None:
    """Words this module takes for one are found by each other in LanceDB's full-text index, and words it
    keeps apart are not: checked against LanceDB itself, so a tokenizer change fails here."""
    same = [
        ("give", "giving"),
        ("retry", "retries"),
        ("index", "indexes"),
        ("certificate", "certificates"),
        ("configure", "configuration"),
        ("say", "says"),
        ("install", "installed"),
    ]
    apart = [("say", "said"), ("general", "generate"), ("organ", "organization")]
    assert [(a, b) for a, b in same if stem(a) != stem(b)] == []
    assert [(a, b) for a, b in apart if stem(a) == stem(b)] == []
    words = sorted({w for pair in same + apart for w in pair})
    table = lancedb.connect(str(tmp_path / "db")).create_table(
        "t", pa.table({"word": words, "text": [f"{w} zebra" for w in words]})
    )
    table.create_index("text", config=FTS(with_position=True))

    def found(query: str) -> set[str]:
        rows = table.search(MatchQuery(query, "text"), query_type="fts").select(["word"]).limit(50).to_list()
        return {row["word"] for row in rows}

    assert [(a, b) for a, b in same if a not in found(b)] == []
    assert [(a, b) for a, b in apart if a in found(b)] == []
