"""Search fields derived from a chunk at index time: identifier sub-words, code languages, a content digest,
the share of its text that is a list of links (navigation) or table rows (tables), whether it is code with no
words (bare code), and the sentence it opens with (its lead).

They are columns of the chunks table (see indexing/table.py), not chunk fields: chunks.json and the
embedding input stay as they are, and an index written before these columns existed still serves.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

# Identifiers with an inner case change: linksCreate, CreateLinkRequestBody, HTTPClient, WithMaxRetries.
# Digits stay attached (v2, sha256, hex strings are not split); an acronym plural (SDKs, IDs) is one word.
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL_PART = re.compile(r"[A-Z]+s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z][A-Z0-9]*")
_FENCE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})[ \t]*\{?[ \t]*\.?([A-Za-z0-9_+#.-]+)", re.MULTILINE)
_SPACE = re.compile(r"\s+")
# Navigation: a list item whose text starts with a link, possibly inside emphasis or after a checkbox.
_ITEM = re.compile(r"^( *)(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)(.*)$")
_LINK_LED = re.compile(
    r"^(?:[*_`]{1,3})?(?:\[[ xX]\][ \t]+)?(?:\[[^\]\n]+\](?:\([^)\n]*\)|\[[^\]\n]*\])|<https?://[^>\s]+>)"
)
_LINK = re.compile(r"!?\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])")
_AUTOLINK = re.compile(r"<https?://[^>\s]+>")
_MARKER = re.compile(r"^[ \t>]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_FENCE_LINE = re.compile(r"^[ \t>]*(`{3,}|~{3,})")
_OPEN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")  # a fence outside block quotes (table_share)
_VISIBLE_JUNK = re.compile(r"[\s*_`#>|]+")
# Any line that could open a link-led item; a chunk with none has no navigation to count (most chunks).
_MAYBE_LINK_ITEM = re.compile(
    r"^ *(?:[-*+]|\d{1,9}[.)])[ \t]+(?:[*_`]{1,3})?(?:\[[ xX]\][ \t]+)?(?:\[|<https?://)", re.MULTILINE
)
DESCRIBED = 80  # characters after an item's link beyond which the item describes rather than points
# Digest: ATX heading lines, their text without the markup of code spans, bold and links (as content_text has it).
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_INLINE_MARKUP = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)|[`*]+")
DIGEST_BODY = 50  # characters of text besides headings from which headings no longer tell duplicates apart
BARE_PROSE = 20  # characters of words (outside code, headings and HTML comments) under which a chunk of code has none
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
LEAD_CHARS = 240  # a lead sentence longer than this is cut: what follows is rarely what the section is about
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_NOT_PROSE = re.compile(r"^[ \t]*(?:\||[-*+][ \t]|\d{1,9}[.)][ \t]|<|:::|!!!|\.\. )")

# Fence info strings → one name per language, so `language` filters match any spelling.
LANGUAGE_ALIASES = {
    "py": "python",
    "python3": "python",
    "py3": "python",
    "pycon": "python",
    "ts": "typescript",
    "tsx": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "node": "javascript",
    "golang": "go",
    "rs": "rust",
    "rb": "ruby",
    "kt": "kotlin",
    "kts": "kotlin",
    "cs": "csharp",
    "c#": "csharp",
    "dotnet": "csharp",
    "fs": "fsharp",
    "c++": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "h": "c",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "console": "shell",
    "shell-session": "shell",
    "shellsession": "shell",
    "terminal": "shell",
    "ps1": "powershell",
    "pwsh": "powershell",
    "yml": "yaml",
    "jsonc": "json",
    "json5": "json",
    "md": "markdown",
    "htm": "html",
    "proto": "protobuf",
}


def camel_parts(word: str) -> list[str]:
    """Sub-words of one camelCase/PascalCase identifier, or [] when it has no inner boundary."""
    parts = _CAMEL_PART.findall(word)
    if len(parts) < 2:
        return []
    parts = [p for p in parts if len(p) > 1]
    return parts if len(parts) > 1 else []


def subwords(text: str) -> str:
    """The sub-words of every camel/Pascal-case identifier in the text, space separated.

    snake_case, dotted and kebab names need nothing: the FTS tokenizer already splits on
    punctuation. Only the split parts are kept, so this field scores "create link" against
    `linksCreate` without diluting the plain-text field.
    """
    out: list[str] = []
    for word in _IDENT.findall(text):
        out.extend(camel_parts(word))
    return " ".join(out)


def normalize_language(name: str) -> str:
    name = name.strip().lower()
    return LANGUAGE_ALIASES.get(name, name)


def code_languages(markdown: str) -> list[str]:
    """Normalized languages of the fenced code blocks in a chunk's markdown, sorted, no duplicates."""
    return sorted({normalize_language(m) for m in _FENCE.findall(markdown)} - {"", "text", "txt", "plain", "plaintext"})


def content_digest(heading: str, markdown: str, text: str) -> str:
    """Equal for chunks that say the same thing, whitespace and case aside: duplicated pages collapse on it.

    Headings do not count once the rest of the text is at least `DIGEST_BODY` characters long: a
    README's usage section and the USAGE.md it was generated from, or one description under the
    names of several generated types, are one text to a reader. A shorter text ("Coming soon.")
    says little without its heading, so there the heading and text must both match.
    """
    headings = {_normal(heading)} | {
        _normal(_INLINE_MARKUP.sub(r"\1", m.group(1))) for m in _HEADING_LINE.finditer(markdown)
    }
    body = " ".join(line for line in map(_normal, text.split("\n")) if line and line not in headings)
    kept = body if len(body) >= DIGEST_BODY else _normal(f"{heading}\n{text}")
    return hashlib.sha256(kept.encode("utf-8")).hexdigest()[:32]


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def bare_code(markdown: str) -> bool:
    """Whether a chunk is fenced code and next to nothing else: under `BARE_PROSE` characters outside
    its code blocks, headings and HTML comments.

    Such a chunk says in no words what its code is for, so it matches a question only through the
    identifiers and placeholder values in the code (`token: "DUB_API_KEY"`). Search ranks it lower
    when its heading says no more (see search/engine.py, `generic_headings`).
    """
    if "```" not in markdown and "~~~" not in markdown:
        return False
    code = False
    prose = 0
    for line, place in _fenced(_HTML_COMMENT.sub("", markdown)):
        if place == "code":
            code = code or bool(line.strip())
        elif place == "text" and not _HEADING_LINE.match(line):
            prose += len(line.strip())
            if prose >= BARE_PROSE:
                return False
    return code


def lead_sentence(markdown: str) -> str:
    """The first sentence of the paragraph a chunk opens with, after its headings, without inline markup;
    "" when it opens with a table, a list, code or a component instead.

    A section says first what it is about ("Wait longer after each failed attempt …"); a table or a
    list that opens a chunk is about all its rows, so none of them is its subject. Search counts
    the query's words found here and in the heading (search/fusion.py, `in_passing`).
    """
    lines: list[str] = []
    for line, place in _fenced(_HTML_COMMENT.sub("", markdown)):
        text = line.strip()
        if place != "text" or (lines and (not text or _HEADING_LINE.match(line))):
            break
        if not text or _HEADING_LINE.match(line):
            continue
        if not lines and _NOT_PROSE.match(line):
            return ""
        lines.append(text)
        if _SENTENCE_END.search(text):
            break
    lead = _SPACE.sub(" ", _INLINE_MARKUP.sub(r"\1", " ".join(lines))).strip()
    end = _SENTENCE_END.search(lead)
    return (lead[: end.start()] if end else lead)[:LEAD_CHARS]


def _fenced(markdown: str) -> Iterator[tuple[str, str]]:
    """Each line of the Markdown with its place: "open" (it opens a fenced code block), "code" (inside
    one), "close" (it closes one) or "text"."""
    fence: str | None = None
    for line in markdown.split("\n"):
        marker = _FENCE_LINE.match(line)
        if fence is None:
            if marker:
                fence = marker.group(1)
            yield line, "open" if marker else "text"
        elif marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
            fence = None
            yield line, "close"
        else:
            yield line, "code"


def _visible(line: str) -> int:
    """Characters a reader sees on a Markdown line: link text without its URL, no markup or spaces."""
    line = _AUTOLINK.sub("", _LINK.sub(r"\1", _MARKER.sub("", line)))
    return len(_VISIBLE_JUNK.sub("", line))


def navigation_share(markdown: str) -> float:
    """The share of a chunk's visible text that sits in list items led by a link (0 to 1, 3 decimals).

    Index pages, tables of contents, "see also" sections and lists of operations or models are
    such lists: they name every topic they link to, so they match many queries, yet the answer
    is on the page they link to. An item counts whole, with its continuation lines and nested
    items, when the text after its link is a short label (at most `DESCRIBED` characters); an
    item that goes on to describe its subject at length (a glossary, a list of error classes)
    is content, and only its link text counts. Code blocks count as ordinary text.
    """
    if ("[" not in markdown and "<http" not in markdown) or not _MAYBE_LINK_ITEM.search(markdown):
        return 0.0
    total = nav = 0
    item_indent: int | None = None  # indent of the link-led item whose lines we are in
    item_nav = False  # whether that item's other lines count as navigation
    for line, place in _fenced(markdown):
        if place in ("code", "close"):
            total += _visible(line)
            continue
        if place == "open":
            item_indent = None
            continue
        size = _visible(line)
        total += size
        if not line.strip():
            continue
        item = _ITEM.match(line)
        indent = len(line) - len(line.lstrip(" "))
        nested = item_indent is not None and indent > item_indent
        lead = _LINK_LED.match(item.group(2)) if item else None
        if lead:  # a link-led item: whole when its label is short, else only its link text
            link = _visible(lead.group(0))
            short = size - link <= DESCRIBED
            nav += size if short else link
            if not nested:
                item_indent, item_nav = indent, short
        elif nested:
            nav += size if item_nav else 0
        else:  # a plain item or paragraph at the list's level or outside it: the page's own text
            item_indent = None
    return round(nav / total, 3) if total else 0.0


def table_share(markdown: str) -> float:
    """The share of a chunk's non-blank Markdown characters, outside code blocks, in table rows: what the
    embedding input gives no passages above TABLE_SHARE, and what search/fusion.py weighs a passing mention by."""
    total = in_tables = 0
    fence: str | None = None
    for line in markdown.split("\n"):
        opening = _OPEN_FENCE.match(line)
        if opening and (fence is None or line.strip().startswith(fence)):
            fence = opening.group(1) if fence is None else None
            continue
        stripped = line.strip()
        if fence is not None or not stripped:
            continue
        total += len(stripped)
        in_tables += len(stripped) if stripped.startswith("|") else 0
    return in_tables / total if total else 0.0
