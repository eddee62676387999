"""Small things agents trip on: the default corpus description, chunk ID lists, bare file paths, value case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mcp import Client

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.metadata import PublishedMetadata
from docs_mcp_core.server import create_server
from docs_mcp_core.server.tools import search_description

from ..conftest import EXAMPLE_DOCS, write

pytestmark = pytest.mark.anyio
SECTIONS = 25


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example corpus plus a file of many sections, built without --description."""
    root = tmp_path_factory.mktemp("small")
    docs = root / "parcelly-docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    write(docs, "longreads/.docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h2", "min_chunk_size": 0}}')
    sections = "".join(
        f"## Section {i}\n\nWhat step {i} of the migration changes, and how to undo it.\n\n"
        for i in range(1, SECTIONS + 1)
    )
    write(docs, "longreads/many.md", f"# Migration guide\n\nEvery step of moving to v2.\n\n{sections}")
    build(docs, root / "index", make_provider(ProviderSettings("none")))
    return root / "index"


@pytest.fixture
def client(index: Path) -> Client:
    return Client(create_server(index).server)


async def test_default_corpus_description_says_what_the_corpus_holds(client: Client, index: Path) -> None:
    description = json.loads((index / "metadata.json").read_text())["corpus_description"]
    assert description.startswith(
        "parcelly-docs documentation (19 pages; pages such as Changelog, "
        "Parcelly API overview, Authentication, Errors, Idempotent requests, Pagination, "
        "Rate limits, Retries and timeouts and 11 more; "
    )
    assert "language: go, python, typescript" in description and "scope: api-reference, global-guide" in description
    async with client:
        tool = {t.name: t for t in (await client.list_tools()).tools}["search_docs"]
        assert tool.description.startswith(f"Search the pre-indexed {description} — the authoritative reference")
        assert "Documentation corpus" not in tool.description


def test_a_description_ending_in_a_period_leaves_no_stray_period() -> None:
    text = search_description(PublishedMetadata(corpus_description="Parcelly shipping API docs."), hybrid=False)
    assert (
        text.startswith("Search the pre-indexed Parcelly shipping API docs — the authoritative") and ". —" not in text
    )


async def test_a_bare_file_path_reads_its_first_chunk_and_lists_them_all(client: Client) -> None:
    async with client:
        result = await client.call_tool("get_doc", {"chunk_id": "longreads/many.md"})
        assert not result.is_error, result.content[0].text
        text = result.content[0].text
        first_line, listing = text.splitlines()[0], text.rsplit("\n\n", 1)[1]
        assert first_line.startswith("--- Chunk: longreads/many.md#") and "(Chunk 1 of 26) (Target)" in first_line
        assert listing.startswith("[longreads/many.md has 26 chunks: longreads/many.md#")
        ids = listing[len("[longreads/many.md has 26 chunks: ") : -1].split(", ")
        assert len(ids) == 26 and ids[-1].endswith("section-25")
        for chunk_id in (ids[0], ids[-1]):
            assert not (await client.call_tool("get_doc", {"chunk_id": chunk_id})).is_error


async def test_a_missing_chunk_id_names_the_files_chunks_or_how_many_more(client: Client) -> None:
    async with client:
        long = (await client.call_tool("get_doc", {"chunk_id": "longreads/many.md#nope"})).content[0].text
        assert "That file has 26 chunks: longreads/many.md#" in long
        assert long.endswith(' and 6 more (get_doc {"chunk_id": "longreads/many.md"} lists them all).')
        assert long.count("longreads/many.md#") == 1 + 20
        short = (await client.call_tool("get_doc", {"chunk_id": "guides/rate-limits.md#nope"})).content[0].text
        assert short.endswith(
            "That file has 4 chunks: guides/rate-limits.md#_preamble, guides/rate-limits.md#rate-limits/"
            "limits, guides/rate-limits.md#rate-limits/rate-limit-headers, "
            "guides/rate-limits.md#rate-limits/when-you-hit-the-limit."
        )


async def test_taxonomy_values_match_in_any_letter_case_when_unambiguous(client: Client) -> None:
    async with client:
        exact = await client.call_tool("search_docs", {"query": "create a shipment", "language": "python"})
        for spelling in ("Python", "PYTHON"):
            other = await client.call_tool("search_docs", {"query": "create a shipment", "language": spelling})
            assert not other.is_error and other.content[0].text == exact.content[0].text
        wrong = await client.call_tool("search_docs", {"query": "create a shipment", "language": "Pyton"})
        assert wrong.is_error and "Allowed values: go, python, typescript" in wrong.content[0].text


async def test_a_bare_file_path_with_a_budget_keeps_its_chunk_list_within_it(client: Client) -> None:
    async with client:
        text = (await client.call_tool("get_doc", {"chunk_id": "longreads/many.md", "max_chars": 1200})).content[0].text
        assert len(text) <= 1200 and text.endswith(" more (get_doc without max_chars lists them all)]")
        assert "(Chunk 1 of 26) (Target)" in text and "[longreads/many.md has 26 chunks: " in text
