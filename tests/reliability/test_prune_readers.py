"""Pruning keeps table versions by number: a reader of the previously published version keeps working."""

from __future__ import annotations

from pathlib import Path

from docs_mcp_core.build import build
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.index import open_table
from docs_mcp_core.tablefiles import manifests
from tests.conftest import EXAMPLE_CHUNKS, write


def read_everything(table, query: str) -> tuple[int, list[str]]:
    """What a server does with its pinned version: a full-text search, then the rows themselves."""
    hits = [r["chunk_id"] for r in table.search(query, query_type="fts").select(["chunk_id"]).limit(5).to_list()]
    rows = table.to_arrow()  # every data file of the version
    return rows.num_rows, hits


def test_a_reader_of_the_previous_version_keeps_reading_while_two_builds_publish(example_docs: Path,
                                                                                tmp_path: Path) -> None:
    out = tmp_path / "out"
    provider = make_provider(ProviderSettings("hash", dimensions=32))
    v0 = build(example_docs, out, provider).index.version
    reader0 = open_table(out, v0)
    assert read_everything(reader0, "idempotency key")[0] == EXAMPLE_CHUNKS

    write(example_docs, "guides/round-1.md", "# Round one\n\nfirst republish\n")
    v1 = build(example_docs, out, provider).index.version
    # v0 is now the previously published version: its reader finishes its requests.
    rows, hits = read_everything(reader0, "idempotency key")
    assert rows == EXAMPLE_CHUNKS and hits and hits[0].startswith("guides/idempotency.md")
    assert read_everything(open_table(out, v0), "idempotency key")[0] == EXAMPLE_CHUNKS
    reader1 = open_table(out, v1)

    write(example_docs, "guides/round-2.md", "# Round two\n\nsecond republish\n")
    v2 = build(example_docs, out, provider).index.version  # back to back
    rows, hits = read_everything(reader1, "first republish")
    assert rows == EXAMPLE_CHUNKS + 1 and hits[0] == "guides/round-1.md#_preamble"
    rows, hits = read_everything(open_table(out, v1), "second republish")
    assert rows == EXAMPLE_CHUNKS + 1 and "guides/round-2.md#_preamble" not in hits
    # Kept by number: exactly the published version and the one before it.
    assert sorted(manifests(out, "chunks")) == [v1, v2]
