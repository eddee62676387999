"""pip requirements files: `name==1.2.3` pins, with `--hash` options, markers, line continuations and
`-r`/`-c` includes. A line that cannot be read is one note; the rest of the file still counts."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from ..locked import Locked, LockfileError
from .formats import read_text

_COMMENT = re.compile(r"(^|\s)#.*$")
_INCLUDE = re.compile(r"^(?:--requirement|--constraint|-r|-c)(?:\s*=\s*|\s*)(\S.*)$")
# Options of a requirement line (pip's per-requirement options): everything from the first one on.
_LINE_OPTIONS = re.compile(r"\s+--?(?:hash|config-settings|global-option|install-option)\b.*$")
_BARE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[.~/]|\S+\.(?:whl|zip|tar\.gz|tgz)(?:\s|$))")
MAX_DEPTH = 10


@dataclass
class RequirementsScan:
    pins: list[Locked] = field(default_factory=list)
    unpinned: list[str] = field(default_factory=list)  # `file:line: name>=1.0`: named, but not pinned to one version
    notes: list[str] = field(default_factory=list)


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with `\\` continuations joined and comments dropped, as pip reads them."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\") and not raw.lstrip().startswith("#"):
            pending += raw[:-1]
            continue
        joined = _COMMENT.sub("", pending + raw).strip()
        pending = ""
        if joined:
            out.append((start, joined))
    if _COMMENT.sub("", pending).strip():
        out.append((start, _COMMENT.sub("", pending).strip()))
    return out


def read_requirements(path: Path, matches: Callable[[str], bool], notes: list[str]) -> RequirementsScan:
    scan = RequirementsScan(notes=notes)
    _scan(path, matches, scan, set(), 0)
    return scan


def _scan(path: Path, matches: Callable[[str], bool], scan: RequirementsScan, seen: set[Path], depth: int) -> None:
    resolved = path.resolve()
    if resolved in seen:
        return
    seen.add(resolved)
    text = read_text(path)
    for number, line in logical_lines(text):
        where = f"{path}:{number}"
        include = _INCLUDE.match(line)
        if include:
            target = (path.parent / include.group(1).strip()).resolve()
            if depth >= MAX_DEPTH:
                scan.notes.append(f"{where}: includes nested more than {MAX_DEPTH} deep; {target.name} not read")
            elif not target.is_file():
                scan.notes.append(f"{where}: included file {target} does not exist; skipped")
            else:
                try:
                    _scan(target, matches, scan, seen, depth + 1)
                except LockfileError as exc:
                    scan.notes.append(str(exc))
            continue
        if line.startswith("-") or _BARE.match(line):
            continue  # -e, --index-url and other options; a bare URL, archive or folder names no version
        text_req = _LINE_OPTIONS.sub("", line)
        try:
            req = Requirement(text_req)
        except InvalidRequirement as exc:
            scan.notes.append(f"{where}: cannot read {text_req!r} ({str(exc).splitlines()[0]}); skipped")
            continue
        if not matches(req.name):
            continue
        pinned = [s for s in req.specifier if s.operator in ("==", "===") and not s.version.endswith("*")]
        if len(pinned) == 1 and len(req.specifier) == 1 and req.url is None:
            scan.pins.append(Locked(req.name, pinned[0].version, path, number))
        else:
            scan.unpinned.append(f"{path.name}:{number}: {text_req}")
