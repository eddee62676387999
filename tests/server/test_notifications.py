"""tools/list_changed after a republish that changes the tool schemas, and the stdio ready line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from docs_mcp_core.server import create_server

from ..conftest import EXAMPLE_DOCS, write
from .conftest import build_index, serve_args

pytestmark = pytest.mark.anyio


def is_list_changed(message: object) -> bool:
    root = getattr(message, "root", message)
    return (
        isinstance(root, types.ToolListChangedNotification)
        or getattr(root, "method", None) == "notifications/tools/list_changed"
    )


@pytest.mark.slow
async def test_a_republish_that_adds_a_taxonomy_value_notifies_the_client(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    index = build_index(docs, tmp_path / "index")
    changed: list[object] = []
    arrived = anyio.Event()

    async def on_message(message: object) -> None:
        if is_list_changed(message):
            changed.append(message)
            arrived.set()

    params = StdioServerParameters(command=sys.executable, args=serve_args(index), env=dict(os.environ))
    async with Client(params, mode="legacy", message_handler=on_message) as session:
        assert session.server_capabilities.tools.list_changed is True
        before = {t.name: t for t in (await session.list_tools()).tools}
        assert "rust" not in before["search_docs"].input_schema["properties"]["language"]["enum"]
        # a republish with the same schemas (new text only) says nothing
        write(docs, "guides/retries.md", (docs / "guides/retries.md").read_text() + "\nRetries are logged.\n")
        await anyio.to_thread.run_sync(lambda: build_index(docs, index))
        assert not (await session.call_tool("search_docs", {"query": "retries are logged"})).is_error
        await anyio.sleep(1.5)  # a watcher tick after the switch
        assert changed == []
        # a new language value changes the search_docs schema: the client hears of it without asking
        write(
            docs,
            "sdks/rust/.docs-mcp.json",
            '{"version": "1", "metadata": {"language": "rust", "scope": "sdk-specific"}}',
        )
        write(docs, "sdks/rust/retries.md", "# Retries in Rust\n\nThe crate retries 429 responses with backoff.\n")
        await anyio.to_thread.run_sync(lambda: build_index(docs, index))
        with anyio.fail_after(15):
            await arrived.wait()
        after = {t.name: t for t in (await session.list_tools()).tools}
        assert "rust" in after["search_docs"].input_schema["properties"]["language"]["enum"]
        assert not (await session.call_tool("search_docs", {"query": "retries", "language": "rust"})).is_error
        assert len(changed) == 1


@pytest.mark.slow
def test_stdio_prints_a_ready_line_on_stderr(example_index: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, *serve_args(example_index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "waiting for an MCP client" in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(60), "".join(lines)
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=30)
    reader.join(5)
    line = next(line for line in lines if "waiting for an MCP client" in line)
    assert line == f"docs-mcp: serving {example_index} (94 chunks) over stdio; waiting for an MCP client\n"
    assert proc.stdout.read() == ""  # type: ignore[union-attr]  # stdout is the protocol: nothing else on it


async def test_2026_clients_hear_of_it_on_their_listen_stream(tmp_path: Path) -> None:
    """The in-process client negotiates the 2026-07-28 protocol: change events ride subscriptions/listen."""
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    index = build_index(docs, tmp_path / "index")
    async with Client(create_server(index).server) as client:
        assert not (await client.call_tool("search_docs", {"query": "retries"})).is_error
        async with client.listen(tools_list_changed=True) as subscription:
            write(
                docs,
                "sdks/rust/.docs-mcp.json",
                '{"version": "1", "metadata": {"language": "rust", "scope": "sdk-specific"}}',
            )
            write(docs, "sdks/rust/retries.md", "# Retries in Rust\n\nThe crate retries 429 responses with backoff.\n")
            await anyio.to_thread.run_sync(lambda: build_index(docs, index))
            assert not (await client.call_tool("search_docs", {"query": "retries", "language": "rust"})).is_error
            with anyio.fail_after(10):
                event = await subscription.__anext__()
        assert type(event).__name__ == "ToolsListChanged"


async def test_served_requests_leave_no_connection_behind(example_index: Path) -> None:
    """Regression: every request of a 2026-07-28 client (and of stateless HTTP) brings a connection of its
    own, and the server kept each one to notify later: over HTTP, 1,200 searches took p50 from 6.5 to
    11.9 ms and RSS up 31 MB. Only a handshake-era connection with a channel is remembered, until it closes."""
    docs = create_server(example_index)
    async with Client(docs.server) as client:  # the newest protocol: a connection per request
        for i in range(30):
            assert not (await client.call_tool("search_docs", {"query": f"retry {i}"})).is_error
        assert docs._clients == {}
    async with Client(docs.server, mode="legacy") as client:  # one connection for the whole session
        for i in range(30):
            assert not (await client.call_tool("search_docs", {"query": f"webhook {i}"})).is_error
        assert len(docs._clients) == 1
    assert docs._clients == {}  # forgotten when it closed
