"""Term proximity: neighbouring words of the query, found near each other in a chunk's text.

BM25 counts a query's words wherever they sit in a chunk, so a section that says "publish your
package to PyPI" scores like one that names a package in its first paragraph and PyPI in its
last. Scoring each pair of neighbouring query words as a sloppy phrase rewards the section
where they stand together, as written questions put them (the sequential dependence model of
Metzler and Croft; Solr's `pf2`). The pairs are added to the full-text query (engine.text_query).
"""

from __future__ import annotations

import re

# What LanceDB's English full-text tokenizer drops, as surface words (found by indexing candidate
# words with it). It stems before it drops stop words, so "mostly" goes (stem "most") while "because"
# stays (stem "becaus"). tests/core/test_proximity.py checks every word here against LanceDB itself.
STOP_WORDS = frozenset(
    """
a about after again against ain all am an and are aren as at be been being below between both but by can couldn
d did didn do doesn doing don down each few for from further had hadn has hasn have haven having he her here hers
herself him himself his how i if in into is isn it its itself just ll m ma me mightn more most mostly mustn my
myself needn no nor not now o of off on or other others our ours out over own re s same shan she should shouldn
so some such t than that the their theirs them then there these they this those through to too under until up ve
was wasn we were weren what when where which while who whom will with won wouldn y you your yours yourself
""".split()
)

# The tokenizer splits on anything not a letter or digit (underscores too) and lowercases.
TOKEN = re.compile(r"[^\W_]+")
SLOP = 2  # words allowed between the two: "upload the built package" still pairs "upload package"
MIN_TERMS = 3  # a query of two words is its own pair, which the exact-phrase list already scores
MAX_TOKEN = 40  # LanceDB's default max_token_length: longer tokens are not indexed
# Each pair is a phrase query: a pasted paragraph of 100 words would have doubled the search's time.
# The shipped suites' longest question has 11 pairs.
MAX_PAIRS = 12


def query_terms(query: str) -> list[str]:
    """The query's words as the full-text index keeps them (lowercased, stop words out), in order."""
    return [t for t in TOKEN.findall(query.lower()) if t not in STOP_WORDS and len(t) <= MAX_TOKEN]


def term_pairs(query: str) -> list[str]:
    """Each pair of neighbouring kept words, once, the first MAX_PAIRS of them; none for a query of fewer
    than MIN_TERMS words."""
    terms = query_terms(query)
    if len(terms) < MIN_TERMS:
        return []
    return list(dict.fromkeys(f"{a} {b}" for a, b in zip(terms, terms[1:]) if a != b))[:MAX_PAIRS]
