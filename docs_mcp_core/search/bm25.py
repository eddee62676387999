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

if TYPE_CHECKING:
    from .chunk_words import ChunkWords

K1 = np.float32(1.2)
B = np.float32(0.75)
_ONE = np.float32(1.0)
_HALF = np.float32(0.5)


def _logf() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """The C library's single-precision logarithm, which LanceDB's idf calls; None where there is none."""
    try:
        name = ctypes.util.find_library("m")
        function = ctypes.CDLL(name).logf if name else None
    except (OSError, AttributeError):
        return None
    if function is not None:
        function.restype = ctypes.c_float
        function.argtypes = [ctypes.c_float]
    return function


LOGF = _logf()


@functools.lru_cache(maxsize=65536)
def idf(docs: int, chunks: int) -> np.float32:
    """LanceDB's idf of a word `docs` of `chunks` chunks hold, in float32."""
    assert LOGF is not None
    n, df = np.float32(chunks), np.float32(docs)
    return np.float32(LOGF(float((n - df + _HALF) / (df + _HALF) + _ONE)))


# content_text's full-text index as the build makes it (indexing/table.py): what these scores assume
INDEX_DETAILS = {
    "base_tokenizer": "simple",
    "language": "English",
    "with_position": True,
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


def same_index(indices: list[Any], rows: int) -> bool:
    """Whether content_text's full-text index (from `list_indices`) is one these scores equal LanceDB's for:
    made with INDEX_DETAILS and covering all `rows` rows; and this platform has the `logf` LanceDB calls."""
    found = [i for i in indices if list(getattr(i, "columns", [])) == ["content_text"] and i.index_type == "FTS"]
    if LOGF is None or len(found) != 1:
        return False
    index = found[0]
    details = getattr(index, "index_details", None) or {}
    return (
        all(details.get(key, value) == value for key, value in INDEX_DETAILS.items())
        and "with_position" in details
        and getattr(index, "num_unindexed_rows", 1) == 0
        and getattr(index, "num_indexed_rows", -1) == rows
    )


def scores(words: ChunkWords, terms: list[int], chunks: np.ndarray) -> np.ndarray:
    """The float32 BM25 score of each of `chunks` for a query of `terms` (ChunkWords.terms)."""
    n, average, df = words.docs, words.average, words.df
    length = words.lengths[chunks].astype(np.float32)
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
