"""A load driver: HTTP clients searching and reading while the index is republished.

Shared by tests/reliability/test_republish_under_load.py (zero failed requests) and
benchmarks/soak.py (figures). Everything is real: a `docs-mcp serve --transport http
--stateless` process on 127.0.0.1, `docs-mcp build` processes publishing a changing corpus,
and client threads speaking plain JSON-RPC over keep-alive HTTP connections (stateless mode
needs no session, so a client is one connection and one POST per tool call).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CHURN_FILE = "soak-churn.md"


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "docs_mcp_core.cli", *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_churn(docs: Path, generation: int) -> None:
    """The file that changes on every republish. Its headings stay put, so its chunk IDs exist in
    every published version and a get_doc for an ID from an earlier search is always valid."""
    (docs / CHURN_FILE).write_text(
        "# Soak churn\n\nThis page changes on every republish of the soak test.\n\n"
        f"## Current generation\n\nGeneration {generation} was published: churnword{generation} "
        f"{'and more text ' * (generation % 7)}\n"
    )


def build(docs: Path, out: Path, provider: str, log: Path | None = None) -> None:
    """One real `docs-mcp build` process; raises with its stderr if it fails."""
    args = ["build", "--docs-dir", str(docs), "--out", str(out), "--embedding-provider", provider, "-q"]
    if provider == "hash":
        args += ["--embedding-dimensions", "64"]
    result = subprocess.run(
        cli_command(*args), capture_output=True, text=True, timeout=600, env={**os.environ, "LANCEDB_LOG": "error"}
    )
    if log:
        with log.open("a") as fh:
            fh.write(result.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"docs-mcp build failed ({result.returncode}): {result.stderr.strip()[-2000:]}")


def queries_from(out: Path, count: int = 60, seed: int = 11) -> list[str]:
    """Varied queries from the published chunks: headings, word pairs, phrases, and the churn page."""
    chunks = json.loads((out / "chunks.json").read_text())
    rng = random.Random(seed)
    headings = sorted({c["heading"] for c in chunks if c.get("heading")})
    words = sorted({w for c in chunks for w in c["content_text"].split() if w.isalpha() and 4 <= len(w) <= 12})
    found = []
    for i in range(count):
        kind = i % 4
        if kind == 0 and headings:
            found.append(rng.choice(headings))
        elif kind == 1 and len(words) > 1:
            found.append(" ".join(rng.sample(words, 2)))
        elif kind == 2:
            text = rng.choice(chunks)["content_text"].split() or ["docs"]
            start = rng.randrange(max(1, len(text) - 4))
            found.append(" ".join(text[start : start + 4]))
        else:
            found.append("soak churn current generation")
    return found


def wait_until_healthy(proc: subprocess.Popen, base: str, log: Path | None, timeout: float = 60) -> None:
    """Until `/healthz` answers; a server that exits first is an error carrying its stderr."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(
                f"the server exited with {proc.returncode}" + (f": {log.read_text()[-2000:]}" if log else "")
            )
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def http_server(index: Path, log: Path, *extra: str) -> Iterator[str]:
    """`docs-mcp serve --transport http --stateless` on a free port; yields the base URL once /healthz answers.

    On exit the server gets SIGTERM and must end by it: uvicorn shuts down gracefully, then
    re-raises the signal (exit -15); a crash in finalization would show as -6 instead."""
    port = free_port()
    with log.open("w") as err:
        proc = subprocess.Popen(
            cli_command(
                "serve", "--index", str(index), "--transport", "http", "--port", str(port), "--stateless", *extra
            ),
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "LANCEDB_LOG": "error"},
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_healthy(proc, base, log)
            yield base
        finally:
            proc.terminate()
            try:
                code = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
    if code not in (0, -signal.SIGTERM):
        raise RuntimeError(f"the server exited with {code} after SIGTERM: {log.read_text()[-2000:]}")


class McpHttpClient:
    """One keep-alive connection; `call` returns (ok, text) for one tools/call."""

    def __init__(self, base: str, timeout: float = 30.0) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.conn: http.client.HTTPConnection | None = None
        self.next_id = 0

    def call(self, tool: str, arguments: dict) -> tuple[bool, str]:
        self.next_id += 1
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request(
                "POST",
                "/mcp",
                body=body,
                headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            )
            response = self.conn.getresponse()
            raw = response.read().decode("utf-8", errors="replace")
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            return False, f"{tool}: connection error {type(exc).__name__}: {exc}"
        if response.status != 200:
            return False, f"{tool}: HTTP {response.status}: {raw[:300]}"
        try:
            message = json.loads(raw)
        except ValueError:
            return False, f"{tool}: not JSON: {raw[:300]}"
        if "error" in message:
            return False, f"{tool}: JSON-RPC error {message['error']}"
        result = message.get("result") or {}
        text = "".join(part.get("text", "") for part in result.get("content") or [])
        if result.get("isError"):
            return False, f"{tool}: tool error: {text[:300]}"
        return True, text

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass
class LoadResult:
    latencies: list[float] = field(default_factory=list)  # seconds, every request
    failures: list[str] = field(default_factory=list)
    build_failures: list[str] = field(default_factory=list)
    searches: int = 0
    gets: int = 0
    republishes: int = 0
    versions_seen: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests(self) -> int:
        return len(self.latencies)

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else float("nan")

    def summary(self) -> str:
        ms = lambda s: f"{s * 1000:.1f} ms"  # noqa: E731
        return (
            f"requests {self.requests} ({self.searches} search_docs, {self.gets} get_doc), "
            f"failures {len(self.failures)}, republishes {self.republishes} ({len(self.build_failures)} builds failed), "
            f"p50 {ms(self.percentile(50))}, p95 {ms(self.percentile(95))}, max {ms(max(self.latencies, default=0))}"
        )


def client_loop(
    base: str, queries: list[str], result: LoadResult, stop: threading.Event, seed: int, max_requests: int
) -> None:
    """Search, then read one of the hits, until told to stop (or after max_requests)."""
    rng = random.Random(seed)
    client = McpHttpClient(base)
    made = 0
    try:
        while not stop.is_set() and made < max_requests:
            query = rng.choice(queries)
            started = time.perf_counter()
            ok, text = client.call("search_docs", {"query": query, "limit": 5})
            elapsed = time.perf_counter() - started
            made += 1
            hits = []
            if ok:
                try:
                    hits = json.loads(text)["hits"]
                except (ValueError, KeyError):
                    ok, text = False, f"search_docs: unexpected answer {text[:300]}"
            with result.lock:
                result.latencies.append(elapsed)
                result.searches += 1
                if not ok:
                    result.failures.append(text)
            if not hits or stop.is_set() or made >= max_requests:
                continue
            chunk_id = rng.choice(hits)["chunk_id"]
            started = time.perf_counter()
            ok, text = client.call("get_doc", {"chunk_id": chunk_id, "context": rng.choice([0, 1])})
            elapsed = time.perf_counter() - started
            made += 1
            if ok and f"--- Chunk: {chunk_id} " not in text:
                ok, text = False, f"get_doc: unexpected answer {text[:300]}"
            with result.lock:
                result.latencies.append(elapsed)
                result.gets += 1
                if not ok:
                    result.failures.append(text)
    finally:
        client.close()


def health_version(base: str) -> int | None:
    with urllib.request.urlopen(f"{base}/healthz", timeout=10) as response:
        return json.loads(response.read()).get("index_version")


def run_load(
    base: str,
    docs: Path,
    index: Path,
    provider: str,
    *,
    clients: int,
    seconds: float,
    republishes: int,
    queries: list[str],
    max_requests: int = 10**9,
    build_log: Path | None = None,
    progress: bool = False,
) -> LoadResult:
    """`clients` threads for about `seconds`, while `republishes` builds publish a new corpus generation,
    spread evenly over the run. Returns when every client and build has finished."""
    result = LoadResult()
    stop = threading.Event()
    threads = [
        threading.Thread(
            target=client_loop,
            args=(base, queries, result, stop, seed, max_requests),
            name=f"client-{seed}",
            daemon=True,
        )
        for seed in range(clients)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        result.versions_seen.add(health_version(base) or -1)
        for generation in range(1, republishes + 1):
            due = started + seconds * generation / (republishes + 1)
            time.sleep(max(0.0, due - time.monotonic()))
            write_churn(docs, generation)
            try:
                build(docs, index, provider, build_log)
            except RuntimeError as exc:
                result.build_failures.append(str(exc))
                continue
            result.republishes += 1
            result.versions_seen.add(health_version(base) or -1)
            if progress:
                print(
                    f"  republish {generation}/{republishes} done at {time.monotonic() - started:.1f}s "
                    f"({result.requests} requests, {len(result.failures)} failures)",
                    file=sys.stderr,
                    flush=True,
                )
        time.sleep(max(0.0, started + seconds - time.monotonic()))
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    return result


def copy_corpus(source: Path, dest: Path) -> Path:
    """A private copy of a corpus, with the churn page in it (generation 0)."""
    shutil.copytree(source, dest)
    write_churn(dest, 0)
    return dest
