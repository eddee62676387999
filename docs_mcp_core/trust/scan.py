"""Scan one chunk of Markdown with a rule set: a finding per rule that matched, with where and an excerpt.

Deterministic and free of I/O: the same text and rules give the same findings. Findings are
per rule and chunk (the first match, and how many there were), in the chunk's line order.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from urllib.parse import urlsplit

from .chars import _ANY as _INVISIBLE_CHAR
from .chars import has_invisible, invisible_spans, show
from .fold import fold, fold_words, quick_words, spaced
from .rules import Plan, Rule, RuleSet, Severity, builtin_rules
from .views import Removed, Segment, Views, split_views, unshortened

_SEPARATORS = bytes.maketrans(b",.:;!?", b"      ")  # folded text (ASCII): words, spaces, newlines and these
_EMPHASIS = re.compile(r"[*_`]")
_TARGET_JUNK = re.compile(r"[\x00-\x20\x7f]+")
_URL_TEXT = re.compile(r"^\s*<?((?:https?://|www\.)[^\s<>]+?)>?\s*$", re.IGNORECASE)
EXCERPT_CHARS = 120
# Longer chunks are not tried for `reads_nothing`: they mostly have code, where anchor words are common, and
# reading their words first would be work the scan does again.
QUICK_CHARS = 800
MAX_LOCATED = 20  # of one rule's matches in a chunk, the first of these many is the one reported

# How each view is named in a finding.
WHERE = {
    "prose": "text",
    "code": "code",
    "comment": "HTML comment",
    "hidden": "hidden element",
    "aria-hidden": "aria-hidden element",
    "alt": "image alt text",
    "title": "link title",
    "target": "link target",
    "raw": "characters",
}


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity  # "error": quarantine the chunk; "warning": report only
    reason: str
    where: str  # what carried it (WHERE)
    line: int  # 1-based, in the scanned text
    excerpt: str  # the text around the first match, printable (invisible characters as <U+XXXX>)
    count: int = 1  # lines of the chunk this rule matched on

    def describe(self) -> str:
        more = f" (and {self.count - 1} more)" if self.count > 1 else ""
        return f"{self.reason}: {self.where}: {self.excerpt!r}{more} [{self.rule}]"


@dataclass
class _Hit:
    rule: Rule
    kind: str
    source: str  # the text the excerpt and line come from
    offset: int  # where `source` starts in the chunk
    folded_at: int  # match position in the folded source (-1: `at` is a position in `source`)
    at: int
    matched: str


class _Folded:
    """A view segment folded once, when needed. Its words (for anchors) come first: without folding with
    `quick`, the view's anchor words (fold.py `quick_words`, for a view whose patterns all have anchors: only
    its anchor words are kept), else from the folded words before their spacing is made regular; folding
    and that spacing, which patterns read, happen only for a segment a pattern runs on."""

    def __init__(self, segment: Segment, quick: frozenset[str] | None) -> None:
        self.segment = segment
        self._folded: tuple[str, list[str]] | None = None
        self._words: AbstractSet[str] | None = None
        self._text: str | None = None
        self.plain: str | None = None  # with quick words: a text of the words, space apart
        if quick is not None and (found := quick_words(segment.text, quick)) is not None:
            self._words, self.plain = found

    @property
    def folded(self) -> tuple[str, list[str]]:
        if self._folded is None:
            self._folded = fold_words(self.segment.text)
        return self._folded

    @property
    def words_text(self) -> str:
        return self.folded[0]

    @property
    def joined(self) -> list[str]:
        return [] if self.plain is not None else self.folded[1]  # quick words: none were joined

    @property
    def words(self) -> AbstractSet[str]:
        if self._words is None:
            self._words = set(self.words_text.encode().translate(_SEPARATORS).decode().split())
        return self._words

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = spaced(self.words_text)
        return self._text

    def anchor_text(self, plan: Plan) -> str:
        """Where the plan's prefix anchors are looked for: a part of a word is in any text of its words."""
        if plan.spaced_prefixes:
            return self.text
        return self.plain if self.plain is not None else self.words_text


def _segments(views: Views, text: str, view: str) -> list[Segment]:
    if view == "prose":
        return [Segment(0, views.prose, "prose")]
    if view == "code":
        return views.code + [Segment(-1, s, "code") for s in views.code_spans]
    if view == "comment":
        return views.comments
    if view == "hidden":
        return views.hidden
    if view == "alt":
        return views.alt
    if view == "title":
        return views.titles
    if view == "target":
        return views.targets
    return [Segment(0, text, "raw")]


def _raw(text: str) -> str:
    """The chunk with invisible characters that do visible work (emoji joiners, flags…) blanked."""
    if not has_invisible(text):
        return text
    removable = list(invisible_spans(text))
    out: list[str] = []
    last = 0
    for start, end in removable:
        out.append(_INVISIBLE_CHAR.sub("\0", text[last:start]))
        out.append(text[start:end])
        last = end
    out.append(_INVISIBLE_CHAR.sub("\0", text[last:]))
    return "".join(out)


def _target(url: str) -> str:
    if "&" in url:
        url = html.unescape(url)
    return _TARGET_JUNK.sub("", url).lower()


def _descriptive(folded: str, start: int, words: frozenset[str]) -> bool:
    if not words:
        return False
    before = folded[max(0, start - 40) : start].rstrip(" ,")
    if not before or before[-1] in "\n.:;!?":  # a new sentence or line: nothing describes it
        return False
    return before.rsplit(None, 1)[-1].strip(",") in words


def _host(url: str) -> str:
    try:
        host = urlsplit(url if "://" in url else "http://" + url).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


def _link_text_host(segment: Segment) -> bool:
    """The link's text is a URL whose host is not the target's (nor a parent or child domain of it)."""
    lowered = segment.label.lower()
    if "http" not in lowered and "www." not in lowered:
        return False
    m = _URL_TEXT.match(_EMPHASIS.sub("", segment.label))
    if not m or not re.match(r"^https?://", segment.text.strip(), re.IGNORECASE):
        return False
    shown, real = _host(m.group(1)), _host(segment.text.strip())
    if not shown or not real:
        return False
    return not (shown == real or shown.endswith("." + real) or real.endswith("." + shown))


class _Scan:
    def __init__(self, text: str, rules: RuleSet) -> None:
        self.text = text
        self.rules = rules
        self.views = split_views(text, shorten=True)
        self.folded: dict[str, list[_Folded]] = {}
        self.hits: dict[str, list[tuple[tuple[str, int], _Hit]]] = {}  # rule -> (segment, hit) in scan order
        self._code_spans: list[str] | None = None

    def folded_segments(self, view: str) -> list[_Folded]:
        if view not in self.folded:
            plan = self.rules.plan
            quick = plan.vocabulary[view] if not plan.always[view] and plan.word_prefixes else None
            segments = _segments(self.views, self.views.text, view)
            self.folded[view] = [_Folded(s, quick) for s in segments if s.text.strip()]
        return self.folded[view]

    def quoted(self, matched: str, seen: Counter[str]) -> bool:
        """Whether a prose match is text quoted in a code span (as often as it occurs there)."""
        if not self.views.code_spans:
            return False
        if self._code_spans is None:
            self._code_spans = [fold(s) for s in self.views.code_spans]
        room = sum(s.count(matched) for s in self._code_spans)
        seen[matched] += 1
        return seen[matched] <= room

    def add(self, hit: _Hit, segment_key: tuple[str, int]) -> None:
        self.hits.setdefault(hit.rule.id, []).append((segment_key, hit))

    def run(self) -> None:
        plan, v = self.rules.plan, self.views
        folded_views = (
            ("prose", True),
            ("comment", v.comments),
            ("hidden", v.hidden),
            ("alt", v.alt),
            ("title", v.titles),
            ("code", v.code or v.code_spans),
        )
        for view, there in folded_views:  # a view with nothing in it costs nothing
            if there and plan.entries[view]:
                for f in self.folded_segments(view):
                    self._segment(view, f, plan)
        if v.targets:
            for rule in plan.other["target"]:
                self._targets(rule)
        if plan.other["raw"] and has_invisible(self.text):  # the raw view: only where something draws nothing
            raw = _raw(self.text)
            for rule in plan.other["raw"]:
                for pattern in rule.patterns:
                    for m in pattern.finditer(raw):
                        self.add(_Hit(rule, "raw", self.text, 0, -1, m.start(), m.group()), ("raw", 0))

    def _segment(self, view: str, f: _Folded, plan: Plan) -> None:
        """Every pattern of the view whose anchors the segment has, over one folded segment."""
        runnable = plan.runnable(view, f.words, f.anchor_text(plan))
        if not runnable and not f.joined:
            return
        key = (f.segment.kind, f.segment.start)
        spans: dict[str, list[tuple[int, int]]] = {}  # per rule: text two of its patterns both match counts once
        seen: Counter[str] | None = None
        for entry in runnable:
            rule = entry.rule
            taken = spans.setdefault(rule.id, [])
            for m in entry.pattern.finditer(f.text):
                if any(m.start() < e and s < m.end() for s, e in taken):
                    continue
                if _descriptive(f.text, m.start(), rule.not_after):
                    continue
                taken.append(m.span())
                if view == "prose" and self.views.code_spans:
                    seen = Counter() if seen is None else seen
                    if self.quoted(m.group(), seen):
                        continue
                self.add(_Hit(rule, f.segment.kind, f.segment.text, f.segment.start, m.start(), 0, m.group()), key)
        for word in f.joined:
            for entry in plan.entries[view]:
                if entry.squeezed is not None and entry.squeezed.search(word):
                    self.add(
                        _Hit(entry.rule, f.segment.kind, f.segment.text, f.segment.start, f.text.find(word), 0, word),
                        key,
                    )

    def _targets(self, rule: Rule) -> None:
        for segment in self.views.targets:
            if rule.check == "link-text-host":
                hit = _link_text_host(segment)
            else:
                url = _target(segment.text)
                hit = any(p.search(url) for p in rule.patterns)
            if hit:
                start = max(segment.start, 0)
                self.add(_Hit(rule, "target", segment.text, start, -1, 0, segment.text), ("target", start))

    def findings(self) -> list[Finding]:
        out = []
        for rule_id, hits in self.hits.items():
            rule = hits[0][1].rule
            covered = {key for other in rule.unless for key, _ in self.hits.get(other, [])}
            kept = [hit for key, hit in hits if key not in covered]  # `unless`: another rule says it better
            if not kept:
                continue
            located = [(*self.locate(h), h) for h in kept[:MAX_LOCATED]]
            line, excerpt, hit = min(located, key=lambda t: t[0])  # the first in the chunk
            count = len({t[0] for t in located}) + len(kept[MAX_LOCATED:])  # lines it is on
            out.append(
                Finding(rule_id, rule.severity, rule.reason, WHERE.get(hit.kind, hit.kind), line, excerpt, count)
            )
        return sorted(out, key=lambda f: (f.line, f.rule))

    def locate(self, hit: _Hit) -> tuple[int, str]:
        """The chunk line of a hit, and the text around it as the author wrote it."""
        if hit.kind in ("prose", "raw", "target"):
            at = hit.offset if hit.kind == "target" else hit.at
            if hit.kind == "prose":
                at = self.views.to_chunk(_skip_masked(hit.source, _source_position(hit.source, hit.folded_at)))
            text = self.text if hit.kind == "raw" else self.views.text  # the same lines
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            return text.count("\n", 0, at) + 1, _excerpt(text[start : end if end >= 0 else len(text)])
        at = hit.at if hit.folded_at < 0 else _source_position(hit.source, hit.folded_at)
        line = self.views.text.count("\n", 0, max(hit.offset, 0)) + hit.source.count("\n", 0, at) + 1
        return line, _excerpt(hit.source[max(0, at - 40) :])


def _skip_masked(prose: str, at: int) -> int:
    while at < len(prose) and prose[at] in " \0\n":
        at += 1
    return min(at, max(len(prose) - 1, 0))


def _source_position(source: str, folded_at: int) -> int:
    """The position in `source` where its folded text reaches `folded_at` (the shortest prefix that folds past it)."""
    if folded_at <= 0:
        return 0
    lo, hi = 0, len(source)
    while lo < hi:
        mid = (lo + hi) // 2
        if len(fold(source[: mid + 1])) > folded_at:
            hi = mid
        else:
            lo = mid + 1
    return min(lo, len(source))


def _excerpt(text: str) -> str:
    text = " ".join(show(text.replace("\0", "")).split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def reads_nothing(text: str, plan: Plan) -> bool:
    """Whether no rule of `plan` can run on `text`, known without taking it apart: ASCII (no character
    rule runs), no `<` (no comment, element, autolink), no `[` (no link, definition or image, so no
    alt text, title or target), so the lexer masks nothing and only cuts fenced code out of
    the prose, which joins no words; then the prose's words are among the chunk's (`quick_words`), and
    they meet no prose pattern's anchors (a pattern can need several words: any one of them is common), nor
    are there letters folding could join. Not for a plan with code rules, or prose patterns without anchors."""
    if len(text) > QUICK_CHARS or "<" in text or "[" in text or not text.isascii():
        return False
    if plan.always["prose"] or plan.entries["code"] or plan.spaced_prefixes or not plan.word_prefixes:
        return False
    found = quick_words(text, plan.vocabulary["prose"])
    return found is not None and not plan.runnable("prose", found[0], found[1])


def scan(text: str, rules: RuleSet | None = None) -> list[Finding]:
    """Findings of `rules` (default: the built-in rules) in one chunk of Markdown as written."""
    return scan_removed(text, rules)[0]


def scan_removed(text: str, rules: RuleSet | None = None) -> tuple[list[Finding], Removed | None]:
    """`scan`, and what the sanitizer would take out of `text` (views.py `Views.removed`), learnt on the way
    (in a text without `<`: nothing). None when it cannot tell (views.py `unshortened`): the sanitizer
    takes the text apart itself."""
    rules = rules or builtin_rules()
    if reads_nothing(text, rules.plan):
        return [], []
    state = _Scan(text, rules)
    state.run()
    removed = state.views.removed
    return state.findings(), removed if state.views.text == text else unshortened(text, removed)
