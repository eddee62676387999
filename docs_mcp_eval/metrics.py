"""Retrieval metrics with binary relevance: every expected or alsoRelevant chunk counts as 1."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

K = 5


def first_rank(ranked: Sequence[str], relevant: Iterable[str], k: int = K) -> int | None:
    """1-based rank of the first relevant chunk within the top k, or None."""
    wanted = set(relevant)
    for rank, chunk_id in enumerate(ranked[:k], start=1):
        if chunk_id in wanted:
            return rank
    return None


def reciprocal_rank(ranked: Sequence[str], relevant: Iterable[str], k: int = K) -> float:
    rank = first_rank(ranked, relevant, k)
    return 1.0 / rank if rank else 0.0


def ndcg(ranked: Sequence[str], relevant: Iterable[str], k: int = K) -> float:
    """DCG of the top k over the ideal DCG of min(|relevant|, k) relevant chunks ranked first."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 1) for i, chunk_id in enumerate(ranked[:k], start=1) if chunk_id in wanted)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def recall(ranked: Sequence[str], relevant: Iterable[str], k: int = K) -> float:
    """1 if any of the (equally correct) relevant chunks is in the top k, else 0."""
    return 1.0 if first_rank(ranked, relevant, k) else 0.0


def chars_to_answer(ids: Sequence[str], hits: Sequence[dict[str, Any]], relevant: Iterable[str]) -> int | None:
    """What an agent reads to reach the answer in one search_docs result: the snippets of the hits
    ranked above the first relevant one, plus that chunk's `chars` (the size of its Markdown, which
    get_doc returns). None when no hit is relevant, or the relevant hit has no `chars`."""
    rank = first_rank(ids, relevant, k=len(ids))
    if rank is None:
        return None
    size = hits[rank - 1].get("chars")
    if not isinstance(size, int):
        return None
    return sum(len(str(h.get("snippet") or "")) for h in hits[: rank - 1]) + size


def snippet_chars(hits: Sequence[dict[str, Any]]) -> int:
    """The snippets of a whole result: what an agent read before it searched again."""
    return sum(len(str(h.get("snippet") or "")) for h in hits)


def facet_precision(hits: Sequence[dict[str, Any]], filters: dict[str, str]) -> float | None:
    """Share of hits that do not contradict the case's filters (a page without the key does not)."""
    if not filters or not hits:
        return None
    ok = sum(all((h.get("metadata") or {}).get(k) in (None, v) for k, v in filters.items()) for h in hits)
    return ok / len(hits)


def percentile(values: Sequence[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(statistics.median(present)) if present else None
