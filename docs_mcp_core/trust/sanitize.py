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

from .chars import strip_invisible
from .views import _TAG, _UNRENDERED, Removed, removed_ranges


def visible_markdown(text: str, removed: Removed | None = None) -> str:
    """`text` as a reader sees it (see the module docstring). `removed`: what the lexer takes out of `text`
    (views.py `Views.removed`), when the caller has it already (the scan took the text apart)."""
    while True:  # until nothing changes: a removal can bring the two halves of a construct together
        if removed is not None:
            out = strip_invisible(_cut(text, removed) if removed else text)
            removed = None
        else:
            out = strip_invisible(_without_hidden(text) if _may_hide(text) else text)
        if out == text:
            return out
        text = out


def _may_hide(text: str) -> bool:
    """Whether `text` has what anything the lexer takes out starts with: a comment, or a tag (read as the
    lexer reads one) that is a script, style or template, or whose attributes mention `hidden` or `style`.
    Text without any is not taken apart: it can lose only invisible characters. Every tag the lexer
    reads starts at a `<` and is matched there by the same pattern, so trying each `<` misses none (it
    also tries some the lexer skips, in code or as autolinks: those only cost a lexing)."""
    if "<" not in text:
        return False
    if "<!--" in text:
        return True
    match, find = _TAG.match, text.find
    at = find("<")
    while at >= 0:
        tag = match(text, at)
        if tag is not None and not tag.group(1):
            if tag.group(2).lower() in _UNRENDERED:
                return True
            attrs = tag.group(3).lower()
            if "hidden" in attrs or "style" in attrs:
                return True
        at = find("<", at + 1)
    return False


def _without_hidden(text: str) -> str:
    return _cut(text, removed_ranges(text))


def _cut(text: str, removed: Removed) -> str:
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
