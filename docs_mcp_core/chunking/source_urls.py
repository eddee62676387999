"""Each chunk's `source_url`: the page a file was made from, with the anchor of the chunk's heading.

Files staged from a website name their page and its heading anchors in frontmatter
(`source_url`, `source_anchors`); other files have none, and their chunks no source_url.
"""

from __future__ import annotations

import dataclasses
import re

from ..models import Chunk
from .ids import PREAMBLE

_NOISE = re.compile(r"[\s`*_\\]+")


def heading_key(text: str) -> str:
    """How a heading is matched between the HTML page and the chunker's plain heading text."""
    return _NOISE.sub(" ", text).strip().casefold()


def with_source_urls(chunks: list[Chunk], url: str | None, anchors: list[tuple[str, str]]) -> list[Chunk]:
    """`chunks` (in file order) with source_url set: the page URL, plus `#anchor` for a chunk whose
    heading the page has an anchor for (matched in page order, so repeated headings get their own)."""
    if not url:
        return chunks
    page = url.split("#", 1)[0]
    out: list[Chunk] = []
    at = 0
    for chunk in chunks:
        anchor = None
        if chunk.heading and "#" in chunk.chunk_id and not chunk.chunk_id.endswith("#" + PREAMBLE):
            key = heading_key(chunk.heading)
            for i in range(at, len(anchors)):
                if anchors[i][0] == key:
                    anchor, at = anchors[i][1], i
                    break
        out.append(dataclasses.replace(chunk, source_url=f"{page}#{anchor}" if anchor else page))
    return out
