"""Ctrl-C in the middle of a build (or a search): one `interrupted` line and exit 130, never a traceback (from the
build or its parse workers), and nothing is published (kill -9 at each phase: test_kill_recovery.py)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from docs_mcp_core.failpoints import ENV, RELEASE_ENV
from tests.reliability.clitools import CLI, build_args, wait_paused


def ctrl_c_at(phase: str, args: list[str | Path], release: Path) -> subprocess.CompletedProcess:
    """Run `docs-mcp ARGS` as a terminal would, and press Ctrl-C (SIGINT to its process group) once a
    process of it is paused at `phase`; the pause then ends."""
    env = dict(os.environ) | {ENV: phase, RELEASE_ENV: str(release)}
    proc = subprocess.Popen(
        [*CLI, *map(str, args)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a shell's foreground job
    )
    seen = wait_paused(proc, phase)
    assert proc.stderr is not None
    os.killpg(proc.pid, signal.SIGINT)
    release.touch()
    stderr = "".join(seen) + proc.stderr.read()
    return subprocess.CompletedProcess(proc.args, proc.wait(timeout=60), "", stderr)


def assert_interrupted(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 130, result.stderr
    assert "interrupted; the previously published index is untouched" in result.stderr
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr, result.stderr


def tiny_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b"):
        (docs / f"{name}.md").write_text(f"# Page {name}\n\nText of page {name}.\n")
    return docs


def test_ctrl_c_while_embedding_is_one_line_not_an_embedding_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = ctrl_c_at("embedded-batch", build_args(tiny_docs(tmp_path), out, "hash"), tmp_path / "go")
    assert_interrupted(result)
    assert not (out / "metadata.json").exists()


def test_ctrl_c_while_parse_workers_start_prints_no_worker_traceback(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [*build_args(tiny_docs(tmp_path), out), "--workers", "2"]
    assert_interrupted(ctrl_c_at("parse-worker", args, tmp_path / "go"))
    assert not (out / "metadata.json").exists()


def test_ctrl_c_in_a_search_says_interrupted_and_nothing_about_publishing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    built = subprocess.run([*CLI, *map(str, build_args(tiny_docs(tmp_path), out))], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    result = ctrl_c_at("request", ["search", "--index", out, "page", "--text-only"], tmp_path / "go")
    assert result.returncode == 130, result.stderr
    assert "interrupted" in result.stderr and "published" not in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr, result.stderr
