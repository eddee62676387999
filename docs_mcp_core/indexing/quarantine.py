"""The trust scan in the build: every chunk scanned as written, only what a reader sees kept, flagged chunks left out.

A file's chunks are scanned with the policy of its nearest manifest (trust/policy.py). A chunk
with an `error` finding no allow entry covers is quarantined: it is not in chunks.json, the
table or anything served. The chunks kept are made from the file's visible Markdown
(trust/sanitize.py): HTML comments, hidden elements and invisible characters never reach
the table, so snippets, documents, full-text search and embeddings see only what a reader
sees. A file with nothing hidden is chunked once; one with hidden text is chunked again from
its visible text, which can move or drop a chunk whose heading was hidden (its ID is then
scanned anew). Findings are recorded per file (`Flag`), so a reused file reports them again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..corpus.markdown import parser, top_level_blocks
from ..diagnostics import Diagnostic
from ..output.chunk import Chunk
from ..progress import counted
from ..trust.chars import strip_invisible
from ..trust.policy import Trust
from ..trust.report import chunk_start_line, finding_diagnostic
from ..trust.rules import Severity
from ..trust.sanitize import visible_markdown
from ..trust.scan import Finding
from ..trust.views import Removed

QUARANTINED, WARNED, ALLOWED = "quarantined", "warning", "allowed"
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)  # one left open runs to the end, as in a browser
# ATX and setext heading lines, read after a line break put in front (a literal first lets the search skip ahead)
_HEADING_LINE = re.compile(r"\n( {0,3}#{1,6}(?:[ \t][^\n]*)?(?=\n|\Z)| {0,3}(?:=+|-+)[ \t]*(?=\n|\Z))")


@dataclass(frozen=True)
class Flag:
    """One finding in one chunk of a built file, and what the build did about it."""

    chunk_id: str
    line: int  # in the file
    rule: str
    severity: str
    where: str
    excerpt: str
    reason: str
    count: int
    status: str  # QUARANTINED (the chunk is not served), WARNED (served, visible text only) or ALLOWED
    allowed_by: str = ""  # "manifest path: reason" of the allow entry, for ALLOWED

    def row(self) -> list[Any]:
        """As files.json keeps it."""
        return [
            self.chunk_id,
            self.line,
            self.rule,
            self.severity,
            self.where,
            self.excerpt,
            self.reason,
            self.count,
            self.status,
            self.allowed_by,
        ]

    @classmethod
    def from_row(cls, row: Any) -> Flag | None:
        """None for a row not as `row` writes it (the file is then parsed again)."""
        if not isinstance(row, list) or len(row) != 10:
            return None
        try:
            chunk_id, rule, severity, where, excerpt, reason, status, allowed_by = (
                str(row[i]) for i in (0, 2, 3, 4, 5, 6, 8, 9)
            )
            flag = cls(chunk_id, int(row[1]), rule, severity, where, excerpt, reason, int(row[7]), status, allowed_by)
        except (TypeError, ValueError):
            return None
        return flag if flag.status in (QUARANTINED, WARNED, ALLOWED) else None

    def finding(self) -> Finding:
        severity: Severity = "warning" if self.severity == "warning" else "error"
        return Finding(self.rule, severity, self.reason, self.where, 1, self.excerpt, self.count)

    def diagnostic(self, relpath: str) -> Diagnostic:
        """As validate prints it: `path:line: severity: where: “excerpt”: reason [rule]`."""
        return finding_diagnostic(relpath, self.line, self.finding())


def _flags(chunk: Chunk, start: int, findings: Iterable[Finding], status: Callable[[Finding], str]) -> list[Flag]:
    return [
        Flag(chunk.chunk_id, start + f.line - 1, f.rule, f.severity, f.where, f.excerpt, f.reason, f.count, status(f))
        for f in findings
    ]


def screen_file(
    trust: Trust,
    relpath: str,
    file_text: str,
    body: str,
    chunks: list[Chunk],
    rechunk: Callable[[str], list[Chunk]],
) -> tuple[list[Chunk], list[Flag]]:
    """The chunks of one file to serve (visible text only, quarantined ones left out, renumbered in
    document order) and its findings. `chunks` were made from `body`; `rechunk` makes them from
    another body (the visible one) the same way."""
    flags: list[Flag] = []
    quarantined: set[str] = set()
    lines: list[str] = []  # the file with its line ends normalized, made for the first finding

    policy = trust.policy_for(relpath)

    def check(chunk: Chunk) -> Removed | None:
        verdict = trust.check(chunk.content, relpath, policy)
        if not verdict.findings and not verdict.allowed:
            return verdict.removed
        if not lines:
            lines.append(file_text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n"))
        start = chunk_start_line(lines[0], chunk.content)
        flags.extend(_flags(chunk, start, verdict.findings, lambda f: QUARANTINED if f.severity == "error" else WARNED))
        for finding, entry in verdict.allowed:
            flag = _flags(chunk, start, [finding], lambda f: ALLOWED)[0]
            flags.append(replace(flag, allowed_by=f"{entry.manifest}: {entry.reason}"))
        if verdict.quarantined:
            quarantined.add(chunk.chunk_id)
        return verdict.removed

    removed = [check(chunk) for chunk in chunks]
    visible = visible_markdown(body)
    served = chunks
    if visible != body:
        served = _each_visible(chunks, removed, body, visible) or rechunk(visible)
        scanned = {c.chunk_id for c in chunks}
        for chunk in served:  # a chunk the visible text makes anew (a hidden heading moved it): scanned too
            if chunk.chunk_id not in scanned:
                check(chunk)
    kept = [c for c in served if c.chunk_id not in quarantined]
    out = []
    for index, chunk in enumerate(kept):
        heading, breadcrumb = strip_invisible(chunk.heading), strip_invisible(chunk.breadcrumb)
        if index != chunk.chunk_index or heading != chunk.heading or breadcrumb != chunk.breadcrumb:
            chunk = replace(chunk, chunk_index=index, heading=heading, breadcrumb=breadcrumb)
        out.append(chunk)
    return out, flags


def trust_diagnostics(flags: Iterable[tuple[str, Flag]]) -> list[Diagnostic]:
    """The findings validate reports (those an allow entry lets through are not), at their file's line."""
    return [flag.diagnostic(path) for path, flag in flags if flag.status != ALLOWED]


def _headings(markdown: str) -> list[str]:
    return [strip_invisible(line).strip() for line in _HEADING_LINE.findall("\n" + markdown)]


def _plain(markdown: str) -> str:
    """A chunk's plain text as the chunker makes it (chunking/splitting.py): its blocks' text, a blank line apart."""
    return "\n\n".join(t for t in (block.text() for block in top_level_blocks(parser().parse(markdown))) if t)


def _visible_text(chunk: Chunk, seen: str) -> str:
    """The plain text of a chunk whose visible Markdown is `seen`. When comments and invisible characters were
    all it hid, its plain text without those characters: comments never reach plain text (corpus/markdown.py)."""
    rest = _COMMENT.sub("", chunk.content)
    if "<" not in rest or visible_markdown(rest) == strip_invisible(rest):
        return strip_invisible(chunk.content_text)
    return _plain(seen)


def _each_visible(chunks: list[Chunk], removed: list[Removed | None], body: str, visible: str) -> list[Chunk] | None:
    """The chunks with each one's visible text, when that is the file's visible text chunked as before: the
    same heading lines, and every hidden construct inside one chunk (they removed as much as the file's
    sanitizing did). None otherwise (a hidden heading, an element across a chunk's edge): chunk it again.
    `removed`: per chunk, what the scan learnt the sanitizer takes out of it (None: not known).

    Chunking the visible file again costs a parse of it; most files with hidden text only have comments
    within sections, and their changed chunks are re-read alone.
    """
    if _headings(body) != _headings(visible):
        return None
    out, cut = [], 0
    for chunk, known in zip(chunks, removed, strict=True):
        seen = visible_markdown(chunk.content, known)
        if seen != chunk.content:
            cut += len(chunk.content) - len(seen)
            seen = seen.strip("\n")  # a comment at its edge leaves an empty line, which chunks never start or end with
            chunk = replace(chunk, content=seen, content_text=_visible_text(chunk, seen))
        out.append(chunk)
    return out if cut == len(body) - len(visible) else None


def quarantine_line(quarantined: int, files: int, docs_dir: str) -> str:
    """The build's line about quarantined chunks: how many, and where to look."""
    return (
        f"trust: {counted(quarantined, 'chunk')} in {counted(files, 'file')} quarantined (text addressed to an AI "
        f"agent, or hidden from readers) and not served; `docs-mcp validate --docs-dir {docs_dir}` lists file, "
        "line, rule and excerpt (also in the cache audit's `trust_findings`); a legitimate page is let through "
        "by an allow entry with a reason in its .docs-mcp.json (docs/trust.md)"
    )
