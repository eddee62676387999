"""The documentation site is also a corpus (`docs-mcp-docs` in docs-mcp.yaml): it validates clean, builds,
and answers a question about the CLI with the generated CLI reference first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_core.sources.config import load_config

from .conftest import REPO
from .reliability.clitools import build_args, docs_mcp

CORPUS = "docs-mcp-docs"
QUESTION = "what is the default port of docs-mcp serve over HTTP"
EXPECTED_PAGE = "reference/cli.md"
EXPECTED_HEADING = "docs-mcp serve"


@pytest.mark.slow
def test_the_docs_corpus_validates_without_findings() -> None:
    docs = load_config(REPO / "docs-mcp.yaml").source_path(CORPUS)
    result = docs_mcp("validate", "--docs-dir", docs, "--format", "json")
    report = json.loads(result.stdout)
    assert (result.returncode, report["errors"], report["warnings"]) == (0, 0, 0), report["diagnostics"]


@pytest.mark.slow  # a build and a search in fresh processes
def test_a_cli_question_finds_the_cli_reference_first(tmp_path: Path) -> None:
    corpora = load_config(REPO / "docs-mcp.yaml")
    out = tmp_path / "docs-index"
    built = docs_mcp(
        *build_args(corpora.source_path(CORPUS), out, "none"), "--description", corpora.get(CORPUS).description or ""
    )
    assert built.returncode == 0, built.stderr

    found = docs_mcp("search", "--index", out, QUESTION, "--json", "--limit", "3")
    assert found.returncode == 0, found.stderr
    first = json.loads(found.stdout)["hits"][0]
    assert (first["filepath"], first["heading"]) == (EXPECTED_PAGE, EXPECTED_HEADING), first["chunk_id"]


def test_the_cli_reference_shows_an_open_bound_as_strict() -> None:
    """`--timeout` takes 0 < x ≤ 600 (click's FloatRange with min_open): the table must not say 0–600."""
    row = next(
        line for line in (REPO / "docs" / "reference" / "cli.md").read_text().splitlines() if "`--timeout`" in line
    )
    assert "| number > 0, ≤ 600 |" in row, row
