"""Run the real `docs-mcp` CLI in a subprocess (PYTHONPATH is inherited, so the code under test runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "docs_mcp_core.cli"]


def wait_paused(proc: subprocess.Popen, phase: str) -> list[str]:
    """Read a `docs-mcp` subprocess's stderr until it says it is paused at the failpoint `phase`; the
    lines read. An AssertionError if it ended first."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if f"paused at {phase}" in line:
            return seen
    raise AssertionError(f"the command ended (exit {proc.wait()}) before {phase}: {''.join(seen)}")


def docs_mcp(*args: str | Path, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)


def build_args(docs: Path, out: Path, provider: str = "none") -> list[str | Path]:
    return ["build", "--docs-dir", docs, "--out", out, "--embedding-provider", provider]


def published(out: Path) -> dict[str, Any]:
    return json.loads((out / "metadata.json").read_text())["index"]


def search_ids(out: Path, query: str) -> list[str]:
    """Chunk IDs `docs-mcp search --json` returns; asserts the command succeeded."""
    result = docs_mcp("search", "--index", out, query, "--json", "--text-only")
    assert result.returncode == 0, result.stderr
    return [hit["chunk_id"] for hit in json.loads(result.stdout)["hits"]]
