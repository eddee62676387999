"""Rules as data: the built-in list (rules.yaml, shipped with the package) and a team's own rules files.

A rules file (YAML or JSON) holds `version: 1`, optional `terms` (named regular
expressions that patterns use as `{name}`) and `rules`, each with:

- `id` (lower case, digits, `-`), `severity` (`error`: the chunk is quarantined;
  `warning`: reported only), `reason` (why it matters, shown with every finding),
  `what` (what it catches, for the rule list);
- `in`: the views it reads: `prose` (the text a reader sees, outside code), `code`
  (code blocks and spans), `comment` (HTML comments), `hidden` (elements hidden by style,
  the `hidden` attribute or `aria-hidden`, and script/style/template), `alt` (image alt
  text), `title` (link and image titles), `target` (link and image URLs), `raw` (the chunk
  as written: for rules about characters);
- `patterns`: Python regular expressions. On `prose`, `code`, `comment`, `hidden`, `alt`
  and `title` they match folded text (fold.py: lower case, look-alikes mapped, markup
  removed) and a space in a pattern stands for any run of spaces, newlines and `,.:;!?`
  (` ?` for an optional one), except inside a lookbehind; each pattern only matches whole
  words. A pattern or term written over several lines (a YAML `|-` block) has its lines
  joined with nothing between them: a line indented one space more than the block starts
  with a space. On `target` they match the URL in lower case without whitespace; on `raw`, the
  chunk as written;
- optional `anchors` (words, one of which must occur in a folded view for the patterns
  to be tried, `gpt*` for a word's beginning, or a list of such lists, each of which must
  be met: a speed hint that must not change what matches; a pattern can be written as
  `{pattern: …, anchors: […]}` to have its own), `not_after` (words that, just before a
  match, make it a description rather than an instruction: "the model may ignore …"),
  `unless` (rule IDs: no finding when one of them matched the same text), `check` (a
  built-in test instead of patterns: `link-text-host`), `examples` and `counterexamples`
  (Markdown that must and must not be flagged; the tests run them).
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from ..diagnostics import Diagnostic, error

Severity = Literal["error", "warning"]
VIEWS = ("prose", "code", "comment", "hidden", "alt", "title", "target", "raw")
FOLDED_VIEWS = frozenset(VIEWS) - {"target", "raw"}
CHECKS = frozenset({"link-text-host"})
SEPARATOR = r"[ \n,.:;!?]"
_ID = re.compile(r"^[a-z][a-z0-9-]{1,63}$")
_TERM = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_FIELDS = frozenset(
    "id severity reason what in patterns anchors not_after unless check examples counterexamples".split()
)
BUILTIN = "built-in"


class RulesError(ValueError):
    """A rules file that cannot be used; `line` is where (1 when unknown)."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Anchors:
    """Words one of which a folded view must have for a pattern to be tried (`gpt*`: a word's beginning);
    `also`: further such sets, each of which must be met too."""

    words: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    also: tuple[Anchors, ...] = ()

    @classmethod
    def of(cls, groups: tuple[frozenset[str], ...]) -> Anchors:
        if not groups:
            return cls()
        first, *rest = groups
        words = frozenset(a for a in first if not a.endswith("*"))
        return cls(words, tuple(sorted(a[:-1] for a in first if a.endswith("*"))), tuple(cls.of((g,)) for g in rest))

    def __bool__(self) -> bool:
        return bool(self.words or self.prefixes)

    def found(self, words: AbstractSet[str], text: str) -> bool:
        if self.words.isdisjoint(words) and not any(p in text for p in self.prefixes):
            return False
        return all(a.found(words, text) for a in self.also)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    reason: str
    what: str
    views: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...] = ()
    pattern_anchors: tuple[Anchors, ...] = ()  # per pattern: its anchors, else the rule's
    squeezed: tuple[re.Pattern[str], ...] = ()  # the patterns without separators, for spaced-out letters
    anchors: tuple[frozenset[str], ...] = ()  # the rule's anchors (see Anchors)
    not_after: frozenset[str] = frozenset()
    unless: tuple[str, ...] = ()
    check: str | None = None
    examples: tuple[str, ...] = ()
    counterexamples: tuple[str, ...] = ()
    source: str = BUILTIN  # the file it came from
    line: int = 1


@dataclass(frozen=True)
class Entry:
    """One pattern of one rule, as the scan runs it."""

    rule: Rule
    pattern: re.Pattern[str]
    squeezed: re.Pattern[str] | None
    anchors: Anchors


@dataclass(frozen=True)
class Plan:
    """A rule set arranged for the scan: per folded view its patterns, and every anchor word they need."""

    entries: dict[str, tuple[Entry, ...]]
    always: dict[str, tuple[int, ...]]  # entries without anchors
    by_word: dict[str, dict[str, tuple[int, ...]]]  # anchor word -> the entries it lets run
    by_prefix: dict[str, dict[str, tuple[int, ...]]]
    anchor_words: dict[str, frozenset[str]]  # the keys of by_word
    other: dict[str, tuple[Rule, ...]]  # `target` and `raw` rules
    spaced_prefixes: bool = False  # a prefix anchor with a space in it: it is looked for in regularly spaced text
    word_prefixes: bool = True  # every prefix anchor is letters and digits: it is in a text iff in one of its words
    vocabulary: dict[str, frozenset[str]] = field(default_factory=dict)  # every anchor word, `also` ones too

    def runnable(self, view: str, words: AbstractSet[str], text: str) -> list[Entry]:
        """The view's entries whose anchors a segment (its words, its text) has, in rule order."""
        found = words & self.anchor_words[view]
        prefixes = [ix for prefix, ix in self.by_prefix[view].items() if prefix in text]
        if not found and not prefixes and not self.always[view]:
            return []
        by_word = self.by_word[view]
        chosen = set(self.always[view])
        for word in found:
            chosen.update(by_word[word])
        for indexes in prefixes:
            chosen.update(indexes)
        entries = self.entries[view]
        return [e for e in (entries[i] for i in sorted(chosen)) if not e.anchors.also or e.anchors.found(words, text)]


def _prefixes(anchors: Anchors) -> list[str]:
    return [*anchors.prefixes, *(p for a in anchors.also for p in _prefixes(a))]


def _words(anchors: Anchors) -> frozenset[str]:
    return anchors.words.union(*(_words(a) for a in anchors.also))


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    terms: dict[str, str] = field(default_factory=dict)

    @cached_property
    def plan(self) -> Plan:
        entries: dict[str, list[Entry]] = {v: [] for v in FOLDED_VIEWS}
        other: dict[str, list[Rule]] = {"target": [], "raw": []}
        for rule in self.rules:
            for view in rule.views:
                if view in other:
                    other[view].append(rule)
                    continue
                squeezed = rule.squeezed or (None,) * len(rule.patterns)
                for pattern, squeeze, anchors in zip(rule.patterns, squeezed, rule.pattern_anchors, strict=True):
                    entries[view].append(Entry(rule, pattern, squeeze, anchors))
        prefixes = [p for es in entries.values() for e in es for p in _prefixes(e.anchors)]
        by_word: dict[str, dict[str, list[int]]] = {v: {} for v in entries}
        by_prefix: dict[str, dict[str, list[int]]] = {v: {} for v in entries}
        for view, es in entries.items():
            for i, e in enumerate(es):
                for word in e.anchors.words:
                    by_word[view].setdefault(word, []).append(i)
                for prefix in e.anchors.prefixes:
                    by_prefix[view].setdefault(prefix, []).append(i)
        return Plan(
            entries={v: tuple(e) for v, e in entries.items()},
            always={v: tuple(i for i, e in enumerate(es) if not e.anchors) for v, es in entries.items()},
            by_word={v: {w: tuple(ix) for w, ix in d.items()} for v, d in by_word.items()},
            by_prefix={v: {p: tuple(ix) for p, ix in d.items()} for v, d in by_prefix.items()},
            anchor_words={v: frozenset(d) for v, d in by_word.items()},
            other={v: tuple(r) for v, r in other.items()},
            spaced_prefixes=any(any(c.isspace() for c in p) for p in prefixes),
            word_prefixes=all(p.isascii() and p.isalnum() for p in prefixes),
            vocabulary={v: frozenset().union(*(_words(e.anchors) for e in es)) for v, es in entries.items()},
        )

    def ids(self) -> set[str]:
        return {r.id for r in self.rules}

    def get(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def without(self, ids: set[str]) -> RuleSet:
        return replace(self, rules=tuple(r for r in self.rules if r.id not in ids)) if ids else self

    def plus(self, rules: tuple[Rule, ...]) -> RuleSet:
        return replace(self, rules=self.rules + rules) if rules else self


def _expand(pattern: str, terms: dict[str, str], depth: int = 0) -> str:
    if depth > 8:
        raise RulesError("terms refer to each other in a loop")

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in terms:
            raise RulesError(f"unknown term {{{name}}}; define it under 'terms'")
        return "(?:" + _expand(terms[name], terms, depth + 1) + ")"

    return _TERM.sub(one, pattern)


def _separators(pattern: str, squeeze: bool) -> str:
    """Spaces become separator runs (or nothing, when squeezed), outside classes and lookbehinds."""
    out: list[str] = []
    stack: list[bool] = []  # per open group: is it a lookbehind
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if pattern[i + 1 : i + 2] == "]":  # a literal ] first in a class
                out.append("]")
                i += 1
        elif c == "(":
            stack.append(pattern.startswith("(?<=", i) or pattern.startswith("(?<!", i))
            out.append(c)
        elif c == ")":
            if stack:
                stack.pop()
            out.append(c)
        elif c == " " and not any(stack):
            optional = pattern[i + 1 : i + 2] == "?"
            if squeeze:
                pass
            else:
                out.append(SEPARATOR + ("*" if optional else "+"))
            i += 2 if optional else 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def compile_pattern(pattern: str, terms: dict[str, str], folded: bool, squeeze: bool = False) -> re.Pattern[str]:
    expanded = _expand(pattern, terms)
    if not folded:
        return re.compile(expanded)
    body = _separators(expanded, squeeze)
    return re.compile(body if squeeze else f"(?<![a-z0-9])(?:{body})(?![a-z0-9])")


def _joined(value: str) -> str:
    """A pattern written over several lines (a YAML `|-` block): its lines joined with nothing between them."""
    return "".join(value.splitlines()) if "\n" in value else value


def _strings(value: Any, name: str, line: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise RulesError(f"'{name}' must be a list of non-empty strings", line)
    return tuple(value)


def _anchor_groups(value: Any, line: int) -> tuple[frozenset[str], ...]:
    """`anchors`: a list of words (one of them must occur), or a list of such lists (each must be met)."""
    if value is None:
        return ()
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return tuple(frozenset(a.lower() for a in _strings(v, "anchors", line)) for v in value)
    return (frozenset(a.lower() for a in _strings(value, "anchors", line)),)


def _patterns(value: Any, line: int) -> tuple[tuple[str, ...], list[tuple[frozenset[str], ...] | None]]:
    """A rule's patterns, each a string or {pattern, anchors}."""
    if value is None:
        return (), []
    items = value if isinstance(value, list) else [value]
    sources: list[str] = []
    anchors: list[tuple[frozenset[str], ...] | None] = []
    for item in items:
        if isinstance(item, dict):
            item.pop("__line__", None)
            if set(item) - {"pattern", "anchors"} or not isinstance(item.get("pattern"), str):
                raise RulesError("a pattern is a string, or a mapping with 'pattern' and 'anchors'", line)
            sources.append(_joined(item["pattern"]))
            anchors.append(_anchor_groups(item.get("anchors"), line))
        elif isinstance(item, str) and item.strip():
            sources.append(_joined(item))
            anchors.append(None)
        else:
            raise RulesError("'patterns' must be a list of regular expressions", line)
    return tuple(sources), anchors


def build_rule(raw: Any, terms: dict[str, str], source: str) -> Rule:
    """One rule from its mapping; a RulesError names the field that is wrong."""
    line = raw.pop("__line__", 1) if isinstance(raw, dict) else 1
    if not isinstance(raw, dict):
        raise RulesError("a rule must be a mapping with 'id', 'severity', 'reason', 'in' and 'patterns'", line)
    rule_id = raw.get("id")
    if not isinstance(rule_id, str) or not _ID.match(rule_id):
        raise RulesError("'id' must be lower-case letters, digits and '-' (2 to 64 characters)", line)
    where = f"rule '{rule_id}'"
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise RulesError(f"{where}: unknown field '{unknown[0]}'; the fields are {', '.join(sorted(_FIELDS))}", line)
    severity = raw.get("severity")
    if severity not in ("error", "warning"):
        raise RulesError(f"{where}: 'severity' must be 'error' (quarantine) or 'warning' (report only)", line)
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise RulesError(f"{where}: 'reason' is required: say why this text should not reach an agent", line)
    views = _strings(raw.get("in"), "in", line)
    bad = [v for v in views if v not in VIEWS]
    if not views or bad:
        raise RulesError(f"{where}: 'in' must list views among {', '.join(VIEWS)}", line)
    check = raw.get("check")
    if check is not None and check not in CHECKS:
        raise RulesError(f"{where}: unknown check {check!r}; known: {', '.join(sorted(CHECKS))}", line)
    rule_anchors = _anchor_groups(raw.get("anchors"), line)
    shared = Anchors.of(rule_anchors)
    sources, own_anchors = _patterns(raw.get("patterns"), line)
    if not sources and check is None:
        raise RulesError(f"{where}: 'patterns' is required (or a built-in 'check')", line)
    folded = any(v in FOLDED_VIEWS for v in views)
    if folded and any(v not in FOLDED_VIEWS for v in views) and sources:
        raise RulesError(f"{where}: 'in' mixes folded views with 'target'/'raw'; make two rules", line)
    try:
        patterns = tuple(compile_pattern(p, terms, folded) for p in sources)
        squeezed = tuple(compile_pattern(p, terms, True, squeeze=True) for p in sources) if folded else ()
    except re.error as exc:
        raise RulesError(f"{where}: a pattern is not a valid regular expression: {exc}", line) from None
    except RulesError as exc:
        raise RulesError(f"{where}: {exc}", line) from None
    return Rule(
        id=rule_id,
        severity=severity,
        reason=" ".join(reason.split()),
        what=" ".join(str(raw.get("what") or "").split()),
        views=views,
        patterns=patterns,
        squeezed=squeezed,
        anchors=rule_anchors,
        pattern_anchors=tuple(Anchors.of(own) if own is not None else shared for own in own_anchors),
        not_after=frozenset(w.lower() for w in _strings(raw.get("not_after"), "not_after", line)),
        unless=_strings(raw.get("unless"), "unless", line),
        check=check,
        examples=_strings(raw.get("examples"), "examples", line),
        counterexamples=_strings(raw.get("counterexamples"), "counterexamples", line),
        source=source,
        line=line,
    )


class _LineLoader(yaml.SafeLoader):
    """Records each mapping's line as `__line__`, so errors can point at the rule."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def parse_rules(text: str, source: str, base: RuleSet | None = None) -> RuleSet:
    """A rules file's text (YAML, or JSON, which YAML reads) as a RuleSet; RulesError if unusable.

    `base` (the built-in rules, for a team's file) lends its terms and the IDs `unless` may name.
    """
    try:
        doc = yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RulesError(
            f"not valid YAML or JSON: {getattr(exc, 'problem', None) or exc}", mark.line + 1 if mark else 1
        ) from None
    except RecursionError:
        raise RulesError("nested too deeply") from None
    if not isinstance(doc, dict):
        raise RulesError("a rules file is a mapping with 'version: 1' and 'rules'")
    doc.pop("__line__", None)
    if doc.get("version") not in (1, "1"):
        raise RulesError("'version' must be 1")
    unknown = sorted(set(doc) - {"version", "terms", "rules"})
    if unknown:
        raise RulesError(f"unknown field '{unknown[0]}'; a rules file has 'version', 'terms' and 'rules'")
    raw_terms = doc.get("terms") or {}
    if not isinstance(raw_terms, dict):
        raise RulesError("'terms' must map names to regular expressions")
    raw_terms.pop("__line__", None)
    terms = dict(base.terms) if base else {}
    for name, value in raw_terms.items():
        if not isinstance(name, str) or not re.match(r"^[a-z][a-z0-9_]*$", name) or not isinstance(value, str):
            raise RulesError(f"term {name!r}: names are lower-case words and values regular expressions")
        terms[name] = _joined(value)
    raw_rules = doc.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise RulesError("'rules' must be a non-empty list")
    rules: list[Rule] = []
    for raw in raw_rules:
        rule = build_rule(raw, terms, source)
        if any(r.id == rule.id for r in rules):
            raise RulesError(f"rule '{rule.id}' is defined twice", rule.line)
        rules.append(rule)
    known = {r.id for r in rules} | (base.ids() if base else set())
    for rule in rules:
        for other in rule.unless:
            if other not in known:
                raise RulesError(f"rule '{rule.id}': 'unless' names unknown rule '{other}'", rule.line)
    return RuleSet(tuple(rules), terms)


@lru_cache(maxsize=1)
def builtin_rules() -> RuleSet:
    text = resources.files(__package__).joinpath("rules.yaml").read_text(encoding="utf-8")
    return parse_rules(text, BUILTIN)


def load_rules_file(path: Path, relpath: str, builtin: RuleSet) -> tuple[RuleSet | None, list[Diagnostic]]:
    """A team's rules file, with the built-in terms available; its IDs must not reuse built-in ones."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [error(relpath, 1, "rules file not found", "trust-rules-invalid")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [error(relpath, 1, f"cannot read this rules file: {exc}", "trust-rules-invalid")]
    try:
        extra = parse_rules(text, relpath, builtin)
    except RulesError as exc:
        return None, [error(relpath, exc.line, str(exc), "trust-rules-invalid")]
    clash = [r for r in extra.rules if builtin.get(r.id)]
    if clash:
        rule = clash[0]
        msg = f"rule '{rule.id}' is a built-in rule; give yours another ID (disable the built-in one to replace it)"
        return None, [error(relpath, rule.line, msg, "trust-rules-invalid")]
    return extra, []
