"""A multi-corpus server with a broken corpus: the others keep answering, the broken one is reported.

Real processes throughout: indexes built by `docs-mcp build`, damaged on disk, served by one
`docs-mcp serve --transport http` process on 127.0.0.1, asked over plain JSON-RPC.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import EXAMPLE_DOCS, FIXTURES
from ..server.conftest import http_server
from .clitools import build_args, docs_mcp
from .load import McpHttpClient

QUERY = "idempotency key"  # found in the Parcelly corpus (A)


def drop_lancedb(out: Path) -> None:
    shutil.rmtree(out / ".lancedb")


def drop_data_files(out: Path) -> None:
    for data in (out / ".lancedb" / "chunks.lance" / "data").glob("*.lance"):
        data.unlink()


def drop_search_indexes(out: Path) -> None:
    """Only the full-text indexes: missing files the table was recorded with, found before it is opened."""
    shutil.rmtree(out / ".lancedb" / "chunks.lance" / "_indices")


def build(docs: Path, out: Path, *extra: str) -> Path:
    result = docs_mcp(*build_args(docs, out), "-q", *extra)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    """(A's docs, A's index, X's docs, X's index), good builds that each test copies."""
    root = tmp_path_factory.mktemp("broken-corpus")
    shutil.copytree(EXAMPLE_DOCS, root / "a-docs")
    shutil.copytree(FIXTURES / "uv-docs" / "getting-started", root / "x-docs")
    return root / "a-docs", build(root / "a-docs", root / "a"), root / "x-docs", build(root / "x-docs", root / "x")


def copies(corpora: tuple[Path, Path, Path, Path], tmp: Path) -> tuple[Path, Path]:
    shutil.copytree(corpora[1], tmp / "a")
    shutil.copytree(corpora[3], tmp / "x")
    return tmp / "a", tmp / "x"


def health(base: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def by_name(body: dict) -> dict[str, dict]:
    return {corpus["name"]: corpus for corpus in body["corpora"]}


def corpora_resource(base: str) -> dict:
    """The server's docs-mcp://corpora resource, read with one plain JSON-RPC request."""
    request = urllib.request.Request(
        f"{base}/mcp",
        data=json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "docs-mcp://corpora"}}
        ).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(json.loads(response.read())["result"]["contents"][0]["text"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage", [drop_lancedb, drop_data_files, drop_search_indexes], ids=["no-lancedb", "no-data-files", "no-fts"]
)
def test_a_broken_corpus_is_reported_and_the_others_keep_answering(
    corpora: tuple[Path, Path, Path, Path], tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    a, x = copies(corpora, tmp_path)
    damage(x)
    log = tmp_path / "server.log"
    with http_server(None, "--index", f"A={a}", "--index", f"X={x}", "--stateless", log=log) as base:
        client = McpHttpClient(base)
        try:
            ok, text = client.call("search_docs", {"query": QUERY, "corpus": "A"})
            assert ok, text
            assert json.loads(text)["hits"][0]["chunk_id"].startswith("A:guides/idempotency.md")
            assert "unavailable" not in json.loads(text)  # the search did not cover X

            ok, text = client.call("search_docs", {"query": QUERY})
            assert ok, text
            page = json.loads(text)
            assert page["hits"] and all(hit["corpus"] == "A" for hit in page["hits"])
            assert set(page["unavailable"]) == {"X"}
            assert f"the index at {x} cannot be read" in page["unavailable"]["X"]
            assert f"docs-mcp build --docs-dir DOCS --index {x}" in page["unavailable"]["X"]

            chunk_id = page["hits"][0]["chunk_id"]
            ok, text = client.call("get_doc", {"chunk_id": chunk_id})
            assert ok and f"--- Chunk: {chunk_id} " in text, text
            ok, text = client.call("get_doc", {"chunk_id": chunk_id.removeprefix("A:")})  # bare ID: only A has it
            assert ok, text

            ok, text = client.call("search_docs", {"query": QUERY, "corpus": "X"})
            assert not ok and f"the index at {x} cannot be read" in text, text
            ok, text = client.call("get_doc", {"chunk_id": "X:index.md"})
            assert not ok and f"the index at {x} cannot be read" in text, text

            status, body = health(base)
            assert status == 200 and body["status"] == "degraded", body
            assert by_name(body)["A"]["status"] == "ok"
            assert by_name(body)["X"]["status"] == "error" and str(x) in by_name(body)["X"]["message"]
            listed = by_name(corpora_resource(base))  # and in the server's resources
            assert listed["A"]["available"] and "unavailable" not in listed["A"]
            assert not listed["X"]["available"] and f"the index at {x} cannot be read" in listed["X"]["unavailable"]

            client.close()  # a keep-alive connection idle through the build would be closed by the server
            build(corpora[2], x, "--force")  # repaired in place: no restart
            ok, text = client.call("search_docs", {"query": "install uv"})
            assert ok, text
            page = json.loads(text)
            assert "unavailable" not in page and any(hit["corpus"] == "X" for hit in page["hits"])
            assert health(base) == (200, {**health(base)[1], "status": "ok"})
            assert all(corpus["available"] for corpus in corpora_resource(base)["corpora"])
        finally:
            client.close()
    server_log = log.read_text()
    assert "Traceback" not in server_log
    assert server_log.count("corpus 'X' cannot be read") == 1, server_log  # once, not per request
    assert "corpus 'X' can be read again" in server_log


@pytest.mark.slow
def test_a_deleted_index_folder_is_reported_not_ok(corpora: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    a, x = copies(corpora, tmp_path)
    with http_server(None, "--index", f"A={a}", "--index", f"X={x}", "--stateless") as base:
        client = McpHttpClient(base)
        try:
            ok, text = client.call("search_docs", {"query": QUERY})  # both opened
            assert ok and "unavailable" not in json.loads(text), text
            client.close()
            shutil.rmtree(x)
            status, body = health(base)
            assert status == 200 and body["status"] == "degraded", body
            assert by_name(body)["X"]["status"] == "error"
            assert f"the index at {x} is gone" in by_name(body)["X"]["message"]
            ok, text = client.call("search_docs", {"query": QUERY})
            assert ok and "is gone" in json.loads(text)["unavailable"]["X"], text
            shutil.rmtree(a)
            status, body = health(base)
            assert status == 503 and body["status"] == "error", body
            ok, text = client.call("search_docs", {"query": QUERY})
            assert not ok and "No corpus this search covers can be read now" in text, text
        finally:
            client.close()


@pytest.mark.slow
def test_a_lone_deleted_index_fails_health(corpora: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    a, _ = copies(corpora, tmp_path)
    with http_server(a, "--stateless") as base:
        assert health(base)[1]["status"] == "ok"
        shutil.rmtree(a)
        status, body = health(base)
        assert status == 503 and body["status"] == "error" and f"the index at {a} is gone" in body["message"], body
