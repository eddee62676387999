"""Reading commands (search, serve, audit, diff) on something that is not an index: one `error:` line with a
complete build command, exit 1, and nothing created — not the folder, not a cursor secret."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import EXAMPLE_DOCS
from ..server.conftest import build_index, free_port

COMMANDS = {
    "search": lambda p: ["search", "--index", str(p), "retries"],
    "serve-stdio": lambda p: ["serve", "--index", str(p)],
    "serve-http": lambda p: ["serve", "--index", str(p), "--transport", "http", "--port", str(free_port())],
    "audit": lambda p: ["audit", "--out", str(p)],
    "audit-sql": lambda p: ["audit", "--out", str(p), "--sql", "SELECT 1"],
    "diff": lambda p: ["diff", "--from", str(p), "--to", str(p)],
}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DOCS_MCP_CURSOR_SECRET"}
    return subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) + ("/" if p.is_dir() else "") for p in root.rglob("*"))


def assert_refused(result: subprocess.CompletedProcess[str], path: Path) -> None:
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    assert "`docs-mcp build --docs-dir " in lines[0] and " --index " in lines[0], lines[0]
    assert str(path) in lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_missing_path_is_not_created(tmp_path: Path, command: str) -> None:
    for missing in (tmp_path / "nope", tmp_path / "deeper" / "nope"):
        result = cli(*COMMANDS[command](missing))
        assert_refused(result, missing)
        assert "docs-mcp build --docs-dir DOCS --index " + str(missing) in result.stderr
    assert listing(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_docs_folder_is_not_an_index_and_stays_untouched(tmp_path: Path, command: str) -> None:
    """Regression: `search --index DOCS` wrote DOCS/.docs-mcp/cursor-secret."""
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    before = listing(tmp_path)
    result = cli(*COMMANDS[command](docs))
    assert_refused(result, docs)
    assert f"docs-mcp build --docs-dir {docs} --index INDEX" in result.stderr
    assert listing(tmp_path) == before


@pytest.mark.slow
def test_a_file_is_not_an_index(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    for command in ("search", "serve-stdio", "audit-sql", "diff"):
        result = cli(*COMMANDS[command](path))
        assert result.returncode == 1 and result.stderr.startswith(f"error: {path} is a file, not an index folder")
        assert "docs-mcp build --docs-dir DOCS --index INDEX" in result.stderr
    assert listing(tmp_path) == ["notes.txt"]


@pytest.mark.slow
def test_an_unwritable_secret_location_falls_back_to_a_process_secret(tmp_path: Path) -> None:
    """A valid index whose .docs-mcp cannot hold the secret (a read-only mount, here: a file in the way)
    still answers, with a warning, and nothing is written."""
    shutil.copytree(EXAMPLE_DOCS, tmp_path / "docs")
    index = build_index(tmp_path / "docs", tmp_path / "index")
    state = index / ".docs-mcp"
    shutil.rmtree(state, ignore_errors=True)
    state.write_text("")  # stands in for a folder that cannot be written
    before = listing(index)
    result = cli("search", "--index", str(index), "retries", "--limit", "2")
    assert result.returncode == 0, result.stderr
    assert "warning: cannot write the cursor secret" in result.stderr and "for this process only" in result.stderr
    assert listing(index) == before


@pytest.mark.slow
def test_a_valid_index_gets_its_secret_once(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE_DOCS, tmp_path / "docs")
    index = build_index(tmp_path / "docs", tmp_path / "index")
    secret = index / ".docs-mcp" / "cursor-secret"
    assert not secret.exists()
    assert cli("search", "--index", str(index), "retries").returncode == 0
    first = secret.read_text()
    assert len(first) == 64 and oct(secret.stat().st_mode & 0o777) == "0o600"
    assert cli("search", "--index", str(index), "retries").returncode == 0
    assert secret.read_text() == first
    assert [p.name for p in secret.parent.iterdir() if p.name.startswith(".cursor-secret")] == []


def test_serving_a_config_corpus_not_built_yet_gives_its_config_build_command(tmp_path: Path) -> None:
    config = tmp_path / "docs-mcp.yaml"
    config.write_text("corpora:\n  - name: guide\n    source: {path: docs}\n")
    result = cli("serve", "--config", str(config))
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == (
        f"error: {config}: corpus 'guide' is not built yet (no folder {tmp_path / 'indexes' / 'guide'}); build it "
        f"with `docs-mcp build --config {config} --corpus guide`"
    )
    assert listing(tmp_path) == ["docs-mcp.yaml"]
