"""Hostile requests to a running server: forged cursors, out-of-range arguments, non-finite weights
and an oversized stdio message each get one clear answer, and the server stays up.

Real `docs-mcp serve` processes on 127.0.0.1 (HTTP) and on pipes (stdio).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ..conftest import EXAMPLE_DOCS
from ..server.conftest import http_server, serve_args
from .clitools import build_args, docs_mcp
from .load import McpHttpClient

QUERY = "retries"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-requests")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    result = docs_mcp(*build_args(root / "docs", root / "index"), "-q")
    assert result.returncode == 0, result.stderr
    return root / "index"


@pytest.fixture(scope="module")
def server(index: Path, tmp_path_factory: pytest.TempPathFactory):
    log = tmp_path_factory.mktemp("hostile-requests-log") / "server.log"
    with http_server(index, "--stateless", log=log) as base:
        yield base, log


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed(secret: bytes, payload: bytes) -> str:
    return f"{b64(payload)}.{b64(hmac.new(secret, payload, hashlib.sha256).digest())}"


FORGED = {
    "deep-brackets": b"[" * 200_000,
    "deep-brackets-short": b"[" * 700,
    "huge-number": b'{"o":1e400,"k":"x","i":"y"}',
    "huge-integer": b'{"o":' + b"9" * 5000 + b',"k":"x","i":"y"}',
    "not-json": b"\xff\xfe",
}


@pytest.mark.slow
@pytest.mark.parametrize("payload", FORGED.values(), ids=FORGED.keys())
def test_a_forged_cursor_is_refused_before_its_payload_is_parsed(server: tuple[str, Path], payload: bytes) -> None:
    base, log = server
    client = McpHttpClient(base)
    try:
        cursor = f"{b64(payload)}.{b64(b'not the signature')}"
        ok, text = client.call("search_docs", {"query": QUERY, "cursor": cursor})
        assert not ok
        assert "cursor signature is invalid" in text or "cursor is malformed" in text, text
        assert client.call("search_docs", {"query": QUERY})[0]  # still serving
    finally:
        client.close()
    assert "Traceback" not in log.read_text()


SIGNED = {
    "deep-brackets": b"[" * 300 + b"]" * 300,
    "huge-number": b'{"o":1e400,"k":"x","i":"y"}',
    "float": b'{"o":1.5,"k":"x","i":"y"}',
    "nan": b'{"o":NaN,"k":"x","i":"y"}',
    "bool": b'{"o":true,"k":"x","i":"y"}',
    "negative": b'{"o":-1,"k":"x","i":"y"}',
    "too-far": b'{"o":99999999999999999999,"k":"x","i":"y"}',
    "list": b"[1,2]",
    "string": b'"o"',
}


@pytest.mark.parametrize("payload", SIGNED.values(), ids=SIGNED.keys())
def test_a_signed_cursor_with_an_odd_payload_is_malformed(
    server: tuple[str, Path], index: Path, payload: bytes
) -> None:
    """What a leaked secret could sign: still one sentence, never 'failed unexpectedly'."""
    base, log = server
    secret = (index / ".docs-mcp" / "cursor-secret").read_text().strip().encode()
    client = McpHttpClient(base)
    try:
        ok, text = client.call("search_docs", {"query": QUERY, "cursor": signed(secret, payload)})
        assert not ok and "cursor is malformed" in text, text
    finally:
        client.close()
    assert "Traceback" not in log.read_text()


def test_a_negative_offset_says_what_is_allowed(server: tuple[str, Path]) -> None:
    client = McpHttpClient(server[0])
    try:
        ok, text = client.call("get_doc", {"chunk_id": "guides/retries.md", "offset": -1})
    finally:
        client.close()
    assert not ok and "offset must be an integer of at least 0" in text and "None" not in text, text


@pytest.mark.slow
@pytest.mark.parametrize(
    "option,value",
    [
        ("--rrf-text-weight", "nan"),
        ("--rrf-vector-weight", "inf"),
        ("--rrf-phrase-weight", "-inf"),
        ("--proximity-weight", "nan"),
        ("--proximity-weight", "inf"),
    ],
)
def test_a_non_finite_weight_is_refused_with_one_line(index: Path, option: str, value: str) -> None:
    for command in (["search", "--index", str(index), QUERY, "--json"], ["serve", "--index", str(index)]):
        result = docs_mcp(*command, option, value, timeout=60)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert (
            result.stderr.strip() == f"error: {option} {float(value)} is not a finite number; give a number such as 1.5"
        )
        assert result.stdout == ""


def message(payload: dict) -> bytes:
    return (json.dumps(payload) + "\n").encode()


@pytest.mark.slow
def test_an_oversized_stdio_message_is_refused_and_the_server_goes_on(index: Path, tmp_path: Path) -> None:
    pad = "x" * (4 * 2**20)  # the message around it is over 4 MB
    big_first = message({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_meta": {"pad": pad}}})
    big_last = (
        json.dumps({"method": "ping", "params": {"_meta": {"pad": pad}}, "jsonrpc": "2.0"})[:-1] + ',"id":"eight"}\n'
    ).encode()  # the id last, as the TypeScript SDK writes requests
    big_anonymous = message({"jsonrpc": "2.0", "params": {"_meta": {"pad": pad}}, "method": "ping"})
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    sent = b"".join(
        [
            message(init),
            message({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            big_first,
            message({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            big_last,
            big_anonymous,
            message(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "search_docs", "arguments": {"query": QUERY}},
                }
            ),
        ]
    )
    proc = subprocess.Popen(
        [sys.executable, *serve_args(index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "LANCEDB_LOG": "error"},
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(sent)
        proc.stdin.flush()
        lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
        answers = [json.loads(lines.get(timeout=120)) for _ in range(6)]  # every request is answered
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    by_id = {answer.get("id"): answer for answer in answers}
    for refused in (7, "eight", None):
        assert by_id[refused]["error"]["code"] == -32600, answers
        assert by_id[refused]["error"]["message"].startswith("request too large: "), answers
        assert "at most 4194304 bytes" in by_id[refused]["error"]["message"]
    assert by_id[2]["result"] == {}
    assert json.loads(by_id[3]["result"]["content"][0]["text"])["hits"]
    assert stderr.count("refused a message of ") == 3, stderr
    assert "Traceback" not in stderr
