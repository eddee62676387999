"""A version built or removed while a stdio session is open is served or dropped without a restart: the
`version` enum follows versions.json (the client hears tools/list_changed), the default follows it, and a
changed lockfile under --project re-pins."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.sources.config import load_config
from docs_mcp_core.sources.versioned_build import build_versions

from ..server.conftest import serve_args

pytestmark = pytest.mark.anyio
ROUNDS = 200  # polls of 0.1 s at most: the server looks for a change on each request and every second


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_config(root: Path, labels: list[str]) -> Path:
    paths = ", ".join(f'"{label}": "{label}"' for label in labels)
    config = root / "docs-mcp.yaml"
    config.write_text(
        "corpora:\n"
        "  - name: handbook\n"
        "    source: {path: handbook}\n"
        "    embedding: {provider: none}\n"
        "    package: {name: handbook, ecosystem: pypi}\n"
        f"    versions: {{paths: {{{paths}}}}}\n"
    )
    return config


def add_version(root: Path, label: str) -> None:
    (root / "handbook" / label).mkdir(parents=True)
    (root / "handbook" / label / "flags.md").write_text(f"# Flags\n\n## Usage\n\nUse the flag of release {label}.\n")


def build(root: Path, labels: list[str], only: list[str] | None = None) -> None:
    """Build the versions `labels` name (or `only` these of them); those the config drops are removed."""
    config = load_config(write_config(root, labels))
    result = build_versions(config, "handbook", make_provider(ProviderSettings(provider="none")), labels=only)
    assert not result.failed, result.failed


def is_list_changed(message: object) -> bool:
    root = getattr(message, "root", message)
    return isinstance(root, types.ToolListChangedNotification)


async def served(session: Client, **arguments: str) -> set[str]:
    result = await session.call_tool("search_docs", {"query": "flag release", **arguments})
    assert not result.is_error, result.content[0].text
    return {hit["version"] for hit in json.loads(result.content[0].text)["hits"]}


async def until(check, expected) -> None:  # type: ignore[no-untyped-def]
    for _ in range(ROUNDS):
        if await check() == expected:
            return
        await anyio.sleep(0.1)
    assert await check() == expected


@pytest.mark.slow
async def test_a_version_built_then_one_removed_while_serving(tmp_path: Path) -> None:
    for label in ("1.0", "2.0", "3.0"):
        add_version(tmp_path, label)
    build(tmp_path, ["1.0", "2.0"])
    out = tmp_path / "indexes" / "handbook"
    changed: list[object] = []

    async def on_message(message: object) -> None:
        if is_list_changed(message):
            changed.append(message)

    params = StdioServerParameters(command=sys.executable, args=serve_args(out), env=dict(os.environ))
    async with Client(params, mode="legacy", message_handler=on_message) as session:

        async def enum() -> list[str]:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            return tools["search_docs"].input_schema["properties"]["version"]["enum"]

        assert await enum() == ["1.0", "2.0"] and await served(session) == {"2.0"}
        await anyio.to_thread.run_sync(lambda: build(tmp_path, ["1.0", "2.0", "3.0"]))
        await until(lambda: served(session), {"3.0"})  # the new newest is the default now
        assert await enum() == ["1.0", "2.0", "3.0"] and changed  # the client was told to list again
        assert await served(session, version="3.0") == {"3.0"} and await served(session, version="1.0") == {"1.0"}
        changes = {t.name: t for t in (await session.list_tools()).tools}["what_changed"]
        assert changes.input_schema["properties"]["to"]["enum"] == ["1.0", "2.0", "3.0"]

        # 1.0 leaves the config; only 2.0 is rebuilt, so the served 3.0 is not republished: the enum
        # follows versions.json alone
        served_meta = (out / "versions" / "3.0" / "metadata.json").stat().st_mtime_ns
        await anyio.to_thread.run_sync(lambda: build(tmp_path, ["2.0", "3.0"], only=["2.0"]))
        assert (out / "versions" / "3.0" / "metadata.json").stat().st_mtime_ns == served_meta
        await until(enum, ["2.0", "3.0"])
        gone = await session.call_tool("search_docs", {"query": "flag", "version": "1.0"})
        assert gone.is_error and "1.0" in gone.content[0].text
        assert await served(session) == {"3.0"} and await served(session, version="2.0") == {"2.0"}
        assert not (out / "versions" / "1.0").exists()


@pytest.mark.slow
async def test_a_changed_lockfile_re_pins(tmp_path: Path) -> None:
    for label in ("1.0", "2.0"):
        add_version(tmp_path, label)
    build(tmp_path, ["1.0", "2.0"])
    out = tmp_path / "indexes" / "handbook"
    app = tmp_path / "app"
    app.mkdir()
    (app / "requirements.txt").write_text("handbook==1.0\n")
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(out, "--project", str(app)), env=dict(os.environ)
    )
    async with Client(params) as session:
        assert await served(session) == {"1.0"}
        (app / "requirements.txt").write_text("handbook==2.0\n")
        await until(lambda: served(session), {"2.0"})

        (app / "requirements.txt").write_text("handbook==1.0.7\n")  # not indexed: the notice opens answers

        async def notes() -> list[str]:
            result = await session.call_tool("search_docs", {"query": "flag release"})
            return json.loads(result.content[0].text).get("notes", [])

        notice = "handbook 1.0.7 is locked; indexed versions are 1.0, 2.0; answering from 1.0 (the nearest lower release of 1.0.x)"
        await until(notes, [notice])
        assert await served(session) == {"1.0"}
        description = {t.name: t for t in (await session.list_tools()).tools}["search_docs"].description or ""
        assert f"Note: {notice}." in description
