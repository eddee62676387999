"""A section about the query's words ranks above a chunk that mentions them in passing: a table row among
others, a remark closing a section about something else. Real builds of the bundled corpora, text-only
and with the default model."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.errors import SearchError
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.derived_fields import lead_sentence
from docs_mcp_core.search import Weights, run_search
from docs_mcp_core.search.fusion import (
    fuse,
    headed_by_the_words,
    in_passing,
    names_the_words,
    query_words,
    tables_in_passing,
    tables_weight,
)
from docs_mcp_core.search.published import ChunkInfo, PublishedIndex

from ..conftest import EXAMPLE_DOCS

MODES = ["none", "local"]


def test_the_lead_is_the_opening_sentence_of_the_chunks_prose() -> None:
    assert lead_sentence("## Backoff\n\nWait longer after each **failed** attempt. Then give up.\n") == (
        "Wait longer after each failed attempt."
    )
    # a paragraph that runs over lines, with a link and a code span
    assert lead_sentence("# T\n\nUse [the CLI](cli.md) to\nforward `events`: it retries.\n\nMore.") == (
        "Use the CLI to forward events: it retries."
    )
    # a chunk that opens with a table, a list or code has no sentence of its own to open with
    assert lead_sentence("## Error types\n\n| type | what to do |\n|---|---|\n| api | retry with backoff |\n") == ""
    assert lead_sentence("## See also\n\n- [Retries](retries.md)\n\nRetries are explained there.") == ""
    assert lead_sentence("```python\nretry()\n```\n\nRetry with backoff.") == ""
    assert lead_sentence("<!-- generated -->\n# Title\n\n" + "word " * 100) == ("word " * 100).strip()[:240]


def _chunk(heading: str, lead: str) -> ChunkInfo:
    return ChunkInfo("a.md#x", "a.md", heading, f"a.md > {heading}", 0, {}, lead=lead)


def test_a_chunk_mentions_the_query_in_passing_when_neither_its_heading_nor_its_lead_says_a_query_word() -> None:
    assert in_passing(_chunk("Error types", ""), query_words("retry with backoff"))
    assert in_passing(_chunk("Official SDKs", ""), query_words("verify webhook signature"))
    assert not in_passing(_chunk("Exponential backoff with jitter", "Wait longer."), query_words("retry with backoff"))
    # any form of the word, in the heading or in the opening sentence
    assert not in_passing(_chunk("Signatures", "Verifying a delivery takes the raw body."), query_words("verify it"))
    # an identifier counts by its parts too: the section on route data is about `starlightRoute`
    lead = "All of Starlight's components use route data to decide what to render."
    assert not in_passing(_chunk("Using route data", lead), query_words("Astro.locals.starlightRoute"))


def _build(docs: Path, out: Path, mode: str) -> Path:
    provider = make_provider(ProviderSettings(mode, backend="onnx") if mode == "local" else ProviderSettings(mode))
    try:
        build(docs, out, provider)
    finally:
        provider.close()
    return out


@pytest.fixture(scope="module")
def example_indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dedicated")
    docs = shutil.copytree(EXAMPLE_DOCS, root / "docs")
    return {mode: _build(docs, root / mode, mode) for mode in MODES}


@pytest.fixture(scope="module")
def dub_ts_indexes(dub_ts_docs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dedicated-dub")
    return {mode: _build(dub_ts_docs, root / mode, mode) for mode in MODES}


def _ids(out: Path, query: str, mode: str, weights: Weights | None = None, limit: int = 5) -> list[str]:
    return [h["chunk_id"] for h in run_search(out, query, limit=limit, hybrid=mode == "local", weights=weights).hits]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_the_section_on_backoff_ranks_above_a_table_row_that_says_retry_with_backoff(
    example_indexes: dict[str, Path], mode: str
) -> None:
    # guides/errors.md's table of error types ends with "retry with backoff": the exact phrase, in one cell
    # (with the model it is 15th: sections titled by the query's words push its table down, 0038)
    ids = _ids(example_indexes[mode], "retry with backoff", mode, limit=20)
    assert ids[0] == "guides/retries.md#retries-and-timeouts/exponential-backoff-with-jitter", ids
    assert "guides/errors.md#errors/error-types" in ids  # lower, still found


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_section_on_verifying_webhooks_ranks_above_the_overviews_closing_remark(
    example_indexes: dict[str, Path], mode: str
) -> None:
    # the overview's SDK table closes with "… and verifies webhook signatures"
    ids = _ids(example_indexes[mode], "verify webhook signature", mode, limit=20)  # the remark: 12th with the model
    verifying = (
        "guides/webhooks.md#webhooks/verifying-signatures/",
        "sdks/go/shipments.md#shipments-in-go/verify-a-webhook",
        "sdks/python/webhooks.md#webhooks-in-python/verify-and-parse-an-event",
        "sdks/typescript/webhooks.md#webhooks-in-typescript/verify-and-parse-an-event",
    )
    assert ids[0].startswith(verifying), ids
    assert ids.index("overview.md#parcelly-api-overview/official-sdks") > 0


@pytest.mark.slow
# With the model, field tables whose one row says "short link" rank above the operation by their vectors (cosine
# up to 0.62 against 0.37): 19th before the exact phrase stopped counting in passing, 17th before their table rows
# weighed less on the vector side, 8th before they weighed little where a heading path names the query's words.
@pytest.mark.parametrize(("mode", "rank"), [("none", 1), ("local", 1)])
def test_the_create_operation_ranks_above_field_tables_that_say_short_link(
    dub_ts_indexes: dict[str, Path], mode: str, rank: int
) -> None:
    # generated field tables describe a field as "the short link …" in one row each: the exact phrase
    ids = _ids(dub_ts_indexes[mode], "create a short link", mode, limit=20)
    assert "docs/sdks/links/README.md#links/create" in ids[:rank], ids


def test_a_table_without_the_lead_column_is_refused_naming_the_rebuild(tmp_path: Path) -> None:
    import lancedb

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "retries.md").write_text("# Retries\n\n## Backoff\n\nWait longer after each failed attempt.\n")
    out = _build(docs, tmp_path / "out", "none")
    table = lancedb.connect(str(out / ".lancedb")).open_table("chunks")
    table.drop_columns(["lead"])
    meta = json.loads((out / "metadata.json").read_text())
    meta["index"]["version"] = table.version
    (out / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(SearchError, match=f"cannot be read .*`docs-mcp build --docs-dir DOCS --index {out}`"):
        _ids(out, "retry with backoff", "none")


FIELD_TABLE = """# LinkBody

## Fields

| Field | Type | Description |
|---|---|---|
| `url` | *string* | The destination URL. |
| `key` | *string* | The slug of the short link. |
| `tags` | *string[]* | The tags of the link. |
"""
CREATE_SECTION = "# Links\n\n## Create\n\nCreate a link for the workspace.\n\n```ts\nawait dub.links.create();\n```\n"


def _field_table_and_create_section(tmp_path: Path) -> PublishedIndex:
    """A field table that mentions a short link in one row, and a section titled by the action."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "linkbody.md").write_text(FIELD_TABLE)
    (docs / "links.md").write_text(CREATE_SECTION)
    return asyncio.run(PublishedIndex(_build(docs, tmp_path / "out", "none")).open())


def test_the_vector_side_weighs_a_passing_mention_by_its_share_of_table_rows(tmp_path: Path) -> None:
    index = _field_table_and_create_section(tmp_path)
    table, section = "linkbody.md#linkbody/fields", "links.md#links/create"
    assert index.info[table].tables > 0.9 and index.info[section].tables == 0.0  # the `tables` column
    # the field table is closer to the query by its one row; it says no query word in its heading or lead
    vector = [(table, 0.62), (section, 0.6)]
    scaled = dict(tables_in_passing(index, vector, "create a short link", 0.15))
    assert [cid for cid in scaled] == [section, table]
    assert scaled[section] == 0.6 and scaled[table] == pytest.approx(0.62 * (1 - 0.15 * index.info[table].tables))
    # a table whose heading says a query word is about it: left as it is
    assert tables_in_passing(index, vector, "link fields", 0.15) == vector
    assert tables_in_passing(index, vector, "create a short link", 0.0) == vector


def test_a_heading_path_names_the_query_by_more_than_half_of_its_words_in_plain_words() -> None:
    def named(breadcrumb: str, query: str) -> bool:
        heading = breadcrumb.rsplit(" > ", 1)[-1]
        return names_the_words(ChunkInfo("a.md#x", "a.md", heading, breadcrumb, 0, {}), query_words(query))

    assert named("links.md > Links > Create", "create a short link")  # create, link: two of three
    assert named("retries.md > Retries > Backoff", "retry with backoff")
    assert not named("links.md > Links", "create a short link")  # one of three
    # an identifier in a heading is one word, and the file's own name does not count
    assert not named("linkbody.md > CreateLinkBody > Fields", "create a short link")
    assert not named("create/short/link.md > Fields", "create a short link")


def test_tables_in_passing_weigh_little_when_another_candidates_heading_names_the_query(tmp_path: Path) -> None:
    index = _field_table_and_create_section(tmp_path)
    table, section = "linkbody.md#linkbody/fields", "links.md#links/create"
    # the field table is far closer by its one row and nearly as good a full-text match
    lists = {"text": [(section, 9.0), (table, 8.0)], "vector": [(table, 0.62), (section, 0.37)]}
    weights = Weights()
    assert tables_weight(index, lists, "create a short link", weights) == weights.tables_named
    assert [cid for cid, _ in fuse(index, lists, weights, {}, "create a short link")] == [section, table]
    # with the mild weight alone (as before), the table's cosine still wins
    mild = dataclasses.replace(weights, tables_named=0.0)
    assert [cid for cid, _ in fuse(index, lists, mild, {}, "create a short link")][0] == table
    # no candidate's heading names most of the query's words: the table may be the answer, the mild weight stays
    assert tables_weight(index, lists, "the slug of the short link", weights) == weights.tables


def test_the_vector_side_weighs_more_a_chunk_whose_own_heading_names_most_of_the_query(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "python.md").write_text(
        "# Python versions\n\n## Pinning a Python version\n\nWrite the version to a file in the project.\n\n"
        "## Installing Python\n\nThe project's interpreter, downloaded when missing.\n"
    )
    index = asyncio.run(PublishedIndex(_build(docs, tmp_path / "out", "none")).open())
    pinning, installing = (
        "python.md#python-versions/pinning-a-python-version",
        "python.md#python-versions/installing-python",
    )
    vector = [(installing, 0.60), (pinning, 0.50)]
    query = "pin a python version"  # pin, python, version: the heading names all three, the other one of three
    scaled = dict(headed_by_the_words(index, vector, query, 0.5))
    assert list(scaled) == [pinning, installing]
    assert scaled[pinning] == pytest.approx(0.50 * 1.5) and scaled[installing] == 0.60
    # half of the query's words is not most of them; a weight of 0 turns it off
    assert headed_by_the_words(index, vector, "python on windows", 0.5) == vector
    assert headed_by_the_words(index, vector, query, 0.0) == vector
    weights = Weights()
    assert [cid for cid, _ in fuse(index, {"vector": vector}, weights, {}, query)][0] == pinning
    assert [cid for cid, _ in fuse(index, {"vector": vector}, dataclasses.replace(weights, headed=0.0), {}, query)][
        0
    ] == installing


def test_a_negative_similarity_whose_heading_names_the_query_still_rises(tmp_path: Path) -> None:
    """Cosine similarity goes below 0: a chunk whose heading names the query weighs more there too."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "python.md").write_text(
        "# Python\n\n## Pinning a Python version\n\nWrite it to a file.\n\n## Other\n\nText.\n"
    )
    index = asyncio.run(PublishedIndex(_build(docs, tmp_path / "out", "none")).open())
    pinning, other = "python.md#python/pinning-a-python-version", "python.md#python/other"
    scaled = dict(headed_by_the_words(index, [(other, -0.10), (pinning, -0.12)], "pin a python version", 0.5))
    assert list(scaled) == [pinning, other] and scaled[pinning] == pytest.approx(-0.12 * 0.5)


def test_a_negative_similarity_of_a_table_in_passing_still_falls(tmp_path: Path) -> None:
    """Below 0 a smaller factor would raise a cosine: a table in passing must weigh less there too."""
    index = _field_table_and_create_section(tmp_path)
    table, section = "linkbody.md#linkbody/fields", "links.md#links/create"
    scaled = dict(tables_in_passing(index, [(table, -0.10), (section, -0.12)], "create a short link", 1.0))
    assert list(scaled) == [section, table]
    assert scaled[table] == pytest.approx(-0.10 * (1 + index.info[table].tables))
