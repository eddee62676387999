"""Search answers every shipped suite's questions with the top 10 it answered when they were recorded.

Speed work on the engine must not move a hit: each suite's corpus is built text-only and with
vectors (the `hash` provider: deterministic on every machine, so the fused text + vector
ranking is checked without the model's floating point), and the first 10 chunk IDs of every
case's query and follow-up are compared with tests/fixtures/rankings/<suite>.json. After a change
that means to move rankings (and says so), rerecord with DOCS_MCP_RECORD_RANKINGS=1.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import words_cache
from docs_mcp_core.search.library import Library
from docs_mcp_eval.cases import load_suite

from ..conftest import REPO
from .test_suites import SHIPPED, tune_module

RECORDED = REPO / "tests" / "fixtures" / "rankings"
RECORD = os.environ.get("DOCS_MCP_RECORD_RANKINGS") == "1"
PROVIDERS = {"text": "none", "hybrid": "hash"}


def questions(suite_file: Path) -> list[tuple[str, dict[str, str]]]:
    """Every case's query and follow-up, with the case's filters, in suite order."""
    asked = []
    for case in load_suite(suite_file).cases:
        asked += [(q, dict(case.filters)) for q in (case.query, case.follow_up) if q]
    return asked


async def top_tens(index: Path, asked: list[tuple[str, dict[str, str]]], hybrid: bool) -> dict[str, list[str]]:
    library = Library.open([("", index, None)], query_model="loaded" if hybrid else "none")
    try:
        found = {}
        for n, (query, filters) in enumerate(asked):
            if n == 1:  # the word positions (after the first search): the later lists come from memory
                await words_built(library)
                # mapped from the per-user cache, where `keep_words` left them (search/words_cache.py)
                assert library.corpora[0].engine.current.words_source == "cache"
            page = await library.search(query, limit=10, filters=filters)
            assert page.mode == ("hybrid" if hybrid else "text"), query
            key = json.dumps([query, filters], sort_keys=True)
            found[key] = [hit["chunk_id"] for hit in page.hits]
        return found
    finally:
        library.close()


async def words_built(library: Library) -> None:
    """Wait for the word positions of the first corpus's index: exact-phrase lists then come from memory
    (search/bm25.py), and the top tens must not move either way."""
    index = library.corpora[0].engine.current
    for _ in range(3000):
        if index.words is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the word positions were not built")


async def keep_words(index: Path) -> None:
    """Build the index's word positions in a server of its own and wait until they are kept in the cache:
    the rankings are then checked with positions mapped from it, which built ones must equal
    (tests/core/test_words_cache.py)."""
    library = Library.open([("", index, None)], query_model="none")
    try:
        published = await library.corpora[0].engine.warm()
        await words_built(library)
        assert published.snapshot is not None and (base := words_cache.root()) is not None
        entry = base / str(words_cache.key(published.snapshot.digest)) / words_cache.META
        for _ in range(3000):
            if entry.is_file():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the word positions were not kept")
    finally:
        library.close()


def dump(found: dict[str, dict[str, list[str]]]) -> str:
    """One line per question (a reviewable diff when a change means to move rankings)."""
    modes = [
        f"{json.dumps(mode)}: {{\n"
        + ",\n".join(f"  {json.dumps(key)}: {json.dumps(ids)}" for key, ids in sorted(found[mode].items()))
        + "\n }"
        for mode in sorted(found)
    ]
    return "{\n " + ",\n ".join(modes) + "\n}\n"


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_every_suite_question_gets_its_recorded_top_ten(name: str, tmp_path: Path) -> None:
    tune = tune_module()
    suite_file, docs = tune.SUITES[name]
    if (docs / "sitemap.xml").is_file():  # a website: staged over HTTP, as tune.py does
        docs = tune.stage_site(docs, tmp_path / "staged")
    asked = questions(suite_file)
    now = {}
    for mode, provider in PROVIDERS.items():
        index = tmp_path / f"index-{mode}"
        build(docs, index, make_provider(ProviderSettings(provider)))
        asyncio.run(keep_words(index))
        now[mode] = asyncio.run(top_tens(index, asked, hybrid=mode == "hybrid"))
    recorded_file = RECORDED / f"{name}.json"
    if RECORD:
        recorded_file.write_text(dump(now))
    recorded = json.loads(recorded_file.read_text())
    for mode in PROVIDERS:
        moved = [key for key in now[mode] if now[mode][key] != recorded[mode].get(key)]
        assert not moved, f"{name}, {mode}: {len(moved)} of {len(asked)} top 10s moved, first {moved[0]}: " + (
            f"now {now[mode][moved[0]]}, recorded {recorded[mode].get(moved[0])}"
        )
