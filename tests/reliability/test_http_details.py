"""HTTP details that a hostile or merely unusual client meets: Host variants, /healthz, bearer
scheme case, a short cursor secret, and audit SQL that must not write anything."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ..conftest import EXAMPLE_DOCS
from ..server.conftest import build_index, http_server

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-details")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    return build_index(root / "docs", root / "index")


@pytest.fixture(scope="module")
def server(index: Path):
    with http_server(index) as base:
        yield base


def request(base: str, method: str, path: str, headers: dict[str, str], body: dict | None = None) -> tuple[int, str]:
    """One request with exactly these headers (Host included), on a fresh connection."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=20)
    try:
        data = json.dumps(body).encode() if body is not None else None
        sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"} if data else {}
        conn.request(method, path, body=data, headers={**sent, **headers})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def port_of(base: str) -> int:
    port = urlsplit(base).port
    assert port
    return port


@pytest.mark.slow
def test_healthz_goes_through_the_host_check(server: str) -> None:
    port = port_of(server)
    assert request(server, "GET", "/healthz", {"Host": "evil.example"})[0] == 421
    assert request(server, "GET", "/healthz", {"Host": f"evil.example:{port}"})[0] == 421
    assert request(server, "GET", "/healthz", {"Host": f"127.0.0.1:{port}", "Origin": "http://evil.example"})[0] == 403
    assert request(server, "GET", "/nowhere", {"Host": "evil.example"})[0] == 421
    status, body = request(server, "GET", "/healthz", {"Host": f"127.0.0.1:{port}"})
    assert status == 200 and json.loads(body)["status"] == "ok"


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:{port}", "LocalHost", "127.0.0.1", "[::1]", "[::1]:{port}"])
def test_loopback_host_variants_are_accepted(server: str, host: str) -> None:
    headers = {"Host": host.format(port=port_of(server))}
    assert request(server, "GET", "/healthz", headers)[0] == 200
    assert request(server, "POST", "/mcp", headers, INIT)[0] == 200


@pytest.mark.parametrize(
    "host", ["localhost.evil.example", "127.0.0.1.nip.io:{port}", "localhost:abc", "localhost:{port}:1", "[::1", ""]
)
def test_lookalike_hosts_are_refused(server: str, host: str) -> None:
    headers = {"Host": host.format(port=port_of(server))}
    assert request(server, "POST", "/mcp", headers, INIT)[0] == 421
    assert request(server, "GET", "/healthz", headers)[0] == 421


@pytest.mark.slow
def test_allowed_host_without_a_port_and_origin_case(index: Path) -> None:
    with http_server(
        index, "--allowed-host", "docs.example.com", "--allowed-origin", "https://app.example.com"
    ) as base:
        port = port_of(base)
        for host in ("docs.example.com", "DOCS.example.com:443", f"docs.example.com:{port}"):
            assert request(base, "GET", "/healthz", {"Host": host})[0] == 200, host
        assert request(base, "GET", "/healthz", {"Host": "docs.example.org"})[0] == 421
        local = {"Host": f"127.0.0.1:{port}"}
        assert request(base, "POST", "/mcp", {**local, "Origin": "https://APP.example.com"}, INIT)[0] == 200
        assert request(base, "POST", "/mcp", {**local, "Origin": f"http://localhost:{port}"}, INIT)[0] == 200
        assert (
            request(base, "POST", "/mcp", {**local, "Origin": "https://app.example.com.evil.example"}, INIT)[0] == 403
        )
        assert request(base, "POST", "/mcp", {**local, "Origin": "null"}, INIT)[0] == 403


@pytest.mark.slow
def test_bearer_scheme_is_case_insensitive(index: Path) -> None:
    with http_server(
        index, "--auth-token-env", "DOCS_TOKEN", env={"DOCS_TOKEN": "s3cret-token-0123456789abcdefghij"}
    ) as base:
        local = {"Host": f"127.0.0.1:{port_of(base)}"}
        for value in (
            "Bearer s3cret-token-0123456789abcdefghij",
            "bearer s3cret-token-0123456789abcdefghij",
            "BEARER s3cret-token-0123456789abcdefghij",
            "Bearer  s3cret-token-0123456789abcdefghij",
        ):
            assert request(base, "POST", "/mcp", {**local, "Authorization": value}, INIT)[0] == 200, value
        for value in (
            "Bearer wrong",
            "Basic s3cret-token-0123456789abcdefghij",
            "s3cret-token-0123456789abcdefghij",
            "Bearers3cret-token-0123456789abcdefghij",
            "bearer",
        ):
            assert request(base, "POST", "/mcp", {**local, "Authorization": value}, INIT)[0] == 401, value
        assert request(base, "GET", "/healthz", local)[0] == 200  # health needs no token
        assert (
            request(
                base,
                "GET",
                "/healthz",
                {"Host": "evil.example", "Authorization": "Bearer s3cret-token-0123456789abcdefghij"},
            )[0]
            == 421
        )


@pytest.mark.slow
def test_healthz_reports_the_published_version_after_a_hot_reload(tmp_path: Path) -> None:
    """Regression: /healthz showed the version of the last request, not the published one."""
    shutil.copytree(EXAMPLE_DOCS, tmp_path / "docs")
    index = build_index(tmp_path / "docs", tmp_path / "index")
    with http_server(index) as base:
        local = {"Host": f"127.0.0.1:{port_of(base)}"}
        before = json.loads(request(base, "GET", "/healthz", local)[1])
        (tmp_path / "docs" / "guides" / "zebra.md").write_text(
            "# Zebra crossings\n\nCouriers stop at zebra crossings.\n"
        )
        build_index(tmp_path / "docs", index)
        published = json.loads((index / "metadata.json").read_text())["index"]["version"]
        after = json.loads(request(base, "GET", "/healthz", local)[1])  # no /mcp request in between
    assert published != before["index_version"]
    assert after["index_version"] == published and after["chunks"] == before["chunks"] + 1


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.mark.slow
def test_a_short_cursor_secret_is_refused_at_start(index: Path) -> None:
    short = {"DOCS_MCP_CURSOR_SECRET": "x" * 31}
    for args in (
        ["serve", "--index", str(index), "--transport", "http", "--port", "0"],
        ["serve", "--index", str(index)],
        ["search", "--index", str(index), "retries"],
    ):
        result = cli(*args, env=short)
        assert result.returncode == 1, (args, result.stderr)
        assert result.stderr.startswith("error: DOCS_MCP_CURSOR_SECRET is 31 characters; use at least 32")
        assert "Traceback" not in result.stderr
    ok = cli("search", "--index", str(index), "retries", env={"DOCS_MCP_CURSOR_SECRET": "x" * 32})
    assert ok.returncode == 0 and "retries" in ok.stdout


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CLI-built index (the CLI records the audit); each test checks nothing in it changes."""
    root = tmp_path_factory.mktemp("audited")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    assert (
        cli(
            "build",
            "--docs-dir",
            str(root / "docs"),
            "--out",
            str(root / "index"),
            "-q",
            "--embedding-provider",
            "none",
        ).returncode
        == 0
    )
    return root


def listing(root: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "sql",
    [
        "COPY builds TO '{target}'",
        "COPY (SELECT 1) TO '{target}' (FORMAT parquet)",
        "EXPORT DATABASE '{target}'",
        "ATTACH '{target}' AS other",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SET enable_external_access = true",
        "INSTALL httpfs",
        "CREATE TABLE stolen AS SELECT * FROM builds",
    ],
)
def test_audit_sql_cannot_write_or_read_other_files(audited: Path, sql: str) -> None:
    target = audited / "leak.out"
    before = listing(audited)
    result = cli("audit", "--out", str(audited / "index"), "--sql", sql.format(target=target))
    assert result.returncode == 1 and result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not target.exists()
    assert listing(audited) == before
    count = cli("audit", "--out", str(audited / "index"), "--sql", "SELECT count(*) AS n FROM builds")
    assert count.returncode == 0 and count.stdout.splitlines()[2].strip() == "1"
