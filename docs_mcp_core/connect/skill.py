"""`docs-mcp skill`: an agent skill (SKILL.md) that searches and reads the docs with this install's CLI.

For agents that prefer a command line to an MCP server. The format is the Agent Skills one: YAML
frontmatter with `name` (lowercase letters, digits and single hyphens, at most 64 characters, the
name of the skill's folder) and `description` (what it does and when to use it, at most 1024
characters), then Markdown instructions. Every command it names is complete (absolute paths of
this install and of each index), so an agent runs it as written with its placeholder filled in.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from ..errors import DocsMcpError
from ..output.metadata import PublishedMetadata

NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
RESERVED = ("anthropic", "claude")  # words Anthropic's skill loader refuses in a name


@dataclass(frozen=True)
class SkillCorpus:
    name: str
    index: str  # an absolute folder, or an s3:// URL
    metadata: PublishedMetadata
    description: str | None = None  # docs-mcp.yaml's serve description wins over the built one

    @property
    def about(self) -> str:
        text = (self.description or self.metadata.corpus_description or f"the {self.name} documentation").strip()
        return re.sub(r"[<>]", "", text).rstrip(".")  # no tags in a skill's frontmatter


def skill_name(corpora: list[SkillCorpus]) -> str:
    """`{corpus}-docs` for one corpus, `docs` for several: a valid skill (and folder) name."""
    base = corpora[0].name if len(corpora) == 1 else "docs"
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", base.lower())).strip("-")[: MAX_NAME - 5].strip("-")
    if not slug:
        return "docs"
    return slug if slug.endswith("docs") else f"{slug}-docs"


def check_skill_name(name: str) -> str:
    if len(name) > MAX_NAME or not NAME.match(name):
        raise DocsMcpError(
            f"--name {name!r}: a skill name is lowercase letters, digits and single hyphens, at most {MAX_NAME} "
            "characters (it names the skill's folder too)"
        )
    if any(word in name for word in RESERVED):
        raise DocsMcpError(f"--name {name!r}: skill names may not contain {' or '.join(RESERVED)}; choose another")
    return name


def _description(corpora: list[SkillCorpus]) -> str:
    what = "; ".join(c.about for c in corpora)
    tail = (
        " Use it whenever a question or task concerns these docs, before answering from memory: search with "
        "`docs-mcp search`, then read the chunks you need with `docs-mcp get`."
    )
    head = "Search and read " + ("these documentation sets: " if len(corpora) > 1 else "") + what + "."
    room = MAX_DESCRIPTION - len(tail)
    if len(head) > room:
        head = head[: room - 2].rstrip() + "…."
    return head + tail


def _filters(metadata: PublishedMetadata) -> list[str]:
    lines = []
    for key, field in sorted(metadata.taxonomy.items()):
        values = ", ".join(f"`{v}`" for v in field.values) or "none indexed"
        about = f" ({field.description.strip().rstrip('.')})" if field.description else ""
        lines.append(f"- `{key}`{about}: {values}")
    return lines


def _corpus_section(corpus: SkillCorpus, docs_mcp: list[str], heading: str) -> list[str]:
    index = shlex.quote(corpus.index)
    cmd = shlex.join(docs_mcp)
    stats = corpus.metadata.stats
    indexed = f", indexed {stats.indexed_at}" if stats.indexed_at else ""
    lines = [
        heading,
        "",
        f"Index: `{corpus.index}` ({stats.total_chunks} chunks from {stats.total_files} files{indexed}).",
        "",
        "Search (the answer is JSON):",
        "",
        "```bash",
        f'{cmd} search --index {index} --json "<query>"',
        "```",
        "",
        "Read one hit in full, by its `chunk_id`:",
        "",
        "```bash",
        f'{cmd} get --index {index} "<chunk_id>"',
        "```",
        "",
    ]
    filters = _filters(corpus.metadata)
    if filters:
        key, field = sorted(corpus.metadata.taxonomy.items())[0]
        value = field.values[0] if field.values else "VALUE"
        lines += [
            f"Narrow a search with `--filter KEY=VALUE` (repeatable), e.g. `--filter {key}={value}`. Filters:",
            "",
            *filters,
            "",
        ]
    return lines


def render_skill(name: str, corpora: list[SkillCorpus], docs_mcp: list[str]) -> str:
    """The SKILL.md text for these corpora, with `docs_mcp` (this install's command) in every command."""
    several = len(corpora) > 1
    lines = [
        "---",
        f"name: {name}",
        f"description: {_yaml_string(_description(corpora))}",
        "---",
        "",
        f"# Search the {corpora[0].name} docs" if not several else "# Search these docs",
        "",
    ]
    if not several:
        lines += [f"What they cover: {corpora[0].about}.", ""]
    lines += [
        "Search first, then read what you need. Each command below is complete: replace only the "
        "`<placeholder>` (keep the quotes).",
        "",
    ]
    for corpus in corpora:
        heading = f"## Corpus `{corpus.name}`: {corpus.about}" if several else "## Commands"
        lines += _corpus_section(corpus, docs_mcp, heading)
    lines += [
        "## How to use the answers",
        "",
        "- `<query>`: exact identifiers (method, class, error or config names) or a plain-language question. "
        "Try two or three phrasings, with the words the docs would use, before concluding something is not "
        "documented.",
        '- `search --json` prints `{"hits": [...], "hint": ...}`. Each hit has `chunk_id`, `heading`, '
        "`breadcrumb`, `snippet`, `filepath`, `metadata` and `chars` (the chunk's size). With no hits, `hint` "
        "says which filter values do match. `--limit N` (1-50, default 10) sets how many hits.",
        "- `get` prints the chunk's Markdown. `<chunk_id>` is a `chunk_id` exactly as search returned it; a "
        "file path without `#` reads the file's first chunk and lists all its chunk IDs.",
        "- Chunks are self-contained: read with the defaults first. `--context N` (0-5) adds N neighbouring "
        "chunks of the same file on each side.",
        "- `--max-chars N` (500-200000) caps the answer. A cut answer ends with "
        '`[trimmed: … next: get_doc {"chunk_id": "…", "offset": N, "max_chars": M}]`: read on with the same '
        "`get` command plus `--offset N --max-chars M`.",
        "- Cite the `chunk_id` or `filepath` of what you relied on.",
        "",
    ]
    return "\n".join(lines)


def _yaml_string(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)
