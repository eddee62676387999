"""The scripted agent of `docs-mcp eval run --agent`: calls to the right doc, characters read, hinted refinement."""

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.server import create_server
from docs_mcp_eval.agent import AgentOptions, run_agent
from docs_mcp_eval.cases import Case

from ..conftest import write
from .test_harness import SUITE, example_index, serve  # noqa: F401 - the module-scoped index fixture

AREA = '{{"version": "1", "metadata": {{"area": "{}"}}}}'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
def test_eval_run_with_the_agent_reports_calls_and_characters(example_index: Path, tmp_path: Path) -> None:  # noqa: F811
    results = {}
    for name, extra in (("default", []), ("tight", ["--agent-max-chars", "600"])):
        out = tmp_path / f"{name}.json"
        result = CliRunner().invoke(
            main,
            [
                "eval",
                "run",
                "--cases",
                str(SUITE),
                "--server-command",
                serve(example_index),
                "--warmup",
                "0",
                "--agent",
                *extra,
                "--out",
                str(out),
                "--report",
                str(tmp_path / f"{name}.md"),
            ],
        )
        assert result.exit_code == 0, result.output
        results[name] = json.loads(out.read_text())
    default = results["default"]
    case = next(c for c in default["cases"] if c["name"] == "idempotency-header")
    assert case["rank"] == 1 and case["agent_rounds"] == 2 and case["agent_calls"][0] == "search_docs"
    assert case["agent_calls"][1] == f"get_doc {case['relevant'][0]}"
    summary = default["summary"]
    assert 0.5 < summary["agent_found"] <= 1.0 and summary["agent_rounds_median"] >= 2
    assert summary["chars_read_mean"] > results["tight"]["summary"]["chars_read_mean"]
    assert default["agent"] == {"rounds": 6, "max_chars": None, "context": 0}
    assert "| Agent: mean characters read per case |" in (tmp_path / "default.md").read_text()


@pytest.mark.anyio
async def test_zero_results_are_refined_with_the_filter_the_hint_suggests(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, ".docs-mcp.json", '{"version": "1", "taxonomy": {"area": {"description": "Product area."}}}')
    write(docs, "billing/.docs-mcp.json", AREA.format("billing"))
    write(docs, "billing/invoices.md", "# Invoices\n\nInvoices are sent monthly.\n")
    write(docs, "shipping/.docs-mcp.json", AREA.format("shipping"))
    write(docs, "shipping/labels.md", "# Labels\n\nA zebralabel is printed for every parcel.\n")
    build(docs, tmp_path / "index", make_provider(ProviderSettings("none")))
    case = Case(
        name="hinted", query="zebralabel", expectedChunkId="shipping/labels.md#_preamble", filters={"area": "billing"}
    )
    async with Client(create_server(tmp_path / "index").server) as client:
        first = json.loads(
            (await client.call_tool("search_docs", {"query": "zebralabel", "area": "billing"})).content[0].text
        )
        assert first["hits"] == [] and first["hint"]["suggested_filters"] == {"area": ["shipping"]}
        played = await run_agent(client, "search_docs", "get_doc", case, AgentOptions())
    assert [c["tool"] for c in played.calls] == ["search_docs", "search_docs", "get_doc"], played
    assert played.calls[1]["arguments"]["area"] == "shipping" and played.rounds == 3
    assert played.chars_read == sum(c["chars"] for c in played.calls) > 0


@pytest.mark.slow
def test_eval_reads_prefixed_chunk_ids_of_a_server_of_several_corpora(example_index: Path) -> None:  # noqa: F811
    import anyio

    from docs_mcp_eval.cases import load_suite
    from docs_mcp_eval.runner import run_suite

    suite = load_suite(SUITE)
    suite.cases = [c for c in suite.cases if c.name == "idempotency-header"]
    command = [
        sys.executable,
        "-m",
        "docs_mcp_core.cli",
        "serve",
        "--index",
        f"a={example_index}",
        "--index",
        f"b={example_index}",
    ]
    result = anyio.run(lambda: run_suite(command, suite, warmup=0, agent=AgentOptions()))
    case = result.cases[0]
    assert result.aborted is None and case.error is None
    assert case.rank == 1 and case.ranked[0] == case.relevant[0]  # hits are 'a:…', 'b:…'; the suite names bare IDs
    assert case.agent_rounds == 2 and case.agent_calls == ["search_docs", f"get_doc a:{case.relevant[0]}"]
