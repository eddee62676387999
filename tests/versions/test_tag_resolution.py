"""A versioned corpus's versions resolved against a real repository (the sqlmodel bundle): a tag pattern
picks the newest releases by version, and a ref that is not there is one line while the rest resolve."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import load_config
from docs_mcp_core.sources.versions import resolve_versions, tag_commits

from ..conftest import git
from .conftest import TAGS


def config(tmp_path: Path, corpus: str) -> Path:
    path = tmp_path / "docs-mcp.yaml"
    path.write_text("corpora:\n  - name: sqlmodel\n" + "".join(f"    {line}\n" for line in corpus.strip().splitlines()))
    return path


def test_a_tag_pattern_resolves_to_the_newest_tags(tmp_path: Path, sqlmodel_repo: Path) -> None:
    corpora = load_config(config(tmp_path, f"source: {{git: {sqlmodel_repo}}}\nversions: {{tags: '0.0.*', keep: 3}}"))
    resolved = resolve_versions(corpora, "sqlmodel")
    assert resolved is not None
    assert resolved.labels == ["0.0.39", "0.0.31", "0.0.24"]
    assert resolved.default == "0.0.39"
    for version in resolved.versions:
        assert version.ref == version.label
        assert version.commit == git(sqlmodel_repo, "rev-parse", f"{version.label}^{{commit}}").strip()
    assert resolved.notes == [
        f"{corpora.path}: corpus 'sqlmodel': keeping the 3 newest; 2 older tag(s) left out: 0.0.20, 0.0.14"
    ]


def test_a_missing_ref_is_one_line_and_the_rest_resolve(tmp_path: Path, sqlmodel_repo: Path) -> None:
    spec = "versions: {refs: [0.0.14, 0.0.99, main], default: 0.0.14}"
    corpora = load_config(config(tmp_path, f"source: {{git: {sqlmodel_repo}}}\n{spec}"))
    resolved = resolve_versions(corpora, "sqlmodel")
    assert resolved is not None
    assert resolved.labels == ["0.0.14", "main"]  # versions newest first, then refs that are no version
    assert resolved.default == "0.0.14"
    assert resolved.get("main").commit == git(sqlmodel_repo, "rev-parse", "main").strip()
    assert len(resolved.notes) == 1 and "\n" not in resolved.notes[0]
    assert resolved.notes[0].startswith(f"{corpora.path}: corpus 'sqlmodel': version '0.0.99' left out: ")
    assert resolved.notes[0].endswith(f"ref '0.0.99' was not found in {sqlmodel_repo} (1 branch(es), 5 tag(s))")
    with pytest.raises(DocsMcpError, match="has no version '0.0.99'; it has: 0.0.14, main"):
        resolved.get("0.0.99")


def test_annotated_tags_over_a_url_resolve_to_their_commits(tmp_path: Path, sqlmodel_repo: Path) -> None:
    repo = tmp_path / "annotated"
    shutil.copytree(sqlmodel_repo, repo)
    git(repo, "tag", "-a", "v0.0.40", "-m", "release", "0.0.39")
    git(repo, "tag", "-a", "v0.1.0rc1", "-m", "candidate", "0.0.39")
    commits = tag_commits(f"file://{repo}")
    assert commits["v0.0.40"] == commits["0.0.39"]  # peeled: the commit, not the tag object
    corpora = load_config(config(tmp_path, f"source: {{git: 'file://{repo}'}}\nversions: {{tags: 'v*'}}"))
    resolved = resolve_versions(corpora, "sqlmodel")
    assert resolved is not None and resolved.labels == ["v0.0.40"]
    assert "1 pre-release tag(s) left out (set prereleases: true to index them): v0.1.0rc1" in resolved.notes[0]


def test_no_matching_tag_is_a_note_not_a_crash(tmp_path: Path, sqlmodel_repo: Path) -> None:
    corpora = load_config(config(tmp_path, f"source: {{git: {sqlmodel_repo}}}\nversions: {{tags: 'release-*'}}"))
    resolved = resolve_versions(corpora, "sqlmodel")
    assert resolved is not None and resolved.versions == [] and resolved.default is None
    assert resolved.notes == [
        f"{corpora.path}: corpus 'sqlmodel': no tag of {sqlmodel_repo} matching 'release-*' reads as a release "
        f"({len(TAGS)} tags)"
    ]


def test_an_unreachable_repository_is_one_error(tmp_path: Path) -> None:
    corpora = load_config(config(tmp_path, f"source: {{git: {tmp_path / 'nowhere'}}}\nversions: {{tags: 'v*'}}"))
    with pytest.raises(DocsMcpError) as err:
        resolve_versions(corpora, "sqlmodel")
    assert "\n" not in str(err.value) and "git ls-remote" in str(err.value)


def test_folder_and_website_versions(tmp_path: Path) -> None:
    for name in ("v1", "v2"):
        (tmp_path / "docs" / name).mkdir(parents=True)
    corpora = load_config(
        config(tmp_path, "source: {path: docs}\nversions: {paths: {'1.0': v1, '2.0': v2, '3.0': v3}}")
    )
    resolved = resolve_versions(corpora, "sqlmodel")
    assert resolved is not None
    assert [(v.label, v.path) for v in resolved.versions] == [
        ("2.0", tmp_path / "docs" / "v2"),
        ("1.0", tmp_path / "docs" / "v1"),
    ]
    assert (
        len(resolved.notes) == 1
        and f"version '3.0' left out: {tmp_path / 'docs' / 'v3'} is not a folder" in resolved.notes[0]
    )
    web = load_config(
        config(
            tmp_path,
            "source: {url: 'https://docs.example.com/latest/'}\n"
            "versions: {urls: {'2.1': '/2.1/', '3.0': 'https://v3.example.com/', dev: '../dev/'}}",
        )
    )
    resolved = resolve_versions(web, "sqlmodel")
    assert resolved is not None
    assert [(v.label, v.url) for v in resolved.versions] == [
        ("3.0", "https://v3.example.com/"),
        ("2.1", "https://docs.example.com/2.1/"),
        ("dev", "https://docs.example.com/dev/"),
    ]
    assert resolve_versions(load_config(config(tmp_path, "source: {path: docs}")), "sqlmodel") is None


def test_git_is_needed_only_for_git_sources() -> None:
    assert shutil.which("git") is not None, "these tests run git"
    assert subprocess.run(["git", "--version"], capture_output=True).returncode == 0
