"""A search asks LanceDB nothing about the table that cannot change while its version is open."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import published as published_module
from docs_mcp_core.search.library import Library


class CountingHandle:
    """LanceDB's own table handle, counting how often its Arrow schema is converted."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.schema_calls = 0

    def schema(self) -> Any:
        self.schema_calls += 1
        return self.inner.schema()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_searches_use_the_schema_read_when_the_index_was_opened(
    example_docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(published_module, "USE_SNAPSHOT", False)  # the index read from the table, not its snapshot
    out = tmp_path / "index"
    build(example_docs, out, make_provider(ProviderSettings("hash")))

    async def run() -> tuple[int, list[str], list[str]]:
        library = Library.open([("", out, None)], query_model="none")
        try:
            before = [hit["chunk_id"] for hit in (await library.search("retry a request")).hits]
            index = await library.corpora[0].engine.index()
            handle = CountingHandle(index.table._inner)
            index.table._inner = handle
            after = [hit["chunk_id"] for hit in (await library.search("create a shipment label")).hits]
            after += [hit["chunk_id"] for hit in (await library.search('"idempotency key"')).hits]
            return handle.schema_calls, before, after
        finally:
            library.close()

    calls, before, after = asyncio.run(run())
    assert before and after  # the searches ran their full-text (and phrase) queries through the handle
    assert calls == 0, f"{calls} schema conversions for 2 searches"
