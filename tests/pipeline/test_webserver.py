"""The Dagster UI starts from workspace.yaml and its GraphQL API sees the whole asset graph."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from ..conftest import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_webserver_lists_the_seven_assets_and_checks(tmp_path: Path) -> None:
    for name in ("workspace.yaml", "docs-mcp.yaml", "dagster.yaml"):  # the repository's root, its DAGSTER_HOME
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "dagster-webserver"),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-w",
            "workspace.yaml",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 90
        data = None
        while time.time() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"webserver exited: {proc.stderr.read().decode()[-2000:]}")
            try:
                data = graphql(port, "{ assetNodes { assetKey { path } hasAssetChecks } }")
                if data.get("data", {}).get("assetNodes"):
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert data is not None, "webserver did not answer"
        nodes = data["data"]["assetNodes"]
        assert sorted(n["assetKey"]["path"][0] for n in nodes) == sorted(
            ["staged_docs", "chunks", "fingerprints", "cached_vectors", "lancedb_index", "metadata", "cache_audit"]
        )
        assert {n["assetKey"]["path"][0] for n in nodes if n["hasAssetChecks"]} == {"lancedb_index", "metadata"}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
