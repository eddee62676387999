"""Shared fixtures: copies of the bundled corpora in temp folders, and a CLI runner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import mcp.client.stdio  # noqa: F401 - see below
import pytest
from click.testing import CliRunner

# The SDK's stdio_client binds its `errlog=sys.stderr` default when mcp.client.stdio is first imported.
# Imported first inside a CliRunner invocation (`eval run` imports it lazily), that default would be
# CliRunner's captured stream for the rest of the process, and every later stdio session a test opens
# without an errlog would fail with `fileno`. Importing it here binds the real stderr.

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLE_DOCS = REPO / "examples" / "parcelly-docs"
DUB_TS = FIXTURES / "dub-ts"
H2_MANIFEST = {"version": "1", "strategy": {"chunk_by": "h2"}}
EXAMPLE_CHUNKS = 94  # chunks of examples/parcelly-docs; count-based assertions derive from it
SLOW_WEIGHT = 30  # a test marked slow costs about as much as this many others


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On pytest-xdist workers (tests/run.sh: --dist loadfile --no-loadscope-reorder), the files that
    cost the most first, by their slow marks: a worker takes a whole file at a time, and a long file
    handed out last would finish the run alone. xdist's own order, most tests first, put the files of
    one long test (a Dagster backfill, fifty stdio sessions) at the end."""
    if not hasattr(config, "workerinput"):
        return
    weight: Counter[str] = Counter()
    for item in items:
        weight[item.nodeid.split("::")[0]] += SLOW_WEIGHT if item.get_closest_marker("slow") else 1
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])  # stable: a file's tests stay in order


@pytest.fixture(scope="session", autouse=True)
def private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The onnx backend's optimized graphs (~90 MB) go to a temp folder, not the user's ~/.cache.

    Servers and builds the tests start inherit it. Hugging Face's cache stays where it was.
    """
    if "XDG_CACHE_HOME" in os.environ:
        return
    os.environ.setdefault("HF_HOME", str(Path.home() / ".cache" / "huggingface"))
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


@pytest.fixture
def example_docs(tmp_path: Path) -> Path:
    dest = tmp_path / "parcelly-docs"
    shutil.copytree(EXAMPLE_DOCS, dest)
    return dest


@pytest.fixture(scope="session")
def dub_ts_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A read-only-by-convention copy of dub-ts with the conformance manifest added."""
    dest = tmp_path_factory.mktemp("corpora") / "dub-ts"
    shutil.copytree(DUB_TS, dest)
    (dest / ".docs-mcp.json").write_text(json.dumps(H2_MANIFEST))
    return dest


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` as a test's committer would (an identity set, whatever the machine's config)."""
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def commit_docs_repo(repo: Path) -> Path:
    """A git repository with a docs/ subfolder (a manifest and one guide) beside code and a README: one commit."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "docs/.docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h2"}}')
    write(repo, "docs/guide.md", "# Guide\n\n## Install\n\nRun the installer.\n")
    write(repo, "src/app.py", "print('not docs')\n")
    write(repo, "README.md", "# Outside the docs subdir\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "docs v1")
    return repo


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
