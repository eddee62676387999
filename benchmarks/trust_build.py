"""The trust integration's cost in a build: cold text-only builds of dub-ts ×N with this checkout against
the same builds with another commit's code (one before the trust scan ran in builds), side by side.

Each build runs in a fresh process (benchmarks/build.py run_build); runs alternate between the two
codes, and the medians and the difference are printed. The code of `--base` is exported with
`git archive` into a temporary folder.

    .venv/bin/python benchmarks/trust_build.py --base COMMIT [--copies 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.build import run_build  # noqa: E402
from benchmarks.scale import TEXT, make_corpus  # noqa: E402


def export(commit: str, dest: Path) -> Path:
    data = subprocess.run(["git", "archive", commit, "docs_mcp_core"], cwd=REPO, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(data.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="a commit whose builds do not scan (the comparison)")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trust-build-") as tmp:
        root = Path(tmp)
        docs = make_corpus(root, args.copies)
        base = export(args.base, root / "base")
        found: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
        for _ in range(args.runs):
            for name, code in (("base", base), ("this", None)):
                out = root / f"out-{name}"
                shutil.rmtree(out, ignore_errors=True)
                found[name].append(run_build(docs, out, TEXT, code=code))
        print(f"dub-ts ×{args.copies}, cold text-only builds, medians of {args.runs} (alternating):")
        medians = {}
        for name, runs in found.items():
            wall, cpu = statistics.median(r["wall"] for r in runs), statistics.median(r["cpu"] for r in runs)
            medians[name] = (wall, cpu)
            every = ", ".join(f"{r['cpu']:.1f}" for r in runs)
            print(f"  {name}: {wall:.2f} s wall, {cpu:.2f} s CPU (CPU of each run: {every})")
        (bw, bc), (tw, tc) = medians["base"], medians["this"]
        print(f"trust scan and visible text: +{tc - bc:.2f} s CPU = {(tc - bc) / bc:+.1%}; wall {(tw - bw) / bw:+.1%}")


if __name__ == "__main__":
    main()
