"""Pipeline benchmark: `dagster asset materialize` next to `docs-mcp build`, cold and no-op.

For the bundled example and a dub-ts copy, with the hash provider, each in a fresh
process, median of N runs (wall seconds).

    .venv/bin/python benchmarks/pipeline.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CORPORA = {"example": REPO / "examples" / "parcelly-docs", "dub-ts": REPO / "tests" / "fixtures" / "dub-ts"}


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"median of {args.runs} runs, wall seconds, fresh process each, hash provider")
    print(f"{'corpus':<8} {'tool':<26} {'cold':>6} {'no-op':>6}")
    for name, source in CORPORA.items():
        results: dict[str, dict[str, list[float]]] = {
            "dagster asset materialize": {"cold": [], "no-op": []},
            "docs-mcp build": {"cold": [], "no-op": []},
        }
        for _ in range(args.runs):
            work = Path(tempfile.mkdtemp(prefix="docs-mcp-pipe-"))
            docs = work / "docs"
            shutil.copytree(source, docs)
            if not (docs / ".docs-mcp.json").exists():
                (docs / ".docs-mcp.json").write_text(json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}}))
            (work / "docs-mcp.yaml").write_text(
                yaml.safe_dump(
                    {
                        "corpora": [
                            {
                                "name": name,
                                "source": {"path": "docs"},
                                "out": "pipeline-out",
                                "embedding": {"provider": "hash"},
                            }
                        ]
                    }
                )
            )
            shutil.copy(REPO / "dagster.yaml", work / "dagster.yaml")
            env = {"DAGSTER_HOME": str(work), "PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(work)}
            dagster = [
                str(BIN / "dagster"),
                "asset",
                "materialize",
                "-m",
                "docs_mcp_pipeline",
                "--select",
                "*",
                "--partition",
                name,
            ]
            cli = [
                str(BIN / "docs-mcp"),
                "build",
                "--docs-dir",
                "docs",
                "--out",
                "cli-out",
                "--embedding-provider",
                "hash",
                "-q",
            ]
            for case in ("cold", "no-op"):
                results["dagster asset materialize"][case].append(timed(dagster, work, env))
                results["docs-mcp build"][case].append(timed(cli, work, env))
            shutil.rmtree(work)
        for tool, cases in results.items():
            print(
                f"{name:<8} {tool:<26} {statistics.median(cases['cold']):>6.2f} {statistics.median(cases['no-op']):>6.2f}"
            )


if __name__ == "__main__":
    main()
