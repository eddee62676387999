"""Answers that fit a character budget: Markdown cut at block boundaries, never inside an open fence.

The read path may not import the chunker (see the import rules), so this is a small line-based
view of the same block structure the chunker cuts at: blank-line separated blocks, headings,
top-level list items, and fenced code blocks as one unit. A cut that must fall inside a block
(one block bigger than the budget) falls between lines, and a cut inside a fence closes it;
reading on from that offset re-opens it, so every piece is valid Markdown on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d{1,9}[.)])(\s|$)")


@dataclass(frozen=True)
class Line:
    start: int  # character offset of the line in the text
    text: str  # without its newline
    fence: str | None  # the opening line of the fence this line is inside (None outside any fence)
    boundary: bool  # a block may start here: cutting before this line splits no block


def lines_of(text: str) -> list[Line]:
    """Every line with its offset, the fence it belongs to and whether a block starts there."""
    out: list[Line] = []
    offset = 0
    fence: str | None = None  # opening line while inside a fence
    marker = ""
    previous_blank, previous_closed = True, False
    for raw in text.split("\n"):
        match = _FENCE.match(raw)
        if fence is None:
            opens = match is not None and not (match.group(2)[0] == "`" and "`" in match.group(3))
            boundary = previous_blank or previous_closed or opens or bool(_HEADING.match(raw) or _LIST_ITEM.match(raw))
            out.append(Line(offset, raw, None, boundary and bool(raw.strip())))
            previous_closed = False
            if opens:
                assert match is not None
                fence, marker = raw, match.group(2)
        else:
            out.append(Line(offset, raw, fence, False))
            closes = (
                match is not None
                and match.group(2)[0] == marker[0]
                and len(match.group(2)) >= len(marker)
                and not match.group(3).strip()
            )
            if closes:
                fence, previous_closed = None, True
        previous_blank = not raw.strip()
        offset += len(raw) + 1
    return out


def _closing(opening: str) -> str:
    match = _FENCE.match(opening)
    assert match is not None
    return match.group(1) + match.group(2)


def fence_at(text: str, offset: int) -> str | None:
    """The opening line of the fence that `offset` falls inside, or None."""
    inside = None
    for line in lines_of(text):
        if line.start > offset:
            break
        inside = line.fence
    return inside


@dataclass(frozen=True)
class Cut:
    text: str  # what to show: valid Markdown (a fence cut inside is closed)
    end: int  # offset in the original text where the rest starts (len(text) when nothing is left)


def cut(text: str, budget: int) -> Cut:
    """The longest prefix of whole blocks that fits in `budget` characters.

    When not even the first block fits, the cut falls between lines (between words for one
    very long line), closing a fence left open; an empty text never comes back for a
    non-empty input, so a reader always makes progress.
    """
    if len(text) <= budget:
        return Cut(text, len(text))
    lines = lines_of(text)
    best: int | None = None
    for line in lines[1:]:
        if line.boundary and len(text[: line.start].rstrip()) <= budget:
            best = line.start
    if best is not None and text[:best].strip():
        return Cut(text[:best].rstrip(), best)
    # one block is bigger than the budget: cut between its lines, closing an open fence
    chosen: Line | None = None
    for line in lines[1:]:
        closing = len(_closing(line.fence)) + 1 if line.fence else 0
        if len(text[: line.start].rstrip()) + closing <= budget and text[: line.start].strip():
            chosen = line
    if chosen is not None:
        shown = text[: chosen.start].rstrip()
        if chosen.fence and not shown.endswith("\n" + chosen.fence) and shown != chosen.fence:
            shown += "\n" + _closing(chosen.fence)
        return Cut(shown, chosen.start)
    space = text.rfind(" ", 1, max(2, budget))
    end = space if space > 0 else max(1, budget)
    return Cut(text[:end], end)


def resume(text: str, offset: int) -> str:
    """The text from `offset` on, re-opening the fence that offset falls inside."""
    opening = fence_at(text, offset)
    rest = text[offset:]
    return f"{opening}\n{rest}" if opening is not None else rest
