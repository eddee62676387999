"""`versions:` and `package:` in docs-mcp.yaml: what each source takes, one clear error for anything else,
and every config without them loads as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import load_config
from docs_mcp_core.versions.ordering import default_label, newest_first, parse_version, serving_order
from docs_mcp_core.versions.tags import select_tags

from ..conftest import REPO


def write(tmp_path: Path, corpus: str) -> Path:
    path = tmp_path / "docs-mcp.yaml"
    path.write_text("corpora:\n  - name: lib\n" + "".join(f"    {line}\n" for line in corpus.strip().splitlines()))
    return path


def test_every_shipped_config_loads_unversioned() -> None:
    for path in [REPO / "docs-mcp.yaml", *sorted((REPO / "examples").rglob("docs-mcp*.yaml"))]:
        corpora = load_config(path)
        assert all(c.versions is None and c.package is None for c in corpora.corpora), path


@pytest.mark.parametrize(
    "corpus, block, labels",
    [
        ('source: {git: repo}\nversions: {tags: "v*", keep: 3}', "tags", []),
        ("source: {git: repo}\nversions: {refs: [v1.2.0, v1.3.0, main]}", "refs", ["v1.2.0", "v1.3.0", "main"]),
        ("source: {git: repo}\nversions: {refs: {'1.2': release/1.2, dev: main}}", "refs", ["1.2", "dev"]),
        (
            "source: {url: 'https://docs.x.org/'}\nversions: {urls: {'2.1': '2.1/', '3.0': 'https://x.org/3/'}}",
            "urls",
            ["2.1", "3.0"],
        ),
        ("source: {path: docs}\nversions: {paths: {'1.0': v1, '2.0': v2}, default: '1.0'}", "paths", ["1.0", "2.0"]),
    ],
)
def test_each_source_takes_its_versions(tmp_path: Path, corpus: str, block: str, labels: list[str]) -> None:
    versions = load_config(write(tmp_path, corpus + "\npackage: {name: lib, ecosystem: pypi}")).get("lib").versions
    assert versions is not None and versions.block == block and versions.labels() == labels


@pytest.mark.parametrize(
    "corpus, message",
    [
        (
            "source: {git: repo}\nversions: {urls: {'1': 'https://x.org/1/'}}",
            "corpora[0]: versions.urls does not apply to a git source; it takes versions.refs or versions.tags",
        ),
        (
            "source: {url: 'https://x.org/'}\nversions: {tags: 'v*'}",
            "corpora[0]: versions.tags does not apply to a website (url) source; it takes versions.urls",
        ),
        ("source: {path: docs}\nversions: {refs: [main]}", "versions.refs does not apply to a folder (path) source"),
        ("source: {git: repo}\nversions: {}", "corpora[0].versions: set exactly one of 'refs' or 'tags'"),
        (
            "source: {git: repo}\nversions: {refs: [a], tags: 'v*'}",
            "set exactly one of 'refs' or 'tags' (a git source), 'urls' (a website) or 'paths' (folders); got refs, tags",
        ),
        ("source: {git: repo}\nversions: {refs: [a], keep: 2}", "keep go with 'tags' (a tag pattern)"),
        (
            "source: {git: repo}\nversions: {tags: 'v*', keep: 0}",
            "corpora[0].versions.keep: Input should be greater than or equal to 1",
        ),
        ("source: {git: repo}\nversions: {refs: [release/1.2]}", "ref 'release/1.2' cannot label a version"),
        ("source: {git: repo}\nversions: {refs: [v1, v1]}", "each ref once; repeated: v1"),
        ("source: {path: docs}\nversions: {paths: {'../up': x}}", "label '../up' cannot label a version"),
        ("source: {path: docs}\nversions: {paths: {'1...2': x}}", "no '..', at most 63 characters"),
        (
            "source: {path: docs}\nversions: {paths: {'1.0': v1}, default: '2.0'}",
            "default '2.0' is none of the versions: 1.0",
        ),
        (
            "source: {git: repo, ref: main}\nversions: {tags: 'v*'}",
            "set the versions to build in 'versions', not 'source.ref'",
        ),
        ("source: {git: repo}\nversions: {tags: ''}", 'the tag pattern is empty; e.g. tags: "v*"'),
        ("source: {git: repo}\nversions: {tag: 'v*'}", "corpora[0].versions.tag: Extra inputs are not permitted"),
        (
            "source: {git: repo}\npackage: {name: lib, ecosystem: maven}",
            "corpora[0].package.ecosystem: Input should be 'pypi', 'npm', 'go' or 'cargo'",
        ),
        ("source: {git: repo}\npackage: {ecosystem: npm}", "corpora[0].package.name: Field required"),
    ],
)
def test_a_bad_version_spec_is_one_clear_error(tmp_path: Path, corpus: str, message: str) -> None:
    path = write(tmp_path, corpus)
    with pytest.raises(DocsMcpError) as err:
        load_config(path)
    lines = str(err.value).splitlines()
    assert lines[0] == "invalid corpora config:"
    assert len(lines) == 2 and re.match(rf"{re.escape(str(path))}(:\d+)?: ", lines[1]), str(err.value)
    assert message in lines[1], str(err.value)


@pytest.mark.parametrize(
    "text, version",
    [
        ("0.0.24", "0.0.24"),
        ("v1.2.3", "1.2.3"),
        ("1.2.3-rc.1", "1.2.3rc1"),
        ("2.0.0-beta.2", "2.0.0b2"),
        ("1.0.0-alpha.beta", "1.0.0.dev0"),  # semver PEP 440 cannot read: a pre-release of 1.0.0
        ("v0.0.0-20230101000000-abcdef123456", "0.0.0.dev0"),  # a Go pseudo-version
        ("v2.0.0+incompatible", "2.0.0+incompatible"),
        ("main", None),
        ("latest", None),
    ],
)
def test_versions_are_read_as_pep_440_or_semver(text: str, version: str | None) -> None:
    parsed = parse_version(text)
    assert (str(parsed) if parsed is not None else None) == version


def test_order_is_by_version_not_by_name() -> None:
    labels = ["0.0.9", "0.0.24", "main", "0.0.14", "v0.1.0", "0.1.0rc1"]
    assert newest_first(labels) == ["v0.1.0", "0.1.0rc1", "0.0.24", "0.0.14", "0.0.9"]
    assert serving_order(labels)[-1] == "main"
    assert default_label(labels) == "v0.1.0"
    assert default_label(labels, "0.0.24") == "0.0.24"
    assert default_label(labels, "gone") == "v0.1.0"


def test_a_tag_pattern_keeps_the_newest_releases() -> None:
    tags = ["v1.9.0", "v1.10.0", "v1.10.1", "v2.0.0rc1", "v2.0.0", "v1.8.0", "vnext", "docs-2024", "v1.10"]
    chosen = select_tags(tags, "v*", keep=3)
    assert [t.tag for t in chosen.chosen] == ["v2.0.0", "v1.10.1", "v1.10"]  # v1.10 and v1.10.0 are one version
    assert chosen.prereleases == ["v2.0.0rc1"] and chosen.not_versions == ["vnext"]
    assert chosen.older == ["v1.9.0", "v1.8.0"]
    notes = chosen.notes("v*", 3)
    assert len(notes) == 3 and all("\n" not in n for n in notes)
    assert [t.tag for t in select_tags(tags, "v*", keep=1, prereleases=True).chosen] == ["v2.0.0"]
    assert [t.tag for t in select_tags(["v2.0.0rc1", "v1.0.0"], "v*", 5, prereleases=True).chosen] == [
        "v2.0.0rc1",
        "v1.0.0",
    ]


def test_a_monorepo_tag_is_labelled_by_its_version() -> None:
    chosen = select_tags(["sqlmodel@0.0.24", "sqlmodel@0.0.31", "other@9.0.0"], "sqlmodel@*", keep=5)
    assert [(t.label, t.tag) for t in chosen.chosen] == [("0.0.31", "sqlmodel@0.0.31"), ("0.0.24", "sqlmodel@0.0.24")]
    assert [t.label for t in select_tags(["sqlmodel-v0.0.24"], "sqlmodel-v*", 5).chosen] == ["0.0.24"]
    assert [t.label for t in select_tags(["v0.0.24"], "v*", 5).chosen] == ["v0.0.24"]
