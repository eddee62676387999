"""Index locations and vector sizes the storage cannot take are refused in one line, before anything is built."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.reliability.clitools import CLI

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "parcelly-docs"


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.slow
@pytest.mark.parametrize("url", ["gs://bucket/prefix", "az://container/prefix", "file:///tmp/index"])
def test_other_urls_are_one_line_naming_what_is_accepted(tmp_path: Path, url: str) -> None:
    for args in (
        ["build", "--docs-dir", str(EXAMPLE), "--out", url, "--embedding-provider", "none"],
        ["search", "--index", url, "anything"],
        ["serve", "--index", url],
    ):
        result = _run(tmp_path, *args)
        assert result.returncode == 1, (args, result.stderr)
        assert result.stderr == (
            f"error: {url}: an index location is a local folder or s3://BUCKET/PREFIX "
            "(S3 and S3-compatible storage); other URLs are not supported\n"
        )
    assert not list(tmp_path.iterdir())  # no folder named `gs:` (or `file:`) was made


def test_embedding_dimensions_are_bounded(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _run(
        tmp_path,
        *["build", "--docs-dir", str(EXAMPLE), "--out", str(out), "--embedding-provider", "hash"],
        *["--embedding-dimensions", "100000000"],
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "'--embedding-dimensions': 100000000 is not in the range 1<=x<=8192" in result.stderr
    assert not out.exists()
