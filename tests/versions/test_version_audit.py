"""The joined cache audit of a versioned output: for each version, what its last build embedded and what
it reused from which version (the first that paid for each vector), from every version's own audit."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_core.indexing.cache_audit import query
from docs_mcp_core.indexing.version_audit import version_reuse
from docs_mcp_core.indexing.versioned import version_fingerprints
from docs_mcp_core.output.layout import OutputLayout

from ..reliability.clitools import docs_mcp
from .conftest import TAGS
from .test_versioned_build import build, write_config

pytestmark = pytest.mark.slow


def test_what_each_version_reused_from_which(sqlmodel_repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, sqlmodel_repo, '{tags: "0.0.*", keep: 3}')
    out = tmp_path / "out" / "sqlmodel"
    result = build(config)
    assert list(result.built) == TAGS[-3:]  # oldest first, from an empty cache
    first, second, third = TAGS[-3:]
    key = result.built[first].embedded.passages_key
    prints = {label: version_fingerprints(OutputLayout(out).version(label), key) for label in TAGS[-3:]}

    reuse = {r.label: r for r in version_reuse(out)}
    assert list(reuse) == TAGS[-3:]
    # the oracle: each version's fingerprints (its build state), set against the versions built before it
    assert reuse[first].vectors == reuse[first].embedded == len(prints[first])
    assert reuse[first].reused_from == {}
    assert reuse[second].embedded == len(prints[second] - prints[first])
    assert reuse[second].reused_from == {first: len(prints[second] & prints[first])}
    assert reuse[third].embedded == len(prints[third] - prints[first] - prints[second])
    assert reuse[third].reused_from == {
        first: len(prints[third] & prints[first]),
        second: len((prints[third] & prints[second]) - prints[first]),
    }
    for label, row in reuse.items():
        assert row.vectors == len(prints[label])
        assert (row.from_earlier_builds, row.unrecorded) == (0, 0)
        # and what the build itself counted and recorded
        assert row.embedded == result.built[label].embedded.stats.embedded
        assert query(OutputLayout(out).version(label), "SELECT embedded FROM builds")[1] == [(row.embedded,)]
    assert all(n > 0 for r in reuse.values() for n in r.reused_from.values())

    # `docs-mcp audit --index OUT` prints the same table
    shown = docs_mcp("audit", "--index", out)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1].split() == ["version", "vectors", "embedded", "reused", "from", first, "from", second]
    assert lines[3].split() == [first, str(reuse[first].vectors), str(reuse[first].embedded), "0", "0", "0"]
    assert lines[5].split() == [
        third,
        str(reuse[third].vectors),
        str(reuse[third].embedded),
        str(reuse[third].reused),
        str(reuse[third].reused_from[first]),
        str(reuse[third].reused_from[second]),
    ]

    # an unchanged rebuild of the second version embeds nothing: its own vectors come from its earlier build
    build(config, labels=[second])
    again = {r.label: r for r in version_reuse(out)}[second]
    assert again.embedded == 0
    assert again.from_earlier_builds == reuse[second].embedded
    assert again.reused_from == reuse[second].reused_from
    table = docs_mcp("audit", "--index", out).stdout.splitlines()
    assert table[1].split()[-3:] == ["from", "earlier", "builds"]
    assert table[4].split() == [
        second, str(again.vectors), "0", str(again.vectors),
        str(again.reused_from[first]), "0", str(again.from_earlier_builds),
    ]  # fmt: skip

    # `--force` on the second version embeds all of it again; what the third reused is still credited to
    # the version that paid first
    forced = docs_mcp("build", "--config", config, "--corpus", "sqlmodel", "--version-label", second, "--force")
    assert forced.returncode == 0, forced.stderr
    now = {r.label: r for r in version_reuse(out)}
    assert (now[second].embedded, now[second].reused) == (len(prints[second]), 0)
    assert now[third] == reuse[third]

    sql = docs_mcp("audit", "--index", out, "--sql", "SELECT 1")
    assert sql.returncode == 1
    assert sql.stderr.strip() == (
        f"error: {out} is a versioned output: --sql reads one version's audit; give --index "
        f"{OutputLayout(out).version('LABEL')}"
    )


def test_a_file_as_index_is_the_usual_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not an index\n")
    result = docs_mcp("audit", "--index", path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {path} is a file, not an index folder"), result.stderr
