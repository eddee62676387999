"""Characters a reader cannot see, and the few places where such a character does visible work.

A zero-width joiner inside an emoji sequence (👩‍💻), a zero-width non-joiner or a
direction mark between Persian or Hindi letters, a variation selector after a symbol, and
the tag characters of a subdivision flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿) change what is drawn: they stay. Anywhere
else these characters only hide things (text split to dodge a filter, a message encoded in
zero-width characters or tag characters, bidirectional overrides that reorder what is shown).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Bidirectional embeddings, overrides and isolates: they reorder what is drawn.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Direction marks: invisible, legitimate next to right-to-left letters.
DIRECTION_MARKS = "\u200e\u200f\u061c"
JOINERS = "\u200c\u200d"  # zero-width non-joiner, zero-width joiner
VARIATION_SELECTORS = "\ufe00-\ufe0f"
TAGS = "\U000e0000-\U000e007f"
VARIATION_SUPPLEMENT = "\U000e0100-\U000e01ef"
# Always invisible, never needed in documentation text.
OTHER_INVISIBLE = (
    "\u00ad"  # soft hyphen
    "\u034f"  # combining grapheme joiner
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers (drawn as blank letters)
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u180b-\u180f"  # Mongolian selectors and vowel separator
    "\u200b"  # zero-width space
    "\u2060-\u2064"  # word joiner, invisible operators
    "\u206a-\u206f"  # deprecated format characters
    "\ufeff"  # byte order mark / zero-width no-break space
    "\ufff9-\ufffb"  # interlinear annotation
    "\U0001d173-\U0001d17a"  # musical formatting
)
_INVISIBLE_SET = (
    f"{BIDI_CONTROLS}{DIRECTION_MARKS}{JOINERS}{VARIATION_SELECTORS}{TAGS}{VARIATION_SUPPLEMENT}{OTHER_INVISIBLE}"
)
_ANY = re.compile(f"[{_INVISIBLE_SET}]")


def _utf8(body: str) -> re.Pattern[bytes]:
    """The character class `[body]` (characters and ranges) as a pattern over UTF-8: the encodings of its
    characters, grouped by all but their last byte. A match starts at a lead byte, never inside a character."""
    points: list[int] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            points.extend(range(ord(body[i]), ord(body[i + 2]) + 1))
            i += 3
        else:
            points.append(ord(body[i]))
            i += 1
    by_lead: dict[bytes, set[int]] = {}
    for point in points:
        encoded = chr(point).encode()
        by_lead.setdefault(encoded[:-1], set()).add(encoded[-1])
    return re.compile(
        b"|".join(
            re.escape(lead) + b"[" + b"".join(re.escape(bytes([b])) for b in sorted(last)) + b"]"
            for lead, last in sorted(by_lead.items())
        )
    )


# `_ANY` over a text's UTF-8 bytes: in text that is mostly ASCII the search skips to lead bytes and costs about
# half of `_ANY`'s over the text, and nearly every text tested has no invisible character.
_ANY_UTF8 = _utf8(_INVISIBLE_SET)
_FLAG_TAGS = re.compile("\U0001f3f4([\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,8}\U000e007f)")


def has_invisible(text: str) -> bool:
    """Cheap test first: most chunks are ASCII and have none."""
    return not text.isascii() and _ANY_UTF8.search(text.encode("utf-8", "surrogatepass")) is not None


def _pictographic(ch: str) -> bool:
    if not ch:
        return False
    o = ord(ch)
    return (
        0x2190 <= o <= 0x2BFF
        or 0x1F000 <= o <= 0x1FAFF
        or o in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D, 0x3297, 0x3299, 0xFE0F, 0x20E3)
    )


def _script_letter(ch: str) -> bool:
    """A letter of a script that joins or runs right to left (not Latin, where these do nothing)."""
    return ch.isalpha() and not ch.isascii() and ord(ch) >= 0x0590


def _ideograph(ch: str) -> bool:
    if not ch:
        return False
    o = ord(ch)
    return 0x3400 <= o <= 0x9FFF or 0x20000 <= o <= 0x3134F or 0xF900 <= o <= 0xFAFF


def _visible_work(text: str, i: int, ch: str) -> bool:
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch == "\u200d":  # emoji ZWJ sequences; joining scripts
        return (_pictographic(before) and _pictographic(after)) or (_script_letter(before) and _script_letter(after))
    if ch == "\u200c":
        return _script_letter(before) and _script_letter(after)
    if ch in DIRECTION_MARKS:
        return _script_letter(before) or _script_letter(after)
    if "\ufe00" <= ch <= "\ufe0f":  # text/emoji presentation of the symbol before it
        return before != "" and (not before.isascii() or before in "0123456789#*")
    if "\U000e0100" <= ch <= "\U000e01ef":  # ideographic variation sequences
        return _ideograph(before)
    return False


def invisible_spans(text: str) -> Iterator[tuple[int, int]]:
    """Spans of characters that draw nothing and do no visible work, in order, merged when adjacent."""
    if not has_invisible(text):
        return
    keep: set[int] = set()
    if "\U0001f3f4" in text:  # a flag's tag characters follow a black flag
        for m in _FLAG_TAGS.finditer(text):
            keep.update(range(m.start(1), m.end(1)))
    start = end = -1
    for m in _ANY.finditer(text):
        i = m.start()
        if i in keep or _visible_work(text, i, m.group()):
            continue
        if i == end:
            end = i + 1
            continue
        if start >= 0:
            yield start, end
        start, end = i, i + 1
    if start >= 0:
        yield start, end


def strip_invisible(text: str) -> str:
    """`text` without the characters of `invisible_spans`."""
    if text.isascii():
        return text
    out: list[str] = []
    last = 0
    for start, end in invisible_spans(text):
        out.append(text[last:start])
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def kind(ch: str) -> str:
    """Which family an invisible character is, for the rules that name them."""
    if ch in BIDI_CONTROLS:
        return "bidi"
    if "\U000e0000" <= ch <= "\U000e007f":
        return "tag"
    return "invisible"


def show(text: str) -> str:
    """`text` safe to print: invisible and control characters as <U+XXXX>, so a terminal draws them."""
    out = []
    for ch in text:
        o = ord(ch)
        if _ANY.match(ch) or (o < 0x20 and ch not in "\n\t") or 0x7F <= o < 0xA0 or ch in "\u2028\u2029":
            out.append(f"<U+{o:04X}>")
        else:
            out.append(ch)
    return "".join(out)
