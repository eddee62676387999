"""What one HTTP server holds, and for how long: unfinished requests, oversized and duplicate headers,
sessions, and the bearer token's length. Real `docs-mcp serve --transport http` processes on
127.0.0.1, spoken to over raw sockets where a client library would not misbehave on purpose."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ..conftest import EXAMPLE_DOCS
from ..server.conftest import build_index, http_server
from .clitools import docs_mcp

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
PARTIAL_HEADER = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
PARTIAL_BODY = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nContent-Length: 400\r\n\r\n" + json.dumps(INIT).encode()[:40]
)
TOKEN = "t0k3n-" + "x" * 26  # 32 characters


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-resources")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    return build_index(root / "docs", root / "index")


def address(base: str) -> tuple[str, int]:
    url = urlsplit(base)
    assert url.hostname and url.port
    return url.hostname, url.port


def opened(base: str, data: bytes) -> socket.socket:
    sock = socket.create_connection(address(base), timeout=60)
    if data:
        sock.sendall(data)
    return sock


def until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout fails the test)."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return received


def one_response(sock: socket.socket) -> bytes:
    """One whole response (header and Content-Length body) from a keep-alive connection."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {received!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    sizes = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    while len(body) < sizes[0]:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {received!r}"
        body += chunk
    return head + b"\r\n\r\n" + body


def healthy(base: str) -> bool:
    host, port = address(base)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status == 200
    finally:
        conn.close()


@pytest.mark.slow
def test_unfinished_requests_are_answered_408_or_closed(index: Path) -> None:
    with http_server(index, "--stateless", "--header-timeout", "1", "--body-timeout", "1") as base:
        silent = [opened(base, b"") for _ in range(10)]
        headers = [opened(base, PARTIAL_HEADER) for _ in range(30)]
        bodies = [opened(base, PARTIAL_BODY) for _ in range(10)]
        again = opened(base, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert one_response(again).startswith(b"HTTP/1.1 200 ")
        again.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the next request stops half-way
        assert healthy(base)  # answered meanwhile, on a fresh connection
        for sock in [*silent, *headers, again]:
            assert until_closed(sock).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        for sock in bodies:
            assert until_closed(sock) == b""  # the application had the request: the connection just ends
        assert healthy(base)


@pytest.mark.slow
def test_unfinished_headers_time_out_by_default(index: Path) -> None:
    """The issue's reproduction, without options: connections with an unfinished header never closed."""
    with http_server(index, "--stateless") as base:
        waiting = [opened(base, PARTIAL_HEADER) for _ in range(20)]
        for sock in waiting:
            assert until_closed(sock).startswith(b"HTTP/1.1 408 Request Timeout\r\n")


@pytest.mark.slow
def test_an_oversized_header_is_refused(index: Path) -> None:
    with http_server(index, "--stateless") as base:
        sock = opened(base, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            for _ in range(64):  # 1 MB of header, more than the server keeps
                sock.sendall(b"X-Pad: " + b"a" * 16384 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed while we were still sending
        answer = until_closed(sock)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
        assert healthy(base)


def raw_request(base: str, lines: list[str], body: bytes = b"") -> tuple[int, bytes]:
    sock = opened(base, ("\r\n".join(lines) + f"\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
    answer = until_closed(sock) if "Connection: close" in lines else sock.recv(65536)
    sock.close()
    return int(answer.split(b" ", 2)[1]), answer


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra",
    [
        ["Host: 127.0.0.1", "Host: evil.example"],
        ["Host: evil.example", "Host: 127.0.0.1"],
        ["Host: 127.0.0.1", "Host: 127.0.0.1"],
        ["Host: 127.0.0.1", "Origin: http://127.0.0.1", "Origin: http://evil.example"],
        ["Host: 127.0.0.1", "Origin: http://evil.example", "Origin: http://127.0.0.1"],
    ],
)
def test_duplicate_host_or_origin_headers_are_refused(index: Path, extra: list[str]) -> None:
    body = json.dumps(INIT).encode()
    accept = ["Content-Type: application/json", "Accept: application/json, text/event-stream", "Connection: close"]
    with http_server(index, "--stateless") as base:
        for request in (
            ["GET /healthz HTTP/1.1", *extra, "Connection: close"],
            ["POST /mcp HTTP/1.1", *extra, *accept],
        ):
            status, answer = raw_request(base, request, body if request[0].startswith("POST") else b"")
            assert status == 400 and answer.endswith(b"header"), answer
            assert b"Duplicate " in answer


def initialize(base: str) -> tuple[int, str | None]:
    """(status, session ID) of one initialize request on a fresh connection."""
    host, port = address(base)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request(
            "POST",
            "/mcp",
            body=json.dumps(INIT),
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("mcp-session-id")
    finally:
        conn.close()


def session_request(base: str, method: str, session: str) -> int:
    host, port = address(base)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}) if method == "POST" else None
        conn.request(
            method,
            "/mcp",
            body=body,
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "mcp-session-id": session,
                "mcp-protocol-version": "2025-06-18",
            },
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.mark.slow
def test_sessions_are_capped_and_a_closed_one_frees_its_place(index: Path) -> None:
    with http_server(index, "--max-sessions", "3") as base:
        sessions = [initialize(base) for _ in range(3)]
        assert all(status == 200 and session for status, session in sessions), sessions
        assert initialize(base) == (503, None)
        assert session_request(base, "POST", sessions[0][1] or "") == 200  # open sessions go on
        assert session_request(base, "DELETE", sessions[0][1] or "") == 200
        status, session = initialize(base)
        assert status == 200 and session
        assert initialize(base) == (503, None)


@pytest.mark.slow
def test_idle_sessions_expire(index: Path) -> None:
    with http_server(index, "--max-sessions", "2", "--session-idle-timeout", "1") as base:
        sessions = [initialize(base)[1] for _ in range(2)]
        deadline = time.monotonic() + 60
        while (status := initialize(base)[0]) == 503:  # full until the idle ones expire
            assert time.monotonic() < deadline, "idle sessions never expired"
            time.sleep(0.2)
        assert status == 200
        assert session_request(base, "POST", sessions[0] or "") == 404


@pytest.mark.slow
@pytest.mark.parametrize(
    "token,message",
    [
        ("s3cret-token", "the token is 12 characters; use at least 32 random characters"),
        ("x" * 31, "the token is 31 characters; use at least 32"),
        ("x" * 20 + " " + "y" * 20, "the token has spaces or characters other than visible ASCII"),
    ],
)
def test_a_weak_bearer_token_is_refused_at_start(index: Path, token: str, message: str) -> None:
    result = docs_mcp(
        "serve",
        "--index",
        index,
        "--transport",
        "http",
        "--port",
        "0",
        "--auth-token-env",
        "DOCS_TOKEN",
        env={**os.environ, "DOCS_TOKEN": token},
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: --auth-token-env DOCS_TOKEN: {message}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_long_enough_token_is_accepted(index: Path) -> None:
    with http_server(index, "--auth-token-env", "DOCS_TOKEN", env={"DOCS_TOKEN": TOKEN}) as base:
        host, port = address(base)
        conn = http.client.HTTPConnection(host, port, timeout=30)
        try:
            conn.request(
                "POST",
                "/mcp",
                body=json.dumps(INIT),
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    "Authorization": f"Bearer {TOKEN}",
                },
            )
            assert conn.getresponse().status == 200
        finally:
            conn.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    "option,value",
    [
        ("--header-timeout", "nan"),
        ("--header-timeout", "0"),
        ("--body-timeout", "inf"),
        ("--session-idle-timeout", "-1"),
    ],
)
def test_a_limit_that_is_not_a_positive_number_is_refused(index: Path, option: str, value: str) -> None:
    result = docs_mcp("serve", "--index", index, "--transport", "http", "--port", "0", option, value, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: {option} {float(value)}: give a number of seconds above 0"


def test_a_port_in_use_is_one_error_line_before_serving(index: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = docs_mcp("serve", "--index", index, "--transport", "http", "--port", str(port), timeout=60)
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == (
        f"error: cannot listen on 127.0.0.1:{port}: address already in use; stop what listens there or choose "
        "another --port"
    )
