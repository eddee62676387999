"""`docs-mcp pipeline launch CORPUS`: Dagster's `dg launch` of one corpus's partition, with its name checked first.

Dagster's own commands (`dg launch`, `dagster asset materialize`) answer a partition name that is not
in the config with a DagsterInvalidSubsetError traceback and no list of what exists; nothing in a code
location can change that. This command checks the names against docs-mcp.yaml, so a typo gets one
line naming the corpora, then runs `dg launch` unchanged and ends with a line per run read back from
the Dagster instance: its status, the assets it materialized and the asset checks that passed.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from docs_mcp_core.command import fail_cleanly
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import Config, find_config, load_config

from .definitions import JOB
from .partitions import VERSIONS_PARTITIONS, partition_key, split_key

# The instance settings for a run without DAGSTER_HOME: what the repository's dagster.yaml says
# about output (the steps' own lines, not Dagster's DEBUG record of every event).
TEMPORARY_INSTANCE = "python_logs:\n  python_log_level: INFO\ntelemetry:\n  enabled: false\n"


@click.group("pipeline")
def pipeline_group() -> None:
    """Run the Dagster pipeline (docs-mcp[pipeline]) for corpora of docs-mcp.yaml."""


@pipeline_group.command("launch")
@click.argument("corpora", nargs=-1, metavar="CORPUS...")
@click.option("--all", "everything", is_flag=True, help="Every corpus of the config, one run after another.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The docs-mcp.yaml naming the corpora [default: $DOCS_MCP_CONFIG, else ./docs-mcp.yaml].",
)
@fail_cleanly
def launch(corpora: tuple[str, ...], everything: bool, config_file: Path | None) -> None:
    """Materialize every asset of each CORPUS (a partition of docs_index_job) with `dg launch`, in this process,
    recorded in the Dagster instance of DAGSTER_HOME; exit 1 if a run fails. A versioned corpus runs once per
    version (CORPUS@LABEL names one)."""
    config = load_config(find_config(config_file))
    names = check_names(config, corpora, everything)
    failed = []
    with instance_home() as home:
        names = partition_keys(config, names, home)
        for name in names:
            started = dt.datetime.now(dt.UTC)
            env = {**os.environ, "DOCS_MCP_CONFIG": str(config.path.resolve()), "DAGSTER_HOME": home}
            command = [_dg(), "launch", "-m", "docs_mcp_pipeline", "--job", JOB, "--partition", name]
            code = subprocess.run(command, env=env, check=False).returncode
            line, ok = run_summary(home, name, started)
            click.echo(line, err=True)
            if code != 0 or not ok:
                failed.append(name)
    if failed:
        raise DocsMcpError(f"the run of {', '.join(failed)} failed; its log is above and in the Dagster UI")


def partition_keys(config: Config, names: list[str], home: str) -> list[str]:
    """The partitions to run: a corpus's name, or each version of a versioned corpus (its versions resolved
    now); with versioned corpora the keys are added to the instance's dynamic partitions first."""
    if not any(c.versions is not None for c in config.corpora):
        return names
    import dagster as dg

    from docs_mcp_core.sources.versions import resolve_versions

    keys: list[str] = []
    for name in names:
        corpus, label = split_key(name)
        resolved = resolve_versions(config, corpus)
        if resolved is None:
            keys.append(corpus)
            continue
        for note in resolved.notes:
            click.echo(f"warning: {note}", err=True)
        labels = [resolved.get(label).label] if label else list(reversed(resolved.labels))
        keys += [partition_key(corpus, each) for each in labels]
    with dg.DagsterInstance.from_config(home) as instance:
        existing = set(instance.get_dynamic_partitions(VERSIONS_PARTITIONS))
        instance.add_dynamic_partitions(VERSIONS_PARTITIONS, [k for k in keys if k not in existing])
    return keys


def check_names(config: Config, corpora: tuple[str, ...], everything: bool) -> list[str]:
    """The corpora to run, in order, or one error naming the corpora the config has."""
    known = config.names
    if everything == bool(corpora):
        raise DocsMcpError(f"name the corpora to build, or --all; {config.path} has: {', '.join(known)}")
    if everything:
        return known
    for name in corpora:
        if split_key(name)[0] not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise DocsMcpError(f"no corpus {name!r} in {config.path}{hint}; its corpora: {', '.join(known)}")
    return list(dict.fromkeys(corpora))


@contextmanager
def instance_home() -> Iterator[str]:
    """DAGSTER_HOME, or a temporary instance (said on stderr) that lasts as long as the command."""
    home = os.environ.get("DAGSTER_HOME")
    if home:
        yield home
        return
    click.echo("DAGSTER_HOME is not set: the runs go to a temporary Dagster instance, gone when this ends", err=True)
    with tempfile.TemporaryDirectory(prefix="docs-mcp-dagster-") as tmp:
        Path(tmp, "dagster.yaml").write_text(TEMPORARY_INSTANCE)
        yield tmp


def run_summary(home: str, corpus: str, started: dt.datetime) -> tuple[str, bool]:
    """One line about the corpus's run that began after `started`, read from the instance; and whether it succeeded."""
    import dagster as dg

    with dg.DagsterInstance.from_config(home) as instance:
        records = instance.get_run_records(
            dg.RunsFilter(tags={"dagster/partition": corpus}, created_after=started), limit=1
        )
        if not records:
            return f"{corpus}: no run was recorded", False
        run = records[0].dagster_run
        checks = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
        materialized = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
        failures = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE).records
    passed = sum(
        1
        for r in checks
        if r.event_log_entry.dagster_event is not None
        and r.event_log_entry.dagster_event.asset_check_evaluation_data.passed
    )
    ok = run.status == dg.DagsterRunStatus.SUCCESS
    status = "succeeded" if ok else run.status.value.lower()
    line = (
        f"{corpus}: run {run.run_id} {status}: {len(materialized.records)} assets materialized, "
        f"{passed} of {len(checks)} asset checks passed"
    )
    return line + "".join(_failed_step(r.event_log_entry.dagster_event) for r in failures[:1]), ok


def _failed_step(event: Any) -> str:
    """'; STEP failed: WHY' for a step failure event: the step's own message (a DocsMcpError's), not the stack
    trace Dagster logs above it."""
    data = event.step_failure_data if event is not None else None
    if data is None:
        return ""
    user = data.user_failure_data
    why = user.description if user is not None and user.description else (data.error.message if data.error else "")
    return f"; {event.step_key} failed: {why.strip()}" if why.strip() else f"; {event.step_key} failed"


def _dg() -> str:
    """The `dg` of this environment (dagster-dg-cli, in the pipeline extra)."""
    here = Path(sys.executable).parent / "dg"
    return str(here) if here.exists() else "dg"
