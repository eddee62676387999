"""Metric math on hand-made rankings with known answers."""

import math

import pytest

from docs_mcp_eval import metrics
from docs_mcp_eval.cases import Case


def test_reciprocal_rank_and_recall() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert metrics.reciprocal_rank(ranked, ["c"]) == pytest.approx(1 / 3)
    assert metrics.reciprocal_rank(ranked, ["f"]) == 0.0  # rank 6 is outside the top 5
    assert metrics.reciprocal_rank(ranked, ["e", "b"]) == 0.5  # the first relevant one counts
    assert metrics.recall(ranked, ["z", "d"]) == 1.0 and metrics.recall(ranked, ["f"]) == 0.0
    assert metrics.first_rank([], ["a"]) is None


def test_ndcg_with_several_relevant_ids() -> None:
    assert metrics.ndcg(["a", "b"], ["a"]) == 1.0
    # one relevant at rank 2: (1/log2 3) / (1/log2 2)
    assert metrics.ndcg(["x", "a"], ["a"]) == pytest.approx(1 / math.log2(3))
    # two relevant at ranks 1 and 3, ideal at 1 and 2
    got = metrics.ndcg(["a", "x", "b", "y"], ["a", "b"])
    assert got == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    # more relevant IDs than k: the ideal is capped at k
    assert metrics.ndcg(["a", "b", "c", "d", "e"], list("abcdefg")) == pytest.approx(1.0)
    assert metrics.ndcg(["x"] * 5, ["a"]) == 0.0


def test_facet_precision_and_percentiles() -> None:
    hits = [{"metadata": {"language": "go"}}, {"metadata": {}}, {"metadata": {"language": "python"}}]
    assert metrics.facet_precision(hits, {"language": "go"}) == pytest.approx(2 / 3)
    assert metrics.facet_precision(hits, {}) is None
    assert metrics.percentile([5, 1, 3, 2, 4], 50) == 3 and metrics.percentile([5, 1, 3, 2, 4], 95) == 5
    assert metrics.mean([None, 1.0, 3.0]) == 2.0 and metrics.mean([None]) is None


def test_case_format_aliases_and_defaults() -> None:
    case = Case.model_validate(
        {"name": "n", "query": "q", "expectedChunkId": "a.md#x", "alsoRelevant": ["b.md", "a.md#x"], "maxRounds": 2}
    )
    assert case.relevant == ["a.md#x", "b.md"] and case.limit == 5 and case.max_rounds == 2
    assert case.category == "uncategorized" and case.filters == {}


def test_case_follow_up_in_either_spelling() -> None:
    base = {"name": "n", "query": "q", "expectedChunkId": "a.md#x"}
    assert Case.model_validate(base).follow_up is None
    assert Case.model_validate({**base, "followUp": "q two"}).follow_up == "q two"
    assert Case.model_validate({**base, "follow_up": "q two"}).follow_up == "q two"
    with pytest.raises(ValueError):
        Case.model_validate({**base, "followUp": ""})


def test_chars_to_answer_reads_the_snippets_above_and_the_chunk() -> None:
    hits = [
        {"chunk_id": "a", "snippet": "x" * 30, "chars": 900},
        {"chunk_id": "b", "snippet": "y" * 50, "chars": 400},
        {"chunk_id": "c", "snippet": "z" * 70, "chars": 1200},
    ]
    ids = [h["chunk_id"] for h in hits]
    assert metrics.chars_to_answer(ids, hits, ["a"]) == 900  # first: only the chunk itself
    assert metrics.chars_to_answer(ids, hits, ["c", "b"]) == 30 + 400  # the first relevant one counts
    assert metrics.chars_to_answer(ids, hits, ["c"]) == 30 + 50 + 1200
    assert metrics.chars_to_answer(ids, hits, ["d"]) is None  # not answered: no figure, not zero
    assert metrics.chars_to_answer(ids, [{**h, "chars": None} for h in hits], ["a"]) is None
    assert metrics.snippet_chars(hits) == 150
