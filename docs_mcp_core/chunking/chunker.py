"""Markdown → chunks with stable IDs (DESIGN.md §3), built on markdown-it-py tokens."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..corpus.manifest import Strategy
from ..corpus.markdown import MAX_HEADING_CHARS, Block, parser, top_level_blocks
from ..output.chunk import Chunk
from .ids import PREAMBLE, SlugRegistry, file_part_id, part_id, section_id, slugify
from .splitting import Piece, Unit, pack, part_plain, part_text, split_units

if TYPE_CHECKING:
    from markdown_it.token import Token

# Bump when chunk output changes for the same input: per-file chunk reuse keys on it (with the parsers'
# versions, chunker_version()). 3: docs dialects, includes and reStructuredText (corpus/dialects.py);
# 4: headings cut to MAX_HEADING_CHARS in what chunks carry; 5: chunks hold only the visible text (comments,
# hidden elements and invisible characters removed: indexing/quarantine.py).
CHUNKER_VERSION = "5"
PARSERS = ("markdown-it-py", "mdit-py-plugins", "docutils")
_TARGET_LEVEL = {"h1": 1, "h2": 2, "h3": 3}


@functools.lru_cache(maxsize=1)
def chunker_version() -> str:
    """CHUNKER_VERSION and the versions of the parsers it drives: upgrading a parser re-chunks every file."""
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for name in PARSERS:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} -")
    return f"{CHUNKER_VERSION} ({', '.join(found)})"


@dataclass
class Section:
    base_id: str
    kind: str  # "file" | "preamble" | "heading"
    heading: str
    level: int
    crumbs: list[str]  # breadcrumb after the filepath: ancestors, then the heading
    blocks: list[Block]
    start: int  # first line
    end: int  # line after the last


def _sections(filepath: str, blocks: list[Block], strategy: Strategy, title: str | None, n_lines: int) -> list[Section]:
    if not blocks:
        return []
    if strategy.chunk_by == "file":
        first = next((b for b in blocks if b.heading_level), None)
        heading = (title or "")[:MAX_HEADING_CHARS].rstrip() or (first.heading_text if first else "")
        return [Section(filepath, "file", heading, 0, [heading] if heading else [], blocks, 0, n_lines)]

    target = _TARGET_LEVEL[strategy.chunk_by]
    registry = SlugRegistry()
    stack: dict[int, tuple[str, str]] = {}  # level -> (text, slug) of the open heading
    starts: list[tuple[int, str, int, list[tuple[str, str]], str]] = []
    for i, block in enumerate(blocks):
        level = block.heading_level
        if not level:
            continue
        text = block.heading_text or "section"
        parent = tuple(stack[d][1] for d in sorted(stack) if d < level)
        slug = registry.claim(parent, slugify(text))
        stack = {d: v for d, v in stack.items() if d < level}
        stack[level] = (text, slug)
        # A chunk starts at each split-level heading, and also at a shallower heading that comes
        # after one and has text of its own: the reference would glue that text onto the
        # previous chunk. (A bare shallower heading, like a lone `# Development`, still is.)
        if level == target or (level < target and starts and _has_body(blocks, i, target)):
            ancestors = [stack[d] for d in sorted(stack) if d < level]
            starts.append((i, text, level, ancestors, slug))

    sections: list[Section] = []
    first_start = starts[0][0] if starts else len(blocks)
    if first_start > 0:
        pre = blocks[:first_start]
        first = next((b for b in pre if b.heading_level), None)
        heading = first.heading_text if first else ""
        end = blocks[first_start].start if first_start < len(blocks) else n_lines
        sections.append(
            Section(
                f"{filepath}#{PREAMBLE}",
                "preamble",
                heading,
                first.heading_level if first else 0,
                [heading] if heading else [],
                pre,
                0,
                end,
            )
        )
    for n, (i, text, level, ancestors, slug) in enumerate(starts):
        j = starts[n + 1][0] if n + 1 < len(starts) else len(blocks)
        end = blocks[j].start if j < len(blocks) else n_lines
        sections.append(
            Section(
                section_id(filepath, [s for _, s in ancestors] + [slug]),
                "heading",
                text,
                level,
                [t for t, _ in ancestors] + [text],
                blocks[i:j],
                blocks[i].start,
                end,
            )
        )
    return sections


def _has_body(blocks: list[Block], i: int, target: int) -> bool:
    """Whether heading i is followed by content before the next heading at or above the split level."""
    for block in blocks[i + 1 :]:
        if block.heading_level and block.heading_level <= target:
            return False
        if not block.heading_level:
            return True
    return False


def _units(section: Section, lines: list[str]) -> list[Unit]:
    units: list[Unit] = []
    trail: dict[int, str] = {}
    for k, block in enumerate(section.blocks):
        start = section.start if k == 0 else block.start
        end = section.blocks[k + 1].start if k + 1 < len(section.blocks) else section.end
        level = block.heading_level
        if level > section.level and k > 0:
            trail = {d: t for d, t in trail.items() if d < level}
            trail[level] = block.heading_text
        units.append(Unit(block, lines, start, end, tuple(trail[d] for d in sorted(trail))))
    return units


def _only_stubs(part: list[Piece]) -> bool:
    """A part holding API stubs (mkdocstrings `:::`, autodoc) and headings only: no text of its own to index."""
    if not all(piece.kinds for piece in part):
        return False  # a piece cut inside a block: text
    kinds = {kind for piece in part for kind in piece.kinds}
    return "api_stub" in kinds and kinds <= {"api_stub", "heading_open"}


def chunk_markdown(
    filepath: str,
    body: str,
    strategy: Strategy,
    metadata: dict[str, str] | None = None,
    *,
    tokens: list[Token] | None = None,
    title: str | None = None,
    sections: tuple[str, ...] = (),
) -> list[Chunk]:
    """Chunks of one file's body (frontmatter already removed), in document order. `sections`: the titles of
    the site navigation's sections above the page (mkdocs.yml nav), which lead its breadcrumbs."""
    if tokens is None:
        tokens = parser().parse(body)
    lines = body.split("\n")
    chunks: list[Chunk] = []
    blocks = top_level_blocks(tokens)
    # a page titled only in its frontmatter (MDX, VitePress): the title leads its breadcrumbs, as an h1 would
    page_title = (
        title if title and strategy.chunk_by != "file" and not any(b.heading_level == 1 for b in blocks) else None
    )
    for section in _sections(filepath, blocks, strategy, title, len(lines)):
        pieces = split_units(_units(section, lines), section.level, strategy.max_size)
        parts = [p for p in pack(pieces, strategy.max_size, strategy.min_size) if part_text(p).strip()]
        parts = [p for p in parts if not _only_stubs(p)]
        heading, level, lead = section.heading, section.level, section.crumbs
        if page_title:
            if section.kind == "preamble" and not heading:
                heading, level, lead = page_title, 1, [page_title]
            else:
                lead = [page_title, *section.crumbs]
        for number, part in enumerate(parts, start=1):
            chunk_id = file_part_id(filepath, number) if section.kind == "file" else part_id(section.base_id, number)
            crumbs = [filepath, *sections, *lead, *part[0].trail]
            chunks.append(
                Chunk(
                    chunk_id=chunk_id,
                    filepath=filepath,
                    heading=heading,
                    heading_level=level,
                    breadcrumb=" > ".join(crumbs),
                    content=part_text(part),
                    content_text=part_plain(part),
                    chunk_index=len(chunks),
                    metadata=dict(metadata or {}),
                )
            )
    return chunks
