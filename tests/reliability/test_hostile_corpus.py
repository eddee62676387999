"""Hostile corpora and paths, through real `docs-mcp` processes: a warning or one `error:` line, never a
traceback, never a hang, and nothing from outside the docs folder indexed or served."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import dagster as dg
import pytest
from mcp import Client, StdioServerParameters

from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.indexing.chunks import chunk_corpus
from docs_mcp_core.progress import StderrReporter
from docs_mcp_core.sources.config import load_config
from docs_mcp_core.sources.git import stage_git
from docs_mcp_core.sources.local import stage_local
from docs_mcp_core.sources.staged_docs import stage_corpus
from docs_mcp_pipeline import build_definitions

from ..conftest import git, write
from ..pipeline.conftest import write_config

VALIDATE_TIMEOUT = 30  # seconds; a hang (a FIFO read) fails the test instead of blocking the suite
BUILD_TIMEOUT = 90
DEEP = 200_000
PAGE = "# Guide\n\n## Install\n\nRun the installer with care.\n"


def docs_mcp(*args: str, timeout: float = VALIDATE_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """One real CLI process; its own time limit turns a hang into a failure."""
    proc = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def build(docs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return docs_mcp(
        "build",
        "--docs-dir",
        str(docs),
        "--out",
        str(out),
        "--embedding-provider",
        "none",
        *extra,
        timeout=BUILD_TIMEOUT,
    )


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def searched(out: Path, query: str) -> str:
    proc = docs_mcp("search", "--index", str(out), query)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root, "guide.md", PAGE)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the docs folder, with words that must never reach the index."""
    root = tmp_path / "outside"
    write(root, "secret.md", "# Secret\n\n## Keys\n\nThe wombatsecret password lives here.\n")
    write(root, "pages/page.md", "# Page\n\n## Body\n\nA quokkafolder page outside the docs.\n")
    return root


@pytest.mark.slow
def test_symlink_to_a_file_outside_is_skipped_and_never_served(tmp_path: Path, docs: Path, outside: Path) -> None:
    (docs / "leak.md").symlink_to(outside / "secret.md")
    (docs / "passwd.md").symlink_to("/etc/passwd")
    check = docs_mcp("validate", "--docs-dir", str(docs))
    assert check.returncode == 0, check.stdout
    assert "leak.md:1: warning: skipped: symlink to" in check.stdout and "outside the docs folder" in check.stdout
    assert "passwd.md:1: warning: skipped: symlink to /etc/passwd, outside the docs folder" in check.stdout
    out = tmp_path / "out"
    proc = build(docs, out)
    assert proc.returncode == 0, proc.stderr
    assert "warn: leak.md:1: skipped: symlink to" in proc.stderr and "warn: passwd.md:1: skipped" in proc.stderr
    chunks = json.loads((out / "chunks.json").read_text())
    assert {c["filepath"] for c in chunks} == {"guide.md"} and "root:" not in json.dumps(chunks)
    assert searched(out, "wombatsecret").startswith("no results")


@pytest.mark.slow
def test_symlinked_folder_outside_is_not_followed(tmp_path: Path, docs: Path, outside: Path) -> None:
    (docs / "external").symlink_to(outside / "pages", target_is_directory=True)
    out = tmp_path / "out"
    proc = build(docs, out)
    assert proc.returncode == 0, proc.stderr
    assert (
        f"warn: external:1: skipped: symlink to the folder {outside.resolve() / 'pages'}, outside the docs "
        "folder; not followed" in proc.stderr
    )
    assert searched(out, "quokkafolder").startswith("no results")


def test_loops_and_dangling_symlinks_are_warnings(tmp_path: Path, docs: Path) -> None:
    (docs / "loop.md").symlink_to("loop.md")
    (docs / "ping.md").symlink_to("pong.md")
    (docs / "pong.md").symlink_to("ping.md")
    (docs / "gone.md").symlink_to("deleted.md")
    (docs / "sub").mkdir()
    (docs / "sub" / "up").symlink_to("..", target_is_directory=True)  # a folder loop
    check = docs_mcp("validate", "--docs-dir", str(docs))
    assert check.returncode == 0, check.stdout
    for name in ("loop.md", "ping.md", "pong.md"):
        assert f"{name}:1: warning: skipped: symlink loop" in check.stdout
    assert "gone.md:1: warning: skipped: dangling symlink (its target 'deleted.md' does not exist)" in check.stdout
    assert "sub/up:1: warning: skipped: symlink to the folder . is not followed" in check.stdout
    assert "validated 1 Markdown file(s): 0 error(s)" in check.stdout


@pytest.mark.slow
def test_a_symlink_inside_the_docs_folder_is_indexed_once(tmp_path: Path, docs: Path) -> None:
    (docs / "alias.md").symlink_to("guide.md")  # guide.md is indexed under its own path
    write(docs, ".shared/faq.txt", "# FAQ\n\n## Why\n\nBecause of the platypusreason.\n")
    (docs / "faq.md").symlink_to(".shared/faq.txt")  # its target is not indexed itself: the link is
    out = tmp_path / "out"
    proc = build(docs, out)
    assert proc.returncode == 0, proc.stderr
    assert "warn: alias.md:1: skipped: symlink to guide.md, which is indexed under its own path" in proc.stderr
    files = sorted({c["filepath"] for c in json.loads((out / "chunks.json").read_text())})
    assert files == ["faq.md", "guide.md"]
    assert "faq.md#faq/why" in searched(out, "platypusreason")


@pytest.mark.slow
def test_fifo_and_socket_named_md_are_skipped_without_hanging(tmp_path: Path, docs: Path) -> None:
    os.mkfifo(docs / "x.md")
    os.mkfifo(docs / ".docs-mcp.json")
    (docs / "pipe.md").symlink_to("x.md")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(docs / "sock.md"))
        check = docs_mcp("validate", "--docs-dir", str(docs))
        assert check.returncode == 0, check.stdout
        assert "x.md:1: warning: skipped: a FIFO (named pipe), not a regular file" in check.stdout
        assert ".docs-mcp.json:1: warning: skipped: a FIFO" in check.stdout
        assert "pipe.md:1: warning: skipped: symlink to a FIFO (named pipe)" in check.stdout
        assert "sock.md:1: warning: skipped: a socket, not a regular file" in check.stdout
        proc = build(docs, tmp_path / "out")
        assert proc.returncode == 0 and "warn: x.md:1: skipped: a FIFO" in proc.stderr


@pytest.mark.slow
def test_deep_nesting_is_one_error_line(tmp_path: Path, docs: Path) -> None:
    deep_json = '{"a":' * DEEP + "1" + "}" * DEEP
    write(docs, "manifest/.docs-mcp.json", "[" * DEEP + "]" * DEEP)
    write(docs, "manifest/page.md", PAGE)
    write(docs, "hint.md", f"<!-- mcp_chunking_hint: {deep_json} -->\n\n# Deep\n\nText.\n")
    write(docs, "meta.md", f"<!-- mcp_metadata: {deep_json} -->\n\n# Deep\n\nText.\n")
    write(docs, "front.md", "---\nmetadata: " + "[" * DEEP + "]" * DEEP + "\n---\n# Deep\n\nText.\n")
    proc = build(docs, tmp_path / "out")  # validate's own output is the same diagnostics (see the tests above)
    assert proc.returncode == 1 and "validation failed with 4 error(s)" in proc.stderr
    for line in (
        "manifest/.docs-mcp.json:1: error: manifest is nested too deeply",
        "hint.md:1: error: mcp_chunking_hint is nested too deeply",
        "meta.md:1: error: mcp_metadata is nested too deeply",
        "front.md:2: error: frontmatter is nested too deeply",
    ):
        assert line in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_other_hostile_files_give_diagnostics_not_tracebacks(tmp_path: Path, docs: Path) -> None:
    (docs / "binary.md").write_bytes(bytes(range(256)) * 64)
    (docs / "nul.md").write_bytes(b"# Nul\n\n## Bytes\n\nbefore\x00after nulbytesword\n")
    write(docs, "long.md", "# Long\n\n" + "longlineword " * 50_000 + "\n")
    write(docs, "arr/.docs-mcp.json", "[1, 2]")
    write(docs, "arr/page.md", PAGE)
    laughs = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)
    )
    write(
        docs,
        "bomb.md",
        f"---\n{laughs}metadata: *l9\nmcp_chunking_hint: {{chunk_by: h2, x: *l9}}\ntitle: *l9\n---\n# Bomb\n\nText.\n",
    )
    check = docs_mcp("validate", "--docs-dir", str(docs))
    assert check.returncode == 1
    assert "binary.md:2: error: not valid UTF-8" in check.stdout
    assert "arr/.docs-mcp.json:1: error: a manifest must be a JSON object" in check.stdout
    assert "bomb.md:12: error: frontmatter metadata must be a mapping" in check.stdout
    for name in ("binary.md", "arr/.docs-mcp.json", "bomb.md"):
        (docs / name).unlink()
    out = tmp_path / "out"
    proc = build(docs, out)
    assert proc.returncode == 0, proc.stderr
    assert "nul.md#nul/bytes" in searched(out, "nulbytesword")
    assert "long.md#" in searched(out, "longlineword")


@pytest.mark.slow
def test_docs_dir_that_is_a_file_or_missing_is_an_error_line(tmp_path: Path, docs: Path) -> None:
    page = docs / "guide.md"
    for command in (
        ["validate", "--docs-dir", str(page)],
        ["build", "--docs-dir", str(page), "--out", str(tmp_path / "out")],
    ):
        line = one_error_line(docs_mcp(*command))
        assert (
            line == f"error: --docs-dir {page} is a file, not a folder; point it at the folder that holds "
            "your Markdown files"
        )
    line = one_error_line(docs_mcp("validate", "--docs-dir", str(tmp_path / "nope")))
    assert "does not exist" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("out", ["/proc/nope", "/dev/null/x", "FILE"])
def test_unwritable_out_is_an_error_line(tmp_path: Path, docs: Path, out: str) -> None:
    target = str(docs / "guide.md") if out == "FILE" else out
    line = one_error_line(docs_mcp("build", "--docs-dir", str(docs), "--out", target, timeout=BUILD_TIMEOUT))
    assert line.startswith(f"error: --index {target}")
    assert not Path("/proc/nope").exists()


def test_cache_dir_that_cannot_be_written_is_an_error_line(tmp_path: Path, docs: Path) -> None:
    proc = docs_mcp(
        "build",
        "--docs-dir",
        str(docs),
        "--out",
        str(tmp_path / "out"),
        "--cache-dir",
        "/dev/null/c",
        timeout=BUILD_TIMEOUT,
    )
    assert one_error_line(proc).startswith("error: --cache-dir /dev/null/c: cannot write there")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_empty_corpus_is_refused_unless_allowed(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    write(empty, ".drafts/hidden.md", PAGE)  # dot-folders are skipped: still nothing to index
    write(empty, "node_modules/pkg/readme.md", PAGE)
    check = docs_mcp("validate", "--docs-dir", str(empty))
    assert check.returncode == 0 and ".:1: warning: nothing to index" in check.stdout
    out = tmp_path / "out"
    line = one_error_line(build(empty, out))
    assert line.startswith(
        f"error: nothing to index in {empty}: it has no Markdown files (*.md, *.markdown, *.mdx, *.rst,"
    )
    assert "--allow-empty" in line and not (out / "metadata.json").exists()
    write(empty, "blank.md", "\n")
    assert "1 Markdown file(s) have no content" in one_error_line(build(empty, out))
    proc = build(empty, out, "--allow-empty")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "metadata.json").read_text())["stats"]["total_chunks"] == 0


BAD_NAMES = ["a#b.md", "new\nline.md", "tab\there.md", " leading.md", "dir#1/page.md", "esc\x1b.md", "ls\u2028.md"]


@pytest.mark.slow
def test_file_names_that_cannot_be_chunk_ids_are_rejected(tmp_path: Path, docs: Path) -> None:
    for name in BAD_NAMES:
        write(docs, name, PAGE)
    (docs / os.fsdecode(b"caf\xe9.md")).write_text(PAGE)  # not UTF-8
    check = docs_mcp("validate", "--docs-dir", str(docs))
    assert check.returncode == 1
    shown = [name.encode("unicode_escape").decode() for name in BAD_NAMES] + ["caf\\xe9.md"]
    for name in shown:
        assert f"{name}:1: error: the path " in check.stdout and "rename the file or folder" in check.stdout
    assert "caf\\xe9.md:1: error: the path is not valid UTF-8" in check.stdout
    assert "validated 1 Markdown file(s): 8 error(s)" in check.stdout
    proc = build(docs, tmp_path / "out")
    assert proc.returncode == 1 and "validation failed with 8 error(s)" in proc.stderr
    assert "a#b.md:1: error: the path contains '#'" in proc.stderr


ODD_NAMES = ["with space.md", "ünïcödé.md", "100%.md", "quo'te\"s.md", "nb\u00a0sp.md", "a+b=c&d.md", "semi;colon.md"]


@pytest.mark.slow
def test_odd_file_names_round_trip_from_search_to_get_doc(tmp_path: Path, docs: Path) -> None:
    for n, name in enumerate(ODD_NAMES):
        write(docs, f"odd/{name}", f"# Title {n}\n\n## Section\n\nThe oddword{n} paragraph.\n")
    write(docs, "whole/entire file.md", "---\nmcp_chunking_hint: {chunk_by: file}\n---\n# Whole\n\nwholefileword\n")
    out = tmp_path / "out"
    assert build(docs, out).returncode == 0

    async def round_trip() -> dict[str, str]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "docs_mcp_core.cli", "serve", "--index", str(out)], env=dict(os.environ)
        )
        found: dict[str, str] = {}
        with anyio.fail_after(120):
            async with Client(params) as client:
                for word in [*(f"oddword{n}" for n in range(len(ODD_NAMES))), "wholefileword"]:
                    result = await client.call_tool("search_docs", {"query": word})
                    chunk_id = json.loads(result.content[0].text)["hits"][0]["chunk_id"]
                    doc = await client.call_tool("get_doc", {"chunk_id": chunk_id})
                    assert not doc.is_error, doc.content[0].text
                    assert word in doc.content[0].text
                    found[chunk_id] = word
        return found

    found = anyio.run(round_trip)
    assert sorted(found) == sorted(
        [f"odd/{name}#title-{n}/section" for n, name in enumerate(ODD_NAMES)] + ["whole/entire file.md"]
    )


def test_a_skipped_entry_is_one_warn_line_with_one_prefix(tmp_path: Path, docs: Path) -> None:
    (docs / "passwd.md").symlink_to("/etc/passwd")
    printed = io.StringIO()
    chunk_corpus(docs, StderrReporter(printed), spill_dir=tmp_path)
    warned = [line for line in printed.getvalue().splitlines() if "passwd.md" in line]
    assert warned == [
        "warn: passwd.md:1: skipped: symlink to /etc/passwd, outside the docs folder; copy the file into the docs "
        "folder if it belongs there"
    ]


def test_an_empty_corpus_names_the_kinds_of_file_it_has(tmp_path: Path) -> None:
    write(tmp_path / "docs", "a.rst", "")
    write(tmp_path / "docs", "b.md", "\n")
    with pytest.raises(DocsMcpError) as refused:
        chunk_corpus(tmp_path / "docs", spill_dir=tmp_path)
    assert "its 2 file(s) (1 Markdown, 1 reStructuredText) have no content" in str(refused.value)


def test_local_staging_skips_the_same_entries(tmp_path: Path, docs: Path, outside: Path) -> None:
    (docs / "leak.md").symlink_to(outside / "secret.md")
    (docs / "external").symlink_to(outside / "pages", target_is_directory=True)
    (docs / "loop.md").symlink_to("loop.md")
    (docs / "gone.md").symlink_to("deleted.md")
    (docs / "alias.md").symlink_to("guide.md")
    os.mkfifo(docs / "x.md")
    staged = stage_local(docs, tmp_path / "stage" / "docs")
    assert sorted(staged.files) == ["guide.md"]
    assert sorted(p.name for p in (tmp_path / "stage" / "docs").iterdir()) == ["guide.md"]
    assert [w.split(":", 1)[0] for w in staged.warnings] == [
        "alias.md",
        "external",
        "gone.md",
        "leak.md",
        "loop.md",
        "x.md",
    ]
    write(docs, "a#b.md", PAGE)
    with pytest.raises(DocsMcpError, match=r"a#b.md:1: error: the path contains '#'"):
        stage_local(docs, tmp_path / "stage" / "docs")
    with pytest.raises(DocsMcpError, match=r"source folder .*guide.md is a file, not a folder"):
        stage_local(docs / "guide.md", tmp_path / "stage" / "docs")
    with pytest.raises(DocsMcpError, match=r"/dev/null/x/docs: cannot write there"):
        stage_local(tmp_path / "outside", Path("/dev/null/x/docs"))


def test_a_missing_source_folder_names_the_config_field(tmp_path: Path) -> None:
    write(tmp_path, "guide.md", PAGE)
    text = "corpora:\n  - name: a\n    source: {path: .}\n  - name: b\n    source: {path: %s}\n"
    for path, what in (("nope", "does not exist"), ("guide.md", "is not a folder")):
        config = load_config(write(tmp_path, "docs-mcp.yaml", text % path))
        with pytest.raises(DocsMcpError) as failed:
            stage_corpus(config, "b", tmp_path / "stage")
        assert str(failed.value) == (
            f"{config.path}: corpora[1].source.path: {tmp_path / path} {what} (a path is relative to {tmp_path}); "
            "point it at the folder that holds your Markdown files"
        )


def test_git_staging_never_extracts_a_symlink_leading_outside(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo, "docs/guide.md", PAGE)
    write(repo, "README.md", "# Readme\n")
    (repo / "docs" / "passwd.md").symlink_to("/etc/passwd")
    (repo / "docs" / "readme.md").symlink_to("../README.md")
    (repo / "docs" / "alias.md").symlink_to("guide.md")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "docs")
    staged = stage_git(str(repo), "HEAD", "docs", tmp_path / "out" / "staged" / "docs")
    assert sorted(staged.files) == ["guide.md"]
    assert [w.split(":", 1)[0] for w in staged.warnings] == ["alias.md", "passwd.md", "readme.md"]
    assert "passwd.md:1: skipped: symlink to /etc/passwd, outside the docs folder" in staged.warnings


@pytest.mark.slow
def test_dagster_skips_the_same_entries_and_refuses_an_empty_corpus(tmp_path: Path, docs: Path, outside: Path) -> None:
    (docs / "leak.md").symlink_to(outside / "secret.md")
    os.mkfifo(docs / "x.md")
    (tmp_path / "empty").mkdir()
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {"name": "hostile", "source": {"path": str(docs)}, "out": str(tmp_path / "hostile")},
            {"name": "empty", "source": {"path": str(tmp_path / "empty")}, "out": str(tmp_path / "empty-out")},
            {
                "name": "empty-ok",
                "source": {"path": str(tmp_path / "empty")},
                "out": str(tmp_path / "empty-ok"),
                "allow_empty": True,
            },
        ],
    )
    defs = build_definitions(str(config))
    instance = dg.DagsterInstance.ephemeral()

    def materialize(partition: str) -> dg.ExecuteInMemoryResult:
        return dg.materialize(
            [*(defs.assets or [])],
            partition_key=partition,
            instance=instance,
            resources=defs.resources,
            raise_on_error=False,
        )

    assert materialize("hostile").success
    chunks = json.loads((tmp_path / "hostile" / "chunks.json").read_text())
    assert {c["filepath"] for c in chunks} == {"guide.md"}
    logs = [e.message for e in instance.all_logs(instance.get_runs()[0].run_id) if e.message]
    assert any(m.startswith("leak.md:1: skipped: symlink to") for m in logs)
    assert any(m.startswith("x.md:1: skipped: a FIFO") for m in logs)

    failed = materialize("empty")
    assert not failed.success
    failures = [e.event_specific_data.error.message for e in failed.all_events if e.is_step_failure]
    assert any("nothing to index" in m and "allow_empty: true" in m for m in failures)
    assert not (tmp_path / "empty-out" / "metadata.json").exists()
    assert materialize("empty-ok").success


@pytest.mark.slow
def test_config_with_wrong_types_or_deep_nesting_is_one_error(tmp_path: Path) -> None:
    cases = {
        "corpora: [{name: 1, source: {path: x}}]\n": "corpora[0].name: Input should be a valid string",
        "corpora: [{name: a, source: {path: x}, allow_empty: 'yes'}]\n": "corpora[0].allow_empty",
        "- 1\n- 2\n": "(top level)",
        "corpora: " + "[" * DEEP + "]" * DEEP + "\n": "nested too deeply",
    }
    for text, message in cases.items():
        path = tmp_path / "docs-mcp.yaml"
        path.write_text(text)
        with pytest.raises(DocsMcpError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
            load_config(path)
    (tmp_path / "folder.yaml").mkdir()
    with pytest.raises(DocsMcpError, match="cannot be read"):
        load_config(tmp_path / "folder.yaml")


def test_a_prompt_template_that_is_not_utf8_is_an_error_line(tmp_path: Path, docs: Path) -> None:
    (docs / "bad.template.md").write_bytes(b"---\nname: bad\n---\nCaf\xe9 au lait\n")
    check = docs_mcp("validate", "--docs-dir", str(docs))
    assert check.returncode == 1 and "bad.template.md:4: error: not valid UTF-8" in check.stdout
