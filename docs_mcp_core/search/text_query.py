"""The full-text query LanceDB runs for a search: BM25 over a chunk's fields, identifier sub-words and
term proximity; and whether the exact-phrase list runs."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .proximity import SLOP as PROXIMITY_SLOP
from .text_clauses import text_clauses
from .weights import Weights

if TYPE_CHECKING:
    from .published import PublishedIndex

_WORD = re.compile(r"[A-Za-z0-9_]+")


def phrase_applies(query: str) -> bool:
    """Whether the exact-phrase signal runs for this query (it needs two words or more)."""
    return len(_WORD.findall(query)) >= 2


def text_query(query: str, index: PublishedIndex, weights: Weights) -> Any:
    """BM25 over the chunk's fields, each times its boost: heading, breadcrumb (file path and parent
    headings), content_text, and the identifier sub-words of the chunk (output/derived_fields.py).
    `weights.fields` "max" keeps the best field's score (LanceDB's MultiMatchQuery), "sum" adds them. A
    camelCase identifier in the query also looks for its sub-words as plain words, at half the sub-word
    boost, so `WithMaxRetries` finds "max retries" while the exact identifier still scores highest. Each
    pair of neighbouring query words adds its score as a sloppy phrase in the text, at `weights.proximity`
    (proximity.py), so a chunk where the query's words stand together ranks above one that has the
    same words apart. A word the query repeats, in any form ("give … giving"), counts once (repeats.py)."""
    from lancedb import query as lancedb_query

    # pydantic dataclasses: their keyword defaults (pydantic.Field) are invisible to mypy
    fts: Any = lancedb_query

    plan = text_clauses(query, weights)
    query, fields = plan.query, plan.fields
    if weights.fields == "max":
        clauses: list[Any] = [fts.MultiMatchQuery(query, [c for c, _ in fields], boosts=[b for _, b in fields])]
    else:
        clauses = [fts.MatchQuery(query, column, boost=boost) for column, boost in fields]
    if plan.parts:
        clauses.append(fts.MatchQuery(plan.parts, "content_text", boost=plan.parts_boost))
    clauses += [fts.PhraseQuery(pair, "content_text", slop=PROXIMITY_SLOP) for pair in plan.pairs]
    return clauses[0] if len(clauses) == 1 else fts.BooleanQuery([(fts.Occur.SHOULD, c) for c in clauses])
