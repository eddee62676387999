"""Each chunk's `source_url`: the page a file was made from, with the anchor of the chunk's heading.

Files staged from a website name their page and its heading anchors in frontmatter
(`source_url`, `source_anchors`); a page of a docs framework whose config names the site's URL gets
its published URL and the framework's heading ids (corpus/site.py); other files have none, and their
chunks no source_url.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

from ..corpus.markdown import top_level_blocks
from ..corpus.site import SiteContext, heading_ids, page_url
from ..output.chunk import Chunk
from .ids import PREAMBLE

if TYPE_CHECKING:
    from markdown_it.token import Token

_NOISE = re.compile(r"[\s`*_\\]+")
_PART = re.compile(r"-part-\d+$")


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
    previous: tuple[str, str | None] = ("", None)  # (chunk ID, anchor) of the last section: its parts share it
    for chunk in chunks:
        anchor = None
        if _PART.sub("", chunk.chunk_id) == previous[0]:
            anchor = previous[1]
        elif chunk.heading and "#" in chunk.chunk_id and not chunk.chunk_id.endswith("#" + PREAMBLE):
            key = heading_key(chunk.heading)
            for i in range(at, len(anchors)):
                if anchors[i][0] == key:
                    anchor, at = anchors[i][1], i + 1
                    break
        previous = (_PART.sub("", chunk.chunk_id), anchor)
        out.append(dataclasses.replace(chunk, source_url=f"{page}#{anchor}" if anchor else page))
    return out


def site_anchors(site: SiteContext, tokens: list[Token]) -> list[tuple[str, str]]:
    """(heading key, fragment) of a page's top-level headings, as its framework publishes them."""
    headings = [b for b in top_level_blocks(tokens) if b.heading_level]
    texts = [b.heading_text for b in headings]
    explicit = [b.first.attrGet("id") for b in headings]
    ids = heading_ids(site, [(t, str(e) if e else None) for t, e in zip(texts, explicit)])
    return [(heading_key(t), i) for t, i in zip(texts, ids)]


def with_site_urls(
    chunks: list[Chunk], site: SiteContext | None, relpath: str, page: dict[str, Any], tokens: list[Token]
) -> list[Chunk]:
    """`chunks` with the published URL of their page and heading, when the framework's config names the site."""
    url = page_url(site, relpath, page) if site is not None else None
    if not url or site is None:
        return chunks
    return with_source_urls(chunks, url, site_anchors(site, tokens))
