"""`docs-mcp validate`: each kind of problem, with its file and line, and the exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main

from ..conftest import write

GOOD = '{"version": "1", "strategy": {"chunk_by": "h2"}}'


def run_validate(runner: CliRunner, root: Path, *extra: str) -> tuple[int, list[str]]:
    result = runner.invoke(main, ["validate", "--docs-dir", str(root), *extra])
    return result.exit_code, result.output.strip().splitlines()


def one(lines: list[str], needle: str) -> str:
    found = [line for line in lines if needle in line]
    assert len(found) == 1, (needle, lines)
    return found[0]


@pytest.mark.parametrize(
    "files, expected",
    [
        (
            {".docs-mcp.json": '{\n  "version": "1",\n  "strategy": {"chunk_by": "h2",}\n}'},
            ".docs-mcp.json:3: error: invalid JSON",
        ),
        (
            {".docs-mcp.json": '{\n  "version": "1",\n  "strategy": {\n    "chunk_by": "h7"\n  }\n}'},
            ".docs-mcp.json:4: error: strategy.chunk_by: Input should be 'h1', 'h2', 'h3' or 'file'",
        ),
        (
            {".docs-mcp.json": '{\n  "version": "1",\n  "stratgy": {"chunk_by": "h2"}\n}'},
            ".docs-mcp.json:3: error: unknown field 'stratgy'",
        ),
        (
            {".docs-mcp.json": '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 50}}'},
            ".docs-mcp.json:1: error: strategy.max_chunk_size: Input should be greater than or equal to 200",
        ),
        (
            {
                ".docs-mcp.json": '{\n "version": "1",\n "overrides": [\n  {"pattern": "a/*.md"},\n  {\n   "pattern": "b/[x.md"\n  }\n ]\n}'
            },
            ".docs-mcp.json:6: error: overrides[1].pattern: unclosed '['",
        ),
        (
            {".docs-mcp.json": '{"version": "1", "metadata": {"limit": "x"}}'},
            ".docs-mcp.json:1: error: metadata: metadata key 'limit' is reserved",
        ),
        ({"a.md": "---\ntitle: ok\nmetadata: [unclosed\n---\n# A\n"}, "a.md:4: error: invalid YAML frontmatter"),
        (
            {"a.md": "---\ntitle: ok\nmcp_chunking_hint:\n  chunk_by: h7\n---\n# A\n"},
            "a.md:4: error: frontmatter mcp_chunking_hint.chunk_by: Input should be",
        ),
        (
            {"a.md": "---\nmetadata:\n  version: 2\n---\n# A\n"},
            "a.md:3: error: frontmatter metadata.version must be a string (got int); quote it",
        ),
        (
            {"a.md": "# A\n\ntext\n\n<!-- mcp_chunking_hint: {chunk_by: h3} -->\n"},
            "a.md:5: error: malformed mcp_chunking_hint",
        ),
        (
            {"a.md": '# A\n\n<!-- mcp_chunking_hint: {"chunk_by": "h9"} -->\n'},
            "a.md:3: error: mcp_chunking_hint.chunk_by: Input should be",
        ),
        (
            {"a.md": '# A\n\n- item\n  <!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n'},
            "a.md:4: error: dangling mcp_chunking_hint comment",
        ),
        (
            {
                "a.md": '<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n\n# A\n\n<!-- mcp_chunking_hint: {"chunk_by": "h2"} -->\n'
            },
            "a.md:5: error: second mcp_chunking_hint in this file (first on line 1)",
        ),
        ({"a.md": "# A\n\n<!-- mcp_chunk_hint: {} -->\n"}, "a.md:3: error: orphaned metadata comment 'mcp_chunk_hint'"),
        ({"a.md": "# A\n\n" + "x" * 10 + "\n\n---\nmetadata:\n  k: v\n"}, None),
        (
            {"p/x.template.md": "---\narguments:\n  - name: 1bad\n---\nHello\n"},
            "p/x.template.md:1: error: prompt arguments[0].name",
        ),
        (
            {
                "a.md": "## Foo\n\n## Foo part 2\n",
                ".docs-mcp.json": '{"version":"1","strategy":{"chunk_by":"h2","max_chunk_size":200}}',
                "b.md": "## Big\n\n" + ("word " * 30 + "\n\n") * 3 + "## Big part 2\n\nx\n",
            },
            "b.md:1: error: two chunks get the ID 'b.md#big-part-2'; rename one of the headings",
        ),
    ],
)
def test_each_error_kind_names_file_and_line(
    tmp_path: Path, runner: CliRunner, files: dict[str, str], expected: str | None
) -> None:
    if ".docs-mcp.json" not in files:
        files = {".docs-mcp.json": GOOD, **files}
    for rel, text in files.items():
        write(tmp_path, rel, text)
    code, lines = run_validate(runner, tmp_path)
    if expected is None:  # a thematic break followed by text is not frontmatter: no problem at all
        assert code == 0 and lines[-1].endswith("0 error(s), 0 warning(s)")
        return
    assert code == 1
    assert any(line.startswith(expected) or (expected.startswith("error:") and expected in line) for line in lines), (
        lines
    )


def test_non_utf8_file(tmp_path: Path, runner: CliRunner) -> None:
    write(tmp_path, ".docs-mcp.json", GOOD)
    (tmp_path / "bad.md").write_bytes(b"# Title\n\ncaf\xe9\n")
    code, lines = run_validate(runner, tmp_path)
    assert code == 1
    assert one(lines, "bad.md").startswith("bad.md:3: error: not valid UTF-8 (byte offset 12)")


def test_warnings_alone_exit_zero(tmp_path: Path, runner: CliRunner) -> None:
    write(tmp_path, "a.md", "---\nsidebar_position: 3\n---\n# A\n\n<!-- Start Usage [usage] -->\ntext\n")
    code, lines = run_validate(runner, tmp_path)
    assert code == 0
    assert one(lines, "sidebar_position") == (
        "a.md:2: warning: unknown frontmatter key 'sidebar_position' is ignored; docs-mcp reads mcp_chunking_hint, "
        "metadata, title, description (put search facets under 'metadata:')"
    )
    assert one(lines, "no explicit chunking strategy").startswith("a.md:1: warning:")
    assert one(lines, "Start Usage").startswith("a.md:6: warning: orphaned HTML metadata comment 'Start Usage [usage]'")
    assert lines[-1] == "validated 1 Markdown file(s): 0 error(s), 3 warning(s)"


def test_the_summary_names_the_kinds_of_file_validated(tmp_path: Path, runner: CliRunner) -> None:
    write(tmp_path, ".docs-mcp.json", GOOD)
    write(tmp_path, "a.rst", "Title\n=====\n\nSection\n-------\n\nText.\n")
    code, lines = run_validate(runner, tmp_path)
    assert code == 0 and lines[-1] == "validated 1 reStructuredText file(s): 0 error(s), 0 warning(s)"
    write(tmp_path, "b.mdx", "# B\n\n## Part\n\nText.\n")
    write(tmp_path, "c.md", "# C\n\n## Part\n\nText.\n")
    write(tmp_path, "d.markdown", "# D\n\n## Part\n\nText.\n")
    code, lines = run_validate(runner, tmp_path)
    assert lines[-1] == "validated 4 file(s) (2 Markdown, 1 MDX, 1 reStructuredText): 0 error(s), 0 warning(s)"


def test_taxonomy_limits(tmp_path: Path, runner: CliRunner) -> None:
    write(tmp_path, ".docs-mcp.json", GOOD)
    for i in range(514):
        write(tmp_path, f"many/f{i:03}.md", f"---\nmetadata:\n  version: v{i}\n---\n# F\n")
    keys = "\n".join(f"  k{i}: x" for i in range(65))
    write(tmp_path, "wide.md", f"---\nmetadata:\n{keys}\n---\n# W\n")
    write(tmp_path, "long.md", "---\nmetadata:\n  k0: " + "v" * 129 + "\n---\n# L\n")
    code, lines = run_validate(runner, tmp_path)
    assert code == 1
    assert one(lines, "512 distinct values").startswith(
        "many/f512.md:1: error: taxonomy key 'version' gets value 'v512'"
    )
    assert one(lines, "at most 64 taxonomy keys").startswith("wide.md:1: error:")
    assert one(lines, "longer than 128 characters").startswith("long.md:3: error:")


def test_json_format(tmp_path: Path, runner: CliRunner) -> None:
    write(tmp_path, ".docs-mcp.json", GOOD)
    write(tmp_path, "a.md", "# A\n\n<!-- mcp_nope: 1 -->\n")
    result = runner.invoke(main, ["validate", "--docs-dir", str(tmp_path), "--format", "json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["errors"] == 1 and data["files"] == 1
    assert data["diagnostics"][0] == {
        "path": "a.md",
        "line": 3,
        "severity": "error",
        "message": "orphaned metadata comment 'mcp_nope': not a docs-mcp directive "
        "(known: mcp_chunking_hint, mcp_metadata); fix the name or remove the comment",
        "code": "directive-unknown",
    }


@pytest.mark.slow
def test_console_script_exit_codes(tmp_path: Path, example_docs: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", "validate", "--docs-dir", str(example_docs)],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "validated 18 Markdown file(s): 0 error(s), 0 warning(s)" in ok.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", "validate", "--docs-dir", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: --docs-dir") and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr
