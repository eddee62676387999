"""Slugs and chunk IDs: `{relative_filepath}#{heading_path}` (seed 001, DESIGN.md §3)."""

from __future__ import annotations

import re

PREAMBLE = "_preamble"
_DROP = re.compile(r"[^a-z0-9 -]")
_SPACES = re.compile(r"\s+")
_HYPHENS = re.compile(r"-+")


def slugify(text: str) -> str:
    """Lowercase, keep only [a-z0-9 -], spaces to hyphens, collapse and trim hyphens.

    Non-ASCII letters are dropped (not transliterated), exactly as the reference does,
    so that IDs carry over between implementations. An empty result becomes "section".
    """
    slug = _DROP.sub("", text.lower())
    slug = _HYPHENS.sub("-", _SPACES.sub("-", slug)).strip("-")
    return slug or "section"


class SlugRegistry:
    """Gives the Nth duplicate slug under one parent path the suffix `-N` (N from 2).

    A suffixed slug that a real heading already took (`Foo`, `Foo`, `Foo 2`) keeps
    counting, so IDs stay unique.
    """

    def __init__(self) -> None:
        self._counts: dict[tuple[str, ...], dict[str, int]] = {}
        self._used: dict[tuple[str, ...], set[str]] = {}

    def claim(self, parent: tuple[str, ...], slug: str) -> str:
        counts = self._counts.setdefault(parent, {})
        used = self._used.setdefault(parent, set())
        n = counts.get(slug, 0) + 1
        candidate = slug if n == 1 else f"{slug}-{n}"
        while candidate in used:
            n += 1
            candidate = f"{slug}-{n}"
        counts[slug] = n
        used.add(candidate)
        return candidate


def section_id(filepath: str, slug_path: list[str]) -> str:
    return f"{filepath}#{'/'.join(slug_path)}"


def part_id(base_id: str, part: int) -> str:
    """Part 1 keeps the section's ID; later parts are `{id}-part-N`."""
    return base_id if part == 1 else f"{base_id}-part-{part}"


def file_part_id(filepath: str, part: int) -> str:
    """`chunk_by: file` IDs: the bare path, then `{path}#_part-N` for size splits."""
    return filepath if part == 1 else f"{filepath}#_part-{part}"
