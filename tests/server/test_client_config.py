"""`docs-mcp mcp-config`: every client's entry fits the schema its documentation gives (client_schemas),
several corpora are one server, and the printed commands start servers that answer over stdio."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters

from docs_mcp_core.cli import CLIENT_NAMES, main
from docs_mcp_core.connect.clients import CLIENTS

from ..conftest import write
from . import client_schemas
from .conftest import build_index

URL = "https://docs.example.com/mcp"


def mcp_config(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The real command, in-process: (exit code, stdout, stderr)."""
    done = CliRunner().invoke(main, ["mcp-config", *args], env=env, catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def parsed(client: str, stdout: str) -> dict:
    return tomllib.loads(stdout) if client == "codex" else json.loads(stdout)


def check(schema: dict, instance: object) -> None:
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(instance)]
    assert not errors, errors


def only_entry(client: str, config: dict) -> tuple[str, dict]:
    servers = config[client_schemas.KEY[client]]
    assert len(servers) == 1
    return next(iter(servers.items()))


@pytest.fixture(scope="module")
def second_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small second corpus, to serve beside the example one."""
    root = tmp_path_factory.mktemp("second")
    docs = root / "docs"
    write(docs, "intro.md", "# Fjordline\n\nFjordline ferries: timetables and the boarding pass API.\n")
    write(docs, "boarding.md", "# Boarding passes\n\n## Issue a pass\n\nCall `passes.issue(booking_id)` for a pass.\n")
    return build_index(docs, root / "index")


def test_the_cli_offers_every_client_the_module_knows() -> None:
    assert set(CLIENT_NAMES) == set(CLIENTS) == set(client_schemas.SERVER)


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_stdio_entry_fits_the_clients_documented_schema(client: str, example_index: Path) -> None:
    code, out, err = mcp_config("--client", client, "--index", str(example_index))
    assert code == 0, err
    config = parsed(client, out)
    check(client_schemas.file_schema(client), config)
    name, entry = only_entry(client, config)
    assert name == "index-docs"
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"][-3:] == ["serve", "--index", str(example_index)]
    assert "# put this in" in err and "--write" in err


@pytest.mark.parametrize("client", [c for c in CLIENT_NAMES if c != "claude-desktop"])
@pytest.mark.parametrize("token", [False, True])
def test_remote_entry_fits_the_clients_documented_schema(client: str, token: bool, monkeypatch) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "s3cret-value-that-must-not-appear")
    args = ["--client", client, "--url", URL, *(["--token-env", "DOCS_TOKEN"] if token else [])]
    code, out, err = mcp_config(*args)
    if client == "zed" and token:  # Zed's headers take the token itself: refused, never written into a file
        assert code == 1 and err.startswith("error: ") and err.count("\n") == 1 and "Zed" in err
        return
    assert code == 0, err
    assert "s3cret" not in out + err
    config = parsed(client, out)
    check(client_schemas.file_schema(client), config)
    name, entry = only_entry(client, config)
    assert name == "docs-example-com-docs"
    assert URL in entry.values()
    if token and client == "codex":
        assert entry["bearer_token_env_var"] == "DOCS_TOKEN"
    elif token:
        reference = {
            "claude-code": "${DOCS_TOKEN}",
            "gemini": "${DOCS_TOKEN}",
            "cursor": "${env:DOCS_TOKEN}",
            "windsurf": "${env:DOCS_TOKEN}",
            "vscode": "${input:docs-example-com-docs-token}",
        }[client]
        assert entry["headers"] == {"Authorization": f"Bearer {reference}"}
    if client == "vscode" and token:
        assert config["inputs"][0]["id"] == "docs-example-com-docs-token" and config["inputs"][0]["password"] is True


def add_json_hint(err: str) -> list[str]:
    """The `claude mcp add-json NAME '<json>'` line mcp-config prints, split as a shell would."""
    lines = [line for line in err.splitlines() if line.startswith("claude mcp add-json ")]
    assert len(lines) == 1, err
    return shlex.split(lines[0])


@pytest.mark.parametrize("remote", [False, True])
def test_claude_code_hint_gives_add_json_the_server_object_itself(remote: bool, example_index: Path) -> None:
    """`claude mcp add-json NAME '<json>'` wants the server object; `{"mcpServers": …}` gets
    `Invalid configuration: : Invalid input` (the command printed so before)."""
    where = ["--url", URL, "--token-env", "DOCS_TOKEN"] if remote else ["--index", str(example_index)]
    code, out, err = mcp_config("--client", "claude-code", *where, "--name", "parcelly")
    assert code == 0, err
    argv = add_json_hint(err)
    assert argv[:4] == ["claude", "mcp", "add-json", "parcelly"] and len(argv) == 5
    server = json.loads(argv[4])
    check(client_schemas.CLAUDE_CODE_SERVER, server)
    assert server == json.loads(out)["mcpServers"]["parcelly"]  # the same object .mcp.json holds
    assert list(
        Draft202012Validator(client_schemas.CLAUDE_CODE_SERVER).iter_errors(json.loads(out))
    )  # the old shape fails


def test_several_corpora_are_one_server_listing_each(example_index: Path, second_index: Path) -> None:
    code, out, err = mcp_config(
        "--client", "claude-code", "--index", f"parcelly={example_index}", "--index", f"fjordline={second_index}"
    )
    assert code == 0, err
    name, entry = only_entry("claude-code", json.loads(out))
    assert name == "docs"
    assert entry["args"][1:] == ["--index", f"parcelly={example_index}", "--index", f"fjordline={second_index}"]
    assert f"parcelly ({example_index})" in err and f"fjordline ({second_index})" in err
    assert json.loads(add_json_hint(err)[4]) == entry


def test_relative_index_paths_become_absolute(example_index: Path, monkeypatch) -> None:
    monkeypatch.chdir(example_index.parent)
    code, out, err = mcp_config("--client", "cursor", "--index", f"ex={example_index.name}")
    assert code == 0, err
    assert only_entry("cursor", json.loads(out))[1]["args"][-2:] == ["--index", f"ex={example_index}"]


def test_config_file_is_served_as_serve_reads_it(tmp_path: Path, example_index: Path, second_index: Path) -> None:
    config = write(
        tmp_path / "project",
        "docs-mcp.yaml",
        "corpora:\n  - name: parcelly\n    source: {path: docs}\n"
        f"serve:\n  corpora:\n    - name: parcelly\n      index: {example_index}\n"
        f"    - name: fjordline\n      index: {second_index}\n",
    )
    code, out, err = mcp_config("--client", "gemini", "--config", str(config))
    assert code == 0, err
    entry = only_entry("gemini", json.loads(out))[1]
    assert entry["args"][-3:] == ["serve", "--config", str(config.resolve())]
    assert "2 corpora" in err and "parcelly" in err and "fjordline" in err


def test_bad_requests_are_one_error_line_and_create_nothing(tmp_path: Path, example_index: Path) -> None:
    missing = tmp_path / "nope"
    cases = [
        ("--client", "cursor", "--index", str(missing)),
        ("--client", "cursor", "--index", f"a={missing}"),
        ("--client", "claude-desktop", "--url", URL),
        ("--client", "cursor", "--index", str(example_index), "--url", URL),
        ("--client", "cursor", "--url", "docs.example.com/mcp"),
        ("--client", "cursor", "--index", str(example_index), "--token-env", "X"),
        ("--client", "cursor", "--index", str(example_index), "--name", "bad name"),
        ("--client", "cursor", "--index", f"a={example_index}", "--index", f"a={example_index}"),
        ("--client", "cursor", "--config", str(tmp_path / "docs-mcp.yaml")),
        ("--client", "cursor", "--index", str(example_index), "--path", str(tmp_path / "x.json")),
        ("--client", "cursor", "--url", URL, "--shared"),
    ]
    for args in cases:
        code, out, err = mcp_config(*args)
        assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, (args, err)
        assert out == ""
    assert not missing.exists() and not (tmp_path / "x.json").exists()


def test_no_index_and_no_config_says_what_to_pass(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOCS_MCP_CONFIG", raising=False)
    code, _, err = mcp_config("--client", "cursor")
    assert code == 1 and "--index [NAME=]PATH" in err and "--config" in err


async def search_over_stdio(command: str, args: list[str]) -> dict:
    """initialize, then search_docs, against a server started from a printed entry."""
    async with Client(StdioServerParameters(command=command, args=args)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"search_docs", "get_doc"}
        result = await client.call_tool("search_docs", {"query": "boarding pass rates", "limit": 20})
        assert not result.is_error, result.content
        return {"schema": tools["search_docs"].input_schema, "hits": json.loads(result.content[0].text)["hits"]}


@pytest.mark.slow
@pytest.mark.anyio
async def test_printed_entries_start_a_server_that_answers(example_index: Path, second_index: Path) -> None:
    """Claude Code's add-json object and Codex's TOML table, each run as the client would: the server
    initializes, lists its tools, and searches both corpora."""
    indexes = ["--index", f"parcelly={example_index}", "--index", f"fjordline={second_index}"]
    code, _, err = mcp_config("--client", "claude-code", *indexes)
    assert code == 0, err
    server = json.loads(add_json_hint(err)[4])
    code, out, err = mcp_config("--client", "codex", *indexes)
    assert code == 0, err
    table = tomllib.loads(out)["mcp_servers"]["docs"]
    for command, args in ((server["command"], server["args"]), (table["command"], table["args"])):
        answer = await search_over_stdio(command, args)
        assert answer["schema"]["properties"]["corpus"]["enum"] == ["parcelly", "fjordline"]
        assert {hit["chunk_id"].split(":", 1)[0] for hit in answer["hits"]} == {"parcelly", "fjordline"}


def test_the_printed_command_runs_outside_the_test_process(example_index: Path) -> None:
    """The executable the entry names exists and starts this install's docs-mcp."""
    _, out, _ = mcp_config("--client", "cursor", "--index", str(example_index))
    entry = only_entry("cursor", json.loads(out))[1]
    launcher = [entry["command"], *entry["args"][: entry["args"].index("serve")]]
    done = subprocess.run([*launcher, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("docs-mcp"), done.stderr
    assert entry["command"] in (str(Path(sys.executable).parent / "docs-mcp"), sys.executable)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_shared_entry_starts_a_session_of_a_resident_server(example_index: Path, tmp_path: Path) -> None:
    """`--shared` puts `serve --shared` in the entry, and the entry run as the client runs it is a session
    forked from a resident server (its log names the session) that answers."""
    from .test_shared_sessions import residents, sessions, the_log

    code, out, err = mcp_config("--client", "cursor", "--index", str(example_index), "--shared")
    assert code == 0, err
    entry = only_entry("cursor", json.loads(out))[1]
    assert entry["args"][-4:] == ["serve", "--shared", "--index", str(example_index)], entry
    folder = tmp_path / "s"
    env = {**os.environ, "DOCS_MCP_SHARED_DIR": str(folder)}
    try:
        async with Client(StdioServerParameters(command=entry["command"], args=entry["args"], env=env)) as client:
            result = await client.call_tool("search_docs", {"query": "create a shipment"})
            assert not result.is_error and json.loads(result.content[0].text)["hits"], result.content
        assert len(sessions(the_log(folder))) == 1
    finally:
        for log in folder.glob("*.log"):
            for pid in residents(log.read_text()):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
