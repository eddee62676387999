"""Markup leaks: dialect markup lines of the source that reach a chunk's content_text or embedding input.

For every page, the lines outside fenced code that are dialect markup (`!!!`, `???`, `///`, `////`,
`:::`, `===` tabs, `--8<--`, `{* … *}`, `{! … !}`, `<<< `, MDX `import`/`export` lines, JSX component
tags, heading attribute lists `{ #id }`, reST directive lines `.. name::`) are collected; a line leaks
when it shows up as a line of the breadcrumb or of the text outside code of one of the page's chunks
(what the embedding input is made of, embedding/input.py; code blocks are content, so markup shown as
an example in them is none). Prints, per corpus, markup lines, leaked lines and the share,
and each leaked line (file:line), so every edge case left is named.

    .venv/bin/python benchmarks/dialect_leaks.py [CORPUS_DIR ...]   (default: the five corpora in tests/fixtures)
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from docs_mcp_core.corpus.markdown import mdx_mode, parser, tokens_text  # noqa: E402
from docs_mcp_core.indexing.chunks import analyze_corpus  # noqa: E402
from docs_mcp_core.output.chunk import Chunk  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
CORPORA = [
    "sqlmodel-docs/docs",
    "uv-docs",
    "vite-docs/docs",
    "starlight-docs/docs/src/content/docs",
    "requests-docs/docs",
]
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_MARKUP = [
    ("admonition !!!/???", re.compile(r"^\s*(?:!!!|\?\?\?\+?)\s+\w")),
    ("block ///", re.compile(r"^\s*/{3,}(?:\s|$)")),
    ("container :::", re.compile(r"^\s*:{3,}")),
    ("tab ===", re.compile(r"""^\s*===\+?\s+["']""")),
    ("snippet --8<--", re.compile(r"-{1,}8<-{1,}")),
    ("include {* *}", re.compile(r"\{\*.*\*\}")),
    ("include {! !}", re.compile(r"\{!.*!\}")),
    ("snippet <<<", re.compile(r"^\s*<<<\s")),
    ("VitePress @include", re.compile(r"<!--\s*@include:")),
    ("MDX import/export", re.compile(r"^(?:import\s.*\bfrom\b|import\s+['\"]|export\s)")),
    ("JSX tag", re.compile(r"^\s*</?[A-Z][\w.]*(?:\s[^>]*)?/?>\s*$")),
    # the first line of a JSX tag that goes on over the next lines (`<SidebarPreview` then `config={[…]}`)
    ("JSX tag, several lines", re.compile(r"^\s*<[A-Z][\w.]*(?:\s+[^>]*)?$")),
    ("heading { #id }", re.compile(r"^#{1,6}\s.*\{\s*:?\s*#[\w:.-]+[^}]*\}\s*$")),
    ("reST directive", re.compile(r"^\s*\.\.\s+[\w:.-]+::")),
]


def markup_lines(text: str, relpath: str) -> list[tuple[int, str, str]]:
    """(line, kind, what to look for) of the markup lines outside fences of one file."""
    out = []
    fence: str | None = None
    mdx = relpath.endswith(".mdx")
    rst = relpath.endswith(".rst")
    lines = text.split("\n")
    for i, line in enumerate(lines, start=1):
        opened = _FENCE.match(line)
        if opened:
            marker = opened.group(1)
            if fence is None:
                fence = marker
            elif marker.startswith(fence[0]) and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        for kind, pattern in _MARKUP:
            if kind == "MDX import/export" and not mdx or rst != (kind == "reST directive"):
                continue
            if pattern.search(line):
                probe = line.strip()
                if kind == "heading { #id }":
                    probe = re.search(r"\{[^}]*#[^}]*\}", line).group(0)  # type: ignore[union-attr]
                elif kind == "JSX tag, several lines":  # the tag and its first prop: a prose mention is no leak
                    probe = f"{line.strip()} {lines[i].strip() if i < len(lines) else ''}".strip()
                out.append((i, kind, probe))
                break
    return out


def prose_text(chunk: Chunk) -> str:
    """The chunk's content_text without its code (code is content: markup shown in an example is no leak),
    made as the chunker makes content_text, from the chunk's Markdown."""
    with mdx_mode(chunk.filepath.endswith(".mdx")):
        tokens = parser().parse(chunk.content)
    return tokens_text([t for t in tokens if t.type not in ("fence", "code_block")])


def check(docs: Path) -> tuple[int, list[tuple[str, int, str, str]]]:
    chunkset = analyze_corpus(docs, workers=1)
    inputs: dict[str, list[str]] = defaultdict(list)
    for chunk in chunkset.chunks:
        inputs[chunk.filepath].append(f"{chunk.breadcrumb}\n{prose_text(chunk)}")
    total, leaks = 0, []
    for record in chunkset.files:
        text = (docs / record.relpath).read_text(encoding="utf-8", errors="replace")
        for line, kind, probe in markup_lines(text, record.relpath):
            total += 1
            # a markup line leaks as a line of its own; an attribute list or a tag's first line inside one
            whole = kind not in ("heading { #id }", "JSX tag, several lines")
            if any(
                (probe in body.split("\n")) if whole else (probe in " ".join(body.split()))
                for body in inputs.get(record.relpath, [])
            ):
                leaks.append((record.relpath, line, kind, probe))
    return total, leaks


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv] or [FIXTURES / c for c in CORPORA]
    print(f"{'corpus':<45} {'markup lines':>12} {'leaked':>7} {'share':>7}")
    details = []
    for docs in folders:
        total, leaks = check(docs)
        share = len(leaks) / total if total else 0.0
        print(
            f"{str(docs.relative_to(FIXTURES) if docs.is_relative_to(FIXTURES) else docs):<45} {total:>12} {len(leaks):>7} {share:>7.2%}"
        )
        details.extend((docs, *leak) for leak in leaks)
    for docs, rel, line, kind, probe in details:
        print(f"  {docs.name}/{rel}:{line}: {kind}: {probe[:90]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
