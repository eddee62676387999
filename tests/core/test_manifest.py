"""Every rule that decides a file's strategy and metadata (DESIGN.md §3, issue 2 §2)."""

import json
from pathlib import Path

from docs_mcp_core.corpus.walk import read_source, scan_corpus
from docs_mcp_core.indexing.chunks import analyze_corpus

from ..conftest import write


def resolved(root: Path, rel: str):
    scan = scan_corpus(root)
    source, diags = read_source(scan, rel)
    assert source is not None, diags
    return source, diags


def manifest(root: Path, folder: str, data: dict) -> None:
    write(root, f"{folder}/.docs-mcp.json" if folder else ".docs-mcp.json", json.dumps(data))


def test_default_is_h2_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n")
    source, diags = resolved(tmp_path, "a.md")
    assert source.strategy.chunk_by == "h2" and source.strategy_source == "default"
    assert any("no explicit chunking strategy" in d.message and d.severity == "warning" for d in diags)


def test_nearest_ancestor_manifest_governs_exclusively(tmp_path: Path) -> None:
    manifest(
        tmp_path, "", {"version": "1", "strategy": {"chunk_by": "h3"}, "metadata": {"scope": "global", "team": "docs"}}
    )
    manifest(tmp_path, "sdk", {"version": "1", "metadata": {"language": "go"}})
    write(tmp_path, "sdk/deep/x.md", "# X\n")
    write(tmp_path, "top.md", "# T\n")
    deep, diags = resolved(tmp_path, "sdk/deep/x.md")
    assert deep.metadata == {"language": "go"}  # nothing inherited from the root manifest
    assert deep.strategy.chunk_by == "h2" and deep.manifest == "sdk/.docs-mcp.json"
    assert any("sets no strategy" in d.message for d in diags)
    top, _ = resolved(tmp_path, "top.md")
    assert top.strategy.chunk_by == "h3" and top.metadata == {"scope": "global", "team": "docs"}


def test_overrides_last_match_wins_relative_to_manifest_folder(tmp_path: Path) -> None:
    manifest(
        tmp_path,
        "docs",
        {
            "version": "1",
            "strategy": {"chunk_by": "h2", "max_chunk_size": 5000},
            "metadata": {"scope": "guide", "tier": "free"},
            "overrides": [
                {"pattern": "api/**", "strategy": {"chunk_by": "h3"}, "metadata": {"scope": "api"}},
                {"pattern": "api/*.md", "metadata": {"tier": "pro"}},
                {"pattern": "api/special.md", "strategy": {"chunk_by": "file"}},
                {"pattern": "docs/api/*.md", "metadata": {"tier": "never"}},
            ],
        },
    )
    write(tmp_path, "docs/api/special.md", "# S\n")
    write(tmp_path, "docs/api/other.md", "# O\n")
    write(tmp_path, "docs/api/v1/deep.md", "# D\n")
    write(tmp_path, "docs/guide.md", "# G\n")
    special, _ = resolved(tmp_path, "docs/api/special.md")
    assert special.strategy.chunk_by == "file"  # later override strategy replaces earlier
    assert special.metadata == {"scope": "api", "tier": "pro"}  # override metadata merges over baseline
    other, _ = resolved(tmp_path, "docs/api/other.md")
    assert other.strategy.chunk_by == "h3" and other.strategy.max_chunk_size is None  # replaced, not merged
    deep, _ = resolved(tmp_path, "docs/api/v1/deep.md")
    assert deep.metadata == {"scope": "api", "tier": "free"}  # `api/*.md` does not cross folders
    guide, _ = resolved(tmp_path, "docs/guide.md")
    assert guide.strategy.chunk_by == "h2" and guide.strategy.max_chunk_size == 5000


def test_inline_hint_beats_overrides_and_frontmatter_beats_everything(tmp_path: Path) -> None:
    manifest(
        tmp_path,
        "",
        {
            "version": "1",
            "strategy": {"chunk_by": "h2"},
            "metadata": {"scope": "guide"},
            "overrides": [{"pattern": "*.md", "strategy": {"chunk_by": "h1"}, "metadata": {"scope": "o"}}],
        },
    )
    write(tmp_path, "inline.md", '# A\n\n<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n\ntext\n')
    write(
        tmp_path,
        "front.md",
        "---\nmcp_chunking_hint:\n  chunk_by: file\nmetadata:\n  scope: fm\n  extra: yes-please\n---\n"
        '<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n\n# B\n',
    )
    inline, _ = resolved(tmp_path, "inline.md")
    assert inline.strategy.chunk_by == "h3" and inline.metadata == {"scope": "o"}
    front, diags = resolved(tmp_path, "front.md")
    assert front.strategy.chunk_by == "file"
    assert front.metadata == {"scope": "fm", "extra": "yes-please"}
    assert any("frontmatter mcp_chunking_hint wins" in d.message for d in diags)


def test_inline_metadata_directive_and_frontmatter_title(tmp_path: Path) -> None:
    manifest(tmp_path, "", {"version": "1", "strategy": {"chunk_by": "file"}})
    write(
        tmp_path,
        "t.md",
        '---\ntitle: Real Title\n---\n<!-- mcp_metadata: {"audience": "admins"} -->\n\n# Heading\n\nx\n',
    )
    source, _ = resolved(tmp_path, "t.md")
    assert source.title == "Real Title" and source.metadata == {"audience": "admins"}
    chunk = analyze_corpus(tmp_path).chunks[0]
    assert (chunk.chunk_id, chunk.heading) == ("t.md", "Real Title")


def test_templates_are_not_indexed_and_dot_folders_are_skipped(tmp_path: Path) -> None:
    manifest(tmp_path, "", {"version": "1", "strategy": {"chunk_by": "h2"}})
    write(tmp_path, "a.md", "# A\n")
    write(tmp_path, "p/ask.template.md", "---\ntitle: Ask\n---\nAsk about {{topic}}.\n")
    write(
        tmp_path,
        "p/multi.template.yaml",
        "messages:\n  - role: user\n    content: hi {{x}}\n  - role: assistant\n    content: ok\n",
    )
    write(tmp_path, ".git/notes.md", "# hidden\n")
    result = analyze_corpus(tmp_path)
    assert [c.filepath for c in result.chunks] == ["a.md"]
    assert [p["name"] for p in result.prompts] == ["ask", "multi"]
    assert result.prompts[1]["messages"][1] == {"role": "assistant", "content": "ok"}


def test_files_with_only_frontmatter_produce_no_chunks(tmp_path: Path) -> None:
    manifest(tmp_path, "", {"version": "1", "strategy": {"chunk_by": "h2"}})
    write(tmp_path, "empty.md", "")
    write(tmp_path, "fm.md", "---\ntitle: Only frontmatter\n---\n")
    result = analyze_corpus(tmp_path)
    assert result.chunks == []
    assert {d.path for d in result.warnings if "no content" in d.message} == {"empty.md", "fm.md"}
