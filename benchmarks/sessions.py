"""Sessions benchmark: N stdio servers on one index, what they hold in memory together, and isolation.

An MCP client spawns one stdio server per agent session, so a developer with several editor windows
and terminal agents runs several servers on the same index. This starts `--sessions N` of them
(through the MCP SDK's client), waits until each answers hybrid on an index with vectors, sends
`--searches` queries new to the servers to every one of them (in turn, after one search each that opens
its index), then reads each server's peak
RSS, RSS and PSS (/proc/PID/smaps_rollup: a page shared by several processes counts a share in
each, so the PSS sum is what the sessions take together) and reports the sum. Then isolation: one
server is killed (SIGKILL) and every other one must still answer a new search.

With `--baseline DIR` / `--reference CMD` the other kinds of server are measured the same way, one
kind at a time (each kind's N servers alone on the machine: servers of two kinds running at once
would share library pages and lower each other's PSS), alternating which kind goes first per round.
`--sessions 1` gives one server's figures (the peak RSS after its searches). Indexes as in
first_answer.py (dub-ts built text-only and with the default model, or --index/--hybrid-index).

    .venv/bin/python benchmarks/sessions.py [--sessions 6] [--searches 30] [--modes hybrid] [--baseline DIR]
    .venv/bin/python benchmarks/sessions.py --sessions 1 --modes text,hybrid --work /tmp/fa --copies 10
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.first_answer import (  # noqa: E402
    HYBRID_WAIT,
    POLL_SECONDS,
    add_server_options,
    indexes_from,
    servers_from,
    session_processes,
)
from benchmarks.processes import (  # noqa: E402
    Memory,
    Server,
    children,
    descendants,
    forked_sessions,
    memory,
    parent,
    percentile,
    search,
    servers_stderr,
    stop_residents,
)
from benchmarks.unseen import UnseenQueries  # noqa: E402


async def sessions(
    server: Server, index: Path, n: int, searches: int, asked: UnseenQueries, hybrid: bool, errlog: Any
) -> dict[str, Any]:
    """n servers of one kind on `index`: per-server memory after the searches, their sum, search p50/p95,
    and how many of the others answered after one was killed."""
    async with AsyncExitStack() as stack:
        clients, pids = [], []  # per session, the processes serving it (session_processes)
        for _ in range(n):
            before = children()
            forked_before = forked_sessions(server.shared) if server.shared else []
            client = await stack.enter_async_context(
                Client(stdio_client(server.params(index), errlog=errlog), mode="legacy")
            )
            clients.append(client)
            pids.append(session_processes(server, next(iter(children() - before)), forked_before, False))
        started = time.perf_counter()
        waiting = set(range(n))  # each answers one search (which opens its index) before the measured ones
        while waiting:
            for i in sorted(waiting):
                _, answer = await search(clients[i].session, next(iter(asked)))
                if not hybrid or answer.get("mode") == "hybrid":
                    waiting.discard(i)
            if time.perf_counter() - started > HYBRID_WAIT:
                raise SystemExit(f"error: {len(waiting)} {server.name} servers gave no hybrid answer")
            await anyio.sleep(POLL_SECONDS)
        times: list[float] = []
        modes: set[str] = set()
        for query in asked.take(searches):
            for client in clients:
                t = time.perf_counter()
                _, answer = await search(client.session, query)
                times.append((time.perf_counter() - t) * 1000)
                modes.add(answer.get("mode", "-"))
        each = [sum((memory(pid) for pid in session), Memory()) for session in pids]
        # with --shared, the residents the sessions were forked from count once, in the sum only
        forked_from = {parent(session[-1]) for session in pids} if server.shared else set()
        resident = sum((memory(pid, tree=False) for pid in forked_from), Memory())
        total = sum(each, resident)
        answered = 0
        if n > 1:  # isolation: the others go on answering when one server dies (with --shared: its forked child)
            for pid in reversed(descendants(pids[0][-1])):
                os.kill(pid, signal.SIGKILL)
            query = next(iter(asked))
            for client in clients[1:]:
                try:
                    await search(client.session, query)
                except Exception as exc:  # noqa: BLE001 - counted and said: a lost session is the finding
                    print(f"{server.name}: a session failed after another was killed: {exc}", file=sys.stderr)
                else:
                    answered += 1
    return {
        "n": n,
        "each": [m.__dict__ for m in each],
        "sum": total.__dict__,
        "resident": resident.__dict__,
        "p50": percentile(times, 50),
        "p95": percentile(times, 95),
        "modes": sorted(modes),
        "answered_after_kill": answered,
    }


def run(
    servers: list[Server],
    indexes: dict[str, Path],
    n: int,
    searches: int,
    rounds: int,
    asked: UnseenQueries,
    errlog: Any,
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    results: dict[str, dict[str, list[dict[str, Any]]]] = {mode: {s.name: [] for s in servers} for mode in indexes}
    for r in range(rounds):
        for mode, ours in indexes.items():
            for server in servers[r % len(servers) :] + servers[: r % len(servers)]:
                index = server.index_for(mode, ours)
                if index is not None:
                    found = anyio.run(sessions, server, index, n, searches, asked, mode == "hybrid", errlog)
                    if server.shared:  # alone on the machine, as the other kinds' servers are
                        stop_residents(server.shared)
                    results[mode][server.name].append(found)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return results


def table(results: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """Markdown: per mode and server (medians over rounds), the sums of PSS and RSS, each server's peak RSS
    and PSS, search p50/p95 and the isolation check."""
    lines = [
        "| mode | server | sessions | PSS sum MB (anon / file) | RSS sum MB | per server: peak RSS / PSS MB "
        "| of which the resident: PSS MB | search p50 / p95 ms | modes | answered after one was killed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, by_server in results.items():
        for name, found in by_server.items():
            if not found:
                continue

            def med(pick: Any, found: list[dict[str, Any]] = found) -> float:
                return percentile([pick(f) for f in found], 50)

            n = found[0]["n"]
            peak = med(lambda f: max(e["peak_rss"] for e in f["each"]))
            pss_each = med(lambda f: (f["sum"]["pss"] - f.get("resident", {}).get("pss", 0.0)) / f["n"])
            killed = ", ".join(f"{f['answered_after_kill']}/{n - 1}" for f in found) if n > 1 else "–"
            lines.append(
                f"| {mode} | {name} | {n} | {med(lambda f: f['sum']['pss']):.0f} "
                f"({med(lambda f: f['sum']['pss_anon']):.0f} / {med(lambda f: f['sum']['pss_file']):.0f}) "
                f"| {med(lambda f: f['sum']['rss']):.0f} | {peak:.0f} / {pss_each:.0f} "
                f"| {med(lambda f: f.get('resident', {}).get('pss', 0.0)):.0f} "
                f"| {med(lambda f: f['p50']):.2f} / {med(lambda f: f['p95']):.2f} "
                f"| {'+'.join(sorted({m for f in found for m in f['modes']}))} | {killed} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_options(parser)
    parser.set_defaults(modes="hybrid")
    parser.add_argument("--sessions", type=int, default=6, help="servers on the index at once (default 6)")
    parser.add_argument("--searches", type=int, default=30, help="searches sent to every server (default 30)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat, alternating the kinds' order (default 1)")
    args = parser.parse_args()
    if args.sessions < 1:
        parser.error("--sessions: at least 1")
    indexes = indexes_from(args, parser)
    args.shared_dir = Path(tempfile.mkdtemp(prefix="docs-mcp-shared-"))
    servers = servers_from(args)
    asked = UnseenQueries.for_index(indexes.get("text") or indexes["hybrid"])
    with servers_stderr() as errlog:
        try:
            results = run(servers, indexes, args.sessions, args.searches, args.rounds, asked, errlog)
        finally:
            stop_residents(args.shared_dir)
            shutil.rmtree(args.shared_dir, ignore_errors=True)
    print(
        f"{', '.join(f'{m}: {p}' for m, p in indexes.items())}; {args.sessions} stdio servers per kind, "
        f"{args.searches} searches each after they answered hybrid (on an index with vectors), queries new to "
        f"the servers; medians of {args.rounds} round(s)\n"
    )
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
