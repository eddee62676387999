"""A Markdown file that is one very long line: cut into bounded chunks in work linear in its length,
with nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_core.chunking.splitting import _cut_line
from docs_mcp_core.corpus.manifest import DEFAULT_MAX_CHUNK_SIZE
from docs_mcp_core.corpus.markdown import MAX_HEADING_CHARS

from ..conftest import write
from .clitools import build_args, docs_mcp


class CountingLine(str):
    """A line that counts the characters every slice of it copies (slices are CountingLines too)."""

    copied = 0

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        piece = super().__getitem__(key)
        CountingLine.copied += len(piece)
        return CountingLine(piece)


@pytest.mark.parametrize("unit", ["longword ", "x"])  # cut at spaces, and a line with none
def test_cutting_a_long_line_copies_each_character_once(unit: str) -> None:
    line = unit * (2_000_000 // len(unit))
    CountingLine.copied = 0
    pieces = _cut_line(CountingLine(line), DEFAULT_MAX_CHUNK_SIZE)
    assert "".join(pieces) == line and max(map(len, pieces)) <= DEFAULT_MAX_CHUNK_SIZE
    # slicing off the rest at every cut copied ~len²/(2 x width) characters: 100 million here
    assert CountingLine.copied <= 2 * len(line)


@pytest.mark.slow
def test_a_file_of_one_long_line_builds_into_bounded_chunks(tmp_path: Path) -> None:
    words = 400_000  # 3.6 MB on one line
    docs = tmp_path / "docs"
    write(docs, "long.md", "# Long\n\n" + "longword " * words + "\n")
    write(docs, "dense.md", "# Dense\n\n" + "x" * 1_000_000 + "\n")
    out = tmp_path / "out"
    proc = docs_mcp(*build_args(docs, out), timeout=600)
    assert proc.returncode == 0, proc.stderr
    chunks = json.loads((out / "chunks.json").read_text())
    assert all(len(c["content"]) <= DEFAULT_MAX_CHUNK_SIZE for c in chunks)
    long = [c for c in chunks if c["filepath"] == "long.md"]
    assert sum(c["content"].count("longword") for c in long) == words  # nothing lost at the cuts
    assert sum(c["content"].count("x") for c in chunks if c["filepath"] == "dense.md") == 1_000_000


@pytest.mark.slow
@pytest.mark.parametrize("before,line", [("", 1), ("# Title\n\nIntro.\n\n## ", 5)], ids=["title", "h2"])
def test_a_heading_of_one_very_long_line_is_cut_in_what_each_chunk_repeats(
    tmp_path: Path, before: str, line: int
) -> None:
    words = 100_000  # 900 KB on one heading line: every chunk of its section repeated all of it
    docs = tmp_path / "docs"
    page = write(docs, "head.md", (before or "# ") + "headword " * words + "\n\nBody text.\n")
    out = tmp_path / "out"
    proc = docs_mcp(*build_args(docs, out), timeout=600)
    assert proc.returncode == 0, proc.stderr
    chunks = json.loads((out / "chunks.json").read_text())
    assert len(chunks) > 20 and all(len(c["heading"]) <= MAX_HEADING_CHARS for c in chunks)
    assert all(len(c["breadcrumb"]) <= 2 * MAX_HEADING_CHARS and len(c["chunk_id"]) <= 600 for c in chunks)
    assert sum(c["content"].count("headword") for c in chunks) == words  # the text itself is all there
    # what a build writes grows with the file, not with the file times its chunks
    assert (out / "chunks.json").stat().st_size < 4 * page.stat().st_size
    assert f"warn: head.md:{line}: heading of {9 * words - 1:,} characters: its chunks' heading" in proc.stderr
