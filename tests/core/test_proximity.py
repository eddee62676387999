"""Term proximity: query words standing together in a chunk outrank the same words scattered."""

import json
import subprocess
import sys
from pathlib import Path

import lancedb
import pyarrow as pa
import pytest
from lancedb.index import FTS
from lancedb.query import MatchQuery

from docs_mcp_core.search import Weights
from docs_mcp_core.search.proximity import MAX_PAIRS, STOP_WORDS, query_terms, term_pairs

from .test_ranking import _build, _ids, _same_on_two_builds, _write_docs

TOGETHER = """# Releases

## Sharing a release

When a release is ready, run the publish command to upload the built package to PyPI. It asks for a
token the first time and keeps it in the keyring for later releases.
"""

SCATTERED = """# Builds

## Build outputs

Each package build writes a wheel per platform. Mirrors of PyPI serve wheels too. Large wheels
upload slowly; split a package that grows past the limit.
"""

OTHER = """# Caching

## Cache directory

Downloads are cached per user. Clear the cache to free disk space, or point it at a shared folder
for machines that build the same projects.
"""

TOGETHER_ID = "releases.md#releases/sharing-a-release"
SCATTERED_ID = "builds.md#builds/build-outputs"
QUERY = "upload my package to PyPI"


@pytest.fixture
def built(tmp_path: Path) -> Path:
    docs = _write_docs(tmp_path / "docs", {"releases.md": TOGETHER, "builds.md": SCATTERED, "caching.md": OTHER})
    return _build(docs, tmp_path / "out")


def test_query_words_standing_together_outrank_the_same_words_scattered(built: Path) -> None:
    # BM25 alone prefers the shorter chunk, where the words stand apart
    assert _ids(built, QUERY, weights=Weights(proximity=0.0))[:2] == [SCATTERED_ID, TOGETHER_ID]
    assert _ids(built, QUERY)[:2] == [TOGETHER_ID, SCATTERED_ID]


@pytest.mark.slow
def test_the_proximity_weight_option_of_search(built: Path) -> None:
    def ranked(*options: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "docs_mcp_core.cli", "search", "--index", str(built), "--json", *options, QUERY],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return [hit["chunk_id"] for hit in json.loads(done.stdout)["hits"]][:2]

    assert ranked() == [TOGETHER_ID, SCATTERED_ID]
    assert ranked("--proximity-weight", "0") == [SCATTERED_ID, TOGETHER_ID]
    bad = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", "search", "--index", str(built), "--proximity-weight", "-1", QUERY],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "--proximity-weight" in bad.stderr


def test_proximity_ranking_is_deterministic(tmp_path: Path) -> None:
    docs = _write_docs(tmp_path / "docs", {"releases.md": TOGETHER, "builds.md": SCATTERED, "caching.md": OTHER})
    _same_on_two_builds(docs, tmp_path / "a", tmp_path / "b", QUERY)


def test_pairs_skip_stop_words_and_short_queries() -> None:
    assert query_terms("How do I upload my package to PyPI?") == ["upload", "package", "pypi"]
    assert term_pairs("How do I upload my package to PyPI?") == ["upload package", "package pypi"]
    assert term_pairs("links.upsert") == []  # two words: the exact-phrase list's job
    assert term_pairs("retry retry failed") == ["retry failed"]  # a word next to itself pairs nothing
    assert term_pairs("cache cache cache") == []
    pasted = " ".join(f"word{i}" for i in range(100))  # a pasted paragraph: a bounded number of phrase queries
    assert term_pairs(pasted) == [f"word{i} word{i + 1}" for i in range(MAX_PAIRS)]


def test_the_stop_words_are_the_ones_lancedb_drops(tmp_path: Path) -> None:
    """The pairs skip exactly the words the full-text index leaves out; checked against LanceDB itself, so
    an upgrade that changes its list fails here rather than pairing words the index does not hold."""
    kept = ["because", "before", "very", "only", "does", "using", "without", "make", "upload", "package"]
    words = sorted(STOP_WORDS) + kept
    table = lancedb.connect(str(tmp_path / "db")).create_table(
        "t", pa.table({"id": list(range(len(words))), "text": [f"{w} zebra" for w in words]})
    )
    table.create_index("text", config=FTS(with_position=True))

    def found(word: str) -> bool:
        return bool(table.search(MatchQuery(word, "text"), query_type="fts").select(["id"]).limit(1).to_list())

    assert [w for w in sorted(STOP_WORDS) if found(w)] == []
    assert [w for w in kept if not found(w)] == []
