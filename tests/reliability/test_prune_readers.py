"""Pruning keeps table versions by number: a reader of the previously published version keeps working."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.table import open_table
from docs_mcp_core.output.table_files import manifests
from tests.conftest import EXAMPLE_CHUNKS, write


def read_everything(table, query: str) -> tuple[int, list[str]]:
    """What a server does with its pinned version: a full-text search, then the rows themselves."""
    hits = [r["chunk_id"] for r in table.search(query, query_type="fts").select(["chunk_id"]).limit(5).to_list()]
    rows = table.to_arrow()  # every data file of the version
    return rows.num_rows, hits


class Reader(threading.Thread):
    """Reads one pinned version in a loop while builds run, recording every failure."""

    def __init__(self, table, rows: int) -> None:
        super().__init__(daemon=True)
        self.table, self.rows = table, rows
        self.reads, self.failures = 0, []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                rows, hits = read_everything(self.table, "idempotency key")
                assert rows == self.rows and hits, (rows, hits)
                self.reads += 1
            except Exception as exc:  # noqa: BLE001 - collected and asserted on below
                self.failures.append(repr(exc))

    def finish(self) -> Reader:
        self.stop.set()
        self.join()
        return self


@pytest.mark.slow
def test_a_reader_of_the_previous_version_keeps_reading_while_two_builds_publish(
    example_docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    provider = make_provider(ProviderSettings("hash", dimensions=32))
    v0 = build(example_docs, out, provider).index.version
    reader0 = Reader(open_table(out, v0), EXAMPLE_CHUNKS)
    reader0.start()

    write(example_docs, "guides/round-1.md", "# Round one\n\nfirst republish\n")
    v1 = build(example_docs, out, provider).index.version
    # v0 is now the previously published version: its reader finishes its requests.
    rows, hits = read_everything(reader0.table, "idempotency key")
    assert rows == EXAMPLE_CHUNKS and hits[0].startswith("guides/idempotency.md")
    assert read_everything(open_table(out, v0), "idempotency key")[0] == EXAMPLE_CHUNKS
    assert reader0.finish().failures == [] and reader0.reads > 0
    reader1 = Reader(open_table(out, v1), EXAMPLE_CHUNKS + 1)
    reader1.start()

    write(example_docs, "guides/round-2.md", "# Round two\n\nsecond republish\n")
    v2 = build(example_docs, out, provider).index.version  # back to back
    rows, hits = read_everything(reader1.table, "first republish")
    assert rows == EXAMPLE_CHUNKS + 1 and hits[0] == "guides/round-1.md#_preamble"
    rows, hits = read_everything(open_table(out, v1), "second republish")
    assert rows == EXAMPLE_CHUNKS + 1 and "guides/round-2.md#_preamble" not in hits
    assert reader1.finish().failures == [] and reader1.reads > 0
    # Kept by number: exactly the published version and the one before it.
    assert sorted(manifests(out, "chunks")) == [v1, v2]
