"""The search engine's parts: fusion, filters, collapse, cursors, the two vector paths, mustache."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import Weights, run_search
from docs_mcp_core.search import cursor as cursors
from docs_mcp_core.search import published as published_module
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.filters import prefilter, where_clause
from docs_mcp_core.search.fusion import collapse_key, rrf, score_fusion
from docs_mcp_core.search.library import loaded_embedder
from docs_mcp_core.search.published import ChunkInfo
from docs_mcp_core.server.mustache import TemplateError, render

TAXONOMY = {
    "language": {"values": ["go", "python"]},
    "scope": {"values": ["global-guide", "sdk-specific"]},
    "topic": {"values": ["reliability"]},
}


def test_weighted_rrf_with_deterministic_ties() -> None:
    fused = rrf([(1.0, ["a", "b", "c"]), (1.25, ["c", "a"]), (1.0, ["z", "y"])], k=60)
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1.25 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1.25 / 61)
    assert [cid for cid, _ in fused] == ["a", "c", "z", "b", "y"]
    assert [cid for cid, _ in rrf([(1.0, ["y"]), (1.0, ["x"])], k=60)] == ["x", "y"]  # equal scores: by chunk_id


def test_score_fusion_scales_each_list_to_its_candidates() -> None:
    text = [("a", 10.0), ("b", 2.0), ("c", 1.9)]
    vector = [("b", 0.71), ("a", 0.70), ("c", 0.20)]
    fused = dict(score_fusion([(1.0, text, False), (1.5, vector, False)]))
    assert fused["a"] == pytest.approx(1.0 + 1.5 * 0.50 / 0.51)
    assert fused["b"] == pytest.approx(0.1 / 8.1 + 1.5)
    assert fused["c"] == pytest.approx(0.0)
    # BM25 puts a far ahead and the vector list prefers b by a hair: a stays first, where rank fusion
    # (the same weights, k 10) would put b first.
    assert [cid for cid, _ in score_fusion([(1.0, text, False), (1.5, vector, False)])][0] == "a"
    assert [cid for cid, _ in rrf([(1.0, ["a", "b", "c"]), (1.5, ["b", "a", "c"])], k=10)][0] == "b"
    # A list whose candidates all score the same counts fully for each; ties break by chunk_id.
    assert score_fusion([(1.0, [("y", 3.0), ("x", 3.0)], False)]) == [("x", 1.0), ("y", 1.0)]
    assert score_fusion([(1.0, [], True)]) == []


def test_score_fusion_counts_the_last_match_of_a_whole_list() -> None:
    """Regression: `dub.links.create()` on dub-ts, hybrid. The exact phrase matched three chunks, the
    operation's section last; min-max gave it 0 there, as if it had not matched, and the two README
    examples it shared the phrase with took the top places by the phrase's weight alone."""
    phrase = [("usage", 6.2), ("readme", 5.9), ("operation", 4.7)]
    text = [("operation", 11.0), ("usage", 3.0), ("readme", 2.0), ("other", 1.0)]
    whole = dict(score_fusion([(2.0, phrase, True)]))
    assert whole["operation"] == pytest.approx(2.0 * 4.7 / 6.2)  # scaled from 0, BM25's score for no match
    assert dict(score_fusion([(2.0, phrase, False)]))["operation"] == 0.0  # a cut list: from its last score
    fused = [cid for cid, _ in score_fusion([(1.0, text, False), (2.0, phrase, True)])]
    assert fused[0] == "operation"
    assert [cid for cid, _ in score_fusion([(1.0, text, False), (2.0, phrase, False)])][0] == "usage"


def test_where_clause_auto_includes_global_guides_only_without_scope() -> None:
    assert where_clause({}, TAXONOMY) is None
    assert where_clause({"topic": "reliability"}, TAXONOMY) == "meta_topic = 'reliability'"
    auto = where_clause({"language": "go", "topic": "reliability"}, TAXONOMY)
    assert auto.startswith(
        "meta_topic = 'reliability' AND ((meta_scope = 'sdk-specific' AND meta_language = 'go') OR "
        "meta_scope = 'global-guide'"
    )
    strict = where_clause({"language": "go", "scope": "sdk-specific"}, TAXONOMY)
    assert strict == "meta_language = 'go' AND meta_scope = 'sdk-specific'"
    assert where_clause({"language": "o'brien"}, {"language": {}}) == "meta_language = 'o''brien'"


# folder -> its chunks' metadata: every way a scope and a language can be there, odd or missing
METADATA_KINDS = {
    "go": {"scope": "sdk-specific", "language": "go"},
    "python": {"scope": "sdk-specific", "language": "python"},
    "guides": {"scope": "global-guide"},
    "api": {"scope": "api-reference", "language": "go"},
    "bare": {"language": "python"},
    "odd": {"scope": "other", "topic": "reliability"},
    "quoted": {"language": "o'brien", "scope": "global-guide", "topic": "reliability"},
    "none": {},
}


def test_prefilter_in_memory_passes_the_chunks_lancedb_sql_does(tmp_path: Path) -> None:
    """The lists computed in memory filter by Prefilter.passes, LanceDB's by the same filters' SQL: for
    every filter set the index's values allow, both let the same chunks through."""
    docs = tmp_path / "docs"
    taxonomy = {"language": {"vector_collapse": True}, "scope": {}, "topic": {}}
    (docs / "none").mkdir(parents=True)
    (docs / ".docs-mcp.json").write_text(json.dumps({"version": "1", "taxonomy": taxonomy}))
    for folder, metadata in METADATA_KINDS.items():
        (docs / folder).mkdir(exist_ok=True)
        if metadata:
            (docs / folder / ".docs-mcp.json").write_text(json.dumps({"version": "1", "metadata": metadata}))
        (docs / folder / "page.md").write_text(f"# {folder}\n\nA page about labels and {folder} things.\n")
    out = tmp_path / "out"
    build(docs, out, make_provider(ProviderSettings("none")))

    async def compare() -> int:
        index = await published_module.PublishedIndex(out).open()
        values = {key: [None, *index.taxonomy[key].values] for key in ("language", "scope", "topic")}
        compared = 0
        for language in values["language"]:
            for scope in values["scope"]:
                for topic in values["topic"]:
                    chosen = {"language": language, "scope": scope, "topic": topic}
                    where = prefilter({k: v for k, v in chosen.items() if v is not None}, index.taxonomy)
                    if where is None:
                        continue
                    rows = await (await index.lance()).query().where(where.sql).select(["chunk_id"]).to_arrow()
                    assert await index.allowed(where) == frozenset(rows.column("chunk_id").to_pylist()), chosen
                    compared += 1
        return compared

    assert asyncio.run(compare()) == 4 * 5 * 2 - 1  # each key any of its values or none, but not all none


def test_collapse_key_stars_the_language_segment() -> None:
    def info(path: str, lang: str, chunk_id: str = "x#y") -> ChunkInfo:
        return ChunkInfo(chunk_id, path, "Buy a label", "", 0, {"language": lang})

    a = collapse_key(info("sdks/python/shipments.md", "python"), ["language"])
    b = collapse_key(info("sdks/go/shipments.md", "go"), ["language"])
    assert a == b == "sdks/*/shipments.md:Buy a label"
    assert (
        collapse_key(info("sdks/go/shipments.md", "go", "x#y-part-2"), ["language"])
        == "sdks/*/shipments.md:Buy a label:2"
    )
    assert collapse_key(info("guides/retries.md", ""), ["language"]) is None


def test_cursors_are_bound_and_signed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cursors.SECRET_ENV, raising=False)
    with pytest.raises(DocsMcpError, match="no index at"):  # no secret is written into a folder that is no index
        cursors.load_secret(tmp_path)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "metadata.json").write_text("{}")
    secret = cursors.load_secret(tmp_path)
    assert cursors.load_secret(tmp_path) == secret  # generated once, then reused
    assert oct((tmp_path / ".docs-mcp" / "cursor-secret").stat().st_mode & 0o777) == "0o600"
    token = cursors.encode(secret, offset=20, query="retry  backoff", filters={"language": "go"}, index="v1")
    assert cursors.decode(secret, token, query="retry backoff", filters={"language": "go"}, index="v1") == 20
    with pytest.raises(cursors.CursorError, match="stale"):
        cursors.decode(secret, token, query="retry backoff", filters={"language": "go"}, index="v2")
    with pytest.raises(cursors.CursorError, match="signature is invalid"):
        cursors.decode(
            b"another-secret-of-enough-length-0123456789",
            token,
            query="retry backoff",
            filters={"language": "go"},
            index="v1",
        )
    monkeypatch.setenv(cursors.SECRET_ENV, "shared-by-all-replicas-0123456789abcdef")
    assert cursors.load_secret(tmp_path) == b"shared-by-all-replicas-0123456789abcdef"


def test_in_memory_and_table_vector_paths_rank_alike(example_docs: Path, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("hash", dimensions=64)))
    queries = [
        ("webhook signature verification", {}),
        ("retry with backoff", {"language": "go"}),
        ("cancel shipment refund", {"scope": "sdk-specific"}),
    ]

    async def vector_lists(memory: bool) -> list[list[str]]:
        engine = SearchEngine(out, Weights(text=0.0, phrase=0.0), embedder_factory=loaded_embedder)
        index = await engine.index()
        assert (index.vectors is not None) == memory
        results = []
        for query, filters in queries:
            fused, mode = await engine.fused(index, query, filters)
            assert mode == "hybrid"
            results.append([cid for cid, _ in fused][:15])
        engine.close()
        return results

    in_memory = asyncio.run(vector_lists(True))
    monkeypatch.setattr(published_module, "MEMORY_VECTOR_BYTES", 0)
    from_table = asyncio.run(vector_lists(False))
    assert in_memory == from_table


def test_text_only_search_of_a_vector_index(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("hash", dimensions=64)))
    assert run_search(out, "retry backoff").mode == "hybrid"
    assert run_search(out, "retry backoff", hybrid=False).mode == "text"


@pytest.mark.slow
def test_hybrid_fusion_option_of_the_search_command(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("hash", dimensions=64)))

    def scores(*options: str) -> list[float]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "docs_mcp_core.cli",
                "search",
                "--index",
                str(out),
                "--json",
                "--limit",
                "10",
                *options,
                "retry with backoff",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["mode"] == "hybrid"
        return [hit["score"] for hit in answer["hits"]]

    by_rank = scores("--hybrid-fusion", "rrf")
    default = Weights()
    # Rank fusion: at most every list's weight / (k + 1); scaled scores: the vector list's best alone is 1.5.
    assert max(by_rank) <= (default.text + default.phrase + default.vector) / (default.k + 1)
    assert max(scores()) >= default.vector > max(by_rank)
    bad = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", "search", "--index", str(out), "--hybrid-fusion", "max", "x"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "'scores', 'rrf'" in bad.stderr


def test_mustache_subset() -> None:
    template = "Hi {{name}}{{#framework}} with {{framework}}{{/framework}}{{^framework}} (any framework){{/framework}}{{! note }}."
    assert render(template, {"name": "Ada", "framework": "Flask"}) == "Hi Ada with Flask."
    assert render(template, {"name": "Ada"}) == "Hi Ada (any framework)."
    assert render("{{{raw}}} & {{&raw}}", {"raw": "<b>"}) == "<b> & <b>"
    with pytest.raises(TemplateError, match="never closed"):
        render("{{#open}} x", {})
    with pytest.raises(TemplateError, match="not open"):
        render("x {{/close}}", {})
