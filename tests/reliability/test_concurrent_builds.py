"""One build per output: a second build fails at once and pays nothing; no state ever needs --rebuild-cache."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_core.embedding.cache import _open
from docs_mcp_core.output.lock import build_lock
from docs_mcp_pipeline import build_definitions

from ..conftest import EXAMPLE_CHUNKS, write
from ..fakes.openai_server import FakeEmbeddingServer
from ..pipeline.conftest import write_config

LOCKED = "another docs-mcp build is writing to"
BATCH = 4
REQUESTS = -(-EXAMPLE_CHUNKS // BATCH)  # one request per batch, with concurrency 1


@pytest.fixture
def fake():
    with FakeEmbeddingServer(dims=32) as server:
        yield server


def build_args(docs: Path, out: Path, server: FakeEmbeddingServer) -> list[str]:
    return [
        sys.executable,
        "-m",
        "docs_mcp_core.cli",
        "build",
        "--docs-dir",
        str(docs),
        "--out",
        str(out),
        "--embedding-provider",
        "openai",
        "--embedding-model",
        "fake-embed",
        "--embedding-dimensions",
        "32",
        "--embedding-base-url",
        server.url,
        "--embedding-batch-size",
        str(BATCH),
        "--embedding-concurrency",
        "1",
        "--embedding-max-retries",
        "0",
    ]


def run_build(docs: Path, out: Path, server: FakeEmbeddingServer) -> subprocess.CompletedProcess[str]:
    return subprocess.run(build_args(docs, out, server), capture_output=True, text=True, timeout=120)


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert condition()


@pytest.mark.slow
def test_second_build_fails_at_once_and_pays_nothing(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer
) -> None:
    out = tmp_path / "out"
    fake.latency = 0.3  # build A is still embedding when B starts
    a = subprocess.Popen(build_args(example_docs, out, fake), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: fake.requests >= 1)
        b = run_build(example_docs, out, fake)
        fake.latency = 0.0
        a_err = a.communicate(timeout=120)[1]
    finally:
        if a.poll() is None:
            a.kill()
    assert b.returncode == 1, b.stderr
    assert b.stderr.splitlines() == [f"error: {LOCKED} {out}; wait for it to finish or build into another --index"]
    assert a.returncode == 0, a_err
    # B parsed nothing and paid for nothing: every request and input on the server is A's, once.
    assert fake.requests == REQUESTS
    assert len(fake.inputs) == len(set(fake.inputs)) == EXAMPLE_CHUNKS
    fake.reset_counts()
    c = run_build(example_docs, out, fake)
    assert c.returncode == 0, c.stderr
    assert fake.requests == 0 and f"embedding cache: {EXAMPLE_CHUNKS} hits, 0 misses" in c.stderr


@pytest.mark.slow
def test_a_killed_build_leaves_no_lock_behind(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    out = tmp_path / "out"
    fake.latency = 0.3
    a = subprocess.Popen(build_args(example_docs, out, fake), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: fake.requests >= 5)
    a.send_signal(signal.SIGKILL)
    a.wait()
    assert (out / ".docs-mcp" / "build.lock").exists()  # the file stays; the kernel dropped the flock
    fake.latency = 0.0
    time.sleep(0.4)  # the request in flight at the kill finishes on the server
    fake.reset_counts()
    result = run_build(example_docs, out, fake)
    assert result.returncode == 0, result.stderr
    assert "reused" in result.stderr and len(fake.inputs) < EXAMPLE_CHUNKS  # what A paid for is not paid again


@pytest.mark.slow
def test_duplicate_fingerprints_in_the_pending_store_need_no_rebuild_cache(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer
) -> None:
    """Two racing builds used to append the same vectors to .pending; every later build then failed."""
    out = tmp_path / "out"
    assert run_build(example_docs, out, fake).returncode == 0
    for i in range(30):
        write(example_docs, f"new/page-{i}.md", f"# Page {i}\n\nBrand new content number {i}.\n")
    fake.fail_from_request = 4  # three batches of four land in .pending, then the quota runs out
    fake.reset_counts()
    failed = run_build(example_docs, out, fake)
    assert failed.returncode == 1 and "embedded 12 of 30 missing chunks" in failed.stderr
    pending = _open(out / ".embedding-cache.pending")
    rows = pending.to_arrow()
    for _ in range(3):  # the same fingerprints, appended again and again
        pending.add(rows)
    assert pending.count_rows() == 4 * 12
    fake.fail_from_request = None
    fake.reset_counts()
    result = run_build(example_docs, out, fake)
    assert result.returncode == 0, result.stderr
    assert "reused 12 vectors kept by an earlier unfinished build" in result.stderr
    assert len(fake.inputs) == 30 - 12
    meta = json.loads((out / ".embedding-cache" / "cache-meta.json").read_text())
    assert meta["entries"] == EXAMPLE_CHUNKS + 30 and not (out / ".embedding-cache.pending").exists()
    fake.reset_counts()
    assert run_build(example_docs, out, fake).returncode == 0 and fake.requests == 0


@pytest.fixture
def example_config(tmp_path: Path, example_docs: Path) -> Path:
    """A run fails at once on a locked output, as `docs-mcp build` does (lock_wait_seconds: 0; waiting
    is tests/pipeline/test_version_lock_wait.py's)."""
    path = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "example",
                "source": {"path": str(example_docs)},
                "out": str(tmp_path / "indexes" / "example"),
                "embedding": {"provider": "hash", "dimensions": 64},
            }
        ],
    )
    path.write_text(path.read_text() + "lock_wait_seconds: 0\n")
    return path


def materialize(defs: dg.Definitions, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*(defs.assets or []), *(defs.asset_checks or [])],
        partition_key="example",
        instance=instance,
        resources=defs.resources,
        raise_on_error=False,
    )


@pytest.mark.slow
def test_dagster_run_fails_at_once_while_the_output_is_locked(example_config: Path, tmp_path: Path) -> None:
    defs = build_definitions(str(example_config))
    out = tmp_path / "indexes" / "example"
    instance = dg.DagsterInstance.ephemeral()
    with build_lock(out):  # another build (a CLI build, another run) holds the output
        result = materialize(defs, instance)
    assert not result.success
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["staged_docs"]  # nothing after it ran
    assert f"{LOCKED} {out}" in failures[0].step_failure_data.user_failure_data.description
    assert not (out / ".docs-mcp" / "staged").exists() and not (out / "metadata.json").exists()
    # The failed run kept no lock; a run holds it from its first step to its end, then releases it.
    assert materialize(defs, instance).success
    with build_lock(out):
        pass


@pytest.mark.slow
def test_cli_build_fails_while_a_dagster_run_holds_the_output(
    example_config: Path, tmp_path: Path, example_docs: Path
) -> None:
    """The run's lock lasts from staged_docs to cache_audit, not only around the table write."""
    defs = build_definitions(str(example_config))
    out = tmp_path / "indexes" / "example"
    seen: list[str] = []

    @dg.asset(partitions_def=defs.assets[0].partitions_def, deps=["chunks"])  # type: ignore[index]
    def probe() -> None:
        """Runs after chunks, in the same run: a CLI build of the same output must be refused."""
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "docs_mcp_core.cli",
                "build",
                "--docs-dir",
                str(example_docs),
                "--out",
                str(out),
                "--embedding-provider",
                "hash",
                "--embedding-dimensions",
                "64",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        seen.append(f"{proc.returncode} {proc.stderr.strip()}")

    assets = [a for a in defs.assets if a.key.path[-1] in ("staged_docs", "chunks")]  # type: ignore[union-attr]
    result = dg.materialize(
        [*assets, probe], partition_key="example", instance=dg.DagsterInstance.ephemeral(), resources=defs.resources
    )
    assert result.success
    assert seen == [f"1 error: {LOCKED} {out}; wait for it to finish or build into another --index"]


@pytest.mark.slow
def test_a_run_lease_keeps_other_runs_out_until_its_run_is_over(example_config: Path, tmp_path: Path) -> None:
    """Under an executor with one process per step the flock lasts a step; the lease covers the gaps."""
    defs = build_definitions(str(example_config))
    out = tmp_path / "indexes" / "example"
    instance = dg.DagsterInstance.ephemeral()
    assert materialize(defs, instance).success
    other = instance.add_run(dg.DagsterRun(job_name="docs_index_job", status=dg.DagsterRunStatus.STARTED))
    lease = out / ".docs-mcp" / "build-run.json"
    lease.write_text(json.dumps({"run_id": other.run_id, "host": socket.gethostname(), "pid": os.getpid()}))
    refused = materialize(defs, instance)
    failure = next(e for e in refused.all_events if e.event_type_value == "STEP_FAILURE")
    assert f"{LOCKED} {out} (Dagster run {other.run_id})" in failure.step_failure_data.user_failure_data.description
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a run worker killed before Dagster marked its run failed
    lease.write_text(json.dumps({"run_id": other.run_id, "host": socket.gethostname(), "pid": gone.pid}))
    assert materialize(defs, instance).success
    assert json.loads(lease.read_text())["run_id"] != other.run_id
