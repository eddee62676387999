"""Parallel parsing gives exactly the serial build, and a no-op build stays at its floor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli_build(docs: Path, out: Path, *options: str, python: tuple[str, ...] = ()) -> str:
    """`docs-mcp build` (text-only) in a fresh process; returns its stderr."""
    cmd = [
        sys.executable,
        *python,
        "-m",
        "docs_mcp_core.cli",
        "build",
        "--docs-dir",
        str(docs),
        "--out",
        str(out),
        "--embedding-provider",
        "none",
        *options,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "LANCEDB_LOG": "error"})
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def parsed_line(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith("parsed "))


def without_time(metadata: Path) -> dict:
    data = json.loads(metadata.read_text())
    data["stats"].pop("indexed_at")
    return data


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["dub_ts_docs", "example_docs"])
def test_parallel_build_writes_the_serial_build_byte_for_byte(
    corpus: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    docs = request.getfixturevalue(corpus)
    outs = {n: tmp_path / f"out-{n}" for n in (1, 2, 3)}
    logs = {n: cli_build(docs, out, "--workers", str(n)) for n, out in outs.items()}
    assert "worker processes" not in parsed_line(logs[1])
    assert "(2 worker processes)" in parsed_line(logs[2])  # the parallel path ran, with that many processes
    assert "(3 worker processes)" in parsed_line(logs[3])
    serial = (outs[1] / "chunks.json").read_bytes()
    for n in (2, 3):
        assert (outs[n] / "chunks.json").read_bytes() == serial
        assert without_time(outs[n] / "metadata.json") == without_time(outs[1] / "metadata.json")
        state = [json.loads((out / ".docs-mcp" / "files.json").read_text())["files"] for out in (outs[1], outs[n])]
        assert state[0] == state[1]  # same per-file keys, counts, metadata and warnings
        warnings = [[line for line in logs[k].splitlines() if line.startswith("warn:")] for k in (1, n)]
        assert warnings[0] == warnings[1]


@pytest.mark.slow
def test_no_op_build_reads_no_chunks_and_imports_no_table_libraries(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cli_build(example_docs, out)
    chunks = out / "chunks.json"
    before = chunks.stat()
    log = cli_build(example_docs, out, python=("-X", "importtime"))
    imported = {line.rsplit("|", 1)[-1].strip() for line in log.splitlines() if line.startswith("import time:")}
    assert not {"lancedb", "pyarrow", "numpy"} & imported, sorted({"lancedb", "pyarrow", "numpy"} & imported)
    assert "index unchanged: the published table version is kept" in log
    after = chunks.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    page = example_docs / "guides" / "errors.md"
    page.write_text(page.read_text() + "\nOne more line.\n")
    log = cli_build(example_docs, out)
    assert "(17 unchanged files reused, " in parsed_line(log)
    assert "One more line." in chunks.read_text()
