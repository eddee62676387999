"""Trust findings as diagnostics (`path:line: severity: message`), with lines in the file, not the chunk."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..diagnostics import Diagnostic
from .policy import Trust, load_trust
from .scan import Finding


class ChunkLike(Protocol):
    filepath: str
    content: str


@dataclass
class TrustReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    quarantined: int = 0  # chunks an `error` finding keeps from being served
    allowed: int = 0  # findings the manifests let through


def code(rule: str) -> str:
    return f"trust-{rule}"


def finding_diagnostic(relpath: str, line: int, finding: Finding) -> Diagnostic:
    more = f" (and {finding.count - 1} more)" if finding.count > 1 else ""
    message = f"{finding.where}: “{finding.excerpt}”{more}: {finding.reason} [{finding.rule}]"
    return Diagnostic(relpath, max(line, 1), finding.severity, message, code(finding.rule))


def chunk_start_line(file_text: str, content: str) -> int:
    """The 1-based line where a chunk's Markdown starts in its file (1 when it cannot be found)."""
    at = file_text.find(content)
    if at < 0:
        first = next((line for line in content.split("\n") if line.strip()), "")
        at = file_text.find(first) if first else -1
    return file_text.count("\n", 0, at) + 1 if at >= 0 else 1


def _file_text(root: Path, relpath: str) -> str:
    try:
        text = (root / relpath).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def report_chunks(trust: Trust, root: Path, chunks: Iterable[ChunkLike]) -> TrustReport:
    """Scan every chunk; findings become diagnostics at their line in the file."""
    report = TrustReport()
    current, text = "", ""
    for chunk in chunks:
        verdict = trust.check(chunk.content, chunk.filepath)
        report.allowed += len(verdict.allowed)
        if not verdict.findings:
            continue
        report.quarantined += verdict.quarantined
        if chunk.filepath != current:
            current, text = chunk.filepath, _file_text(root, chunk.filepath)
        start = chunk_start_line(text, chunk.content)
        for finding in verdict.findings:
            report.diagnostics.append(finding_diagnostic(chunk.filepath, start + finding.line - 1, finding))
    return report


def validate_trust(root: Path, chunks: Iterable[ChunkLike]) -> TrustReport:
    """What `docs-mcp validate` reports: the trust settings' problems, then every chunk's findings."""
    from ..corpus.walk import scan_corpus

    trust, diags = load_trust(root, scan_corpus(root).manifests)
    report = report_chunks(trust, root, chunks)
    report.diagnostics[:0] = diags
    return report
