"""The exact-phrase query is skipped only when LanceDB's own phrase query would find nothing."""

from pathlib import Path

import lancedb
import pyarrow as pa
from lancedb.index import FTS
from lancedb.query import PhraseQuery

from docs_mcp_core.search.chunk_words import ChunkWords

TEXTS = [
    "Publishing packages to the registry needs a token.",
    "The café menu lists every dish; Straße names the street.",
    "Retries back off exponentially: WithMaxRetries(5) sets the limit.",
    "A client sends requests and reads responses.",
    "Crème brûlée is served after the main course.",
]
PHRASES = [
    "published package",  # stems
    "publishing registry",  # both words held by one chunk, not together: LanceDB finds nothing, the check cannot tell
    "cafe menu",  # LanceDB folds é to e
    "strasse names",  # forms LanceDB may index a word under that it happens not to: the check keeps them too
    "creme brulee",
    "which client",  # "which" is a stop word, held by no chunk: LanceDB looks for "client" alone
    "the client of it",
    "client zebra",  # zebra is in no chunk
    "zebra giraffe",
    "max retries",  # "max" is only inside an identifier
    "withmaxretries 5",
    "token registry",  # both in chunk 0
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
    assert skipped == ["client zebra", "max retries", "menu client", "zebra giraffe"]
    # found by LanceDB through its stemming, its folding and its stop words: the check must see them all
    assert all(found[p] for p in ["published package", "cafe menu", "which client"])


def test_a_chunk_with_combining_marks_may_hold_any_word() -> None:
    words = ChunkWords.of(["plain words here", "cafe\u0301 with a combining accent"])
    assert words.anything == 0b10
    assert words.may_match("zebra giraffe")  # the second chunk's words cannot be told
    assert not ChunkWords.of(["plain words here"]).may_match("zebra giraffe")
