"""`docs-mcp build` and `docs-mcp search` against real LanceDB tables."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.cached_vectors import embed_chunks
from docs_mcp_core.indexing.chunks import chunk_corpus
from docs_mcp_core.indexing.fingerprints import fingerprint_chunks
from docs_mcp_core.indexing.lancedb_index import write_index
from docs_mcp_core.indexing.metadata import publish_metadata
from docs_mcp_core.indexing.table import open_table
from docs_mcp_core.search import run_search

from ..conftest import EXAMPLE_CHUNKS, write


def snapshot(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "build.lock" not in p.name
    }


def metadata_without_time(out: Path) -> dict:
    data = json.loads((out / "metadata.json").read_text())
    data["stats"].pop("indexed_at")
    return data


def cli_build(runner: CliRunner, docs: Path, out: Path, *extra: str):
    return runner.invoke(
        main, ["build", "--docs-dir", str(docs), "--out", str(out), "--embedding-provider", "none", *extra]
    )


def test_build_writes_the_documented_layout(runner: CliRunner, example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli_build(runner, example_docs, out, "--embedding-provider", "hash", "--description", "Parcelly docs")
    assert result.exit_code == 0, result.output
    assert (
        f"index written: a new table version, {EXAMPLE_CHUNKS} rows with full-text and vector indexes" in result.output
    )
    assert f"{EXAMPLE_CHUNKS} chunks, {EXAMPLE_CHUNKS} chunks embedded; published to {out}\n" in result.output
    assert f"embedded {EXAMPLE_CHUNKS} chunks via hash in" in result.output
    chunks = json.loads((out / "chunks.json").read_text())
    assert [(c["filepath"], c["chunk_index"]) for c in chunks] == sorted(
        (c["filepath"], c["chunk_index"]) for c in chunks
    )
    assert list(chunks[0]) == [
        "chunk_id",
        "filepath",
        "heading",
        "heading_level",
        "breadcrumb",
        "content",
        "content_text",
        "chunk_index",
        "metadata",
    ]
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["metadata_version"] == "1.0.0" and meta["corpus_description"] == "Parcelly docs"
    assert meta["embedding"] == {"provider": "hash", "model": "hash-v1", "dimensions": 256}
    assert meta["taxonomy"]["language"] == {
        "description": "SDK language. Set it to get that SDK's code; global guides are included automatically.",
        "values": ["go", "python", "typescript"],
        "vector_collapse": True,
    }
    assert meta["stats"]["total_chunks"] == EXAMPLE_CHUNKS and meta["stats"]["total_files"] == 18
    assert meta["mcpServerInstructions"].startswith("Parcelly is a shipping API")
    assert [p["name"] for p in meta["prompts"]] == ["integrate-webhooks"]
    table = open_table(out, meta["index"]["version"])
    assert table.count_rows() == EXAMPLE_CHUNKS
    assert table.schema.field("vector").type.list_size == 256
    indexed = {tuple(i.columns) for i in table.list_indices()}
    assert {("heading",), ("content_text",), ("chunk_id",), ("filepath",), ("meta_language",)} <= indexed
    rows = table.to_arrow().column("chunk_id").to_pylist()
    assert rows == sorted(rows)


def test_none_provider_has_no_vectors(runner: CliRunner, example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli_build(runner, example_docs, out).exit_code == 0
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["embedding"] is None
    assert "vector" not in open_table(out, meta["index"]["version"]).schema.names


def docs_mcp_process(seed: int, *args: str) -> subprocess.CompletedProcess[str]:
    """A fresh `docs-mcp` process with its own string-hash seed, so set and dict order differ between runs."""
    return subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
    )


@pytest.mark.slow
def test_builds_are_deterministic(runner: CliRunner, example_docs: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for seed, out in ((1, a), (2, b)):
        done = docs_mcp_process(
            seed, "build", "--docs-dir", str(example_docs), "--out", str(out), "--embedding-provider", "hash", "-q"
        )
        assert done.returncode == 0, done.stderr
    assert (a / "chunks.json").read_bytes() == (b / "chunks.json").read_bytes()
    assert metadata_without_time(a) == metadata_without_time(b)
    searches = [
        docs_mcp_process(seed, "search", "--index", str(out), "retry a failed request", "--json", "--limit", "10")
        for seed, out in ((3, a), (4, b))
    ]
    hits = [json.loads(s.stdout)["hits"] for s in searches]  # next_cursor is signed with each index's own secret
    assert hits[0] and hits[0] == hits[1]
    # Rebuilding into the same output changes nothing but the timestamp, and reuses the table version.
    before = metadata_without_time(a)
    result = cli_build(runner, example_docs, a, "--embedding-provider", "hash")
    assert "index unchanged" in result.output
    assert metadata_without_time(a) == before


def test_failed_validation_leaves_the_previous_output_untouched(
    runner: CliRunner, example_docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert cli_build(runner, example_docs, out).exit_code == 0
    before = snapshot(out)
    write(example_docs, "sdks/go/.docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h5"}}')
    write(example_docs, "guides/new.md", "# New\n\nfresh text\n")
    result = cli_build(runner, example_docs, out)
    assert result.exit_code == 1
    assert "sdks/go/.docs-mcp.json:1: error: strategy.chunk_by" in result.output
    assert "nothing was written" in result.output and "Traceback" not in result.output
    assert snapshot(out) == before
    # Nothing at all is created for a first build that fails.
    assert cli_build(runner, example_docs, tmp_path / "never").exit_code == 1
    assert not (tmp_path / "never").exists()


def ids(out: Path, query: str, **kwargs) -> list[str]:
    return [h["chunk_id"] for h in run_search(out, query, **kwargs).hits]


def fts_ids(table, query: str) -> list[str]:
    return [
        r["chunk_id"] for r in table.search(query, query_type="fts").select(["chunk_id", "_score"]).limit(5).to_list()
    ]


def test_publish_is_atomic_and_readers_stay_pinned(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    provider = make_provider(ProviderSettings("none"))
    first = build(example_docs, out, provider)
    old_reader = open_table(out, first.index.version)
    assert fts_ids(old_reader, "zebra crossing") == []

    write(example_docs, "guides/zebra.md", "# Zebra crossing\n\nParcels may cross at the zebra crossing.\n")
    chunkset = chunk_corpus(example_docs)
    embedded = embed_chunks(chunkset, fingerprint_chunks(chunkset, provider), provider, cache_dir=tmp_path / "c")
    info = write_index(out, chunkset, embedded)
    # Written but not published: searches still get the published version.
    assert ids(out, "zebra crossing") == []
    publish_metadata(out, chunkset, info, provider)
    assert ids(out, "zebra crossing")[0] == "guides/zebra.md#_preamble"
    # A reader that opened the previous version keeps answering from it.
    assert fts_ids(old_reader, "zebra crossing") == []
    assert fts_ids(old_reader, "idempotency key")[0].startswith("guides/idempotency.md")


@pytest.mark.slow
def test_old_table_versions_are_pruned_but_the_previous_one_is_kept(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    provider = make_provider(ProviderSettings("none"))
    published = []
    for i in range(4):
        write(example_docs, "guides/round.md", f"# Round {i}\n\ntext {i}\n")
        published.append(build(example_docs, out, provider).index.version)
    versions = [v["version"] for v in open_table(out).list_versions()]
    assert published[-2] in versions and published[-1] in versions
    assert min(versions) >= published[-2]
    assert open_table(out, published[-2]).count_rows() == EXAMPLE_CHUNKS + 1


def test_search_cli(runner: CliRunner, example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli_build(runner, example_docs, out).exit_code == 0
    result = runner.invoke(main, ["search", "--index", str(out), "idempotency key header", "--limit", "3"])
    assert result.exit_code == 0
    first = result.output.splitlines()[0]
    assert first.startswith(" 1. guides/idempotency.md#")
    filtered = runner.invoke(
        main,
        [
            "search",
            "--index",
            str(out),
            "verify webhook signature",
            "--filter",
            "scope=sdk-specific",
            "--filter",
            "language=go",
            "--json",
        ],
    )
    hits = json.loads(filtered.output)["hits"]
    assert hits and all(h["metadata"]["language"] == "go" for h in hits)
    bad = runner.invoke(main, ["search", "--index", str(out), "x", "--filter", "language=cobol"])
    assert (
        bad.exit_code == 1
        and "Invalid taxonomy value for 'language': 'cobol'. Allowed values: go, python, typescript" in bad.output
    )
    missing = runner.invoke(main, ["search", "--index", str(tmp_path / "nope"), "x"])
    assert missing.exit_code == 1 and "no index at" in missing.output


def test_hash_vectors_are_deterministic_and_normalized() -> None:
    provider = make_provider(ProviderSettings("hash", dimensions=64))
    a = provider.embed(["retry with backoff", "retry with backoff", "webhook signature"])
    assert a.shape == (3, 64) and a.dtype == np.float32
    assert np.array_equal(a[0], a[1]) and not np.array_equal(a[0], a[2])
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
