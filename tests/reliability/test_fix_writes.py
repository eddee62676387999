"""`docs-mcp fix --write` through real processes: a symlinked or read-only manifest is left exactly as it
is (a warning names it, the exit status is 1), and a manifest it does replace keeps its mode."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ..conftest import write
from ..core.test_fix import sdk_corpus
from .clitools import docs_mcp

STRATEGY_LESS = '{\n  "version": "1"\n}\n'  # governs files without a strategy: fix proposes one


def fix_write(docs: Path):  # type: ignore[no-untyped-def]
    proc = docs_mcp("fix", "--docs-dir", docs, "--write")
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


@pytest.mark.slow
def test_a_symlinked_manifest_is_never_replaced_nor_written_through(tmp_path: Path) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    outside = write(tmp_path, "outside/manifest.json", STRATEGY_LESS)
    shared = write(docs, "shared/manifest.json", STRATEGY_LESS)
    (docs / ".docs-mcp.json").symlink_to(outside)  # skipped by the walk: fix proposes a root manifest
    (docs / "guides" / ".docs-mcp.json").symlink_to("../shared/manifest.json")  # inside: a manifest fix reads
    proc = fix_write(docs)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.splitlines() == [
        f"warning: .docs-mcp.json not written: it is a symlink (to {outside}), which fix never replaces; "
        "apply its proposal by hand",
        "warning: guides/.docs-mcp.json not written: it is a symlink (to ../shared/manifest.json), which fix "
        "never replaces; apply its proposal by hand",
    ]
    assert "+++ b/.docs-mcp.json" in proc.stdout and "+++ b/guides/.docs-mcp.json" in proc.stdout  # still shown
    assert os.readlink(docs / ".docs-mcp.json") == str(outside) and outside.read_text() == STRATEGY_LESS
    assert os.readlink(docs / "guides" / ".docs-mcp.json") == "../shared/manifest.json"
    assert shared.read_text() == STRATEGY_LESS


@pytest.mark.slow
def test_a_read_only_manifest_stays_as_it_is(tmp_path: Path) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    manifest = write(docs, ".docs-mcp.json", STRATEGY_LESS)
    manifest.chmod(0o444)
    proc = fix_write(docs)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.splitlines() == [
        "warning: .docs-mcp.json not written: it is read-only; apply its proposal by hand"
    ]
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o444 and manifest.read_text() == STRATEGY_LESS
    assert not [p for p in docs.iterdir() if p.name.endswith(".tmp")]  # no temp file left behind


@pytest.mark.slow
def test_a_replaced_manifest_keeps_its_mode(tmp_path: Path) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    manifest = write(docs, ".docs-mcp.json", STRATEGY_LESS)
    manifest.chmod(0o600)
    proc = fix_write(docs)
    assert proc.returncode == 0, proc.stderr
    assert "strategy" in json.loads(manifest.read_text())
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o600
    assert fix_write(docs).stdout.strip() == "nothing to propose: the manifests already fit the corpus"
