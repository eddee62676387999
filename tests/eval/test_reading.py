"""What an agent reads, measured through our real server over stdio: characters to the answer and
whether a follow-up query finds it, checked against search_docs answers fetched independently."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build

from ..conftest import EXAMPLE_DOCS

QUERIES = ["retry with backoff", "verify webhook signature", "Idempotency-Key header"]


@pytest.fixture(scope="module")
def example_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reading")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    build(root / "docs", root / "index", make_provider(ProviderSettings("none")))
    return root / "index"


def answers(index: Path, queries: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each query's search_docs hits as an agent gets them: no limit, the server's default."""
    from mcp import Client, StdioServerParameters

    async def fetch() -> dict[str, list[dict[str, Any]]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "docs_mcp_core.cli", "serve", "--index", str(index)],
            env=dict(os.environ),
        )
        out = {}
        async with Client(params) as client:
            for query in queries:
                result = await client.call_tool("search_docs", {"query": query})
                out[query] = json.loads(result.content[0].text)["hits"]
        return out

    return anyio.run(fetch)


@pytest.mark.slow
def test_characters_to_the_answer_and_two_searches(example_index: Path, tmp_path: Path) -> None:
    hits = answers(example_index, QUERIES)
    retry, webhook, idem = (hits[q] for q in QUERIES)
    assert len(retry) == 10  # the server's default limit, which the harness must use too
    all_ids = {c["chunk_id"] for c in json.loads((example_index / "chunks.json").read_text())}
    # a chunk the webhook query ranks first and the retry query does not return at all
    elsewhere = next(h for h in webhook if h["chunk_id"] not in {r["chunk_id"] for r in retry})
    nowhere = sorted(all_ids - {h["chunk_id"] for h in retry + webhook + idem})[0]
    cases = [
        {"name": "first", "query": "retry with backoff", "expectedChunkId": retry[0]["chunk_id"]},
        {"name": "third", "query": "retry with backoff", "expectedChunkId": retry[2]["chunk_id"]},
        {
            "name": "rephrased",
            "query": "retry with backoff",
            "expectedChunkId": elsewhere["chunk_id"],
            "followUp": "verify webhook signature",
        },
        {
            "name": "answered-first",
            "query": "Idempotency-Key header",
            "expectedChunkId": idem[1]["chunk_id"],
            "followUp": "retry with backoff",
        },
        {
            "name": "never",
            "query": "Idempotency-Key header",
            "expectedChunkId": nowhere,
            "followUp": "verify webhook signature",
        },
    ]
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"name": "reading", "cases": cases}))
    out, report = tmp_path / "result.json", tmp_path / "report.md"
    serve = f"{sys.executable} -m docs_mcp_core.cli serve --index '{example_index}'"
    result = CliRunner().invoke(
        main,
        ["eval", "run", "--cases", str(suite), "--server-command", serve, "--out", str(out), "--report", str(report)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    by_name = {c["name"]: c for c in data["cases"]}

    snippet = [len(h["snippet"]) for h in retry]
    assert by_name["first"]["chars_to_answer"] == retry[0]["chars"] and by_name["first"]["answer_rank"] == 1
    assert by_name["third"]["chars_to_answer"] == snippet[0] + snippet[1] + retry[2]["chars"]
    assert by_name["third"]["answer_rank"] == 3 and by_name["third"]["found_within_two"] is None

    rephrased = by_name["rephrased"]
    rank = [h["chunk_id"] for h in webhook].index(elsewhere["chunk_id"])
    assert rephrased["answer_rank"] is None and rephrased["chars_to_answer"] is None
    assert rephrased["found_within_two"] is True and rephrased["follow_up_rank"] == rank + 1
    assert rephrased["chars_within_two"] == (
        sum(snippet) + sum(len(h["snippet"]) for h in webhook[:rank]) + elsewhere["chars"]
    )
    answered_first = by_name["answered-first"]  # answered: the follow-up is never searched
    assert answered_first["found_within_two"] is True and answered_first["follow_up_rank"] is None
    assert (
        answered_first["chars_within_two"]
        == answered_first["chars_to_answer"]
        == len(idem[0]["snippet"]) + idem[1]["chars"]
    )
    assert by_name["never"]["found_within_two"] is False and by_name["never"]["chars_within_two"] is None

    summary = data["summary"]
    assert summary["answered_cases"] == 3 and summary["unanswered_cases"] == 2
    answered = [by_name[n]["chars_to_answer"] for n in ("first", "third", "answered-first")]
    assert summary["chars_to_answer_mean"] == pytest.approx(sum(answered) / 3)  # misses are not zeros
    assert summary["follow_up_cases"] == 3
    assert summary["found_first_search"] == pytest.approx(1 / 3)
    assert summary["found_within_two_searches"] == pytest.approx(2 / 3)
    assert summary["chars_within_two_mean"] == pytest.approx(
        (rephrased["chars_within_two"] + answered_first["chars_within_two"]) / 2
    )
    text = report.read_text()
    assert "| Characters read to the answer, mean |" in text and "| Not answered by the first search | 2 |" in text
    assert "| Follow-up cases found within two searches | 0.667 |" in text
    assert "| rephrased | miss | verify webhook signature | " in text


@pytest.mark.slow
def test_no_follow_ups_no_two_search_rows(example_index: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite.json"
    suite.write_text(
        json.dumps(
            [
                {
                    "name": "idem",
                    "query": "Idempotency-Key header",
                    "expectedChunkId": "guides/idempotency.md#idempotent-requests/sending-an-idempotency-key",
                }
            ]
        )
    )
    serve = f"{sys.executable} -m docs_mcp_core.cli serve --index '{example_index}'"
    result = CliRunner().invoke(main, ["eval", "run", "--cases", str(suite), "--server-command", serve])
    assert result.exit_code == 0, result.output
    assert "| Answered by the first search (default limit) | 1 |" in result.output
    assert "within two searches" not in result.output and "## Follow-ups" not in result.output
