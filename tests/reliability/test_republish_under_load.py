"""A server under concurrent HTTP clients keeps answering every request while the index it serves is
republished several times by real `docs-mcp build` processes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ..conftest import DUB_TS, H2_MANIFEST
from .load import build, copy_corpus, http_server, queries_from, run_load

CLIENTS = 12
REPUBLISHES = 4
SECONDS = 20.0  # the clients' run; each republish is due at an even share of it
MAX_REQUESTS = 2000  # per client: bounds the work on a fast machine


@pytest.mark.slow
def test_republishing_under_load_fails_no_request(tmp_path: Path) -> None:
    docs = copy_corpus(DUB_TS, tmp_path / "docs")  # big enough that reads of an old version overlap a publish
    (docs / ".docs-mcp.json").write_text(json.dumps(H2_MANIFEST))
    index = tmp_path / "index"
    build(docs, index, "hash")
    queries = queries_from(index)
    with http_server(index, tmp_path / "server.log") as base:
        result = run_load(
            base,
            docs,
            index,
            "hash",
            clients=CLIENTS,
            seconds=SECONDS,
            republishes=REPUBLISHES,
            queries=queries,
            max_requests=MAX_REQUESTS,
            build_log=tmp_path / "build.log",
        )
    kinds = Counter(failure.split(":", 2)[1].strip()[:80] if ":" in failure else failure for failure in result.failures)
    assert not result.failures, (
        f"{len(result.failures)} of {result.requests} requests failed: {dict(kinds)}\nfirst: {result.failures[0]}"
    )
    assert not result.build_failures, result.build_failures[0]
    assert result.republishes == REPUBLISHES
    assert len(result.versions_seen) == REPUBLISHES + 1  # /healthz saw every publish
    assert result.searches > CLIENTS and result.gets > CLIENTS
    print(result.summary())
