"""File includes, resolved before parsing, as the frameworks' own preprocessors resolve them.

MkDocs snippets (`--8<-- "path"`), FastAPI-style code includes (`{* path ln[a:b] *}`), mdx_include
(`{!path!}`), VitePress (`<!--@include: path-->`, `<<< path#region`) and MyST/Sphinx-style
`{include}`/`{literalinclude}` fences. An included code file becomes a fence carrying its language;
included Markdown is spliced in (and its own includes followed).

Safety, as for the corpus walk: a target is read only if its real path is a regular file inside the
project root (the folder of the framework config, else the docs folder), so a symlink never leads
out; includes nest at most MAX_DEPTH deep and a file including itself (directly or not) is refused.
An include that cannot be resolved is left out (its line blanked) and reported as a warning with its line.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..diagnostics import Diagnostic, warning
from .beneath import LinkOutsideError, read_beneath, realpath_or_none
from .markdown import normalize_newlines

MAX_DEPTH = 8
MAX_BYTES = 2_000_000  # an include larger than this is refused (a generated file, a binary)

_SNIPPET = re.compile(r"""^([ \t]*)-{1,}8<-{1,}[ \t]+(["'])(.+?)\2[ \t]*$""")
_CODE_INCLUDE = re.compile(r"^([ \t]*)\{\*[ \t]*(\S+)(.*?)\*\}[ \t]*$")
_MDX_INCLUDE = re.compile(r"^([ \t]*)\{!\s*([^\[!]+?)\s*(?:\[ln:([0-9,\- ]+)\])?\s*!\}[ \t]*$")
_VP_INCLUDE = re.compile(r"^([ \t]*)<!--\s*@include:\s*([^{\s]+?)(?:\{(\d*),?(\d*)\})?\s*-->[ \t]*$")
_VP_SNIPPET = re.compile(r"^([ \t]*)<<<[ \t]+([^\s#{\[]+)(?:#([\w.-]+))?(?:\{([^}]*)\})?(?:[ \t]+\[([^\]]*)\])?[ \t]*$")
_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_LN = re.compile(r"\bln\[([0-9:, ]*)\]")
_REGION_START = re.compile(r"#region\s+([\w.-]+)|<!--\s*#region\s+([\w.-]+)\s*-->")
_REGION_END = re.compile(r"#endregion\b|<!--\s*#endregion")

EXTENSION_LANGUAGE = {
    ".py": "python",
    ".pyi": "python",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".jsx": "jsx",
    ".ts": "ts",
    ".mts": "ts",
    ".tsx": "tsx",
    ".vue": "vue",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".sh": "bash",
    ".bash": "bash",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
    ".css": "css",
    ".scss": "scss",
    ".html": "html",
    ".sql": "sql",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cs": "csharp",
    ".php": "php",
    ".swift": "swift",
    ".ini": "ini",
    ".cfg": "ini",
    ".txt": "text",
    ".dockerfile": "dockerfile",
}
_MARKDOWN = (".md", ".markdown", ".mdx")


@dataclass(frozen=True)
class IncludeContext:
    """Where a corpus's includes resolve (sent to parser processes, so plain strings)."""

    docs_root: str  # real path of the docs folder
    project_root: str  # real path: no include is read from outside it
    bases: tuple[str, ...] = ()  # folders root-relative include paths are looked up in, in order
    framework: str | None = None  # the detected docs framework (None: includes are a guess, see unresolved)
    rst_suffixes: tuple[str, ...] = (".rst",)  # pages read as reStructuredText (Sphinx source_suffix adds .txt)


@dataclass
class Expanded:
    body: str
    line_map: list[int]  # line of the expanded body -> line of the original body
    included: dict[str, str] = field(default_factory=dict)  # project-relative path -> sha256
    diagnostics: list[Diagnostic] = field(default_factory=list)
    constructs: list[tuple[str, int]] = field(default_factory=list)  # (construct, original line) seen


def language_of(path: str) -> str:
    name = PurePosixPath(path).name.lower()
    if name == "dockerfile":
        return "dockerfile"
    return EXTENSION_LANGUAGE.get(PurePosixPath(name).suffix, PurePosixPath(name).suffix.lstrip("."))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def candidate_paths(ctx: IncludeContext, target: str, here: str, prefer_root: bool) -> list[str]:
    """Where an include target may be, in the order its framework looks (see _Reader.find)."""
    if target.startswith("@/"):
        return [os.path.join(ctx.docs_root, target[2:])]
    if target.startswith("/"):
        return [os.path.join(ctx.project_root, target.lstrip("/"))]
    near = [os.path.join(here, target)]
    far = [os.path.join(base, target) for base in ctx.bases]
    return far + near if prefer_root else near + far


_RST_INCLUDE = re.compile(r"^\s*\.\.\s+(?:literal)?include::\s*(\S.*?)\s*$")
_MYST_FENCE_INCLUDE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})\{(?:literal)?include\}\s*(\S*)")


def include_targets(text: str, rst: bool = False) -> list[tuple[str, bool]]:
    """(target, looked up from the project root first) of every include a page's text names, without
    resolving it: what staging copies besides the pages (sources/project.py)."""
    found: list[tuple[str, bool]] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if rst:
            if m := _RST_INCLUDE.match(line):
                found.append((m.group(1), False))
            continue
        if "8<" in line and (m := _SNIPPET.match(line)):
            spec = m.group(3)
            parts = spec.split(":")
            numeric = len(parts) >= 2 and all(p.isdigit() or p == "" for p in parts[1:]) and any(parts[1:])
            found.append((parts[0] if numeric else spec, True))
        elif "{*" in line and (m := _CODE_INCLUDE.match(line)):
            found.append((m.group(2), True))
        elif "{!" in line and (m := _MDX_INCLUDE.match(line)):
            found.append((m.group(2), True))
        elif "@include" in line and (m := _VP_INCLUDE.match(line)):
            found.append((m.group(2), False))
        elif "<<<" in line and (m := _VP_SNIPPET.match(line)):
            found.append((m.group(2), False))
        elif "include}" in line and (m := _MYST_FENCE_INCLUDE.match(line)):
            target = m.group(1) or next(
                (b.strip() for b in lines[i + 1 : i + 4] if b.strip() and not b.strip().startswith(":")), ""
            )
            found.append((target, False))
    return [(t.strip().strip("\"'"), root) for t, root in found if t.strip().strip("\"'")]


class _Reader:
    def __init__(self, ctx: IncludeContext, relpath: str) -> None:
        self.ctx = ctx
        self.relpath = relpath
        self.out = Expanded("", [])
        self.page_line = 0  # the page's own line being expanded: what nested includes' findings name

    def find(self, target: str, here: str, prefer_root: bool) -> tuple[str | None, str]:
        """(real path, why not) of an include target: relative to the including file's folder or to the
        configured bases (which first depends on the syntax); `@/` and `/` name the docs/project root."""
        target = target.strip().strip("\"'")
        if not target:
            return None, "no path given"
        candidates = candidate_paths(self.ctx, target, here, prefer_root)
        outside = False
        for candidate in candidates:
            real = realpath_or_none(candidate)
            if real is None:  # a link on the way replaced while it was resolved: as if not there
                continue
            if not _inside(real, self.ctx.project_root):
                outside = outside or os.path.exists(real)
                continue
            if os.path.isfile(real):
                return real, ""
        if outside:
            return None, "it is outside the project root, which includes never leave"
        return None, "no such file"

    def read(self, real: str) -> tuple[str | None, str]:
        """The text of a file `find` chose, read beneath the project root: a link swapped in since is
        resolved inside it only (corpus/beneath.py)."""
        rel = os.path.relpath(real, self.ctx.project_root).replace(os.sep, "/")
        try:
            data = read_beneath(self.ctx.project_root, rel)
        except LinkOutsideError:
            return None, "it is outside the project root, which includes never leave"
        except OSError as exc:
            return None, f"cannot read it ({exc.strerror})"
        if len(data) > MAX_BYTES:
            return None, f"it is larger than {MAX_BYTES} bytes"
        self.out.included[rel] = hashlib.sha256(data).hexdigest()
        return normalize_newlines(data.decode("utf-8", errors="replace")), ""

    def unresolved(self, line: int, what: str, target: str, why: str, depth: int = 0) -> list[str] | None:
        """An include that did not resolve is left out (its line is markup, not text): with a framework
        config, a warning; without one, where it would resolve is unknown, so validate's syntax table
        counts it instead of a warning."""
        line = line if depth == 0 else self.page_line
        if self.out.constructs and self.out.constructs[-1] == (what, line):
            self.out.constructs.pop()
        if self.ctx.framework is None:
            self.out.constructs.append((f"{what} (unresolved: no framework config)", line))
            return [""]
        self.warn(line, what, target, why)
        return [""]

    def warn(self, line: int, what: str, target: str, why: str) -> None:
        self.out.diagnostics.append(
            warning(
                self.relpath,
                line,
                f"{what} '{target}' not resolved: {why}; it is left out of the index",
                "include-unresolved",
            )
        )


def _pick_lines(lines: list[str], spans: list[tuple[int, int | None]]) -> list[str]:
    """1-based inclusive spans (end None: to the end of the file)."""
    picked: list[str] = []
    for start, end in spans:
        picked.extend(lines[max(start, 1) - 1 : end])
    return picked


def _ln_spans(spec: str) -> list[tuple[int, int | None]]:
    spans: list[tuple[int, int | None]] = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        a, _, b = part.partition(":") if ":" in part else part.partition("-")
        try:
            start = int(a) if a else 1
            end = int(b) if b else (None if _ else start)
        except ValueError:
            continue
        if start == 0 and end == 0:
            return []  # ln[0]: the whole file
        spans.append((start, end))
    return spans


def _region(lines: list[str], name: str) -> list[str] | None:
    inside, found = False, False
    picked: list[str] = []
    for line in lines:
        start = _REGION_START.search(line)
        if start and name in (start.group(1), start.group(2)):
            inside, found = True, True
            continue
        if inside and _REGION_END.search(line):
            break
        if inside:
            picked.append(line)
    return picked if found else None


def _fenced(lines: list[str], language: str, indent: str, label: str | None = None) -> list[str]:
    longest = max((len(m) for line in lines for m in re.findall(r"`{3,}", line)), default=2)
    ticks = "`" * max(3, longest + 1)
    info = language + (f" [{label}]" if label else "")
    return [indent + ticks + info, *[indent + line if line else line for line in lines], indent + ticks]


def expand_includes(body: str, relpath: str, ctx: IncludeContext | None) -> Expanded:
    """The body with every include the docs' framework would resolve spliced in (see the module docstring)."""
    lines = body.split("\n")
    if ctx is None or not any(
        ("8<" in ln or "{*" in ln or "{!" in ln or "@include" in ln or "<<<" in ln or "include}" in ln) for ln in lines
    ):
        return Expanded(body, list(range(len(lines))))
    reader = _Reader(ctx, relpath)
    page = os.path.join(ctx.docs_root, *relpath.split("/"))
    here = os.path.dirname(page)
    stack = [realpath_or_none(page) or os.path.abspath(page)]
    out_lines: list[str] = []
    line_map: list[int] = []
    for origin, produced in _expand(reader, lines, here, stack, 0):
        out_lines.append(produced)
        line_map.append(origin)
    reader.out.body = "\n".join(out_lines)
    reader.out.line_map = line_map
    return reader.out


def _expand(reader: _Reader, lines: list[str], here: str, stack: list[str], depth: int) -> Iterator[tuple[int, str]]:
    fence: str | None = None
    myst: tuple[str, str, int, list[str]] | None = None  # (kind, indent, line, body lines) of an open {include} fence
    for i, line in enumerate(lines):
        top_line = i  # callers at depth > 0 remap to their include line
        if depth == 0:
            reader.page_line = i + 1
        if myst is not None:
            kind, indent, start, body = myst
            closing = _FENCE.match(line)
            if closing and closing.group(3).strip() == "" and fence and closing.group(2).startswith(fence):
                fence, myst = None, None
                yield from _myst_include(reader, kind, indent, start, body, here, stack, depth)
                continue
            body.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            marker = opened.group(2)
            if fence is None:
                info = opened.group(3).strip()
                opens = next((k for k in ("{include}", "{literalinclude}") if info.startswith(k)), None)
                if opens is not None:
                    fence, myst = marker, (opens, opened.group(1), i, [info[len(opens) :].strip()])
                    continue
                fence = marker
            elif marker.startswith(fence[0]) and len(marker) >= len(fence) and not opened.group(3).strip():
                fence = None
            yield top_line, line
            continue
        produced = _one_line(reader, line, i, here, stack, depth, in_fence=fence is not None)
        if produced is None:
            yield top_line, line
        else:
            for produced_line in produced:
                yield top_line, produced_line
    if myst is not None:  # an unclosed {include} fence: as written
        kind, indent, start, body = myst
        for k, text in enumerate([indent + "```" + kind + " " + body[0], *body[1:]]):
            yield start + k, text


def _myst_include(
    reader: _Reader, kind: str, indent: str, line: int, body: list[str], here: str, stack: list[str], depth: int
) -> Iterator[tuple[int, str]]:
    target = (
        body[0]
        if body and body[0]
        else next((b.strip() for b in body[1:] if b.strip() and not b.strip().startswith(":")), "")
    )
    options = {m.group(1): m.group(2).strip() for b in body[1:] if (m := re.match(r"\s*:([\w-]+):\s*(.*)$", b))}
    reader.out.constructs.append((f"MyST {kind}", line + 1))
    real, why = reader.find(target, here, prefer_root=False)
    text = None
    if real is not None:
        text, why = _guarded(reader, real, stack, depth)
    if text is None or real is None:
        reader.warn(line + 1, f"MyST {kind}", target, why)
        yield line, ""  # left out, like the other includes
        return
    lines = text.split("\n")
    if "lines" in options:
        lines = _pick_lines(lines, _ln_spans(options["lines"].replace("-", ":")) or [(1, None)])
    if kind == "{include}" and real.endswith(_MARKDOWN):
        for _, produced in _expand(reader, lines, os.path.dirname(real), [*stack, real], depth + 1):
            yield line, indent + produced if produced else produced
        return
    for produced in _fenced(lines, options.get("language") or language_of(real), indent):
        yield line, produced


def _guarded(reader: _Reader, real: str, stack: list[str], depth: int) -> tuple[str | None, str]:
    if real in stack:
        return None, "it includes itself (an include loop)"
    if depth + 1 > MAX_DEPTH:
        return None, f"includes nest more than {MAX_DEPTH} deep"
    return reader.read(real)


def _one_line(
    reader: _Reader, line: str, i: int, here: str, stack: list[str], depth: int, *, in_fence: bool
) -> list[str] | None:
    """What an include line becomes, or None when the line is no include."""
    if "8<" in line and (m := _SNIPPET.match(line)):
        indent, spec = m.group(1), m.group(3)
        target = spec
        ranges: list[tuple[int, int | None]] = [(1, None)]
        parts = spec.split(":")
        if len(parts) >= 2 and all(p.isdigit() or p == "" for p in parts[1:]) and any(parts[1:]):
            target = parts[0]
            start = int(parts[1]) if parts[1] else 1
            end = int(parts[2]) if len(parts) > 2 and parts[2] else None
            ranges = [(start, end)]
        return _splice(
            reader,
            "MkDocs snippet --8<--",
            target,
            indent,
            i,
            here,
            stack,
            depth,
            ranges,
            raw=True,
            prefer_root=True,
            in_fence=in_fence,
        )
    if "{*" in line and (m := _CODE_INCLUDE.match(line)):
        ln = _LN.search(m.group(3))
        spans = _ln_spans(ln.group(1)) if ln else []
        return _splice(
            reader,
            "code include {* *}",
            m.group(2),
            m.group(1),
            i,
            here,
            stack,
            depth,
            spans or [(1, None)],
            raw=False,
            prefer_root=True,
            in_fence=in_fence,
        )
    if "{!" in line and (m := _MDX_INCLUDE.match(line)):
        spans = _ln_spans(m.group(3).replace("-", ":")) if m.group(3) else []
        return _splice(
            reader,
            "mdx_include {! !}",
            m.group(2),
            m.group(1),
            i,
            here,
            stack,
            depth,
            spans or [(1, None)],
            raw=True,
            prefer_root=True,
            in_fence=in_fence,
        )
    if "@include" in line and (m := _VP_INCLUDE.match(line)):
        start = int(m.group(3)) if m.group(3) else 1
        end = int(m.group(4)) if m.group(4) else None
        return _splice(
            reader,
            "VitePress <!--@include:-->",
            m.group(2),
            m.group(1),
            i,
            here,
            stack,
            depth,
            [(start, end)],
            raw=True,
            prefer_root=False,
            in_fence=in_fence,
        )
    if "<<<" in line and not in_fence and (m := _VP_SNIPPET.match(line)):
        indent, target, region, braces, label = m.groups()
        language = None
        if braces:
            words = [w for w in braces.split() if not re.fullmatch(r"[\d,\- ]+", w)]
            language = words[-1] if words else None
        reader.out.constructs.append(("VitePress <<< snippet", i + 1))
        real, why = reader.find(target, here, prefer_root=False)
        text = None
        if real is not None:
            text, why = _guarded(reader, real, stack, depth)
        if text is None or real is None:
            return reader.unresolved(i + 1, "VitePress <<< snippet", target, why, depth)
        lines = text.split("\n")
        if region:
            picked = _region(lines, region)
            if picked is None:
                reader.warn(i + 1, "VitePress <<< snippet", f"{target}#{region}", "the file has no such #region")
                return [""]
            lines = picked
        return _fenced(_trim(lines), language or language_of(real), indent, label)
    return None


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _splice(
    reader: _Reader,
    what: str,
    target: str,
    indent: str,
    i: int,
    here: str,
    stack: list[str],
    depth: int,
    spans: list[tuple[int, int | None]],
    *,
    raw: bool,
    prefer_root: bool,
    in_fence: bool,
) -> list[str] | None:
    reader.out.constructs.append((what, i + 1 if depth == 0 else reader.page_line))
    real, why = reader.find(target, here, prefer_root=prefer_root)
    text = None
    if real is not None:
        text, why = _guarded(reader, real, stack, depth)
    if text is None or real is None:
        return reader.unresolved(i + 1, what, target, why, depth)
    lines = _pick_lines(text.split("\n"), spans)
    if real.endswith(_MARKDOWN) and not in_fence:  # Markdown is spliced in, its own includes followed
        nested = [p for _, p in _expand(reader, lines, os.path.dirname(real), [*stack, real], depth + 1)]
        return [indent + p if p else p for p in _trim(nested)]
    if raw and in_fence:  # inside a fence the page already chose how to show it
        return [indent + p if p else p for p in _trim(lines)]
    return _fenced(_trim(lines), language_of(real), indent)
