"""The corpus description agents read in the search_docs tool description, made from the corpus when
no --description is given: what it calls itself, its size, page titles and taxonomy."""

from __future__ import annotations

import re
from pathlib import Path

from ..corpus.beneath import read_beneath
from .contract import ChunkSet, FileRecord

DESCRIPTION_TITLES = 8  # page titles named in a default corpus description
DESCRIPTION_VALUES = 8  # values named per taxonomy key


DESCRIPTION_SUMMARY = 300  # characters of a site description or README paragraph quoted
# Folder names that say nothing about what a corpus is: the description names the folder above them instead.
GENERIC_FOLDERS = {
    "docs",
    "doc",
    "documentation",
    "content",
    "src",
    "site",
    "pages",
    "website",
    "www",
    "staged",
    "source",
}


_BADGES = re.compile(r"\[image: [^\]]*\]")  # images as website staging writes them


def readme_summary(root: Path, files: list[FileRecord]) -> tuple[str | None, str | None]:
    """(title, first paragraph) of the corpus's top-level README, when it has one with a title."""
    from ..corpus.markdown import parser, split_frontmatter

    readme = next(
        (f for f in files if f.relpath.lower() in ("readme.md", "readme.mdx", "readme.rst", "index.md")), None
    )
    if readme is None or not readme.titles:
        return None, None
    try:  # inside the docs folder only, whatever it became since the walk (corpus/beneath.py)
        text = read_beneath(root, readme.relpath).decode("utf-8", errors="replace")
    except OSError:
        return readme.titles[0], None
    tokens = parser().parse(split_frontmatter(text).body)
    for i, tok in enumerate(tokens):
        if tok.type == "paragraph_open" and tok.level == 0 and i + 1 < len(tokens):
            from ..corpus.markdown import inline_text

            first = " ".join(inline_text(tokens[i + 1]).split())
            if len(_BADGES.sub("", first).strip()) > 20:  # not a row of badges
                return readme.titles[0], first
    return readme.titles[0], None


def corpus_label(name: str, root: str) -> str:
    """A corpus name that says something: a docs folder called `docs` is named after the folder above it."""
    path = Path(root)
    if name != path.name:
        return name
    for part in [path, *path.parents]:
        if part.name and part.name.lower() not in GENERIC_FOLDERS:
            return part.name
    return name


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def default_description(name: str, chunkset: ChunkSet) -> str:
    """What the corpus is, for agents choosing whether to search it: what it calls itself (its docs
    framework's site name and description, else its README's title and first paragraph), its size,
    page titles and taxonomy.

    Used when no --description is given; shown in the search_docs tool description.
    """
    shallow_first = sorted(chunkset.files, key=lambda f: (f.relpath.count("/"), f.relpath))
    # top-level pages first: a file's title is its first level-1 heading; each title once, in that order
    titles = list(dict.fromkeys(t for record in shallow_first for t in record.titles))
    files = len(chunkset.files)
    parts = [f"{files} page{'s' if files != 1 else ''}"]
    if titles:
        more = len(titles) - DESCRIPTION_TITLES
        parts.append(
            "pages such as " + ", ".join(titles[:DESCRIPTION_TITLES]) + (f" and {more} more" if more > 0 else "")
        )
    for key, field_ in sorted(chunkset.taxonomy.items()):
        values = list(field_.get("values", []))
        if values:
            more = len(values) - DESCRIPTION_VALUES
            parts.append(
                f"{key}: " + ", ".join(values[:DESCRIPTION_VALUES]) + (f" and {more} more" if more > 0 else "")
            )
    label = chunkset.site_name or corpus_label(name, chunkset.root)
    about = f": {_clip(chunkset.site_description, DESCRIPTION_SUMMARY)}" if chunkset.site_description else ""
    return f"{label} documentation{about} ({'; '.join(parts)})"
