"""The clauses of a search's full-text query, planned once for LanceDB's query (text_query.py) and for its
in-memory replica (bm25.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ..output.derived_fields import subwords
from ..output.table_schema import SUBWORDS_COLUMN
from .proximity import term_pairs
from .repeats import without_repeats
from .weights import Weights


@dataclass(frozen=True)
class TextClauses:
    """The clauses of a search's full-text query, in the order LanceDB sums them: the fields (each with its
    boost), the identifier sub-words (`parts`, at `parts_boost`), then the sloppy word pairs. One plan for
    the LanceDB query (text_query.py) and for its in-memory replica (bm25.full_text), so the two cannot drift."""

    query: str  # without repeated words
    fields: list[tuple[str, float]]
    parts: str
    parts_boost: float
    pairs: list[str]


def text_clauses(query: str, weights: Weights) -> TextClauses:
    """See text_query.text_query."""
    pairs = term_pairs(query) if weights.proximity > 0 else []
    query = without_repeats(query)
    # a phrase query takes no boost, so the other clauses are scaled by 1 / proximity instead: a common
    # factor changes neither BM25 order, nor the length prior, nor min-max scaled fusion
    scale = 1 / weights.proximity if pairs else 1.0
    fields = [
        ("heading", weights.heading),
        ("content_text", 1.0),
        ("breadcrumb", weights.breadcrumb),
        (SUBWORDS_COLUMN, weights.subwords),
    ]
    return TextClauses(
        query,
        [(column, boost * scale) for column, boost in fields if boost > 0],
        subwords(query) if weights.subwords > 0 else "",
        weights.subwords / 2 * scale,
        pairs,
    )
