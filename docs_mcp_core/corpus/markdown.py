"""markdown-it-py parsing helpers: frontmatter split, top-level blocks, plain text."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a file is parsed: a build that reuses every file never needs it
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_FM_OPEN = re.compile(r"\A---[ \t]*\n")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_WS = re.compile(r"[ \t]+")


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """CommonMark with GFM tables and strikethrough; raw HTML allowed (it stays in `content`)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


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
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def blank_mdx_syntax(body: str) -> str:
    """An MDX file's body with its ESM blocks (`import`/`export` at the start of a line, up to the next
    blank line, as MDX reads them) and its `{/* comment */}` lines blanked, outside code fences.

    Lines are blanked, not removed, so line numbers in diagnostics stay the file's. JSX tags need no
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
    return "\n".join(lines)


def inline_text(token: Token | None, *, breaks: str = " ") -> str:
    """Plain text of an inline token: text, code spans and image alt text; no HTML, no URLs."""
    if token is None or not token.children:
        return ""
    out: list[str] = []
    for child in token.children:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type == "image":
            out.append(child.content)
        elif child.type == "softbreak":
            out.append(breaks)
        elif child.type == "hardbreak":
            out.append("\n")
    return "".join(out)


def html_to_text(raw: str) -> str:
    text = _TAG.sub(" ", _COMMENT.sub(" ", raw))
    lines = (_WS.sub(" ", line).strip() for line in html.unescape(text).split("\n"))
    return "\n".join(line for line in lines if line)


def tokens_text(tokens: list[Token]) -> str:
    """Plain text of a run of block tokens, one line per inline run or code block."""
    parts: list[str] = []
    for tok in tokens:
        if tok.type == "inline":
            text = inline_text(tok).strip()
        elif tok.type in ("fence", "code_block"):
            text = tok.content.rstrip("\n")
        elif tok.type == "html_block":
            text = html_to_text(tok.content)
        else:
            continue
        if text:
            parts.append(text)
    return "\n".join(parts)


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
        return " ".join(inline_text(self.tokens[1]).split()) if self.heading_level else ""

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
