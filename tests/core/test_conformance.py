"""dub-ts conformance with the reference implementation's chunk IDs, and a true max chunk size."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.corpus.manifest import DEFAULT_MAX_CHUNK_SIZE
from docs_mcp_core.indexing.chunks import analyze_corpus

from ..conftest import FIXTURES

EXPECTED = (FIXTURES / "conformance" / "dub-ts-chunk-ids.txt").read_text().split()


@pytest.fixture(scope="module")
def dub_chunks(dub_ts_docs: Path):
    result = analyze_corpus(dub_ts_docs)
    assert not [d for d in result.diagnostics if d.severity == "error"]
    return result.chunks


@pytest.mark.slow
def test_every_reference_id_is_produced(dub_chunks) -> None:
    produced = {c.chunk_id for c in dub_chunks}
    assert len(EXPECTED) == 1587
    assert sorted(set(EXPECTED) - produced) == []


def test_extra_ids_are_only_size_split_parts(dub_chunks) -> None:
    extras = {c.chunk_id for c in dub_chunks} - set(EXPECTED)
    assert extras, "the 60k-character sections must be split"
    for chunk_id in extras:
        base, _, n = chunk_id.rpartition("-part-")
        assert base in EXPECTED and n.isdigit() and int(n) >= 2, chunk_id


def test_no_chunk_exceeds_the_max_size(dub_chunks) -> None:
    assert max(len(c.content) for c in dub_chunks) <= DEFAULT_MAX_CHUNK_SIZE
    parts = [
        c
        for c in dub_chunks
        if c.chunk_id.startswith("docs/models/operations/listeventsrequest.md#listeventsrequest/fields")
    ]
    assert len(parts) >= 3
    sizes = [len(c.content) for c in parts]
    assert min(sizes) > 0.5 * max(sizes)  # evenly split, unlike a 9-char part beside a 56k one


@pytest.mark.slow
def test_dub_ts_builds_and_searches(dub_ts_docs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "dub"
    result = runner.invoke(
        main, ["build", "--docs-dir", str(dub_ts_docs), "--out", str(out), "-q", "--embedding-provider", "none"]
    )
    assert result.exit_code == 0, result.output
    assert len(json.loads((out / "chunks.json").read_text())) == len(EXPECTED) + 51
    search = runner.invoke(main, ["search", "--index", str(out), "retry backoff strategy", "--limit", "3"])
    assert "README.md#retries" in search.output
