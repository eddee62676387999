"""`.ci/bootstrap`'s profiles: examples/run.sh installs only the example's (no torch, no test tools),
tests/run.sh the dev one; either order works and the second run installs only what is missing.

The script runs for real in a scratch copy of the repository whose `.venv/bin/python` is a stand-in
that records each pip call instead of reaching the package index.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO

STAND_IN = """#!/bin/sh
# a venv's python for the test: record pip installs, pass import checks
if [ "$3" = "-m" ] && [ "$4" = "pip" ]; then shift 4; echo "pip $*" >> "$(dirname "$0")/../pip.log"; exit 0; fi
exit 0
"""


def scratch_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "bootstrap", repo / ".ci" / "bootstrap")
    shutil.copy(REPO / "pyproject.toml", repo / "pyproject.toml")
    python = repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STAND_IN)
    python.chmod(0o755)
    return repo


def bootstrap(repo: Path, *profile: str) -> tuple[list[str], str]:
    """The pip calls one run made, and what it said."""
    log = repo / ".venv" / "pip.log"
    log.unlink(missing_ok=True)
    done = subprocess.run(
        ["bash", str(repo / ".ci" / "bootstrap"), *profile],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return (log.read_text().splitlines() if log.exists() else []), done.stderr


def test_example_then_dev_tops_up_and_dev_then_example_installs_nothing(tmp_path: Path) -> None:
    repo = scratch_repo(tmp_path)
    calls, said = bootstrap(repo, "example")
    assert calls == ["pip install --quiet -e .[pipeline,semantic]"]  # no torch, no test tools
    assert "no torch, no test tools" in said
    assert bootstrap(repo, "example")[0] == []
    calls, _ = bootstrap(repo)  # tests/run.sh: the dev profile
    assert calls == [
        "pip install --quiet torch==2.13.0",
        "pip install --quiet -e .[dev,docs,local,semantic,web,pipeline]",
    ]
    assert bootstrap(repo)[0] == []
    calls, said = bootstrap(repo, "example")  # the dev venv has all the example needs
    assert calls == [] and ".venv has the dev profile" in said

    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text() + "\n# changed\n")
    assert bootstrap(repo, "example")[0] == ["pip install --quiet -e .[pipeline,semantic]"]
    assert bootstrap(repo)[0][-1] == "pip install --quiet -e .[dev,docs,local,semantic,web,pipeline]"


def test_a_stamp_from_before_profiles_counts_as_dev(tmp_path: Path) -> None:
    repo = scratch_repo(tmp_path)
    digest = subprocess.run(["sha256sum", str(repo / "pyproject.toml")], capture_output=True, text=True, check=True)
    (repo / ".venv" / ".docs-mcp-installed").write_text(digest.stdout.split()[0] + "\n")
    assert bootstrap(repo)[0] == [] and bootstrap(repo, "example")[0] == []


def test_an_unknown_profile_is_refused(tmp_path: Path) -> None:
    repo = scratch_repo(tmp_path)
    done = subprocess.run(["bash", str(repo / ".ci" / "bootstrap"), "all"], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.strip() == "usage: .ci/bootstrap [example|dev]"
