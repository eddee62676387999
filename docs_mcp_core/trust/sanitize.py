"""The Markdown a human reader sees on the rendered page: what may be served to an agent.

Removed: HTML comments; elements hidden by style (display:none, visibility:hidden,
font-size:0, opacity:0, …) or by the `hidden` attribute, and script, style and template
elements, each with everything inside; invisible characters (zero-width characters, bidi
controls, tag characters, … see chars.py) everywhere, code included. Kept byte for byte:
everything else, including code blocks and code spans (a comment inside code is text the
reader sees), `aria-hidden` elements (drawn on the page, only hidden from screen readers),
image alt text and link titles (what screen readers and tooltips show; instructions in
them are the scan's business). A removed comment or hidden block that stood alone on its
lines leaves one empty line, so the paragraphs around it stay apart; a hidden inline
element alone on its line goes with its line break.

Pure and deterministic; `visible_markdown(visible_markdown(x)) == visible_markdown(x)`: it repeats
until nothing changes, as taking something out can join the halves of another hidden construct
(`<!<span hidden>x</span>-- … -->`). Every round shortens the text, so it ends.
"""

from __future__ import annotations

import re

from .chars import strip_invisible
from .views import split_views

# An attribute that can hide its element, in lower-cased text: a word of its own after a space
# (views.py `_hiding`; a literal first lets the search skip ahead).
_HIDDEN_ATTR = re.compile(r"hidden(?<=\shidden)(?![a-z0-9_.:-])")
_STYLE_ATTR = re.compile(r"style(?<=\sstyle)\s*=")
_OPENING = re.compile(rb"<(?:!--|script|style|template)")  # in lower-cased bytes


def visible_markdown(text: str) -> str:
    """`text` as a reader sees it (see the module docstring)."""
    while True:  # until nothing changes: a removal can bring the two halves of a construct together
        out = strip_invisible(_without_hidden(text) if _may_hide(text) else text)
        if out == text:
            return out
        text = out


def _may_hide(text: str) -> bool:
    """Whether `text` has what anything the lexer takes out starts with: a comment, a script, style or
    template tag, a `hidden` or `style` attribute. Names are ASCII, so its bytes in lower case find every
    spelling (no other character lower-cases into one of these names); the attribute tests read the text
    in lower case, where the lexer's whitespace is Unicode's. Text without any is not taken apart: it can
    lose only invisible characters."""
    if "<" not in text:
        return False
    if "<!--" in text:
        return True
    low = text.encode("utf-8", "surrogatepass").lower()  # a lone surrogate: bytes that are not ASCII
    return (
        _OPENING.search(low) is not None
        or (b"hidden" in low and _HIDDEN_ATTR.search(text.lower()) is not None)
        or (b"style" in low and _STYLE_ATTR.search(text.lower()) is not None)
    )


def _without_hidden(text: str) -> str:
    removed = split_views(text).removed
    if not removed:
        return text
    out: list[str] = []
    last = 0
    for start, end, block in sorted(removed):
        if start < last:
            continue
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        alone = not text[max(line_start, last) : start].strip() and not text[end:line_end].strip()
        if alone and line_start >= last:
            out.append(text[last:line_start])
            # a block leaves its line empty; an inline element's line goes, with its line break
            last = line_end if block or line_end == len(text) else line_end + 1
        else:
            out.append(text[last:start])
            last = end
    out.append(text[last:])
    return "".join(out)
