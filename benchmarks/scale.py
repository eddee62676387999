"""Scale benchmark: dub-ts ×1, ×10 (and ×30) generated copies, every build in a fresh process.

For each size: cold build, no-op rebuild and 1%-edit rebuild (text-only, `--embedding-provider
none`), the build's peak RSS (largest of the build process and its parse workers, from wait4),
the index size on disk, and search p50/p95 through `docs-mcp serve` over stdio: text on the
text-only index, hybrid on a second index built with the `hash` provider (fast, no model; the
latency measured is the engine's, not a model's). Each bigger size's searches run side by side
with ×1's (both servers up, every search sent to both in alternating order, the questions drawn
from ×1's chunks), so its p50 ÷ ×1 compares searches made at the same moments, not minutes
apart. The recall@10 column is the ANN index's against exact search
(benchmarks/vector_index.py) when the hybrid table got one, else "-".

`--builds-with PROVIDER` makes the cold, no-op and 1%-edit builds use that provider instead
(`local`: the default model; the copies share their texts, so a cold build embeds one copy's
passages). `--hybrid-with local` builds the hybrid index with the default model instead of `hash`
(its searches then include embedding the query, and long chunks have two vectors: the tables of
passages that `hash` never makes). `--baseline DIR` also runs the three builds with another checkout's docs_mcp_core (e.g. the
main branch) on the same corpora in the same run, so before/after are compared as ratios on
equally noisy ground. Prints Markdown tables.

    .venv/bin/python benchmarks/scale.py [--copies 1,10] [--x30] [--quick] [--baseline /work/main]
    .venv/bin/python benchmarks/scale.py --builds-with local --baseline /work/main   # the default model's builds
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
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.build import CORPUS, MANIFEST, edit_one_percent, run_build  # noqa: E402
from benchmarks.processes import checkout  # noqa: E402
from benchmarks.query import measure, measure_pair, queries, unseen  # noqa: E402
from docs_mcp_core.fsutil import dir_size  # noqa: E402

TEXT = ["--embedding-provider", "none"]


def make_corpus(root: Path, copies: int) -> Path:
    """`copies` copies of dub-ts, each in its own folder (copy00/, copy01/, …) so chunk IDs differ."""
    docs = root / f"dub-ts-x{copies}"
    if not docs.exists():
        docs.mkdir(parents=True)
        (docs / ".docs-mcp.json").write_text(json.dumps(MANIFEST))
        for n in range(copies):
            shutil.copytree(CORPUS, docs / f"copy{n:02d}")
    return docs


def build_cases(
    docs: Path, out: Path, runs: int, code: Path | None = None, provider: list[str] = TEXT
) -> dict[str, dict[str, float]]:
    """Median over `runs` of cold, no-op and 1%-edit builds, each on a fresh copy of the corpus."""
    rows: dict[str, list[dict[str, float]]] = {"cold": [], "no-op": [], "edit": []}
    for run in range(runs):
        work = docs.parent / f"{docs.name}-run"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(docs, work)
        shutil.rmtree(out, ignore_errors=True)
        rows["cold"].append(run_build(work, out, provider, code=code))
        rows["no-op"].append(run_build(work, out, provider, code=code))
        edit_one_percent(work, run)
        rows["edit"].append(run_build(work, out, provider, code=code))
        shutil.rmtree(work, ignore_errors=True)
    return {case: {key: statistics.median(r[key] for r in found) for key in found[0]} for case, found in rows.items()}


def vector_recall(index: Path, sample: list[str]) -> float | None:
    """recall@10 of the ANN index against exact search (benchmarks/vector_index.py); None when the table
    has no ANN index (below the size threshold its vectors are ranked exactly)."""
    from benchmarks.vector_index import _published, recall_at_10

    table, _ = _published(index)
    if not any("vector" in getattr(i, "columns", []) for i in table.list_indices()):
        return None
    return recall_at_10(index, sample)


def search_latency(index: Path, hybrid: bool, searches: int, reference: Path | None = None) -> dict[str, float]:
    """p50/p95 of `index`; with `reference` (×1's index of the same kind), measured side by side with it
    and with the ratio of the two p50s."""
    if reference is not None:
        pair = anyio.run(
            measure_pair,
            {"ours": (checkout("ours"), index), "reference": (checkout("x1"), reference)},
            unseen(json.loads((reference / "chunks.json").read_text())),
            searches,
            hybrid,
        )
        ours = pair["ours"]
        return {
            "search_p50": ours["p50"],
            "search_p95": ours["p95"],
            "reference_p50": pair["reference"]["p50"],
            "ratio": ours["p50"] / pair["reference"]["p50"],
        }
    chunks = json.loads((index / "chunks.json").read_text())
    rng = random.Random(11)
    gets = [rng.choice(chunks)["chunk_id"] for _ in range(10)]
    return {**anyio.run(measure, index, unseen(chunks), searches, gets, hybrid), "ratio": 1.0}


def measure_size(copies: int, root: Path, args: argparse.Namespace, reference: dict[str, Any] | None) -> dict[str, Any]:
    """One size's builds and searches; `reference` is ×1's result, whose indexes stay until the run ends."""
    docs = make_corpus(root, copies)
    out = root / f"out-x{copies}"
    result: dict[str, Any] = {"copies": copies, "files": sum(1 for _ in docs.rglob("*.md"))}
    builds = ["--embedding-provider", args.builds_with]
    result["after"] = build_cases(docs, out, args.runs, provider=builds)
    if args.baseline:
        result["before"] = build_cases(
            docs, root / f"base-x{copies}", args.runs, code=Path(args.baseline), provider=builds
        )
        shutil.rmtree(root / f"base-x{copies}", ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    run_build(docs, out, TEXT)  # the index the text searches use: the corpus as generated
    result["chunks"] = json.loads((out / "metadata.json").read_text())["stats"]["total_chunks"]
    result["index_mb"] = (dir_size(out / ".lancedb") + (out / "chunks.json").stat().st_size) / 1e6
    hybrid_out = root / f"hybrid-x{copies}"
    run_build(docs, hybrid_out, ["--embedding-provider", args.hybrid_with])
    result["indexes"] = {"text": out, "hybrid": hybrid_out}
    result["text"] = search_latency(out, False, args.searches, reference and reference["indexes"]["text"])
    result["hybrid"] = search_latency(hybrid_out, True, args.searches, reference and reference["indexes"]["hybrid"])
    sample = queries(json.loads((out / "chunks.json").read_text()), 50)
    result["recall"] = vector_recall(hybrid_out, sample)
    if reference is not None:
        for folder in (out, hybrid_out):
            shutil.rmtree(folder, ignore_errors=True)
    return result


def ratio(search: dict[str, float]) -> str:
    """p50 ÷ ×1's, with the two p50s measured side by side (×1's own row was measured alone)."""
    if "reference_p50" not in search:
        return f"{search['ratio']:.2f}"
    return f"{search['ratio']:.2f} ({search['search_p50']:.1f} ÷ {search['reference_p50']:.1f})"


def table(results: list[dict[str, Any]], baseline: bool) -> str:
    one = results[0]
    lines = [
        "| copies | files | chunks | cold s | no-op s | no-op/cold | 1% edit s | edit/cold | peak RSS MB | "
        "RSS / ×1 | index MB | text p50/p95 ms | hybrid p50/p95 ms | p50 ÷ ×1's beside it (text, hybrid) | recall@10 |",
        "|" + "---|" * 15,
    ]
    for r in results:
        a = r["after"]
        recall = "-" if r["recall"] is None else f"{r['recall']:.3f}"
        lines.append(
            f"| ×{r['copies']} | {r['files']} | {r['chunks']} | {a['cold']['wall']:.2f} | {a['no-op']['wall']:.2f} | "
            f"{a['no-op']['wall'] / a['cold']['wall']:.3f} | {a['edit']['wall']:.2f} | "
            f"{a['edit']['wall'] / a['cold']['wall']:.3f} | {a['cold']['rss_mb']:.0f} | "
            f"{a['cold']['rss_mb'] / one['after']['cold']['rss_mb']:.2f} | {r['index_mb']:.1f} | "
            f"{r['text']['search_p50']:.1f} / {r['text']['search_p95']:.1f} | "
            f"{r['hybrid']['search_p50']:.1f} / {r['hybrid']['search_p95']:.1f} | "
            f"{ratio(r['text'])}, {ratio(r['hybrid'])} | {recall} |"
        )
    if baseline:
        lines += [
            "",
            "Before (baseline checkout) and after, same corpora, same run (wall seconds, peak RSS MB):",
            "",
            "| copies | cold before → after | no-op before → after | no-op/cold before → after | "
            "edit/cold before → after | peak RSS before → after | RSS / ×1 before → after |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in results:
            b, a = r["before"], r["after"]
            ob, oa = one["before"]["cold"]["rss_mb"], one["after"]["cold"]["rss_mb"]
            lines.append(
                f"| ×{r['copies']} | {b['cold']['wall']:.2f} → {a['cold']['wall']:.2f} | "
                f"{b['no-op']['wall']:.2f} → {a['no-op']['wall']:.2f} | "
                f"{b['no-op']['wall'] / b['cold']['wall']:.3f} → {a['no-op']['wall'] / a['cold']['wall']:.3f} | "
                f"{b['edit']['wall'] / b['cold']['wall']:.3f} → {a['edit']['wall'] / a['cold']['wall']:.3f} | "
                f"{b['cold']['rss_mb']:.0f} → {a['cold']['rss_mb']:.0f} | "
                f"{b['cold']['rss_mb'] / ob:.2f} → {a['cold']['rss_mb'] / oa:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", default="1,10", help="comma-separated copy counts (the first is the ×1 reference)")
    parser.add_argument("--x30", action="store_true", help="add ×30 (several minutes)")
    parser.add_argument("--quick", action="store_true", help="one run per case and 50 searches")
    parser.add_argument("--runs", type=int, default=3, help="runs per build case (median)")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--baseline", default=None, help="another checkout to compare builds against, e.g. /work/main")
    parser.add_argument("--keep", default=None, help="generate corpora here and keep them (default: a temp folder)")
    parser.add_argument(
        "--hybrid-with",
        default="hash",
        metavar="PROVIDER",
        help="embedding provider of the index hybrid search is measured on (default hash: no model)",
    )
    parser.add_argument(
        "--builds-with",
        default="none",
        metavar="PROVIDER",
        help="embedding provider of the cold, no-op and edit builds (default none: text-only)",
    )
    args = parser.parse_args()
    if args.quick:
        args.runs, args.searches = 1, 50
    copies = [int(c) for c in args.copies.split(",")] + ([30] if args.x30 else [])
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="docs-mcp-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    print(
        f"dub-ts × {copies}, fresh process per build, median of {args.runs} run(s); builds with "
        f"--embedding-provider {args.builds_with}; hybrid search on a {args.hybrid_with}-provider index; "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    try:
        results: list[dict[str, Any]] = []
        for n in copies:
            results.append(measure_size(n, root, args, results[0] if results else None))
            print(f"×{n} done", file=sys.stderr, flush=True)
        for folder in results[0]["indexes"].values() if results else ():
            shutil.rmtree(folder, ignore_errors=True)
        print(table(results, bool(args.baseline)))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
