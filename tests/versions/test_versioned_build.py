"""Versioned builds on the real sqlmodel repository (five release tags): each version its own published
index under one corpus output, listed in versions.json; one embedding cache that keeps the union of what
every version uses, so a version embeds only what no other version paid for; a version that leaves the
config leaves the output; a bad version is one line and the rest builds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.embedding.cache import CacheStats
from docs_mcp_core.indexing.versioned import version_fingerprints
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.sources.config import load_config
from docs_mcp_core.sources.versioned_build import build_versions

from ..reliability.clitools import docs_mcp, search_ids
from .conftest import TAGS

pytestmark = pytest.mark.slow


def write_config(root: Path, repo: Path, versions: str) -> Path:
    path = root / "docs-mcp.yaml"
    path.write_text(
        "corpora:\n"
        "  - name: sqlmodel\n"
        f"    source: {{git: {repo}, subdir: docs}}\n"
        "    out: out/sqlmodel\n"
        "    embedding: {provider: hash}\n"
        f"    versions: {versions}\n"
    )
    return path


def cache_entries(out: Path) -> int:
    meta = json.loads((OutputLayout(out).embedding_cache / "cache-meta.json").read_text())
    return int(meta["entries"])


def build(config: Path, labels: list[str] | None = None):  # type: ignore[no-untyped-def]
    provider = make_provider(ProviderSettings(provider="hash"))
    try:
        return build_versions(load_config(config), "sqlmodel", provider, labels=labels)
    finally:
        provider.close()


def test_versions_share_one_cache_that_keeps_the_union(sqlmodel_repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, sqlmodel_repo, '{tags: "0.0.*", keep: 3}')
    out = tmp_path / "out" / "sqlmodel"
    result = build(config)
    assert not result.failed
    assert list(result.built) == TAGS[-3:]  # oldest first
    manifest = json.loads(OutputLayout(out).versions_manifest.read_text())
    assert [v["label"] for v in manifest["versions"]] == TAGS[:-4:-1]  # newest first
    assert manifest["default"] == TAGS[-1]
    commits = {v["label"]: v["source_commit"] for v in manifest["versions"]}
    assert all(c and len(c) == 40 for c in commits.values()) and len(set(commits.values())) == 3
    dates = [v["source_date"] for v in manifest["versions"]]  # the tags' commit dates, newest first
    assert all(d and d.endswith("Z") for d in dates) and dates == sorted(dates, reverse=True)

    # each version is its own searchable index
    for label in TAGS[-3:]:
        assert search_ids(OutputLayout(out).version(label), "relationship attributes")

    # the first version pays for everything; the next ones only for what no earlier one embedded
    first, *later = result.built.values()
    assert first.embedded.stats.embedded == len(set(first.embedded.fingerprints))
    for summary in later:
        assert summary.embedded.shared > 0
        assert summary.embedded.stats.embedded < len(set(summary.embedded.fingerprints))

    # the cache holds the union of every version's vectors, not only the last build's
    key = first.embedded.passages_key
    union = set().union(*(version_fingerprints(OutputLayout(out).version(label), key) for label in TAGS[-3:]))
    assert cache_entries(out) == len(union)

    # so building the oldest again embeds nothing
    again = build(config, labels=[TAGS[-3]])
    stats: CacheStats = again.built[TAGS[-3]].embedded.stats
    assert stats.embedded == 0 and stats.misses == 0

    # a version that falls out of `keep` leaves versions.json, its folder, and (at the next build) the cache
    write_config(tmp_path, sqlmodel_repo, '{tags: "0.0.*", keep: 2}')
    result = build(config)
    assert result.removed == [TAGS[-3]]
    assert not OutputLayout(out).version(TAGS[-3]).exists()
    manifest = json.loads(OutputLayout(out).versions_manifest.read_text())
    assert [v["label"] for v in manifest["versions"]] == TAGS[:-3:-1]
    union = set().union(*(version_fingerprints(OutputLayout(out).version(label), key) for label in TAGS[-2:]))
    assert cache_entries(out) == len(union)


@pytest.mark.parametrize("option", ["force", "rebuild_cache"])
def test_rebuilding_one_version_keeps_the_other_versions_vectors(
    sqlmodel_repo: Path, tmp_path: Path, option: str
) -> None:
    """`--force` or `--rebuild-cache` on one version embeds that version again and leaves the other
    versions' entries in the shared cache (before: the cache held the rebuilt version's vectors only)."""
    config = write_config(tmp_path, sqlmodel_repo, '{tags: "0.0.*", keep: 2}')
    out = tmp_path / "out" / "sqlmodel"
    older, newer = TAGS[-2:]
    key = build(config).built[older].embedded.passages_key
    prints = {label: version_fingerprints(OutputLayout(out).version(label), key) for label in (older, newer)}
    provider = make_provider(ProviderSettings(provider="hash"))
    try:
        rebuilt = build_versions(load_config(config), "sqlmodel", provider, labels=[newer], **{option: True})
    finally:
        provider.close()
    stats: CacheStats = rebuilt.built[newer].embedded.stats
    assert stats.embedded == len(prints[newer])  # everything of this version embedded again
    assert cache_entries(out) == len(prints[older] | prints[newer])
    again = build(config, labels=[older]).built[older].embedded.stats
    assert (again.embedded, again.misses) == (0, 0)


def test_a_missing_ref_is_one_line_and_the_rest_builds(sqlmodel_repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, sqlmodel_repo, '{refs: ["0.0.39", "9.9.9"]}')
    result = docs_mcp("build", "--config", config, "--corpus", "sqlmodel")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    missing = [line for line in result.stderr.splitlines() if "9.9.9" in line]
    assert len(missing) == 1 and "left out" in missing[0], result.stderr
    manifest = json.loads(OutputLayout(tmp_path / "out" / "sqlmodel").versions_manifest.read_text())
    assert [v["label"] for v in manifest["versions"]] == ["0.0.39"]


def test_a_bad_version_spec_is_one_error_line(sqlmodel_repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, sqlmodel_repo, '{tags: "0.0.*", urls: {a: "https://example.com/"}}')
    result = docs_mcp("build", "--config", config, "--corpus", "sqlmodel")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert re.search(r"docs-mcp\.yaml:\d+: corpora\[0\]\.versions: set exactly one of", result.stderr), result.stderr
    assert not (tmp_path / "out").exists()


def test_version_label_builds_into_one_corpus_output(sqlmodel_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    for tag in TAGS[-2:]:
        result = docs_mcp(
            "build", "--git", sqlmodel_repo, "--ref", tag, "--subdir", "docs", "--index", out,
            "--version-label", tag, "--embedding-provider", "hash",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
    manifest = json.loads(OutputLayout(out).versions_manifest.read_text())
    assert [v["label"] for v in manifest["versions"]] == TAGS[:-3:-1]
    assert all(v["ref"] == v["label"] for v in manifest["versions"])
    assert not OutputLayout(out).metadata.exists()  # the corpus folder itself is no unversioned index
    bad = docs_mcp("build", "--docs-dir", tmp_path, "--index", out, "--version-label", "../x")
    assert bad.returncode == 1 and "cannot label a version" in bad.stderr and "Traceback" not in bad.stderr


def page(title: str, body: str, links: str = "") -> str:
    return f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{body}</p>{links}</main></body></html>"


def test_website_and_folder_versions(tmp_path: Path) -> None:
    """One URL per version of a website (a real HTTP server on 127.0.0.1), one folder per version."""
    from ..fakes.docs_site import DocsSite

    site = tmp_path / "site"
    for label, words in (("1.0", "The client retries twice."), ("2.0", "The client retries three times.")):
        (site / label / "retries").mkdir(parents=True)
        (site / label / "index.html").write_text(page("Home", "Welcome.", '<a href="retries/">Retries</a>'))
        (site / label / "retries" / "index.html").write_text(page("Retries", words))
    for label, words in (("1.0", "Use the old flag."), ("2.0", "Use the new flag.")):
        (tmp_path / "handbook" / f"v{label}").mkdir(parents=True)
        (tmp_path / "handbook" / f"v{label}" / "flags.md").write_text(f"# Flags\n\n## Usage\n\n{words}\n")
    with DocsSite(site) as server:
        url = server.url
        config = tmp_path / "docs-mcp.yaml"
        config.write_text(
            "corpora:\n"
            "  - name: web\n"
            f"    source: {{url: '{server.url}'}}\n"
            "    embedding: {provider: hash}\n"
            '    versions: {urls: {"1.0": /1.0/, "2.0": /2.0/}}\n'
            "  - name: handbook\n"
            "    source: {path: handbook}\n"
            "    embedding: {provider: hash}\n"
            '    versions: {paths: {"1.0": v1.0, "2.0": v2.0, "3.0": v3.0}, default: "1.0"}\n'
        )
        provider = make_provider(ProviderSettings(provider="hash"))
        try:
            web = build_versions(load_config(config), "web", provider)
            handbook = build_versions(load_config(config), "handbook", provider)
        finally:
            provider.close()
    assert sorted(web.built) == ["1.0", "2.0"] and not web.failed
    manifest = json.loads(OutputLayout(tmp_path / "indexes" / "web").versions_manifest.read_text())
    assert [v["source_url"] for v in manifest["versions"]] == [f"{url}2.0/", f"{url}1.0/"]
    assert all(v["source_date"] for v in manifest["versions"])  # the newest Last-Modified of the pages
    assert search_ids(OutputLayout(tmp_path / "indexes" / "web").version("2.0"), "retries three times")
    # the missing folder is one line and left out; the configured default is kept
    assert sorted(handbook.built) == ["1.0", "2.0"] and not handbook.failed
    assert any("version '3.0' left out" in note for note in handbook.resolved.notes)
    manifest = json.loads(OutputLayout(tmp_path / "indexes" / "handbook").versions_manifest.read_text())
    assert manifest["default"] == "1.0" and [v["label"] for v in manifest["versions"]] == ["2.0", "1.0"]
    assert all(v["source_date"] for v in manifest["versions"])  # the newest file's modification


def test_config_build_of_an_unversioned_corpus(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# Notes\n\n## One\n\nPlain text.\n")
    config = tmp_path / "docs-mcp.yaml"
    config.write_text("corpora:\n  - name: notes\n    source: {path: notes}\n    embedding: {provider: none}\n")
    result = docs_mcp("build", "--config", config, "--corpus", "notes")
    assert result.returncode == 0, result.stderr
    assert search_ids(tmp_path / "indexes" / "notes", "plain text")
    labelled = docs_mcp("build", "--config", config, "--corpus", "notes", "--version-label", "1.0")
    assert labelled.returncode == 1 and "has no 'versions'" in labelled.stderr and "Traceback" not in labelled.stderr
