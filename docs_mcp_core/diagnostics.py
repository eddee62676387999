"""Validation findings, reported as `path:line: severity: message`.

Every finding carries a stable `code` (e.g. `no-strategy`, `manifest-invalid`): programs
and people match on it, never on the message text, which may be reworded.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

from .paths import counted_files

Severity = Literal["error", "warning"]

# Repeated findings of one code are printed as one line from this many on (text output only).
GROUP_FROM = 4
GROUP_EXAMPLES = 3

# What to do about a whole group of one code, when the single messages do not say it once for all.
GROUP_FIX = {
    "no-strategy": "add a .docs-mcp.json with a strategy to the docs folder (or its parent folders), "
    "or run `docs-mcp fix --docs-dir DOCS` to see one proposed from the corpus",
    "empty-file": 'give these files content or exclude them ("exclude" in .docs-mcp.json)',
    "unknown-frontmatter-key": "move search facets under 'metadata:' in the frontmatter, or remove the keys",
}


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    severity: Severity
    message: str
    code: str = "unspecified"

    def format(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"

    def located(self) -> str:
        """Without the severity: for a line whose prefix (`warn:`, a log level) already says it."""
        return f"{self.path}:{self.line}: {self.message}"


def error(path: str, line: int, message: str, code: str) -> Diagnostic:
    return Diagnostic(path, max(line, 1), "error", message, code)


def warning(path: str, line: int, message: str, code: str) -> Diagnostic:
    return Diagnostic(path, max(line, 1), "warning", message, code)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)


def _group_line(group: list[Diagnostic], docs_dir: str) -> str:
    first = group[0]
    shown = ", ".join(d.path for d in group[:GROUP_EXAMPLES])
    more = f" and {len(group) - GROUP_EXAMPLES} more" if len(group) > GROUP_EXAMPLES else ""
    fix = GROUP_FIX.get(first.code, "").replace("DOCS", docs_dir)
    head = first.message.split(";")[0].split(" (")[0] if fix else first.message
    line = f"{first.severity}: {len(group)} files: {head} [{first.code}] ({shown}{more})"
    return f"{line}\n  fix: {fix}" if fix else line


def format_text(diagnostics: list[Diagnostic], files: Iterable[str], docs_dir: str = "DOCS") -> str:
    """One line per finding; findings of one code and identical wording on many files become one line.

    Errors are never grouped unless identical; the JSON output always keeps every finding.
    """
    groups: dict[tuple[str, str, str], list[Diagnostic]] = defaultdict(list)
    for d in sorted(diagnostics):
        key = (d.severity, d.code, d.message if d.code not in GROUP_FIX else "")
        groups[key].append(d)
    singles: list[Diagnostic] = []
    grouped: list[str] = []
    for _key, group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[1][0])):
        if len(group) >= GROUP_FROM:
            grouped.append(_group_line(group, docs_dir))
        else:
            singles.extend(group)
    lines = [d.format() for d in sorted(singles)] + grouped
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    lines.append(
        f"validated {counted_files(files)}: {errors} error(s), {warnings} warning(s)"
        + (" (`--format json` lists every finding)" if grouped else "")
    )
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
