"""Random and mutated input: the scan and the sanitizer never raise, and stay deterministic and idempotent."""

import random
import re
from dataclasses import asdict

import pytest

from docs_mcp_core.trust import scan as scan_module
from docs_mcp_core.trust import views
from docs_mcp_core.trust.chars import _ANY, _ANY_UTF8, has_invisible, invisible_spans
from docs_mcp_core.trust.fold import fold_words, quick_words, spaced
from docs_mcp_core.trust.rules import builtin_rules
from docs_mcp_core.trust.sanitize import _may_hide, visible_markdown
from docs_mcp_core.trust.scan import reads_nothing, scan, scan_removed
from docs_mcp_core.trust.views import split_views

from ..conftest import EXAMPLE_DOCS, FIXTURES

PIECES = [
    "`",
    "``",
    "```",
    "~~~",
    "<!--",
    "-->",
    "<",
    ">",
    "</",
    "<div hidden>",
    "</div>",
    '<span style="display:none">',
    "</span>",
    "<script>",
    "</script>",
    '<a href="javascript:x" title="t">',
    "</a>",
    '<img alt="a" src="data:x">',
    "![",
    "[",
    "]",
    "(",
    ")",
    "](",
    '"',
    "'",
    "\\",
    "*",
    "_",
    "&#105;",
    "&amp;",
    "&",
    "\n",
    "\n\n",
    "    ",
    "\t",
    "\u200b",
    "\u200d",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\U000e0041",
    "\U000e007f",
    "\U0001f3f4",
    "\ufe0f",
    "\U000e0100",
    "і",
    "а",
    "ｉ",
    "é",
    "\x00",
    "\r",
    "ignore",
    "previous",
    "instructions",
    "AI",
    "agents",
    ":",
    "you are now",
    "note to ai agents:",
    "run",
    "curl",
    "system prompt",
    "- ",
    "1. ",
    "> ",
    "# ",
    "|",
    "---",
]
PAGES = [p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "trust").rglob("*.md"))[::3]]
PAGES += [p.read_text(encoding="utf-8") for p in sorted(EXAMPLE_DOCS.rglob("*.md"))[:10]]


def _random_text(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(0, 60)):
        if rng.random() < 0.7:
            out.append(rng.choice(PIECES))
        else:
            out.append(
                "".join(
                    chr(rng.randint(0, 0x2FFF if rng.random() < 0.9 else 0xE01EF)) for _ in range(rng.randint(1, 8))
                )
            )
    return "".join(out)


def _mutated(rng: random.Random) -> str:
    text = rng.choice(PAGES)
    for _ in range(rng.randint(1, 8)):
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        op = rng.random()
        if op < 0.3:
            text = text[:i] + text[j:]  # cut
        elif op < 0.6:
            text = text[:i] + rng.choice(PIECES) + text[i:]  # insert markup
        elif op < 0.8:
            text = text[:i] + text[i:j] * 2 + text[j:]  # duplicate
        else:
            text = text[:i] + text[i:j][::-1] + text[j:]  # reverse a slice
    return text


def _check(text: str) -> None:
    first = scan(text)
    assert scan(text) == first
    for f in first:
        assert f.line >= 1 and f.count >= 1 and f.severity in ("error", "warning")
    out = visible_markdown(text)
    assert visible_markdown(out) == out
    assert list(invisible_spans(out)) == [] and split_views(out).removed == []


@pytest.mark.parametrize("seed", range(4))
def test_random_text(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        _check(_random_text(rng))


@pytest.mark.parametrize("seed", range(4))
def test_mutated_pages(seed: int) -> None:
    rng = random.Random(1000 + seed)
    for _ in range(150):
        _check(_mutated(rng))


def test_pathological_sizes() -> None:
    for text in (
        "`" * 5000,
        "<" * 5000,
        "[" * 3000 + "]" * 3000,
        "<!--" * 2000,
        "a " * 20000,
        "\u200b" * 10000,
        "```\n" * 2000,
        "<div hidden>" * 1000,
        "![" * 2000 + "](",
        "&#105;" * 3000,
    ):
        _check(text)


SHORT = "ab c\n\t-./|+:=#@^&*_~`\\'\0,.:;!?()[]<>\"AZ19 "
# Characters that are not ASCII: ones folding only makes spaces of (quick_words reads those), and ones it
# maps, deletes or decomposes (a look-alike, a curly apostrophe, an ellipsis, an accent, the Kelvin sign …).
NOT_ASCII = "÷→–“文⬆👷\u0391\u0430\u2019…\u00a0\u200b\u0130\u212a\u0301çﬁ\u00b2"


def _same_words(text: str) -> bool:
    """quick_words, when it answers, gives the words folding gives, and a part of a word is in its text exactly
    when it is in the folded text."""
    folded, joined = fold_words(text)
    words = set(folded.translate(str.maketrans(",.:;!?", "      ")).split())
    quick = quick_words(text, frozenset(words) | {"ai", "ab", "c"})
    if quick is None:
        return False
    found, plain = quick
    assert found == words and not joined, text
    parts = {w[i:j] for w in words for i in range(len(w)) for j in range(i + 1, len(w) + 1)}
    assert all((p in plain) == (p in spaced(folded)) for p in parts | {"ai", "ab", "a1"}), text
    return True


@pytest.mark.parametrize("seed", range(2))
def test_quick_words_are_folded_words(seed: int) -> None:
    rng = random.Random(2000 + seed)
    texts = ["".join(rng.choice(SHORT) for _ in range(rng.randint(1, 16))) for _ in range(3000)]
    texts += ["".join(rng.choice(SHORT + NOT_ASCII * 2) for _ in range(rng.randint(1, 16))) for _ in range(3000)]
    words = ["ab", "cd", "a", "AI", "9", " ", "-"]
    texts += ["".join(rng.choice(words) + rng.choice(NOT_ASCII) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    texts += [_mutated(rng) for _ in range(100)] + [_random_text(rng) for _ in range(100)] + PAGES
    answered = [t for t in texts if _same_words(split_views(t, shorten=True).prose)]
    assert len(answered) > len(texts) // 3  # it answers for much of the text, so the comparison is not empty
    assert sum(not t.isascii() for t in answered) > 150  # text that is not ASCII too


TICKS = ["`", "``", "```", "\n", "\n\n", " ", "a", "\\", "[", "](", ")", "<!--", "-->", "~~~", "<b>", "</b>"]


@pytest.mark.parametrize("seed", range(2))
def test_one_backtick_spans_are_read_as_ticks_reads_them(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The token pattern's first alternative reads a one-backtick code span whole; without it, `_ticks` reads
    every backtick run. Both must take any text apart the same way."""
    rng = random.Random(3000 + seed)
    texts = ["".join(rng.choice(TICKS) for _ in range(rng.randint(1, 24))) for _ in range(3000)]
    texts += [_mutated(rng) for _ in range(100)] + PAGES

    def taken_apart() -> list[str]:
        return [repr(asdict(split_views(t, shorten=shorten))) for t in texts for shorten in (False, True)]

    fast = taken_apart()
    first, rest = views._TOKEN.pattern.split("|", 1)
    assert "(?P<span>" in first
    monkeypatch.setattr(views, "_TOKEN", re.compile(rest))
    assert taken_apart() == fast
    assert sum(bool(split_views(t).code_spans) for t in texts) > len(texts) // 10  # spans are there to compare


# Words and the markup that can join, split or hide them: a chunk `reads_nothing` passes must give the scan
# nothing to run, however its words are put together.
NOTHING = [
    "ig",
    "nore",
    "user",
    "s",
    "gpt",
    "4",
    "i",
    "g",
    "a",
    "n",
    "ai",
    "model",
    "x",
    "not",  # words that a pattern needs together with an anchor word above (rules.yaml: anchor groups)
    "tell",
    "te",
    "ll",
    "hide",
    "you",
    "now",
    "from",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "-",
    ".",
    ":",
    "*",
    "_",
    "`",
    "```",
    "```\n",
    "~~~\n",
    "\n1. ",
    "\\",
    "'",
    "<b>",
    "</b>",
    "<!--",
    "-->",
    "[",
    "]",
    "](x)",
    "]: x",
    "![",
    "(",
    ")",
    "&#105;",
    "&amp;",
    "://",
    "\u200b",
    "\u0456",
    "|",
]


def _runs_nothing(text: str) -> bool:
    """Whether the scan, taking `text` apart, would run no rule on it (stronger than finding nothing)."""
    state = scan_module._Scan(text, builtin_rules())
    plan, v = state.rules.plan, state.views
    if v.comments or v.hidden or v.alt or v.titles or v.targets or has_invisible(text):
        return False
    return all(
        not plan.runnable("prose", f.words, f.anchor_text(plan)) and not f.joined
        for f in state.folded_segments("prose")
    )


@pytest.mark.parametrize("seed", range(2))
def test_a_chunk_that_reads_nothing_runs_no_rule(seed: int) -> None:
    rng = random.Random(4000 + seed)
    plan = builtin_rules().plan
    texts = ["".join(rng.choice(NOTHING) for _ in range(rng.randint(1, 14))) for _ in range(12000)]
    texts += [_mutated(rng) for _ in range(100)] + PAGES
    passed = [t for t in texts if reads_nothing(t, plan)]
    assert [t for t in passed if not _runs_nothing(t)] == []
    assert len(passed) > len(texts) // 10  # it passes enough text for the comparison to mean something
    assert sum(not _runs_nothing(t) for t in texts) > len(texts) // 4  # and much text would run a rule


def test_a_chunk_whose_anchor_words_meet_no_pattern_is_not_taken_apart() -> None:
    """Common anchor words (`user`, `now`, `no`) without the words their patterns need with them let a short
    chunk through: one anchor word is not enough for any pattern to run."""
    plan = builtin_rules().plan
    text = "## Cancel\n\nThe user can cancel the request now; no retry is made."
    found = quick_words(text, plan.vocabulary["prose"])
    assert found is not None and {"user", "now", "no"} <= found[0]
    assert reads_nothing(text, plan)
    assert scan(text) == []


# Tags that hide their content or only look as if they might, spelt in every case and spacing, and what a scan
# shortens (runs of spaces and dashes) next to them.
HIDING = [
    "<div hidden>",
    "<DIV\nHIDDEN>",
    "<p hidden=''>",
    "<span\tstyle='display:none'>",
    '<b STYLE = "font-size:0">',
    '<i style="color:red">',
    "<script>",
    "<ScRiPt type=x>",
    "<style>",
    "<TEMPLATE>",
    "<template/>",
    "</script>",
    "</div>",
    "</span>",
    '<a aria-hidden="true">',
    "<img hidden src=x>",
    "<br/>",
    "<b>",
    "<hidden>",
    "<x-hidden>",
    "<div data-hidden>",
    "<!--",
    "-->",
    "`",
    "```\n",
    "<",
    ">",
    "x",
    " ",
    "      ",
    "------",
    "     ---",
    "-" * 12,
    "\n",
    "\n\n",
    "\u200b",
    "\u0130",
]


def _hiding_texts(rng: random.Random, n: int) -> list[str]:
    texts = ["".join(rng.choice(HIDING) for _ in range(rng.randint(1, 12))) for _ in range(n)]
    return texts + [_mutated(rng) for _ in range(100)] + [_random_text(rng) for _ in range(100)] + PAGES


@pytest.mark.parametrize("seed", range(2))
def test_text_the_lexer_takes_something_out_of_may_hide(seed: int) -> None:
    """`_may_hide` lets the sanitizer skip lexing a text; it must never say no where the lexer removes something."""
    texts = _hiding_texts(random.Random(5000 + seed), 6000)
    removes = [bool(split_views(t).removed) for t in texts]
    may = [_may_hide(t) for t in texts]
    assert [t for t, r, m in zip(texts, removes, may, strict=True) if r and not m] == []
    assert sum(removes) > len(texts) // 4 and may.count(False) > len(texts) // 10  # both answers are tested


@pytest.mark.parametrize("seed", range(2))
def test_what_the_scan_learnt_is_what_the_sanitizer_takes_out(seed: int) -> None:
    """The build hands the sanitizer what the scan's lexing found to take out of a chunk (scan_removed); it must
    be what the sanitizer's own lexing finds, and give the same visible text."""
    rng = random.Random(6000 + seed)
    texts = _hiding_texts(rng, 3000)
    known = 0
    for text in texts:
        removed = scan_removed(text)[1]
        if removed is None:
            continue
        known += bool(removed)
        assert removed == split_views(text).removed, text
        assert visible_markdown(text, removed) == visible_markdown(text), text
    assert known > len(texts) // 10
    shortened = [t for t in texts if split_views(t, shorten=True).text != t and split_views(t).removed]
    assert len(shortened) > len(texts) // 20  # ranges moved back through shortened runs are compared too


@pytest.mark.parametrize("seed", range(2))
def test_the_token_pattern_reads_a_tag_as_the_tag_pattern_does(seed: int) -> None:
    rng = random.Random(7000 + seed)
    tags = 0
    for text in _hiding_texts(rng, 3000):
        for m in views._TOKEN.finditer(text):
            if m.lastgroup == "tag":
                tag = views._TAG.match(m.group())
                assert tag is not None and tag.group() == m.group(), text
                assert tag.groups() == (m.group("close"), m.group("name"), m.group("attrs"), m.group("self")), text
                tags += 1
    assert tags > 5000


def test_the_utf8_search_finds_the_invisible_characters_the_class_does() -> None:
    """`has_invisible` searches a text's UTF-8 bytes (`_ANY_UTF8`, made from `_ANY`'s class); it must find
    exactly the characters `_ANY` finds, wherever they stand, lone surrogates included."""
    every = "".join(chr(c) for c in range(0x110000))
    found = [
        m.group().decode("utf-8", "surrogatepass") for m in _ANY_UTF8.finditer(every.encode("utf-8", "surrogatepass"))
    ]
    assert found == _ANY.findall(every) and len(found) > 400
    rng = random.Random(8000)
    near = [
        chr(c + d)
        for c in (0xAD, 0x34F, 0x61C, 0x200B, 0x2060, 0xFE00, 0xFEFF, 0xE0000, 0xE0100, 0x1D173)
        for d in (-1, 0, 1)
    ]
    for _ in range(3000):
        text = "".join(rng.choice([*near, "a", "é", "\ud800", "\U0001f3f4", "\n"]) for _ in range(rng.randint(0, 12)))
        assert has_invisible(text) == (_ANY.search(text) is not None), repr(text)
