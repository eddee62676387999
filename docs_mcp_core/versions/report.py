"""A VersionDiff as an agent reads it (text) or a program does (JSON), within a size budget: each change
gets a short unified diff of its text (or, when added, its Markdown) up to `per_change` characters, until
`total` characters are spent; the changes after that are still listed, by ID and heading only."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from .changes import Change, VersionDiff

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Budget:
    per_change: int = 1500  # characters of diff or text for one change
    total: int = 24000  # characters of diffs and texts for the whole answer
    least: int = 200  # no detail is started with less than this left of `total`


def unified(old: str, new: str) -> list[str]:
    """The changed lines of two texts with one line of context; hunks start with a bare `@@` (line numbers
    inside a section mean nothing to a reader) and there is no ---/+++ header."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), n=1, lineterm=""))[2:]
    return ["@@" if line.startswith("@@") else line for line in lines]


def _cut(lines: list[str], limit: int, markdown: bool) -> tuple[str, int]:
    """Whole lines up to `limit` characters (an open code fence closed), and how many lines were left out."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if kept and used + len(line) + 1 > limit:
            break
        kept.append(line[:limit] if not kept else line)
        used += len(kept[-1]) + 1
    left = len(lines) - len(kept)
    if markdown and left:
        fence = None
        for line in kept:
            m = _FENCE.match(line)
            if m and fence is None:
                fence = m.group(1)
            elif m and fence is not None and m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence):
                fence = None
        if fence is not None:
            kept.append(fence)
    return "\n".join(kept), left


def detail(change: Change, limit: int) -> tuple[str | None, int]:
    """(diff or text, lines left out) of one change: a unified diff of the reader's text for a changed or
    renamed section, the Markdown of an added one, nothing for a removed one."""
    if change.kind == "removed":
        return None, 0
    if change.kind == "added":
        return _cut(change.section.content.splitlines(), limit, markdown=True)
    assert change.old is not None and change.new is not None
    lines = unified(change.old.text, change.new.text)
    if not lines:  # the same text under a new heading
        return None, 0
    return _cut(lines, limit, markdown=False)


def _details(diff: VersionDiff, budget: Budget) -> list[tuple[str | None, int, bool]]:
    """(detail, lines left out, whether the detail was left out for the total budget) per change."""
    spent = 0
    out: list[tuple[str | None, int, bool]] = []
    for change in diff.changes:
        if budget.total - spent < min(budget.least, budget.per_change):
            out.append((None, 0, change.kind != "removed"))
            continue
        text, left = detail(change, min(budget.per_change, budget.total - spent))
        if text is not None and change.kind != "added" and not any(line[:1] in "+-" for line in text.splitlines()):
            out.append((None, 0, True))  # the budget left no changed line to show: better none than "@@"
            continue
        spent += len(text or "")
        out.append((text, left, False))
    return out


def to_json(diff: VersionDiff, old_label: str, new_label: str, budget: Budget = Budget()) -> dict[str, Any]:
    changes = []
    for change, (text, left, omitted) in zip(diff.changes, _details(diff, budget)):
        entry: dict[str, Any] = {"kind": change.kind, "chunk_id": change.chunk_id}
        if change.old_chunk_id:
            entry["old_chunk_id"] = change.old_chunk_id
        entry["heading"] = change.section.heading
        if change.old is not None and change.new is not None and change.old.heading != change.new.heading:
            entry["old_heading"] = change.old.heading
        entry["breadcrumb"] = change.section.breadcrumb
        if change.similarity is not None:
            entry["similarity"] = change.similarity
        if diff.query:
            entry["score"] = change.score
        if text is not None:
            entry["text" if change.kind == "added" else "diff"] = text
        if left:
            entry["lines_left_out"] = left
        if omitted:
            entry["detail_left_out"] = True
        changes.append(entry)
    return {
        "from": old_label,
        "to": new_label,
        "query": diff.query,
        "counts": diff.counts(),
        "changes": changes,
        "moved": [{"old_chunk_id": o, "chunk_id": n} for o, n in diff.moved],
    }


def _summary(diff: VersionDiff, old_label: str, new_label: str) -> str:
    counts = diff.counts()
    parts = [f"{counts[k]} {k}" for k in ("changed", "renamed", "added", "removed") if counts[k]]
    moved = f"{counts['moved']} moved with their text unchanged, " if counts["moved"] else ""
    tail = f"{moved}{counts['unchanged']} unchanged"
    ranked = f"; ranked by {diff.query!r}" if diff.query else ""
    return f"{old_label} → {new_label}: {', '.join(parts) or 'no section changed'} ({tail}){ranked}"


def to_text(
    diff: VersionDiff,
    old_label: str,
    new_label: str,
    budget: Budget = Budget(),
    read_more: str = "get_doc {chunk_id}",
) -> str:
    """The answer as an agent reads it; `read_more` says how to read a section whose diff was cut."""
    lines = [_summary(diff, old_label, new_label)]
    left_out = 0
    for change, (text, left, omitted) in zip(diff.changes, _details(diff, budget)):
        lines.append("")
        if change.kind == "renamed":
            similar = f", similarity {change.similarity:.2f}" if change.similarity is not None else ""
            lines.append(f"renamed  {change.old_chunk_id or change.chunk_id} → {change.chunk_id}{similar}")
        else:
            lines.append(f"{change.kind:<8} {change.chunk_id}")
        lines.append(f"         {change.section.breadcrumb}")
        if text:
            lines += [f"    {line}" if line else "" for line in text.splitlines()]
        if left:
            lines.append(f"    [… {left} more line(s): {read_more.format(chunk_id=change.chunk_id)}]")
        left_out += omitted
    if diff.moved:
        lines.append("")
        lines.append("moved (same heading and text, new ID):")
        lines += [f"  {o} → {n}" for o, n in diff.moved]
    if left_out:
        lines.append("")
        lines.append(f"[{left_out} change(s) listed without their diff: the answer's size budget is spent]")
    return "\n".join(lines)
