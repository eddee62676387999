"""In-file directives: YAML frontmatter and `<!-- mcp_…: {json} -->` comments."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..diagnostics import Diagnostic, error, warning
from .manifest import TOO_DEEP, Strategy, check_metadata_key, check_metadata_value, format_loc

if TYPE_CHECKING:
    from collections.abc import Iterator

    from markdown_it.token import Token

FRONTMATTER_KEYS = ("mcp_chunking_hint", "metadata", "title", "description")
# Written by website staging (sources/web/stage.py): the page URL and its heading anchors, cited in search hits.
SOURCE_KEYS = ("source_url", "source_anchors", "site_name")
# A docs framework's own page keys docs-mcp reads: where the page is published, and whether it is.
PAGE_KEYS = ("slug", "id", "draft", "unlisted")
DIRECTIVES = ("mcp_chunking_hint", "mcp_metadata")
_DIRECTIVE = re.compile(r"<!--\s*(mcp_[A-Za-z0-9_]*)\s*:?(.*?)-->", re.DOTALL)
_MARKER = re.compile(r"<!--\s*(Start|End)\s+(.+?)\s*-->")


@dataclass
class FileHints:
    strategy: Strategy | None = None
    strategy_source: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    title: str | None = None
    source_url: str | None = None  # the web page this file was made from (cited in search hits)
    source_anchors: list[tuple[str, str]] = field(default_factory=list)  # (heading key, HTML id) in page order
    page: dict[str, Any] = field(default_factory=dict)  # the framework's PAGE_KEYS, as written
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _strategy(raw: Any, path: str, line: int, what: str, hints: FileHints) -> Strategy | None:
    if not isinstance(raw, dict):
        hints.diagnostics.append(
            error(path, line, f'{what} must be an object like {{"chunk_by": "h2"}}', "hint-invalid")
        )
        return None
    try:
        return Strategy.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            loc = format_loc(tuple(err["loc"]))
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown field; allowed: chunk_by, max_chunk_size, min_chunk_size"
            hints.diagnostics.append(error(path, line, f"{what}{'.' + loc if loc else ''}: {msg}", "hint-invalid"))
        return None


def _metadata(
    raw: Any, path: str, line: int, what: str, hints: FileHints, key_lines: dict[str, int] | None = None
) -> dict[str, str]:
    if not isinstance(raw, dict):
        hints.diagnostics.append(
            error(path, line, f"{what} must be a mapping of key: value strings", "metadata-invalid")
        )
        return {}
    out: dict[str, str] = {}
    parent_line = line
    for key, value in raw.items():
        line = (key_lines or {}).get(f"metadata.{key}", parent_line)
        if not isinstance(value, str):
            hints.diagnostics.append(
                error(
                    path,
                    line,
                    f"{what}.{key} must be a string (got {type(value).__name__}); quote it",
                    "metadata-invalid",
                )
            )
            continue
        try:
            out[check_metadata_key(str(key))] = check_metadata_value(str(key), value)
        except ValueError as exc:
            hints.diagnostics.append(error(path, line, f"{what}: {exc}", "metadata-invalid"))
    return out


def read_frontmatter(yaml_text: str, path: str, hints: FileHints, framework: str | None = None) -> None:
    """Frontmatter wins over every other rule; unknown keys are reported, not fatal (under a docs
    framework, only unknown `mcp…` keys: the others are the framework's)."""
    import yaml  # only files that are parsed have their frontmatter read

    try:
        data = yaml.safe_load(yaml_text)
    except RecursionError:
        hints.diagnostics.append(error(path, 2, f"frontmatter is {TOO_DEEP}", "frontmatter-invalid"))
        return
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        hints.diagnostics.append(error(path, line, f"invalid YAML frontmatter: {problem}", "frontmatter-invalid"))
        return
    if data is None:
        return
    if not isinstance(data, dict):
        hints.diagnostics.append(
            error(path, 2, "frontmatter must be a YAML mapping of keys to values", "frontmatter-invalid")
        )
        return
    key_lines = _yaml_key_lines(yaml_text)
    for key, value in data.items():
        line = key_lines.get(str(key), 2)
        if key == "mcp_chunking_hint":
            line = min((key_lines[k] for k in key_lines if k.startswith("mcp_chunking_hint.")), default=line)
            strategy = _strategy(value, path, line, "frontmatter mcp_chunking_hint", hints)
            if strategy:
                hints.strategy, hints.strategy_source = strategy, f"{path} frontmatter"
        elif key == "metadata":
            hints.metadata.update(_metadata(value, path, line, "frontmatter metadata", hints, key_lines))
        elif key == "title":
            if isinstance(value, str) and value.strip():
                hints.title = value.strip()
            else:
                hints.diagnostics.append(
                    error(path, line, "frontmatter title must be a non-empty string", "frontmatter-invalid")
                )
        elif key == "source_url":
            if isinstance(value, str) and value.startswith(("http://", "https://")) and value == value.strip():
                hints.source_url = value
            else:
                hints.diagnostics.append(
                    error(path, line, "frontmatter source_url must be an http(s) URL", "frontmatter-invalid")
                )
        elif key == "source_anchors":
            pairs = value if isinstance(value, list) else None
            if pairs is None or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs
            ):
                hints.diagnostics.append(
                    error(
                        path,
                        line,
                        "frontmatter source_anchors must be a list of [heading, anchor] string pairs",
                        "frontmatter-invalid",
                    )
                )
            else:
                hints.source_anchors = [(p[0], p[1]) for p in pairs]
        elif key == "site_name":
            continue  # read by sources/web/stage.py corpus_name, for the corpus description
        elif framework is not None and key in PAGE_KEYS:
            hints.page[str(key)] = value
        elif key == "description":
            if not isinstance(value, str):
                hints.diagnostics.append(
                    error(path, line, "frontmatter description must be a string", "frontmatter-invalid")
                )
        elif framework is None or str(key).startswith("mcp"):
            hints.diagnostics.append(
                warning(
                    path,
                    line,
                    f"unknown frontmatter key '{key}' is ignored; docs-mcp reads {', '.join(FRONTMATTER_KEYS)}"
                    " (put search facets under 'metadata:')",
                    "unknown-frontmatter-key",
                )
            )


def _yaml_key_lines(yaml_text: str) -> dict[str, int]:
    """File lines of top-level keys (`key`) and of keys one level below them (`key.child`)."""
    lines: dict[str, int] = {}
    top = ""
    for i, line in enumerate(yaml_text.split("\n")):
        m = re.match(r"^(\s*)([A-Za-z0-9_\-]+)\s*:", line)
        if not m:
            continue
        if not m.group(1):
            top = m.group(2)
            lines.setdefault(top, i + 2)
        elif top:
            lines.setdefault(f"{top}.{m.group(2)}", i + 2)
    return lines


def _walk(tokens: list[Token], line: int = 0) -> Iterator[tuple[Token, int, bool]]:
    """Yield (token, nearest source line, is_top_level_block) for every HTML token."""
    for tok in tokens:
        here = tok.map[0] if tok.map else line
        if tok.type == "html_block":
            yield tok, here, tok.level == 0
        elif tok.type == "inline" and tok.children:
            for child in tok.children:
                if child.type == "html_inline":
                    yield child, here, False
        if tok.children and tok.type != "inline":
            yield from _walk(tok.children, here)


def read_directives(
    tokens: list[Token],
    path: str,
    line_offset: int,
    hints: FileHints,
    had_frontmatter_hint: bool,
    line_map: list[int] | None = None,
) -> None:
    """Inline hints apply to the whole file; they must stand alone at the top level.

    `line_map` maps body lines after includes were spliced in back to the file's own lines."""
    hint_lines: list[int] = []
    markers: list[tuple[str, str, int]] = []
    for tok, line0, top_level in _walk(tokens):
        if line_map is not None and line0 < len(line_map):
            line0 = line_map[line0]
        line = line0 + line_offset + 1
        for kind, label in _MARKER.findall(tok.content):
            markers.append((kind, label, line))
        for m in _DIRECTIVE.finditer(tok.content):
            name, payload = m.group(1), m.group(2).strip()
            if name not in DIRECTIVES:
                hints.diagnostics.append(
                    error(
                        path,
                        line,
                        f"orphaned metadata comment '{name}': not a docs-mcp directive "
                        f"(known: {', '.join(DIRECTIVES)}); fix the name or remove the comment",
                        "directive-unknown",
                    )
                )
                continue
            if not top_level:
                hints.diagnostics.append(
                    error(
                        path,
                        line,
                        f"dangling {name} comment: it must stand on its own line at the top level "
                        "of the document, not inside a paragraph, list or quote",
                        "directive-misplaced",
                    )
                )
                continue
            try:
                value = json.loads(payload)
            except json.JSONDecodeError as exc:
                hints.diagnostics.append(
                    error(
                        path,
                        line,
                        f"malformed {name}: expected a JSON object after the colon ({exc.msg})",
                        "hint-invalid",
                    )
                )
                continue
            except RecursionError:
                hints.diagnostics.append(error(path, line, f"{name} is {TOO_DEEP}", "hint-invalid"))
                continue
            if name == "mcp_metadata":
                for key, val in _metadata(value, path, line, "mcp_metadata", hints).items():
                    hints.metadata.setdefault(key, val)  # frontmatter metadata wins
                continue
            hint_lines.append(line)
            if len(hint_lines) > 1:
                hints.diagnostics.append(
                    error(
                        path,
                        line,
                        f"second mcp_chunking_hint in this file (first on line {hint_lines[0]}); keep one",
                        "hint-duplicate",
                    )
                )
                continue
            strategy = _strategy(value, path, line, "mcp_chunking_hint", hints)
            if strategy is None:
                continue
            if had_frontmatter_hint:
                hints.diagnostics.append(
                    warning(
                        path,
                        line,
                        "this mcp_chunking_hint is ignored: the frontmatter mcp_chunking_hint wins",
                        "hint-ignored",
                    )
                )
            else:
                hints.strategy, hints.strategy_source = strategy, f"{path}:{line} inline hint"
    _check_markers(markers, path, hints)


def _check_markers(markers: list[tuple[str, str, int]], path: str, hints: FileHints) -> None:
    """`<!-- Start X -->` / `<!-- End X -->` section markers must pair up."""
    open_: dict[str, int] = {}
    for kind, label, line in markers:
        if kind == "Start":
            if label in open_:
                hints.diagnostics.append(
                    warning(
                        path,
                        open_[label],
                        f"orphaned HTML metadata comment 'Start {label}': no matching 'End {label}'",
                        "marker-orphaned",
                    )
                )
            open_[label] = line
        elif label in open_:
            del open_[label]
        else:
            hints.diagnostics.append(
                warning(
                    path,
                    line,
                    f"orphaned HTML metadata comment 'End {label}': no matching 'Start {label}' before it",
                    "marker-orphaned",
                )
            )
    for label, line in open_.items():
        hints.diagnostics.append(
            warning(
                path,
                line,
                f"orphaned HTML metadata comment 'Start {label}': no matching 'End {label}'",
                "marker-orphaned",
            )
        )
