"""`docs-mcp eval`: the harness's commands, joined to the docs-mcp CLI through an entry point."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from docs_mcp_core.command import DOCS_DIR, fail_cleanly, web_options, web_source


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval quality and speed of an MCP docs server against a suite of cases."""


def _write_outputs(result: dict[str, Any], out_json: Path | None, report: Path | None, markdown_text: str) -> None:
    if out_json:
        out_json.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    if report:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(markdown_text)


@eval_group.command("run")
@click.option(
    "--cases",
    "cases_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help='Suite JSON: {"cases": [{name, category, query, expectedChunkId, ...}]}.',
)
@click.option(
    "--server-command",
    required=True,
    help="Command that starts an MCP docs server on stdio (split like a shell would).",
)
@click.option("--build-command", default=None, help="Command to run (and time) before starting the server.")
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True, help="Searches before measuring.")
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A previous result JSON: the report adds a delta table.",
)
@click.option(
    "--out",
    "out_json",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the result JSON here.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the markdown report here (default: print it).",
)
@click.option(
    "--agent",
    is_flag=True,
    help="Also play each case as a scripted agent (search, read hits with get_doc, refine with a hinted "
    "filter on zero results) and report tool calls to the right doc and characters read.",
)
@click.option(
    "--agent-rounds",
    type=click.IntRange(1, 50),
    default=6,
    show_default=True,
    help="Tool calls the agent may make per case.",
)
@click.option(
    "--agent-max-chars",
    type=click.IntRange(min=1),
    default=None,
    help="max_chars the agent passes to search_docs and get_doc (default: none, the server's defaults).",
)
@click.option(
    "--agent-context",
    type=click.IntRange(0, 5),
    default=0,
    show_default=True,
    help="context the agent passes to get_doc.",
)
@fail_cleanly
def eval_run(
    cases_file: Path,
    server_command: str,
    build_command: str | None,
    warmup: int,
    baseline: Path | None,
    out_json: Path | None,
    report: Path | None,
    agent: bool,
    agent_rounds: int,
    agent_max_chars: int | None,
    agent_context: int,
) -> None:
    """Run a suite against any server with search_docs and get_doc; exit 1 if the run aborted."""
    import anyio

    from docs_mcp_core.progress import StderrReporter

    from .agent import AgentOptions
    from .cases import load_suite
    from .report import load_result, markdown
    from .runner import run_build, run_suite, split_command

    suite = load_suite(cases_file)
    previous = load_result(baseline) if baseline else None
    command = split_command(server_command)
    build_seconds = None
    if build_command:
        click.echo(f"building: {build_command}", err=True)
        build_seconds = run_build(split_command(build_command))
    reporter = StderrReporter(bar_only_on_tty=True)
    options = AgentOptions(agent_rounds, agent_max_chars, agent_context) if agent else None
    result = anyio.run(lambda: run_suite(command, suite, warmup=warmup, reporter=reporter, agent=options))
    result.build_command = split_command(build_command) if build_command else None
    result.build_seconds = build_seconds
    data = result.to_json()
    text = markdown(data, previous)
    _write_outputs(data, out_json, report, text)
    if not report:
        click.echo(text)
    if result.aborted:
        click.echo(f"error: {result.aborted}", err=True)
        sys.exit(1)


@eval_group.command("benchmark")
@click.option(
    "--cases", "cases_file", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Suite JSON."
)
@click.option("--docs-dir", default=None, type=DOCS_DIR, help="The corpus the suite is about: a folder of Markdown.")
@web_options
@click.option(
    "--embeddings",
    default="none,hash",
    show_default=True,
    help="Comma-separated providers: none, hash, local[:onnx|:torch][/MODEL], openai[/MODEL].",
)
@click.option("--embedding-base-url", default=None, help="Base URL for openai specs (any OpenAI-compatible server).")
@click.option(
    "--work-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".docs-mcp-bench"),
    show_default=True,
    help="Where the per-provider indexes are built (rebuilt cold each run).",
)
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True)
@click.option(
    "--out",
    "out_json",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write all results as JSON here.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the comparison report here (default: print it).",
)
@fail_cleanly
def eval_benchmark(
    cases_file: Path,
    docs_dir: Path | None,
    embeddings: str,
    embedding_base_url: str | None,
    work_dir: Path,
    warmup: int,
    out_json: Path | None,
    report: Path | None,
    **crawl: Any,
) -> None:
    """Build one index per provider and compare them on one suite (about a folder, or a website's pages
    staged once into WORK_DIR/staged, as `docs-mcp build --url` stages them)."""
    import anyio

    from docs_mcp_core.progress import StderrReporter

    from .benchmark import benchmark
    from .cases import load_suite
    from .report import comparison

    suite = load_suite(cases_file)
    specs = [s.strip() for s in embeddings.split(",") if s.strip()]
    reporter = StderrReporter(bar_only_on_tty=True)
    web = web_source(crawl, docs_dir)
    if web is not None:
        from docs_mcp_core.sources.web.stage import stage_url

        docs_dir = Path(stage_url(web, work_dir / "staged" / "docs", reporter).path)
    assert docs_dir is not None
    rows = anyio.run(
        lambda: benchmark(
            suite, docs_dir, specs, work_dir, warmup=warmup, base_url=embedding_base_url, reporter=reporter
        )
    )
    text = comparison(rows)
    _write_outputs({"suite": suite.name, "runs": rows}, out_json, report, text)
    if not report:
        click.echo(text)
    if any(row["result"]["aborted"] for row in rows):
        sys.exit(1)
