"""kill -9 at every build phase: the published index stays servable and consistent, and the next
good build removes every leftover (temp files, never-published table versions and their files)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from docs_mcp_core.failpoints import ENV
from docs_mcp_core.fsutil import dir_size
from docs_mcp_core.indexing.file_reuse import pending_paths, published_files
from docs_mcp_core.indexing.table import open_table
from docs_mcp_core.output.table_files import manifests
from docs_mcp_core.search import run_search
from tests.conftest import EXAMPLE_DOCS
from tests.reliability.clitools import CLI, build_args, docs_mcp, published, wait_paused

# See the failpoints.pause calls in indexing/lancedb_index.py, indexing/metadata.py, indexing/table.py and fsutil.write_atomic (temp file written, not renamed).
# The last kill stops a prune half way (manifests gone, files not yet): the final build, a no-op, must finish it.
PLAN = [None] + ["write", "written", "publish", "prune"] * 2 + ["replace-chunks.json", "replace-metadata.json", "prune"]


def start_build(docs: Path, out: Path, pause_at: str | None) -> subprocess.Popen:
    env = dict(os.environ)
    if pause_at:
        env[ENV] = f"{pause_at}:60"
    return subprocess.Popen(
        [*CLI, *map(str, build_args(docs, out, "hash"))],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def kill_at(proc: subprocess.Popen, phase: str) -> None:
    """Kill -9 the build once it reports it reached `phase`."""
    wait_paused(proc, phase)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def assert_servable_and_consistent(out: Path, phase: str) -> None:
    index = published(out)
    hits = run_search(out, "idempotency key").hits
    assert hits and hits[0]["filepath"] == "guides/idempotency.md"
    served = sorted(open_table(out, index["version"]).to_arrow().column("chunk_id").to_pylist())
    chunks_file, state_file = published_files(out, index["chunks_sha256"])
    assert chunks_file is not None and state_file is not None, f"no chunks.json for the published index ({phase})"
    assert sorted(c["chunk_id"] for c in json.loads(chunks_file.read_text())) == served
    if phase != "publish":  # only a kill between metadata.json and the move leaves the published one aside
        assert chunks_file == out / "chunks.json"


@pytest.mark.slow
def test_kills_at_every_phase_leave_a_servable_index_and_nothing_behind(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "out"
    shutil.copytree(EXAMPLE_DOCS, docs)
    first = docs_mcp(*build_args(docs, out, "hash"))
    assert first.returncode == 0, first.stderr
    clean_size, clean_table = dir_size(out), dir_size(out / ".lancedb")
    rng = random.Random(11)
    for n, phase in enumerate(PLAN):
        # Every build has something new to write, so it goes through each phase.
        (docs / "guides" / "kill.md").write_text(f"# Kill round {n}\n\nround {n} text\n")
        proc = start_build(docs, out, phase)
        if phase:
            kill_at(proc, phase)
        else:
            time.sleep(rng.uniform(0.5, 2.5))
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        assert_servable_and_consistent(out, phase or "publish")

    good = docs_mcp(*build_args(docs, out, "hash"))
    assert good.returncode == 0 and "index unchanged" in good.stderr, good.stderr
    assert_servable_and_consistent(out, "after")
    index = published(out)
    assert [p for p in out.rglob("*.tmp")] == []
    assert not any(p.exists() for p in pending_paths(out))
    assert sorted(manifests(out, "chunks")) == sorted(
        {index["version"], index.get("previous_version", index["version"])}
    )
    table = dir_size(out / ".lancedb")
    print(
        f"disk: clean build {clean_size} bytes (table {clean_table}), after {len(PLAN)} kills and one good build "
        f"{dir_size(out)} (table {table})"
    )
    assert dir_size(out) <= 2 * clean_size
    assert table <= 2.5 * clean_table  # the published version and the one before it, nothing else
