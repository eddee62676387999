"""The harness end to end: our server over stdio, a crashing server, baselines, the benchmark command."""

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_eval.cases import load_suite
from docs_mcp_eval.runner import run_suite

from ..conftest import EXAMPLE_DOCS, REPO

SUITE = REPO / "benchmarks" / "suites" / "example.json"
CRASHER = REPO / "tests" / "fakes" / "crashing_server.py"


@pytest.fixture(scope="module")
def example_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eval")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    build(root / "docs", root / "index", make_provider(ProviderSettings("none")))
    return root / "index"


def serve(index: Path) -> str:
    return f"{sys.executable} -m docs_mcp_core.cli serve --index '{index}'"


def test_shipped_example_suite_matches_the_corpus(example_index: Path) -> None:
    suite = load_suite(SUITE)
    ids = {c["chunk_id"] for c in json.loads((example_index / "chunks.json").read_text())}
    assert len(suite.cases) >= 30
    assert {c.category for c in suite.cases} == {
        "lexical",
        "paraphrased",
        "intent",
        "error-handling",
        "api-discovery",
        "config",
        "distractor",
    }
    for case in suite.cases:
        assert set(case.relevant) <= ids, case.name


@pytest.mark.slow
def test_run_against_our_server_end_to_end(example_index: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out, report = tmp_path / "result.json", tmp_path / "report.md"
    result = runner.invoke(
        main,
        [
            "eval",
            "run",
            "--cases",
            str(SUITE),
            "--server-command",
            serve(example_index),
            "--build-command",
            f"{sys.executable} -c pass",
            "--out",
            str(out),
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    summary = data["summary"]
    assert summary["cases"] == 39 and summary["errors"] == 0 and data["aborted"] is None
    assert 0.4 < summary["mrr@5"] <= 1.0 and summary["recall@5"] >= summary["mrr@5"]
    assert summary["facet_precision"] == 1.0  # language filters never leak another SDK's pages
    assert summary["search_p50_ms"] > 0 and summary["get_doc_p50_ms"] > 0 and summary["peak_rss_mb"] > 50
    assert summary["build_seconds"] > 0
    assert data["by_category"]["lexical"]["recall@5"] == 1.0
    case = next(c for c in data["cases"] if c["name"] == "idempotency-header")
    assert case["rank"] == 1 and case["rounds"] == 1 and case["ranked"][0] == case["relevant"][0]
    text = report.read_text()
    assert text.startswith("# Eval: example") and "| MRR@5 |" in text and "## By category" in text


@pytest.mark.parametrize("text", ['["summary"]', '"the summary"'])
def test_a_baseline_that_is_not_a_json_object_is_one_error_line(tmp_path: Path, text: str) -> None:
    baseline = tmp_path / "base.json"
    baseline.write_text(text)
    args = ["eval", "run", "--cases", str(SUITE), "--server-command", "false", "--baseline", str(baseline)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.output == f"error: {baseline} is not a docs-mcp eval result (no 'summary')\n"


@pytest.mark.slow
def test_baseline_delta_table(example_index: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    base = tmp_path / "base.json"
    assert (
        runner.invoke(
            main, ["eval", "run", "--cases", str(SUITE), "--server-command", serve(example_index), "--out", str(base)]
        ).exit_code
        == 0
    )
    worse = json.loads(base.read_text())
    worse["summary"]["mrr@5"] -= 0.1
    worse["summary"]["search_p50_ms"] += 5.0
    (tmp_path / "worse.json").write_text(json.dumps(worse))
    result = runner.invoke(
        main,
        [
            "eval",
            "run",
            "--cases",
            str(SUITE),
            "--server-command",
            serve(example_index),
            "--baseline",
            str(tmp_path / "worse.json"),
        ],
    )
    assert result.exit_code == 0
    table = result.output.split("## Against the baseline")[1]
    mrr_row = next(line for line in table.splitlines() if line.startswith("| MRR@5 |"))
    cells = [c.strip() for c in mrr_row.strip("|").split("|")]
    assert float(cells[2]) - float(cells[1]) == pytest.approx(0.1, abs=0.002)
    assert cells[3].startswith("+0.1") and cells[3].endswith("(better)")
    assert "| Search p50 (ms) |" in table and "| Peak RSS (MB) |" in table


def test_delta_table_marks_direction_per_metric() -> None:
    from docs_mcp_eval.report import delta_table

    base = {"summary": {"mrr@5": 0.5, "search_p50_ms": 10.0, "peak_rss_mb": 200.0}}
    now = {"summary": {"mrr@5": 0.6, "search_p50_ms": 12.5, "peak_rss_mb": 200.0}}
    rows = delta_table(base, now).splitlines()
    assert rows[2] == "| MRR@5 | 0.500 | 0.600 | +0.100 (better) |"
    assert rows[3] == "| Search p50 (ms) | 10.0 | 12.5 | +2.5 (worse) |"
    assert rows[4] == "| Peak RSS (MB) | 200.0 | 200.0 | +0.000 |"


@pytest.mark.slow
def test_a_server_that_crashes_gives_a_clear_error_and_a_partial_report(tmp_path: Path) -> None:
    cases = [
        {"name": f"case-{i}", "category": "lexical", "query": f"topic{i} word", "expectedChunkId": f"topic{i}.md#intro"}
        for i in range(6)
    ]
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps({"name": "crash", "cases": cases}))
    report = tmp_path / "report.md"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "run",
            "--cases",
            str(suite_file),
            "--warmup",
            "0",
            "--report",
            str(report),
            "--server-command",
            f"{sys.executable} {CRASHER} 7",  # two searches per case: the 7th is case-3's first
        ],
    )
    assert result.exit_code == 1
    assert "error: the server stopped answering during case 'case-3' (4 of 6)" in result.output
    text = report.read_text()
    assert "**Run aborted: the server stopped answering during case 'case-3'" in text
    assert "Partial report: 4 cases ran, 2 did not." in text
    suite = load_suite(suite_file)
    partial = anyio.run(lambda: run_suite([sys.executable, str(CRASHER), "5"], suite, warmup=0))
    assert [c.reciprocal_rank for c in partial.cases[:2]] == [1.0, 1.0]  # this fake ranks the asked-for page first
    assert partial.cases[2].error and partial.not_run == ["case-3", "case-4", "case-5"]


def test_a_server_that_cannot_start_is_reported(tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps([{"name": "a", "query": "q", "expectedChunkId": "a.md"}]))
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "run",
            "--cases",
            str(suite_file),
            "--server-command",
            f"{sys.executable} -c 'import sys; sys.exit(5)'",
        ],
    )
    assert result.exit_code == 1 and "could not run the suite against" in result.output


@pytest.mark.slow
def test_benchmark_compares_providers(tmp_path: Path) -> None:
    report = tmp_path / "compare.md"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "benchmark",
            "--cases",
            str(SUITE),
            "--docs-dir",
            str(EXAMPLE_DOCS),
            "--embeddings",
            "none,hash",
            "--work-dir",
            str(tmp_path / "work"),
            "--report",
            str(report),
            "--out",
            str(tmp_path / "all.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    text = report.read_text()
    rows = {
        line.split("|")[1].strip(): line
        for line in text.splitlines()
        if line.startswith("| none") or line.startswith("| hash")
    }
    assert set(rows) == {"none", "hash"} and "MRR@5 by category:" in text
    reading = text.split("What an agent reads")[1]
    assert (
        "| Chars to answer, mean |" in reading and len([r for r in reading.splitlines() if r.startswith("| none")]) == 1
    )
    runs = json.loads((tmp_path / "all.json").read_text())["runs"]
    assert [r["provider"] for r in runs] == ["none", "hash"]
    assert all(r["result"]["summary"]["cases"] == 39 and r["index_mb"] > 0 for r in runs)
    assert all(
        r["result"]["summary"]["answered_cases"] + r["result"]["summary"]["unanswered_cases"] == 39 for r in runs
    )


def test_bad_cases_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cases": [{"name": "x", "query": "", "expectedChunkId": "a.md", "colour": 1}]}))
    result = CliRunner().invoke(main, ["eval", "run", "--cases", str(bad), "--server-command", "true"])
    assert result.exit_code == 1 and "invalid cases file" in result.output and "cases[0].colour" in result.output


@pytest.mark.slow
def test_benchmark_about_a_docs_website(tmp_path: Path) -> None:
    """`eval benchmark --url`: the site is staged once into the work dir and every provider builds from
    it; a rerun asks for each page conditionally."""
    from ..fakes.docs_site import DocsSite, copy_site

    suite = tmp_path / "site.json"
    suite.write_text(
        json.dumps(
            {
                "name": "site",
                "cases": [
                    {
                        "name": "wsgi",
                        "category": "lexical",
                        "query": "WSGITransport",
                        "expectedChunkId": "advanced/transports/index.md#transports/wsgi-transport",
                    },
                    {
                        "name": "netrc",
                        "category": "lexical",
                        "query": "NetRCAuth netrc file",
                        "expectedChunkId": "advanced/authentication/index.md#authentication/netrc-authentication",
                    },
                ],
            }
        )
    )
    args = [
        "eval",
        "benchmark",
        "--cases",
        str(suite),
        "--embeddings",
        "none,hash",
        "--warmup",
        "0",
        "--work-dir",
        str(tmp_path / "work"),
        "--out",
        str(tmp_path / "all.json"),
        "--report",
        str(tmp_path / "r.md"),
    ]
    with DocsSite(copy_site(tmp_path / "site")) as site:
        first = CliRunner().invoke(main, [*args, "--url", f"{site.origin}/"])
        assert first.exit_code == 0, first.output
        runs = json.loads((tmp_path / "all.json").read_text())["runs"]
        assert [r["provider"] for r in runs] == ["none", "hash"]
        assert all(r["result"]["summary"]["mrr@5"] == 1.0 for r in runs), runs
        assert (tmp_path / "work" / "staged" / "docs" / "advanced" / "transports" / "index.md").is_file()
        fetched = len(site.page_requests())
        again = CliRunner().invoke(main, [*args, "--url", f"{site.origin}/"])
        assert again.exit_code == 0, again.output
        rerun = site.page_requests()[fetched:]
        assert rerun and all(r.conditional for r in rerun)
    both = CliRunner().invoke(main, [*args, "--url", "http://127.0.0.1:9/", "--docs-dir", str(EXAMPLE_DOCS)])
    assert both.exit_code == 1 and "give exactly one of --docs-dir" in both.output
