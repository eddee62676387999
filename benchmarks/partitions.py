"""Many corpora in Dagster: one run per corpus in a row, against a backfill that runs them side by side.

N copies of the dub-ts fixture (456 files each), hash provider, cold builds, wall seconds from
the command to the last run's end, with the repository's dagster.yaml:

- sequential: `dg launch --job docs_index_job --partition C` for each corpus, one after another;
- backfill: `dagster job backfill -j docs_index_job --all` under `dg dev` (runs side by side,
  up to max_concurrent_runs; the embedding_api pool lets one corpus embed at a time);
- backfill, multiprocess: the same backfill with the multiprocess executor (one process per step).

    .venv/bin/python benchmarks/partitions.py [--corpora 2 4]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DUB_TS = REPO / "tests" / "fixtures" / "dub-ts"
MULTIPROCESS = {"execution": {"config": {"multiprocess": {"start_method": {"forkserver": {}}}}}}


def setup(count: int) -> tuple[Path, dict[str, str], list[str]]:
    work = Path(tempfile.mkdtemp(prefix="docs-mcp-partitions-"))
    shutil.copy(REPO / "dagster.yaml", work / "dagster.yaml")  # the root is DAGSTER_HOME, as in the repository
    shutil.copy(REPO / "workspace.yaml", work / "workspace.yaml")
    names = [f"sdk{i}" for i in range(count)]
    for name in names:
        shutil.copytree(DUB_TS, work / "docs" / name)
        (work / "docs" / name / ".docs-mcp.json").write_text(
            json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}})
        )
    (work / "docs-mcp.yaml").write_text(
        yaml.safe_dump(
            {
                "corpora": [
                    {"name": name, "source": {"path": f"docs/{name}"}, "embedding": {"provider": "hash"}}
                    for name in names
                ]
            }
        )
    )
    env = {**os.environ, "DAGSTER_HOME": str(work)}
    env.pop("DOCS_MCP_CONFIG", None)
    return work, env, names


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def graphql(port: int, query: str, variables: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        headers={"Content-Type": "application/json"},
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


def runs_finished(port: int, count: int) -> bool:
    data = graphql(port, "{ runsOrError { ... on Runs { results { status } } } }")["data"]["runsOrError"]["results"]
    return len(data) >= count and all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in data)


def sequential(count: int) -> float:
    work, env, names = setup(count)
    started = time.perf_counter()
    for name in names:
        run(
            [str(BIN / "dg"), "launch", "-m", "docs_mcp_pipeline", "--job", "docs_index_job", "--partition", name],
            work,
            env,
        )
    elapsed = time.perf_counter() - started
    shutil.rmtree(work)
    return elapsed


def backfill(count: int, multiprocess: bool) -> float:
    work, env, names = setup(count)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(BIN / "dg"), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while True:
            try:
                if graphql(port, "{ assetNodes { id } }").get("data", {}).get("assetNodes"):
                    break
            except OSError:
                time.sleep(0.5)
        started = time.perf_counter()
        if multiprocess:
            result = graphql(
                port,
                """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
                __typename } }""",
                {
                    "p": {
                        "selector": {
                            "partitionSetName": "docs_index_job_partition_set",
                            "repositorySelector": {
                                "repositoryName": "__repository__",
                                "repositoryLocationName": "docs_mcp_pipeline",
                            },
                        },
                        "partitionNames": names,
                        "runConfigData": MULTIPROCESS,
                        "forceSynchronousSubmission": True,
                    }
                },
            )
            assert result["data"]["launchPartitionBackfill"]["__typename"] == "LaunchBackfillSuccess", result
        else:
            run(
                [
                    str(BIN / "dagster"),
                    "job",
                    "backfill",
                    "-j",
                    "docs_index_job",
                    "--all",
                    "--noprompt",
                    "-w",
                    "workspace.yaml",
                ],
                work,
                env,
            )
        while not runs_finished(port, count):
            time.sleep(0.5)
        return time.perf_counter() - started
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    print(
        f"cold builds of N dub-ts copies, hash provider, wall seconds; {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'corpora':>7} {'sequential':>11} {'backfill':>9} {'backfill, multiprocess':>23}")
    for count in args.corpora:
        print(
            f"{count:>7} {sequential(count):>11.1f} {backfill(count, False):>9.1f} {backfill(count, True):>23.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
