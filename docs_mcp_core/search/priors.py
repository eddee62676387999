"""Priors: what a chunk's shape, known at build time, does to its score, whatever the query.

BM25 normalises by length, so a one-line chunk that repeats the query's words outscores the section
that explains them; a list of links (an index, a table of contents) matches many words and answers
nothing; bare code under a heading many chunks share ("Example Usage") matched only through its
code. Each scales a fused score down by a factor from search/weights.py; a `language` filter scales
chunks written for that language up. The measurements behind each are in docs/decisions/
(0010 length and navigation, 0026 bare code, 0002 language).
"""

from __future__ import annotations

import functools

from ..output.derived_fields import normalize_language
from .published import ChunkInfo, PublishedIndex
from .repeats import stems
from .weights import Weights

NAVIGATION_FROM = 0.5  # a chunk ranks lower once more than half of its text is a list of links


@functools.lru_cache(maxsize=8192)  # fusion asks for the same headings query after query
def heading_stems(headings: str) -> frozenset[str]:
    """stems(headings), remembered: a heading's stems are asked for each time its chunk is a candidate."""
    return stems(headings)


def text_scale(info: ChunkInfo, weights: Weights) -> float:
    """What a chunk's full-text and phrase scores are multiplied by: its share of `weights.text_short`
    characters of text."""
    if weights.text_short <= 0 or info.chars is None or info.chars >= weights.text_short:
        return 1.0
    return info.chars / weights.text_short


def says_nothing(info: ChunkInfo, index: PublishedIndex, query_stems: frozenset[str]) -> bool:
    """Bare code (no words of its own) under a heading that names no subject (index.generic_headings)
    and shares no word with the query: only its code can have matched the question."""
    return (
        info.bare_code
        and info.heading.strip().lower() in index.generic_headings
        and query_stems.isdisjoint(heading_stems(info.heading))
    )


def in_language(info: ChunkInfo, language: str) -> bool:
    """Written for that language: its taxonomy says so, or its code blocks are in it."""
    value = info.metadata.get("language")
    return (value is not None and normalize_language(value) == language) or language in info.code_languages


def applies(weights: Weights, language: str | None) -> bool:
    """Whether any prior can change a score (else fusion skips them)."""
    return weights.short > 0 or weights.navigation > 0 or weights.bare_code > 0 or bool(language and weights.language)


def prior(
    info: ChunkInfo, index: PublishedIndex, weights: Weights, query_stems: frozenset[str], language: str | None
) -> float:
    """The factor a chunk's fused score is multiplied by: under `weights.short` characters of text, its
    share of them; mostly links (navigation over NAVIGATION_FROM), down linearly to 1 - `weights.navigation`
    when it is all links; bare code that says nothing (says_nothing), 1 - `weights.bare_code`; with a
    `language` filter, a chunk in that language 1 + `weights.language`."""
    factor = min(1.0, (info.chars + 1) / weights.short) if weights.short > 0 and info.chars is not None else 1.0
    if weights.navigation > 0 and info.navigation > NAVIGATION_FROM:
        factor *= 1 - weights.navigation * (info.navigation - NAVIGATION_FROM) / (1 - NAVIGATION_FROM)
    if weights.bare_code > 0 and info.bare_code and says_nothing(info, index, query_stems):
        factor *= 1 - weights.bare_code
    if language and weights.language and in_language(info, language):
        factor *= 1 + weights.language
    return factor
