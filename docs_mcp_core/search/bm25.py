"""BM25 over content_text as LanceDB scores a `MatchQuery`, bit for bit, from the word positions of
chunk_words.py: the exact-phrase list is answered from memory instead of by a LanceDB query.

Its float32 arithmetic is LanceDB's own (lance-index's `scorer.rs`): idf = ln((N − df + 0.5) / (df +
0.5) + 1) with the platform's `logf`, a document's weight (k1 + 1)·tf / (tf + k1·(1 − b + b·dl / avgdl))
with k1 1.2 and b 0.75, their product summed over the query's words in the query's order, a word the
query repeats counted each time. dl counts the words the index keeps (stop words and tokens of 40 bytes
or more left out); N counts the chunks with at least one such word, avgdl is their total over N.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from ..output.table_schema import SUBWORDS_COLUMN
from .proximity import SLOP as PROXIMITY_SLOP
from .text_clauses import text_clauses

if TYPE_CHECKING:
    from .chunk_words import ChunkWords
    from .weights import Weights

K1 = np.float32(1.2)
B = np.float32(0.75)
_ONE = np.float32(1.0)
_HALF = np.float32(0.5)


@functools.cache
def logf() -> Any:
    """The C library's single-precision logarithm, which LanceDB's idf calls; None where there is none.

    Looked up in the process's own symbols first (libm is loaded with the interpreter): find_library runs
    ldconfig in a subprocess, milliseconds at every server start."""

    def libm() -> str | None:
        return ctypes.util.find_library("m")

    for library in (None, libm):
        try:
            function = ctypes.CDLL(library() if library else None).logf
        except (OSError, AttributeError, TypeError):  # TypeError: Windows has no CDLL(None)
            continue
        function.restype = ctypes.c_float
        function.argtypes = [ctypes.c_float]
        return function
    return None


@functools.lru_cache(maxsize=65536)
def idf(docs: int, chunks: int) -> np.float32:
    """LanceDB's idf of a word `docs` of `chunks` chunks hold, in float32."""
    function = logf()
    assert function is not None
    n, df = np.float32(chunks), np.float32(docs)
    return np.float32(function(float((n - df + _HALF) / (df + _HALF) + _ONE)))


# The full-text indexes as the build makes them (indexing/table.py): what these scores assume.
INDEX_DETAILS = {
    "base_tokenizer": "simple",
    "language": "English",
    "max_token_length": 40,
    "lower_case": True,
    "stem": True,
    "remove_stop_words": True,
    "custom_stop_words": None,
    "ascii_folding": True,
    "split_identifiers": False,
    "split_on_numerics": False,
    "preserve_original": False,
    "index_operators": False,
}
# Each full-text column, and whether its index keeps positions.
COLUMNS = {"content_text": True, "heading": True, "breadcrumb": False, SUBWORDS_COLUMN: False}


def same_indexes(indices: list[Any], rows: int) -> set[str]:
    """The full-text columns (of COLUMNS) whose index, from `list_indices`, these scores equal LanceDB's
    for: made with INDEX_DETAILS and covering all `rows` rows; none without the `logf` LanceDB calls."""
    if logf() is None:
        return set()
    found: dict[str, list[Any]] = {}
    for index in indices:
        columns = list(getattr(index, "columns", []))
        if len(columns) == 1 and getattr(index, "index_type", "") == "FTS":
            found.setdefault(columns[0], []).append(index)
    same = set()
    for column, positions in COLUMNS.items():
        if len(found.get(column, [])) != 1:
            continue
        index = found[column][0]
        details = getattr(index, "index_details", None) or {}
        if (
            all(details.get(key, value) == value for key, value in INDEX_DETAILS.items())
            and details.get("with_position") == positions
            and getattr(index, "num_unindexed_rows", 1) == 0
            and getattr(index, "num_indexed_rows", -1) == rows
        ):
            same.add(column)
    return same


def same_index(indices: list[Any], rows: int) -> bool:
    """Whether content_text's index is one these scores equal LanceDB's for (same_indexes)."""
    return "content_text" in same_indexes(indices, rows)


def scores(words: ChunkWords, terms: list[int], chunks: np.ndarray) -> np.ndarray:
    """The float32 BM25 score of each of `chunks` for a query of `terms` (ChunkWords.terms)."""
    n, average, df = words.docs, words.average, words.df
    length = words.lengths[chunks].astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):  # a field no chunk has a word of: no term is held
        norm = K1 * ((_ONE - B) + (B * length) / average)
    total = np.zeros(len(chunks), dtype=np.float32)
    for term in terms:
        if term < 0:
            continue
        held = words.chunk_of(words.at[words.starts[term] : words.starts[term + 1]])
        tf = (np.searchsorted(held, chunks, side="right") - np.searchsorted(held, chunks, side="left")).astype(
            np.float32
        )
        weight = ((K1 + _ONE) * tf) / (tf + norm)
        total += np.where(tf > 0, idf(int(df[term]), n) * weight, np.float32(0))
    return total


def holding(words: ChunkWords, terms: list[int]) -> np.ndarray:
    """The chunks that hold any of `terms`, in order."""
    found = [words.chunk_of(words.at[words.starts[t] : words.starts[t + 1]]) for t in terms if t >= 0]
    return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)


def in_sorted(values: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """np.isin(values, ordered) for an ascending `ordered` (a word's positions): a binary search per value
    instead of the sort of both arrays np.isin does, which was most of a two-word query's proximity clause."""
    if not len(ordered):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(ordered, values)
    found: np.ndarray = ordered[np.minimum(at, len(ordered) - 1)] == values
    return found


def near(words: ChunkWords, first: int, second: int, slop: int) -> np.ndarray:
    """The chunks where `second` follows `first` within 1 + `slop` positions: LanceDB's sloppy phrase of two
    words (in that order only)."""
    if first < 0 or second < 0:
        return np.empty(0, dtype=np.int64)
    before = words.at[words.starts[first] : words.starts[first + 1]].astype(np.int64)
    after = words.at[words.starts[second] : words.starts[second + 1]]
    found = []
    for gap in range(1, slop + 2):
        starts = before[in_sorted(before + gap, after)]
        chunks = words.chunk_of(starts)
        found.append(chunks[chunks == words.chunk_of(starts + gap)])  # within one chunk
    return np.unique(np.concatenate(found))


def full_text(
    words: ChunkWords, fields: dict[str, ChunkWords], query: str, weights: Weights
) -> tuple[np.ndarray, np.ndarray] | None:
    """The chunks text_query.text_query's LanceDB query finds and their float32 scores, as LanceDB computes
    them: the best of the fields' boosted BM25 (MultiMatchQuery), plus the identifier sub-words' clause,
    plus each pair of neighbouring words as a sloppy phrase (scored as a match of its two words), summed in
    that order. None when that cannot be told exactly (a field's words not held, a word that may be folded
    into, a word or pair LanceDB would not keep as written here): then the query is sent."""
    if weights.fields != "max":
        return None
    plan = text_clauses(query, weights)
    by_field = {"content_text": words, **fields}
    matched: list[tuple[ChunkWords, list[int], np.float32]] = []
    for column, boost in plan.fields:
        field = by_field.get(column)
        terms = field.terms(plan.query) if field is not None else None
        if field is None or not terms:
            return None
        matched.append((field, terms, np.float32(boost)))
    clauses: list[tuple[np.ndarray, np.ndarray]] = []
    chunks = np.unique(np.concatenate([holding(field, terms) for field, terms, _ in matched]))
    best = np.zeros(len(chunks), dtype=np.float32)
    for field, terms, weight in matched:
        best = np.maximum(best, weight * scores(field, terms, chunks))
    clauses.append((chunks, best))
    if plan.parts:
        terms = words.terms(plan.parts)
        if not terms:
            return None
        chunks = holding(words, terms)
        clauses.append((chunks, np.float32(plan.parts_boost) * scores(words, terms, chunks)))
    for pair in plan.pairs:
        pair_terms = words.terms(pair)
        if pair_terms is None or len(pair_terms) != 2:
            return None
        chunks = near(words, pair_terms[0], pair_terms[1], PROXIMITY_SLOP)
        clauses.append((chunks, scores(words, pair_terms, chunks)))
    found = np.unique(np.concatenate([chunks for chunks, _ in clauses]))
    total = np.zeros(len(found), dtype=np.float32)
    for chunks, clause in clauses:
        part = np.zeros(len(found), dtype=np.float32)
        part[np.searchsorted(found, chunks)] = clause
        total += part
    return found, total
