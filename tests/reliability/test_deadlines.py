"""A server that answers one byte at a time, each well within any read timeout: the embeddings API
client and `fix --llm` give each request up at its total deadline, retry as configured, and end with
one `error:` line (the build lock released, nothing published)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..conftest import write
from ..core.test_fix import sdk_corpus
from ..fakes.drip_server import DripServer
from .clitools import build_args, docs_mcp

ENV = {**os.environ, "OPENAI_API_KEY": "sk-test", "NO_COLOR": "1"}
HANG = 120  # seconds: without a deadline these commands never end; the test then fails here


def one_error_line(proc) -> str:  # type: ignore[no-untyped-def]
    """The command failed with one `error:` line (a build's progress lines around it) and no traceback."""
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


@pytest.mark.slow
@pytest.mark.parametrize("headers_first", [False, True], ids=["dripping-headers", "dripping-body"])
def test_a_dripping_embeddings_server_is_given_up_on(tmp_path: Path, headers_first: bool) -> None:
    docs = tmp_path / "docs"
    write(docs, "guide.md", "# Guide\n\n## Install\n\nRun the installer with care.\n")
    out = tmp_path / "out"
    with DripServer(interval=0.2, headers_first=headers_first) as drip:
        proc = docs_mcp(
            *build_args(docs, out, "openai"),
            "--embedding-base-url",
            drip.url,
            "--embedding-timeout",
            "2",
            "--embedding-max-retries",
            "1",
            env=ENV,
            timeout=HANG,
        )
        line = one_error_line(proc)
        assert drip.requests == 2  # the request and its one retry, each given up on at its deadline
        assert f"the embedding endpoint {drip.url} did not answer completely within 2 s, 2 time(s)" in line
    assert "--embedding-timeout" in line
    assert not (out / "metadata.json").exists()
    # the lock was released: the next build of this output runs (and fails the same way, at once)
    with DripServer(interval=0.2) as drip:
        again = docs_mcp(
            *build_args(docs, out, "openai"),
            "--embedding-base-url",
            drip.url,
            "--embedding-timeout",
            "1",
            "--embedding-max-retries",
            "0",
            env=ENV,
            timeout=HANG,
        )
        assert "within 1 s, 1 time(s)" in one_error_line(again) and drip.requests == 1


@pytest.mark.slow
def test_the_embedding_timeout_comes_from_the_environment_too(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "guide.md", "# Guide\n\n## Install\n\nRun the installer with care.\n")
    with DripServer(interval=0.2) as drip:
        env = {**ENV, "DOCS_MCP_BUILD_EMBEDDING_TIMEOUT": "1", "DOCS_MCP_BUILD_EMBEDDING_MAX_RETRIES": "0"}
        proc = docs_mcp(
            *build_args(docs, tmp_path / "out", "openai"), "--embedding-base-url", drip.url, env=env, timeout=HANG
        )
        assert "within 1 s, 1 time(s)" in one_error_line(proc) and drip.requests == 1


@pytest.mark.slow
def test_a_dripping_chat_server_is_given_up_on_by_fix_llm(tmp_path: Path) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    with DripServer(interval=0.2) as drip:
        proc = docs_mcp(
            "fix",
            "--docs-dir",
            docs,
            "--llm",
            "--llm-base-url",
            drip.url,
            "--llm-timeout",
            "1",
            "--write",
            env=ENV,
            timeout=HANG,
        )
        line = one_error_line(proc)
        assert drip.requests == 3  # the request and its two retries
    assert line.startswith("error: --llm: no complete answer within 1 s, 3 time(s); raise --llm-timeout")
    assert not (docs / ".docs-mcp.json").exists()
