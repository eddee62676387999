"""search_docs, get_doc and prompts through the MCP SDK's own client, over stdio and HTTP."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from docs_mcp_core.server import DocsServer, create_server

from .conftest import stdio_client

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def example_server(example_index: Path) -> DocsServer:
    return create_server(example_index)


@pytest.fixture
def client(example_server: DocsServer) -> Client:
    """In-process through the SDK's client: the fast path for tool behaviour."""
    return Client(example_server.server)


@pytest.fixture(params=["stdio", "http"])
def transport_client(request, example_index: Path) -> Client:
    """Real `docs-mcp serve` processes, for the end-to-end smoke test."""
    if request.param == "stdio":
        return stdio_client(example_index)
    return Client(request.getfixturevalue("example_http") + "/mcp")


@pytest.mark.slow
async def test_every_tool_and_prompt_end_to_end(transport_client: Client) -> None:
    async with transport_client as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"search_docs", "get_doc"}
        hits = (await search(client, query="idempotency key", limit=3))["hits"]
        assert hits
        doc = await client.call_tool("get_doc", {"chunk_id": hits[0]["chunk_id"], "context": 1})
        assert not doc.is_error and f"--- Chunk: {hits[0]['chunk_id']}" in doc.content[0].text
        assert "not found" in (await error_of(client, "get_doc", chunk_id="nope.md#missing")).lower()
        prompts = (await client.list_prompts()).prompts
        assert prompts


async def search(client: Client, **arguments) -> dict:
    result = await client.call_tool("search_docs", arguments)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def error_of(client: Client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


async def test_tools_and_schemas(client: Client) -> None:
    async with client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == ["get_doc", "search_docs"]
        schema = tools["search_docs"].input_schema
        assert schema["additionalProperties"] is False and schema["required"] == ["query"]
        assert schema["properties"]["language"]["enum"] == ["go", "python", "typescript"]
        assert schema["properties"]["language"]["description"].startswith("SDK language.")
        assert schema["properties"]["scope"]["enum"] == ["api-reference", "global-guide", "sdk-specific"]
        assert schema["properties"]["topic"] == {
            "type": "string",
            "enum": ["reliability"],
            "description": "Filter results by topic.",
        }
        assert schema["properties"]["limit"]["maximum"] == 50
        assert "Parcelly shipping API docs" in tools["search_docs"].description
        assert tools["get_doc"].input_schema["properties"]["context"]["maximum"] == 5
        assert client.instructions.startswith("Parcelly is a shipping API")


async def test_search_with_and_without_filters(client: Client) -> None:
    async with client:
        plain = await search(client, query="idempotency key header")
        assert plain["hits"][0]["chunk_id"].startswith("guides/idempotency.md#")
        assert set(plain["hits"][0]) == {
            "chunk_id",
            "score",
            "heading",
            "breadcrumb",
            "snippet",
            "filepath",
            "metadata",
            "chars",
        }
        assert "Idempotency-Key" in plain["hits"][0]["snippet"] and plain["hint"] is None
        scores = [h["score"] for h in plain["hits"]]
        assert scores == sorted(scores, reverse=True) and len(plain["hits"]) <= 10
        go = await search(client, query="handling errors", language="go", scope="sdk-specific", limit=3)
        assert go["hits"] and all(h["metadata"] == {"language": "go", "scope": "sdk-specific"} for h in go["hits"])
        assert go["hits"][0]["chunk_id"] == "sdks/go/README.md#parcelly-go-sdk/handling-errors"


async def test_invalid_arguments_are_error_results(client: Client) -> None:
    async with client:
        assert await error_of(client, "search_docs", query="retries", language="cobol") == (
            "Invalid taxonomy value for 'language': 'cobol'. Allowed values: go, python, typescript"
        )
        assert (await error_of(client, "search_docs", query="x", colour="red")).startswith(
            "Unexpected argument 'colour'. search_docs accepts: query, limit, cursor, max_chars, language, scope, topic."
        )
        assert await error_of(client, "search_docs", query="x", limit=500) == "limit must be an integer from 1 to 50."
        assert (await error_of(client, "search_docs")).startswith("'query' is required.")
        assert (await error_of(client, "nope")).startswith("Unknown tool 'nope'.")


PLAIN_CASES = [
    {"query": "retries"},
    {"query": "retries", "limit": 10},
    {"query": "é", "limit": 50, "language": "go", "max_chars": 2000},
    {"query": "x", "cursor": "abc", "scope": "sdk-specific"},
    {"query": ""},
    {"query": "x", "limit": 0},
    {"query": "x", "limit": 51},
    {"query": "x", "limit": True},
    {"query": "x", "limit": 10.0},
    {"query": "x", "limit": "10"},
    {"query": 3},
    {"query": "x", "language": "cobol"},
    {"query": "x", "language": "Go"},
    {"query": "x", "colour": "red"},
    {"query": "x", "max_chars": 10},
    {"limit": 3},
    {},
]


@pytest.mark.parametrize("arguments", PLAIN_CASES)
def test_the_quick_argument_check_never_passes_what_the_schema_refuses(arguments: dict) -> None:
    """check_arguments skips jsonschema for arguments plainly_valid vouches for: it must agree with
    the validator whenever it does, and vouch for the usual calls (a query, a limit, a filter)."""
    from jsonschema import Draft202012Validator

    from docs_mcp_core.output.metadata import TaxonomyKey
    from docs_mcp_core.server import tools

    taxonomy = {
        "language": TaxonomyKey(values=["go", "python"]),
        "scope": TaxonomyKey(values=["sdk-specific", "global"]),
    }
    for schema in (tools.search_schema(taxonomy), tools.get_doc_schema()):
        validator = Draft202012Validator(schema)
        if tools.plainly_valid(schema, arguments):
            assert validator.is_valid(arguments), arguments
    usual = tools.search_schema(taxonomy)
    if arguments.get("limit") != 10.0:  # an integral float is an integer to JSON Schema: left to the validator
        assert tools.plainly_valid(usual, arguments) == Draft202012Validator(usual).is_valid(arguments), arguments


async def test_language_filter_auto_includes_global_guides(client: Client) -> None:
    async with client:
        auto = await search(client, query="retry requests with backoff", language="python", limit=20)
        scopes = {h["metadata"].get("scope") for h in auto["hits"]}
        languages = {h["metadata"].get("language") for h in auto["hits"]} - {None}
        assert "global-guide" in scopes and languages == {"python"}
        strict = await search(
            client, query="retry requests with backoff", language="python", scope="sdk-specific", limit=20
        )
        assert {h["metadata"]["scope"] for h in strict["hits"]} == {"sdk-specific"}


async def test_cross_language_variants_collapse_unless_filtered(client: Client) -> None:
    async with client:
        hits = (await search(client, query="buy a label tracking number", limit=20))["hits"]
        variants = [
            h["chunk_id"] for h in hits if h["chunk_id"].endswith("/buy-a-label") and h["filepath"].startswith("sdks/")
        ]
        assert len(variants) == 1
        go = (await search(client, query="buy a label tracking number", language="go", limit=20))["hits"]
        assert "sdks/go/shipments.md#shipments-in-go/buy-a-label" in [h["chunk_id"] for h in go]


async def test_pagination_to_the_end_without_duplicates_or_gaps(client: Client) -> None:
    async with client:
        everything = await search(client, query="parcelly", limit=50)
        pages, cursor = [], None
        while True:
            page = await search(client, query="parcelly", limit=7, **({"cursor": cursor} if cursor else {}))
            pages.append([h["chunk_id"] for h in page["hits"]])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        walked = [cid for page in pages for cid in page]
        assert len(walked) == len(set(walked)) > 14
        assert walked[:50] == [h["chunk_id"] for h in everything["hits"]]
        assert all(len(p) == 7 for p in pages[:-1]) and 1 <= len(pages[-1]) <= 7


async def test_tampered_and_mismatched_cursors(client: Client) -> None:
    async with client:
        first = await search(client, query="webhook", limit=2)
        cursor = first["next_cursor"]
        payload, signature = cursor.split(".")
        data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        data["o"] = 0  # jump back to the first page without re-signing
        forged = (
            base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")
            + "."
            + signature
        )
        assert "cursor signature is invalid" in await error_of(client, "search_docs", query="webhook", cursor=forged)
        assert "cursor is malformed" in await error_of(client, "search_docs", query="webhook", cursor="not-a-cursor")
        other = await error_of(client, "search_docs", query="pagination", cursor=cursor)
        assert "cursor belongs to a different query or filters" in other
        filtered = await error_of(client, "search_docs", query="webhook", language="go", cursor=cursor)
        assert "different query or filters" in filtered


async def test_zero_results_hint_suggests_filters(client: Client) -> None:
    async with client:
        page = await search(client, query="ZPL", language="go", scope="sdk-specific")
        assert page["hits"] == [] and page["next_cursor"] is None
        assert page["hint"]["suggested_filters"] == {"scope": ["api-reference", "global-guide"]}
        assert page["hint"]["message"].startswith(
            "0 results found for query 'ZPL' with filters language='go', scope='sdk-specific'. It does match"
        )
        nothing = await search(client, query="qwxzv")
        assert nothing["hint"] == {
            "message": "0 results found for query 'qwxzv'. Try other words, an identifier, or a shorter query.",
            "suggested_filters": {},
        }


async def test_get_doc_with_context_at_file_edges(client: Client) -> None:
    async with client:
        first = (
            (await client.call_tool("get_doc", {"chunk_id": "guides/rate-limits.md#_preamble", "context": 2}))
            .content[0]
            .text
        )
        headers = [line for line in first.splitlines() if line.startswith("--- Chunk:")]
        assert headers == [
            "--- Chunk: guides/rate-limits.md#_preamble (Chunk 1 of 4) (Target) ---",
            "--- Chunk: guides/rate-limits.md#rate-limits/limits (Chunk 2 of 4) (Context: +1) ---",
            "--- Chunk: guides/rate-limits.md#rate-limits/rate-limit-headers (Chunk 3 of 4) (Context: +2) ---",
        ]
        assert first.split("\n", 1)[1].startswith("# Rate limits\n\nParcelly limits how many requests")
        last = (
            (
                await client.call_tool(
                    "get_doc", {"chunk_id": "guides/rate-limits.md#rate-limits/when-you-hit-the-limit", "context": 5}
                )
            )
            .content[0]
            .text
        )
        assert [line.split("(")[-1] for line in last.splitlines() if line.startswith("--- Chunk:")] == [
            "Context: -3) ---",
            "Context: -2) ---",
            "Context: -1) ---",
            "Target) ---",
        ]
        alone = (
            (await client.call_tool("get_doc", {"chunk_id": "guides/rate-limits.md#rate-limits/limits"}))
            .content[0]
            .text
        )
        assert alone.count("--- Chunk:") == 1 and "20 per second" in alone


async def test_invalid_and_unknown_chunk_ids(client: Client) -> None:
    async with client:
        bad = await error_of(client, "get_doc", chunk_id="guides/retries.md#a#b")
        assert bad.startswith("Chunk ID 'guides/retries.md#a#b' has invalid format.")
        unknown = await error_of(client, "get_doc", chunk_id="guides/retries.md#nope")
        assert unknown.startswith(
            "Chunk ID 'guides/retries.md#nope' not found. Use search_docs to discover valid chunk IDs."
        )
        assert "guides/retries.md#retries-and-timeouts/timeouts" in unknown
        assert "not found" in await error_of(client, "get_doc", chunk_id="missing.md#x")
        assert (await error_of(client, "get_doc", chunk_id="overview.md#_preamble", context=9)).startswith(
            "context must be"
        )


async def test_prompts_list_and_get(client: Client) -> None:
    async with client:
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["integrate-webhooks"]
        assert [(a.name, a.required) for a in prompts[0].arguments] == [("language", True), ("framework", False)]
        with_framework = await client.get_prompt("integrate-webhooks", {"language": "python", "framework": "FastAPI"})
        text = with_framework.messages[0].content.text
        assert text.startswith("Help me receive Parcelly webhook events in python using FastAPI.")
        assert 'language "python"' in text
        without = await client.get_prompt("integrate-webhooks", {"language": "go"})
        assert without.messages[0].content.text.startswith("Help me receive Parcelly webhook events in go.\n")
        with pytest.raises(MCPError, match="Missing required prompt argument 'language'"):
            await client.get_prompt("integrate-webhooks", {"framework": "Express"})
        with pytest.raises(MCPError, match="Prompt 'nope' not found"):
            await client.get_prompt("nope", {})


@pytest.mark.slow
async def test_tool_prefix(example_index: Path) -> None:
    async with stdio_client(example_index, "--tool-prefix", "parcelly") as client:
        assert sorted(t.name for t in (await client.list_tools()).tools) == ["parcelly_get_doc", "parcelly_search_docs"]
        result = await client.call_tool("parcelly_search_docs", {"query": "rate limit headers"})
        assert not result.is_error
