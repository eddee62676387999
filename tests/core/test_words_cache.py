"""The word positions kept in the per-user cache (search/words_cache.py): a second server on the same
snapshot maps them instead of building them, with the same answers; a damaged entry is built again; a
cache folder that cannot be used costs only the build; the cache keeps a bounded number of entries."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import Library, words_cache
from docs_mcp_core.search.chunk_words import ChunkWords
from docs_mcp_core.search.published import PublishedIndex

QUERIES = [
    ("webhook signature verification", {}),
    ("retry with backoff", {"language": "go"}),
    ('"rate limits"', {}),
    ("create a shipment label", {}),
]


@pytest.fixture(scope="module")
def index(example_docs_module: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("words-cache") / "out"
    build(example_docs_module, out, make_provider(ProviderSettings("none")))
    return out


@pytest.fixture(scope="module")
def example_docs_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ..conftest import EXAMPLE_DOCS

    dest = tmp_path_factory.mktemp("parcelly") / "parcelly-docs"
    shutil.copytree(EXAMPLE_DOCS, dest)
    return dest


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "words"
    monkeypatch.setenv(words_cache.ENV, str(folder))
    return folder


def entry_of(index: PublishedIndex) -> Path:
    base = words_cache.root()
    assert base is not None and index.snapshot is not None
    found = words_cache.key(index.snapshot.digest)
    assert found is not None
    return base / found


def serve(out: Path, *, saved: bool = False) -> tuple[list[dict], PublishedIndex]:
    """A server's answers to QUERIES, once its word positions are in place (and, with `saved`, kept)."""

    async def run() -> tuple[list[dict], PublishedIndex]:
        library = Library.open([("", out, None)], query_model="none")
        try:
            await library.search(QUERIES[0][0], limit=1)  # waits for the word positions
            index = library.corpora[0].engine.current
            assert index.words is not None and index.field_words
            pages = [(await library.search(q, limit=8, filters=f)).to_json() for q, f in QUERIES]
            for _ in range(3000):
                if not saved or (entry_of(index) / words_cache.META).is_file():
                    return pages, index
                await asyncio.sleep(0.01)
            raise AssertionError("the word positions were not kept")
        finally:
            library.close()

    return asyncio.run(run())


def same(a: ChunkWords, b: ChunkWords) -> bool:
    arrays = ("words", "at", "starts", "chunk_starts", "lengths", "df")
    return (
        a.ids == b.ids
        and list(a.ids) == list(b.ids)
        and all(
            getattr(a, n).dtype == getattr(b, n).dtype and np.array_equal(getattr(a, n), getattr(b, n)) for n in arrays
        )
        and (a.anything, a.exact, a.docs) == (b.anything, b.exact, b.docs)
        and a.average == b.average
        and type(a.average) is type(b.average)
        and (a.folds and a.folds.pattern) == (b.folds and b.folds.pattern)
    )


def test_a_second_server_maps_the_positions_the_first_built(index: Path, cache: Path) -> None:
    built_pages, first = serve(index, saved=True)
    assert first.words_source == "built"
    entry = entry_of(first)
    written = {p.name: p.stat().st_mtime_ns for p in entry.iterdir()}
    loaded_pages, second = serve(index)
    assert second.words_source == "cache"
    assert loaded_pages == built_pages
    assert first.words is not None and second.words is not None
    assert same(first.words, second.words)
    assert sorted(first.field_words) == sorted(second.field_words) == ["breadcrumb", "content_subwords", "heading"]
    assert all(same(first.field_words[n], second.field_words[n]) for n in first.field_words)
    assert not second.words.at.flags.writeable  # mapped read-only, shared with the other sessions
    assert {p.name: p.stat().st_mtime_ns for p in entry.iterdir() if p.name != words_cache.META} == {
        n: t for n, t in written.items() if n != words_cache.META
    }  # nothing written again


@pytest.mark.parametrize("damage", ["array-bytes", "array-truncated", "meta-garbage", "meta-edited"])
def test_a_damaged_entry_is_built_again(index: Path, cache: Path, damage: str) -> None:
    built_pages, first = serve(index, saved=True)
    entry = entry_of(first)
    target = entry / "0-at.npy"
    if damage == "array-bytes":  # the same size, other positions
        data = bytearray(target.read_bytes())
        data[-8:] = bytes(8)
        target.write_bytes(bytes(data))
    elif damage == "array-truncated":
        target.write_bytes(target.read_bytes()[:-100])
    elif damage == "meta-garbage":
        (entry / words_cache.META).write_bytes(b"\x00{not json")
    else:  # a stem renamed in the vocabulary
        kept = json.loads((entry / words_cache.META).read_text())
        kept["body"]["parts"]["content_text"]["ids"][0] += "x"
        (entry / words_cache.META).write_text(json.dumps(kept))
    again_pages, again = serve(index, saved=True)
    assert again.words_source == "built" and again_pages == built_pages
    third_pages, third = serve(index)  # kept again, whole
    assert third.words_source == "cache" and third_pages == built_pages


@pytest.mark.parametrize("folder", ["under-a-file", "others-can-write", "off"])
def test_a_cache_folder_that_cannot_be_used_costs_only_the_build(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    monkeypatch.setenv(words_cache.ENV, "off")
    expected, _ = serve(index)
    if folder == "under-a-file":
        (tmp_path / "file").write_text("")
        monkeypatch.setenv(words_cache.ENV, str(tmp_path / "file" / "words"))
    elif folder == "others-can-write":  # what another user put there would be trusted
        (tmp_path / "words").mkdir()
        os.chmod(tmp_path / "words", 0o777)
        monkeypatch.setenv(words_cache.ENV, str(tmp_path / "words"))
    for _ in range(2):
        pages, served = serve(index)
        assert served.words_source == "built" and pages == expected
    if folder == "others-can-write":
        assert not list((tmp_path / "words").iterdir())


def test_the_cache_keeps_the_most_recently_used_entries(cache: Path) -> None:
    words = ChunkWords.of(["alpha beta", "gamma delta"])
    assert words_cache.save("proto", words, {})
    now = time.time()
    for n in range(words_cache.KEEP + 2):  # used an hour apart, old09 last
        shutil.copytree(cache / "proto", cache / f"old{n:02d}")
        os.utime(cache / f"old{n:02d}" / words_cache.META, (now - 3600 * (20 - n),) * 2)
    shutil.rmtree(cache / "proto")
    os.utime(cache / "old09" / words_cache.META, (now - 86400 * (words_cache.UNUSED_DAYS + 1),) * 2)
    (cache / ".tmp-left").mkdir()  # by a server killed while writing
    os.utime(cache / ".tmp-left", (now - 7200,) * 2)
    assert words_cache.save("new", words, {})
    # "new" and the KEEP - 1 most recently used others, less old09, unused too long
    assert sorted(p.name for p in cache.iterdir()) == ["new"] + [f"old{n:02d}" for n in range(2, 9)]
    loaded = words_cache.load("new", 2)
    assert loaded is not None and same(loaded[0], words) and loaded[1] == {}
    assert words_cache.load("new", 3) is None  # not this snapshot's chunks: removed, built again
    assert not (cache / "new").exists()
