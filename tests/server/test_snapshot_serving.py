"""A server on an index with a serving snapshot answers without loading LanceDB or pyarrow: neither
library's code is mapped into the process after searches and get_doc, until a query only LanceDB answers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from .conftest import stdio_client

pytestmark = pytest.mark.anyio


def server_pid() -> int:
    """The one stdio `docs-mcp serve` process this test process runs (HTTP servers of other tests may run too)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"serve" in cmdline and b"http" not in cmdline:
            found.append(int(entry))
    assert len(found) == 1, found
    return found[0]


def mapped(pid: int) -> set[str]:
    """Which of the two libraries have files mapped into the process."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {name for name in ("lancedb", "pyarrow") if f"/{name}/" in maps}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc")
async def test_a_server_on_a_snapshot_maps_neither_lancedb_nor_pyarrow(example_index: Path) -> None:
    async with stdio_client(example_index) as session:
        for query, filters in (("track a parcel", {}), ('"rate limits"', {}), ("webhook retries", {"language": "go"})):
            found = await session.call_tool("search_docs", {"query": query, **filters})
            assert not found.is_error and json.loads(found.content[0].text)["hits"], query
        doc = await session.call_tool("get_doc", {"chunk_id": json.loads(found.content[0].text)["hits"][0]["chunk_id"]})
        assert not doc.is_error and doc.content[0].text
        pid = server_pid()
        assert mapped(pid) == set()
        found = await session.call_tool("search_docs", {"query": "café webhook"})  # beyond ASCII: LanceDB answers
        assert not found.is_error and json.loads(found.content[0].text)["hits"]
        assert "lancedb" in mapped(pid)  # what the check above looks for is what loading LanceDB maps


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc")
async def test_a_second_server_maps_the_word_positions_the_first_kept(example_index: Path, tmp_path: Path) -> None:
    """Two stdio servers one after the other on one index: the first builds the word positions and keeps
    them in the cache folder (search/words_cache.py), the second maps those files read-only instead of
    building them, writes nothing, and answers the same."""
    cache = tmp_path / "words"
    env = {"DOCS_MCP_WORDS_CACHE": str(cache)}
    pages = []
    for n in range(2):
        async with stdio_client(example_index, env=env) as session:
            found = await session.call_tool("search_docs", {"query": "track a parcel"})
            assert not found.is_error
            pages.append(json.loads(found.content[0].text)["hits"])
            maps = Path(f"/proc/{server_pid()}/maps").read_text()
            assert (str(cache) in maps) == (n == 1)
            for _ in range(3000):  # the first keeps them after answering
                kept = {p.name: p.stat().st_mtime_ns for p in cache.glob("*/*")}
                if any(name == "words.json" for name in kept):
                    break
                await anyio.sleep(0.01)
            if n == 0:
                written = {name: t for name, t in kept.items() if name != "words.json"}
    assert pages[0] == pages[1]
    assert {name: t for name, t in kept.items() if name != "words.json"} == written
