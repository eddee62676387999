"""A word the query repeats, in any of its forms, counts once in its BM25 score.

LanceDB stems the query as it stems the text, so "give requests 45 seconds before giving up" asks
for "give" twice, and BM25 adds the score of every "give" it finds twice over: a short chunk that
says "gives" once outranks the section on timeouts. A question says a word twice because of how
it is phrased, not because the word matters twice as much. Numbers are left alone: the two 1s of
"1.1" are parts of one value, not a word said twice.
"""

from __future__ import annotations

import functools
import threading

import snowballstemmer

from .proximity import STOP_WORDS, TOKEN, query_terms

# Snowball's English stemmer (Porter2) is the one LanceDB's English tokenizer stems with; a stemmer
# object keeps state between calls, so calls from the server's threads take turns.
_STEMMER = snowballstemmer.stemmer("english")
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """The stem LanceDB indexes a lowercase word under."""
    with _LOCK:
        return str(_STEMMER.stemWord(word))


def stems(text: str) -> frozenset[str]:
    """The stems of a text's words as the index keeps them (proximity.query_terms): what LanceDB matches them by."""
    return frozenset(stem(term) for term in query_terms(text))


def without_repeats(query: str) -> str:
    """The query with every later form of a word it already asked for cut out; unchanged when it
    repeats none. Stop words (LanceDB drops them) and tokens with a digit stay as they are."""
    seen: set[str] = set()
    cuts: list[tuple[int, int]] = []
    for match in TOKEN.finditer(query):
        word = match.group().lower()
        if word in STOP_WORDS or any(ch.isdigit() for ch in word):
            continue
        root = stem(word)
        if root in seen:
            cuts.append(match.span())
        seen.add(root)
    if not cuts:
        return query
    kept, last = [], 0
    for start, end in cuts:
        kept.append(query[last:start])
        last = end
    kept.append(query[last:])
    return " ".join("".join(kept).split())
