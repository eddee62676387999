"""The one function that builds what a provider embeds; fingerprints hash the same text.

An embedding model reads only the start of a text (the bundled all-MiniLM-L6-v2: 128 word
pieces, see minilm/NOTICE.md), and mean pooling lets every token it reads pull on the vector. So the
embedded text leads with what the chunk is about: its heading path, then its prose and tables,
and its code blocks last. An SDK method's description then fills the vector instead of the
boilerplate of its usage example; the code still counts in full-text search, and in the vector
wherever the prose leaves room. Measured on every shipped suite (README, "How ranking works").
"""

from __future__ import annotations

import re

from ..models import Chunk

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})")


def code_blocks(markdown: str) -> list[str]:
    """The bodies of the fenced code blocks in a chunk's Markdown, as its content_text holds them."""
    blocks: list[str] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        i += 1
        if not opening:
            continue
        indent, fence = len(opening.group(1)), opening.group(2)
        body: list[str] = []
        while i < len(lines) and not lines[i].lstrip().startswith(fence):
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip())):])  # the fence's indent, as a list item has
            i += 1
        i += 1
        blocks.append("\n".join(body).strip("\n"))
    return [b for b in blocks if b.strip()]


def heading_path(chunk: Chunk) -> str:
    """The breadcrumb without its file path ("Links > createMany"); the path when there are no headings."""
    return chunk.breadcrumb.removeprefix(chunk.filepath + " > ")


def to_embedding_input(chunk: Chunk) -> str:
    """Heading path, the chunk's text with its code blocks cut out, then those code blocks."""
    text = chunk.content_text
    moved = []
    for block in code_blocks(chunk.content):
        at = text.find(block)
        if at >= 0:  # a block content_text holds differently stays where it is
            text = text[:at] + text[at + len(block):]
            moved.append(block)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return "\n\n".join(part for part in [heading_path(chunk), text, *moved] if part)
