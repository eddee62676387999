"""The `docs-mcp` command keeps the cyclic GC off what its imports made; the CLI called in-process does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# A fresh interpreter: freezing is per process, and this test process must not be frozen.
PROBE = """
import gc, json, sys
from click.testing import CliRunner
from docs_mcp_core import cli
args = ["build", "--docs-dir", sys.argv[1], "--out", sys.argv[2], "--embedding-provider", "none", "-q"]
hosted = CliRunner().invoke(cli.main, args)
in_host = gc.get_freeze_count()
cli.own_process()  # what the console script (cli.entry) does first
own = CliRunner().invoke(cli.main, args)
print(json.dumps({"codes": [hosted.exit_code, own.exit_code], "in_host": in_host, "own": gc.get_freeze_count()}))
"""


@pytest.mark.slow
def test_the_console_script_freezes_its_imports_and_a_host_process_is_left_alone(
    example_docs: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(example_docs), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["codes"] == [0, 0]
    assert found["in_host"] == 0, "the CLI froze the objects of a process that merely called it"
    assert found["own"] > 10_000, "docs-mcp's own process left its imports to every collection"
