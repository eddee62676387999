"""One chunk of Markdown taken apart by who sees what: the reader's prose, code, and what only a machine reads.

A light lexer rather than a full parse: it runs on every chunk of every build, and it only
has to find code (fenced blocks, code spans), HTML comments, HTML elements and their
attributes, images, links and link definitions. `prose` is the chunk with everything a
reader does not see as text masked out, character for character (`\\0` where a construct
joins the words around it, a space where it separates them), and its fenced code blocks
cut out (`to_chunk` maps a position back); segments carry their offset in the chunk.

Code is quoted material: a code block or code span is shown to the reader as written, so
rules about instructions do not read it (a page about prompt injection can quote one), but
it is still searched for invisible characters. HTML inside code is text, not markup.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import NamedTuple

_TAG_SOURCE = r"<(/?)([A-Za-z][A-Za-z0-9:-]*)((?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*)\s*(/?)>"
_TAG = re.compile(_TAG_SOURCE)
# Where a construct can start. Each alternative begins with a plain character (not a group), which
# lets the regex engine skip plain text at C speed: this runs on every chunk of every build.
# A code span in one backtick on one line, the commonest construct, is read whole by the first alternative
# (`_ticks` reads it the same way, one call more).
_TOKEN = re.compile(
    r"`(?P<span>[^`\n]+)`(?!`)|`(?P<ticks>`*)|~~~(?P<tildes>~*)|!(?P<image>\[)|\[(?P<bracket>)"
    r"|<(?:(?P<comment>!--)|(?P<autolink>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>)"
    r"|(?P<tag>(?P<close>/?)(?P<name>[A-Za-z][A-Za-z0-9:-]*)"
    r"(?P<attrs>(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*)\s*(?P<self>/?)>))"
)  # a tag's groups as in _TAG
_ANY_MARKUP = re.compile(r"[`~<\[]")

_ATTR = re.compile(r"([A-Za-z_:][A-Za-z0-9_.:-]*)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+)))?")
_TITLE = r"(?:\s+(\"[^\"]*\"|'[^']*'|\([^)]*\)))?"
_BRACKETED = r"\[([^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*)\]"  # one level of nested brackets
_DEST = r"(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
_IMAGE = re.compile(r"!" + _BRACKETED + r"\(\s*" + _DEST + _TITLE + r"\s*\)")
_IMAGE_REF = re.compile(r"!" + _BRACKETED + r"\[[^\[\]\n]*\]")
_LINK = re.compile(_BRACKETED + r"\(\s*" + _DEST + _TITLE + r"\s*\)")
_LINK_DEF = re.compile(
    r"\[([^\]\n]+)\]:[ \t]*(<[^>\n]*>|\S+)(?:[ \t]+(\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$", re.MULTILINE
)  # at the start of a line (checked where it matches)
_NUMBERED = re.compile(r"\n[ \t]*\d{1,9}[.)](?=[ \t])")  # bullets and `>` are punctuation, which folding drops
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

# Elements that start a new line when rendered: their tags separate words; other tags join them.
_BLOCK_TAGS = frozenset(
    "address article aside blockquote br dd details dialog div dl dt fieldset figcaption figure footer form h1 h2 "
    "h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul".split()
)
_VOID_TAGS = frozenset("area base br col embed hr img input link meta source track wbr".split())
_UNRENDERED = frozenset({"script", "style", "template"})  # their content is never drawn
_HIDING_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|(?<![-\w])font-size\s*:\s*0(?:\.0+)?(?:[a-z%]+)?\s*(?:;|!|$)"
    r"|(?<![-\w])opacity\s*:\s*0(?:\.0+)?\s*(?:;|!|$)|(?<![-\w])color\s*:\s*transparent"
    r"|clip(?:-path)?\s*:\s*(?:rect\(\s*0|inset\(\s*(?:50|100)%)"
    r"|(?:left|top|text-indent)\s*:\s*-\d{3,}",
    re.IGNORECASE,
)


# What the sanitizer takes out of a text: (start, end, block), block when it renders as a block of its own
# (a comment, a hidden <div>): alone on its lines it leaves a blank line, so paragraphs stay apart.
Removed = list[tuple[int, int, bool]]


class Segment(NamedTuple):  # a tuple: cheap to make, and a chunk makes several
    start: int  # offset in the chunk
    text: str
    kind: str = ""  # what carried it: "comment", "hidden", "aria-hidden", "alt", "title", "link", "image", …
    label: str = ""  # for link targets: the link's visible text


@dataclass
class Views:
    text: str  # the chunk the offsets refer to (with long runs of spaces shortened, when asked)
    prose: str
    cuts: list[tuple[int, int]] = field(default_factory=list)  # (position in prose, characters cut there): code blocks
    code: list[Segment] = field(default_factory=list)
    code_spans: list[str] = field(default_factory=list)
    comments: list[Segment] = field(default_factory=list)
    hidden: list[Segment] = field(default_factory=list)
    alt: list[Segment] = field(default_factory=list)
    titles: list[Segment] = field(default_factory=list)
    targets: list[Segment] = field(default_factory=list)
    removed: Removed = field(default_factory=list)  # what the sanitizer takes out (Removed)

    def to_chunk(self, at: int) -> int:
        """A position in `prose` as a position in the chunk."""
        return at + sum(n for where, n in self.cuts if where <= at)


def hides(style: str) -> bool:
    """Whether an inline `style` hides its element from readers (display:none, font-size:0, off-screen …)."""
    return bool(_HIDING_STYLE.search(style))


def _blank(text: str, fill: str = " ") -> str:
    """`text` with every character but newlines replaced by `fill`."""
    if "\n" not in text:
        return fill * len(text)
    return "\n".join(fill * len(line) for line in text.split("\n"))


def _attrs(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _ATTR.finditer(raw):
        value = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
        out.setdefault(m.group(1).lower(), value if value is not None else "")
    return out


def _hiding(name: str, attrs: dict[str, str]) -> str:
    """How an element hides its content: "hidden" (from everyone), "aria-hidden" (from assistive tools), or ""."""
    if name in _UNRENDERED or "hidden" in attrs or _HIDING_STYLE.search(attrs.get("style", "")):
        return "hidden"
    if attrs.get("aria-hidden", "").strip().lower() == "true":
        return "aria-hidden"
    return ""


def _strip_dest(dest: str) -> str:
    return dest[1:-1] if dest.startswith("<") and dest.endswith(">") else dest


def _title(raw: str | None) -> str:
    return raw[1:-1] if raw else ""


def _line_start(text: str, pos: int) -> bool:
    """Whether only spaces and tabs come before `pos` on its line."""
    if not pos:
        return True
    before = text[pos - 1]
    if before == "\n":
        return True
    if before != " " and before != "\t":
        return False
    return not text[text.rfind("\n", 0, pos) + 1 : pos].strip(" \t")


class _Lexer:
    """One pass over the chunk: each construct is found where it starts and handled whole, so what is
    inside a code block, a code span or a comment is never read as markup."""

    def __init__(self, text: str, views: Views) -> None:
        self.text = text
        self.views = views
        self.masks: list[tuple[int, int, str]] = []
        self.blocks: list[tuple[int, int]] = []  # fenced code blocks, cut out of the prose
        self.skip: list[tuple[int, int]] = []  # a link's `](target "title")`, met after its text

    def run(self) -> None:
        text, pos, end = self.text, 0, len(self.text)
        search, skip, spans = _TOKEN.search, self.skip, self.views.code_spans
        while pos < end:
            m = search(text, pos)
            if m is None:
                break
            at = m.start()
            if skip:
                while skip and skip[0][1] <= at:
                    skip.pop(0)
                if skip and skip[0][0] <= at:  # inside a link's target: not markup
                    pos = skip.pop(0)[1]
                    continue
            kind = m.lastgroup
            if kind == "span":
                spans.append(m.group("span"))
                pos = m.end()
            elif kind == "ticks":
                pos = self._ticks(at, m.group())
            elif kind == "tildes":
                pos = self._fence(at, m.group()) if _line_start(text, at) else at + len(m.group())
            elif kind == "comment":
                pos = self._comment(at)
            elif kind == "tag":
                pos = self._tag(m)
            elif kind == "autolink":
                self.views.targets.append(Segment(at + 1, m.group()[1:-1], "autolink", m.group()[1:-1]))
                pos = m.end()
            elif kind == "image":
                pos = self._image(at)
            else:
                pos = self._bracket(at)

    def _ticks(self, at: int, run: str) -> int:
        text = self.text
        if len(run) >= 3 and _line_start(text, at):
            line_end = text.find("\n", at)
            if "`" not in text[at + len(run) : line_end if line_end >= 0 else len(text)]:  # the info string
                return self._fence(at, run)
        close = text.find(run, at + len(run))
        while close >= 0 and text.startswith("`", close + len(run)):  # a longer run does not close it
            close = text.find(run, close + len(run) + 1)
            while close >= 0 and text[close - 1] == "`":
                close = text.find(run, close + 1)
        if close < 0 or ("\n" in text[at:close] and _BLANK_LINE.search(text, at, close)):
            return at + len(run)  # no closing run: literal backticks
        self.views.code_spans.append(text[at + len(run) : close])
        return close + len(run)

    def _fence(self, at: int, run: str) -> int:
        text = self.text
        body = text.find("\n", at)
        body = len(text) if body < 0 else body + 1
        close = end = len(text)
        fence = run[0] * 3
        at_run = text.find(fence, body)
        while at_run >= 0:  # a closing fence: a line of at least as many of the same character, and nothing else
            line_start = text.rfind("\n", 0, at_run) + 1
            line_end = text.find("\n", at_run)
            line_end = len(text) if line_end < 0 else line_end
            line = text[line_start:line_end].strip(" \t")
            if len(line) >= len(run) and not line.strip(run[0]) and not text[line_start:at_run].strip(" \t"):
                close, end = line_start, line_end
                break
            at_run = text.find(fence, line_end)
        self.views.code.append(Segment(body, text[body:close], "code"))
        self.blocks.append((at, end))
        return end

    def _comment(self, at: int) -> int:
        text = self.text
        close = text.find("-->", at + 4)
        if close < 0:
            if not _line_start(text, at):  # inside a paragraph an open comment is literal text
                return at + 4
            close = len(text)  # an HTML block: it hides the rest of the chunk
            end = close
        else:
            end = close + 3
        self.views.comments.append(Segment(at + 4, text[at + 4 : close], "comment"))
        self.views.removed.append((at, end, True))
        self.masks.append((at, end, "\0"))
        return end

    def _tag(self, m: re.Match[str]) -> int:
        text, views = self.text, self.views
        name = m.group("name").lower()
        self.masks.append((m.start(), m.end(), " " if name in _BLOCK_TAGS else "\0"))
        if m.group("close"):
            return m.end()
        raw = m.group("attrs")
        if not raw and name not in _UNRENDERED:  # nothing that could hide it
            return m.end()
        attrs = _attrs(raw) if raw else {}
        if attrs:
            _tag_attrs(name, attrs, m.start(), views)
        how = _hiding(name, attrs)
        if not how or name in _VOID_TAGS or m.group("self"):
            return m.end()
        depth, inner_end, end = 1, -1, -1
        for t in _TAG.finditer(text, m.end()):
            if t.group(2).lower() == name and not t.group(4):
                depth += -1 if t.group(1) == "/" else 1
                if depth == 0:
                    inner_end, end = t.start(), t.end()
                    break
        if end < 0:  # unclosed: a script or style runs to the end, anything else to the end of its block
            blank = None if name in _UNRENDERED else _BLANK_LINE.search(text, m.end())
            inner_end = end = blank.start() if blank else len(text)
        inner = _TAG.sub(lambda t: " " if t.group(2).lower() in _BLOCK_TAGS else "", text[m.end() : inner_end])
        views.hidden.append(Segment(m.end(), inner, how))
        if how == "aria-hidden":  # drawn on the page: its text stays prose, its tags are read one by one
            return m.end()
        views.removed.append((m.start(), end, name in _BLOCK_TAGS or name in _UNRENDERED))
        self.masks.append((m.start(), end, "\0"))
        return end

    def _image(self, at: int) -> int:
        views = self.views
        m = _IMAGE.match(self.text, at)
        if m is not None:
            views.alt.append(Segment(m.start(1), m.group(1), "alt"))
            views.targets.append(Segment(m.start(2), _strip_dest(m.group(2)), "image", m.group(1)))
            if m.group(3):
                views.titles.append(Segment(m.start(3) + 1, _title(m.group(3)), "title"))
        else:
            m = _IMAGE_REF.match(self.text, at)
            if m is None:
                return at + 1  # the `[` after it is read next
            views.alt.append(Segment(m.start(1), m.group(1), "alt"))
        self.masks.append((at, m.end(), " "))
        return m.end()

    def _bracket(self, at: int) -> int:
        text, views = self.text, self.views
        if at and text[at - 1] == "\\":
            return at + 1
        if _line_start(text, at):
            d = _LINK_DEF.match(text, at)
            if d is not None:
                views.targets.append(Segment(d.start(2), _strip_dest(d.group(2)), "definition", ""))
                if d.group(3):
                    views.titles.append(Segment(d.start(3) + 1, _title(d.group(3)), "title"))
                self.masks.append((at, d.end(), " "))
                return d.end()
        m = _LINK.match(text, at)
        if m is None:
            return at + 1
        views.targets.append(Segment(m.start(2), _strip_dest(m.group(2)), "link", m.group(1)))
        if m.group(3):
            views.titles.append(Segment(m.start(3) + 1, _title(m.group(3)), "title"))
        self.masks.append((at, at + 1, "\0"))
        self.masks.append((m.end(1), m.end(), "\0"))
        self.skip.append((m.end(1), m.end()))
        self.skip.sort()
        return at + 1  # the link's text is read as prose, and for what it holds


def _tag_attrs(name: str, attrs: dict[str, str], start: int, views: Views) -> None:
    if name == "img":
        if attrs.get("alt"):
            views.alt.append(Segment(start, attrs["alt"], "alt"))
        if "src" in attrs:
            views.targets.append(Segment(start, attrs["src"], "image", attrs.get("alt", "")))
    elif name == "a" and "href" in attrs:
        views.targets.append(Segment(start, attrs["href"], "link", ""))
    elif name in ("iframe", "embed", "object", "form", "area"):
        for key in ("src", "data", "action", "href"):
            if key in attrs:
                views.targets.append(Segment(start, attrs[key], name, ""))
    if attrs.get("title") and name in ("a", "img", "abbr", "area"):
        views.titles.append(Segment(start, attrs["title"], "title"))


# The SPACES and DASHES padding of generated tables (`|  …  |`, `|---…---|`), cut to four characters
# before anything else reads it.
_SPACES = re.compile("      *")  # five or more: a literal first is fast to find
_DASHES = re.compile("------*")


def split_views(text: str, shorten: bool = False) -> Views:
    """The chunk's views (see the module docstring). With `shorten`, runs of more than four spaces or
    dashes are first cut to four (line numbers stay; the scan reads less), and offsets refer to that text."""
    if shorten:
        text = _SPACES.sub("    ", text) if "     " in text else text
        text = _DASHES.sub("----", text) if "-----" in text else text
    views = Views(text=text, prose=text)
    if not _ANY_MARKUP.search(text):
        return views
    lexer = _Lexer(text, views)
    lexer.run()
    prose = _apply(text, lexer.masks + [(s, e, "") for s, e in lexer.blocks])
    shift = 0
    for start, end in lexer.blocks:  # code leaves the prose (a line break in its place), noted in `cuts`
        views.cuts.append((start - shift + 1, end - start - 1))
        shift += end - start - 1
    if "." in prose or ")" in prose:
        prose = _NUMBERED.sub(lambda m: "\n" + " " * (len(m.group()) - 1), "\n" + prose)[1:]
    views.prose = prose
    return views


def unshortened(text: str, removed: Removed) -> Removed | None:
    """`removed` of `split_views(text, shorten=True)` as positions in `text` itself; None when an edge falls
    inside a shortened run. The lexer reads a run of spaces or dashes the same whatever its length (its
    patterns count neither; comments, tags and blank lines, where ranges start and end, are not inside
    one), so the ranges are the same ones, moved."""
    if not removed:
        return removed
    middle = _SPACES.sub("    ", text) if "     " in text else text
    ranges: list[tuple[int, int]] | None = [(s, e) for s, e, _ in removed]
    for shortened, runs in ((middle, _DASHES), (text, _SPACES)):  # undo the dashes, then the spaces
        ranges = _moved(ranges, shortened, runs) if ranges is not None else None
    if ranges is None:
        return None
    return [(s, e, block) for (s, e), (_, _, block) in zip(ranges, removed, strict=True)]


def _moved(ranges: list[tuple[int, int]], text: str, runs: re.Pattern[str]) -> list[tuple[int, int]] | None:
    """`ranges` in `text` with `runs` cut to four characters, as positions in `text`."""
    # each run's start and end in the shortened text, and the characters cut up to its end
    cut: list[tuple[int, int, int]] = []
    total = 0
    for m in runs.finditer(text):
        start = m.start() - total
        total += len(m.group()) - 4
        cut.append((start, start + 4, total))
    if not cut:
        return ranges
    ends = [e for _, e, _ in cut]
    out = []
    for edges in ranges:
        moved = []
        for at in edges:
            i = bisect_right(ends, at)  # runs that end at or before `at`
            if i < len(cut) and cut[i][0] < at:  # inside a run
                return None
            moved.append(at + (cut[i - 1][2] if i else 0))
        out.append((moved[0], moved[1]))
    return out


def removed_ranges(text: str) -> Removed:
    """What the sanitizer takes out of `text` (`Views.removed` of `split_views(text)`), without making the
    other views: the lexer's pass alone."""
    views = Views(text=text, prose=text)
    if "<" in text:  # comments and elements start with one
        _Lexer(text, views).run()
    return views.removed


def _apply(text: str, masks: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, fill) masked (fill "": cut, leaving a line break); inner ranges drop out."""
    if not masks:
        return text
    out: list[str] = []
    last = 0
    for start, end, fill in sorted(masks, key=lambda r: (r[0], -r[1])):
        if end <= last:
            continue
        start = max(start, last)
        out.append(text[last:start])
        out.append(_blank(text[start:end], fill) if fill else "\n")
        last = end
    out.append(text[last:])
    return "".join(out)
