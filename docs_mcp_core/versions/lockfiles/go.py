"""go.mod: the `require` lines (single or in a block), with a `replace` of the module by a version of itself."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..locked import Locked
from .formats import read_text

_COMMENT = re.compile(r"//.*$")
_VERSION = re.compile(r"^v\d+\.\d+\.\d+\S*$")


def read_go_mod(path: Path, matches: Callable[[str], bool], notes: list[str]) -> list[Locked]:
    """A line that cannot be read is a note; the other lines still count."""
    required: list[Locked] = []
    replaced: dict[str, Locked] = {}
    block: str | None = None
    for number, raw in enumerate(read_text(path).splitlines(), start=1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        if block is not None:
            if line == ")":
                block = None
                continue
            directive, rest = block, line
        else:
            directive, _, rest = line.partition(" ")
            rest = rest.strip()
            if rest == "(":
                block = directive
                continue
        if directive == "require":
            parts = rest.split()
            if len(parts) != 2 or not _VERSION.match(parts[1]):
                notes.append(f"{path}:{number}: cannot read the require line {raw.strip()!r}; skipped")
                continue
            if matches(parts[0].strip('"')):
                required.append(Locked(parts[0].strip('"'), parts[1], path, number))
        elif directive == "replace":
            old, arrow, new = rest.partition("=>")
            old_parts, new_parts = old.split(), new.split()
            if arrow and old_parts and len(new_parts) == 2 and new_parts[0] == old_parts[0] and matches(old_parts[0]):
                replaced[old_parts[0]] = Locked(old_parts[0], new_parts[1], path, number)
    return [replaced.get(lk.name, lk) for lk in required]
