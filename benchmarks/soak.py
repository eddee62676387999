"""Soak benchmark: N HTTP clients searching and reading for T seconds while the index is republished R times.

A real `docs-mcp serve --transport http --stateless` process on 127.0.0.1, client threads
doing search_docs then get_doc on one of the hits (plain JSON-RPC, one keep-alive connection
each), and R real `docs-mcp build` processes, evenly spread, each publishing a new generation of
one page of a private copy of the corpus. Prints requests, failures, p50/p95/max latency, and
the server's RSS after start and at the end.

    .venv/bin/python benchmarks/soak.py [--clients 32] [--seconds 60] [--republishes 10]
                                        [--corpus tests/fixtures/dub-ts] [--provider hash]

Exit code 1 if any request or build failed. Latencies include the client threads' own work
(they share the machine with the server and the builds).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from docs_mcp_core.output.layout import OutputLayout  # noqa: E402
from tests.reliability.load import build, copy_corpus, http_server, queries_from, run_load  # noqa: E402

DEFAULT_CORPUS = REPO / "tests" / "fixtures" / "dub-ts"
H2_MANIFEST = {"version": "1", "strategy": {"chunk_by": "h2"}}  # how the test suite chunks dub-ts


def server_memory(base: str) -> tuple[float, float] | None:
    """(RSS, peak RSS) in MB of the `docs-mcp serve` process listening at `base`, from /proc (Linux)."""
    port = base.rsplit(":", 1)[1]
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
            if b"serve" not in args or b"--port" not in args or args[args.index(b"--port") + 1] != port.encode():
                continue
            status = dict(
                line.split(":", 1) for line in (cmdline.parent / "status").read_text().splitlines() if ":" in line
            )
            return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024
        except (OSError, ValueError, IndexError, KeyError):
            continue
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32, help="concurrent HTTP clients (threads)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the clients run")
    parser.add_argument("--republishes", type=int, default=10, help="builds published during the run")
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help="docs folder to copy (default: tests/fixtures/dub-ts, chunked by h2)",
    )
    parser.add_argument(
        "--provider",
        default="hash",
        choices=["none", "hash", "local"],
        help="embedding provider for the builds (hash: 64-d offline vectors)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder and print its path")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="docs-mcp-soak-"))
    docs = copy_corpus(args.corpus, work / "docs")
    if args.corpus.resolve() == DEFAULT_CORPUS and not (docs / ".docs-mcp.json").exists():
        (docs / ".docs-mcp.json").write_text(json.dumps(H2_MANIFEST))
    index = work / "index"
    started = time.monotonic()
    build(docs, index, args.provider, work / "build.log")
    chunks = len(json.loads(OutputLayout(index).chunks.read_text()))
    print(
        f"corpus {args.corpus.name}: {chunks} chunks, first build {time.monotonic() - started:.1f}s; "
        f"{args.clients} clients for {args.seconds:.0f}s, {args.republishes} republishes, provider {args.provider}",
        flush=True,
    )
    with http_server(index, work / "server.log") as base:
        before = server_memory(base)
        result = run_load(
            base,
            docs,
            index,
            args.provider,
            clients=args.clients,
            seconds=args.seconds,
            republishes=args.republishes,
            queries=queries_from(index),
            build_log=work / "build.log",
            progress=True,
        )
        after = server_memory(base)
    print(result.summary())
    if before and after:  # a server that grows with the requests it has served shows here
        print(f"server RSS: {before[0]:.0f} MB after start, {after[0]:.0f} MB at the end (peak {after[1]:.0f} MB)")
    print(f"index versions seen by /healthz: {sorted(result.versions_seen)}")
    if result.failures:
        kinds = Counter(f[:120] for f in result.failures)
        print("failures by kind:")
        for text, count in kinds.most_common(10):
            print(f"  {count:>5}  {text}")
    for failure in result.build_failures:
        print(f"build failed: {failure[:500]}")
    print(f"work folder: {work}" if args.keep else "", end="\n" if args.keep else "")
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 1 if result.failures or result.build_failures else 0


if __name__ == "__main__":
    sys.exit(main())
