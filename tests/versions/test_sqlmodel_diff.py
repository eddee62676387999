"""what_changed against the true diff of a real repository: the sqlmodel docs at five release tags
(2023–2026), each built with today's CLI. Every section the repository changed is listed; no section it
left unchanged is."""

from __future__ import annotations

import json
import subprocess
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.versions.changes import what_changed
from docs_mcp_core.versions.published import read_chunks
from docs_mcp_core.versions.sections import sections

from ..reliability.clitools import build_args, docs_mcp
from .conftest import TAGS
from .true_diff import HEADING, Key, true_diff, words

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def indexes(sqlmodel_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sqlmodel-indexes")
    built = {}
    for tag in TAGS:
        tree = root / f"src-{tag}"
        archive = subprocess.run(["git", "archive", tag], cwd=sqlmodel_repo, capture_output=True, check=True).stdout
        tree.mkdir()
        (root / f"{tag}.tar").write_bytes(archive)
        with tarfile.open(root / f"{tag}.tar") as tar:
            tar.extractall(tree, filter="data")
        result = CliRunner().invoke(main, [*map(str, build_args(tree / "docs", root / tag)), "-q"])  # in-process
        assert result.exit_code == 0, result.output
        built[tag] = root / tag
    return built


def keys(chunks: list[dict], renamed: dict[str, str]) -> dict[str, Key]:
    """Each section's oracle key: its file (followed through git's renames) and heading words."""
    seen: Counter[tuple[str, tuple[str, ...]]] = Counter()
    out = {}
    for s in sorted(sections(chunks).values(), key=lambda s: (s.filepath, s.position)):
        # a page whose text opens with no heading line (sqlmodel's index.md opens with HTML) is the
        # oracle's section with no heading, whatever title (the site's nav) the index shows for it
        untitled = s.chunk_id.endswith("#_preamble") and not any(map(HEADING.match, s.content.splitlines()))
        heading = () if untitled else words(s.heading)
        key = (renamed.get(s.filepath, s.filepath), heading)
        out[s.chunk_id] = (*key, seen[key])
        seen[key] += 1
    return out


PAIRS = [*zip(TAGS, TAGS[1:]), (TAGS[0], TAGS[-1])]


@pytest.mark.parametrize("old, new", PAIRS, ids=[f"{a}..{b}" for a, b in PAIRS])
def test_what_changed_lists_every_changed_section_and_no_unchanged_one(
    sqlmodel_repo: Path, indexes: dict[str, Path], old: str, new: str
) -> None:
    truth, renamed = true_diff(sqlmodel_repo, old, new)
    old_chunks, new_chunks = read_chunks(indexes[old]), read_chunks(indexes[new])
    old_keys, new_keys = keys(old_chunks, renamed), keys(new_chunks, {})
    found = what_changed(old_chunks, new_chunks)
    listed: set[Key] = set()
    wrong = []
    for change in found.changes:
        for key in ([old_keys[change.old.chunk_id]] if change.old else []) + (
            [new_keys[change.new.chunk_id]] if change.new else []
        ):
            listed.add(key)
            if truth.get(key, "same") == "same":
                wrong.append((change.kind, change.chunk_id, truth.get(key)))
    for old_id, new_id in found.moved:  # same heading and text under a new ID: listed as moved, not changed
        assert old_keys[old_id] == new_keys[new_id] or {truth[old_keys[old_id]], truth[new_keys[new_id]]} == {
            "removed",
            "added",
        }
        listed |= {old_keys[old_id], new_keys[new_id]}
    missed = sorted(key for key, state in truth.items() if state != "same" and key not in listed)
    assert wrong == [], f"listed but unchanged in the repository: {wrong[:5]}"
    assert missed == [], f"changed in the repository but not listed: {missed[:5]}"
    changed = Counter(truth.values())
    assert changed["changed"] >= 30 and changed["same"] >= 150  # a real diff, not a trivial one


def test_markup_rewrites_are_not_changes(sqlmodel_repo: Path, indexes: dict[str, Path]) -> None:
    """0.0.31 → 0.0.39 rewrote HTML links as Markdown links in many sections that say the same: the raw
    Markdown differs, the text does not, and none of them is listed."""
    old_chunks, new_chunks = read_chunks(indexes["0.0.31"]), read_chunks(indexes["0.0.39"])
    old, new = sections(old_chunks), sections(new_chunks)
    rewritten = [
        cid
        for cid in old.keys() & new.keys()
        if old[cid].content != new[cid].content and old[cid].digest == new[cid].digest
    ]
    assert len(rewritten) >= 20
    listed = {c.chunk_id for c in what_changed(old_chunks, new_chunks).changes}
    assert not listed & set(rewritten)


def test_docs_mcp_diff_answers_as_an_agent_reads_it(indexes: dict[str, Path]) -> None:
    result = docs_mcp(
        "diff", "--from", indexes["0.0.24"], "--to", indexes["0.0.31"], "--query", "Optional None relationship"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"{indexes['0.0.24']} → {indexes['0.0.31']}: 31 changed, 1 renamed, 9 added, 1 removed "
        "(458 unchanged); ranked by 'Optional None relationship'"
    )
    first = lines[2]
    assert first.startswith("renamed  tutorial/relationship-attributes/define-relationships-attributes.md#")
    assert "-Optional Relationship Attributes" in result.stdout and "+Relationship Attributes or None" in result.stdout
    doc = json.loads(docs_mcp("diff", "--from", indexes["0.0.24"], "--to", indexes["0.0.31"], "--json").stdout)
    assert doc["counts"] == {"changed": 31, "renamed": 1, "added": 9, "removed": 1, "moved": 0, "unchanged": 458}
    assert len(doc["changes"]) == 42 and doc["query"] is None
