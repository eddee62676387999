"""Runs of several versions of one corpus started side by side (a UI backfill: its runs carry no tag the
queue could limit per corpus) wait for the corpus's build lock in turn instead of failing on it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.output.lock import BuildLock
from docs_mcp_pipeline import build_definitions
from docs_mcp_pipeline.partitions import VERSIONS_PARTITIONS

from ..conftest import REPO
from ..versions.conftest import TAGS, sqlmodel_repo  # noqa: F401 - the session fixture
from .test_pipeline import materialize
from .test_scale_out import launch_backfill, wait_for_runs
from .test_webserver import free_port, graphql

pytestmark = pytest.mark.slow

WAITING = "waiting for another docs-mcp build to finish with"


def write_config(path: Path, repo: Path, wait: int | None = None) -> Path:
    path.write_text(
        "corpora:\n"
        "  - name: sqlmodel\n"
        f"    source: {{git: {repo}, subdir: docs}}\n"
        "    out: out/sqlmodel\n"
        "    embedding: {provider: hash}\n"
        '    versions: {tags: "0.0.*", keep: 2}\n' + (f"lock_wait_seconds: {wait}\n" if wait is not None else "")
    )
    return path


def test_versions_launched_side_by_side_build_one_after_another(
    sqlmodel_repo: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Two `dg launch` runs of two versions at once, while another build holds the corpus's lock: both
    say they wait, and both succeed once it is released (before: both failed at once on the lock)."""
    config = write_config(tmp_path / "docs-mcp.yaml", sqlmodel_repo)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    keys = [f"sqlmodel@{t}" for t in TAGS[-2:]]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(VERSIONS_PARTITIONS, keys)
    env = {**os.environ, "DAGSTER_HOME": str(home), "DOCS_MCP_CONFIG": str(config)}
    out = tmp_path / "out" / "sqlmodel"
    dg_bin = str(Path(sys.executable).parent / "dg")
    held = BuildLock(out)  # another build of the corpus (the CLI) holds it
    logs = [tmp_path / f"run-{i}.log" for i in range(len(keys))]
    procs = []
    try:
        for key, log in zip(keys, logs):
            with open(log, "w") as fh:
                procs.append(
                    subprocess.Popen(
                        [dg_bin, "launch", "-m", "docs_mcp_pipeline", "--job", "docs_index_job", "--partition", key],
                        cwd=tmp_path,
                        env=env,
                        stdout=fh,
                        stderr=subprocess.STDOUT,
                    )
                )
        for _ in range(600):  # both runs reach the lock (a bound on the loop, not a time asserted)
            if all(WAITING in log.read_text() for log in logs) or any(p.poll() is not None for p in procs):
                break
            time.sleep(0.5)
        assert all(p.poll() is None for p in procs), [log.read_text()[-3000:] for log in logs]
        assert all(WAITING in log.read_text() for log in logs)
    finally:
        held.release()
        for p in procs:
            p.wait(timeout=600)
    outputs = [log.read_text() for log in logs]
    assert [p.returncode for p in procs] == [0, 0], [o[-3000:] for o in outputs]
    assert not any("another docs-mcp build is writing to" in o for o in outputs)
    # the run that took the lock second said whose build it waited for
    named = [
        f"{key}: waiting for the build of {other} (Dagster run " in output
        for key, other, output in zip(keys, reversed(keys), outputs)
    ]
    assert sorted(named) == [False, True], [o[-3000:] for o in outputs]
    manifest = json.loads(OutputLayout(out).versions_manifest.read_text())
    assert sorted(v["label"] for v in manifest["versions"]) == sorted(TAGS[-2:])
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_run_records()
        assert [r.dagster_run.status for r in runs] == [dg.DagsterRunStatus.SUCCESS] * 2


def test_a_run_gives_up_after_lock_wait_seconds(sqlmodel_repo: Path, tmp_path: Path) -> None:  # noqa: F811
    """The wait is bounded: past `lock_wait_seconds` the run fails with the lock's line, naming the setting."""
    config = write_config(tmp_path / "docs-mcp.yaml", sqlmodel_repo, wait=1)
    defs = build_definitions(str(config))
    key = f"sqlmodel@{TAGS[-1]}"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(VERSIONS_PARTITIONS, [key])
        held = BuildLock(tmp_path / "out" / "sqlmodel")
        try:
            result = materialize(defs, key, instance, raise_on_error=False)
        finally:
            held.release()
        assert not result.success
        failure = next(e for e in result.all_events if e.is_step_failure)
        message = failure.step_failure_data.user_failure_data.description  # type: ignore[union-attr]
        assert message.startswith("another docs-mcp build is writing to ")
        assert message.endswith("(gave up after waiting 1 s: lock_wait_seconds in docs-mcp.yaml)")
        logged = [
            e.message
            for e in instance.all_logs(result.run_id)
            if e.user_message and "waiting for another docs-mcp build" in e.user_message
        ]
        assert len(logged) == 1  # said once, not once per poll


def test_a_run_waits_for_the_lease_of_a_run_still_going(example_config: Path, tmp_path: Path) -> None:
    """Under an executor with one process per step, a run between steps holds the lease, not the flock: a
    second run waits for it too, names it, and goes on once Dagster says it finished."""
    defs = build_definitions(str(example_config))
    out = tmp_path / "indexes" / "example"
    with dg.instance_for_test() as instance:
        assert materialize(defs, "example", instance).success
        other = instance.add_run(
            dg.DagsterRun(
                job_name="docs_index_job", status=dg.DagsterRunStatus.STARTED, tags={"dagster/partition": "example"}
            )
        )
        lease = OutputLayout(out).build_lease
        lease.write_text(json.dumps({"run_id": other.run_id, "host": socket.gethostname(), "pid": os.getpid()}))
        line = f"example: waiting for the build of example (Dagster run {other.run_id[:8]}) to finish with {out}"
        seen: list[str] = []

        def finish_other_once_waited_for() -> None:
            for _ in range(1200):  # a bound on the loop, not a time asserted
                runs = [r for r in instance.get_runs() if r.run_id != other.run_id and not r.is_finished]
                logs = [e.user_message for r in runs for e in instance.all_logs(r.run_id)]
                seen.extend(m for m in logs if m.startswith("example: waiting"))
                if seen:
                    break
                time.sleep(0.1)
            instance.report_run_failed(other)

        watcher = threading.Thread(target=finish_other_once_waited_for)
        watcher.start()
        try:
            result = materialize(defs, "example", instance, raise_on_error=False)
        finally:
            watcher.join()
        assert result.success
        assert seen and seen[0].startswith(line), seen
        assert json.loads(lease.read_text())["run_id"] == result.run_id


def test_a_ui_backfill_of_two_versions_builds_both(sqlmodel_repo: Path, tmp_path: Path) -> None:  # noqa: F811
    """What the UI's "Materialize" over two version partitions sends, to a webserver whose instance launches
    runs as soon as they are submitted: the runs carry only `dagster/partition`, start side by side, wait
    for the corpus's lock (held by another build until both wait), and both succeed."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(REPO / "workspace.yaml", work / "workspace.yaml")
    config = write_config(work / "docs-mcp.yaml", sqlmodel_repo)
    (work / "dagster.yaml").write_text(
        "run_coordinator:\n  module: dagster._core.run_coordinator\n  class: DefaultRunCoordinator\n"
        "telemetry:\n  enabled: false\n"
    )
    keys = [f"sqlmodel@{t}" for t in TAGS[-2:]]
    out = work / "out" / "sqlmodel"
    env = {**os.environ, "DAGSTER_HOME": str(work), "DOCS_MCP_CONFIG": str(config)}
    port = free_port()
    with dg.DagsterInstance.from_config(str(work)) as instance:
        instance.add_dynamic_partitions(VERSIONS_PARTITIONS, keys)
        with (tmp_path / "webserver.log").open("wb") as sink:
            server = subprocess.Popen(
                [str(Path(sys.executable).parent / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port)]
                + ["-w", "workspace.yaml"],
                cwd=work,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        held = BuildLock(out)
        try:
            for _ in range(240):
                assert server.poll() is None, (tmp_path / "webserver.log").read_text()[-3000:]
                try:
                    if graphql(port, "{ assetNodes { id } }").get("data", {}).get("assetNodes"):
                        break
                except OSError:
                    pass
                time.sleep(0.5)
            runs = launch_backfill(port, keys)
            assert len(runs) == 2
            for _ in range(1200):  # both runs reach the lock (a bound on the loop, not a time asserted)
                said = [any(WAITING in (e.user_message or "") for e in instance.all_logs(run)) for run in runs]
                if all(said) or any(instance.get_run_by_id(run).is_finished for run in runs):  # type: ignore[union-attr]
                    break
                time.sleep(0.5)
            assert all(said), [instance.get_run_by_id(run).status for run in runs]  # type: ignore[union-attr]
            held.release()
            records = wait_for_runs(instance, 2, server)
        finally:
            held.release()
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
        assert {r.dagster_run.tags["dagster/partition"] for r in records} == set(keys)
        assert all("docs_mcp/corpus" not in r.dagster_run.tags for r in records)  # nothing the queue could limit
        assert [r.dagster_run.status for r in records] == [dg.DagsterRunStatus.SUCCESS] * 2
    manifest = json.loads(OutputLayout(out).versions_manifest.read_text())
    assert sorted(v["label"] for v in manifest["versions"]) == sorted(TAGS[-2:])
