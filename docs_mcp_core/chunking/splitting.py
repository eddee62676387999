"""Make `max_chunk_size` a real bound.

An oversized section is cut at its next heading level, then between blocks, then
inside a block (code fences re-opened, table headers repeated), and the pieces are
packed into as few, evenly sized parts as the bound allows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from ..corpus.dialects import CONTAINER_OPEN
from ..corpus.markdown import Block, inline_text, markdown_text

_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*$")


@dataclass
class Piece:
    text: str
    plain: str
    trail: tuple[str, ...]  # sub-headings (below the section's level) in effect where it starts
    units: list[Unit] | None = None  # the blocks it spans, when it can be cut finer
    kinds: tuple[str, ...] = ()  # the first token type of each whole block it holds

    @property
    def size(self) -> int:
        return len(self.text) + 1  # its text plus the newline that joins it to the next piece


@dataclass
class Unit:
    """A top-level block plus the lines up to the next block (blank lines, link definitions)."""

    block: Block
    lines: list[str]
    start: int  # first line of the unit (may precede the block for a section's first unit)
    end: int
    trail: tuple[str, ...]

    @cached_property
    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines[self.start : self.end])

    def piece(self) -> Piece:
        return Piece(
            "\n".join(self.lines[self.start : self.end]), self.block.text(), self.trail, kinds=(self.block.first.type,)
        )


def _join(units: list[Unit]) -> Piece:
    first = units[0]
    text = "\n".join(first.lines[first.start : units[-1].end])
    plain = "\n\n".join(t for t in (u.block.text() for u in units) if t)
    return Piece(text, plain, first.trail, units if len(units) > 1 else None, tuple(u.block.first.type for u in units))


def split_units(units: list[Unit], level: int, max_size: int) -> list[Piece]:
    if sum(u.size for u in units) - 1 <= max_size:
        return [_join(units)]
    deeper = [u.block.heading_level for u in units[1:] if u.block.heading_level > level]
    if deeper:
        sub = min(deeper)
        groups: list[list[Unit]] = [[]]
        for u in units:
            if u.block.heading_level == sub and groups[-1]:
                groups.append([])
            groups[-1].append(u)
        return [p for g in groups for p in split_units(g, sub, max_size)]
    pieces: list[Piece] = []
    for u in units:
        pieces.extend([u.piece()] if u.size - 1 <= max_size else split_block(u, max_size))
    return pieces


def _line_groups(lines: list[str], budget: int) -> list[list[str]]:
    """Fewest, then most even, groups with sum(len(line)+1) <= budget; long lines cut at spaces."""
    segs = [seg for line in lines for seg in _cut_line(line, budget - 1)]
    return [segs[a:b] for a, b in balanced_runs([len(seg) + 1 for seg in segs], budget)]


def balanced_runs(sizes: list[int], budget: int) -> list[tuple[int, int]]:
    """Fewest runs with sum(sizes) <= budget each, then the smallest largest run."""
    if not sizes:
        return []
    n = len(_fill(sizes, budget))
    lo, hi = max(sizes), budget
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if len(_fill(sizes, mid)) <= n else (mid + 1, hi)
    return _fill(sizes, lo)


def _fill(sizes: list[int], cap: int) -> list[tuple[int, int]]:
    """Greedy [start, end) runs whose sizes sum to at most cap."""
    runs: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, size in enumerate(sizes):
        if i > start and used + size > cap:
            runs.append((start, i))
            start, used = i, 0
        used += size
    runs.append((start, len(sizes)))
    return runs


def _cut_line(line: str, width: int) -> list[str]:
    if len(line) <= width:
        return [line]
    out = []
    start = 0  # cut by position: slicing off the rest at each cut copies it, quadratic in the line's length
    while len(line) - start > width:
        cut = line.rfind(" ", start + width // 2, start + width)
        cut = cut if cut > start else start + width
        out.append(line[start:cut])
        start = cut
    out.append(line[start:])
    return out


def _wrapped(prefix: str | None, body: list[str], suffix: str | None, max_size: int) -> list[str] | None:
    """Texts `prefix + group + suffix`, each at most max_size; None if the wrapper leaves no room."""
    budget = (
        max_size + 1 - (len(prefix) + 1 if prefix is not None else 0) - (len(suffix) + 1 if suffix is not None else 0)
    )
    if budget < 40:
        return None
    texts = []
    for group in _line_groups(body, budget):
        parts = ([prefix] if prefix is not None else []) + group + ([suffix] if suffix is not None else [])
        texts.append("\n".join(parts))
    return texts


def split_block(unit: Unit, max_size: int) -> list[Piece]:
    """Cut one oversized block at line boundaries, keeping each part valid Markdown."""
    block, lines = unit.block, unit.lines
    own = lines[block.start : block.end]
    around = lines[unit.start : block.start] + lines[block.end : unit.end]
    kind = block.first.type
    texts: list[str] | None = None
    plains: list[str] | None = None
    if kind == "fence" and len(own) >= 2:
        opening = own[0]
        closed = _FENCE_CLOSE.match(own[-1]) is not None and len(own) >= 2
        closing = own[-1] if closed else opening[: len(opening) - len(opening.lstrip())] + block.first.markup
        body = own[1:-1] if closed else own[1:]
        texts = _wrapped(opening, body, closing, max_size)
        if texts is not None:
            plains = ["\n".join(t.split("\n")[1:-1]) for t in texts]
    elif kind in CONTAINER_OPEN and len(own) > 2:  # re-opened in each part, as fences are
        opening, last = own[0], own[-1].strip()
        closed = len(last) >= 3 and set(last) <= {":", "/"} and kind.startswith("container")
        texts = _wrapped(opening, own[1:-1] if closed else own[1:], own[-1] if closed else None, max_size)
    elif kind == "table_open" and len(own) > 2:
        texts = _wrapped("\n".join(own[:2]), own[2:], None, max_size)
        plains = _table_plains(block, texts) if texts is not None else None
    elif kind in ("bullet_list_open", "ordered_list_open"):
        texts = _list_items(block, lines, max_size)
    if texts is None:
        texts = _wrapped(None, own, None, max_size) or []
    if plains is None:
        plains = [markdown_text(t) for t in texts]
    pieces = [Piece(t, p, unit.trail) for t, p in zip(texts, plains)]
    if any(line.strip() for line in around):  # e.g. link reference definitions: never dropped
        pieces.extend(Piece(t, markdown_text(t), unit.trail) for t in _wrapped(None, around, None, max_size) or [])
    return pieces


def _table_plains(block: Block, texts: list[str]) -> list[str] | None:
    """Plain text of table parts from the block's own tokens (re-parsing big tables is slow)."""
    rows: list[str] = []
    cells: list[str] = []
    for tok in block.tokens:
        if tok.type == "tr_open":
            cells = []
        elif tok.type == "inline":
            text = inline_text(tok).strip()
            if text:
                cells.append(text)
        elif tok.type == "tr_close":
            rows.append("\n".join(cells))
    header, body = rows[:1], rows[1:]
    counts = [t.count("\n") - 1 for t in texts]  # lines per part, minus the repeated header and delimiter
    if not header or sum(counts) != len(body):  # a cut line or odd markup: fall back to re-parsing
        return None
    plains, start = [], 0
    for n in counts:
        plains.append("\n".join(r for r in header + body[start : start + n] if r))
        start += n
    return plains


def _list_items(block: Block, lines: list[str], max_size: int) -> list[str]:
    starts = [t.map[0] for t in block.tokens if t.type == "list_item_open" and t.level == 1 and t.map]
    if not starts:
        return _wrapped(None, lines[block.start : block.end], None, max_size) or []
    starts[0] = block.start
    bounds = list(zip(starts, starts[1:] + [block.end]))
    texts: list[str] = []
    for a, b in bounds:
        item = lines[a:b]
        while item and not item[-1].strip():
            item.pop()
        text = "\n".join(item)
        texts.extend([text] if len(text) <= max_size else _wrapped(None, item, None, max_size) or [])
    return texts


def pack(pieces: list[Piece], max_size: int, min_size: int = 0) -> list[list[Piece]]:
    """Fewest parts within max_size, split evenly.

    The fewest parts means no two neighbours would fit together, so a part under
    min_size cannot simply merge back; instead the section is re-cut at block rather
    than heading boundaries when that evens the parts out.
    """
    parts = _pack(pieces, max_size)
    if len(parts) < 2 or not min_size or _smallest(parts) >= min_size:
        return parts
    finer = [q for p in pieces for q in ([u.piece() for u in p.units] if p.units else [p])]
    refined = _pack(finer, max_size)
    return refined if len(refined) <= len(parts) and _smallest(refined) > _smallest(parts) else parts


def _smallest(parts: list[list[Piece]]) -> int:
    return min(len(part_text(p)) for p in parts)


def _pack(pieces: list[Piece], max_size: int) -> list[list[Piece]]:
    return [pieces[a:b] for a, b in balanced_runs([p.size for p in pieces], max_size + 1)]


def part_text(part: list[Piece]) -> str:
    return "\n".join(p.text for p in part).strip("\n").rstrip()


def part_plain(part: list[Piece]) -> str:
    return "\n\n".join(p.plain for p in part if p.plain)
