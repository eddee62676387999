"""Build benchmark: cold, no-op and 1%-edit rebuilds of a dub-ts copy, per provider.

Part 1 runs `docs-mcp build` in a fresh process per build (imports count, as for a user
at a shell) and reports the median of N runs: wall time, the build's own time
(`done in Ns: …`), peak RSS and chunks embedded. Part 2 runs the same cases through
`docs_mcp_core.indexing.build.build` in one warm process (imports already paid, as in Dagster's
code server). `openai` points at a local OpenAI-compatible server that adds --latency
seconds per request.

`--baseline PATH` runs part 1 for this checkout and for the checkout at PATH side by side, in
one run, alternating which goes first (PYTHONPATH points each build at its checkout): on a busy
machine both then meet the same noise. CPU seconds (the build's and its workers', from wait4)
are reported next to wall time, being less sensitive to other processes than wall time is.

    .venv/bin/python benchmarks/build.py [--runs 3] [--providers hash,openai] [--latency 0.05]
    .venv/bin/python benchmarks/build.py --providers none,local --baseline /path/to/main --no-warm
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

    rss_mb is the largest peak RSS of the build process and its worker processes, cpu their user and
    system seconds (wait4 counts the workers the build waited for).
    """
    cmd = [
        sys.executable,
        "-m",
        "docs_mcp_core.cli",
        "build",
        "--docs-dir",
        str(docs),
        "--out",
        str(out),
        *provider_args,
    ]
    env = {**os.environ, "LANCEDB_LOG": "error"}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(code or REPO)
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"build failed:\n{stderr}")
    done = re.search(r"done in ([\d.]+)s: .*?(?:(\d+) (?:chunks?|passages?) embedded|text-only)", stderr)
    assert done, stderr
    return {
        "wall": wall,
        "build": float(done.group(1)),
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "embedded": int(done.group(2) or 0),
    }


def edit_one_percent(docs: Path, round_no: int) -> int:
    files = sorted(docs.rglob("*.md"))
    picked = files[:: max(1, len(files) // max(1, len(files) // 100))][: max(1, len(files) // 100)]
    for path in picked:
        with path.open("a") as fh:
            fh.write(f"\n\nBenchmark edit {round_no}: a new closing paragraph for this page.\n")
    return len(picked)


def bench_in_process(provider_settings, runs: int, work: Path) -> dict[str, list[float]]:
    from docs_mcp_core.embedding import make_provider
    from docs_mcp_core.indexing.build import build

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


CASES = ("cold", "no-op", "1% edit")


def bench_once(
    provider: str,
    provider_args: list[str],
    run: int,
    work: Path,
    code: Path | None,
    results: dict[str, list[dict[str, float]]],
) -> None:
    """One cold build, a no-op rebuild and a 1%-edit rebuild of a fresh copy, appended to `results`."""
    tag = "base" if code is not None and code != REPO else "this"
    docs = work / f"{provider}-{tag}-docs-{run}"
    out = work / f"{provider}-{tag}-out-{run}"
    shutil.copytree(CORPUS, docs)
    (docs / ".docs-mcp.json").write_text(json.dumps(MANIFEST))
    results["cold"].append(run_build(docs, out, provider_args, code=code))
    results["no-op"].append(run_build(docs, out, provider_args, code=code))
    edited = edit_one_percent(docs, run)
    row = run_build(docs, out, provider_args, code=code)
    row["files_edited"] = edited
    results["1% edit"].append(row)
    shutil.rmtree(docs)
    shutil.rmtree(out)


def provider_args_for(provider: str, server_url: str) -> list[str]:
    name, _, backend = provider.partition(":")  # local:onnx, local:torch
    args = ["--embedding-provider", name] + (["--embedding-backend", backend] if backend else [])
    if provider == "openai":
        args += [
            "--embedding-model",
            "text-embedding-3-small",
            "--embedding-dimensions",
            "256",
            "--embedding-base-url",
            server_url,
        ]
    return args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--providers", default="hash,openai")
    parser.add_argument("--no-warm", action="store_true", help="skip part 2 (the warm in-process builds)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the fake OpenAI server adds per request")
    parser.add_argument("--baseline", type=Path, help="another checkout of docs-mcp to run side by side (part 1 only)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="docs-mcp-bench-"))
    files = len(list(CORPUS.rglob("*.md")))
    providers = args.providers.split(",")
    codes: list[tuple[str, Path]] = [("this", REPO)]
    if args.baseline is not None:
        codes.append(("baseline", args.baseline.resolve()))
    print(
        f"corpus: {CORPUS.relative_to(REPO)} ({files} files), median of {args.runs} runs, fresh process per build"
        + (f"; baseline: {codes[1][1]}, runs alternating" if len(codes) > 1 else "")
    )
    server = FakeEmbeddingServer(dims=256, latency=args.latency).start()
    try:
        results = {(code, p): {case: [] for case in CASES} for code, _ in codes for p in providers}
        for run in range(args.runs):
            for provider in providers:
                order = codes if run % 2 == 0 else codes[::-1]  # who goes first alternates
                for code, path in order:
                    bench_once(
                        provider, provider_args_for(provider, server.url), run, work, path, results[(code, provider)]
                    )
        print(
            f"{'code':<9} {'provider':<12} {'case':<8} {'wall s':>8} {'build s':>8} {'CPU s':>7} {'peak RSS MB':>12} "
            f"{'embedded':>9}"
        )
        for (code, provider), cases in results.items():
            for case, rows in cases.items():
                print(
                    f"{code:<9} {provider:<12} {case:<8} {median(rows, 'wall'):>8.2f} {median(rows, 'build'):>8.2f} "
                    f"{median(rows, 'cpu'):>7.2f} {median(rows, 'rss_mb'):>12.0f} {median(rows, 'embedded'):>9.0f}"
                )
        print()
        for (code, provider), cases in results.items():
            cold_wall, cold_build = median(cases["cold"], "wall"), median(cases["cold"], "build")
            for case in ("no-op", "1% edit"):
                wall, build = median(cases[case], "wall"), median(cases[case], "build")
                print(
                    f"{code} {provider}: {case} / cold = {wall / cold_wall:.2f} wall, {build / cold_build:.3f} build time"
                )
        reference = providers[0]
        if len(providers) > 1:
            print()
            print(f"cold build / {reference} cold build, per checkout (medians)")
            for code, _ in codes:
                base = results[(code, reference)]["cold"]
                for provider in providers[1:]:
                    cold = results[(code, provider)]["cold"]
                    print(
                        f"{code:<9} {provider:<12} {median(cold, 'wall') / median(base, 'wall'):>6.2f}x wall "
                        f"{median(cold, 'cpu') / median(base, 'cpu'):>6.2f}x CPU"
                    )
        if len(codes) > 1:
            print()
            print("this / baseline, cold build (medians)")
            for provider in providers:
                this, base = results[("this", provider)]["cold"], results[("baseline", provider)]["cold"]
                print(
                    f"{provider:<12} {median(this, 'wall') / median(base, 'wall'):.2f} wall, "
                    f"{median(this, 'cpu') / median(base, 'cpu'):.2f} CPU, "
                    f"{median(this, 'rss_mb'):.0f} vs {median(base, 'rss_mb'):.0f} MB peak RSS"
                )
        print(f"openai requests served by the {args.latency * 1000:.0f} ms-latency server: {server.requests}")

        if args.no_warm or len(codes) > 1:  # a warm process runs this checkout only
            return

        import lancedb  # noqa: F401 - a warm process has paid for its imports
        import openai  # noqa: F401

        from docs_mcp_core.embedding import ProviderSettings
        from docs_mcp_eval.benchmark import parse_spec

        print()
        print(f"warm process (imports done), median of {args.runs} runs, seconds")
        print(f"{'provider':<8} {'cold':>7} {'no-op':>7} {'1% edit':>8} {'no-op/cold':>11} {'edit/cold':>10}")
        for provider in providers:
            settings = (
                ProviderSettings("openai", model="text-embedding-3-small", dimensions=256, base_url=server.url)
                if provider == "openai"
                else parse_spec(provider, None)
            )
            times = bench_in_process(settings, args.runs, work)
            cold, noop, edit = (statistics.median(times[c]) for c in CASES)
            print(f"{provider:<8} {cold:>7.2f} {noop:>7.2f} {edit:>8.2f} {noop / cold:>11.3f} {edit / cold:>10.3f}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
