"""stdin and stdout on the event loop (server/stdio_pipes.py), and how a stdio server ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.server.conftest import serve_args

ECHO = """
import asyncio, os, sys
from docs_mcp_core.server.stdio_pipes import can_use_pipes, pipe_stdio

async def main():
    print("pipes", can_use_pipes(), flush=True)
    async with pipe_stdio() as (stdin, stdout):
        print("a stray print")
        sys.stdout.flush()
        os.write(1, b"a stray write to fd 1\\n")
        async for line in stdin:
            await stdout.write(line.upper())
            await stdout.flush()
    print("restored, blocking:", os.get_blocking(1), flush=True)

asyncio.run(main())
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def _line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


@pytest.mark.slow
def test_pipes_carry_every_byte_and_stray_output_goes_to_stderr() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    long = "x" * 3_000_000  # far more than a pipe holds: written in parts while the reader drains
    sent = [b"hello\n", long.encode() + b"\n", b"caf\xc3\xa9 \xff\n", b"last line without a newline"]
    out, err = proc.communicate(b"".join(sent), timeout=60)  # written as the echo reads, then stdin closed
    assert proc.returncode == 0, err.decode()
    lines = out.decode().split("\n")
    assert lines[0] == "pipes True"
    assert lines[1:4] == ["HELLO", long.upper(), "CAFÉ \ufffd"]  # undecodable bytes replaced, as the SDK does
    assert lines[4] == "LAST LINE WITHOUT A NEWLINErestored, blocking: True"  # fd 1 is stdout again, blocking
    assert b"a stray print" in err and b"a stray write to fd 1" in err and b"stray" not in out


@pytest.mark.slow
def test_a_regular_file_on_stdin_is_served_through_the_sdk_threads(tmp_path: Path, example_index: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_line(INITIALIZE))
    probe = subprocess.run(
        [sys.executable, "-c", "from docs_mcp_core.server.stdio_pipes import can_use_pipes; print(can_use_pipes())"],
        stdin=requests.open("rb"),
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == "False"
    with requests.open("rb") as stdin:
        served = subprocess.run(
            [sys.executable, *serve_args(example_index)],
            stdin=stdin,
            capture_output=True,
            timeout=60,
            env=dict(os.environ),
        )
    assert served.returncode == 0, served.stderr.decode()
    answer = json.loads(served.stdout.decode().splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "docs-mcp"


@pytest.mark.slow
def test_a_client_that_leaves_before_its_answers_ends_the_server_quietly(example_index: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, *serve_args(example_index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_line(INITIALIZE))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    for n in range(5):
        proc.stdin.write(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 10 + n,
                    "method": "tools/call",
                    "params": {"name": "search_docs", "arguments": {"query": "retries"}},
                }
            )
        )
    proc.stdin.flush()
    proc.stdout.close()  # gone before the answers come; stdin stays open: the failed answer ends the server
    try:
        proc.wait(timeout=60)
    finally:
        proc.kill()
    err = proc.stderr.read()  # type: ignore[union-attr]
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert b"the client closed its end of stdout" in err


def test_the_index_opens_while_the_client_initializes_before_any_search(tmp_path: Path, example_index: Path) -> None:
    """The first search of a session finds the index open: the server opens it after answering `initialize`,
    without waiting for a request (the failpoint marks that moment; no search has been sent by then)."""
    paused, release = tmp_path / "paused", tmp_path / "release"
    paused.mkdir()
    env = {
        **os.environ,
        "DOCS_MCP_TEST_PAUSE_AT": "indexes-opened",
        "DOCS_MCP_TEST_RELEASE": str(release),
        "DOCS_MCP_TEST_PAUSED_DIR": str(paused),
    }
    proc = subprocess.Popen(
        [sys.executable, *serve_args(example_index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_line(INITIALIZE))
        proc.stdin.flush()
        mark = paused / f"indexes-opened-{proc.pid}"
        for _ in range(1200):  # up to a minute on a busy machine; a server that never opens early fails here
            if mark.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert mark.exists(), "the server did not open its index before a request asked for it"
        release.touch()
        assert json.loads(proc.stdout.readline())["id"] == 1
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        search = {"name": "search_docs", "arguments": {"query": "retries"}}
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search}))
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 2 and not answer["result"].get("isError")
        assert json.loads(answer["result"]["content"][0]["text"])["hits"]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
