"""Trust findings as diagnostics (`path:line: severity: message`), with lines in the file, not the chunk."""

from __future__ import annotations

from ..diagnostics import Diagnostic
from .scan import Finding


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
