"""Table files corrupted in place (same size, or a few KB inside), and damaged build state that must
not switch the check off: each through the real CLI, and search_docs over an MCP session."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from docs_mcp_core.output.layout import OutputLayout
from tests.reliability.clitools import build_args, docs_mcp, published, search_ids

QUERY = "idempotency key"
pytestmark = pytest.mark.slow


def _table(out: Path) -> Path:
    return OutputLayout(out).table("chunks")


def _garble(path: Path, offset: int = 0, length: int | None = None) -> None:
    """Overwrite bytes in place: the size (and so every size check) stays the same."""
    size = path.stat().st_size
    length = size - offset if length is None else min(length, size - offset)
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(os.urandom(length))


def data_file(out: Path) -> Path:
    """The published version's biggest data file (an older kept version's are not read)."""
    from docs_mcp_core.output.table_files import recorded_files

    files = recorded_files(out, "chunks", published(out)["version"]) or {}
    return _table(out) / max((rel for rel in files if rel.startswith("data/")), key=files.__getitem__)


def same_size_data(out: Path) -> None:
    _garble(data_file(out))


def four_kb_inside_data(out: Path) -> None:
    path = data_file(out)
    _garble(path, path.stat().st_size // 3, 4096)


def same_size_index(out: Path) -> None:
    _garble(max((_table(out) / "_indices").glob("*/*.lance"), key=lambda p: p.stat().st_size))


def same_size_manifest(out: Path) -> None:
    from docs_mcp_core.output.table_files import manifests

    _garble(manifests(out, "chunks")[published(out)["version"]], 64, 64)


CORRUPTIONS = [same_size_data, four_kb_inside_data, same_size_index, same_size_manifest]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """One good build (no-op rebuilt once, so its files' stats are recorded settled) and what it finds."""
    root = tmp_path_factory.mktemp("corruption")
    docs = root / "docs"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "parcelly-docs", docs)
    out = root / "good"
    for _ in range(2):
        result = docs_mcp(*build_args(docs, out))
        assert result.returncode == 0, result.stderr
    return docs, out, search_ids(out, QUERY)


def _copy(good: Path, to: Path) -> Path:
    shutil.copytree(good, to, copy_function=shutil.copy2)  # new inodes and ctimes: every file is checksummed
    return to


def _one_line_naming_the_rebuild(stderr: str, out: Path) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: the index at {out} cannot be read ("), stderr
    assert f"docs-mcp build --docs-dir DOCS --index {out}" in lines[0]


@pytest.mark.parametrize("damage", CORRUPTIONS, ids=lambda f: f.__name__)
def test_corrupted_table_files_are_one_line_for_readers_and_rewritten_by_the_next_build(
    built: tuple[Path, Path, list[str]], tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    docs, good, expected = built
    out = _copy(good, tmp_path / "out")
    before = published(out)["version"]
    damage(out)

    found = docs_mcp("search", "--index", out, QUERY)
    assert found.returncode == 1
    _one_line_naming_the_rebuild(found.stderr, out)  # no traceback, no Rust panic text
    assert "changed since it was written" in found.stderr

    rebuilt = docs_mcp(*build_args(docs, out))  # no --force
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "index unchanged" not in rebuilt.stderr
    assert "warn: the published index is damaged" in rebuilt.stderr and "rewriting the table" in rebuilt.stderr
    assert "changed since it was written (its checksum differs)" in rebuilt.stderr
    assert published(out)["version"] != before or damage is same_size_manifest
    assert search_ids(out, QUERY) == expected
    again = docs_mcp(*build_args(docs, out))
    assert "index unchanged" in again.stderr and "warn:" not in again.stderr, again.stderr


@pytest.mark.anyio
async def test_search_docs_on_a_corrupted_table_is_one_clear_error(
    built: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    from mcp import Client

    from docs_mcp_core.server import create_server

    out = _copy(built[1], tmp_path / "out")
    four_kb_inside_data(out)
    async with Client(create_server(out).server) as client:
        answer = await client.call_tool("search_docs", {"query": QUERY})
    text = answer.content[0].text
    assert answer.is_error and "cannot be read" in text and "changed since it was written" in text
    assert f"docs-mcp build --docs-dir DOCS --index {out}" in text


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize(
    "damage_state",
    [
        lambda p: p.write_text("{not json"),
        lambda p: p.write_text("[1, 2]"),
        _truncated,
        lambda p: p.write_text(json.dumps({"format": 2, "checksum": "xxh3_128", "versions": {"chunks:1": {"x": 5}}})),
        lambda p: p.unlink(),
    ],
    ids=["not-json", "array", "truncated", "wrong-entries", "missing"],
)
def test_damaged_table_files_json_does_not_switch_the_check_off(
    built: tuple[Path, Path, list[str]], tmp_path: Path, damage_state: Callable[[Path], None]
) -> None:
    """Build state that cannot vouch for the table gets it rewritten and recorded afresh; a truncation
    after that is noticed by the next build."""
    docs, good, expected = built
    out = _copy(good, tmp_path / "out")
    damage_state(OutputLayout(out).table_files)

    rebuilt = docs_mcp(*build_args(docs, out))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "warn: cannot verify the published table" in rebuilt.stderr and "rewriting the table" in rebuilt.stderr
    assert "index unchanged" not in rebuilt.stderr
    records = json.loads(OutputLayout(out).table_files.read_text())
    assert f"chunks:{published(out)['version']}" in records["versions"]

    path = data_file(out)
    path.write_bytes(path.read_bytes()[:-100])
    again = docs_mcp(*build_args(docs, out))
    assert again.returncode == 0, again.stderr
    assert "warn: the published index is damaged" in again.stderr and "index unchanged" not in again.stderr
    assert search_ids(out, QUERY) == expected
