"""Cheap, deterministic text similarity for matching a renamed or moved section to its old self: the
Jaccard index of word 3-shingles (word sets for texts too short to have any)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

_WORD = re.compile(r"[^\W_]+")
SHINGLE = 3


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    tokens = words(text)
    if len(tokens) < SHINGLE:
        return frozenset((t,) for t in tokens)
    return frozenset(tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def best_pairs(
    old: dict[str, frozenset[tuple[str, ...]]],
    new: dict[str, frozenset[tuple[str, ...]]],
    threshold: float,
    prefer: Callable[[str, str], bool] = lambda old_key, new_key: False,
) -> list[tuple[str, str, float]]:
    """One-to-one pairs (old key, new key, similarity) at or above `threshold`, best first and greedily;
    pairs `prefer` accepts (same file) win ties. Only pairs sharing a shingle are ever compared."""
    holders: dict[tuple[str, ...], list[str]] = {}
    for key, grams in new.items():
        for gram in grams:
            holders.setdefault(gram, []).append(key)
    candidates = []
    for old_key, grams in old.items():
        shared = Counter(k for gram in grams for k in holders.get(gram, ()))
        for new_key, n in shared.items():
            sim = n / (len(grams) + len(new[new_key]) - n)
            if sim >= threshold:
                candidates.append((-sim, not prefer(old_key, new_key), old_key, new_key))
    pairs = []
    used_old: set[str] = set()
    used_new: set[str] = set()
    for neg, _, old_key, new_key in sorted(candidates):
        if old_key in used_old or new_key in used_new:
            continue
        used_old.add(old_key)
        used_new.add(new_key)
        pairs.append((old_key, new_key, -neg))
    return pairs
