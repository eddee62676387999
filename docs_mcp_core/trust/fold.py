"""Text folded for matching: what a word reads as, whatever it is spelt with.

Rules match folded text: lower case; accents, full-width and mathematical letters reduced
to plain Latin (NFKD); Cyrillic and Greek look-alikes mapped to the Latin letters they
imitate; HTML entities decoded; invisible characters gone; emphasis, code and escape marks
(`*_~` and backticks) and apostrophes deleted, so `ig**no**re` and `don't` read `ignore`
and `dont`; punctuation inside a word deleted (`i.g.n.o.r.e`, `ig-nore`); other punctuation
a space, except `, . : ; ! ?` before a space, which stay (a vocative needs its comma);
words separated by one space, or by a newline where a line ended. Letters spaced out
(`i g n o r e   a l l`) are joined, into words where the gaps between words differ
from the commonest gap.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

from .chars import _ANY as _INVISIBLE
from .chars import has_invisible

# Cyrillic, Greek and a few Latin-extended letters that are drawn like a Latin letter
# (after Unicode's confusables list, restricted to the unambiguous ones).
_CONFUSABLES = str.maketrans(
    {
        **dict(zip("АВСЕНІЈКМОРЅТХУҮԀԚԜӀ", "ABCEHIJKMOPSTXYYDQWI", strict=True)),
        **dict(zip("асеһіјкоросѕхуүԁԛԝӏ", "acehijkopocsxyydqwl", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
        **dict(zip("αοριкνυχεγωη", "aopikvuxeywn", strict=True)),
        **dict(zip("ɡցոսօℓıȷ", "ggnuolij", strict=True)),
    }
)
# Only the look-alikes present are replaced: `str.translate` with a table looks up every character.
_CONFUSABLES_CHARS = frozenset(chr(c) for c in _CONFUSABLES)
_LOOK_ALIKE = re.compile("[" + "".join(sorted(_CONFUSABLES_CHARS)) + "]")
_MARKS = re.compile("[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# Patterns start with a character class or a literal, which lets the regex engine skip ahead
# (a lookbehind or an alternation first would not): this runs on every chunk of every build.
_INSIDE_WORD = re.compile(r"[-./|+:=#@^&](?<=[a-z0-9].)[-./|+:=#@^&]*(?=[a-z0-9])")
_OPEN_PUNCTUATION = re.compile(r"[,.:;!?](?=[^\s,.:;!?])")
_SPACED_LETTERS = re.compile(r" [a-z0-9][ \t]+[a-z0-9][ \t]+[a-z0-9](?![a-z0-9])")  # a cheap test before _LETTERS
_LETTERS = re.compile(r"[ \n][a-z0-9](?:[ \t]+[a-z0-9](?![a-z0-9])){2,}")  # read with a space put in front
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
_MARKUP = b"*_~`\\\x00'"
_KEPT = b"abcdefghijklmnopqrstuvwxyz0123456789\n ,.:;!?"
_PUNCTUATION = bytes(c if c in _KEPT or c in _MARKUP else 32 for c in range(256))  # the rest of ASCII: a space


def _look_alike(m: re.Match[str]) -> str:
    return _CONFUSABLES[ord(m.group())]


def _letters(run: str, joined: list[str]) -> str:
    gaps = re.findall(r"[ \t]+", run)
    widths = [len(g) for g in gaps]
    inside = max(set(widths), key=lambda w: (widths.count(w), -w))  # the commonest gap is between letters
    if any(w != inside for w in widths):
        return re.sub(r"[ \t]+", lambda g: "" if len(g.group()) == inside else " ", run)
    word = run.replace(" ", "").replace("\t", "")
    joined.append(word)
    return word


def fold(text: str) -> str:
    """`text` as rules read it (see the module docstring)."""
    return fold_joined(text)[0]


def fold_joined(text: str) -> tuple[str, list[str]]:
    """`fold`, and the runs of spaced-out letters it joined without knowing where words end
    (`i g n o r e a l l`): rules read those without spaces between words."""
    words, joined = fold_words(text)
    return spaced(words), joined


def fold_words(text: str) -> tuple[str, list[str]]:
    """`fold_joined` before its spacing is made regular: the same words (ASCII, split by spaces and
    newlines) with any spaces and newlines between them. Enough to know which words a text has."""
    joined: list[str] = []
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    if not text.isascii():
        if has_invisible(text):
            text = _INVISIBLE.sub("", text)
        text = unicodedata.normalize("NFKD", text)
        text = _LOOK_ALIKE.sub(_look_alike, _MARKS.sub("", text))
        text = text.replace("\u2018", "'").replace("\u2019", "'").replace("\u02bc", "'")
        text = _NOT_ASCII.sub(" ", text.lower())  # letters of other scripts: not words rules know
    text = text.lower()
    if "://" in text:  # a URL's scheme is a word of its own
        text = text.replace("://", " ")
    text = _INSIDE_WORD.sub("", text.encode().translate(None, _MARKUP).decode())
    text = _OPEN_PUNCTUATION.sub(" ", text.encode().translate(_PUNCTUATION).decode())
    if _SPACED_LETTERS.search(" " + text):
        text = _LETTERS.sub(lambda m: m.group()[0] + _letters(m.group()[1:], joined), " " + text)
    return text, joined


# `quick_words`: one pass over the bytes that deletes markup and every mark that folding deletes between
# letters, lower-cases, and makes everything else a space.
_INSIDE = b"-./|+:=#@^&"
_QUICK_DELETE = _MARKUP + _INSIDE
_QUICK_MAP = bytes(
    c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() and c < 128 or c == 10 else 32 for c in range(256)
)
_LONE_LETTERS = re.compile(rb" [a-z0-9] +[a-z0-9](?![a-z0-9])")  # two one-letter words apart: maybe spaced out


def quick_words(text: str, among: frozenset[str]) -> tuple[frozenset[str], str] | None:
    """Those of `among` that are words `fold_words` finds in `text` (and a text with all its words, space
    apart, to look for a part of a word in), without folding it; None when this cannot tell: text that is
    not ASCII, has an entity, or has one-letter words that folding might join.

    The same words: folding an ASCII text without entities only lower-cases it, deletes markup, deletes a
    run of `_INSIDE` marks between two letters or digits and makes every other character that is not
    one a space or a separator, so its words are the runs of letters and digits left by the first
    deletions. Deleting every `_INSIDE` mark instead joins nothing more: a run not between two letters or
    digits has a separator or an end beside it. Letters spaced out (`_SPACED_LETTERS`) would be
    joined; they have two one-letter words with only separators between, which this text keeps apart by
    at least a space, so `_LONE_LETTERS` finds them (and more). Text that is not ASCII is read so too when
    folding only makes a space of each such character (`_separator_only`)."""
    if not text.isascii():
        ascii_text = _spaced_out(text)
        if ascii_text is None:
            return None
        text = ascii_text
    if "&" in text and _ENTITY.search(text):
        return None
    if "://" in text:
        text = text.replace("://", " ")
    data = text.encode().translate(_QUICK_MAP, _QUICK_DELETE)
    if _LONE_LETTERS.search(data):
        return None
    plain = data.decode()
    return among.intersection(plain.split()), plain


@lru_cache(maxsize=4096)
def _separator_only(ch: str) -> bool:
    """Whether folding turns `ch` (not ASCII) into spaces and nothing else: no normalization, mark, look-alike,
    quote or invisible character (symbols, emoji, dashes, curly double quotes, letters of other scripts). Nor
    a combining character, which normalizing could move, nor one whose lower case has ASCII in it (none that
    normalizing leaves alone does today)."""
    return (
        unicodedata.normalize("NFKD", ch) == ch
        and not unicodedata.combining(ch)
        and ch not in _CONFUSABLES_CHARS
        and ch not in "\u2018\u2019\u02bc"
        and not _MARKS.match(ch)
        and not has_invisible(ch)
        and not any(c.isascii() for c in ch.lower())
    )


def _spaced_out(text: str) -> str | None:
    """`text` with each character that is not ASCII a space, when folding makes spaces of them all; else None."""
    if all(map(_separator_only, set(_NOT_ASCII.findall(text)))):
        return _NOT_ASCII.sub(" ", text)
    return None


def spaced(words: str) -> str:
    """`fold_words`'s text as `fold` gives it: words one space apart, a newline where a line ended."""
    return "\n".join(" ".join(line_words) for line in words.split("\n") if (line_words := line.split()))
