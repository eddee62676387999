"""Every shipped eval suite points at chunks that really exist in the corpus it is about.

A suite whose expected IDs are missing from its corpus scores 0 on those cases whatever the
engine does, so a chunking change (or a typo in a case) must fail here, not show up later as a
silent drop in a benchmark table.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_eval.cases import Suite, load_suite

from ..conftest import REPO

SUITE_DIR = REPO / "benchmarks" / "suites"
SHIPPED = sorted(p.stem for p in SUITE_DIR.glob("*.json"))
# The six categories every prose or SDK suite must cover (distractor is optional).
REQUIRED = ("lexical", "paraphrased", "intent", "error-handling", "api-discovery", "config")


def tune_module() -> Any:
    """benchmarks/tune.py, whose SUITES is the one list of shipped suites and their corpora."""
    spec = importlib.util.spec_from_file_location("docs_mcp_tune", REPO / "benchmarks" / "tune.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses in the script look their module up while it loads
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def tune_suites() -> dict[str, tuple[Path, Path]]:
    return tune_module().SUITES


def missing_ids(suite: Suite, chunk_ids: set[str]) -> list[str]:
    return [f"{case.name}: {cid}" for case in suite.cases for cid in case.relevant if cid not in chunk_ids]


def test_every_shipped_suite_is_listed_with_its_corpus() -> None:
    suites = tune_suites()
    assert set(SHIPPED) == set(suites), "add the suite and its corpus to SUITES in benchmarks/tune.py"
    for name, (suite_file, docs) in suites.items():
        assert suite_file == SUITE_DIR / f"{name}.json" and docs.is_dir(), name


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_suite_ids_exist_in_its_built_corpus(name: str, tmp_path: Path) -> None:
    tune = tune_module()
    suite_file, docs = tune.SUITES[name]
    suite = load_suite(suite_file)
    assert {case.category for case in suite.cases} <= set(REQUIRED) | {"distractor"}, name
    if (docs / "sitemap.xml").is_file():  # a website: its pages fetched over HTTP and staged, as tune.py does
        docs = tune.stage_site(docs, tmp_path / "staged")
    # Built as `docs-mcp eval benchmark` builds it: the fixture as shipped (or staged), no manifest added.
    build(docs, tmp_path / "index", make_provider(ProviderSettings("none")))
    chunk_ids = {c["chunk_id"] for c in json.loads((tmp_path / "index" / "chunks.json").read_text())}
    assert missing_ids(suite, chunk_ids) == []


def test_missing_ids_names_the_case_and_the_id() -> None:
    suite = Suite.model_validate(
        {"cases": [{"name": "a", "query": "q", "expectedChunkId": "x.md#one", "alsoRelevant": ["x.md#two"]}]}
    )
    assert missing_ids(suite, {"x.md#one"}) == ["a: x.md#two"]


def test_uv_docs_suite_covers_the_six_categories() -> None:
    suite = load_suite(SUITE_DIR / "uv-docs.json")
    counts = {cat: sum(1 for c in suite.cases if c.category == cat) for cat in REQUIRED}
    assert len(suite.cases) >= 48 and min(counts.values()) >= 8, counts


@pytest.mark.parametrize("name", SHIPPED)
def test_follow_ups_rephrase_plain_language_questions(name: str) -> None:
    """Follow-ups are what an agent searches after a miss: on the plain-language cases, and never
    the same words again."""
    suite = load_suite(SUITE_DIR / f"{name}.json")
    follow = [case for case in suite.cases if case.follow_up is not None]
    assert follow, name
    for case in follow:
        assert case.category in ("paraphrased", "intent"), case.name
        assert case.follow_up is not None and case.follow_up.lower() != case.query.lower(), case.name
