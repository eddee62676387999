"""Glob patterns for manifest overrides: `*`, `?`, `[...]`, `{a,b}` and `**` across folders."""

from __future__ import annotations

import re
from functools import lru_cache


class GlobError(ValueError):
    pass


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    if not pattern or pattern.startswith("/"):
        raise GlobError("pattern must be a non-empty path relative to the manifest's folder")
    return re.compile(_translate(pattern.removeprefix("./")) + r"\Z")


def check_globs(patterns: list[str], label: str = "") -> list[str]:
    """A pydantic validator's body: every pattern compiles, else a ValueError naming it."""
    for pattern in patterns:
        try:
            compile_glob(pattern)
        except GlobError as exc:
            raise ValueError(f"{label}{pattern!r}: {exc}") from None
    return patterns


def glob_match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).match(path) is not None


def _translate(pat: str) -> str:
    out: list[str] = []
    i, n, depth = 0, len(pat), 0
    while i < n:
        c = pat[i]
        if pat.startswith("**/", i):
            out.append(r"(?:[^/]*/)*")
            i += 3
        elif pat.startswith("**", i):
            out.append(r".*")
            i += 2
        elif c == "*":
            out.append(r"[^/]*")
            i += 1
        elif c == "?":
            out.append(r"[^/]")
            i += 1
        elif c == "[":
            end = pat.find("]", i + 2 if pat[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                raise GlobError(f"unclosed '[' in pattern {pat!r}")
            body = pat[i + 1 : end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "{":
            out.append("(?:")
            depth += 1
            i += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
            i += 1
        elif c == "," and depth:
            out.append("|")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    if depth:
        raise GlobError(f"unclosed '{{' in pattern {pat!r}")
    return "".join(out)
