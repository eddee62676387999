"""`docs-mcp mcp-config`: each client's snippet parses as JSON, names this install and starts a working server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

CLIENTS = ["claude-code", "claude-desktop", "cursor", "vscode"]


def mcp_config(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", "mcp-config", *args], capture_output=True, text=True, timeout=60
    )


def entry_of(config: dict, client: str) -> dict:
    servers = config["servers"] if client == "vscode" else config["mcpServers"]
    assert len(servers) == 1
    return next(iter(servers.values()))


@pytest.mark.parametrize("client", CLIENTS)
def test_stdio_snippet_for_each_client(client: str, example_index: Path) -> None:
    done = mcp_config("--client", client, "--index", str(example_index))
    assert done.returncode == 0, done.stderr
    entry = entry_of(json.loads(done.stdout), client)
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"][-3:] == ["serve", "--index", str(example_index)]
    if client in ("vscode", "claude-code"):
        assert entry["type"] == "stdio"
    assert "put this in" in done.stderr


@pytest.mark.parametrize(
    "client,reference",
    [
        ("claude-code", "${DOCS_TOKEN}"),
        ("cursor", "${env:DOCS_TOKEN}"),
        ("vscode", "${input:docs-example-com-docs-token}"),
    ],
)
def test_http_snippet_references_the_token_and_never_prints_it(
    client: str, reference: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "s3cret-value-that-must-not-appear")
    done = mcp_config("--client", client, "--url", "https://docs.example.com/mcp", "--token-env", "DOCS_TOKEN")
    assert done.returncode == 0, done.stderr
    assert "s3cret" not in done.stdout + done.stderr
    config = json.loads(done.stdout)
    entry = entry_of(config, client)
    assert entry["url"] == "https://docs.example.com/mcp"
    assert entry["headers"] == {"Authorization": f"Bearer {reference}"}
    if client == "vscode":
        assert config["inputs"][0]["password"] is True and entry["type"] == "http"


def test_bad_requests_are_one_error_line_and_create_nothing(tmp_path: Path, example_index: Path) -> None:
    missing = tmp_path / "nope"
    cases = [
        ("--client", "cursor", "--index", str(missing)),
        ("--client", "claude-desktop", "--url", "https://docs.example.com/mcp"),
        ("--client", "cursor", "--index", str(example_index), "--url", "https://docs.example.com/mcp"),
        ("--client", "cursor", "--url", "docs.example.com/mcp"),
    ]
    for args in cases:
        done = mcp_config(*args)
        assert done.returncode == 1 and done.stderr.startswith("error: ") and "Traceback" not in done.stderr, args
    assert not missing.exists()


@pytest.mark.anyio
async def test_the_printed_command_serves_the_index(example_index: Path) -> None:
    entry = entry_of(json.loads(mcp_config("--client", "cursor", "--index", str(example_index)).stdout), "cursor")
    async with Client(StdioServerParameters(command=entry["command"], args=entry["args"])) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"search_docs", "get_doc"}
