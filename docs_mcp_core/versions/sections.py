"""A version's chunks as sections: the parts a size split made of one section (`{id}-part-N`) joined again,
so that a paragraph added to part 1 does not show every later part as changed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..output.derived_fields import content_digest

_PART = re.compile(r"^(.*)(?:-part-|#_part-)(\d+)$")


@dataclass(frozen=True)
class Section:
    chunk_id: str  # the section's ID: its first part's
    filepath: str
    heading: str
    breadcrumb: str
    content: str  # Markdown as written, parts joined
    text: str  # plain text (content_text), parts joined
    position: int  # chunk_index of its first part
    parts: int

    @property
    def digest(self) -> str:
        """Equal for sections that say the same, whatever their markup (derived_fields.content_digest)."""
        return content_digest(self.heading, self.content, self.text)


def _continues(chunk_id: str, base: str, parts: int) -> bool:
    """`{base}-part-N` (or `{file}#_part-N`) right after part N-1: a heading whose own slug ends in
    `-part-2` starts a section of its own."""
    m = _PART.match(chunk_id)
    return m is not None and m.group(1) == base and int(m.group(2)) == parts + 1


def sections(chunks: Iterable[Mapping[str, Any]]) -> dict[str, Section]:
    """{section ID: Section} of chunks.json records (sorted by filepath and chunk_index, as written)."""
    out: dict[str, Section] = {}
    current: list[Mapping[str, Any]] = []

    def flush() -> None:
        if not current:
            return
        first = current[0]
        out[str(first["chunk_id"])] = Section(
            chunk_id=str(first["chunk_id"]),
            filepath=str(first.get("filepath", "")),
            heading=str(first.get("heading", "")),
            breadcrumb=str(first.get("breadcrumb", "")),
            content="\n\n".join(str(c.get("content", "")) for c in current),
            text="\n\n".join(str(c.get("content_text", "")) for c in current),
            position=int(first.get("chunk_index", 0)),
            parts=len(current),
        )
        current.clear()

    ordered = sorted(chunks, key=lambda c: (str(c.get("filepath", "")), int(c.get("chunk_index", 0))))
    for chunk in ordered:
        if current and chunk.get("filepath") == current[0].get("filepath"):
            if _continues(str(chunk["chunk_id"]), str(current[0]["chunk_id"]), len(current)):
                current.append(chunk)
                continue
        flush()
        current.append(chunk)
    flush()
    return out
