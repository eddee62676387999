"""The full pipeline: git sources and the repo sensor, partitions, staleness, audit, asset checks."""

import json
import threading
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_graphql.test.utils import define_out_of_process_workspace, execute_dagster_graphql

from docs_mcp_core.indexing import checks
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_pipeline import build_definitions
from docs_mcp_pipeline.assets import COMMIT_TAG

from ..conftest import EXAMPLE_CHUNKS, commit_docs_repo, git, write
from .conftest import write_config


@pytest.fixture
def docs_repo(tmp_path: Path) -> Path:
    return commit_docs_repo(tmp_path / "docs-repo")


def everything(defs: dg.Definitions) -> list:
    return [*(defs.assets or []), *(defs.asset_checks or [])]


def materialize(defs: dg.Definitions, partition: str, instance: dg.DagsterInstance, tags=None, raise_on_error=True):
    return dg.materialize(
        everything(defs),
        partition_key=partition,
        instance=instance,
        resources=defs.resources,
        tags=tags,
        raise_on_error=raise_on_error,
    )


def evaluate_sensor(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None):
    sensor = defs.resolve_sensor_def("docs_repo_sensor")
    # docs_mcp has a teardown (it releases build locks), so its context is opened as a context manager.
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, resources=defs.resources, definitions=defs
    ) as context:
        return sensor.evaluate_tick(context)


@pytest.mark.slow
@pytest.mark.parametrize("as_url", [False, True])
def test_repo_sensor_requests_one_run_per_new_commit(tmp_path: Path, docs_repo: Path, as_url: bool) -> None:
    source = f"file://{docs_repo}" if as_url else str(docs_repo)
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "sdk-docs",
                "source": {"git": source, "ref": "main", "subdir": "docs"},
                "out": str(tmp_path / "out"),
                "embedding": {"provider": "hash", "dimensions": 32},
            }
        ],
    )
    defs = build_definitions(str(config))
    instance = dg.DagsterInstance.ephemeral()
    first_commit = git(docs_repo, "rev-parse", "HEAD")

    tick = evaluate_sensor(defs, instance, None)
    assert [(r.partition_key, r.tags[COMMIT_TAG], r.run_key) for r in tick.run_requests] == [
        ("sdk-docs", first_commit, f"sdk-docs:{first_commit}")
    ]
    quiet = evaluate_sensor(defs, instance, tick.cursor)
    assert quiet.run_requests == [] and quiet.skip_message == "no git corpus has a new commit"

    write(
        docs_repo, "docs/guide.md", "# Guide\n\n## Install\n\nRun the new installer.\n\n## Upgrade\n\nUpgrade often.\n"
    )
    git(docs_repo, "commit", "-qam", "docs v2")
    second_commit = git(docs_repo, "rev-parse", "HEAD")
    tick2 = evaluate_sensor(defs, instance, tick.cursor)
    assert [(r.partition_key, r.tags[COMMIT_TAG]) for r in tick2.run_requests] == [("sdk-docs", second_commit)]
    assert json.loads(tick2.cursor) == {"sdk-docs": second_commit}

    # A third commit lands before the run starts: the run still indexes the commit it was asked for.
    write(docs_repo, "docs/later.md", "# Later\n\nNot yet.\n")
    git(docs_repo, "add", ".")
    git(docs_repo, "commit", "-qm", "docs v3")
    materialize(defs, "sdk-docs", instance, tags=tick2.run_requests[0].tags)
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["stats"]["source_commit"] == second_commit
    chunks = json.loads((tmp_path / "out" / "chunks.json").read_text())
    assert [c["chunk_id"] for c in chunks] == ["guide.md#_preamble", "guide.md#guide/install", "guide.md#guide/upgrade"]
    assert "Run the new installer." in chunks[1]["content"]
    staged = tmp_path / "out" / ".docs-mcp" / "staged" / "docs"
    assert sorted(p.name for p in staged.rglob("*") if p.is_file()) == [".docs-mcp.json", "guide.md"]


def test_git_source_errors_are_clear(tmp_path: Path, docs_repo: Path) -> None:
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "bad",
                "source": {"git": str(docs_repo), "ref": "main", "subdir": "nope"},
                "out": str(tmp_path / "o"),
                "embedding": {"provider": "none"},
            }
        ],
    )
    defs = build_definitions(str(config))
    result = materialize(defs, "bad", dg.DagsterInstance.ephemeral(), raise_on_error=False)
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "subdir 'nope' is not a folder at commit" in failure.event_specific_data.error.message


@pytest.mark.slow
def test_two_corpora_are_independent(tmp_path: Path, example_docs: Path, docs_repo: Path) -> None:
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "example",
                "source": {"path": str(example_docs)},
                "out": str(tmp_path / "a"),
                "embedding": {"provider": "none"},
            },
            {
                "name": "repo",
                "source": {"git": str(docs_repo), "subdir": "docs"},
                "out": str(tmp_path / "b"),
                "embedding": {"provider": "none"},
            },
        ],
    )
    defs = build_definitions(str(config))
    assert defs.resolve_implicit_global_asset_job_def().partitions_def.get_partition_keys() == ["example", "repo"]
    instance = dg.DagsterInstance.ephemeral()
    materialize(defs, "repo", instance)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "b").rglob("*")}
    materialize(defs, "example", instance)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "b").rglob("*")} == before
    assert json.loads((tmp_path / "a" / "metadata.json").read_text())["stats"]["total_chunks"] == EXAMPLE_CHUNKS
    assert json.loads((tmp_path / "b" / "metadata.json").read_text())["stats"]["total_chunks"] == 2


STALENESS = """{ assetNodes { assetKey { path } staleStatus(partition: "example")
                  staleCauses(partition: "example") { key { path } } } }"""


@pytest.mark.slow
def test_downstream_is_stale_only_when_the_staged_data_version_changes(
    example_config: Path, example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    defs = build_definitions(str(example_config))
    (tmp_path / "dagster-home").mkdir()
    instance = dg.DagsterInstance.local_temp(str(tmp_path / "dagster-home"))
    materialize(defs, "example", instance)
    staged_only = [a for a in defs.assets if a.key == dg.AssetKey("staged_docs")]
    workspace = tmp_path / "workspace.yaml"
    workspace.write_text("load_from:\n  - python_module: docs_mcp_pipeline\n")
    monkeypatch.setenv("DOCS_MCP_CONFIG", str(example_config))  # for the code server the workspace starts

    # Staleness as the UI reads it: through Dagster's GraphQL API (a fresh request each time).
    with define_out_of_process_workspace(str(workspace), None, instance) as process:

        def nodes() -> dict[str, dict]:
            result = execute_dagster_graphql(process.create_request_context(), STALENESS)
            assert not result.errors, result.errors
            return {n["assetKey"]["path"][0]: n for n in result.data["assetNodes"]}

        def status(name: str) -> str:
            return nodes()[name]["staleStatus"]

        assert {status(n) for n in ("chunks", "lancedb_index", "metadata")} == {"FRESH"}
        dg.materialize(staged_only, partition_key="example", instance=instance, resources=defs.resources)
        assert status("chunks") == "FRESH"  # same files, same data version
        page = example_docs / "guides" / "errors.md"
        page.write_text(page.read_text() + "\nA new paragraph.\n")
        dg.materialize(staged_only, partition_key="example", instance=instance, resources=defs.resources)
        assert status("chunks") == "STALE"
        causes = nodes()["chunks"]["staleCauses"]
        assert [c["key"]["path"][0] for c in causes] == ["staged_docs"]
        # Dagster marks stale what directly depends on a new data version: down the chain, one asset at a time.
        assert status("fingerprints") == "FRESH"
        chunks_only = [a for a in defs.assets if a.key in (dg.AssetKey("staged_docs"), dg.AssetKey("chunks"))]
        dg.materialize(chunks_only, partition_key="example", instance=instance, resources=defs.resources)
        assert status("chunks") == "FRESH" and status("fingerprints") == "STALE"
        assert [c["key"]["path"][0] for c in nodes()["fingerprints"]["staleCauses"]] == ["chunks"]


@pytest.mark.slow
def test_cache_audit_keeps_history_across_builds(example_config: Path, example_docs: Path, tmp_path: Path) -> None:
    defs = build_definitions(str(example_config))
    instance = dg.DagsterInstance.ephemeral()
    runs = [materialize(defs, "example", instance).run_id]  # cold
    page = example_docs / "guides" / "errors.md"
    page.write_text(page.read_text() + "\nOne more paragraph.\n")
    runs.append(materialize(defs, "example", instance).run_id)  # one chunk edited
    (example_docs / "guides" / "pagination.md").unlink()
    runs.append(materialize(defs, "example", instance).run_id)  # a file with 5 chunks deleted
    with duckdb.connect(str(OutputLayout(tmp_path / "indexes" / "example").audit), read_only=True) as con:
        builds = con.execute(
            "SELECT build_id, chunks, hits, misses, embedded, pruned, provider FROM builds ORDER BY finished_at"
        ).fetchall()
        events = con.execute("SELECT build_id, status, count(*) FROM chunk_events GROUP BY ALL").fetchall()
    assert builds == [
        (runs[0], EXAMPLE_CHUNKS, 0, EXAMPLE_CHUNKS, EXAMPLE_CHUNKS, 0, "hash"),
        (runs[1], EXAMPLE_CHUNKS, EXAMPLE_CHUNKS - 1, 1, 1, 1, "hash"),
        (runs[2], EXAMPLE_CHUNKS - 5, EXAMPLE_CHUNKS - 5, 0, 0, 5, "hash"),
    ]
    counts = {(b, s): n for b, s, n in events}
    assert counts == {
        (runs[0], "miss"): EXAMPLE_CHUNKS,
        (runs[1], "hit"): EXAMPLE_CHUNKS - 1,
        (runs[1], "miss"): 1,
        (runs[1], "pruned"): 1,
        (runs[2], "hit"): EXAMPLE_CHUNKS - 5,
        (runs[2], "pruned"): 5,
    }


def _published(out: Path) -> tuple[dict, int]:
    meta = json.loads((out / "metadata.json").read_text())
    return meta, meta["index"]["version"]


@pytest.mark.slow
def test_each_check_fails_on_a_broken_output(example_config: Path, tmp_path: Path) -> None:
    defs = build_definitions(str(example_config))
    materialize(defs, "example", dg.DagsterInstance.ephemeral())
    out = tmp_path / "indexes" / "example"
    meta, version = _published(out)
    staged = {
        p for p in json.loads((out / ".docs-mcp" / "staged" / "staged-files.json").read_text()) if p.endswith(".md")
    }
    assert all(
        o.passed
        for o in (
            checks.chunk_ids_unique(out, version),
            checks.index_rows_match_chunks(out, version),
            checks.no_chunks_from_removed_files(out, version, staged),
            checks.taxonomy_within_limits(checks.chunks_taxonomy(out)),
            checks.vector_dimensions_match(out),
        )
    )
    chunks = json.loads((out / "chunks.json").read_text())

    broken = chunks + [dict(chunks[0])]
    (out / "chunks.json").write_text(json.dumps(broken))
    outcome = checks.chunk_ids_unique(out, version)
    assert not outcome.passed and outcome.description.startswith(
        "1 duplicated chunk ID(s), e.g. changelog.md#_preamble"
    )
    outcome = checks.index_rows_match_chunks(out, version)
    assert (
        not outcome.passed
        and outcome.description
        == f"table version {version} has {EXAMPLE_CHUNKS} rows but chunks.json has {EXAMPLE_CHUNKS + 1} chunks"
    )

    (out / "chunks.json").write_text(json.dumps(chunks))
    outcome = checks.no_chunks_from_removed_files(out, version, staged - {"guides/webhooks.md"})
    assert not outcome.passed and "e.g. guides/webhooks.md" in outcome.description

    wide = {f"k{i}": {"values": [f"v{j}" for j in range(3)]} for i in range(65)}
    wide["k0"]["values"] = [f"v{j}" for j in range(513)]
    outcome = checks.taxonomy_within_limits(wide)
    assert (
        not outcome.passed
        and "65 keys (max 64)" in outcome.description
        and "'k0' has 513 values" in outcome.description
    )

    meta["embedding"]["dimensions"] = 128
    (out / "metadata.json").write_text(json.dumps(meta))
    outcome = checks.vector_dimensions_match(out)
    assert (
        not outcome.passed
        and outcome.description == f"metadata.json says 128 dimensions but table version {version} has 64"
    )


@pytest.mark.slow
def test_a_failing_blocking_check_fails_the_run_before_publishing(
    example_config: Path, example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table version a run writes disagrees with its chunks.json: a blocking check fails and
    `metadata` never publishes it. The disagreement is made where a faulty write would leave it, while
    the run waits between `lancedb_index` and its checks (the `written` failpoint): a damaged *published*
    version is no use here, since lancedb_index verifies it against its checksums and rewrites it."""
    defs = build_definitions(str(example_config))
    instance = dg.DagsterInstance.ephemeral()
    materialize(defs, "example", instance)
    out = tmp_path / "indexes" / "example"
    published = (out / "metadata.json").read_bytes()
    # A real change, so the run writes a new table version and a pending chunks.json.
    with (example_docs / "guides" / "retries.md").open("a") as f:
        f.write("\n## Retry budgets\n\nA client spends at most ten retries a minute.\n")

    paused, release = tmp_path / "paused", tmp_path / "release"
    paused.mkdir()
    monkeypatch.setenv("DOCS_MCP_TEST_PAUSE_AT", "written")
    monkeypatch.setenv("DOCS_MCP_TEST_RELEASE", str(release))
    monkeypatch.setenv("DOCS_MCP_TEST_PAUSED_DIR", str(paused))
    dropped: list[str] = []

    def drop_a_chunk_while_paused() -> None:
        try:
            deadline = time.monotonic() + 120
            while not any(paused.iterdir()) and time.monotonic() < deadline:
                time.sleep(0.05)
            pending = OutputLayout(out).pending_chunks
            chunks = json.loads(pending.read_text())
            dropped.append(chunks.pop()["chunk_id"])
            pending.write_text(json.dumps(chunks))
        finally:
            release.touch()

    tamper = threading.Thread(target=drop_a_chunk_while_paused)
    tamper.start()
    try:
        result = materialize(defs, "example", instance, raise_on_error=False)
    finally:
        release.touch()
        tamper.join()
    assert dropped, "the run never paused between lancedb_index and its checks"
    assert not result.success
    evaluations = {
        e.event_specific_data.check_name: e.event_specific_data.passed
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }
    assert evaluations["index_rows_match_chunks"] is False
    assert evaluations["chunk_ids_unique"] is True
    succeeded = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SUCCESS"}
    assert "lancedb_index" in succeeded  # the table was written; the check is what stopped the run
    assert "metadata" not in succeeded
    assert (out / "metadata.json").read_bytes() == published  # nothing was published


@pytest.mark.slow
def test_cli_build_from_git_stages_as_the_pipeline_does(tmp_path: Path, docs_repo: Path) -> None:
    """`docs-mcp build --git` and a git corpus's run give the same index: one staging code path."""
    from click.testing import CliRunner

    from docs_mcp_core.cli import main

    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "sdk-docs",
                "description": "SDK docs",
                "source": {"git": f"file://{docs_repo}", "ref": "main", "subdir": "docs"},
                "out": str(tmp_path / "pipeline"),
                "embedding": {"provider": "hash", "dimensions": 32},
            }
        ],
    )
    materialize(build_definitions(str(config)), "sdk-docs", dg.DagsterInstance.ephemeral())
    args = ["build", "--git", f"file://{docs_repo}", "--ref", "main", "--subdir", "docs", "--index"]
    embedding = ["--embedding-provider", "hash", "--embedding-dimensions", "32", "--description", "SDK docs"]
    result = CliRunner().invoke(main, [*args, str(tmp_path / "cli"), *embedding])
    assert result.exit_code == 0, result.output
    for name in ("chunks.json", ".docs-mcp/staged/docs/.docs-mcp.json", ".docs-mcp/staged/docs/guide.md"):
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "pipeline" / name).read_bytes(), name
    pipeline, cli = (json.loads((tmp_path / d / "metadata.json").read_text()) for d in ("pipeline", "cli"))
    for meta in (pipeline, cli):
        meta["stats"].pop("indexed_at")
    assert cli == pipeline and cli["stats"]["source_commit"] == git(docs_repo, "rev-parse", "main")
