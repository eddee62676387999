"""Leaving files out (manifest `exclude`, docs-mcp.yaml `exclude`, .gitignore) and validate output people can act on."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import load_config
from docs_mcp_core.sources.local import stage_local
from tests.conftest import write

PAGE = "# {0}\n\n## Section\n\nText about {0}.\n"


def tree(root: Path) -> Path:
    write(
        root,
        ".docs-mcp.json",
        json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}, "exclude": ["vendor/**", "**/CHANGELOG.md"]}),
    )
    for rel in (
        "index.md",
        "guide/start.md",
        "guide/CHANGELOG.md",
        "vendor/lib/README.md",
        "build/out.md",
        "notes/draft.md",
        "notes/keep.md",
        "node_modules/pkg/README.md",
        ".cache/x.md",
    ):
        write(root, rel, PAGE.format(rel))
    write(root, ".gitignore", "build/\n# drafts stay local\nnotes/*.md\n")
    write(root, "notes/.gitignore", "!keep.md\n")
    return root


INDEXED = ["guide/start.md", "index.md", "notes/keep.md"]


def test_excluded_files_stay_out_of_build_and_validate(tmp_path: Path, runner: CliRunner) -> None:
    docs = tree(tmp_path / "docs")
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["files"] == len(INDEXED) and report["diagnostics"] == []
    out = tmp_path / "index"
    result = runner.invoke(
        main, ["build", "--docs-dir", str(docs), "--out", str(out), "-q", "--embedding-provider", "none"]
    )
    assert result.exit_code == 0, result.output
    chunks = json.loads((out / "chunks.json").read_text())
    assert sorted({c["filepath"] for c in chunks}) == INDEXED


def test_list_files_says_why_each_file_is_skipped(tmp_path: Path, runner: CliRunner) -> None:
    docs = tree(tmp_path / "docs")
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs), "--list-files"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "indexed  notes/keep.md" in lines
    assert "skipped  vendor/  (excluded by .docs-mcp.json exclude 'vendor/**')" in lines
    assert "skipped  guide/CHANGELOG.md  (excluded by .docs-mcp.json exclude '**/CHANGELOG.md')" in lines
    assert "skipped  build/  (ignored by .gitignore pattern 'build/')" in lines
    assert "skipped  notes/draft.md  (ignored by .gitignore pattern 'notes/*.md')" in lines
    assert "skipped  node_modules/  (node_modules folder)" in lines
    assert "skipped  .cache/  (dot-folder)" in lines
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs), "--list-files", "--format", "json"])
    listing = {e["path"]: e for e in json.loads(result.output)["listing"]}
    assert [p for p, e in sorted(listing.items()) if e["status"] == "indexed"] == INDEXED
    assert listing["vendor/"]["code"] == "excluded" and listing[".cache/"]["code"] == "skipped-folder"


def test_a_subfolder_manifest_excludes_relative_to_its_folder(tmp_path: Path, runner: CliRunner) -> None:
    docs = tmp_path / "docs"
    write(docs, ".docs-mcp.json", json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}}))
    write(
        docs,
        "api/.docs-mcp.json",
        json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}, "exclude": ["internal/*.md"]}),
    )
    for rel in ("internal/a.md", "api/internal/b.md", "api/public.md"):
        write(docs, rel, PAGE.format(rel))
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs), "--list-files"])
    assert "indexed  internal/a.md" in result.output.splitlines()  # the api/ manifest's glob is relative to api/
    assert "skipped  api/internal/b.md  (excluded by api/.docs-mcp.json exclude 'internal/*.md')" in result.output


def test_bad_exclude_glob_is_a_manifest_error(tmp_path: Path, runner: CliRunner) -> None:
    docs = tmp_path / "docs"
    write(docs, ".docs-mcp.json", '{\n  "version": "1",\n  "exclude": ["[unclosed"]\n}')
    write(docs, "a.md", PAGE.format("a"))
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs), "--format", "json"])
    assert result.exit_code == 1
    [diag] = [d for d in json.loads(result.output)["diagnostics"] if d["severity"] == "error"]
    assert diag["code"] == "manifest-invalid" and diag["line"] == 3 and "unclosed '['" in diag["message"]


def test_config_exclude_keeps_files_out_of_staging(tmp_path: Path) -> None:
    docs = tree(tmp_path / "docs")
    write(docs, "drafts/wip.md", PAGE.format("wip"))
    config = write(
        tmp_path,
        "docs-mcp.yaml",
        f"corpora:\n  - name: docs\n    source: {{path: {docs}}}\n    exclude: ['drafts/**']\n",
    )
    corpora = load_config(config)
    staged = stage_local(docs, tmp_path / "staged" / "docs", exclude=corpora.get("docs").exclude)
    assert sorted(p for p in staged.files if p.endswith(".md")) == INDEXED
    write(tmp_path, "bad.yaml", f"corpora:\n  - name: docs\n    source: {{path: {docs}}}\n    exclude: ['{{a']\n")
    try:
        load_config(tmp_path / "bad.yaml")
    except DocsMcpError as exc:
        assert "corpora[0].exclude" in str(exc) and "unclosed '{'" in str(exc)
    else:
        raise AssertionError("a bad exclude glob must be refused")


def test_repeated_warnings_are_grouped_and_json_keeps_all(tmp_path: Path, runner: CliRunner) -> None:
    docs = tmp_path / "docs"
    for i in range(12):
        write(docs, f"page{i:02}.md", PAGE.format(i))
    write(docs, "odd.md", "---\ncolour: red\n---\n# Odd\n\ntext\n")
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs)])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    grouped = [line for line in lines if "no explicit chunking strategy" in line]
    assert grouped == [
        "warning: 13 files: no explicit chunking strategy [no-strategy] (odd.md, page00.md, page01.md and 10 more)"
    ]
    fix_line = lines[lines.index(grouped[0]) + 1]
    assert fix_line.startswith("  fix: add a .docs-mcp.json") and "docs-mcp fix --docs-dir" in fix_line
    assert any(line.startswith("odd.md:2: warning: unknown frontmatter key 'colour'") for line in lines)
    assert lines[-1].startswith("validated 13 Markdown file(s): 0 error(s), 14 warning(s)")
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs), "--format", "json"])
    diagnostics = json.loads(result.output)["diagnostics"]
    assert len(diagnostics) == 14
    assert sorted({d["code"] for d in diagnostics}) == ["no-strategy", "unknown-frontmatter-key"]
    assert sum(d["code"] == "no-strategy" for d in diagnostics) == 13
