"""The search engine's tunable weights, kept apart from search.py so the CLI can show their defaults
without importing the engine."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Weights:
    """Field boosts of the full-text query and the fusion weights of each ranked list.

    Chosen with benchmarks/tune.py over every shipped suite at once (see the README's
    quality table); `language` multiplies the fused score of chunks in the filtered language.
    """

    text: float = 1.0
    phrase: float = 2.0
    vector: float = 2.0
    k: int = 10
    heading: float = 1.0  # field boosts inside the full-text query (content_text is 1)
    breadcrumb: float = 1.0
    subwords: float = 1.0
    fields: str = "max"  # how field scores combine: "max" (best field) or "sum"
    language: float = 1.0
    depth: int = 50  # candidates per list
