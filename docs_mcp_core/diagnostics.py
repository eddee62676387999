"""Validation findings, reported as `path:line: severity: message`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    severity: Severity
    message: str

    def format(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"


def error(path: str, line: int, message: str) -> Diagnostic:
    return Diagnostic(path, max(line, 1), "error", message)


def warning(path: str, line: int, message: str) -> Diagnostic:
    return Diagnostic(path, max(line, 1), "warning", message)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)


def format_text(diagnostics: list[Diagnostic], files: int) -> str:
    lines = [d.format() for d in sorted(diagnostics)]
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    lines.append(f"validated {files} markdown file(s): {errors} error(s), {warnings} warning(s)")
    return "\n".join(lines)


def format_json(diagnostics: list[Diagnostic], files: int) -> str:
    errors = sum(d.severity == "error" for d in diagnostics)
    return json.dumps(
        {
            "files": files,
            "errors": errors,
            "warnings": len(diagnostics) - errors,
            "diagnostics": [asdict(d) for d in sorted(diagnostics)],
        },
        indent=2,
    )
