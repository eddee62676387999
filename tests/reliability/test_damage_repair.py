"""A damaged output is repaired by the next build, never trusted: each case through the real CLI."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from docs_mcp_core.output.metadata import SCHEMA_VERSION
from docs_mcp_core.output.table_files import manifests
from docs_mcp_core.search import run_search
from tests.reliability.clitools import build_args, docs_mcp, published, search_ids

QUERY = "idempotency key"


def drop_lancedb(out: Path) -> None:
    shutil.rmtree(out / ".lancedb")


def drop_data_file(out: Path) -> None:
    next((out / ".lancedb" / "chunks.lance" / "data").glob("*.lance")).unlink()


def drop_index_file(out: Path) -> None:
    sorted((out / ".lancedb" / "chunks.lance" / "_indices").glob("*/*"))[0].unlink()


def corrupt_manifest(out: Path) -> None:
    published = json.loads((out / "metadata.json").read_text())["index"]["version"]
    manifests(out, "chunks")[published].write_bytes(b"junk")


def name_missing_version(out: Path) -> None:
    meta = json.loads((out / "metadata.json").read_text())
    meta["index"]["version"] = 9999
    (out / "metadata.json").write_text(json.dumps(meta))


def index_version(value: int) -> Callable[[Path], None]:
    def damage(out: Path) -> None:
        meta = json.loads((out / "metadata.json").read_text())
        meta["index"]["version"] = value
        (out / "metadata.json").write_text(json.dumps(meta))

    damage.__name__ = f"index_version_{value}"
    return damage


def nested_brackets(out: Path) -> None:
    (out / "metadata.json").write_text("[" * 200_000 + "]" * 200_000)


def wrong_type(text: str) -> Callable[[Path], None]:
    def damage(out: Path) -> None:
        (out / "metadata.json").write_text(text)

    return damage


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """One good build (provider none) that each case copies and damages, and what it finds."""
    root = tmp_path_factory.mktemp("damage")
    docs = root / "docs"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "parcelly-docs", docs)
    out = root / "good"
    result = docs_mcp(*build_args(docs, out))
    assert result.returncode == 0, result.stderr
    return docs, out, search_ids(out, QUERY)


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    [
        drop_lancedb,
        drop_data_file,
        drop_index_file,
        corrupt_manifest,
        name_missing_version,
        wrong_type("[1]"),
        wrong_type('{"metadata_version": "1.0.0", "index": 5}'),
        index_version(-1),
        index_version(2**70),
        nested_brackets,
    ],
    ids=[
        "no-lancedb",
        "data-file",
        "index-file",
        "manifest",
        "missing-version",
        "array",
        "index-int",
        "version-negative",
        "version-2**70",
        "nested-brackets",
    ],
)
def test_the_next_build_repairs_a_damaged_output(
    built: tuple[Path, Path, list[str]], tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    docs, good, expected = built
    out = tmp_path / "out"
    shutil.copytree(good, out)
    damage(out)

    result = docs_mcp(*build_args(docs, out))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "index unchanged" not in result.stderr
    assert "warn:" in result.stderr and ("rewriting the table" in result.stderr or "rebuilding" in result.stderr)
    # The CLI for the cases a user hits first; the same engine in-process for the rest (processes are slow here).
    if damage in (drop_lancedb, drop_data_file):
        assert search_ids(out, QUERY) == expected
    else:
        assert [h["chunk_id"] for h in run_search(out, QUERY, hybrid=False).hits] == expected


@pytest.mark.slow
def test_reading_commands_give_one_line_for_metadata_of_the_wrong_type(
    built: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(built[1], out)
    meta = json.loads((out / "metadata.json").read_text())
    for text, args in (
        ('"x"', ["search", "--index", out, QUERY]),
        (json.dumps({**meta, "index": {**meta["index"], "version": -1}}), ["search", "--index", out, QUERY]),
        (json.dumps({**meta, "index": {**meta["index"], "version": 2**70}}), ["search", "--index", out, QUERY]),
        ("[" * 200_000 + "]" * 200_000, ["search", "--index", out, QUERY]),
        ("[" * 200_000 + "]" * 200_000, ["serve", "--index", out]),
        ('{"metadata_version": "1.0.0", "index": {"table": "chunks"}}', ["serve", "--index", out]),
        ("[1]", ["audit", "--out", out]),
    ):
        (out / "metadata.json").write_text(text)
        result = docs_mcp(*args, timeout=60)
        assert result.returncode == 1, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "metadata.json" in lines[0], (args, lines)


@pytest.mark.slow
@pytest.mark.parametrize("schema", [SCHEMA_VERSION - 1, SCHEMA_VERSION + 1, None], ids=["older", "newer", "absent"])
def test_an_index_of_another_schema_version_is_refused_in_one_line(
    built: tuple[Path, Path, list[str]], tmp_path: Path, schema: int | None
) -> None:
    """Readers refuse it naming the build that rewrites it; that build warns and rebuilds over it."""
    docs, good, expected = built
    out = tmp_path / "out"
    shutil.copytree(good, out)
    meta = json.loads((out / "metadata.json").read_text())
    del meta["schema_version"]
    (out / "metadata.json").write_text(json.dumps(meta if schema is None else {**meta, "schema_version": schema}))
    for args in (["search", "--index", out, QUERY], ["serve", "--index", out]):
        result = docs_mcp(*args, timeout=60)
        assert result.returncode == 1, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "schema_version" in lines[0], (args, lines)
        assert f"`docs-mcp build --docs-dir DOCS --index {out}`" in lines[0], lines

    rebuilt = docs_mcp(*build_args(docs, out))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "warn:" in rebuilt.stderr and "schema_version" in rebuilt.stderr and "index unchanged" not in rebuilt.stderr
    assert json.loads((out / "metadata.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert search_ids(out, QUERY) == expected


@pytest.mark.slow
def test_force_rewrites_the_table_even_when_nothing_changed(
    built: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    docs, good, expected = built
    out = tmp_path / "out"
    shutil.copytree(good, out)
    before = published(out)
    result = docs_mcp(*build_args(docs, out), "--force")
    assert result.returncode == 0, result.stderr
    assert "index unchanged" not in result.stderr and "re-parsing" not in result.stderr
    after = published(out)
    assert after["version"] > before["version"] and after["content_hash"] == before["content_hash"]
    assert search_ids(out, QUERY) == expected
    # Without --force the same build is a no-op.
    plain = docs_mcp(*build_args(docs, out))
    assert "index unchanged" in plain.stderr and published(out)["version"] == after["version"]


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("damage", [drop_lancedb, drop_data_file, name_missing_version], ids=lambda f: f.__name__)
async def test_reading_a_damaged_index_is_one_clear_error(
    damage: Callable[[Path], None], built, tmp_path: Path
) -> None:
    """Before the next build repairs it, search and search_docs say what is wrong and how to fix it."""
    from mcp import Client

    from docs_mcp_core.server import create_server

    _, good, _ = built
    out = tmp_path / "out"
    shutil.copytree(good, out)
    damage(out)
    result = docs_mcp("search", "--index", str(out), QUERY)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: the index at {out} cannot be read (")
    assert f"docs-mcp build --docs-dir DOCS --index {out}" in result.stderr
    async with Client(create_server(out).server) as client:
        answer = await client.call_tool("search_docs", {"query": QUERY})
    assert answer.is_error and "cannot be read" in answer.content[0].text and "docs-mcp build" in answer.content[0].text


@pytest.mark.slow
def test_embedding_dimensions_that_disagree_with_the_table_are_one_line(tmp_path: Path) -> None:
    """metadata.json's embedding.dimensions out of range, or not the table's: one line, then the build repairs it."""
    docs = Path(__file__).resolve().parents[2] / "examples" / "parcelly-docs"
    out = tmp_path / "out"
    args = [*build_args(docs, out, provider="hash"), "--embedding-dimensions", "32"]
    assert docs_mcp(*args).returncode == 0
    good = (out / "metadata.json").read_text()
    for dims, said in ((16, "says the vectors have 16 dimensions, the table's have 32"), (100_000_000, "embedding")):
        meta = json.loads(good)
        meta["embedding"]["dimensions"] = dims
        (out / "metadata.json").write_text(json.dumps(meta))
        result = docs_mcp("search", "--index", out, QUERY)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert said in lines[0] and ("docs-mcp build" in lines[0] or "rebuild" in lines[0]), lines
    rebuilt = docs_mcp(*args)
    assert rebuilt.returncode == 0 and "warn:" in rebuilt.stderr, rebuilt.stderr
    assert docs_mcp("search", "--index", out, QUERY).returncode == 0
