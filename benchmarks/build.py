"""Build benchmark: cold, no-op and 1%-edit rebuilds of a dub-ts copy, per provider.

Part 1 runs `docs-mcp build` in a fresh process per build (imports count, as for a user
at a shell) and reports the median of N runs: wall time, the build's own time
(`done: … Ns`), peak RSS and chunks embedded. Part 2 runs the same cases through
`docs_mcp_core.indexing.steps.build` in one warm process (imports already paid, as in Dagster's
code server). `openai` points at a local OpenAI-compatible server that adds --latency
seconds per request.

    .venv/bin/python benchmarks/build.py [--runs 3] [--providers hash,openai] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fakes.openai_server import FakeEmbeddingServer  # noqa: E402

CORPUS = REPO / "tests" / "fixtures" / "dub-ts"
MANIFEST = {"version": "1", "strategy": {"chunk_by": "h2"}}


def run_build(docs: Path, out: Path, provider_args: list[str], *, code: Path | None = None) -> dict[str, float]:
    """One `docs-mcp build` in a fresh process; `code`: run that checkout's docs_mcp_core instead of this one.

    rss_mb is the largest peak RSS of the build process and its worker processes (wait4).
    """
    cmd = [sys.executable, "-m", "docs_mcp_core.cli", "build", "--docs-dir", str(docs), "--out", str(out), *provider_args]
    env = {**os.environ, "LANCEDB_LOG": "error"}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=str(code or REPO))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"build failed:\n{stderr}")
    done = re.search(r"done: .*?(\d+) embedded, table version \d+, ([\d.]+)s", stderr)
    assert done, stderr
    return {"wall": wall, "build": float(done.group(2)), "rss_mb": usage.ru_maxrss / 1024, "embedded": int(done.group(1))}


def edit_one_percent(docs: Path, round_no: int) -> int:
    files = sorted(docs.rglob("*.md"))
    picked = files[:: max(1, len(files) // max(1, len(files) // 100))][: max(1, len(files) // 100)]
    for path in picked:
        with path.open("a") as fh:
            fh.write(f"\n\nBenchmark edit {round_no}: a new closing paragraph for this page.\n")
    return len(picked)


def bench_in_process(provider_settings, runs: int, work: Path) -> dict[str, list[float]]:
    from docs_mcp_core.embedding import make_provider
    from docs_mcp_core.indexing.steps import build

    times: dict[str, list[float]] = {"cold": [], "no-op": [], "1% edit": []}
    for run in range(runs):
        docs, out = work / f"warm-docs-{run}", work / f"warm-out-{run}"
        shutil.copytree(CORPUS, docs)
        (docs / ".docs-mcp.json").write_text(json.dumps(MANIFEST))
        provider = make_provider(provider_settings)
        for case in ("cold", "no-op", "1% edit"):
            if case == "1% edit":
                edit_one_percent(docs, run)
            started = time.perf_counter()
            build(docs, out, provider)
            times[case].append(time.perf_counter() - started)
        provider.close()
        shutil.rmtree(docs)
        shutil.rmtree(out)
    return times


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def bench(provider: str, provider_args: list[str], runs: int, work: Path) -> dict[str, list[dict[str, float]]]:
    results: dict[str, list[dict[str, float]]] = {"cold": [], "no-op": [], "1% edit": []}
    for run in range(runs):
        docs = work / f"{provider}-docs-{run}"
        out = work / f"{provider}-out-{run}"
        shutil.copytree(CORPUS, docs)
        (docs / ".docs-mcp.json").write_text(json.dumps(MANIFEST))
        results["cold"].append(run_build(docs, out, provider_args))
        results["no-op"].append(run_build(docs, out, provider_args))
        edited = edit_one_percent(docs, run)
        row = run_build(docs, out, provider_args)
        row["files_edited"] = edited
        results["1% edit"].append(row)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--providers", default="hash,openai")
    parser.add_argument("--no-warm", action="store_true", help="skip part 2 (the warm in-process builds)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the fake OpenAI server adds per request")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="docs-mcp-bench-"))
    files = len(list(CORPUS.rglob("*.md")))
    print(f"corpus: {CORPUS.relative_to(REPO)} ({files} files), median of {args.runs} runs, fresh process per build")
    print(f"{'provider':<12} {'case':<8} {'wall s':>8} {'build s':>8} {'peak RSS MB':>12} {'embedded':>9}")
    server = FakeEmbeddingServer(dims=256, latency=args.latency).start()
    try:
        summary = {}
        for provider in args.providers.split(","):
            name, _, backend = provider.partition(":")  # local:onnx, local:torch
            provider_args = ["--embedding-provider", name] + (["--embedding-backend", backend] if backend else [])
            if provider == "openai":
                provider_args += ["--embedding-model", "text-embedding-3-small", "--embedding-dimensions", "256",
                                  "--embedding-base-url", server.url]
            results = bench(provider, provider_args, args.runs, work)
            for case, rows in results.items():
                print(f"{provider:<12} {case:<8} {median(rows, 'wall'):>8.2f} {median(rows, 'build'):>8.2f} "
                      f"{median(rows, 'rss_mb'):>12.0f} {median(rows, 'embedded'):>9.0f}")
            summary[provider] = {case: (median(rows, "wall"), median(rows, "build")) for case, rows in results.items()}
        print()
        for provider, cases in summary.items():
            cold_wall, cold_build = cases["cold"]
            for case in ("no-op", "1% edit"):
                wall, build = cases[case]
                print(f"{provider}: {case} / cold = {wall / cold_wall:.2f} wall, {build / cold_build:.3f} build time")
        print(f"openai requests served by the {args.latency * 1000:.0f} ms-latency server: {server.requests}")

        import lancedb  # noqa: F401 - a warm process has paid for its imports
        import openai  # noqa: F401

        from docs_mcp_core.embedding import ProviderSettings
        from docs_mcp_eval.benchmark import parse_spec

        if args.no_warm:
            return

        print()
        print(f"warm process (imports done), median of {args.runs} runs, seconds")
        print(f"{'provider':<8} {'cold':>7} {'no-op':>7} {'1% edit':>8} {'no-op/cold':>11} {'edit/cold':>10}")
        for provider in args.providers.split(","):
            settings = (ProviderSettings("openai", "text-embedding-3-small", 256, server.url) if provider == "openai"
                        else parse_spec(provider, None))
            times = bench_in_process(settings, args.runs, work)
            cold, noop, edit = (statistics.median(times[c]) for c in ("cold", "no-op", "1% edit"))
            print(f"{provider:<8} {cold:>7.2f} {noop:>7.2f} {edit:>8.2f} {noop / cold:>11.3f} {edit / cold:>10.3f}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
