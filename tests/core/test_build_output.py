"""Every line a build prints, in each situation: the lines agree with each other and with what happened.

Cold, no-op, one edit, --force, a failure and a docs website, through the real CLI; seconds are the
only part left out of the comparison.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main

from ..conftest import EXAMPLE_CHUNKS
from ..fakes.docs_site import DocsSite, copy_site

FILES = 18  # Markdown files of the example


def settle(docs: Path) -> None:
    """Old mtimes, as for files not touched since well before a build: a no-op then reads none of them."""
    when = time.time() - 3600
    for path in docs.rglob("*.md"):
        os.utime(path, (when, when))


def lines(result) -> list[str]:  # type: ignore[no-untyped-def]
    """stderr's lines with the seconds taken out."""
    return [re.sub(r"\b\d+\.\ds\b", "Ts", line) for line in result.stderr.splitlines()]


def build(docs: Path, out: Path, *extra: str):  # type: ignore[no-untyped-def]
    args = ["build", "--docs-dir", str(docs), "--index", str(out), "--embedding-provider", "hash", *extra]
    return CliRunner().invoke(main, args)


def test_cold_noop_edit_and_force_builds_say_what_they_did(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    n = EXAMPLE_CHUNKS
    settle(example_docs)
    cold = build(example_docs, out)
    assert cold.exit_code == 0, cold.output
    assert lines(cold) == [
        f"parsed {FILES} files into {n} chunks in Ts",
        f"embedding cache: 0 hits, {n} misses among {n} chunks (0.0% hit rate)",
        f"embedded {n} chunks via hash in Ts",
        f"index written: a new table version, {n} rows with full-text and vector indexes",
        f"done in Ts: {FILES} files (0 unchanged), {n} chunks, {n} chunks embedded; published to {out}",
    ]
    version = json.loads((out / "metadata.json").read_text())["index"]["version"]

    noop = build(example_docs, out)
    assert lines(noop) == [
        f"parsed 0 of {FILES} files ({FILES} unchanged files reused, 0 files read): {n} chunks in Ts",
        f"embedding cache: {n} hits, 0 misses among {n} chunks (100.0% hit rate)",
        "index unchanged: the published table version is kept",
        f"done in Ts: {FILES} files ({FILES} unchanged), {n} chunks, 0 chunks embedded; the index at {out} is unchanged",
    ]
    assert json.loads((out / "metadata.json").read_text())["index"]["version"] == version

    page = example_docs / "guides" / "rate-limits.md"
    page.write_text(page.read_text().replace("so that one integration", "so that one noisy integration"))
    os.utime(page, (time.time() - 600, time.time() - 600))  # not racy: the others stay trusted by their stat
    edit = build(example_docs, out)
    assert lines(edit) == [
        f"parsed 1 of {FILES} files ({FILES - 1} unchanged files reused, 1 file read): {n} chunks in Ts",
        f"embedding cache: {n - 1} hits, 1 miss among {n} chunks (98.9% hit rate)",
        "embedded 1 chunk via hash in Ts",
        "index updated: a new table version, the rows of 1 changed file replaced and its indexes rebuilt",
        f"done in Ts: {FILES} files ({FILES - 1} unchanged), {n} chunks, 1 chunk embedded; published to {out}",
    ]

    force = build(example_docs, out, "--force")
    assert lines(force) == [
        "--force: every file is parsed and embedded again, and a new table version written",
        f"parsed {FILES} files into {n} chunks in Ts",
        f"embedding cache (rebuilt from scratch): 0 hits, {n} misses among {n} chunks (0.0% hit rate)",
        f"embedded {n} chunks via hash in Ts",
        f"index written: a new table version, {n} rows with full-text and vector indexes",
        f"done in Ts: {FILES} files (0 unchanged), {n} chunks, {n} chunks embedded; published to {out}",
    ]


def test_text_only_builds_say_text_only(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    settle(example_docs)
    first = build(example_docs, out, "--embedding-provider", "none")
    assert lines(first)[1:] == [
        f"index written: a new table version, {EXAMPLE_CHUNKS} rows with full-text indexes",
        f"done in Ts: {FILES} files (0 unchanged), {EXAMPLE_CHUNKS} chunks, text-only; published to {out}",
    ]


def test_a_failed_build_says_nothing_was_written_and_prints_no_done_line(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    assert build(example_docs, out).exit_code == 0
    before = (out / "metadata.json").read_bytes()
    (example_docs / "guides" / "bad.md").write_text("# Bad\n\n<!-- mcp_bogus: 1 -->\n")
    failed = build(example_docs, out)
    assert failed.exit_code == 1
    assert lines(failed) == [
        f"error: validation failed with 1 error(s) in {example_docs}; nothing was written:",
        "guides/bad.md:3: error: orphaned metadata comment 'mcp_bogus': not a docs-mcp directive (known: "
        "mcp_chunking_hint, mcp_metadata); fix the name or remove the comment",
        f"fix these (run `docs-mcp validate --docs-dir {example_docs}` for the full list) and build again",
    ]
    assert (out / "metadata.json").read_bytes() == before


def test_a_website_build_counts_its_pages_and_its_time_from_the_first_request(tmp_path: Path) -> None:
    out = tmp_path / "index"
    pages = ("", "async", "http2")
    with DocsSite(copy_site(tmp_path / "site", pages)) as site:
        result = CliRunner().invoke(
            main, ["build", "--url", site.url, "--index", str(out), "--embedding-provider", "none"]
        )
    assert result.exit_code == 0, result.output
    got = lines(result)
    chunks = len(json.loads((out / "chunks.json").read_text()))
    assert got[1].startswith("3 pages via sitemap: 3 fetched, 0 not modified (304)")
    assert got[2:] == [
        f"parsed 3 files into {chunks} chunks in Ts",
        f"index written: a new table version, {chunks} rows with full-text indexes",
        f"done in Ts: 3 files (0 unchanged), {chunks} chunks, text-only; published to {out}",
    ]
    crawl = float(re.search(r", in (\d+\.\d)s;", result.stderr).group(1))
    done = float(re.search(r"^done in (\d+\.\d)s", result.stderr, re.M).group(1))
    assert done >= crawl  # the whole command, the crawl included


@pytest.mark.parametrize("command", ["build", "search", "serve", "mcp-config", "get", "audit"])
def test_every_command_names_the_index_folder_index_with_out_as_alias(command: str) -> None:
    help_text = CliRunner().invoke(main, [command, "--help"]).output
    assert re.search(r"^\s+--index, --out ", help_text, re.M), help_text


def test_index_out_and_their_environment_variables_are_one_option(example_docs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    docs = ["build", "--docs-dir", str(example_docs), "--embedding-provider", "none", "-q"]
    assert runner.invoke(main, [*docs, "--out", str(tmp_path / "a")]).exit_code == 0
    assert runner.invoke(main, docs, env={"DOCS_MCP_BUILD_INDEX": str(tmp_path / "b")}).exit_code == 0
    assert runner.invoke(main, docs, env={"DOCS_MCP_BUILD_OUT": str(tmp_path / "c")}).exit_code == 0
    for name in "abc":
        assert (tmp_path / name / "metadata.json").is_file()
    found = runner.invoke(main, ["search", "--out", str(tmp_path / "a"), "retry with backoff", "--limit", "1"])
    assert found.exit_code == 0 and found.output.startswith(" 1. "), found.output
    audit = runner.invoke(main, ["audit"], env={"DOCS_MCP_AUDIT_INDEX": str(tmp_path / "b")})
    assert audit.exit_code == 0 and "build_id" in audit.output, audit.output
