"""`docs-mcp build --git REPO [--ref REF] [--subdir DIR]` against a real git repository on disk,
by path and by file:// URL: one commit's docs, staged as the pipeline stages a git corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main

from ..conftest import commit_docs_repo, git, write


@pytest.fixture
def docs_repo(tmp_path: Path) -> Path:
    repo = commit_docs_repo(tmp_path / "sdk.git")
    git(repo, "tag", "v1")
    write(repo, "docs/guide.md", "# Guide\n\n## Install\n\nRun the new installer.\n\n## Upgrade\n\nUpgrade often.\n")
    git(repo, "commit", "-qam", "docs v2")
    return repo


def build(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["build", *args, "--embedding-provider", "none"])


def chunk_ids(out: Path) -> list[str]:
    return [c["chunk_id"] for c in json.loads((out / "chunks.json").read_text())]


@pytest.mark.parametrize("as_url", [False, True])
def test_build_from_a_repository_indexes_one_commit_of_its_subdir(
    docs_repo: Path, tmp_path: Path, as_url: bool
) -> None:
    source = f"file://{docs_repo}" if as_url else str(docs_repo)
    out = tmp_path / "index"
    head = git(docs_repo, "rev-parse", "HEAD")
    result = build("--git", source, "--subdir", "docs", "--index", str(out))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        f"staged 1 Markdown file and 1 manifest and template file from {source} at commit {head[:12]} "
        "(ref HEAD, subdir docs)"
    )
    assert chunk_ids(out) == ["guide.md#_preamble", "guide.md#guide/install", "guide.md#guide/upgrade"]
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["stats"]["source_commit"] == head
    assert meta["corpus_description"].startswith("sdk documentation")  # named after the repository

    older = build("--git", source, "--subdir", "docs", "--ref", "v1", "--index", str(out))
    assert older.exit_code == 0, older.output
    assert chunk_ids(out) == ["guide.md#_preamble", "guide.md#guide/install"]
    assert json.loads((out / "metadata.json").read_text())["stats"]["source_commit"] == git(
        docs_repo, "rev-parse", "v1"
    )


def test_a_rebuild_of_the_same_commit_reuses_everything(docs_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    assert build("--git", str(docs_repo), "--index", str(out)).exit_code == 0
    again = build("--git", str(docs_repo), "--index", str(out))
    assert again.exit_code == 0, again.output
    assert "index unchanged: the published table version is kept" in again.stderr
    assert re.search(r"^done in \S+: 2 files \(2 unchanged\), .*; the index at .* is unchanged$", again.stderr, re.M)


def test_bad_git_arguments_get_one_error_line(docs_repo: Path, tmp_path: Path, example_docs: Path) -> None:
    out = str(tmp_path / "index")
    cases = {
        ("--git", str(docs_repo), "--ref", "nope"): f"error: ref 'nope' was not found in {docs_repo}; give a "
        "branch, tag or commit it has",
        ("--git", str(docs_repo), "--subdir", "nope"): "error: subdir 'nope' is not a folder at commit "
        f"{git(docs_repo, 'rev-parse', 'HEAD')[:12]} of {docs_repo}",
        ("--git", str(docs_repo), "--docs-dir", str(example_docs)): "error: give exactly one of --docs-dir (a folder "
        "of Markdown), --url (a docs website) or --git (a repository); got --docs-dir and --git",
        ("--docs-dir", str(example_docs), "--ref", "main"): "error: --ref and --subdir go with --git REPO (a git "
        "repository)",
        ("--git", str(docs_repo), "--source-commit", "abc"): "error: --source-commit goes with --docs-dir or --url: "
        "a --git build records the commit it staged",
    }
    for args, message in cases.items():
        result = build(*args, "--index", out)
        assert result.exit_code == 1 and result.stderr.splitlines() == [message], (args, result.stderr)
    assert not (tmp_path / "index" / "metadata.json").exists()


def test_validate_a_repository(docs_repo: Path) -> None:
    result = CliRunner().invoke(main, ["validate", "--git", str(docs_repo), "--subdir", "docs"])
    assert result.exit_code == 0, result.output
    assert "validated 1 Markdown file(s): 0 error(s), 0 warning(s)" in result.stdout


@pytest.mark.parametrize("from_git", [True, False])
def test_a_file_mkdocs_yml_inherits_but_the_project_lacks_is_not_staged(tmp_path: Path, from_git: bool) -> None:
    """Projects keep an INHERITed config out of the repository (sqlmodel's mkdocs.maybe-insiders.yml):
    staging stages what is there instead of failing on what is not."""
    repo = tmp_path / "proj"
    write(repo, "mkdocs.yml", "INHERIT: mkdocs.insiders.yml\nsite_name: Proj\n")
    write(repo, "docs/index.md", "# Proj\n\n## Start\n\nStart here.\n")
    out = tmp_path / "index"
    if from_git:
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "docs")
        result = build("--git", str(repo), "--subdir", "docs", "--index", str(out))
    else:
        from docs_mcp_core.sources.local import stage_local

        staged = stage_local(repo / "docs", tmp_path / "staged")
        assert "../mkdocs.yml" in staged.files and not any("insiders" in f for f in staged.files)
        return
    assert result.exit_code == 0, result.output
    assert chunk_ids(out)
