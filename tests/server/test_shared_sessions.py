"""`docs-mcp serve --shared`: stdio sessions forked from one resident process (shared_session.py, resident.py).

Real processes throughout: the launcher is started by the MCP SDK's stdio client as an editor would,
the resident is the one it starts, and the sessions answer real searches on a real index.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from benchmarks.processes import children
from tests.conftest import EXAMPLE_DOCS
from tests.server.conftest import build_index, serve_args

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

QUERIES = ["create a shipment", "webhook signature", "rate limits", "track a parcel"]
WAIT = 60.0  # seconds a process may take to go; a poll bound, not a measurement


def shared_command(index: Path) -> list[str]:
    """The console script's way in (console.py), as `docs-mcp serve --index INDEX --shared`."""
    return ["-m", "docs_mcp_core.console", "serve", "--index", str(index), "--shared"]


def shared_params(index: Path, folder: Path) -> StdioServerParameters:
    env = {**os.environ, "DOCS_MCP_SHARED_DIR": str(folder)}
    return StdioServerParameters(command=sys.executable, args=shared_command(index), env=env)


def the_log(folder: Path) -> str:
    logs = list(folder.glob("*.log"))
    assert len(logs) == 1, logs
    return logs[0].read_text()


def residents(log: str) -> list[int]:
    """The pid of each resident that started serving, in order."""
    return [int(pid) for pid in re.findall(r"docs-mcp resident (\d+): serving ", log)]


def sessions(log: str) -> list[int]:
    return [int(pid) for pid in re.findall(r"session (\d+) started", log)]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


async def answers(client: Client) -> list[str]:
    out = []
    for query in QUERIES:
        result = await client.call_tool("search_docs", {"query": query, "limit": 5})
        assert not result.is_error, result.content[0].text
        out.append(result.content[0].text)
    return out


async def open_session(stack: AsyncExitStack, params: StdioServerParameters) -> tuple[Client, int]:
    """A session through the SDK's stdio client, and the pid of the process it started (the launcher)."""
    before = children()
    client = await stack.enter_async_context(Client(params))
    (pid,) = children() - before
    return client, pid


@pytest.fixture
def folder(tmp_path: Path):
    """The sockets' folder (DOCS_MCP_SHARED_DIR); the residents started in it are ended afterwards."""
    folder = tmp_path / "s"
    yield folder
    for log in folder.glob("*.log"):
        for pid in residents(log.read_text()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


async def test_two_sessions_share_one_resident_and_answer_as_a_plain_server(example_index: Path, folder: Path) -> None:
    plain = StdioServerParameters(command=sys.executable, args=serve_args(example_index), env=dict(os.environ))
    async with AsyncExitStack() as stack:
        first, _ = await open_session(stack, shared_params(example_index, folder))
        second, _ = await open_session(stack, shared_params(example_index, folder))
        plain_client = await stack.enter_async_context(Client(plain))
        expected = await answers(plain_client)
        assert await answers(first) == expected
        assert await answers(second) == expected
        log = the_log(folder)
        assert len(residents(log)) == 1  # the second launcher found the first one's resident
        assert len(sessions(log)) == 2
        assert [p.suffix for p in sorted(folder.iterdir())] == [".lock", ".log", ".sock"]
    assert (folder.stat().st_mode & 0o777) == 0o700


async def test_killing_a_launcher_ends_its_child_and_the_other_session_answers(
    example_index: Path, folder: Path
) -> None:
    async with AsyncExitStack() as stack:
        _, launcher = await open_session(stack, shared_params(example_index, folder))
        other, _ = await open_session(stack, shared_params(example_index, folder))
        child = sessions(the_log(folder))[0]
        assert alive(child)
        os.kill(launcher, signal.SIGKILL)  # as a client ends a server it gave up on
        assert wait_gone(child)
        assert len(await answers(other)) == len(QUERIES)
        assert alive(residents(the_log(folder))[0])


async def test_a_killed_child_leaves_the_others_and_the_resident_serving(example_index: Path, folder: Path) -> None:
    async with AsyncExitStack() as stack:
        await open_session(stack, shared_params(example_index, folder))
        other, _ = await open_session(stack, shared_params(example_index, folder))
        os.kill(sessions(the_log(folder))[0], signal.SIGKILL)  # a session that crashes
        assert len(await answers(other)) == len(QUERIES)
        third, _ = await open_session(stack, shared_params(example_index, folder))
        assert len(await answers(third)) == len(QUERIES)
        assert len(residents(the_log(folder))) == 1


async def test_killing_the_resident_leaves_live_sessions_and_the_next_one_starts_another(
    example_index: Path, folder: Path
) -> None:
    async with AsyncExitStack() as stack:
        live, _ = await open_session(stack, shared_params(example_index, folder))
        (resident,) = residents(the_log(folder))
        os.kill(resident, signal.SIGKILL)  # its socket stays behind, with no one listening
        assert wait_gone(resident)
        assert any(p.suffix == ".sock" for p in folder.iterdir())
        assert len(await answers(live)) == len(QUERIES)
        later, _ = await open_session(stack, shared_params(example_index, folder))
        assert len(await answers(later)) == len(QUERIES)
        log = the_log(folder)
        assert len(residents(log)) == 2 and alive(residents(log)[1])
        assert len(await answers(live)) == len(QUERIES)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def started_launcher(index: Path, folder: Path, *extra: str, wait: bool = True) -> subprocess.Popen[bytes]:
    """A launcher sent initialize; with `wait`, its session has answered it."""
    proc = subprocess.Popen(
        [sys.executable, *shared_command(index), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "DOCS_MCP_SHARED_DIR": str(folder)},
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    if wait:
        assert json.loads(proc.stdout.readline())["id"] == 1
    return proc


def test_the_launcher_exits_as_its_child_does(example_index: Path, folder: Path) -> None:
    closed = started_launcher(example_index, folder)
    assert closed.stdin
    closed.stdin.close()  # the client is done: the child ends, and the launcher with its code
    assert closed.wait(WAIT) == 0
    killed = started_launcher(example_index, folder)
    os.kill(sessions(the_log(folder))[-1], signal.SIGKILL)
    assert killed.wait(WAIT) == -signal.SIGKILL
    terminated = started_launcher(example_index, folder)
    terminated.terminate()  # forwarded to the child, which ends by it
    assert terminated.wait(WAIT) == -signal.SIGTERM
    assert not alive(sessions(the_log(folder))[-1])
    assert len(residents(the_log(folder))) == 1


def test_http_is_refused_with_one_line(example_index: Path, folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, *shared_command(example_index), "--transport", "http"],
        capture_output=True,
        text=True,
        env={**os.environ, "DOCS_MCP_SHARED_DIR": str(folder)},
        timeout=WAIT,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: --shared is for stdio sessions") and "Traceback" not in done.stderr


async def test_a_republished_index_reaches_live_and_new_shared_sessions(tmp_path: Path, folder: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    index = build_index(docs, tmp_path / "index")
    zebra = {"query": "zebra crossing rules", "limit": 3}
    async with AsyncExitStack() as stack:
        live, _ = await open_session(stack, shared_params(index, folder))
        before = json.loads((await live.call_tool("search_docs", zebra)).content[0].text)
        assert not any(h["filepath"] == "guides/zebra.md" for h in before["hits"])
        (docs / "guides" / "zebra.md").write_text("# Zebra crossing rules\n\nCouriers stop at every zebra crossing.\n")
        build_index(docs, index)
        later, _ = await open_session(stack, shared_params(index, folder))  # forked after the publish
        for client in (live, later):
            after = json.loads((await client.call_tool("search_docs", zebra)).content[0].text)
            assert after["hits"][0]["chunk_id"] == "guides/zebra.md#_preamble"
        assert len(residents(the_log(folder))) == 1


def test_an_idle_resident_removes_its_socket_and_exits(example_index: Path, folder: Path) -> None:
    session = started_launcher(example_index, folder, "--shared-idle-timeout", "1")
    assert session.stdin
    session.stdin.close()
    assert session.wait(WAIT) == 0
    (resident,) = residents(the_log(folder))
    assert wait_gone(resident)
    assert not list(folder.glob("*.sock"))
    assert "no session for 1 s: exiting" in the_log(folder)


def test_launchers_started_together_share_one_resident(example_index: Path, folder: Path) -> None:
    """Each finds no resident and starts one: the one that gets the lock serves both sessions."""
    together = [started_launcher(example_index, folder, wait=False) for _ in range(3)]
    for session in together:
        assert session.stdin and session.stdout
        assert json.loads(session.stdout.readline())["id"] == 1
        session.stdin.close()
        assert session.wait(WAIT) == 0
    log = the_log(folder)
    assert len(residents(log)) == 1 and len(sessions(log)) == 3


def test_a_resident_whose_launcher_was_killed_while_it_started_serves_the_next_session(
    example_index: Path, folder: Path
) -> None:
    first = started_launcher(example_index, folder, wait=False)
    deadline = time.monotonic() + WAIT
    while not list(folder.glob("*.lock")) and time.monotonic() < deadline:  # the resident is starting
        time.sleep(0.01)
    first.kill()  # before the resident could say it listens
    first.wait(WAIT)
    second = started_launcher(example_index, folder)
    assert second.stdin
    second.stdin.close()
    assert second.wait(WAIT) == 0
    log = the_log(folder)
    assert len(residents(log)) == 1 and len(sessions(log)) == 1 and "Traceback" not in log
