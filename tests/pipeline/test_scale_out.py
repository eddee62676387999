"""Many corpora in one Dagster instance, with the repository's own dagster.yaml.

`dg dev` runs the UI and the daemon. A backfill of every corpus (the documented command)
builds them side by side, one run each; asset checks are recorded per corpus; every asset
reports where its data really is. A second backfill runs with the multiprocess executor (one
process per step, as on a scale-out deployment) while another run of the same corpus is asked
for: the run queue holds that one back instead of letting it fail on the corpus's build lock.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

from ..conftest import EXAMPLE_CHUNKS, REPO, write
from .conftest import write_config
from .test_webserver import free_port, graphql

BIN = Path(sys.executable).parent
CORPORA = ("alpha", "beta")
CHECKS = 6  # four blocking checks on lancedb_index, the trust check on it, one on metadata
MULTIPROCESS = {"execution": {"config": {"multiprocess": {"start_method": {"forkserver": {}}}}}}
BACKFILL = """mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
  __typename ... on LaunchBackfillSuccess { backfillId launchedRunIds } ... on PythonError { message } } }"""


def launch_backfill(port: int, partitions: list[str], run_config: dict | None = None) -> list[str]:
    """What the UI's "Materialize all" over chosen partitions sends, with this run config."""
    params = {
        "selector": {
            "partitionSetName": "docs_index_job_partition_set",
            "repositorySelector": {"repositoryName": "__repository__", "repositoryLocationName": "docs_mcp_pipeline"},
        },
        "partitionNames": partitions,
        "runConfigData": run_config or {},
        "forceSynchronousSubmission": True,  # submit the runs now, not at the backfill daemon's next tick
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        headers={"Content-Type": "application/json"},
        data=json.dumps({"query": BACKFILL, "variables": {"params": params}}).encode(),
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        result = json.loads(response.read())["data"]["launchPartitionBackfill"]
    assert result["__typename"] == "LaunchBackfillSuccess", result
    return result["launchedRunIds"]


def wait_for_runs(instance: dg.DagsterInstance, count: int, server: subprocess.Popen) -> list[dg.RunRecord]:
    deadline = time.time() + 300
    while time.time() < deadline:
        records = instance.get_run_records()
        if len(records) >= count and all(r.dagster_run.is_finished for r in records):
            return records
        assert server.poll() is None, "dg dev exited"
        time.sleep(1)
    stuck = {
        r.dagster_run.run_id: [
            (e.step_key, e.dagster_event.event_type_value if e.dagster_event else e.user_message)
            for e in list(instance.all_logs(r.dagster_run.run_id))[-4:]
        ]
        for r in records
        if not r.dagster_run.is_finished
    }
    raise AssertionError(
        f"runs did not finish: {stuck}; {instance.event_log_storage.get_concurrency_info('embedding_api')}"
    )


def events(instance: dg.DagsterInstance, run_id: str, kind: dg.DagsterEventType) -> list[dg.EventLogEntry]:
    return list(instance.all_logs(run_id, of_type=kind))


def window(instance: dg.DagsterInstance, run_id: str, step: str) -> tuple[float, float]:
    start = next(e.timestamp for e in events(instance, run_id, dg.DagsterEventType.STEP_START) if e.step_key == step)
    end = next(e.timestamp for e in events(instance, run_id, dg.DagsterEventType.STEP_SUCCESS) if e.step_key == step)
    return start, end


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def assert_checks_per_partition(instance: dg.DagsterInstance, record: dg.RunRecord) -> None:
    corpus = record.dagster_run.tags["dagster/partition"]
    evaluations = [
        e.dagster_event.event_specific_data
        for e in events(instance, record.dagster_run.run_id, dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    ]
    assert [(e.partition, e.passed) for e in evaluations] == [(corpus, True)] * CHECKS
    # Each number labelled with its corpus, so the UI plots a series per corpus, not one across them.
    numbers = [label for e in evaluations for label, v in e.metadata.items() if isinstance(v, dg.IntMetadataValue)]
    assert numbers and all(label.endswith(f" ({corpus})") for label in numbers), numbers


@pytest.fixture
def repo(tmp_path: Path, example_docs: Path) -> Path:
    """A copy of the repository's Dagster files, with two corpora."""
    work = tmp_path / "repo"
    work.mkdir()
    for path in REPO.glob("*.yaml"):  # as the repository lays them out: dagster.yaml, workspace.yaml, docs-mcp.yaml
        shutil.copy(path, work / path.name)
    beta = tmp_path / "beta-docs"
    write(beta, ".docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h2"}}')
    for name in ("install", "usage", "faq"):
        write(beta, f"{name}.md", f"# {name.title()}\n\n## One\n\nAbout {name}.\n\n## Two\n\nMore about {name}.\n")
    write_config(
        work / "docs-mcp.yaml",
        [
            {
                "name": "alpha",
                "source": {"path": str(example_docs)},
                "embedding": {"provider": "hash", "dimensions": 64},
            },
            {"name": "beta", "source": {"path": str(beta)}, "embedding": {"provider": "hash", "dimensions": 64}},
        ],
    )
    return work


@pytest.mark.slow
def test_backfill_builds_every_corpus_side_by_side(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = repo  # DAGSTER_HOME is the repository root, where dagster.yaml is
    # Runs wait where they write their table until the test releases them (docs_mcp_core/failpoints.py),
    # each leaving a file in `paused` while it waits: two files at once show two runs side by side,
    # however the machine's load spreads them out.
    paused, release = repo.parent / "paused", repo.parent / "release"
    paused.mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DOCS_MCP_TEST_PAUSE_AT": "write",
        "DOCS_MCP_TEST_RELEASE": str(release),
        "DOCS_MCP_TEST_PAUSED_DIR": str(paused),
    }
    env.pop("DOCS_MCP_CONFIG", None)  # the code location finds docs-mcp.yaml in the workspace's directory
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    port = free_port()
    # Its log (and the runs' logs) go to a file: a pipe nobody reads fills up and blocks the runs.
    log = repo.parent / "dg-dev.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [str(BIN / "dg"), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
            cwd=repo,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.time() + 120
        answer: dict = {}
        while time.time() < deadline:
            assert server.poll() is None, "dg dev exited"
            try:
                answer = graphql(port, "{ assetNodes { id } instance { runQueueConfig { maxConcurrentRuns } } }")
                if answer.get("data", {}).get("assetNodes"):
                    break
            except OSError:
                pass
            time.sleep(0.5)
        # The running instance has the settings of the repository's dagster.yaml.
        assert answer["data"]["instance"]["runQueueConfig"]["maxConcurrentRuns"] == 4, answer

        # Every corpus in one command: one run per corpus, side by side.
        backfill = subprocess.run(
            [
                str(BIN / "dagster"),
                "job",
                "backfill",
                "-j",
                "docs_index_job",
                "--all",
                "--noprompt",
                "-w",
                "workspace.yaml",
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert backfill.returncode == 0, backfill.stdout[-2000:] + backfill.stderr[-2000:]
        deadline = time.time() + 110  # under the failpoint's own 120 s limit: nobody has gone on alone
        while len(list(paused.iterdir())) < len(CORPORA) and time.time() < deadline:
            assert server.poll() is None, "dg dev exited"
            time.sleep(0.1)
        together = sorted(p.name.split("-")[0] for p in paused.iterdir())
        release.touch()
        assert together == ["write"] * len(CORPORA), f"runs never wrote their tables at the same time: {together}"
        with dg.DagsterInstance.get() as instance:
            records = wait_for_runs(instance, 2, server)
            assert sorted(r.dagster_run.tags["dagster/partition"] for r in records) == sorted(CORPORA)
            assert {r.dagster_run.status for r in records} == {dg.DagsterRunStatus.SUCCESS}
            assert overlap(*((r.start_time, r.end_time) for r in records))  # side by side (shown above)
            first, second = (r.dagster_run.run_id for r in records)
            # The embedding_api pool (limit 1): the steps that call the provider never ran at once.
            assert not overlap(window(instance, first, "cached_vectors"), window(instance, second, "cached_vectors"))
            assert instance.event_log_storage.get_concurrency_info("embedding_api").limit == 1
            for record in records:
                assert_checks_per_partition(instance, record)

            # Each asset's `path` is where its data is, not Dagster's pickle of it.
            for corpus in CORPORA:
                out = repo / "indexes" / corpus
                expected = {
                    "staged_docs": out / ".docs-mcp" / "staged" / "docs",
                    "chunks": out / "chunks.json",
                    "fingerprints": out / ".embedding-cache",
                    "cached_vectors": out / ".embedding-cache",
                    "lancedb_index": out / ".lancedb",
                    "metadata": out / "metadata.json",
                    "cache_audit": out / ".docs-mcp" / "audit.duckdb",
                }
                for asset, path in expected.items():
                    found = instance.fetch_materializations(
                        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[corpus]), limit=1
                    )
                    assert found.records[0].asset_materialization.metadata["path"].value == str(path), (asset, corpus)
                    assert path.exists(), path
            chunks = json.loads((repo / "indexes" / "alpha" / "metadata.json").read_text())["stats"]["total_chunks"]
            assert chunks == EXAMPLE_CHUNKS

            # Scale-out: every corpus again with one process per step, while a second run of alpha is asked for.
            again = launch_backfill(port, ["alpha"])
            spread = launch_backfill(port, list(CORPORA), MULTIPROCESS)
            records = {r.dagster_run.run_id: r for r in wait_for_runs(instance, 5, server)}
            assert {records[run].dagster_run.status for run in again + spread} == {dg.DagsterRunStatus.SUCCESS}
            for run in spread:
                pids = {e.dagster_event.pid for e in events(instance, run, dg.DagsterEventType.STEP_START)}
                assert len(pids) == 7 + CHECKS  # each asset and each check in its own process
                assert_checks_per_partition(instance, records[run])
            # Two runs of one corpus never run at once: the queue held one back (per-corpus run limit).
            alpha_runs = [
                records[run] for run in again + spread if records[run].dagster_run.tags["dagster/partition"] == "alpha"
            ]
            assert len(alpha_runs) == 2
            assert not overlap(*((r.start_time, r.end_time) for r in alpha_runs))
        # Started as the docs say (`dg dev -w workspace.yaml` from the repository root with DAGSTER_HOME the
        # root): Dagster warns that a dagster.yaml in the working folder "will not be used" whenever
        # DAGSTER_HOME is another folder. Here it is the folder.
        text = log.read_text(errors="replace")
        assert "Launching Dagster services" in text, text[-3000:]
        assert "will not be used" not in text, text[-3000:]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(server.pid, signal.SIGKILL)  # what is left of the group (code servers, run workers)
        except ProcessLookupError:
            pass
        server.wait(timeout=30)
