"""`serve --project DIR` on a versioned corpus output: the version the project's lockfile pins answers
(by the pinning rule), with one line when the locked version is not indexed; without a project, the
default; `mcp-config --project` writes a server entry that pins the same way."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.sources.config import load_config
from docs_mcp_core.sources.versioned_build import build_versions

from ..reliability.clitools import docs_mcp
from ..server.conftest import stdio_client


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def handbook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder corpus in two versions whose text differs: 1.0 says "old flag", 2.0 "new flag"."""
    root = tmp_path_factory.mktemp("handbook")
    for label, words in (("1.0", "Use the old flag."), ("2.0", "Use the new flag.")):
        (root / "handbook" / label).mkdir(parents=True)
        (root / "handbook" / label / "flags.md").write_text(f"# Flags\n\n## Usage\n\n{words}\n")
    config = root / "docs-mcp.yaml"
    config.write_text(
        "corpora:\n"
        "  - name: handbook\n"
        "    source: {path: handbook}\n"
        "    embedding: {provider: none}\n"
        "    package: {name: handbook, ecosystem: pypi}\n"
        '    versions: {paths: {"1.0": "1.0", "2.0": "2.0"}}\n'
    )
    provider = make_provider(ProviderSettings(provider="none"))
    result = build_versions(load_config(config), "handbook", provider)
    assert sorted(result.built) == ["1.0", "2.0"]
    return root / "indexes" / "handbook"


def project(tmp_path: Path, pin: str) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "requirements.txt").write_text(f"handbook=={pin}\n")
    return tmp_path / "app"


def serve_stderr(*args: str | Path) -> str:
    """The lines a stdio server writes at start (stdin closed at once, so it ends)."""
    result = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", "serve", *map(str, args)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


async def answer(index: Path, *extra: str) -> str:
    async with stdio_client(index, *extra) as client:
        result = await client.call_tool("search_docs", {"query": "flag usage"})
        assert not result.is_error, result.content[0].text
        hits = json.loads(result.content[0].text)["hits"]
        return " ".join(h.get("content") or h.get("text") or json.dumps(h) for h in hits)


@pytest.mark.anyio
async def test_the_locked_version_answers(handbook: Path, tmp_path: Path) -> None:
    assert "new flag" in await answer(handbook)  # no project: the default, the newest
    assert "old flag" in await answer(handbook, "--project", str(project(tmp_path, "1.0")))


@pytest.mark.anyio
async def test_a_locked_version_not_indexed_is_one_line(handbook: Path, tmp_path: Path) -> None:
    app = project(tmp_path, "1.0.5")
    lines = [line for line in serve_stderr("--index", handbook, "--project", app).splitlines() if "locked" in line]
    assert lines == [
        "docs-mcp: handbook 1.0.5 is locked; indexed versions are 1.0, 2.0; answering from 1.0 "
        "(the nearest lower release of 1.0.x)"
    ]
    assert "old flag" in await answer(handbook, "--project", str(app))
    async with stdio_client(handbook, "--project", str(app)) as client:  # the agent is told too
        description = {t.name: t.description for t in (await client.list_tools()).tools}["search_docs"] or ""
    assert "Note: handbook 1.0.5 is locked; indexed versions are 1.0, 2.0; answering from 1.0" in description


def test_mcp_config_project_serves_the_corpus_output(handbook: Path, tmp_path: Path) -> None:
    app = project(tmp_path, "2.0")
    result = docs_mcp("mcp-config", "--client", "cursor", "--index", handbook, "--project", app)
    assert result.returncode == 0, result.stderr
    args = json.loads(result.stdout)["mcpServers"]["handbook-docs"]["args"]
    assert args[args.index("--project") + 1] == str(app)
    assert args[args.index("--index") + 1].endswith(str(handbook))  # the corpus, not a version: pinned at start


def test_diff_between_two_labels_of_a_versioned_output(handbook: Path) -> None:
    result = docs_mcp("diff", "--index", handbook, "--from", "1.0", "--to", "2.0")
    assert result.returncode == 0, result.stderr
    assert "1 changed" in result.stdout.splitlines()[0]
    assert "-Use the old flag." in result.stdout and "+Use the new flag." in result.stdout
    missing = docs_mcp("diff", "--index", handbook, "--from", "0.9", "--to", "2.0")
    assert missing.returncode == 1 and "has no version '0.9'; it has: 2.0, 1.0" in missing.stderr


@pytest.mark.anyio
async def test_corpora_resource_lists_the_served_version_and_the_others(handbook: Path, tmp_path: Path) -> None:
    async with stdio_client(handbook, "--project", str(project(tmp_path, "1.0"))) as client:
        listed = (await client.list_resources()).resources
        assert [str(r.uri) for r in listed] == ["docs-mcp://corpora"]
        read = await client.read_resource("docs-mcp://corpora")
        (corpus,) = json.loads(read.contents[0].text)["corpora"]
    assert corpus["name"] == "handbook" and corpus["version"] == "1.0" and corpus["default_version"] == "2.0"
    assert [v["label"] for v in corpus["versions"]] == ["2.0", "1.0"]
    assert all(v["source_date"] and v["indexed_at"] for v in corpus["versions"]) and corpus["indexed_at"]


@pytest.mark.anyio
async def test_hits_say_which_version_answered(handbook: Path, tmp_path: Path) -> None:
    async with stdio_client(handbook, "--project", str(project(tmp_path, "1.0"))) as client:
        result = await client.call_tool("search_docs", {"query": "flag usage"})
        hits = json.loads(result.content[0].text)["hits"]
    assert hits and all(hit["version"] == "1.0" for hit in hits)


@pytest.mark.anyio
async def test_what_changed_tool(handbook: Path) -> None:
    async with stdio_client(handbook) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"search_docs", "get_doc", "what_changed"}
        assert tools["what_changed"].input_schema["properties"]["from"]["enum"] == ["1.0", "2.0"]
        result = await client.call_tool("what_changed", {"from": "1.0", "to": "2.0", "query": "flag"})
        assert not result.is_error, result.content[0].text
        text = result.content[0].text
        assert text.startswith("1.0 → 2.0: 1 changed") and "-Use the old flag." in text and "+Use the new flag." in text
        bad = await client.call_tool("what_changed", {"from": "0.9", "to": "2.0"})
        assert bad.is_error and "0.9" in bad.content[0].text


@pytest.mark.anyio
async def test_search_description_names_the_served_version(handbook: Path, tmp_path: Path) -> None:
    async with stdio_client(handbook, "--project", str(project(tmp_path, "1.0"))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    description = tools["search_docs"].description or ""
    assert "Version served: handbook 1.0, docs as of 20" in description
    assert "also indexed: 2.0 (what_changed compares them)" in description


@pytest.mark.anyio
async def test_version_argument_answers_from_another_indexed_version(handbook: Path, tmp_path: Path) -> None:
    async with stdio_client(handbook, "--project", str(project(tmp_path, "1.0"))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["search_docs"].input_schema["properties"]["version"]["enum"] == ["1.0", "2.0"]
        assert "version" in tools["get_doc"].input_schema["properties"]
        pinned = json.loads((await client.call_tool("search_docs", {"query": "flag usage"})).content[0].text)
        other = json.loads(
            (await client.call_tool("search_docs", {"query": "flag usage", "version": "2.0"})).content[0].text
        )
        assert {h["version"] for h in pinned["hits"]} == {"1.0"} and {h["version"] for h in other["hits"]} == {"2.0"}
        chunk = other["hits"][0]["chunk_id"]
        newer = await client.call_tool("get_doc", {"chunk_id": chunk, "version": "2.0"})
        older = await client.call_tool("get_doc", {"chunk_id": chunk})
        assert "new flag" in newer.content[0].text and "old flag" in older.content[0].text
        bad = await client.call_tool("search_docs", {"query": "flag", "version": "9.9"})
        assert bad.is_error


def test_a_version_of_another_schema_names_the_build_of_its_corpus(handbook: Path, tmp_path: Path) -> None:
    """A version folder is rebuilt by its corpus's config (every version), not by `--docs-dir --index`."""
    out = tmp_path / "handbook"
    shutil.copytree(handbook, out)
    meta_path = out / "versions" / "1.0" / "metadata.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "schema_version": meta["schema_version"] - 1}))
    result = docs_mcp("search", "--index", out / "versions" / "1.0", "flag")
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "`docs-mcp build --config docs-mcp.yaml --corpus handbook`" in lines[0], lines
