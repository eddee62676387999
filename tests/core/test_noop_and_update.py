"""The cheap rebuilds: a no-op reads no file whose stat is the recorded one (git's racy rule
keeps that safe), records its audit row without DuckDB, and a small edit updates the published
table instead of rewriting it, with the search results of a fresh build."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from docs_mcp_core import fsutil
from docs_mcp_core.cli import main
from docs_mcp_core.embedding import EmbeddingProvider, ProviderSettings, make_provider
from docs_mcp_core.indexing import file_reuse
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.chunks import chunk_corpus
from docs_mcp_core.indexing.table import open_table
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.progress import NullReporter
from docs_mcp_core.search import Weights
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.library import loaded_embedder

from ..conftest import REPO
from ..fakes.openai_server import FakeEmbeddingServer


class Recorder(NullReporter):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)

    def warn(self, message: str) -> None:
        self.lines.append("warning: " + message)


def text_build(docs: Path, out: Path) -> Recorder:
    reporter = Recorder()
    build(docs, out, make_provider(ProviderSettings("none")), reporter=reporter)
    return reporter


def settle(docs: Path, seconds_ago: float = 3600) -> None:
    """Give every file an old mtime, as files not touched since well before a build."""
    when = time.time() - seconds_ago
    for path in docs.rglob("*.md"):
        os.utime(path, (when, when))


def test_noop_rebuild_reads_no_file_whose_stat_is_recorded(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    settle(example_docs)
    text_build(example_docs, out)
    again = chunk_corpus(example_docs, reuse_from=out)
    assert (again.hashed, again.reused) == (0, len(again.files))
    reporter = text_build(example_docs, out)
    parsed = next(line for line in reporter.lines if line.startswith("parsed "))
    assert "0 files read" in parsed, parsed


def test_racy_and_touched_files_are_read_again_and_edits_are_caught(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    settle(example_docs)
    page = example_docs / "guides" / "errors.md"
    page.write_text(page.read_text() + "\nA closing line.\n")  # modified now: racy for the build below
    text_build(example_docs, out)
    assert chunk_corpus(example_docs, reuse_from=out).hashed == 1  # its stat matches, but it is racy

    # The racy rule itself: a matching stat recorded too close to its build's scan is not trusted.
    previous, _ = file_reuse.load_previous(out)
    assert previous is not None
    stat = fsutil.file_stat(page)
    assert previous.trusted_sha256("guides/errors.md", stat) is None
    settled = dict(previous.files["guides/errors.md"], stat=[stat[0], 1, *stat[2:]])
    previous.files["guides/errors.md"] = settled
    assert previous.trusted_sha256("guides/errors.md", [stat[0], 1, *stat[2:]]) == settled["sha256"]

    # Same size, mtime put back: still caught (racy, and its ctime moved), and the chunks say so.
    recorded = page.stat()
    text = page.read_text()
    page.write_text(text.replace("A closing line.", "A changed line."))
    os.utime(page, ns=(recorded.st_atime_ns, recorded.st_mtime_ns))
    assert page.stat().st_size == recorded.st_size and page.stat().st_mtime_ns == recorded.st_mtime_ns
    result = chunk_corpus(example_docs, reuse_from=out)
    assert result.reparsed == 1
    assert any("A changed line." in c.content for c in result.chunks if c.filepath == "guides/errors.md")


def test_touch_reads_the_file_but_reembeds_and_rewrites_nothing(example_docs: Path, tmp_path: Path, runner) -> None:
    out = tmp_path / "out"
    settle(example_docs)
    args = ["build", "--docs-dir", str(example_docs), "--out", str(out), "--embedding-provider", "hash"]
    assert runner.invoke(main, args).exit_code == 0
    settle(example_docs, seconds_ago=600)  # `touch` to another time, content unchanged
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "0 chunks embedded;" in result.output and "index unchanged" in result.output
    reused, read = re.search(r"\((\d+) unchanged files reused, (\d+) files read\)", result.output).groups()
    assert reused == read  # every stat moved: all read
    again = runner.invoke(main, args)
    assert "0 files read" in again.output, again.output  # and recorded again, so the next no-op reads none


@pytest.mark.slow
def test_every_build_is_in_the_audit_whether_or_not_it_loaded_duckdb(
    example_docs: Path, tmp_path: Path, runner
) -> None:
    out = tmp_path / "out"
    settle(example_docs)
    for _ in range(3):  # a cold build creates the database; the two no-ops leave rows beside it
        text_build(example_docs, out)
    pending = OutputLayout(out).audit_pending
    assert len(pending.read_text().splitlines()) == 2

    def count() -> str:
        result = runner.invoke(
            main, ["audit", "--out", str(out), "--sql", "SELECT count(*), count(DISTINCT build_id) FROM builds"]
        )
        assert result.exit_code == 0, result.output
        return result.output.splitlines()[2].split()

    assert count() == ["3", "3"]
    last = runner.invoke(main, ["audit", "--out", str(out)])
    assert json.loads(pending.read_text().splitlines()[-1])["build_id"] in last.output  # the newest is the last build
    # A build with chunk events writes the database: the pending rows move in, none twice.
    build(example_docs, out, make_provider(ProviderSettings("hash")))
    assert not pending.exists()
    assert count() == ["4", "4"]


def _ranked(out: Path, queries: list[str], hybrid: bool = False) -> list[dict]:
    async def run() -> list[dict]:
        engine = SearchEngine(out, Weights(), embedder_factory=loaded_embedder if hybrid else None)
        try:
            index = await engine.index()
            found = []
            for q in queries:
                fused, _ = await engine.fused(index, q, {})
                found.append({"lists": await engine.ranked(index, q, None), "fused": fused})
            return found
        finally:
            engine.close()

    return asyncio.run(run())


@pytest.mark.slow
def test_small_edit_updates_the_table_with_the_results_of_a_fresh_build(dub_ts_docs: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(dub_ts_docs / ".docs-mcp.json", docs)
    for n in range(2):  # two copies: every chunk has a twin, so BM25 ties sit at every list's cut
        shutil.copytree(dub_ts_docs, docs / f"copy{n}", ignore=shutil.ignore_patterns(".docs-mcp.json"))
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    text_build(docs, out)
    published = json.loads((out / "metadata.json").read_text())["index"]["version"]
    reader = open_table(out, published)  # a server still on the published version
    before = reader.search("create a link", query_type="fts").select(["chunk_id"]).limit(5).to_list()

    edited = sorted(docs.rglob("*.md"))[::100]
    for path in edited:
        path.write_text(path.read_text() + "\n\nA new closing paragraph about rate limits.\n")
    (docs / "copy1" / "README.md").unlink()
    lines = text_build(docs, out).lines
    updated = f"index updated: a new table version, the rows of {len(edited) + 1} changed file"
    assert any(line.startswith(updated) for line in lines), lines
    assert not any(line.startswith("warning") for line in lines), lines
    assert reader.search("create a link", query_type="fts").select(["chunk_id"]).limit(5).to_list() == before

    text_build(docs, fresh)
    assert (out / "chunks.json").read_bytes() == (fresh / "chunks.json").read_bytes()
    queries = [case["query"] for case in json.loads((REPO / "benchmarks/suites/dub-ts.json").read_text())["cases"]]
    assert _ranked(out, queries) == _ranked(fresh, queries)  # candidate IDs, fused IDs and scores

    # A second update on top, then a no-op: the records of shared files hold, nothing reads as damaged.
    edited[0].write_text(edited[0].read_text() + "\nOne more line.\n")
    assert any(line.startswith("index updated: ") for line in text_build(docs, out).lines)
    lines = text_build(docs, out).lines
    assert "index unchanged: the published table version is kept" in lines, lines
    assert not any(line.startswith("warning") for line in lines), lines


@pytest.mark.slow
def test_small_edit_updates_a_table_with_vectors_with_the_results_of_a_fresh_build(
    dub_ts_docs: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(dub_ts_docs / ".docs-mcp.json", docs)
    for n in range(2):
        shutil.copytree(dub_ts_docs, docs / f"copy{n}", ignore=shutil.ignore_patterns(".docs-mcp.json"))
    out, fresh, cache = tmp_path / "out", tmp_path / "fresh", tmp_path / "cache"
    provider = make_provider(ProviderSettings("hash", dimensions=64))
    build(docs, out, provider, cache_dir=cache)
    edited = sorted(docs.rglob("*.md"))[::100]
    for path in edited:
        path.write_text(path.read_text() + "\n\nA new closing paragraph about rate limits.\n")
    reporter = Recorder()
    summary = build(docs, out, provider, cache_dir=cache, reporter=reporter)
    assert any(
        line.startswith(f"index updated: a new table version, the rows of {len(edited)} changed file")
        for line in reporter.lines
    )
    assert summary.embedded.stats.embedded == len(edited)  # the new closing paragraphs' chunks only

    build(docs, fresh, provider, cache_dir=cache)
    assert (out / "chunks.json").read_bytes() == (fresh / "chunks.json").read_bytes()
    queries = [case["query"] for case in json.loads((REPO / "benchmarks/suites/dub-ts.json").read_text())["cases"]]
    ranked = _ranked(out, queries, hybrid=True)
    assert all("vector" in found["lists"] for found in ranked)
    assert ranked == _ranked(fresh, queries, hybrid=True)  # text, phrase and vector lists, fused IDs and scores


@pytest.mark.slow
def test_vectors_of_another_model_are_never_kept_by_an_update(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    edited = max(example_docs.rglob("*.md"), key=lambda p: (-p.stat().st_size, str(p)))  # the smallest file
    reporter = Recorder()
    with FakeEmbeddingServer(dims=32) as server:

        def provider(model: str) -> EmbeddingProvider:  # the same dimensions: the table's schema is the same
            return make_provider(ProviderSettings("openai", model=model, base_url=server.url, dimensions=32))

        build(example_docs, out, provider("model-a"), reporter=reporter)
        for model in ("model-a", "model-b"):  # an edit with the same model, then one with another
            edited.write_text(edited.read_text() + "\n\nOne more line.\n")
            summary = build(example_docs, out, provider(model), reporter=reporter)
    updates = [line for line in reporter.lines if line.startswith("index updated: ")]
    assert len(updates) == 1, reporter.lines  # the first edit only: model-b's build rewrote every row
    assert summary.embedded.stats.embedded == len(summary.embedded.fingerprints)
    assert json.loads((out / "metadata.json").read_text())["index"]["passages_key"] == summary.embedded.passages_key
