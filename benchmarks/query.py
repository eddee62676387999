"""Query benchmark: `docs-mcp serve` over stdio on a dub-ts index, through the MCP SDK client.

For each index (`none` and `hash` by default): server start (spawn → initialize answered,
and → first search answered), then after a warm-up, 200 distinct search_docs calls (a
repeated query would be answered from the engine's caches) and 50 get_doc calls, reporting
p50/p95/p99 latency and the server's peak RSS.

`--baseline DIR` instead runs two servers on each index at once, this checkout's and DIR's
(another checkout's docs_mcp_core, e.g. the previous commit), and sends every search to both,
one after the other, alternating which goes first: drift on a noisy machine then hits both
alike, and the table reports each one's p50/p95, their ratio, and each one's time to hybrid
and peak RSS.

`--index DIR` measures an index built elsewhere instead of building dub-ts ones (queries come
from its chunks.json); with `--baseline`, side by side as above; with `--against-index OTHER`,
this checkout serves both indexes side by side in the same way (e.g. dub-ts ×30 against ×1:
how search time grows with the corpus, without the drift between two runs).

    .venv/bin/python benchmarks/query.py [--providers none,hash] [--searches 200] [--gets 50] [--baseline DIR]
    .venv/bin/python benchmarks/query.py --index X30 --against-index X1 [--searches 400]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "dub-ts"
WARMUP = 20  # searches before measuring


def queries(chunks: list[dict], n: int, seed: int = 7) -> list[str]:
    """n distinct queries from the corpus itself: headings, word pairs, phrases, questions.

    Distinct, because the engine caches recent answers and query vectors: a repeated query
    would measure the cache, not the search.
    """
    rng = random.Random(seed)
    headings = sorted({c["heading"] for c in chunks if c["heading"]})
    words = sorted({w for c in chunks for w in c["content_text"].split() if w.isalpha() and 4 <= len(w) <= 12})
    verbs = ["create", "list", "delete", "update", "retrieve", "configure", "handle", "find"]
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n:
        kind = i % 4
        i += 1
        if kind == 0:
            query = rng.choice(headings)
        elif kind == 1:
            query = " ".join(rng.sample(words, 2))
        elif kind == 2:
            text = rng.choice(chunks)["content_text"].split()
            start = rng.randrange(max(1, len(text) - 4))
            query = " ".join(text[start : start + 4])
        else:
            query = f"how do I {rng.choice(verbs)} {rng.choice(words).lower()}"
        if query.strip() and query not in seen:
            seen.add(query)
            out.append(query)
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def server_pid(code: Path | None = None, index: Path | None = None) -> int | None:
    """This process's `docs-mcp serve` child; with `code`, the one running that checkout (its PYTHONPATH);
    with `index`, the one serving that index."""
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().split(") ")[-1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
            environ = (stat.parent / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        path = next((e[len(b"PYTHONPATH=") :].decode() for e in environ if e.startswith(b"PYTHONPATH=")), None)
        if (
            fields[1] == me
            and b"serve" in cmdline
            and (code is None or path == str(code))
            and (index is None or str(index).encode() + b"\0" in cmdline)
        ):
            return int(stat.parent.name)
    return None


def peak_rss_mb(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def measure(
    index: Path, warmups: list[str], searches: list[str], gets: list[str], hybrid: bool
) -> dict[str, float]:
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "docs-mcp"),
        args=["serve", "--index", str(index)],
        env=dict(os.environ),
    )
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        initialized = time.perf_counter() - started
        first = await client.call_tool("search_docs", {"query": "warm up"})
        first_search = time.perf_counter() - started
        mode = json.loads(first.content[0].text).get("mode")
        while hybrid and mode != "hybrid":  # the query model loads in the background; measure hybrid answers
            assert time.perf_counter() - started < 120, "the server never went hybrid"
            await anyio.sleep(0.05)
            mode = json.loads((await client.call_tool("search_docs", {"query": "warm up"})).content[0].text)["mode"]
        hybrid_ready = time.perf_counter() - started
        for query in warmups:  # distinct from the measured ones, so no answer comes from a cache
            await client.call_tool("search_docs", {"query": query})
        search_ms = []
        for query in searches:
            t = time.perf_counter()
            result = await client.call_tool("search_docs", {"query": query, "limit": 10})
            search_ms.append((time.perf_counter() - t) * 1000)
            assert not result.is_error, result.content[0].text
        get_ms = []
        for chunk_id in gets:
            t = time.perf_counter()
            result = await client.call_tool("get_doc", {"chunk_id": chunk_id, "context": 1})
            get_ms.append((time.perf_counter() - t) * 1000)
            assert not result.is_error
        rss = peak_rss_mb(server_pid())
    return {
        "init": initialized,
        "first": first_search,
        "hybrid": hybrid_ready,
        "rss": rss,
        **{f"search_p{p}": percentile(search_ms, p) for p in (50, 95, 99)},
        **{f"get_p{p}": percentile(get_ms, p) for p in (50, 95, 99)},
        "search_mean": statistics.fmean(search_ms),
    }


def _params(index: Path, code: Path | None) -> StdioServerParameters:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    # `python -m`, not the console script: it names this checkout's entry point, which another may lack
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "docs_mcp_core.cli", "serve", "--index", str(index)],
        env=env,
        cwd=str(code or REPO),
    )


async def _mode(client: Client, query: str) -> str:
    return json.loads((await client.call_tool("search_docs", {"query": query})).content[0].text)["mode"]


async def measure_pair(
    servers: dict[str, tuple[Path, Path]], warmups: list[str], searches: list[str], hybrid: bool | set[str]
) -> dict[str, dict[str, float]]:
    """Two servers (name -> index, checkout) at once; each search goes to both, in alternating order.
    `hybrid`: whether (or which of them, by name) to wait for before measuring until they answer hybrid."""
    wait_for = set(servers) if hybrid is True else set(hybrid or ())
    started = time.perf_counter()
    ready: dict[str, float] = {}
    (first, (index_a, code_a)), (second, (index_b, code_b)) = servers.items()
    async with (
        Client(_params(index_a, code_a), mode="legacy") as a,
        Client(_params(index_b, code_b), mode="legacy") as b,
    ):
        clients = {first: a, second: b}
        while len(ready) < 2:
            for name, client in clients.items():
                if name not in ready and (name not in wait_for or await _mode(client, "warm up") == "hybrid"):
                    ready[name] = time.perf_counter() - started
            assert time.perf_counter() - started < 120, "a server never went hybrid"
            await anyio.sleep(0.05)
        for query in warmups:
            for client in clients.values():
                await client.call_tool("search_docs", {"query": query})
        times: dict[str, list[float]] = {first: [], second: []}
        for i, query in enumerate(searches):
            for name in (first, second) if i % 2 == 0 else (second, first):
                t = time.perf_counter()
                result = await clients[name].call_tool("search_docs", {"query": query, "limit": 10})
                times[name].append((time.perf_counter() - t) * 1000)
                assert not result.is_error, result.content[0].text
        rss = {name: peak_rss_mb(server_pid(code, index)) for name, (index, code) in servers.items()}
    return {
        name: {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "ready": ready[name], "rss": rss[name]}
        for name, ms in times.items()
    }


def side_by_side(index: Path, args: argparse.Namespace) -> None:
    """--index with --baseline or --against-index: one table row from two servers measured at once."""
    from docs_mcp_core.output.metadata import require_metadata

    other = args.against_index.resolve() if args.against_index else index
    servers = {"ours": (index, REPO), "baseline": (other, args.baseline.resolve() if args.baseline else REPO)}
    hybrid = {name for name, (served, _) in servers.items() if require_metadata(served).embedding is not None}
    asked = queries(json.loads((index / "chunks.json").read_text()), args.searches + WARMUP)
    pair = anyio.run(measure_pair, servers, asked[:WARMUP], asked[WARMUP:], hybrid)
    a, b = pair["ours"], pair["baseline"]
    what = f"{index} vs {other}" if args.against_index else f"{index}, this checkout vs {args.baseline}"
    modes = " and ".join("hybrid" if name in hybrid else "text" for name in servers)
    print(
        f"{what}: {modes}, stdio, {args.searches} distinct searches after {WARMUP} "
        "warm-up ones, each sent to both servers in alternating order\n"
    )
    print(
        "| search p50 / p95 ms | other p50 / p95 ms | p50 ÷ other | peak RSS MB | other RSS MB |\n|---|---|---|---|---|"
    )
    print(
        f"| {a['p50']:.2f} / {a['p95']:.2f} | {b['p50']:.2f} / {b['p95']:.2f} | {a['p50'] / b['p50']:.2f} | "
        f"{a['rss']:.0f} | {b['rss']:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--providers", default="none,hash", help="specs as in eval benchmark: none, hash, local:onnx, ..."
    )
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--gets", type=int, default=50)
    parser.add_argument("--baseline", type=Path, help="another checkout: run its server beside this one's")
    parser.add_argument("--index", type=Path, help="an index built elsewhere, instead of building dub-ts ones")
    parser.add_argument(
        "--against-index", type=Path, help="with --index: serve this index too, with this checkout, and compare the two"
    )
    args = parser.parse_args()
    if args.index:
        if not (args.baseline or args.against_index):
            parser.error("--index needs --baseline or --against-index")
        side_by_side(args.index.resolve(), args)
        return
    from docs_mcp_core.embedding import make_provider
    from docs_mcp_core.indexing.build import build
    from docs_mcp_core.output.layout import OutputLayout
    from docs_mcp_eval.benchmark import parse_spec

    work = Path(tempfile.mkdtemp(prefix="docs-mcp-query-"))
    try:
        docs = work / "dub-ts"
        shutil.copytree(CORPUS, docs)
        (docs / ".docs-mcp.json").write_text(json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}}))
        print(
            f"dub-ts ({sum(1 for _ in docs.rglob('*.md'))} files), stdio, {args.searches} searches + "
            f"{args.gets} get_doc after {WARMUP} warm-up searches, every query distinct; latencies in ms, start in s"
        )
        if args.baseline:
            print(f"side by side with {args.baseline}, every search sent to both servers in alternating order\n")
            print(
                "| index | search p50 / p95 ms | baseline p50 / p95 ms | p50 ÷ baseline | ready s | baseline ready s "
                "| peak RSS MB | baseline RSS MB |\n|---|---|---|---|---|---|---|---|"
            )
        else:
            print(
                f"{'index':<12} {'init s':>7} {'1st search s':>13} {'hybrid s':>9} {'search p50':>11} {'p95':>6} "
                f"{'p99':>6} {'get_doc p50':>12} {'p95':>6} {'p99':>6} {'peak RSS MB':>12}"
            )
        for provider in args.providers.split(","):
            out = work / f"index-{provider.replace(':', '-')}"
            build(docs, out, make_provider(parse_spec(provider, None)))
            chunks = json.loads(OutputLayout(out).chunks.read_text())
            rng = random.Random(11)
            asked = queries(chunks, args.searches + WARMUP)
            gets = [rng.choice(chunks)["chunk_id"] for _ in range(args.gets)]
            if args.baseline:
                pair = anyio.run(
                    measure_pair,
                    {"ours": (out, REPO), "baseline": (out, args.baseline.resolve())},
                    asked[:WARMUP],
                    asked[WARMUP:],
                    provider not in ("none",),
                )
                a, b = pair["ours"], pair["baseline"]
                print(
                    f"| {provider} | {a['p50']:.2f} / {a['p95']:.2f} | {b['p50']:.2f} / {b['p95']:.2f} | "
                    f"{a['p50'] / b['p50']:.2f} | {a['ready']:.2f} | {b['ready']:.2f} | {a['rss']:.0f} | {b['rss']:.0f} |"
                )
                continue
            r = anyio.run(measure, out, asked[:WARMUP], asked[WARMUP:], gets, provider not in ("none",))
            print(
                f"{provider:<12} {r['init']:>7.2f} {r['first']:>13.2f} {r['hybrid']:>9.2f} {r['search_p50']:>11.2f} {r['search_p95']:>6.2f} "
                f"{r['search_p99']:>6.2f} {r['get_p50']:>12.2f} {r['get_p95']:>6.2f} {r['get_p99']:>6.2f} {r['rss']:>12.0f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
