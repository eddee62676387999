"""The search engine's tunable weights, kept apart from search/engine.py so the CLI can show their defaults
without importing the engine."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Weights:
    """Field boosts of the full-text query, fusion weights of each ranked list, and priors.

    Chosen with benchmarks/tune.py over every shipped suite at once, text-only and with the
    local model (docs/ranking.md, "Where ranking stands"). The suites could not tell language 1 from 4;
    3 is the smallest that puts the filtered language's own section above a guide on the same
    topic in the example corpus (tests/core/test_ranking.py). text_short and navigation won on every
    suite with no category lower (docs/decisions/0010-length-and-navigation-priors.md). Hybrid fusion
    by scaled scores with vector 1.5 beat rank fusion on every suite with no category lower
    (0017-hybrid-fusion-by-scaled-scores.md). proximity is the largest weight at which every
    development suite gained in both modes (0023-term-proximity.md). bare_code is the mildest of the
    weights that gained the same cases (0026-bare-code-prior.md). passing lowered no category of any suite
    in either mode (0029-exact-phrase-in-passing-mentions.md). tables is the largest weight that lowered no
    category of any suite (0033-table-rows-in-passing-on-the-vector-side.md). tables_named moved the issue's
    example and lowered no category of any suite; headed moved one case within the top 5 and lowered none (both
    in 0038-tables-in-passing-when-a-heading-names-the-query.md).
    """

    text: float = 1.0
    phrase: float = 2.0
    vector: float = 1.5
    k: int = 10  # RRF's constant: full-text lists alone, or hybrid "rrf"
    hybrid: str = "scores"  # with a vector list: "scores" (min-max scaled scores, summed) or "rrf" (ranks)
    heading: float = 1.0  # field boosts inside the full-text query (content_text is 1)
    breadcrumb: float = 1.0
    subwords: float = 0.5
    fields: str = "max"  # how field scores combine: "max" (best field, as MultiMatchQuery) or "sum"
    language: float = 3.0
    short: int = 50  # chunks with fewer characters of text than this rank lower, in proportion
    text_short: int = 150  # full-text and phrase scores of chunks with less text than this scale by their share of it
    navigation: float = 0.75  # a chunk that is mostly a list of links scales down to 1 - this at 100% (from 50%)
    depth: int = 100  # candidates per list
    proximity: float = 0.25  # each pair of neighbouring query words found together adds this times its phrase score
    bare_code: float = (
        0.5  # code with no words, under a heading many chunks share and the query does not name, scales by 1 - this
    )

    passing: bool = True  # the exact phrase counts only in chunks whose heading or opening sentence says a query word
    tables: float = 0.15  # the vector similarity of a chunk that says a query word only in passing scales by 1 - this x its share of table rows
    # ... by 1 - this x its share of table rows instead, when a candidate's heading path names most of the query's words
    tables_named: float = 1.0
    headed: float = 0.5  # the vector similarity of a chunk whose own heading names most of the query's words x (1 + this x that share)

    def by_scores(self, hybrid: bool) -> bool:
        """Whether a search fuses its lists' scaled scores (hybrid, `hybrid` "scores") or their ranks (RRF)."""
        return hybrid and self.hybrid == "scores"
