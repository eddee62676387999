"""Incremental builds against a real OpenAI-compatible server on 127.0.0.1 that counts every input."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.embedding.cache import EmbeddingCache, _open
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.table import open_table
from docs_mcp_core.progress import NullReporter
from docs_mcp_core.search import run_search

from ..conftest import EXAMPLE_CHUNKS, write
from ..fakes.openai_server import FakeEmbeddingServer, Fault

N_EXAMPLE = EXAMPLE_CHUNKS


@pytest.fixture
def fake():
    with FakeEmbeddingServer(dims=32) as server:
        yield server


def cli(docs: Path, out: Path, server: FakeEmbeddingServer, *extra: str, model: str = "fake-embed", dims: str = "32"):
    args = [
        "build",
        "--docs-dir",
        str(docs),
        "--out",
        str(out),
        "--embedding-provider",
        "openai",
        "--embedding-model",
        model,
        "--embedding-base-url",
        server.url,
        "--embedding-max-retries",
        "3",
        *extra,
    ]
    if dims:
        args += ["--embedding-dimensions", dims]
    server.reset_counts()
    return CliRunner().invoke(main, args)


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def cache_entries(out: Path) -> set[str]:
    table = _open(out / ".embedding-cache")
    return set(table.search().select(["fingerprint"]).limit(100_000).to_arrow().column("fingerprint").to_pylist())


def index_ids(out: Path) -> list[str]:
    meta = json.loads((out / "metadata.json").read_text())
    return open_table(out, meta["index"]["version"]).to_arrow().column("chunk_id").to_pylist()


@pytest.mark.slow
def test_no_change_embeds_nothing(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    out = tmp_path / "out"
    first = ok(cli(example_docs, out, fake))
    assert len(fake.inputs) == N_EXAMPLE
    assert f"embedding cache: 0 hits, {N_EXAMPLE} misses among {N_EXAMPLE} chunks (0.0% hit rate)" in first
    assert f"embedded {N_EXAMPLE} chunks via openai in" in first
    assert f"index written: a new table version, {N_EXAMPLE} rows with full-text and vector indexes" in first
    assert f": 18 files (0 unchanged), {N_EXAMPLE} chunks, {N_EXAMPLE} chunks embedded; published to {out}\n" in first
    second = ok(cli(example_docs, out, fake))
    assert fake.inputs == [] and fake.requests == 0
    assert f"embedding cache: {N_EXAMPLE} hits, 0 misses among {N_EXAMPLE} chunks (100.0% hit rate)" in second
    assert "(18 unchanged files reused, " in second and "chunks via openai" not in second
    assert "index unchanged: the published table version is kept" in second
    assert (
        f": 18 files (18 unchanged), {N_EXAMPLE} chunks, 0 chunks embedded; the index at {out} is unchanged\n" in second
    )


@pytest.mark.slow
def test_one_paragraph_edit_embeds_one_chunk(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    page = example_docs / "guides" / "rate-limits.md"
    page.write_text(page.read_text().replace("so that one integration", "so that one noisy integration"))
    output = ok(cli(example_docs, out, fake))
    assert len(fake.inputs) == 1 and "one noisy integration" in fake.inputs[0]
    assert f"embedding cache: {N_EXAMPLE - 1} hits, 1 miss among {N_EXAMPLE} chunks" in output
    assert "(17 unchanged files reused, " in output


@pytest.mark.slow
def test_heading_rename_reembeds_the_chunks_whose_breadcrumb_has_it(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer
) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    retries = example_docs / "guides" / "retries.md"
    n_retries = sum(1 for c in json.loads((out / "chunks.json").read_text()) if c["filepath"] == "guides/retries.md")
    retries.write_text(retries.read_text().replace("## Timeouts", "## Client timeouts"))
    ok(cli(example_docs, out, fake))
    assert len(fake.inputs) == 1 and fake.inputs[0].startswith("Retries and timeouts > Client timeouts\n\n")
    retries.write_text(retries.read_text().replace("# Retries and timeouts", "# Retrying requests"))
    ok(cli(example_docs, out, fake))
    assert len(fake.inputs) == n_retries == 7
    assert all("Retrying requests" in text for text in fake.inputs)


@pytest.mark.slow
def test_deleted_file_embeds_nothing_and_leaves_index_and_cache(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer
) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    (example_docs / "guides" / "pagination.md").unlink()
    output = ok(cli(example_docs, out, fake))
    assert fake.inputs == []
    ids = index_ids(out)
    assert len(ids) == N_EXAMPLE - 5 and not any(i.startswith("guides/pagination.md") for i in ids)
    assert len(cache_entries(out)) == N_EXAMPLE - 5
    assert f"embedding cache: {N_EXAMPLE - 5} hits, 0 misses" in output
    assert all(
        h["filepath"] != "guides/pagination.md" for h in run_search(out, "starting_after next_cursor has_more").hits
    )


@pytest.mark.slow
def test_moved_file_reembeds_nothing(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    shutil.move(example_docs / "guides" / "rate-limits.md", example_docs / "guides" / "limits.md")
    output = ok(cli(example_docs, out, fake))
    # The embedded text is the heading path and the text, not the file path: the moved chunks' vectors
    # come from the cache under their new IDs; the old IDs are gone.
    assert fake.inputs == [] and f"embedding cache: {N_EXAMPLE} hits, 0 misses" in output
    ids = index_ids(out)
    assert not any(i.startswith("guides/rate-limits.md") for i in ids)
    assert sum(i.startswith("guides/limits.md#") for i in ids) == 4


@pytest.mark.slow
@pytest.mark.parametrize("change", ["model", "dimensions", "base_url"])
def test_provider_config_change_reembeds_everything_with_a_warning(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer, change: str
) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake, model="text-embedding-3-small"))
    if change == "base_url":
        with FakeEmbeddingServer(dims=32) as other:
            output = ok(cli(example_docs, out, other, model="text-embedding-3-small"))
            assert len(other.inputs) == N_EXAMPLE
    else:
        model = "text-embedding-3-large" if change == "model" else "text-embedding-3-small"
        dims = "16" if change == "dimensions" else "32"
        output = ok(cli(example_docs, out, fake, model=model, dims=dims))
        assert len(fake.inputs) == N_EXAMPLE
    assert "warn: embedding cache invalidated: config_fingerprint mismatch (provider config changed)" in output


@pytest.mark.slow
def test_cache_stays_proportional_to_the_corpus(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    for i in range(6):
        write(example_docs, f"guides/round-{i}.md", f"# Round {i}\n\n## Part\n\ntext {i}\n")
        if i >= 2:
            (example_docs / "guides" / f"round-{i - 2}.md").unlink()
        page = example_docs / "overview.md"
        page.write_text(page.read_text() + f"\n\nEdit number {i}.\n")
        ok(cli(example_docs, out, fake))
    chunks = json.loads((out / "chunks.json").read_text())
    assert len(chunks) == N_EXAMPLE + 4
    assert len(cache_entries(out)) == len(chunks)
    assert json.loads((out / ".embedding-cache" / "cache-meta.json").read_text())["entries"] == len(chunks)
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".embedding-cache.")]
    assert leftovers == []


def _corrupt_meta(cache: Path) -> str:
    (cache / "cache-meta.json").write_text("{not json")
    return "cache-meta.json is corrupt (not valid JSON)"


def _delete_meta(cache: Path) -> str:
    (cache / "cache-meta.json").unlink()
    return "cache-meta.json is missing"


def _truncate_table(cache: Path) -> str:
    for data in (cache / "vectors.lance" / "data").glob("*"):
        data.write_bytes(data.read_bytes()[:20])
    return "the vectors table is damaged (vectors.lance/data/"


def _delete_table(cache: Path) -> str:
    shutil.rmtree(cache / "vectors.lance")
    return "the vectors table is damaged (vectors.lance/"


def _scramble_table(cache: Path) -> str:
    for data in (cache / "vectors.lance" / "data").glob("*"):
        data.write_bytes(b"\0" * data.stat().st_size)  # same size: only the checksum notices
    return "the vectors table is damaged (vectors.lance/data/"


@pytest.mark.slow
@pytest.mark.parametrize("damage", [_corrupt_meta, _delete_meta, _truncate_table, _delete_table, _scramble_table])
def test_damaged_cache_warns_and_rebuilds_correctly(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer, damage
) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    reference = (out / "chunks.json").read_bytes()
    reason = damage(out / ".embedding-cache")
    if damage is _scramble_table:  # damage a same-size check cannot see shows when the cache is read
        page = example_docs / "overview.md"
        page.write_text(page.read_text() + "\n\nA change that needs a cache lookup.\n")
        reference = None
    output = ok(cli(example_docs, out, fake))
    assert f"warn: embedding cache invalidated: {reason}" in output
    assert len(fake.inputs) == N_EXAMPLE
    assert reference is None or (out / "chunks.json").read_bytes() == reference
    assert len(cache_entries(out)) == N_EXAMPLE
    assert ok(cli(example_docs, out, fake)) and fake.inputs == []  # and the fresh cache works


@pytest.mark.slow
def test_leftover_and_interrupted_swaps_are_recovered(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer
) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    cache = out / ".embedding-cache"
    # Killed between the two renames: the new cache sits complete in .tmp, the live one is gone.
    cache.rename(out / ".embedding-cache.tmp")
    output = ok(cli(example_docs, out, fake))
    assert "completed an interrupted swap" in output and fake.inputs == []
    # Killed while writing .tmp, with a stale .old around: both removed, cache still used.
    (out / ".embedding-cache.tmp").mkdir()
    (out / ".embedding-cache.tmp" / "junk").write_text("partial")
    shutil.copytree(cache, out / ".embedding-cache.old")
    output = ok(cli(example_docs, out, fake))
    assert "removed leftover .embedding-cache.tmp from an interrupted build" in output
    assert "removed leftover .embedding-cache.old from an interrupted build" in output
    assert (
        fake.inputs == []
        and not (out / ".embedding-cache.tmp").exists()
        and not (out / ".embedding-cache.old").exists()
    )


@pytest.mark.slow
def test_transient_failures_are_retried(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    fake.faults.extend([Fault("429", 1), Fault("500"), Fault("slow", 0.5), Fault("drop")])
    out = tmp_path / "out"
    output = ok(cli(example_docs, out, fake, "--embedding-batch-size", "40", "--embedding-concurrency", "1"))
    assert f"embedded {N_EXAMPLE} chunks" in output
    assert len(fake.inputs) == N_EXAMPLE  # failed attempts never reached the embedding step
    assert fake.requests == 3 + 3  # three batches, three retried failures (the slow one succeeded)


@pytest.mark.slow
def test_hard_failure_keeps_everything_and_loses_nothing_paid(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer
) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and "build.lock" not in p.name}
    for i in range(30):
        write(example_docs, f"new/page-{i}.md", f"# Page {i}\n\nBrand new content number {i}.\n")
    fake.fail_from_request = 4  # the quota runs out on the 4th request
    fake.fail_status = 429
    result = cli(
        example_docs,
        out,
        fake,
        "--embedding-batch-size",
        "5",
        "--embedding-concurrency",
        "1",
        "--embedding-max-retries",
        "0",
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "failed with HTTP 429" in result.output
    assert "embedded 15 of 30 missing chunks before the failure" in result.output
    assert "The published index and the embedding cache are unchanged." in result.output
    after = {
        p: p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and "build.lock" not in p.name and ".embedding-cache.pending" not in str(p)
    }
    assert after == before
    assert run_search(out, "idempotency key").hits  # previous index still serves
    fake.fail_from_request = None
    output = ok(cli(example_docs, out, fake))
    assert len(fake.inputs) == 15 and "reused 15 vectors kept by an earlier unfinished build" in output
    assert len(cache_entries(out)) == N_EXAMPLE + 30
    assert not (out / ".embedding-cache.pending").exists()


@pytest.mark.slow
def test_sigkill_mid_embedding(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FakeEmbeddingServer(dims=32) as fake:
        ok(cli(example_docs, out, fake))
        for i in range(40):
            write(example_docs, f"new/page-{i}.md", f"# Page {i}\n\nBrand new content number {i}.\n")
        fake.latency = 0.25
        fake.reset_counts()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "docs_mcp_core.cli",
                "build",
                "--docs-dir",
                str(example_docs),
                "--out",
                str(out),
                "--embedding-provider",
                "openai",
                "--embedding-model",
                "fake-embed",
                "--embedding-dimensions",
                "32",
                "--embedding-base-url",
                fake.url,
                "--embedding-batch-size",
                "4",
                "--embedding-concurrency",
                "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.time() + 60
        while fake.requests < 5 and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        time.sleep(0.5)  # let the request that was in flight at the kill finish on the server side
        # The published index is untouched and still answers.
        assert len(index_ids(out)) == N_EXAMPLE
        assert run_search(out, "webhook signature", hybrid=False).hits
        provider = make_provider(ProviderSettings("openai", model="fake-embed", dimensions=32, base_url=fake.url))
        cache = EmbeddingCache(out / ".embedding-cache", provider, NullReporter())
        kept = _open(cache.pending).count_rows() if (cache.pending / "vectors.lance").exists() else 0
        assert 0 < kept < 40
        fake.latency = 0.0
        output = ok(cli(example_docs, out, fake))
        assert len(fake.inputs) == 40 - kept
        assert f"reused {kept} vectors kept by an earlier unfinished build" in output
        assert len(index_ids(out)) == N_EXAMPLE + 40


@pytest.mark.slow
def test_cold_and_warm_builds_are_identical(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    ok(cli(example_docs, warm, fake))
    page = example_docs / "guides" / "errors.md"
    page.write_text(page.read_text() + "\n\nOne more paragraph about errors.\n")
    ok(cli(example_docs, warm, fake))
    assert len(fake.inputs) == 1
    ok(cli(example_docs, cold, fake))
    assert (cold / "chunks.json").read_bytes() == (warm / "chunks.json").read_bytes()
    cold_meta, warm_meta = (json.loads((p / "metadata.json").read_text()) for p in (cold, warm))
    assert cold_meta["index"]["content_hash"] == warm_meta["index"]["content_hash"]
    cold_t, warm_t = (
        open_table(p, m["index"]["version"]).to_arrow() for p, m in ((cold, cold_meta), (warm, warm_meta))
    )
    assert cold_t.column("chunk_id").to_pylist() == warm_t.column("chunk_id").to_pylist()
    assert np.array_equal(
        np.stack(cold_t.column("vector").to_numpy(zero_copy_only=False)),
        np.stack(warm_t.column("vector").to_numpy(zero_copy_only=False)),
    )
    queries = [
        ("retry backoff", {}),
        ("verify webhook signature", {"language": "go"}),
        ("pagination cursor", {}),
        ("error handling", {"language": "python"}),
        ("idempotency", {"scope": "global-guide"}),
    ]
    with FakeEmbeddingServer(dims=32) as other:  # query vectors from the same model, another endpoint
        for out in (cold, warm):
            meta = json.loads((out / "metadata.json").read_text())
            meta["embedding"]["base_url"] = other.url
            (out / "metadata.json").write_text(json.dumps(meta))
        for query, filters in queries:
            cold_page, warm_page = run_search(cold, query, filters=filters), run_search(warm, query, filters=filters)
            assert cold_page.mode == warm_page.mode == "hybrid"
            assert [h["chunk_id"] for h in cold_page.hits] == [h["chunk_id"] for h in warm_page.hits]


@pytest.mark.slow
def test_rebuild_cache_reembeds_everything(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    out = tmp_path / "out"
    ok(cli(example_docs, out, fake))
    version = json.loads((out / "metadata.json").read_text())["index"]["version"]
    ok(cli(example_docs, out, fake, "--rebuild-cache"))
    assert len(fake.inputs) == N_EXAMPLE
    assert json.loads((out / "metadata.json").read_text())["index"]["version"] > version
    assert len(cache_entries(out)) == N_EXAMPLE


@pytest.mark.slow
def test_cache_dir_option(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    cache = tmp_path / "ci-cache"
    ok(cli(example_docs, tmp_path / "a", fake, "--cache-dir", str(cache)))
    assert (cache / "cache-meta.json").exists() and not (tmp_path / "a" / ".embedding-cache").exists()
    ok(cli(example_docs, tmp_path / "b", fake, "--cache-dir", str(cache)))  # a fresh output, a restored CI cache
    assert fake.inputs == []


@pytest.mark.slow
def test_cost_truncation_and_key_handling(
    example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-value-123")
    out = tmp_path / "out"
    output = ok(cli(example_docs, out, fake, model="text-embedding-3-small", dims="32"))
    assert "tokens, estimated cost $" in output
    assert fake.headers[0]["authorization"] == "Bearer sk-test-SECRET-value-123"
    assert "SECRET" not in output
    for path in out.rglob("*"):
        if path.is_file():
            assert b"sk-test-SECRET" not in path.read_bytes(), path
    (example_docs / "guides" / "long.md").write_text("# A long page\n\n" + "retry the request " * 60 + "\n")
    output = ok(cli(example_docs, tmp_path / "small", fake, model="all-minilm"))
    assert "were longer than all-minilm's limit and were truncated" in output
    assert max(len(t) for t in fake.inputs) <= 256 * 3


def test_unknown_model_needs_dimensions(example_docs: Path, tmp_path: Path, fake: FakeEmbeddingServer) -> None:
    result = cli(example_docs, tmp_path / "out", fake, model="mystery-model", dims="")
    assert result.exit_code == 1
    assert "unknown embedding model 'mystery-model': pass --embedding-dimensions" in result.output


def test_missing_api_key_for_openai_itself(example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(
        main, ["build", "--docs-dir", str(example_docs), "--out", str(tmp_path / "o"), "--embedding-provider", "openai"]
    )
    assert result.exit_code == 1 and "set OPENAI_API_KEY to use the openai embedding provider" in result.output
    assert f"none of the {N_EXAMPLE} missing chunks were embedded" in result.output
    assert not (tmp_path / "o" / "metadata.json").exists()


def test_hash_provider_uses_the_cache_too(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    provider = make_provider(ProviderSettings("hash", dimensions=64))
    first = build(example_docs, out, provider)
    assert first.embedded.stats.embedded == N_EXAMPLE
    second = build(example_docs, out, provider)
    assert second.embedded.stats.embedded == 0 and second.reused_files == 18
    assert second.index.version == first.index.version
    assert os.path.exists(out / ".embedding-cache" / "cache-meta.json")
