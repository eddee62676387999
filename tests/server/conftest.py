"""Servers under test: real `docs-mcp serve` processes, over stdio and over HTTP on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build

from ..conftest import EXAMPLE_DOCS
from ..reliability.load import wait_until_healthy


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build_index(docs: Path, out: Path, provider: str = "none", **settings) -> Path:
    build(docs, out, make_provider(ProviderSettings(provider, **settings)), description="Parcelly shipping API docs")
    return out


@pytest.fixture(scope="session")
def example_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A full-text index of the example corpus, shared read-only by the tests."""
    root = tmp_path_factory.mktemp("server")
    docs = root / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    return build_index(docs, root / "index")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_args(index: Path | None, *extra: str) -> list[str]:
    """`docs-mcp serve --index INDEX …`; without an index, the extra arguments say what to serve."""
    return ["-m", "docs_mcp_core.cli", "serve", *(["--index", str(index)] if index is not None else []), *extra]


def stdio_client(index: Path | None, *extra: str, env: dict[str, str] | None = None) -> Client:
    return Client(
        StdioServerParameters(command=sys.executable, args=serve_args(index, *extra), env={**os.environ, **(env or {})})
    )


def served_port(proc: subprocess.Popen, log: Path, timeout: float = 60) -> int:
    """The port on the server's "serving on http://127.0.0.1:PORT/mcp" line (it is started with --port 0)."""
    deadline = time.monotonic() + timeout
    while True:
        if found := re.search(r"^docs-mcp: serving on http://127\.0\.0\.1:(\d+)/mcp ", log.read_text(), re.M):
            return int(found[1])
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"no 'serving on' line (exit code {proc.poll()}): {log.read_text()[-2000:]}")
        time.sleep(0.05)


@contextlib.contextmanager
def http_server(index: Path | None, *extra: str, env: dict[str, str] | None = None, log: Path | None = None):
    """A `docs-mcp serve --transport http --port 0` process; yields its base URL once /healthz answers.

    The port is the one the server says it bound, so there is no race for a free port with other tests."""
    with contextlib.ExitStack() as stack:
        if log is None:
            log = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="docs-mcp-serve-"))) / "stderr.log"
        err = stack.enter_context(open(log, "w"))
        proc = subprocess.Popen(
            [sys.executable, *serve_args(index, "--transport", "http", "--port", "0", *extra)],
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            port = served_port(proc, log)
            assert port != 0, "the server showed port 0, not the port it bound"
            base = f"http://127.0.0.1:{port}"
            wait_until_healthy(proc, base, log)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="session")
def example_http(example_index: Path):
    with http_server(example_index) as base:
        yield base
