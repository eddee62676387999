"""The serving snapshot written at publish (output/serving_snapshot.py): recorded with its version's files,
the same bytes for the same corpus, pruned with its version, and read by a server instead of the table
with the same answers; a damaged one is reported and the table read instead."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.errors import SearchError
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output import serving_snapshot
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.output.table_checksums import load
from docs_mcp_core.search import Library, words_cache
from docs_mcp_core.search import engine as engine_module
from docs_mcp_core.search import published as published_module
from docs_mcp_core.search.chunk_words import ChunkWords

QUERIES = [
    ("webhook signature verification", {}),
    ("retry with backoff", {"language": "go"}),
    ("cancel shipment refund", {"scope": "sdk-specific"}),
    ('"rate limits"', {}),
    ("idempotency key header", {"language": "python", "scope": "sdk-specific"}),
]


def published_version(out: Path) -> int:
    return json.loads(OutputLayout(out).metadata.read_text())["index"]["version"]


def snapshot_files(out: Path) -> dict[str, bytes]:
    """Every snapshot file under the table folder (relative path -> bytes)."""
    root = OutputLayout(out).table("chunks")
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "_serving").rglob("*")) if p.is_file()
    }


def answers(out: Path, *, snapshot: bool, hybrid: bool = False) -> tuple[list[dict], bool]:
    """Pages of every query (with filters), and get_doc of the first hit with its neighbours; and whether
    LanceDB's table was opened for them."""

    async def run() -> tuple[list[dict], bool]:
        library = Library.open([("", out, None)], query_model="loaded" if hybrid else "none")
        try:
            found = []
            for query, filters in QUERIES:
                page = (await library.search(query, limit=8, filters=filters)).to_json()
                assert page["mode"] == ("hybrid" if hybrid else "text") and page["hits"], query
                found.append(page)
            found.append({"doc": await library.get_doc(found[0]["hits"][0]["chunk_id"], 1)})
            index = library.corpora[0].engine.current
            assert (index.snapshot is not None) == snapshot
            return found, index.table is not None
        finally:
            library.close()

    return asyncio.run(run())


@pytest.mark.parametrize("provider", ["none", "hash"])
def test_the_snapshot_answers_as_the_table_does_without_opening_it(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings(provider)))
    assert serving_snapshot.present(out, "chunks", published_version(out))
    from_snapshot, opened = answers(out, snapshot=True, hybrid=provider == "hash")
    assert not opened  # full-text lists, phrases, vectors, filters, get_doc: answered without the table
    monkeypatch.setattr(published_module, "USE_SNAPSHOT", False)
    from_table, _ = answers(out, snapshot=False, hybrid=provider == "hash")
    assert from_snapshot == from_table


def test_a_query_beyond_ascii_opens_the_table_and_answers(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))

    async def run() -> tuple[bool, bool, list[dict]]:
        library = Library.open([("", out, None)], query_model="none")
        try:
            await library.search("webhook signature", limit=3)
            index = library.corpora[0].engine.current
            before = index.table is not None
            page = (await library.search("webhook café signature", limit=3)).to_json()
            return before, index.table is not None, page["hits"]
        finally:
            library.close()

    before, after, hits = asyncio.run(run())
    assert not before and after and hits


def test_a_shared_session_answers_its_first_searches_from_the_table(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `--shared` session, forked from a resident that imported LanceDB (resident.serve_child), answers
    while the word positions are still being built from the table instead of waiting for them; the same
    answer as from the positions."""
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    built = ChunkWords.of
    release = threading.Event()

    def held(texts: list[str]) -> ChunkWords:
        release.wait(30)
        return built(texts)

    monkeypatch.setattr(ChunkWords, "of", staticmethod(held))
    monkeypatch.setenv(words_cache.ENV, "off")  # built, not mapped from what an earlier test kept
    monkeypatch.setattr(engine_module, "FIRST_SEARCHES_FROM_TABLE", True)

    async def run() -> tuple[dict, bool]:
        library = Library.open([("", out, None)], query_model="none")
        try:
            page = (await library.search(QUERIES[0][0], limit=8)).to_json()
            index = library.corpora[0].engine.current
            return page, index.table is not None and index.words is None
        finally:
            release.set()
            library.close()

    page, from_table = asyncio.run(run())
    assert from_table
    monkeypatch.setattr(ChunkWords, "of", staticmethod(built))
    monkeypatch.setattr(engine_module, "FIRST_SEARCHES_FROM_TABLE", False)
    from_positions, opened = answers(out, snapshot=True)
    assert not opened and page == from_positions[0]


def test_the_snapshot_is_recorded_with_its_version_and_the_same_bytes_for_the_same_corpus(
    example_docs: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second):
        build(example_docs, out, make_provider(ProviderSettings("hash")))
    version = published_version(first)
    written = snapshot_files(first)
    assert {f"_serving/{version}/{name}" for name in ("rows.json", "content.txt", "vectors.npy")} <= set(written)
    assert written == snapshot_files(second)
    recorded = load(OutputLayout(first).table_files).files("chunks", version) or {}
    assert set(written) <= set(recorded)


def test_the_snapshot_of_a_pruned_version_goes_with_it_and_the_kept_ones_stay(
    example_docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    versions = []
    for n in range(3):  # each build changes a file: a new version, the one before it kept for its readers
        (example_docs / "guides" / "added.md").write_text(f"# Added\n\nA page about parcels, edition {n}.\n")
        build(example_docs, out, make_provider(ProviderSettings("none")))
        versions.append(published_version(out))
    folders = {p.name for p in (OutputLayout(out).table("chunks") / "_serving").iterdir()}
    assert folders == {str(versions[1]), str(versions[2])}, versions
    for version in versions[1:]:  # Lance's own cleanup left the kept snapshots whole
        assert serving_snapshot.read(out, "chunks", version) is not None


def test_a_damaged_snapshot_is_reported_and_the_table_answers(
    example_docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    intact, _ = answers(out, snapshot=True)
    capsys.readouterr()
    head = serving_snapshot.folder(out, "chunks", published_version(out)) / serving_snapshot.HEAD
    head.write_bytes(head.read_bytes()[:-10] + b"0123456789")  # same size, other bytes
    damaged, opened = answers(out, snapshot=False)
    err = capsys.readouterr().err
    assert "warning: the serving snapshot of" in err and "reading the index through LanceDB" in err, err
    assert "Traceback" not in err
    assert damaged == intact and opened


def test_an_index_without_a_snapshot_is_read_through_the_table(example_docs: Path, tmp_path: Path) -> None:
    """An index an older docs-mcp built, before snapshots: nothing of one on disk nor in the records."""
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))
    intact, _ = answers(out, snapshot=True)
    shutil.rmtree(OutputLayout(out).table("chunks") / "_serving")
    records = load(OutputLayout(out).table_files)
    for files in records.versions.values():
        for rel in [rel for rel in files if rel.startswith("_serving/")]:
            del files[rel]
    records.save()
    old, opened = answers(out, snapshot=False)
    assert old == intact and opened


def test_snapshot_content_cut_short_while_served_is_an_unreadable_index(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(example_docs, out, make_provider(ProviderSettings("none")))

    async def run() -> str:
        library = Library.open([("", out, None)], query_model="none")
        try:
            hit = (await library.search("webhook signature", limit=1)).hits[0]["chunk_id"]
            content = serving_snapshot.folder(out, "chunks", published_version(out)) / serving_snapshot.CONTENT
            content.write_bytes(content.read_bytes()[:10])
            with pytest.raises(SearchError) as refused:
                await library.get_doc(hit, 1)
            return str(refused.value)
        finally:
            library.close()

    said = asyncio.run(run())
    assert "cannot be read" in said and "shorter than its offsets say" in said and "rebuild it with" in said, said
