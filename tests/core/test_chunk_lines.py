"""A build streams its chunks (indexing/chunk_lines.py): none are held after the chunk step, and the
table, written from chunks.json a file at a time, still has its rows sorted by chunk ID.

A file's chunk IDs are its path or `path#…`, so files whose paths extend another's with a
character that sorts before `#` (a space, `!`) have IDs inside the other's range: `a.md`
split into parts by `chunk_by: file` has `a.md` and `a.md#_part-2`, and `a.md x.md` sorts
between them. Neither path order nor the order of `path + "#"` gives chunk-ID order then.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import lancedb
import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.chunk_lines import chunk_line, head, parse_line
from docs_mcp_core.indexing.chunks import chunk_corpus
from docs_mcp_core.output.chunk import Chunk
from docs_mcp_core.output.layout import OutputLayout

from .test_parallel_build import cli_build

PARAGRAPH = "Retries back off exponentially between attempts, up to the configured limit of the client.\n\n"
FILES = {
    "a.md": "# A\n\n" + PARAGRAPH * 8,  # chunk_by: file, split into parts: IDs a.md, a.md#_part-2, …
    "a.md x.md": "# AX\n\nText of a.md x.md.\n",  # chunk_by: file, one part: ID `a.md x.md`
    "a.md !.md": "# Bang\n\n## First\n\nOne.\n\n## Second\n\nTwo.\n",
    "a.md.md": "## Double\n\nText.\n",
    "a b.md": "## Space\n\nText.\n",
    "a-b.md": "## Hyphen\n\nText.\n",
    "a/b.md": "## Nested\n\nText.\n",
    "d/c.md": "# C\n\nOne part only, by file.\n",  # ID `d/c.md`, below `d/c.md b.md#…` although key order is not
    "d/c.md b.md": "## Below\n\nText.\n",
}
MANIFEST = {
    "version": "1",
    "strategy": {"chunk_by": "h2"},
    "overrides": [
        {"pattern": "a.md", "strategy": {"chunk_by": "file", "max_chunk_size": 200}},
        {"pattern": "a.md x.md", "strategy": {"chunk_by": "file"}},
        {"pattern": "d/c.md", "strategy": {"chunk_by": "file"}},
    ],
}


def write_corpus(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".docs-mcp.json").write_text(json.dumps(MANIFEST))
    return root


def table_rows(out: Path) -> list[dict]:
    meta = json.loads(OutputLayout(out).metadata.read_text())
    table = lancedb.connect(str(OutputLayout(out).lancedb)).open_table("chunks")
    table.checkout(meta["index"]["version"])
    return table.to_arrow().select(["chunk_id", "filepath", "content", "chunk_index"]).to_pylist()


def check_output(out: Path) -> list[dict]:
    chunks = json.loads(OutputLayout(out).chunks.read_text())
    assert [(c["filepath"], c["chunk_index"]) for c in chunks] == sorted(
        (c["filepath"], c["chunk_index"]) for c in chunks
    )
    rows = table_rows(out)
    assert [r["chunk_id"] for r in rows] == sorted(c["chunk_id"] for c in chunks)
    by_id = {c["chunk_id"]: c for c in chunks}
    assert all(
        r["content"] == by_id[r["chunk_id"]]["content"] and r["filepath"] == by_id[r["chunk_id"]]["filepath"]
        for r in rows
    )
    return chunks


@pytest.mark.slow
def test_rows_are_in_chunk_id_order_when_file_id_ranges_interleave(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    out = tmp_path / "out"
    cli_build(docs, out, "--workers", "1")
    chunks = check_output(out)
    ids = sorted(c["chunk_id"] for c in chunks)
    owner = [next(c["filepath"] for c in chunks if c["chunk_id"] == i) for i in ids]
    # the corpus does exercise the edge: a.md's IDs are not one run in chunk-ID order, and d/c.md's
    # only ID sorts before the other file's although `d/c.md b.md#` < `d/c.md#`
    assert (
        owner[ids.index("a.md") + 1] == "a.md !.md"
        and "a.md#_part-2" in ids
        and ids.index("a.md x.md") < ids.index("a.md#_part-2")
    )
    assert ids.index("d/c.md") < ids.index("d/c.md b.md#below")

    # a rebuild that re-parses one file and reuses the rest writes what a fresh build writes
    (docs / "a b.md").write_text("## Space\n\nChanged text.\n")
    log = cli_build(docs, out)
    assert f"({len(FILES) - 1} unchanged files reused, " in log
    fresh = tmp_path / "fresh"
    cli_build(docs, fresh)
    assert OutputLayout(out).chunks.read_bytes() == OutputLayout(fresh).chunks.read_bytes()
    check_output(out)
    assert table_rows(out) == table_rows(fresh)


def test_a_lines_id_and_path_are_read_without_decoding_it_whatever_they_hold() -> None:
    names = ["a.md", 'a "quoted", "filepath": "x.md', "back\\slash\\", "ünï cödé ✓.md", "tab\there.md", 'q".md']
    for name in names:
        chunk = Chunk(f"{name}#h", name, 'the "heading": "x"', 2, name, "body", "body", 0, {"k": "v"})
        line = chunk_line(chunk)
        assert head(line) == (chunk.chunk_id, chunk.filepath)
        assert parse_line(line) == chunk


def live_chunks() -> int:
    gc.collect()
    return sum(type(o) is Chunk for o in gc.get_objects())  # isinstance would touch torch's deprecated proxies


@pytest.mark.slow
def test_the_chunk_step_holds_no_chunk_in_memory_cold_or_reusing(example_docs: Path, tmp_path: Path) -> None:
    held = live_chunks()  # other tests' fixtures in this process may hold chunks: count only this test's
    cold = chunk_corpus(example_docs, workers=1, spill_dir=tmp_path)
    assert cold.chunk_count > 50 and live_chunks() == held  # they wait on disk, not in the process
    ids = [c.chunk_id for c in cold.iter_chunks()]
    assert len(ids) == cold.chunk_count
    del cold

    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")), workers=1)
    page = example_docs / "guides" / "errors.md"
    page.write_text(page.read_text() + "\nOne more line.\n")
    warm = chunk_corpus(example_docs, reuse_from=out, workers=1)
    assert warm.reused == len(warm.files) - 1 and live_chunks() == held  # unchanged files' chunks are not loaded
    assert [c.chunk_id for c in warm.iter_chunks()] == ids
