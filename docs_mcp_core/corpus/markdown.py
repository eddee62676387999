"""markdown-it-py parsing helpers: frontmatter split, top-level blocks, plain text."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from .dialects import CONTAINER_OPEN, build_parser

if TYPE_CHECKING:  # imported when a file is parsed: a build that reuses every file never needs it
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_FM_OPEN = re.compile(r"\A---[ \t]*\n")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SCRIPT = re.compile(r"<(script|style)\b[^>]*>.*?(?:</\1\s*>|\Z)", re.DOTALL | re.IGNORECASE)
# a JSX/Vue component's label or title (`<TabItem label="npm">`, `<Card title="…">`) is text a reader sees
_COMPONENT_LABEL = re.compile(r"""<[A-Z][\w.]*\b[^>]*?\b(?:label|title)=(?:"([^"]*)"|'([^']*)')[^>]*>""")
_TAG = re.compile(r"<[^>]*>")
_WS = re.compile(r"[ \t]+")
# a fence's label: a VitePress code group's `[npm]`, or a `title="src/app.ts"` (Docusaurus, Starlight, MkDocs)
_FENCE_LABEL = re.compile(r"\[([^\]]+)\]|\btitle=(?:\"([^\"]+)\"|'([^']+)')")
_MYST_DIRECTIVE = re.compile(r"^\{([\w-]+)\}\s*(.*)$")
_MYST_CODE = {
    "code",
    "code-block",
    "code-cell",
    "sourcecode",
    "literalinclude",
    "eval-rst",
    "math",
    "mermaid",
    "csv-table",
}
_MYST_OPTION = re.compile(r"^:[\w-]+:.*$", re.MULTILINE)
_MDX: ContextVar[bool] = ContextVar("docs_mcp_mdx", default=False)


@lru_cache(maxsize=2)
def _parser(mdx: bool) -> MarkdownIt:
    return build_parser(mdx=mdx)


# Characters of a heading used for its chunks' heading, breadcrumb and ID: every chunk a section is
# cut into repeats them, so an unbounded heading (a whole file on one `#` line) costs its length
# squared. Real headings, long signatures included, stay well under it.
MAX_HEADING_CHARS = 500


def parser() -> MarkdownIt:
    """CommonMark with GFM tables, strikethrough and the docs dialects (corpus/dialects.py); raw HTML
    allowed (it stays in `content`). Inside `mdx_mode()`, the MDX variant."""
    return _parser(_MDX.get())


@contextmanager
def mdx_mode(on: bool) -> Iterator[None]:
    """Parse as MDX (no indented code) in this block: set while one MDX file is parsed and chunked."""
    token = _MDX.set(on)
    try:
        yield
    finally:
        _MDX.reset(token)


def normalize_newlines(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class SplitDocument:
    frontmatter: str | None  # raw YAML between the fences, or None
    body: str  # the markdown after the frontmatter
    body_line: int  # 0-based line in the file where `body` starts


def split_frontmatter(text: str) -> SplitDocument:
    """Separate a leading `---` YAML block; an unclosed fence is not frontmatter."""
    opened = _FM_OPEN.match(text)
    if not opened:
        return SplitDocument(None, text, 0)
    closed = _FM_CLOSE.search(text, opened.end())
    if not closed:
        return SplitDocument(None, text, 0)
    yaml_text = text[opened.end() : closed.start()]
    rest = text[closed.end() :]
    if rest.startswith("\n"):
        rest = rest[1:]
    consumed = text[: len(text) - len(rest)]
    return SplitDocument(yaml_text, rest, consumed.count("\n"))


_MDX_ESM = re.compile(r"(?:import|export)(?:\s|\{|\*|$)")
# a self-closing component alone on its line, without a label or title: no text (`<IconsList labels={{…}} />`,
# whose JSX expression CommonMark cannot read as a tag)
_BARE_COMPONENT = re.compile(r"^\s*<[A-Z][\w.]*(?:\s(?![^>]*\b(?:label|title)=).*)?/>\s*$")
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")  # MDX fences may be indented any amount (inside components)
_JSX_OPEN = re.compile(r"^(\s*)<(/?)([A-Z][\w.]*)")
_JSX_TEXT_PROP = re.compile(r"""\b(label|title|value)=(?:"[^"]*"|'[^']*')""")
JSX_TAG_LINES = 400  # a JSX tag is looked for over at most this many lines (a data prop can be long)


def _jsx_tag_end(lines: list[str], i: int, start: int) -> tuple[int, int] | None:
    """(line, column after the `>`) that closes the JSX tag opened at lines[i][start:], skipping `{…}`
    expressions and quoted strings, or None when it does not close within JSX_TAG_LINES."""
    depth, quote = 0, ""
    for j in range(i, min(len(lines), i + JSX_TAG_LINES)):
        line = lines[j]
        for k in range(start if j == i else 0, len(line)):
            ch = line[k]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "\"'`" and depth:
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth = max(0, depth - 1)
            elif ch == ">" and not depth:
                return j, k + 1
    return None


def _simplify_jsx(lines: list[str], i: int) -> bool:
    """A JSX tag at the start of line i whose props hold `{…}` expressions or that spans lines (which CommonMark
    cannot read as a tag, and would index as text) rewritten as `<Name label="…">`: its label or title props
    kept (text a reader sees; a tab's value names its language), the rest dropped, the lines it spanned blanked. Whether it rewrote one."""
    m = _JSX_OPEN.match(lines[i])
    if not m:
        return False
    end = _jsx_tag_end(lines, i, m.end())
    if end is None:
        return False
    j, col = end
    tag = "\n".join([lines[i][m.end() :], *lines[i + 1 : j + 1]])[: -(len(lines[j]) - col) or None]
    if j == i and "{" not in tag:
        return False  # a plain tag on one line: markdown-it reads it
    closing, selfclosing = m.group(2), tag.rstrip(">").rstrip().endswith("/")
    props = "".join(" " + p.group(0) for p in _JSX_TEXT_PROP.finditer(tag)) if not closing else ""
    rest = lines[j][col:]
    lines[i] = f"{m.group(1)}<{closing}{m.group(3)}{props}{' /' if selfclosing else ''}>{rest}"
    for k in range(i + 1, j + 1):
        lines[k] = ""
    return True


def blank_mdx_syntax(body: str) -> str:
    """An MDX file's body with its ESM blocks (`import`/`export` at the start of a line, up to the next
    blank line, as MDX reads them) and its `{/* comment */}` lines blanked, outside code fences, and its
    JSX tags with expression props or over several lines made plain tags (_simplify_jsx).

    Lines are blanked, not removed, so line numbers in diagnostics stay the file's. Other JSX tags need no
    work: markdown-it reads a tag alone on its line as an HTML block, whose tags plain text drops.
    """
    lines = body.split("\n")
    fence: str | None = None
    esm = comment = False
    for i, line in enumerate(lines):
        if fence is not None:
            if line.lstrip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        if esm or comment:
            ending = comment and "*/}" in line
            esm = esm and bool(line.strip())
            lines[i] = ""
            comment = comment and not ending
            continue
        opened = _FENCE_OPEN.match(line)
        if opened:
            fence = opened.group(1)
        elif _MDX_ESM.match(line):
            esm, lines[i] = True, ""
        elif line.lstrip().startswith("{/*"):
            comment, lines[i] = "*/}" not in line, ""
        elif _BARE_COMPONENT.match(line):
            lines[i] = ""
        elif _simplify_jsx(lines, i) and _BARE_COMPONENT.match(lines[i]):
            lines[i] = ""
    return "\n".join(lines)


def inline_text(token: Token | None, *, breaks: str = " ") -> str:
    """Plain text of an inline token: text, code spans and image alt text; no HTML, no URLs."""
    if token is None or not token.children:
        return ""
    out: list[str] = []
    for child in token.children:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type == "myst_role":
            out.append(role_text(child.content))
        elif child.type == "image":
            out.append(child.content)
        elif child.type == "softbreak":
            out.append(breaks)
        elif child.type == "hardbreak":
            out.append("\n")
    return "".join(out)


def role_text(content: str) -> str:
    """What a cross-reference role shows: `Title <target>` → Title, `~pkg.mod.func` → func."""
    m = re.match(r"^(.*?)\s*<[^<>]*>$", content, re.DOTALL)
    if m and m.group(1).strip():
        return m.group(1).strip()
    content = content.strip().lstrip("!")
    if content.startswith("~"):
        return content[1:].rsplit(".", 1)[-1]
    return content


def html_to_text(raw: str) -> str:
    raw = _COMPONENT_LABEL.sub(lambda m: " " + (m.group(1) or m.group(2) or "") + "\n", raw)
    text = _TAG.sub(" ", _COMMENT.sub(" ", _SCRIPT.sub(" ", raw)))
    lines = (_WS.sub(" ", line).strip() for line in html.unescape(text).split("\n"))
    return "\n".join(line for line in lines if line)


def tokens_text(tokens: list[Token]) -> str:
    """Plain text of a run of block tokens, one line per inline run or code block."""
    parts: list[str] = []
    skip_title = False
    for tok in tokens:
        if tok.type == "inline":
            text = "" if skip_title else inline_text(tok).strip()
            skip_title = False
        elif tok.type in CONTAINER_OPEN or tok.type == "alert_open":
            text = (tok.meta or {}).get("label") or _alert_label(tok)
            skip_title = tok.type == "alert_open"
        elif tok.type == "fence":
            text = fence_text(tok.info, tok.content)
        elif tok.type == "code_block":
            text = tok.content.rstrip("\n")
        elif tok.type == "html_block":
            text = html_to_text(tok.content)
        else:
            continue
        if text:
            parts.append(text)
    return "\n".join(parts)


def _alert_label(tok: Token) -> str:
    """A GitHub alert's kind (`> [!WARNING]` → Warning); its title is the next inline, which is skipped."""
    kind = (tok.meta or {}).get("kind") or ""
    return str(kind).capitalize() if tok.type == "alert_open" else ""


def fence_text(info: str, content: str) -> str:
    """A fence's text: its code, after its `[label]` or `title="…"` (a code group's tab, a file name) when it has one;
    a MyST directive fence (```{note}) is Markdown, read as such."""
    info = info.strip()
    directive = _MYST_DIRECTIVE.match(info)
    if directive and directive.group(1).lower() not in _MYST_CODE:
        from .dialects import label_for

        body = markdown_text(_MYST_OPTION.sub("", content))
        title = label_for(directive.group(1), directive.group(2))
        return "\n".join(t for t in (title, body) if t)
    code = content.rstrip("\n")
    found = _FENCE_LABEL.search(info)
    label = next((g for g in found.groups() if g), None) if found else None
    return f"{label}\n{code}" if label and code else code


def markdown_text(markdown: str) -> str:
    return tokens_text(parser().parse(markdown))


@dataclass
class Block:
    """One top-level block: its tokens and its source lines [start, end)."""

    tokens: list[Token]
    start: int
    end: int

    @property
    def first(self) -> Token:
        return self.tokens[0]

    @property
    def heading_level(self) -> int:
        tok = self.first
        return int(tok.tag[1]) if tok.type == "heading_open" else 0

    @property
    def heading_text(self) -> str:
        """The heading's plain text on one line, at most MAX_HEADING_CHARS (see there)."""
        return " ".join(inline_text(self.tokens[1]).split())[:MAX_HEADING_CHARS].rstrip() if self.heading_level else ""

    def text(self) -> str:
        return tokens_text(self.tokens)


def top_level_blocks(tokens: list[Token]) -> list[Block]:
    blocks: list[Block] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.nesting == 1:
            j, depth = i, 0
            while True:
                depth += tokens[j].nesting
                if depth == 0:
                    break
                j += 1
            group = tokens[i : j + 1]
            i = j + 1
        else:
            group = [tok]
            i += 1
        if tok.map is None:  # defensive: every top-level token from a real parse has a map
            continue
        blocks.append(Block(group, tok.map[0], tok.map[1]))
    return blocks
