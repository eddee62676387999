"""A request that outlives two publishes: the version it holds is pruned under it (only the published
version and the one before it are kept), and it answers from the version published now.

The server is held inside the request at the `request` failpoint (its event loop blocked, as a
SIGSTOP would), while real `docs-mcp build --force` processes publish twice.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from docs_mcp_core.output.table_files import manifests

from ..conftest import EXAMPLE_DOCS
from ..server.conftest import http_server
from .clitools import build_args, docs_mcp, published
from .load import McpHttpClient

QUERY = "idempotency key"


def build(docs: Path, out: Path, *extra: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCS_MCP_TEST_")}
    result = docs_mcp(*build_args(docs, out), "-q", *extra, env=env)
    assert result.returncode == 0, result.stderr
    return published(out)["version"]


def held(paused: Path, call: tuple[str, dict], base: str) -> tuple[threading.Thread, list[tuple[bool, str]]]:
    """Start `call` in a thread and return once the server is paused inside it."""
    answers: list[tuple[bool, str]] = []
    client = McpHttpClient(base, timeout=180)

    def run() -> None:
        try:
            answers.append(client.call(*call))
        finally:
            client.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not any(paused.iterdir()):
        assert thread.is_alive() and time.monotonic() < deadline, f"the request was not held: {answers}"
        time.sleep(0.05)
    return thread, answers


@pytest.mark.slow
def test_a_request_that_outlives_two_publishes_answers_from_the_current_one(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "index"
    shutil.copytree(EXAMPLE_DOCS, docs)
    first = build(docs, out)
    paused, release = tmp_path / "paused", tmp_path / "release"
    paused.mkdir()
    env = {
        "DOCS_MCP_TEST_PAUSE_AT": "request",
        "DOCS_MCP_TEST_RELEASE": str(release),
        "DOCS_MCP_TEST_PAUSED_DIR": str(paused),
    }
    log = tmp_path / "server.log"
    with http_server(out, "--stateless", env=env, log=log) as base:
        calls = [
            ("search_docs", {"query": QUERY}),
            ("get_doc", {"chunk_id": "guides/idempotency.md", "context": 1}),
        ]
        for name, arguments in calls:
            release.unlink(missing_ok=True)
            thread, answers = held(paused, (name, arguments), base)
            held_version = published(out)["version"]
            versions = [build(docs, out, "--force") for _ in range(2)]
            assert held_version == first or name == "get_doc"
            assert held_version not in manifests(out, "chunks"), "the held version was not pruned"
            assert sorted(manifests(out, "chunks")) == versions
            release.touch()
            thread.join(timeout=180)
            assert answers, f"{name} did not answer"
            ok, text = answers[0]
            assert ok, text
            if name == "search_docs":
                assert json.loads(text)["hits"][0]["chunk_id"].startswith("guides/idempotency.md")
            else:
                assert "--- Chunk: guides/idempotency.md" in text
    assert "Traceback" not in log.read_text()
