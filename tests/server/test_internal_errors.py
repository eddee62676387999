"""An error that is not the index's (a bug, a process limit) is said as an internal error, never as
damage to rebuild; LanceDB's own read failures still are. Real LanceDB tables, a real MCP session."""

from __future__ import annotations

import asyncio
import errno
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import lancedb
import pytest
from mcp import Client

from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.search.unreadable import is_read_failure
from docs_mcp_core.server import ServedCorpus, create_server

from ..conftest import EXAMPLE_DOCS
from .conftest import build_index

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("internal")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    return build_index(root / "docs", root / "index")


def interpreter_error() -> RuntimeError:
    """A RuntimeError the interpreter raises (from the threading module), as a thread limit or a bug would."""
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    try:
        thread.start()
    except RuntimeError as exc:
        return exc
    raise AssertionError("a thread started twice")


def lancedb_error(out: Path) -> BaseException:
    """What LanceDB raises reading a table whose data files are gone (a RuntimeError of its own)."""
    layout = OutputLayout(out)
    for data in layout.table("chunks").glob("data/*.lance"):
        data.unlink()

    async def read() -> BaseException:
        table = await (await lancedb.connect_async(str(layout.lancedb))).open_table("chunks")
        try:
            await table.query().select(["content_text"]).to_arrow()
        except BaseException as exc:  # noqa: BLE001 - what it raised is the point
            return exc
        raise AssertionError("a table without its data files was read")

    return asyncio.run(read())


def test_only_the_readers_errors_and_missing_files_mean_an_unreadable_index(index: Path, tmp_path: Path) -> None:
    shutil.copytree(index, tmp_path / "index")
    assert is_read_failure(lancedb_error(tmp_path / "index"))
    assert is_read_failure(FileNotFoundError(errno.ENOENT, "No such file or directory"))
    assert not is_read_failure(interpreter_error())
    assert not is_read_failure(OSError(errno.EMFILE, "Too many open files"))
    assert not is_read_failure(KeyError("chunk_id"))


async def test_an_internal_error_in_a_search_is_said_as_one_and_the_server_keeps_serving(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = create_server(index)
    # no word positions, so the full-text lists come from LanceDB (not from memory: bm25.py)
    served.library.corpora[0].engine.word_positions = False
    async with Client(served.server) as session:
        first = await session.call_tool("search_docs", {"query": "track a parcel"})
        assert not first.is_error, first.content[0].text
        table = (await served.library.corpora[0].engine.index()).table

        async def failing(*args: Any, **kwargs: Any) -> Any:
            raise interpreter_error()

        monkeypatch.setattr(table, "search", failing)  # the fault comes from outside our code and LanceDB's
        failed = await session.call_tool("search_docs", {"query": "shipping label printer"})
        said = failed.content[0].text
        assert failed.is_error and "internal error (RuntimeError: threads can only be started once)" in said, said
        assert "not a damaged index" in said and "report it" in said, said
        assert "rebuild" not in said and "cannot be read" not in said and "Traceback" not in said, said
        monkeypatch.undo()
        again = await session.call_tool("search_docs", {"query": "webhook retries"})
        assert not again.is_error and json.loads(again.content[0].text)["hits"], again.content[0].text


async def test_an_internal_error_in_one_corpus_leaves_the_others_answering(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(index, tmp_path / "other")
    served = create_server([ServedCorpus(index, "a"), ServedCorpus(tmp_path / "other", "b")])
    # b keeps no word positions, so its full-text lists come from LanceDB (not from memory: bm25.py)
    served.library.corpora[1].engine.word_positions = False
    async with Client(served.server) as session:
        assert not (await session.call_tool("search_docs", {"query": "track a parcel"})).is_error
        table = (await served.library.corpora[1].engine.index()).table

        async def failing(*args: Any, **kwargs: Any) -> Any:
            raise interpreter_error()

        monkeypatch.setattr(table, "search", failing)
        answer = await session.call_tool("search_docs", {"query": "shipping label printer"})
        assert not answer.is_error, answer.content[0].text
        page = json.loads(answer.content[0].text)
        assert page["hits"] and {hit["corpus"] for hit in page["hits"]} == {"a"}
        said = page["unavailable"]["b"]
        assert "internal error (RuntimeError: threads can only be started once)" in said, said
        assert "rebuild" not in said and "Traceback" not in said, said
