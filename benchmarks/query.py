"""Query benchmark: `docs-mcp serve` over stdio on a dub-ts index, through the MCP SDK client.

Every measured query is new to the server (the unseen-queries protocol, benchmarks/unseen.py): the
queries come from a pool built from the index's headings and chunks and the shipped suites'
questions, larger than the run, and none is sent twice to a server (nor one that differs only in
case or spacing), so the engine's result cache and query-vector cache never answer a measured
search. Agents rarely repeat a query verbatim; a benchmark that does would time the cache. As a
control, the first REPEATS measured queries are sent once more at the end: the "repeated" column is
what the cache answers in.

For each index (`none` and `local`, the default model, by default): server start (spawn →
initialize answered, and → first search answered), then after WARMUP searches, 200 searches and
50 get_doc calls, reporting p50/p95/p99 latency, the repeated queries' p50, and the server's peak
RSS and PSS. On an index with vectors the measured searches start once the server answers hybrid.

`--baseline DIR` instead runs two servers on each index at once, this checkout's and DIR's
(another checkout's docs_mcp_core, e.g. the previous commit), and sends every search to both,
one after the other, alternating which goes first: drift on a noisy machine then hits both
alike, and the table reports each one's p50/p95, their ratio, the CPU each server spent a search
(steadier than p50 on a busy machine), and each one's time to hybrid and peak RSS.

`--index DIR` measures an index built elsewhere instead of building dub-ts ones (queries come
from its chunks.json); with `--baseline`, side by side as above; with `--against-index OTHER`,
this checkout serves both indexes side by side in the same way (e.g. dub-ts ×30 against ×1:
how search time grows with the corpus, without the drift between two runs); with `--reference CMD
--reference-index DIR`, against any stdio MCP server command serving its own index of the same corpus
(e.g. the TypeScript reference implementation; `{index}` in CMD stands for DIR).

    .venv/bin/python benchmarks/query.py [--providers none,local] [--searches 200] [--gets 50] [--baseline DIR]
    .venv/bin/python benchmarks/query.py --index X30 --against-index X1 [--searches 400]
    .venv/bin/python benchmarks/query.py --index TEXT --reference 'node bin.js --index-dir {index}' --reference-index REF
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.processes import (  # noqa: E402
    Server,
    checkout,
    children,
    cpu_seconds,
    memory,
    percentile,
    reference,
    search,
)
from benchmarks.unseen import UnseenQueries, pool, suite_questions  # noqa: E402

CORPUS = REPO / "tests" / "fixtures" / "dub-ts"
WARMUP = 20  # searches before measuring
REPEATS = 20  # measured queries sent again at the end: the cache's answer time, for contrast


def unseen(chunks: list[dict], seed: int = 7) -> UnseenQueries:
    """The pool of queries new to the server for an index's chunks (benchmarks/unseen.py)."""
    return UnseenQueries(pool(chunks, suite_questions(chunks), seed))


def queries(chunks: list[dict], n: int, seed: int = 7) -> list[str]:
    """n distinct queries from the pool: headings, suite questions, phrases, word pairs, questions."""
    return unseen(chunks, seed).take(n)


async def _ready(
    clients: dict[str, Client], asked: UnseenQueries, wait_for: set[str], started: float
) -> dict[str, Any]:
    """Search each server with new queries until it has answered once (which opens its index) and, for those
    in `wait_for`, answered hybrid (the query model loads in the background): when each was, and its first
    answer's time."""
    ready: dict[str, float] = {}
    first: dict[str, float] = {}
    while len(ready) < len(clients):
        for name, client in clients.items():
            if name in ready:
                continue
            _, answer = await search(client.session, asked.take(1)[0])
            first.setdefault(name, time.perf_counter() - started)
            if name not in wait_for or answer.get("mode") == "hybrid":
                ready[name] = time.perf_counter() - started
        if time.perf_counter() - started > 120:
            raise SystemExit(f"error: no hybrid answer in 120 s from {', '.join(sorted(set(clients) - set(ready)))}")
        if len(ready) < len(clients):
            await anyio.sleep(0.05)
    return {"ready": ready, "first": first}


async def _timed(client: Client, query: str) -> tuple[float, str]:
    t = time.perf_counter()
    _, answer = await search(client.session, query)
    return (time.perf_counter() - t) * 1000, answer.get("mode", "-")


async def measure(index: Path, asked: UnseenQueries, searches: int, gets: list[str], hybrid: bool) -> dict[str, Any]:
    """One server on `index`: start, `searches` queries new to it after WARMUP ones, REPEATS of them again,
    `gets` get_doc calls, and its memory."""
    server = checkout("ours")
    before = children()
    started = time.perf_counter()
    async with Client(server.params(index), mode="legacy") as client:
        initialized = time.perf_counter() - started
        pid = next(iter(children() - before))
        start = await _ready({"ours": client}, asked, {"ours"} if hybrid else set(), started)
        await client.list_tools()  # as a client does before calling tools (the SDK lists them once to validate)
        for query in asked.take(WARMUP):
            await search(client.session, query)
        measured = asked.take(searches)
        timed = [await _timed(client, query) for query in measured]
        repeated = [(await _timed(client, query))[0] for query in measured[:REPEATS]]
        get_ms = []
        for chunk_id in gets:
            t = time.perf_counter()
            result = await client.call_tool("get_doc", {"chunk_id": chunk_id, "context": 1})
            get_ms.append((time.perf_counter() - t) * 1000)
            assert not result.is_error
        held = memory(pid)
    search_ms = [ms for ms, _ in timed]
    return {
        "init": initialized,
        "first": start["first"]["ours"],
        "hybrid": start["ready"]["ours"],
        "rss": held.peak_rss,
        "pss": held.pss,
        "modes": sorted({mode for _, mode in timed}),
        **{f"search_p{p}": percentile(search_ms, p) for p in (50, 95, 99)},
        **{f"get_p{p}": percentile(get_ms, p) for p in (50, 95, 99)},
        "search_mean": statistics.fmean(search_ms),
        "repeat_p50": percentile(repeated, 50),
    }


async def measure_pair(
    servers: dict[str, tuple[Server, Path]], asked: UnseenQueries, searches: int, hybrid: bool | set[str]
) -> dict[str, dict[str, Any]]:
    """Two servers (name -> server, index) at once; each search goes to both, in alternating order, and is
    new to both. `hybrid`: whether (or which of them, by name) to wait for until they answer hybrid."""
    wait_for = set(servers) if hybrid is True else set(hybrid or ())
    (first, (server_a, index_a)), (second, (server_b, index_b)) = servers.items()
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        clients, pids = {}, {}
        for name, (server, index) in servers.items():
            before = children()
            clients[name] = await stack.enter_async_context(Client(server.params(index), mode="legacy"))
            pids[name] = next(iter(children() - before))
        start = await _ready(clients, asked, wait_for, started)
        for query in asked.take(WARMUP):
            for client in clients.values():
                await search(client.session, query)
        times: dict[str, list[float]] = {first: [], second: []}
        modes: dict[str, set[str]] = {first: set(), second: set()}
        measured = asked.take(searches)
        cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
        for i, query in enumerate(measured):
            for name in (first, second) if i % 2 == 0 else (second, first):
                ms, mode = await _timed(clients[name], query)
                times[name].append(ms)
                modes[name].add(mode)
        cpu = {name: (cpu_seconds(pid) - cpu[name]) * 1000 / searches for name, pid in pids.items()}
        repeated: dict[str, list[float]] = {first: [], second: []}
        for i, query in enumerate(measured[:REPEATS]):
            for name in (first, second) if i % 2 == 0 else (second, first):
                repeated[name].append((await _timed(clients[name], query))[0])
        held = {name: memory(pid) for name, pid in pids.items()}
    return {
        name: {
            "p50": percentile(ms, 50),
            "p95": percentile(ms, 95),
            "ready": start["ready"][name],
            "cpu": cpu[name],
            "rss": held[name].peak_rss,
            "pss": held[name].pss,
            "modes": sorted(modes[name]),
            "repeat_p50": percentile(repeated[name], 50),
        }
        for name, ms in times.items()
    }


def side_by_side(index: Path, args: argparse.Namespace) -> None:
    """--index with --baseline, --reference or --against-index: one table row from two servers measured at once."""
    other = args.against_index.resolve() if args.against_index else index
    if args.reference:
        ours_mode = "hybrid" if has_vectors(index) else "text"
        ref = reference(args.reference, args.reference_index, None)
        servers = {"ours": (checkout("ours"), index), "reference": (ref, args.reference_index.resolve())}
        hybrid = {"ours"} if ours_mode == "hybrid" else set()
        what = f"{index} (this checkout, {ours_mode}) vs the reference on {args.reference_index}"
    else:
        base = checkout("baseline", args.baseline.resolve()) if args.baseline else checkout("other")
        servers = {"ours": (checkout("ours"), index), "baseline": (base, other)}
        hybrid = {name for name, (_, served) in servers.items() if has_vectors(served)}
        what = f"{index} vs {other}" if args.against_index else f"{index}, this checkout vs {args.baseline}"
    asked = UnseenQueries.for_index(index)
    pair = anyio.run(measure_pair, servers, asked, args.searches, hybrid)
    (a, b) = pair.values()
    print(
        f"{what}: stdio, {args.searches} searches after {WARMUP} warm-up ones, each query new to the servers "
        f"(pool of {len(asked)}), sent to both servers in alternating order; 'repeated': {REPEATS} of them "
        "sent again (answered from the result cache)\n"
    )
    print(
        "| search p50 / p95 ms | other p50 / p95 ms | p50 ÷ other | server CPU ms a search: this / other (ratio) "
        "| repeated p50 ms: this / other | modes | peak RSS MB | other RSS MB | PSS MB | other PSS MB |"
        "\n|---|---|---|---|---|---|---|---|---|---|"
    )
    print(
        f"| {a['p50']:.2f} / {a['p95']:.2f} | {b['p50']:.2f} / {b['p95']:.2f} | {a['p50'] / b['p50']:.2f} | "
        f"{a['cpu']:.2f} / {b['cpu']:.2f} ({a['cpu'] / b['cpu']:.2f}) | "
        f"{a['repeat_p50']:.2f} / {b['repeat_p50']:.2f} | {'+'.join(a['modes'])} / {'+'.join(b['modes'])} | "
        f"{a['rss']:.0f} | {b['rss']:.0f} | {a['pss']:.0f} | {b['pss']:.0f} |"
    )


def has_vectors(index: Path) -> bool:
    return json.loads((index / "metadata.json").read_text()).get("embedding") is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--providers", default="none,local", help="specs as in eval benchmark: none, hash, local (default), ..."
    )
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--gets", type=int, default=50)
    parser.add_argument("--baseline", type=Path, help="another checkout: run its server beside this one's")
    parser.add_argument("--index", type=Path, help="an index built elsewhere, instead of building dub-ts ones")
    parser.add_argument(
        "--against-index", type=Path, help="with --index: serve this index too, with this checkout, and compare the two"
    )
    parser.add_argument(
        "--reference", help="with --index: a stdio MCP server command to compare with, {index} standing for its index"
    )
    parser.add_argument("--reference-index", type=Path, help="with --reference: the index it serves")
    args = parser.parse_args()
    if args.reference and not args.reference_index:
        parser.error("--reference needs --reference-index (the index it serves, built by it)")
    if args.index:
        if not (args.baseline or args.against_index or args.reference):
            parser.error("--index needs --baseline, --reference or --against-index")
        side_by_side(args.index.resolve(), args)
        return
    from docs_mcp_core.embedding import make_provider
    from docs_mcp_core.indexing.build import build
    from docs_mcp_eval.benchmark import parse_spec

    work = Path(tempfile.mkdtemp(prefix="docs-mcp-query-"))
    try:
        docs = work / "dub-ts"
        shutil.copytree(CORPUS, docs)
        (docs / ".docs-mcp.json").write_text(json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}}))
        print(
            f"dub-ts ({sum(1 for _ in docs.rglob('*.md'))} files), stdio, {args.searches} searches + "
            f"{args.gets} get_doc after {WARMUP} warm-up searches, every query new to the server; 'repeated': "
            f"{REPEATS} of them sent again (answered from the result cache); latencies in ms, start in s"
        )
        if args.baseline:
            print(f"side by side with {args.baseline}, every search sent to both servers in alternating order\n")
            print(
                "| index | search p50 / p95 ms | baseline p50 / p95 ms | p50 ÷ baseline | server CPU ms a search "
                "(÷ baseline) | repeated p50 ms | ready s | baseline ready s | peak RSS MB | baseline RSS MB |"
                "\n|---|---|---|---|---|---|---|---|---|---|"
            )
        else:
            print(
                "\n| index | init s | 1st search s | hybrid s | search p50 | p95 | p99 | repeated p50 | get_doc p50 "
                "| p95 | p99 | peak RSS MB | PSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
            )
        for provider in args.providers.split(","):
            out = work / f"index-{provider.replace(':', '-')}"
            build(docs, out, make_provider(parse_spec(provider, None)))
            chunks = json.loads((out / "chunks.json").read_text())
            rng = random.Random(11)
            gets = [rng.choice(chunks)["chunk_id"] for _ in range(args.gets)]
            hybrid = provider != "none"
            if args.baseline:
                servers = {
                    "ours": (checkout("ours"), out),
                    "baseline": (checkout("base", args.baseline.resolve()), out),
                }
                pair = anyio.run(measure_pair, servers, unseen(chunks), args.searches, hybrid)
                a, b = pair["ours"], pair["baseline"]
                print(
                    f"| {provider} | {a['p50']:.2f} / {a['p95']:.2f} | {b['p50']:.2f} / {b['p95']:.2f} | "
                    f"{a['p50'] / b['p50']:.2f} | {a['cpu']:.2f} ({a['cpu'] / b['cpu']:.2f}) | {a['repeat_p50']:.2f} | {a['ready']:.2f} | {b['ready']:.2f} "
                    f"| {a['rss']:.0f} | {b['rss']:.0f} |"
                )
                continue
            r = anyio.run(measure, out, unseen(chunks), args.searches, gets, hybrid)
            print(
                f"| {provider} | {r['init']:.2f} | {r['first']:.2f} | {r['hybrid']:.2f} | {r['search_p50']:.2f} "
                f"| {r['search_p95']:.2f} | {r['search_p99']:.2f} | {r['repeat_p50']:.2f} | {r['get_p50']:.2f} "
                f"| {r['get_p95']:.2f} | {r['get_p99']:.2f} | {r['rss']:.0f} | {r['pss']:.0f} |"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
