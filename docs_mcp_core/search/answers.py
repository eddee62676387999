"""get_doc and search_docs answers: within a character budget, saying what was left out and how to get
it; a hit's snippet; a file's chunk list.

Why these defaults: without `max_chars`, the target chunk is always whole (the reference
shape), and its context neighbours share CONTEXT_CHARS, about 2,000 tokens: enough for the
one to three neighbouring sections the tool description suggests, while a file of 20,000-
character chunks cannot flood a context window through `context: 5`. With `max_chars`, the
whole answer fits in it: the target first (cut at a block boundary, never below
MIN_TARGET_CHARS), then the nearest neighbours that fit whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .budget import cut, resume
from .hits import SearchHit, TrimNote

CONTEXT_CHARS = 8_000  # default budget for context neighbours (the target is not counted)
MIN_MAX_CHARS = 500
MAX_MAX_CHARS = 200_000
MIN_TARGET_CHARS = 200  # a trimmed target always shows at least this much, so each read makes progress
FILE_TIP_IDS = 20  # chunk IDs a "not found" answer lists of the file the bad ID names
_WORD = re.compile(r"[A-Za-z0-9_]+")


def _call(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool} {json.dumps(arguments, ensure_ascii=False)}"


def _header(chunk_id: str, ids: list[str], offset: int) -> str:
    role = "Target" if offset == 0 else f"Context: {offset:+d}"
    return f"--- Chunk: {chunk_id} (Chunk {ids.index(chunk_id) + 1} of {len(ids)}) ({role}) ---"


def _context_note(omitted: list[str], chunk_id: str, position: int, ids: list[str], tool: str) -> str:
    after = [c for c in omitted if ids.index(c) > position]
    nearest = min(after or omitted, key=lambda c: abs(ids.index(c) - position))
    noun = "chunk" if len(omitted) == 1 else "chunks"
    return (
        f"[trimmed: {len(omitted)} more context {noun} left out ({', '.join(omitted)}); "
        f"next: {_call(tool, {'chunk_id': nearest})}]"
    )


def render_doc(
    chunk_id: str,
    ids: list[str],
    window: list[str],
    contents: dict[str, str],
    *,
    max_chars: int | None = None,
    offset: int = 0,
    tool: str = "get_doc",
    trailer: str = "",
    lead: str = "",
) -> str:
    """The get_doc text: the target (from `offset`), then the neighbours of `window` that fit.

    Every left-out part ends the answer as one `[trimmed: …; next: get_doc {…}]` line; `trailer`
    (a bare file path's chunk list) comes last and `lead` (notes, the source line) first, and both count
    against max_chars too.
    """
    position = ids.index(chunk_id)
    full = contents[chunk_id]
    header = _header(chunk_id, ids, 0)
    if offset:
        header = header[: -len(" ---")] + f" (from character {offset} of {len(full)}) ---"
    text = resume(full, offset) if offset else full  # may start with a re-opened fence line
    neighbours = sorted(
        (c for c in window if c != chunk_id), key=lambda c: (abs(ids.index(c) - position), ids.index(c))
    )
    target_note = ""
    if max_chars is not None:

        def pointer(end: int) -> dict[str, Any]:
            return {"chunk_id": chunk_id, "offset": end, "max_chars": max_chars}

        reserve = len(header) + 1 + len(trailer) + len(lead)
        if neighbours:
            reserve += 2 + len(_context_note(neighbours, chunk_id, position, ids, tool)) + len(max(neighbours, key=len))
        if reserve + len(text) > max_chars:  # a target that fits whole needs no room for a trimmed note
            reserve += len(_target_note(len(full), pointer(len(full)), tool)) + 2
        piece = cut(text, max(MIN_TARGET_CHARS, max_chars - reserve))
        if piece.end < len(text):
            end = len(full) - (len(text) - piece.end)
            text = piece.text
            target_note = _target_note(len(full) - end, pointer(end), tool)
    shown: dict[str, str] = {chunk_id: f"{header}\n{text}"}

    def answer(omitted: list[str]) -> str:
        notes = [target_note] if target_note else []
        if omitted:
            notes.append(_context_note(sorted(omitted, key=ids.index), chunk_id, position, ids, tool))
        return lead + "\n\n".join([*(shown[c] for c in window if c in shown), *notes]) + trailer

    stopped: set[int] = set()  # a side where a neighbour did not fit: a farther one would leave a gap
    used = 0
    for neighbour in neighbours:
        side = 1 if ids.index(neighbour) > position else -1
        block = f"{_header(neighbour, ids, ids.index(neighbour) - position)}\n{contents[neighbour]}"
        if target_note or side in stopped:
            fits = False
        elif max_chars is None:
            fits = used + len(block) <= CONTEXT_CHARS
        else:
            shown[neighbour] = block
            fits = len(answer([c for c in neighbours if c not in shown])) <= max_chars
            del shown[neighbour]
        if fits:
            shown[neighbour] = block
            used += len(block)
        else:
            stopped.add(side)
    omitted = [c for c in neighbours if c not in shown]
    while max_chars is not None and len(answer(omitted)) > max_chars and len(shown) > 1:
        farthest = [c for c in neighbours if c in shown][-1]  # a shorter "next" id can still tip it over
        del shown[farthest]
        omitted = [c for c in neighbours if c not in shown]
    return answer(omitted)


def _target_note(left: int, pointer: dict[str, Any], tool: str) -> str:
    return f"[trimmed: {left} more characters of this chunk; next: {_call(tool, pointer)}]"


def fit_page(
    page_json: Callable[[list[SearchHit], str | None, TrimNote | None], dict[str, Any]],
    hits: list[SearchHit],
    next_cursor: str | None,
    cursor_at: Callable[[int], str],
    max_chars: int,
) -> tuple[list[SearchHit], str | None, TrimNote | None]:
    """The most leading hits whose JSON answer fits in max_chars (at least one, its snippet
    shortened if need be), the cursor that continues at the first hit left out, and a note."""

    def size(kept: list[SearchHit], cursor: str | None, note: TrimNote | None) -> int:
        return len(json.dumps(page_json(kept, cursor, note), ensure_ascii=False))

    if size(hits, next_cursor, None) <= max_chars:
        return hits, next_cursor, None

    def note(kept: int) -> TrimNote:
        dropped = len(hits) - kept
        return {
            "dropped_hits": dropped,
            "message": f"{dropped} more hit{'s' if dropped != 1 else ''} on this page did not fit in "
            f"max_chars={max_chars}; pass next_cursor (same query, filters and max_chars) to continue.",
        }

    for kept in range(len(hits) - 1, 0, -1):
        cursor: str | None = cursor_at(kept)
        if size(hits[:kept], cursor, note(kept)) <= max_chars:
            return hits[:kept], cursor, note(kept)
    cursor = cursor_at(1) if len(hits) > 1 else next_cursor
    first: SearchHit = {**hits[0]}
    the_note = note(1) if len(hits) > 1 else None
    snippet = first["snippet"]
    lo, hi = 0, len(snippet)
    while lo < hi:  # the longest snippet prefix that fits
        mid = (lo + hi + 1) // 2
        first["snippet"] = snippet[:mid] + ("…" if mid < len(snippet) else "")
        lo, hi = (mid, hi) if size([first], cursor, the_note) <= max_chars else (lo, mid - 1)
    first["snippet"] = snippet[:lo] + ("…" if lo < len(snippet) else "")
    return [first], cursor, the_note


def snippet(text: str, query: str, width: int = 220) -> str:
    """Up to `width` characters of the text, starting shortly before the first query word found."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lower = flat.lower()
    positions = [lower.find(w) for w in (t.lower() for t in _WORD.findall(query)) if len(w) > 2]
    anchor = min((p for p in positions if p >= 0), default=0)
    start = max(0, anchor - 60)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < anchor else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start + width // 2, end)
        end = space if space > 0 else end
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


def file_listing(path: str, file_ids: list[str], max_chars: int | None) -> str:
    """A file's chunk IDs after its first chunk (get_doc of a bare file path); with a budget, as many as
    fit in half of it."""
    head = f"\n\n[{path} has {len(file_ids)} chunk{'s' if len(file_ids) != 1 else ''}: "
    shown = list(file_ids)
    while True:
        more = len(file_ids) - len(shown)
        tail = f" and {more} more (get_doc without max_chars lists them all)]" if more else "]"
        listing = head + ", ".join(shown) + tail
        if max_chars is None or len(listing) <= max_chars // 2 or len(shown) <= 1:
            return listing
        shown.pop()


def file_tip(same_file: list[str]) -> str:
    """The chunk IDs of the file a bad chunk ID names: all of them, or the first ones and how many more."""
    if not same_file:
        return ""
    shown = ", ".join(same_file[:FILE_TIP_IDS])
    more = len(same_file) - FILE_TIP_IDS
    rest = (
        f' and {more} more (get_doc {{"chunk_id": "{same_file[0].split("#", 1)[0]}"}} lists them all)'
        if more > 0
        else ""
    )
    return f" That file has {len(same_file)} chunk{'s' if len(same_file) != 1 else ''}: {shown}{rest}."
