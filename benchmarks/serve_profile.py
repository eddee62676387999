"""Where a server's time and memory go: the steps before its first answer, and what each part holds.

Four views, each in fresh processes:

- `stages`: a server's start replayed step by step in one process, with the server's own functions
  (the console script's import, `serve`'s imports, lancedb's import, create_server, the query model's
  load, opening the index, the first searches, then steady ones): wall and CPU time, RSS, PSS and
  modules after each step (medians of --runs), and, from one more run under `python -X importtime`,
  the import time of each step by top-level package. `--cprofile` adds the steady searches' top
  functions; `--tracemalloc` the Python-side allocations still held after the searches, by package.
- `parts`: what each component costs alone (RSS and PSS over a bare interpreter, and import time):
  numpy, pyarrow, lancedb, the MCP SDK, jsonschema, onnxruntime, tokenizers, `serve`'s imports
  without lancedb, the query model loaded, the index opened (text-only and with vectors).
- `server`: a real `docs-mcp serve` over stdio (MCP SDK client) after --searches queries new to it:
  its memory by mapping (anonymous memory, the malloc heap, each package's shared libraries, the model
  and index files: what sessions could share and what each holds alone), and the CPU each thread
  spent on the searches (the event loop's Python thread, LanceDB's runtime threads, onnxruntime's).
- `search`: where one steady search's time goes, in process (no stdio), text-only and hybrid alternating
  query by query on an index with vectors: the wall and event-loop CPU time of each stage (the query's
  tokens and ONNX run, the vector list, the full-text list, fusion, snippets, the rest of the search,
  the tool call around it), medians over --searches unseen queries each.
- `pyspy`: py-spy samples of a real server from spawn to its first answer, and over steady searches,
  by what the sampled Python code was doing (needs py-spy: `pip install py-spy`).

    .venv/bin/python benchmarks/serve_profile.py stages --index INDEX [--runs 5] [--cprofile] [--tracemalloc]
    .venv/bin/python benchmarks/serve_profile.py parts --index TEXT --hybrid-index HYBRID
    .venv/bin/python benchmarks/serve_profile.py server --index INDEX [--searches 200]
    .venv/bin/python benchmarks/serve_profile.py search --index HYBRID [--searches 200]
    .venv/bin/python benchmarks/serve_profile.py pyspy --index INDEX [--searches 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

MARK = "@@stage "
RESULT = "@@result "
WARMUP_SEARCHES = 30  # search: before measuring (word positions built, caches warm)
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


# -- inside a profiled process ------------------------------------------------------------------------
def own_memory() -> dict[str, float]:
    status = Path("/proc/self/status").read_text().splitlines()
    rollup = Path("/proc/self/smaps_rollup").read_text().splitlines()

    def mb(lines: list[str], key: str) -> float:
        return next((int(line.split()[1]) for line in lines if line.startswith(key + ":")), 0) / 1024

    return {
        "rss": mb(status, "VmRSS"),
        "peak": mb(status, "VmHWM"),
        "pss": mb(rollup, "Pss"),
        "anon": mb(rollup, "Pss_Anon"),
    }


class Stages:
    """Marks the end of each step: its wall and CPU time, the memory then, the modules loaded."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def done(self, name: str) -> None:
        row = {
            "stage": name,
            "wall": (time.perf_counter() - self.wall) * 1000,
            "cpu": (time.process_time() - self.cpu) * 1000,
        }
        print(RESULT + json.dumps(row | own_memory() | {"modules": len(sys.modules)}), flush=True)
        print(MARK + name, file=sys.stderr, flush=True)  # splits -X importtime's lines by step
        self.wall, self.cpu = time.perf_counter(), time.process_time()


def replay(index: str, searches: int, profile_out: str | None, trace: bool) -> None:
    """`docs-mcp serve --index INDEX` up to its first answers and `searches` more, step by step, in this
    (fresh) process. lancedb is imported as a step of its own before create_server: the server imports it
    in a warm-up thread from there on, meanwhile answering `initialize`."""
    if trace:
        import tracemalloc

        tracemalloc.start(1)
    print(RESULT + json.dumps({"stage": "interpreter"} | own_memory() | {"modules": len(sys.modules)}), flush=True)
    stages = Stages()
    import docs_mcp_core.cli
    from docs_mcp_core.process import own_process

    own_process()  # as the console script does before anything else (process.py)
    stages.done("the console script's imports (docs_mcp_core.cli)")
    import mcp.server.stdio  # noqa: F401 - what serve_stdio imports as it starts

    import docs_mcp_core.server.stdio_pipes  # noqa: F401
    from docs_mcp_core.cli import served_corpora
    from docs_mcp_core.server import create_server

    stages.done("serve's own imports (server, MCP SDK, search engine)")
    import lancedb  # noqa: F401

    stages.done("import lancedb (the server's warm-up thread)")
    docs = create_server(served_corpora((index,), None))
    engine = docs.library.corpora[0].engine
    stages.done("create_server (metadata.json, engines, cursor secret)")
    if engine.embedder is not None:
        engine.embedder.wait()
        stages.done("load the query model (the server's background thread)")
    from mcp import types

    from benchmarks.unseen import UnseenQueries

    asked = UnseenQueries.for_index(Path(index))

    async def searching() -> None:
        def params(query: str) -> Any:
            return types.CallToolRequestParams(name="search_docs", arguments={"query": query, "limit": 10})

        await engine.index()
        stages.done("open the index (the first search does)")
        await docs.call_tool(None, params(asked.take(1)[0]))
        stages.done("the first search, with the index open")
        await docs.call_tool(None, params(asked.take(1)[0]))
        stages.done("the second search")
        profile = None
        if profile_out:
            import cProfile

            profile = cProfile.Profile()
            profile.enable()
        for query in asked.take(searches):
            result = await docs.call_tool(None, params(query))
            assert not result.is_error, getattr(result.content[0], "text", "")
        if profile is not None and profile_out:
            profile.disable()
            profile.dump_stats(profile_out)
        stages.done(f"{searches} more searches (in process, no stdio)")

    asyncio.run(searching())
    if trace:
        import tracemalloc

        by_package: Counter[str] = Counter()
        for stat in tracemalloc.take_snapshot().statistics("filename"):
            by_package[package_of(stat.traceback[0].filename)] += stat.size
        held = {name: size / 2**20 for name, size in by_package.most_common(12)}
        print(RESULT + json.dumps({"tracemalloc": held, "total": sum(by_package.values()) / 2**20}), flush=True)


def package_of(filename: str) -> str:
    """The top-level package of a source file (site-packages/NAME/…, docs_mcp_core/…), or "stdlib"."""
    path = filename.replace(os.sep, "/")
    for anchor in ("site-packages/", "dist-packages/"):
        if anchor in path:
            return path.split(anchor, 1)[1].split("/", 1)[0].removesuffix(".py")
    for ours in ("docs_mcp_core", "docs_mcp_eval", "benchmarks"):
        if f"/{ours}/" in path:
            return ours
    return "stdlib" if "/lib/python" in path or path.startswith("<frozen") else path.rsplit("/", 1)[-1]


# -- stages -----------------------------------------------------------------------------------------------
def run_replay(index: Path, searches: int, *flags: str, extra: tuple[str, ...] = ()) -> tuple[list[dict], str]:
    cmd = [sys.executable, *flags, str(Path(__file__).resolve()), "_replay", str(index), str(searches), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"error: the replay failed:\n{proc.stderr[-3000:]}")
    rows = [json.loads(line[len(RESULT) :]) for line in proc.stdout.splitlines() if line.startswith(RESULT)]
    return rows, proc.stderr


def imports_by_stage(stderr: str) -> dict[str, dict[str, float]]:
    """-X importtime's self times (ms), summed by top-level package, per step."""
    stages: dict[str, dict[str, float]] = {}
    current: defaultdict[str, float] = defaultdict(float)
    for line in stderr.splitlines():
        if line.startswith(MARK):
            stages[line[len(MARK) :]] = dict(current)
            current = defaultdict(float)
        elif match := IMPORT_LINE.match(line):
            current[match.group(4).split(".")[0]] += int(match.group(1)) / 1000
    return stages


def stages_report(args: argparse.Namespace) -> None:
    index = args.index.resolve()
    samples = [run_replay(index, args.searches)[0] for _ in range(args.runs)]
    imports = imports_by_stage(run_replay(index, args.searches, "-X", "importtime")[1])
    print(f"{index}: a server's start replayed step by step; medians of {args.runs} fresh processes\n")
    print(
        "| step | wall ms | CPU ms | RSS MB after | PSS MB after (anon) | modules | import ms under -X importtime: "
        "top packages |\n|---|---|---|---|---|---|---|"
    )
    base = samples[0][0]
    print(
        f"| the interpreter | – | – | {base['rss']:.0f} | {base['pss']:.0f} ({base['anon']:.0f}) | {base['modules']} | – |"
    )
    for i, row in enumerate(samples[0][1:], start=1):

        def med(key: str, i: int = i) -> float:
            return statistics.median(s[i][key] for s in samples)

        spent = imports.get(row["stage"], {})
        top = ", ".join(f"{name} {ms:.0f}" for name, ms in sorted(spent.items(), key=lambda kv: -kv[1])[:6])
        print(
            f"| {row['stage']} | {med('wall'):.0f} | {med('cpu'):.0f} | {med('rss'):.0f} | {med('pss'):.0f} "
            f"({med('anon'):.0f}) | {row['modules']} | {sum(spent.values()):.0f}{': ' + top if top else ''} |"
        )
    if args.cprofile:
        import pstats

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "steady.prof"
            run_replay(index, args.searches, extra=("--cprofile", str(out)))
            print(f"\ncProfile of the {args.searches} steady searches (in process), top functions by own time:\n")
            stats = pstats.Stats(str(out))
            stats.sort_stats("tottime").print_stats(18)
    if args.tracemalloc:
        rows, _ = run_replay(index, args.searches, extra=("--tracemalloc",))
        held = next(r for r in rows if "tracemalloc" in r)
        print(f"\nPython-side allocations held after the searches (tracemalloc): {held['total']:.1f} MB\n")
        print("| allocated in | MB |\n|---|---|")
        for name, mb in held["tracemalloc"].items():
            print(f"| {name} | {mb:.1f} |")


# -- parts ------------------------------------------------------------------------------------------------
PARTS = {
    "numpy": "import numpy",
    "pyarrow (+ compute)": "import pyarrow, pyarrow.compute",
    "lancedb (with pyarrow, numpy)": "import lancedb",
    "MCP SDK (what the server imports)": "import mcp.types, mcp.server.lowlevel, mcp.server.stdio, mcp.server.subscriptions",
    "jsonschema": "import jsonschema",
    "onnxruntime": "import onnxruntime",
    "tokenizers": "import tokenizers",
    "serve's imports, without lancedb": "import docs_mcp_core.cli, docs_mcp_core.server.app, mcp.server.stdio",
    "everything serve imports before its first search": (
        "import docs_mcp_core.cli, docs_mcp_core.server.app, mcp.server.stdio, lancedb, pyarrow.compute"
    ),
}
OPEN_INDEX = """
import asyncio
from docs_mcp_core.search.engine import PublishedIndex
asyncio.run(PublishedIndex({index!r}).open())
"""
QUERY_MODEL = """
import json
from docs_mcp_core.embedding.query import QueryEmbedder
embedder = QueryEmbedder(json.load(open({metadata!r}))["embedding"], log=lambda m: None)
embedder.wait()
assert embedder.provider is not None, embedder.reason
embedder.embed("how do I retry a request")
"""


def part(code: str) -> dict[str, float]:
    """A fresh interpreter that runs `code`: its memory then, and the time the code took."""
    probe = (
        f"import time, sys\nsys.path.insert(0, {str(REPO)!r})\nfrom benchmarks.serve_profile import own_memory\n"
        "from docs_mcp_core.process import own_process\nown_process()  # as docs-mcp's own processes do\n"
        f"t = time.perf_counter()\n{code}\nprint(__import__('json').dumps(own_memory() | "
        "{'ms': (time.perf_counter() - t) * 1000}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"error: {code!r} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def parts_report(args: argparse.Namespace) -> None:
    parts = dict(PARTS)
    parts["an open index, text-only (lancedb and its table read)"] = OPEN_INDEX.format(index=str(args.index.resolve()))
    if args.hybrid_index:
        hybrid = args.hybrid_index.resolve()
        parts["an open index with vectors"] = OPEN_INDEX.format(index=str(hybrid))
        parts["the query model, loaded and used once (QueryEmbedder)"] = QUERY_MODEL.format(
            metadata=str(hybrid / "metadata.json")
        )
    runs = args.runs
    bare = [part("pass") for _ in range(runs)]
    base = {key: statistics.median(b[key] for b in bare) for key in bare[0]}
    print(f"Each part alone in a fresh interpreter (medians of {runs}), over a bare one ({base['rss']:.0f} MB RSS)\n")
    print("| part | + peak RSS MB | + RSS MB | + PSS MB | + anon PSS MB | time ms |\n|---|---|---|---|---|---|")
    for name, code in parts.items():
        found = [part(code) for _ in range(runs)]

        def med(key: str, found: list[dict[str, float]] = found) -> float:
            return statistics.median(f[key] for f in found)

        print(
            f"| {name} | {med('peak') - base['peak']:.0f} | {med('rss') - base['rss']:.0f} | "
            f"{med('pss') - base['pss']:.0f} | {med('anon') - base['anon']:.0f} | {med('ms'):.0f} |"
        )


# -- a real server --------------------------------------------------------------------------------------
def mapping_kind(path: str) -> str:
    """What a mapping of a process holds, by its path."""
    if not path:
        return "anonymous (native heaps and arenas, Python objects, arrays)"
    if path == "[heap]":
        return "[heap] (malloc's main arena)"
    if path.startswith("["):
        return "stacks and kernel pages"
    if path.endswith(".onnx"):
        return "the model file"
    if ".lancedb" in path or path.endswith((".lance", ".idx")):
        return "index files"
    for anchor in ("site-packages/",):
        if anchor in path:
            return f"{path.split(anchor, 1)[1].split('/', 1)[0]} (libraries)"
    if "libpython" in path or re.search(r"/python3(\.\d+)?$", path):
        return "the Python interpreter"
    return "system libraries" if path.startswith(("/usr/lib", "/lib")) else Path(path).name


def smaps(pid: int) -> dict[str, dict[str, float]]:
    """MB per kind of mapping: RSS, PSS, and the anonymous part of RSS (the rest is pages of files, which
    processes mapping the same file share)."""
    kinds: defaultdict[str, defaultdict[str, float]] = defaultdict(lambda: defaultdict(float))
    kind = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if len(head) >= 5 and "-" in head[0] and ":" in head[3]:  # a mapping's header line
            kind = mapping_kind(head[5].strip() if len(head) == 6 else "")
        elif line.endswith(" kB"):
            key, value = line.split(":")[0], int(line.split()[1]) / 1024
            if key in ("Rss", "Pss", "Anonymous"):
                kinds[kind][key] += value
    return {k: dict(v) for k, v in kinds.items()}


def threads_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of each live thread of a process, summed by thread name."""
    out: defaultdict[str, float] = defaultdict(float)
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        out[re.sub(r"[-_ ]?\d+$", "", name)] += (int(fields[11]) + int(fields[12])) / tick
    return dict(out)


async def served(index: Path, searches: int, during: Any = None) -> dict[str, Any]:
    """A real server: started, warmed (hybrid, if the index has vectors), then `searches` new queries;
    `during(pid)` is entered around the searches (an attached profiler)."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import stdio_client

    from benchmarks.processes import checkout, children, memory, search
    from benchmarks.unseen import UnseenQueries

    asked = UnseenQueries.for_index(index)
    hybrid = json.loads((index / "metadata.json").read_text()).get("embedding") is not None
    with tempfile.TemporaryFile("w+") as errlog:
        before = children()
        async with Client(stdio_client(checkout("ours").params(index), errlog=errlog), mode="legacy") as client:
            pid = next(iter(children() - before))
            started = time.perf_counter()
            while (await search(client.session, asked.take(1)[0]))[1].get("mode") != "hybrid" and hybrid:
                assert time.perf_counter() - started < 120, "no hybrid answer in 120 s"
                await anyio.sleep(0.05)
            for query in asked.take(20):
                await search(client.session, query)
            cpu_before, wall = threads_cpu(pid), time.perf_counter()
            stop = during(pid) if during else None
            for query in asked.take(searches):
                await search(client.session, query)
            if stop:
                stop()
            wall = time.perf_counter() - wall
            cpu_after = threads_cpu(pid)
            return {
                "pid": pid,
                "wall": wall,
                "cpu": {name: cpu_after[name] - cpu_before.get(name, 0.0) for name in cpu_after},
                "smaps": smaps(pid),
                "memory": memory(pid).__dict__,
            }


def server_report(args: argparse.Namespace) -> None:
    import anyio

    index = args.index.resolve()
    found = anyio.run(served, index, args.searches)
    n = args.searches
    print(f"{index}: a real server over stdio after {n} searches new to it (and 20 warm-up ones)\n")
    print(f"Wall {found['wall'] * 1000 / n:.2f} ms a search; CPU a search by thread:\n")
    print("| thread | CPU ms a search |\n|---|---|")
    for name, seconds in sorted(found["cpu"].items(), key=lambda kv: -kv[1]):
        if seconds > 0:
            print(f"| {name} | {seconds * 1000 / n:.2f} |")
    mem = found["memory"]
    print(f"\nMemory: peak RSS {mem['peak_rss']:.0f} MB, RSS {mem['rss']:.0f}, PSS {mem['pss']:.0f}, by mapping:\n")
    print(
        "| mapping | RSS MB | PSS MB | anonymous MB (each process its own) | file pages MB (shareable) |"
        "\n|---|---|---|---|---|"
    )
    for kind, mb in sorted(found["smaps"].items(), key=lambda kv: -kv[1].get("Rss", 0))[:16]:
        anon = mb.get("Anonymous", 0)
        print(
            f"| {kind} | {mb.get('Rss', 0):.1f} | {mb.get('Pss', 0):.1f} | {anon:.1f} | {mb.get('Rss', 0) - anon:.1f} |"
        )


# -- py-spy -----------------------------------------------------------------------------------------------
IDLE = re.compile(r"^(select|_worker|wait|acquire|get|_wait_for_tstate_lock) \(|selectors\.py")


def stack_kind(frames: list[str]) -> str:
    """What a sampled Python stack was doing (frames root first, "function (file:line)")."""
    text = ";".join(frames)
    if IDLE.search(frames[-1]) or "EpollSelector.select" in frames[-1]:
        return "waiting (an idle thread, or the event loop waiting on LanceDB, the model or stdin)"
    if "_find_and_load" in text:
        modules = [f for f in frames if f.startswith("<module> (")]
        return "import: " + (package_of(modules[-1][len("<module> (") :].rsplit(":", 1)[0]) if modules else "?")
    if "/embedding/" in text or "onnxruntime" in text or "tokenizers" in text:
        return "query model (load, embed)"
    if re.search(r"\b(open|_load) \([^)]*search/engine\.py", text):
        return "opening the index"
    if "/search/" in text:
        return "search (docs_mcp_core.search)"
    if "/server/" in text and "docs_mcp_core" in text and "/mcp/" not in frames[-1]:
        return "server (docs_mcp_core.server)"
    if "/mcp/" in text or "pydantic" in text:
        return "MCP SDK (protocol, validation)"
    return "event loop, stdio, other"


def pyspy_table(raw: Path, title: str) -> None:
    kinds: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        if not stack or not samples.isdigit():
            continue
        frames = stack.split(";")
        kinds[stack_kind(frames)] += int(samples)
        leaf = frames[-1]
        where = leaf[leaf.find("(") + 1 : leaf.rfind(":")] if "(" in leaf else leaf
        leaves[f"{leaf.split(' (')[0]} ({package_of(where)})"] += int(samples)
    total = sum(kinds.values()) or 1
    print(f"\n{title}: {total} samples of the Python threads (idle waits not counted)\n")
    print("| doing | share |\n|---|---|")
    for kind, count in kinds.most_common(14):
        print(f"| {kind} | {100 * count / total:.0f}% |")
    print("\n| innermost function (package) | share |\n|---|---|")
    for leaf, count in leaves.most_common(12):
        print(f"| {leaf} | {100 * count / total:.1f}% |")


async def first_answer_sampled(index: Path, raw: Path, rate: int) -> None:
    import logging

    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from benchmarks.processes import search
    from benchmarks.unseen import UnseenQueries

    logging.getLogger("mcp.client.stdio").setLevel(logging.CRITICAL)  # py-spy's own lines on the server's stdout
    command = [shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")]
    command += ["record", "-r", str(rate), "-f", "raw", "--full-filenames", "-o", str(raw), "--"]
    command += [sys.executable, "-m", "docs_mcp_core.cli", "serve", "--index", str(index)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ), cwd=str(REPO))
    with tempfile.TemporaryFile("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            await search(client.session, UnseenQueries.for_index(index).take(1)[0])
        deadline = time.monotonic() + 30
        while not raw.exists() and time.monotonic() < deadline:  # py-spy writes when its child has exited
            await anyio.sleep(0.1)


def pyspy_report(args: argparse.Namespace) -> None:
    if not (shutil.which("py-spy") or (Path(sys.executable).parent / "py-spy").exists()):
        raise SystemExit("error: py-spy is not installed here: `.venv/bin/pip install py-spy`, then run this again")
    import anyio

    index = args.index.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "start.txt"
        anyio.run(first_answer_sampled, index, raw, args.rate)
        pyspy_table(raw, "spawn → initialize → first search answered")
        steady = Path(tmp) / "steady.txt"
        spy = str(shutil.which("py-spy") or Path(sys.executable).parent / "py-spy")

        def attach(pid: int) -> Any:
            proc = subprocess.Popen(
                [
                    spy,
                    "record",
                    "-r",
                    str(args.rate),
                    "-f",
                    "raw",
                    "--full-filenames",
                    "-o",
                    str(steady),
                    "-p",
                    str(pid),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(0.5)  # attached before the searches start

            def stop() -> None:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=30)

            return stop

        found = anyio.run(served, index, args.searches, attach)
        pyspy_table(steady, f"{args.searches} steady searches, each new to the server")
        print(
            "\nCPU a search by thread: "
            + ", ".join(f"{k} {v * 1000 / args.searches:.2f} ms" for k, v in found["cpu"].items() if v > 0)
        )


# -- search -----------------------------------------------------------------------------------------------
SEARCH_STAGES = (
    ("tokenize", "the query's word pieces (tokenizers)"),
    ("onnx", "the query's ONNX run"),
    ("embed", "the query vector (tokens, run, pooling)"),
    ("vector", "the vector list (scan of the in-memory vectors)"),
    ("full_text", "the full-text list's scores (bm25.full_text)"),
    ("ranked", "the ranked lists (SearchEngine.ranked, all of the above)"),
    ("fuse", "fusion"),
    ("snippets", "snippets"),
    ("search", "the whole search (Library.search)"),
    ("call", "the tool call (arguments, answer encoded)"),
)


def search_report(args: argparse.Namespace) -> None:
    """Times each stage of steady searches by wrapping the functions that do it, in this process."""
    from mcp import types

    from benchmarks.unseen import UnseenQueries
    from docs_mcp_core.cli import served_corpora
    from docs_mcp_core.search import answers, bm25
    from docs_mcp_core.search import engine as engine_module
    from docs_mcp_core.server import create_server

    docs = create_server(served_corpora((str(args.index),), None))
    engine = docs.library.corpora[0].engine
    embedder = engine.embedder
    if embedder is None or not embedder.wait(120) or embedder.provider is None:
        raise SystemExit(f"error: {args.index} has no vectors or its query model does not load: nothing to compare")
    spent: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # stage -> [wall ns, CPU ns of the calling thread]

    def timed(stage: str, function: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return function(*a, **k)
            finally:
                spent[stage][0] += time.perf_counter_ns() - wall
                spent[stage][1] += time.thread_time_ns() - cpu

        return run

    def timed_async(stage: str, function: Any) -> Any:
        async def run(*a: Any, **k: Any) -> Any:
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return await function(*a, **k)
            finally:
                spent[stage][0] += time.perf_counter_ns() - wall
                spent[stage][1] += time.thread_time_ns() - cpu

        return run

    provider: Any = embedder.provider
    provider.load()
    if hasattr(provider, "_tokenize") and hasattr(provider, "_session"):  # the onnx backend
        provider._tokenize = timed("tokenize", provider._tokenize)
        session = provider._session

        class Session:  # the InferenceSession, its run timed
            run = staticmethod(timed("onnx", session.run))

            def __getattr__(self, name: str) -> Any:
                return getattr(session, name)

        provider._session = Session()
    embedder.embed = timed("embed", embedder.embed)  # type: ignore[method-assign]
    bm25.full_text = timed("full_text", bm25.full_text)
    engine_module.fuse = timed("fuse", engine_module.fuse)  # type: ignore[attr-defined]
    answers.snippet = timed("snippets", answers.snippet)
    engine.nearest_in_memory = timed_async("vector", engine.nearest_in_memory)  # type: ignore[method-assign]
    engine.ranked = timed_async("ranked", engine.ranked)  # type: ignore[method-assign]
    docs.library.search = timed_async("search", docs.library.search)  # type: ignore[method-assign]
    asked = UnseenQueries.for_index(args.index)
    rows: dict[str, dict[str, list[tuple[float, float]]]] = {"text": defaultdict(list), "hybrid": defaultdict(list)}

    async def searching() -> None:
        async def call(query: str) -> None:
            arguments = {"query": query, "limit": 10}
            result = await docs.call_tool(None, types.CallToolRequestParams(name="search_docs", arguments=arguments))
            assert not result.is_error, getattr(result.content[0], "text", "")

        await engine.index()
        for query in asked.take(WARMUP_SEARCHES):
            await call(query)
        for n, query in enumerate(asked.take(2 * args.searches)):
            mode = "hybrid" if (n + n // 2) % 2 else "text"  # ABBA: neither mode always runs first
            engine.embedder = embedder if mode == "hybrid" else None
            spent.clear()
            await timed_async("call", call)(query)
            for stage, (wall, cpu) in spent.items():
                rows[mode][stage].append((wall / 1e6, cpu / 1e6))
        engine.embedder = embedder

    asyncio.run(searching())
    print(
        f"{args.index}: {args.searches} unseen searches in each mode, in process, alternating; medians, ms "
        f"(wall / CPU of the thread that ran the stage)\n"
    )
    print("| stage | text-only wall / CPU | hybrid wall / CPU |\n|---|---|---|")
    for stage, label in SEARCH_STAGES:
        cells = []
        for mode in ("text", "hybrid"):
            found = rows[mode].get(stage)
            cells.append(
                f"{statistics.median(w for w, _ in found):.3f} / {statistics.median(c for _, c in found):.3f}"
                if found
                else "–"
            )
        print(f"| {label} | {cells[0]} | {cells[1]} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_replay":  # inside a profiled process (see run_replay)
        rest = sys.argv[4:]
        profile_out = rest[rest.index("--cprofile") + 1] if "--cprofile" in rest else None
        replay(sys.argv[2], int(sys.argv[3]), profile_out, "--tracemalloc" in rest)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("view", choices=["stages", "parts", "server", "pyspy", "search"])
    parser.add_argument("--index", type=Path, required=True, help="an index folder (text-only, or with vectors)")
    parser.add_argument("--hybrid-index", type=Path, help="parts: an index with vectors too")
    parser.add_argument("--runs", type=int, default=5, help="stages, parts: fresh processes per figure (median)")
    parser.add_argument("--searches", type=int, default=200, help="steady searches (default 200)")
    parser.add_argument("--rate", type=int, default=500, help="pyspy: samples a second (default 500)")
    parser.add_argument("--cprofile", action="store_true", help="stages: profile the steady searches")
    parser.add_argument("--tracemalloc", action="store_true", help="stages: Python allocations by package")
    args = parser.parse_args()
    if not (args.index / "metadata.json").exists():
        parser.error(f"--index {args.index}: no metadata.json there")
    {
        "stages": stages_report,
        "parts": parts_report,
        "server": server_report,
        "pyspy": pyspy_report,
        "search": search_report,
    }[args.view](args)


if __name__ == "__main__":
    main()
