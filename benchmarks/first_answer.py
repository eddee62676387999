"""First-answer benchmark: spawn → `initialize` answered → first `search_docs` answered, in fresh processes.

What an agent session waits for before its first answer: the MCP client spawns `docs-mcp serve`
over stdio (through the MCP SDK's client, as an editor does), initializes, and sends a search at
once. Each run starts a fresh server per kind of server (this checkout; with `--baseline DIR`
another checkout; with `--reference CMD` any stdio server, e.g. the TypeScript reference
implementation) and mode (text: a text-only index; hybrid: an index built with the default
model), alternating which kind goes first from run to run, so a busy machine slows each alike.

Per mode and server it reports the p50/p95 over the runs of: spawn → initialize answered; spawn →
first search answered, and that search alone (sent right after initialize); how many first answers
were hybrid ("mode" in the answer; a first answer may be text-only while the model loads); on a
hybrid index, spawn → first hybrid answer (a new search every POLL_SECONDS until one says hybrid);
and the server's peak RSS then. Every search is a query the server has not seen (unseen.py).

Without `--index`, dub-ts (or `--copies N` copies of it) is built text-only and with the default
model into `--work DIR` (kept, and reused by the next run with the same DIR).

    .venv/bin/python benchmarks/first_answer.py [--runs 10] [--baseline DIR] [--work /tmp/fa]
    .venv/bin/python benchmarks/first_answer.py --index TEXT --hybrid-index HYBRID --baseline DIR
    .venv/bin/python benchmarks/first_answer.py --reference 'node ref/bin.js --index-dir {index}' \
        --reference-index REF_TEXT [--reference-hybrid-index REF_HYBRID]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.processes import (  # noqa: E402
    Memory,
    Server,
    checkout,
    children,
    cpu_seconds,
    forked_sessions,
    memory,
    percentile,
    reference,
    residents,
    search,
    servers_stderr,
    session_child,
    shared_checkout,
    stop_residents,
)
from benchmarks.unseen import UnseenQueries  # noqa: E402
from docs_mcp_core.shared_session import FIRST_ENV  # noqa: E402

POLL_SECONDS = 0.02  # between searches while waiting for a hybrid answer
HYBRID_WAIT = 120.0  # seconds a server may take to answer hybrid before the run fails


def build_indexes(work: Path, copies: int = 1) -> dict[str, Path]:
    """dub-ts ×copies built text-only and with the default model, in fresh `docs-mcp build` processes
    (skipped for an index already in `work`)."""
    from benchmarks.build import run_build
    from benchmarks.scale import make_corpus

    docs = make_corpus(work, copies)
    built = {}
    for mode, provider in (("text", "none"), ("hybrid", "local")):
        out = work / f"{mode}-x{copies}"
        if not (out / "metadata.json").exists():
            print(f"building {out.name} ({provider}) ...", file=sys.stderr, flush=True)
            run_build(docs, out, ["--embedding-provider", provider])
        built[mode] = out
    return built


def session_processes(server: Server, launcher: int, forked_before: list[int], cold: bool) -> list[int]:
    """The processes serving a session: the server itself; for `--shared`, the launcher and the child a
    resident forked for it (none when the launcher served a first session itself: FIRST_ENV=serve)."""
    if server.shared is None or (cold and server.env.get(FIRST_ENV) == "serve"):
        return [launcher]
    return [launcher, session_child(server.shared, forked_before)]


async def first_answer(
    server: Server, index: Path, asked: UnseenQueries, hybrid: bool, errlog: Any, cold: bool = False
) -> dict[str, Any]:
    """One fresh server: the times (ms from spawn) of its first answers, the first one's mode, peak RSS.
    For `--shared`: a new session of a running resident, or with `cold` the session that starts one."""
    before = children()
    forked_before = forked_sessions(server.shared) if server.shared else []
    started = time.perf_counter()
    async with Client(stdio_client(server.params(index), errlog=errlog), mode="legacy") as client:
        initialized = time.perf_counter() - started
        pids = session_processes(server, next(iter(children() - before)), forked_before, cold)
        cpu_init = sum(cpu_seconds(pid) for pid in pids)
        _, answer = await search(client.session, next(iter(asked)))
        first = time.perf_counter() - started
        cpu_first = sum(cpu_seconds(pid) for pid in pids)
        mode = answer.get("mode", "-")
        to_hybrid = first if mode == "hybrid" else None
        while hybrid and to_hybrid is None:
            if time.perf_counter() - started > HYBRID_WAIT:
                raise SystemExit(f"error: {server.name} on {index} gave no hybrid answer in {HYBRID_WAIT:.0f} s")
            await anyio.sleep(POLL_SECONDS)
            _, answer = await search(client.session, next(iter(asked)))
            if answer.get("mode") == "hybrid":
                to_hybrid = time.perf_counter() - started
        held = sum((memory(pid) for pid in pids), Memory())
    return {
        "init": initialized * 1000,
        "first": first * 1000,
        "search": (first - initialized) * 1000,
        "mode": mode,
        "hybrid": to_hybrid * 1000 if to_hybrid is not None else None,
        "rss": held.peak_rss,
        "pss": held.pss,
        "cpu_init": cpu_init * 1000,
        "cpu_first": cpu_first * 1000,
    }


def run(
    servers: list[Server], indexes: dict[str, Path], runs: int, asked: UnseenQueries, errlog: Any
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """runs × modes × servers fresh sessions, the servers' order rotating from one run to the next."""
    results: dict[str, dict[str, list[dict[str, Any]]]] = {mode: {s.name: [] for s in servers} for mode in indexes}
    for n in range(runs):
        for mode, ours in indexes.items():
            for server in servers[n % len(servers) :] + servers[: n % len(servers)]:
                index = server.index_for(mode, ours)
                if index is None:
                    continue
                if server.shared and n == 0:  # its resident's start is not a run: `cold` measures that
                    anyio.run(first_answer, server, index, asked, False, errlog)
                sample = anyio.run(first_answer, server, index, asked, mode == "hybrid", errlog)
                results[mode][server.name].append(sample)
        print(f"run {n + 1}/{runs} done", file=sys.stderr, flush=True)
    return results


def cold_runs(
    folder: Path, indexes: dict[str, Path], runs: int, asked: UnseenQueries, errlog: Any
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The first `--shared` session, with no resident running: the launcher waiting for the resident it
    starts (FIRST_ENV=wait, the default) or serving that session itself (serve), alternating."""
    kinds = [
        shared_checkout(f"--shared, first session, {first}", folder, {FIRST_ENV: first}) for first in ("wait", "serve")
    ]
    results: dict[str, dict[str, list[dict[str, Any]]]] = {mode: {k.name: [] for k in kinds} for mode in indexes}
    for n in range(runs):
        for mode, index in indexes.items():
            for kind in kinds[n % 2 :] + kinds[: n % 2]:
                stop_residents(folder)
                started = len(residents(folder))
                sample = anyio.run(first_answer, kind, index, asked, mode == "hybrid", errlog, True)
                results[mode][kind.name].append(sample)
                deadline = time.monotonic() + HYBRID_WAIT  # a resident starting beside a session served plainly
                while len(residents(folder)) == started and time.monotonic() < deadline:
                    time.sleep(0.05)
        print(f"cold run {n + 1}/{runs} done", file=sys.stderr, flush=True)
    stop_residents(folder)
    return results


def table(results: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """Markdown: per mode and server, p50 / p95 of each phase (ms), first answers that were hybrid, peak RSS;
    then each other server's p50s divided by the first server's."""
    lines = [
        "| mode | server | runs | spawn → initialize | → first search answered | that search alone "
        "| server CPU to initialize / to first answer (p50) | first answer hybrid | → first hybrid answer "
        "| peak RSS / PSS MB (p50) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for mode, by_server in results.items():
        first_name = next(iter(by_server))
        for name, samples in by_server.items():
            if not samples:
                continue

            def pp(key: str, samples: list[dict[str, Any]] = samples) -> str:
                values = [s[key] for s in samples if s[key] is not None]
                return f"{percentile(values, 50):.0f} / {percentile(values, 95):.0f}" if values else "–"

            hybrid = sum(1 for s in samples if s["mode"] == "hybrid")
            lines.append(
                f"| {mode} | {name} | {len(samples)} | {pp('init')} | {pp('first')} | {pp('search')} "
                f"| {percentile([s['cpu_init'] for s in samples], 50):.0f} / "
                f"{percentile([s['cpu_first'] for s in samples], 50):.0f} | {hybrid}/{len(samples)} | {pp('hybrid') if mode == 'hybrid' else '–'} "
                f"| {percentile([s['rss'] for s in samples], 50):.0f} / {percentile([s['pss'] for s in samples], 50):.0f} |"
            )
            if name != first_name and by_server[first_name]:
                ratios.append((mode, name, first_name, samples, by_server[first_name]))
    if ratios:
        lines += [
            "",
            "| mode | p50 ratio | initialize | first search answered | that search alone | CPU to first answer |",
            "|---|---|---|---|---|---|",
        ]
        for mode, name, first_name, samples, base in ratios:

            def ratio(key: str, samples: list[dict[str, Any]] = samples, base: list[dict[str, Any]] = base) -> str:
                a = [s[key] for s in samples if s[key] is not None]
                b = [s[key] for s in base if s[key] is not None]
                return f"{percentile(a, 50) / percentile(b, 50):.2f}" if a and b else "–"

            lines.append(
                f"| {mode} | {name} ÷ {first_name} | {ratio('init')} | {ratio('first')} | {ratio('search')} "
                f"| {ratio('cpu_first')} |"
            )
    return "\n".join(lines)


def servers_from(args: argparse.Namespace) -> list[Server]:
    """This checkout first, then with --shared, then --baseline, then --reference."""
    servers = [checkout("this checkout")]
    if args.shared:
        servers.append(shared_checkout("this checkout --shared", args.shared_dir))
    if args.baseline:
        servers.append(checkout(f"baseline {args.baseline}", args.baseline.resolve()))
    if args.reference:
        servers.append(reference(args.reference, args.reference_index, args.reference_hybrid_index))
    return servers


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """--index/--hybrid-index/--copies/--work and the side-by-side servers, shared with sessions.py."""
    parser.add_argument("--index", type=Path, help="a text-only index to serve (default: build dub-ts)")
    parser.add_argument("--hybrid-index", type=Path, help="an index with vectors to serve (default: build dub-ts)")
    parser.add_argument("--copies", type=int, default=1, help="without --index: build dub-ts ×N (default 1)")
    parser.add_argument("--work", type=Path, help="without --index: build into (and reuse) this folder")
    parser.add_argument("--modes", default="text,hybrid", help="text, hybrid or both (default)")
    parser.add_argument("--baseline", type=Path, help="another checkout: its server runs beside this one's")
    parser.add_argument("--reference", help="a stdio MCP server command serving its own index, {index} standing for it")
    parser.add_argument("--reference-index", type=Path, help="with --reference: its text-only index")
    parser.add_argument("--reference-hybrid-index", type=Path, help="with --reference: its index with vectors")
    parser.add_argument(
        "--shared", action="store_true", help="also this checkout's `serve --shared` sessions (one resident per index)"
    )
    parser.add_argument("--json", type=Path, help="also write every sample to this file")


def indexes_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Path]:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := set(modes) - {"text", "hybrid"}:
        parser.error(f"--modes: unknown {', '.join(sorted(unknown))}; use text, hybrid or text,hybrid")
    if args.reference and not (args.reference_index or args.reference_hybrid_index):
        parser.error("--reference needs --reference-index and/or --reference-hybrid-index (its own index)")
    given = {"text": args.index, "hybrid": args.hybrid_index}
    if any(given[m] is None for m in modes):
        built = build_indexes((args.work or Path(tempfile.mkdtemp(prefix="docs-mcp-fa-"))).resolve(), args.copies)
        given = {m: given[m] or built[m] for m in given}
    for mode in modes:
        if not (given[mode] / "metadata.json").exists():
            parser.error(f"--{'hybrid-' if mode == 'hybrid' else ''}index {given[mode]}: no metadata.json there")
    return {m: given[m].resolve() for m in modes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_options(parser)
    parser.add_argument("--runs", type=int, default=10, help="fresh sessions per server and mode (default 10)")
    parser.add_argument(
        "--cold", type=int, default=0, help="with --shared: first sessions with no resident running (default 0)"
    )
    args = parser.parse_args()
    indexes = indexes_from(args, parser)
    args.shared_dir = Path(tempfile.mkdtemp(prefix="docs-mcp-shared-"))
    servers = servers_from(args)
    asked = UnseenQueries.for_index(indexes.get("text") or indexes["hybrid"])
    cold: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with servers_stderr() as errlog:
        try:
            results = run(servers, indexes, args.runs, asked, errlog)
            if args.shared and args.cold:
                cold = cold_runs(args.shared_dir, indexes, args.cold, asked, errlog)
        finally:
            stop_residents(args.shared_dir)
            shutil.rmtree(args.shared_dir, ignore_errors=True)
    print(
        f"{', '.join(f'{m}: {p}' for m, p in indexes.items())}; {args.runs} runs, a fresh server per run, the "
        f"servers' order rotating; times in ms (p50 / p95); {asked.taken} distinct queries from a pool of "
        f"{len(asked)}, none sent twice\n"
    )
    print(table(results))
    if cold:
        print(f"\nThe first --shared session, no resident running ({args.cold} runs each):\n")
        print(table(cold))
    if args.json:
        args.json.write_text(json.dumps({"runs": results, "cold": cold}, indent=1))


if __name__ == "__main__":
    main()
