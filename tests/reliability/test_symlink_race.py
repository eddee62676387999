"""A symlink swapped in while a build runs: a real swapper process keeps replacing Markdown files with
symlinks to a file outside the docs folder and back, while real `docs-mcp build --force` runs read them.
Whatever the walk saw, what is read is inside the docs folder: the outside file is never indexed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import write
from .clitools import build_args, docs_mcp

BUILDS = 15
RACE_FILES = 12
SECRET = "wombatsecret"

# Atomic swaps (rename over the name), one pass making every file a link and the next making it a file
# again, forever; the first pass writes a marker so the test starts building once the swapping runs.
SWAPPER = r"""
import os, sys
race, secret, n, ready = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
page = b"# Race\n\n## Body\n\nAn ordinary racepage paragraph.\n"
while True:
    for i in range(n):
        tmp = os.path.join(race, f".swap{i}")
        os.symlink(secret, tmp)
        os.replace(tmp, os.path.join(race, f"f{i}.md"))
    if not os.path.exists(ready):
        open(ready, "w").close()
    for i in range(n):
        tmp = os.path.join(race, f".swap{i}")
        with open(tmp, "wb") as fh:
            fh.write(page)
        os.replace(tmp, os.path.join(race, f"f{i}.md"))
"""


@pytest.mark.slow
def test_a_symlink_swapped_in_during_builds_never_indexes_the_outside_file(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "guide.md", "# Guide\n\n## Install\n\nRun the installer with care.\n")
    for i in range(RACE_FILES):
        write(docs, f"race/f{i}.md", "# Race\n\n## Body\n\nAn ordinary racepage paragraph.\n")
    secret = write(tmp_path, "outside/secret.md", f"# Secret\n\n## Keys\n\nThe {SECRET} password lives here.\n")
    ready = tmp_path / "swapping"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(docs / "race"), str(secret), str(RACE_FILES), str(ready)]
    )
    leaked, saw_links, failed = [], 0, []
    try:
        while not ready.exists():
            assert swapper.poll() is None, "the swapper stopped"
        out = tmp_path / "out"
        for n in range(BUILDS):
            proc = docs_mcp(*build_args(docs, out), "--force")
            if proc.returncode != 0:
                failed.append(proc.stderr)
                continue
            saw_links += "outside the docs folder" in proc.stderr
            if SECRET in (out / "chunks.json").read_text():
                leaked.append(n)
    finally:
        swapper.kill()
        swapper.wait()
    assert not failed, failed[0]
    assert leaked == [], f"{len(leaked)} of {BUILDS} builds indexed the file outside the docs folder"
    assert saw_links > 0  # the swapper did race the builds: some saw a link and skipped it
    files = {c["filepath"] for c in json.loads((out / "chunks.json").read_text())}
    assert "guide.md" in files and files <= {"guide.md", *(f"race/f{i}.md" for i in range(RACE_FILES))}
