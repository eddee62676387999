"""HTTP hardening, hot reload of a newly published index, and the text-only fallback."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..conftest import EXAMPLE_CHUNKS, EXAMPLE_DOCS, write
from ..fakes.openai_server import FakeEmbeddingServer
from .conftest import build_index, http_server, stdio_client

pytestmark = pytest.mark.anyio
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def post(url: str, body: dict, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def search_text(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


@pytest.mark.slow
async def test_bearer_token_is_required_when_configured(example_index: Path) -> None:
    env = {"PARCELLY_DOCS_TOKEN": "s3cret-token-0123456789abcdefghij"}
    with http_server(example_index, "--auth-token-env", "PARCELLY_DOCS_TOKEN", env=env) as base:
        status, headers, body = post(f"{base}/mcp", INIT)
        assert status == 401 and headers.get("www-authenticate") == "Bearer" and "unauthorized" in body
        assert post(f"{base}/mcp", INIT, {"Authorization": "Bearer wrong"})[0] == 401
        assert (
            post(
                f"{base}/healthz".replace("healthz", "mcp"),
                INIT,
                {"Authorization": "Bearer s3cret-token-0123456789abcdefghij"},
            )[0]
            == 200
        )
        with urllib.request.urlopen(f"{base}/healthz") as response:  # health needs no token
            assert json.loads(response.read())["status"] == "ok"
        client = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token-0123456789abcdefghij"})
        async with Client(streamable_http_client(f"{base}/mcp", http_client=client)) as session:
            page = search_text(await session.call_tool("search_docs", {"query": "rate limit headers"}))
            assert page["hits"][0]["chunk_id"] == "guides/rate-limits.md#rate-limits/rate-limit-headers"


@pytest.mark.slow
async def test_dns_rebinding_protection(example_http: str) -> None:
    assert post(f"{example_http}/mcp", INIT, {"Host": "evil.example"})[0] == 421
    assert post(f"{example_http}/mcp", INIT, {"Origin": "http://evil.example"})[0] == 403
    assert post(f"{example_http}/mcp", INIT)[0] == 200


@pytest.mark.slow
async def test_stateless_mode_answers_without_sessions(example_index: Path) -> None:
    with http_server(example_index, "--stateless") as base:
        status, headers, body = post(f"{base}/mcp", INIT)
        assert status == 200 and "mcp-session-id" not in {k.lower() for k in headers}
        async with Client(f"{base}/mcp") as session:
            page = search_text(await session.call_tool("search_docs", {"query": "cancel a shipment", "limit": 2}))
            assert len(page["hits"]) == 2


async def test_healthz_reports_the_index(example_http: str) -> None:
    with urllib.request.urlopen(f"{example_http}/healthz") as response:
        health = json.loads(response.read())
    assert health["status"] == "ok" and health["chunks"] == EXAMPLE_CHUNKS and health["vector_search"] == "none"


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_rebuild_published_while_a_client_keeps_searching(tmp_path: Path, transport: str) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    index = build_index(docs, tmp_path / "index", "hash", dimensions=64)
    results: list[dict] = []

    async def keep_searching(session: Client, stop: anyio.Event) -> None:
        while not stop.is_set():
            result = await session.call_tool("search_docs", {"query": "zebra crossing rules"})
            results.append(search_text(result))  # a failed request fails the test here

    async def scenario(session: Client) -> None:
        before = search_text(await session.call_tool("search_docs", {"query": "zebra crossing rules"}))
        assert not any(h["filepath"] == "guides/zebra.md" for h in before["hits"])
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(keep_searching, session, stop)
            await anyio.sleep(0.3)
            write(docs, "guides/zebra.md", "# Zebra crossing rules\n\nCouriers stop at every zebra crossing.\n")
            await anyio.to_thread.run_sync(lambda: build_index(docs, index, "hash", dimensions=64))
            await anyio.sleep(0.5)
            stop.set()
        after = search_text(await session.call_tool("search_docs", {"query": "zebra crossing rules"}))
        assert after["hits"][0]["chunk_id"] == "guides/zebra.md#_preamble"
        doc = await session.call_tool("get_doc", {"chunk_id": "guides/zebra.md#_preamble"})
        assert "Couriers stop at every zebra crossing." in doc.content[0].text
        assert len(results) > 3 and results[0]["hits"][0]["filepath"] != "guides/zebra.md"

    if transport == "stdio":
        async with stdio_client(index) as session:
            await scenario(session)
    else:
        with http_server(index) as base:
            async with Client(f"{base}/mcp") as session:
                await scenario(session)


@pytest.mark.slow
async def test_tools_and_prompts_follow_a_republished_taxonomy(tmp_path: Path) -> None:
    """Regression: arguments were checked against the schema of the index loaded at start, so a
    filter value that only a newer publish has was refused, and tools/list never showed it."""
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    index = build_index(docs, tmp_path / "index")
    async with stdio_client(index) as session:
        search_text(await session.call_tool("search_docs", {"query": "retries"}))
        refused = await session.call_tool("search_docs", {"query": "retries", "language": "rust"})
        assert refused.is_error and "Allowed values: go, python, typescript" in refused.content[0].text
        write(
            docs,
            "sdks/rust/.docs-mcp.json",
            '{"version": "1", "metadata": {"language": "rust", "scope": "sdk-specific"}}',
        )
        write(docs, "sdks/rust/retries.md", "# Retries in Rust\n\nThe crate retries 429 responses with backoff.\n")
        write(
            docs,
            "prompts/port-to-rust.template.md",
            "---\ndescription: Port an integration to Rust\n---\nPort this integration to Rust.\n",
        )
        await anyio.to_thread.run_sync(lambda: build_index(docs, index))
        found = search_text(await session.call_tool("search_docs", {"query": "retries", "language": "rust"}))
        assert "sdks/rust/retries.md#_preamble" in [h["chunk_id"] for h in found["hits"]]
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert "rust" in tools["search_docs"].input_schema["properties"]["language"]["enum"]
        prompts = [p.name for p in (await session.list_prompts()).prompts]
        assert "port-to-rust" in prompts


@pytest.mark.slow
async def test_an_index_that_cannot_be_opened_is_refused(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    index = build_index(docs, tmp_path / "index")
    log = tmp_path / "server.log"
    with http_server(index, log=log) as base:
        async with Client(f"{base}/mcp") as session:
            before = search_text(await session.call_tool("search_docs", {"query": "idempotency"}))
            meta = json.loads((index / "metadata.json").read_text())
            meta["index"]["version"] = 9999  # a publish that points at a table version that does not exist
            (index / "metadata.json").write_text(json.dumps(meta))
            after = search_text(await session.call_tool("search_docs", {"query": "idempotency"}))
            assert after["hits"] == before["hits"]
    assert "a new index was published but cannot be opened, still serving version" in log.read_text()


@pytest.mark.slow
async def test_text_only_fallback_when_the_embedding_endpoint_fails(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    with FakeEmbeddingServer(dims=32) as embeddings:
        index = build_index(
            docs, tmp_path / "index", "openai", model="fake-embed", dimensions=32, base_url=embeddings.url
        )
        embeddings.fail_from_request = embeddings.requests + 1  # from now on every request gets a 500
        embeddings.fail_status = 500
        embeddings.reset_counts()
        log = tmp_path / "server.log"
        with http_server(index, log=log, env={"OPENAI_API_KEY": "unused"}) as base:
            async with Client(f"{base}/mcp") as session:
                for query in ("idempotency key", "webhook signature", "pagination cursor"):
                    page = search_text(await session.call_tool("search_docs", {"query": query}))
                    assert page["hits"], query
                with urllib.request.urlopen(f"{base}/healthz") as response:
                    assert json.loads(response.read())["vector_search"] == "degraded"
        assert embeddings.requests >= 2  # the query embedding was really attempted, and retried once
    text = log.read_text()
    assert text.count("query embedding failed, falling back to text-only search") == 1
    assert "HTTP 500" in text


@pytest.mark.slow
async def test_index_without_vectors_never_calls_a_provider(example_index: Path) -> None:
    meta = json.loads((example_index / "metadata.json").read_text())
    assert meta["embedding"] is None
    async with stdio_client(example_index, env={"OPENAI_API_KEY": ""}) as session:
        page = search_text(await session.call_tool("search_docs", {"query": "create a shipment"}))
        # Text-only ranking (the webhook event table's "…created `shipment…`" also matches the phrase).
        top3 = [hit["chunk_id"] for hit in page["hits"][:3]]
        assert "reference/shipments.md#shipments-api-reference/shipments/create-a-shipment" in top3
