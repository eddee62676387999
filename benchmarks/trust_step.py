"""The trust step's CPU in a build, timed inside the step, against a cold text-only build, side by side with
another commit's code.

The step (indexing/quarantine.py `screen_file`: the scan, the visible text, the findings) is timed with
process time around each call while one process parses every file of dub-ts ×1 as a build does
(`parse_one`, one process), five passes, the median. Rounds alternate this checkout and `--base` (exported
with `git archive`), each in a fresh process, then a cold text-only build of dub-ts ×N with each code
(benchmarks/build.py run_build). The step's share is its median over the builds' median CPU per copy.

    .venv/bin/python benchmarks/trust_step.py --base COMMIT [--copies 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DUB_TS = REPO / "tests" / "fixtures" / "dub-ts"
PASSES = 5


def step_ms(code: Path) -> dict[str, object]:
    """In this process, with `code`'s docs_mcp_core: the step's median ms over PASSES parses of dub-ts, and a
    digest of what the step produced (chunks and findings), which must not differ between codes."""
    sys.path.insert(0, str(code))
    from docs_mcp_core.corpus.walk import manifest_rules, scan_corpus
    from docs_mcp_core.indexing import parsing
    from docs_mcp_core.indexing.quarantine import screen_file as screen
    from docs_mcp_core.trust.policy import load_trust

    scan = scan_corpus(DUB_TS)
    trust, _ = load_trust(scan.root, scan.manifests)
    jobs = []
    for rel in scan.markdown:
        data = (DUB_TS / rel).read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        jobs.append(parsing.ParseJob(rel, data.decode("utf-8"), sha, manifest_rules(rel, scan.manifests)))
    spent = [0.0]

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.process_time()
        try:
            return screen(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - start

    parsing.screen_file = timed  # type: ignore[attr-defined]  # parse_one looks it up in its module
    passes, first = [], None
    for _ in range(PASSES + 1):  # the first warms up
        spent[0] = 0.0
        out = [parsing.parse_one(j, scan.manifests, scan.includes, scan.site, trust) for j in jobs]
        if first is None:
            first = out
        else:
            passes.append(spent[0] * 1000)
    assert first is not None
    digest = hashlib.sha256(repr([(p.chunks, p.flags) for p in first]).encode()).hexdigest()[:16]
    return {"ms": statistics.median(passes), "chunks": sum(len(p.chunks) for p in first), "digest": digest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--step-only", type=Path, help=argparse.SUPPRESS)  # one code's step, in a fresh process
    args = parser.parse_args()
    if args.step_only:
        print(json.dumps(step_ms(args.step_only)))
        return
    sys.path.insert(0, str(REPO))
    from benchmarks.build import run_build
    from benchmarks.scale import TEXT, make_corpus
    from benchmarks.trust_build import export

    with tempfile.TemporaryDirectory(prefix="trust-step-") as tmp:
        root = Path(tmp)
        docs = make_corpus(root, args.copies)
        codes = {"base": export(args.base, root / "base"), "this": REPO}
        steps: dict[str, list[float]] = {"base": [], "this": []}
        builds: dict[str, list[float]] = {"base": [], "this": []}
        digests = set()
        for round_ in range(1, args.rounds + 1):
            print(f"round {round_}, load average {os.getloadavg()[0]:.1f}", flush=True)
            for name, code in codes.items():
                cmd = [sys.executable, __file__, "--base", args.base, "--step-only", str(code)]
                found = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                steps[name].append(found["ms"])
                digests.add(found["digest"])
                out = root / f"out-{name}"
                shutil.rmtree(out, ignore_errors=True)
                build = run_build(docs, out, TEXT, code=None if name == "this" else code)
                builds[name].append(build["cpu"])
                print(f"  {name}: step {found['ms']:.0f} ms ({found['chunks']} chunks), build {build['cpu']:.1f} s CPU")
        per_copy = statistics.median(builds["base"] + builds["this"]) / args.copies
        print(f"cold text-only build of dub-ts ×{args.copies}: {per_copy:.2f} s CPU a copy (median of both codes)")
        for name in codes:
            ms = statistics.median(steps[name])
            runs = ", ".join(f"{s:.0f}" for s in steps[name])
            print(f"  {name}: trust step {ms:.0f} ms a copy ({runs}) = {ms / 1000 / per_copy:.1%} of the build")
        print("same chunks and findings from both codes" if len(digests) == 1 else "CHUNKS OR FINDINGS DIFFER")


if __name__ == "__main__":
    main()
