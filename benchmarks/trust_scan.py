"""Trust scan cost: the scan of every chunk of dub-ts ×N against a cold text-only build of the same corpus.

A cold `docs-mcp build --embedding-provider none` runs in a fresh process (as in benchmarks/scale.py);
then the chunks of the chunks.json it wrote are scanned in this process, the way a build would
call it (`load_trust` once, `Trust.check` per chunk). Runs alternate build and scan; the medians
and their ratio are printed, with the scan's split into its parts (views, folding, rules).

    .venv/bin/python benchmarks/trust_scan.py [--copies 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.build import run_build  # noqa: E402
from benchmarks.scale import TEXT, make_corpus  # noqa: E402
from docs_mcp_core.corpus.walk import scan_corpus  # noqa: E402
from docs_mcp_core.trust.fold import fold_joined  # noqa: E402
from docs_mcp_core.trust.policy import load_trust  # noqa: E402
from docs_mcp_core.trust.views import split_views  # noqa: E402


def scan_seconds(docs: Path, contents: list[tuple[str, str]]) -> tuple[float, float, int, int]:
    """Wall and CPU seconds to scan every chunk as a build would (which has its manifests already);
    chunks quarantined and findings."""
    manifests = scan_corpus(docs).manifests
    start, cpu = time.perf_counter(), time.process_time()
    trust, _ = load_trust(docs, manifests)
    quarantined = findings = 0
    for filepath, content in contents:
        verdict = trust.check(content, filepath)
        quarantined += verdict.quarantined
        findings += len(verdict.findings)
    return time.perf_counter() - start, time.process_time() - cpu, quarantined, findings


def parts(contents: list[tuple[str, str]]) -> dict[str, float]:
    """The views and folding steps alone (the rest of the scan is matching rules)."""
    start = time.process_time()
    views = [split_views(c, shorten=True) for _, c in contents]
    split = time.process_time() - start
    start = time.process_time()
    for v in views:
        fold_joined(v.prose)
    return {"views": split, "fold": time.process_time() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trust-scan-") as tmp:
        root = Path(tmp)
        docs = make_corpus(root, args.copies)
        builds: list[dict[str, float]] = []
        scans: list[tuple[float, float, int, int]] = []
        contents: list[tuple[str, str]] = []
        for run in range(args.runs):
            out = root / "out"
            shutil.rmtree(out, ignore_errors=True)
            builds.append(run_build(docs, out, TEXT))
            if run == 0:
                chunks = json.loads((out / "chunks.json").read_text(encoding="utf-8"))
                contents = [(c["filepath"], c["content"]) for c in chunks]
            scans.append(scan_seconds(docs, contents))
        wall, cpu = statistics.median(b["wall"] for b in builds), statistics.median(b["cpu"] for b in builds)
        scan_wall, scan_cpu = statistics.median(s[0] for s in scans), statistics.median(s[1] for s in scans)
        split = parts(contents)
        n = len(contents)
        print(
            f"dub-ts ×{args.copies}: {n} chunks, {sum(len(c) for _, c in contents) / 1e6:.1f} MB; medians of {args.runs}"
        )
        print(f"cold text-only build (fresh process): {wall:.2f} s wall, {cpu:.2f} s CPU")
        print(
            f"trust scan of every chunk: {scan_wall:.2f} s wall = {scan_wall / wall:.1%} of the build's wall time; "
            f"{scan_cpu:.2f} s CPU = {scan_cpu / cpu:.1%} of its CPU time; {scan_cpu / n * 1e6:.0f} µs CPU per chunk"
        )
        print(f"  of which views {split['views']:.2f} s, folding {split['fold']:.2f} s (CPU), the rest matching rules")
        print(f"chunks quarantined: {scans[-1][2]}, findings: {scans[-1][3]}")


if __name__ == "__main__":
    main()
