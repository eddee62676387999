"""The serving benchmarks' helpers: a pool that never hands a server the same query twice, and the
memory of a server's process tree read from /proc.

The unseen-queries protocol rests on the pool: a query sent twice to one server is answered from
its result cache, and the benchmark would time the cache.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks.processes import descendants, memory
from benchmarks.unseen import UnseenQueries, normalized, pool, suite_questions


def chunk(chunk_id: str, heading: str, text: str) -> dict[str, str]:
    return {
        "chunk_id": chunk_id,
        "heading": heading,
        "breadcrumb": f"README.md > SDK > {heading}",
        "content_text": text,
    }


CHUNKS = [
    chunk("copy00/README.md#retries", "Retries", "Configure retries with a backoff strategy for each request"),
    chunk("copy01/README.md#retries", "Retries", "Configure retries with a backoff strategy for each request"),
    chunk("copy00/README.md#errors", "Error Handling", "Errors raise an exception that carries the response status"),
    chunk("copy00/README.md#debugging", "RETRIES", "Enable the debug logger to trace every request and response"),
]


def test_a_pool_hands_out_each_query_once_whatever_its_case_or_spacing() -> None:
    asked = UnseenQueries(pool(CHUNKS, ["How do I retry a request?", "how do I  retry a REQUEST?"]))
    handed = asked.take(3) + asked.take(asked.left)

    assert len({normalized(query) for query in handed}) == len(handed) == len(asked)
    assert sum(normalized(query) == "retries" for query in handed) == 1  # "Retries" and "RETRIES" are one query
    assert sum(normalized(query) == "how do i retry a request?" for query in handed) == 1
    with pytest.raises(SystemExit, match="^error: the pool of unseen queries has 0 left"):
        asked.take(1)


def test_spacing_and_case_variants_are_one_query() -> None:
    assert len(UnseenQueries(["Retry config", "retry   config", " RETRY CONFIG ", "retry"])) == 2


def test_suite_questions_are_found_in_a_corpus_copied_under_folders() -> None:
    questions = suite_questions(CHUNKS)  # the shipped dub-ts suite's cases whose answer is README.md#retries

    assert "retryConfig backoff initialInterval" in questions
    assert "retry when the connection drops" in questions
    assert suite_questions([chunk("elsewhere.md#x", "X", "nothing the suites ask about")]) == []


def test_memory_counts_every_process_of_a_server_tree() -> None:
    holder = "import sys; block = b'x' * (48 * 2**20); print('ready', flush=True); sys.stdin.read()"
    parent = (
        "import subprocess, sys; "
        f"child = subprocess.Popen([sys.executable, '-c', {holder!r}], stdin=sys.stdin, stdout=sys.stdout); "
        "child.wait()"
    )
    proc = subprocess.Popen([sys.executable, "-c", parent], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        tree = descendants(proc.pid)
        held = memory(proc.pid)
        alone = memory(proc.pid + 10**7)  # no such process: nothing, not an error

        assert len(tree) == 2 and tree[0] == proc.pid
        assert held.rss >= 48 and held.pss >= 48 and held.pss_anon >= 48  # the child's block, written so resident
        assert held.peak_rss >= held.rss
        assert alone.rss == alone.pss == 0
    finally:
        proc.communicate("", timeout=30)
