"""Fusion: the ranked lists of one search (full text, exact phrase, vector) into one ranking, and the
rankings of several corpora onto one scale.

With a vector list, the weighted sum of each list's scores scaled to 0..1 over its candidates;
full text alone, weighted reciprocal rank fusion. Then the priors (priors.py), then one chunk per
duplicated text and per page collapsed across a `vector_collapse` key. Ties break by chunk_id, so
results are deterministic. Why scaled scores: docs/decisions/0017-hybrid-fusion-by-scaled-scores.md.
"""

from __future__ import annotations

import functools
import re

from ..output.derived_fields import normalize_language, subwords
from . import priors
from .priors import heading_stems
from .published import ChunkInfo, PublishedIndex
from .repeats import stems
from .text_query import phrase_applies
from .weights import Weights

Ranked = list[tuple[str, float]]  # (chunk_id, score), best first; a higher score is a better match
# How hard a corpus whose closest chunk is far from the query sinks when several are searched at once
# (Library.search): 1-2 recover most of the loss fusing by rank alone costs, 3 and up all of it
# (docs/decisions/0004-several-corpora-fused-by-reachable-score.md).
CORPUS_SIMILARITY_POWER = 3


def rrf(lists: list[tuple[float, list[str]]], k: int) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion; ties break by chunk_id."""
    scores: dict[str, float] = {}
    for weight, ranked in lists:
        for rank, chunk_id in enumerate(ranked, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def score_fusion(lists: list[tuple[float, Ranked, bool]]) -> list[tuple[str, float]]:
    """Weighted sum of each list's scores scaled to 0..1 over its candidates (min-max); a chunk missing
    from a list gets 0 there. Unlike ranks, scaled scores keep how far apart candidates are: a chunk
    BM25 puts far ahead is not overtaken by one the vector list prefers by a hair. A list marked
    whole (a full-text list that returned every chunk it matches) scales from 0, BM25's score for a
    chunk it does not match: its last match still counts for something (otherwise an exact phrase found
    in three chunks gives the third 0, as if it had not matched). Ties break by chunk_id."""
    scores: dict[str, float] = {}
    for weight, ranked, whole in lists:
        if not ranked:
            continue
        high, low = max(s for _, s in ranked), min(s for _, s in ranked)
        if whole:
            low = min(low, 0.0)
        spread = high - low
        for chunk_id, score in ranked:
            scaled = (score - low) / spread if spread > 0 else 1.0
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight * scaled
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


@functools.lru_cache(maxsize=8192)  # ~0.7 kB each; stemming 100 candidates afresh costs a few ms
def _lead_stems(heading: str, lead: str) -> frozenset[str]:
    return stems(f"{heading}\n{lead}")


def in_passing(info: ChunkInfo, words: frozenset[str]) -> bool:
    """Whether a chunk's heading and opening sentence say none of the query's `words` (stems): whatever it
    says of them, it says in passing (one row of a table, a remark closing a section about something else)."""
    return not words & _lead_stems(info.heading, info.lead)


def _heading_path_stems(breadcrumb: str) -> frozenset[str]:
    return heading_stems(breadcrumb.partition(" > ")[2])  # the headings, without the file


def names_the_words(info: ChunkInfo, words: frozenset[str]) -> bool:
    """Whether a chunk's heading path names more than half of the query's `words` in plain words (an
    identifier in a heading stays one word: `CreateLinkRequestBody` does not name "link")."""
    return 2 * len(words & _heading_path_stems(info.breadcrumb)) > len(words)


@functools.lru_cache(maxsize=256)  # one fuse asks for it up to four times (passing, tables, headings)
def query_words(query: str) -> frozenset[str]:
    """The stems of the query's words, its identifiers also split as full-text search splits them
    (`Astro.locals.starlightRoute` → astro, local, starlightrout, starlight, rout)."""
    return stems(query) | stems(subwords(query))


def about_the_words(index: PublishedIndex, phrase: Ranked, query: str) -> Ranked:
    """The exact-phrase list without the chunks that hold the phrase in passing (`in_passing`). The phrase
    weighs most of the lists, so a table whose last row says "retry with backoff" would otherwise outrank
    the section on backoff (docs/decisions/0029-exact-phrase-in-passing-mentions.md)."""
    words = query_words(query)
    return [(cid, score) for cid, score in phrase if not in_passing(index.info[cid], words)] if words else phrase


def _scaled(similarity: float, factor: float) -> float:
    """`similarity` times `factor`, or, below 0 (a cosine), moved the same way by as much: times 2 - `factor`
    (a factor above 1 raises a chunk, below 1 lowers it, whatever the sign of its similarity)."""
    return similarity * factor if similarity >= 0 else similarity * (2 - factor)


def tables_in_passing(index: PublishedIndex, vector: Ranked, query: str, weight: float) -> Ranked:
    """The vector list with the similarity of each chunk that mentions the query in passing (`in_passing`)
    scaled by 1 - `weight` times its share of table rows. A field table whose one row says the query's words
    is close to the query by that row, and without this outranks the section about them on cosine alone
    (docs/decisions/0033-table-rows-in-passing-on-the-vector-side.md)."""
    words = query_words(query)
    if not words or weight <= 0:
        return vector
    scaled = []
    for cid, score in vector:
        info = index.info[cid]
        if info.tables > 0 and in_passing(info, words):
            score = _scaled(score, 1 - weight * info.tables)
        scaled.append((cid, score))
    return sorted(scaled, key=lambda item: (-item[1], item[0]))


def headed_by_the_words(index: PublishedIndex, vector: Ranked, query: str, weight: float) -> Ranked:
    """The vector list with the similarity of each chunk whose own heading names more than half of the query's
    words scaled by 1 + `weight` times the share it names: the section titled by the question, whose text
    may say it in other words (docs/decisions/0038-tables-in-passing-when-a-heading-names-the-query.md)."""
    words = query_words(query)
    if not words or weight <= 0:
        return vector
    scaled = []
    for cid, score in vector:
        named = len(words & heading_stems(index.info[cid].heading))
        if 2 * named > len(words):
            score = _scaled(score, 1 + weight * named / len(words))
        scaled.append((cid, score))
    return sorted(scaled, key=lambda item: (-item[1], item[0]))


def tables_weight(index: PublishedIndex, cut: dict[str, Ranked], query: str, weights: Weights) -> float:
    """`weights.tables`, or the stronger `weights.tables_named` when a full-text or vector candidate's heading
    path names most of the query's words (`names_the_words`): where a section is titled by the question,
    a table that mentions its words in passing is not what was asked for; where none is, such a table
    may be the answer, and keeps the mild weight
    (docs/decisions/0038-tables-in-passing-when-a-heading-names-the-query.md)."""
    if weights.tables_named <= weights.tables:
        return weights.tables
    words = query_words(query)
    if not words:
        return weights.tables
    for name in ("text", "vector"):
        for cid, _ in cut.get(name, ()):
            if names_the_words(index.info[cid], words):
                return weights.tables_named
    return weights.tables


def fuse(
    index: PublishedIndex, lists: dict[str, Ranked], weights: Weights, filters: dict[str, str], query: str = ""
) -> list[tuple[str, float]]:
    """The ranked lists → one ranking. The exact-phrase list leaves out chunks that hold the phrase in passing
    (`about_the_words`, with `weights.passing`), and the vector list weighs such chunks by their share of table
    rows (`tables_in_passing`, with `weights.tables`, or `weights.tables_named`: `tables_weight`); a chunk whose
    heading names most of the query's words weighs more there (`headed_by_the_words`, `weights.headed`). With a
    vector list, the weighted sum of min-max scaled scores (score_fusion; `weights.hybrid` "rrf" ranks instead);
    full text alone, weighted RRF. Then each chunk's
    score times its prior (priors.prior: length, navigation, bare code, the filtered language), then one
    chunk per duplicated text (content_digest) and per page collapsed across a `vector_collapse` key. Ties
    break by chunk_id."""
    weight = {"text": weights.text, "phrase": weights.phrase, "vector": weights.vector}
    # a full-text list shorter than its depth holds every chunk the query matches (see SearchEngine.ranked)
    whole = {name: name != "vector" and len(ranked) < weights.depth for name, ranked in lists.items()}
    cut = {name: ranked[: weights.depth] for name, ranked in lists.items()}
    if weights.passing and "phrase" in cut:
        cut["phrase"] = about_the_words(index, cut["phrase"], query)
    if "vector" in cut:
        cut["vector"] = tables_in_passing(index, cut["vector"], query, tables_weight(index, cut, query, weights))
        cut["vector"] = headed_by_the_words(index, cut["vector"], query, weights.headed)
    if weights.by_scores("vector" in lists):
        fused = score_fusion([(weight[name], ranked, whole[name]) for name, ranked in cut.items()])
    else:
        fused = rrf([(weight[name], [cid for cid, _ in ranked]) for name, ranked in cut.items()], weights.k)
    language = normalize_language(filters["language"]) if "language" in filters else None
    if priors.applies(weights, language):
        query_stems = stems(query)
        fused = sorted(
            (
                (cid, score * priors.prior(index.info[cid], index, weights, query_stems, language))
                for cid, score in fused
            ),
            key=lambda item: (-item[1], item[0]),
        )
    active = [k for k in index.collapse_keys if k not in filters]
    infos = index.info
    pages: set[str] = set()  # collapse keys taken
    digests: set[str] = set()  # content digests taken
    kept = []
    for chunk_id, score in fused:
        info = infos[chunk_id]
        page = collapse_key(info, active) if active else None
        digest = info.digest
        if (page is None or page not in pages) and (not digest or digest not in digests):
            kept.append((chunk_id, score))
            if page is not None:
                pages.add(page)
            if digest:
                digests.add(digest)
    return kept


def collapse_key(info: ChunkInfo, keys: list[str]) -> str | None:
    """Same page in another language: the path with the key's value starred, plus heading and part."""
    parts = info.filepath.split("/")
    starred = False
    for key in keys:
        value = info.metadata.get(key)
        if not value:
            return None
        if value in parts:
            parts[parts.index(value)] = "*"
            starred = True
    if not starred:
        return None
    part = re.search(r"-part-(\d+)$", info.chunk_id)
    return "/".join(parts) + ":" + info.heading + (f":{part.group(1)}" if part else "")


def best_score(weights: Weights, query: str, hybrid: bool) -> float:
    """The fused score of a chunk ranked first by every list that ran for this query (SearchEngine.ranked):
    1 per list, times its weight, when scores are fused; 1 / (k + 1) per list when ranks are. Dividing
    by it puts the fused scores of different corpora on one scale."""
    total = weights.text + (weights.phrase if phrase_applies(query) else 0.0) + (weights.vector if hybrid else 0.0)
    return (total if weights.by_scores(hybrid) else total / (weights.k + 1)) or 1.0


def corpus_factor(closest: float, top: float) -> float:
    """What a corpus's scores are multiplied by when several are searched: its closest chunk's cosine
    similarity to the query over the best corpus's, to the power CORPUS_SIMILARITY_POWER."""
    return (max(closest, 0.0) / top) ** CORPUS_SIMILARITY_POWER
