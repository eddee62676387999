"""`mcp-config --write`: merges into the client's file, keeps everything else, backs up first,
refuses (writing nothing) what it cannot parse or would damage."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from docs_mcp_core.cli import main

from . import client_schemas

URL = "https://docs.example.com/mcp"


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        done = CliRunner().invoke(main, ["mcp-config", *args], env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    return done.exit_code, done.stdout, done.stderr


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.*.bak"))


def valid(client: str, config: dict) -> None:
    assert not list(Draft202012Validator(client_schemas.file_schema(client)).iter_errors(config))


def test_creates_the_project_file_where_the_client_reads_it(tmp_path: Path, example_index: Path) -> None:
    code, out, err = run("--client", "cursor", "--index", str(example_index), "--write", cwd=tmp_path)
    assert code == 0, err
    path = tmp_path / ".cursor" / "mcp.json"
    config = json.loads(path.read_text())
    valid("cursor", config)
    assert config["mcpServers"]["index-docs"]["args"][-1] == str(example_index)
    assert out == "" and f"{path}: created server 'index-docs' for Cursor" in err
    assert backups(path) == []


def test_merge_keeps_other_servers_and_settings_and_backs_up_first(tmp_path: Path, example_index: Path) -> None:
    path = tmp_path / "settings.json"
    before = {
        "theme": "One Dark",
        "mcpServers": {"github": {"command": "npx", "args": ["-y", "server-github"], "env": {"T": "x"}}},
    }
    path.write_text(json.dumps(before))
    path.chmod(0o600)
    code, _, err = run("--client", "gemini", "--index", str(example_index), "--write", "--path", str(path))
    assert code == 0, err
    after = json.loads(path.read_text())
    assert after["theme"] == "One Dark" and after["mcpServers"]["github"] == before["mcpServers"]["github"]
    assert list(after["mcpServers"]) == ["github", "index-docs"]
    valid("gemini", after)
    [backup] = backups(path)
    assert json.loads(backup.read_text()) == before and f"backup: {backup}" in err
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_running_it_again_changes_nothing_and_a_new_entry_replaces_the_old(tmp_path: Path, example_index: Path) -> None:
    path = tmp_path / "mcp.json"
    args = ["--client", "claude-code", "--write", "--path", str(path)]
    assert run(*args, "--index", str(example_index))[0] == 0
    written = path.read_bytes()
    code, _, err = run(*args, "--index", str(example_index))
    assert code == 0 and "already there as configured" in err
    assert path.read_bytes() == written and backups(path) == []
    code, _, err = run(*args, "--url", URL, "--name", "index-docs")
    assert code == 0 and "replaced server 'index-docs'" in err
    assert json.loads(path.read_text())["mcpServers"] == {"index-docs": {"type": "http", "url": URL}}
    assert len(backups(path)) == 1


def test_vscode_inputs_are_merged_by_id(tmp_path: Path) -> None:
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    mine = {"type": "promptString", "id": "other-key", "description": "mine", "password": True}
    path.write_text(json.dumps({"servers": {"other": {"type": "http", "url": "https://x.test/mcp"}}, "inputs": [mine]}))
    args = ["--client", "vscode", "--url", URL, "--token-env", "DOCS_TOKEN", "--write"]
    assert run(*args, cwd=tmp_path)[0] == 0
    assert run(*args, "--name", "docs-example-com-docs", cwd=tmp_path)[0] == 0  # twice: still one input of ours
    config = json.loads(path.read_text())
    valid("vscode", config)
    assert [i["id"] for i in config["inputs"]] == ["other-key", "docs-example-com-docs-token"]
    assert set(config["servers"]) == {"other", "docs-example-com-docs"}


@pytest.mark.parametrize(
    "client,text,expected",
    [
        ("cursor", '{"mcpServers": {"a": {"command": "x"}},,}', "not valid JSON"),
        ("cursor", "[1, 2]", "not a JSON object"),
        ("claude-desktop", '{"mcpServers": ["x"]}', '"mcpServers" is an array'),
        ("vscode", '{\n  // my servers\n  "servers": {}\n}\n', "comments"),
        ("zed", '{"theme": "One Dark",\n "context_servers": {},\n}\n', "trailing commas"),
        ("codex", 'model = "o3"\n[mcp_servers.docs\n', "not valid TOML"),
        ("codex", 'mcp_servers = { other = { command = "x" } }\n', "cannot add"),
    ],
)
def test_a_file_it_cannot_merge_into_is_refused_untouched(
    client: str, text: str, expected: str, tmp_path: Path, example_index: Path
) -> None:
    path = tmp_path / "config-file"
    path.write_text(text)
    code, out, err = run("--client", client, "--index", str(example_index), "--write", "--path", str(path))
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, err
    assert expected in err and "nothing was written" in err and str(path) in err
    assert path.read_text() == text and backups(path) == [] and out == ""


def test_codex_table_is_appended_and_the_rest_kept_byte_for_byte(tmp_path: Path, example_index: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    path = home / "config.toml"
    before = (
        '# my Codex settings\nmodel = "o3"  # the fast one\n\n[mcp_servers.github]\ncommand = "npx"\n'
        'args = ["-y", "server-github"]\n\n[mcp_servers.github.env]\nTOKEN = "x"\n'
    )
    path.write_text(before)
    env = {"CODEX_HOME": str(home)}
    code, _, err = run("--client", "codex", "--index", str(example_index), "--write", env=env)
    assert code == 0, err
    text = path.read_text()
    assert text.startswith(before.rstrip("\n"))  # comments and formatting untouched
    data = tomllib.loads(text)
    valid("codex", data)
    assert data["model"] == "o3" and data["mcp_servers"]["github"]["env"] == {"TOKEN": "x"}
    assert data["mcp_servers"]["index-docs"]["args"][-1] == str(example_index)
    # replacing our table keeps the others, and leaves no second copy of it
    code, _, err = run(
        "--client", "codex", "--url", URL, "--token-env", "T", "--name", "index-docs", "--write", env=env
    )
    assert code == 0, err
    data = tomllib.loads(path.read_text())
    assert data["mcp_servers"]["index-docs"] == {"url": URL, "bearer_token_env_var": "T"}
    assert data["mcp_servers"]["github"]["command"] == "npx"
    assert path.read_text().count("[mcp_servers.index-docs]") == 1
    assert len(backups(path)) == 2


def test_user_level_files_follow_home(tmp_path: Path, example_index: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    code, _, err = run("--client", "windsurf", "--index", str(example_index), "--write", env=env)
    assert code == 0, err
    valid("windsurf", json.loads((tmp_path / ".codeium" / "windsurf" / "mcp_config.json").read_text()))
    code, _, err = run("--client", "zed", "--index", str(example_index), "--write", env=env)
    assert code == 0, err
    valid("zed", json.loads((tmp_path / "xdg" / "zed" / "settings.json").read_text()))


def test_writes_through_a_symlink(tmp_path: Path, example_index: Path) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}')
    link = tmp_path / "mcp.json"
    link.symlink_to(real)
    code, _, err = run("--client", "cursor", "--index", str(example_index), "--write", "--path", str(link))
    assert code == 0, err
    assert link.is_symlink() and "index-docs" in json.loads(real.read_text())["mcpServers"]
