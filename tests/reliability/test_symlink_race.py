"""A symlink swapped in while a build runs: a real swapper process keeps replacing Markdown files with
symlinks to a file outside the docs folder and back, while real `docs-mcp build --force` runs read them.
Whatever the walk saw, what is read is inside the docs folder: the outside file is never indexed. The
same for snippets a page includes (MkDocs `--8<--`), which stay inside the project root."""

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
folders, secret, n, ready = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3]), sys.argv[4]
page = b"# Race\n\n## Body\n\nAn ordinary racepage paragraph.\n"
names = [(os.path.join(race, f".swap{i}"), os.path.join(race, f"f{i}.md")) for race in folders for i in range(n)]
while True:
    for tmp, name in names:
        os.symlink(secret, tmp)
        os.replace(tmp, name)
    if not os.path.exists(ready):
        open(ready, "w").close()
    for tmp, name in names:
        with open(tmp, "wb") as fh:
            fh.write(page)
        os.replace(tmp, name)
"""


@pytest.mark.slow
def test_a_symlink_swapped_in_during_builds_never_indexes_the_outside_file(tmp_path: Path) -> None:
    project = tmp_path / "project"  # an MkDocs project: its pages include snippets from its root
    write(project, "mkdocs.yml", "site_name: Race\nmarkdown_extensions:\n  - pymdownx.snippets\n")
    docs = project / "docs"
    write(docs, "guide.md", "# Guide\n\n## Install\n\nRun the installer with care.\n")
    for i in range(RACE_FILES):
        write(docs, f"race/f{i}.md", "# Race\n\n## Body\n\nAn ordinary racepage paragraph.\n")
        write(project, f"snippets/f{i}.md", "A snippet.\n")
    includes = "".join(f'## Part {i}\n\n--8<-- "snippets/f{i}.md"\n\n' for i in range(RACE_FILES))
    write(docs, "included.md", f"# Included\n\n{includes}")
    secret = write(tmp_path, "outside/secret.md", f"# Secret\n\n## Keys\n\nThe {SECRET} password lives here.\n")
    ready = tmp_path / "swapping"
    folders = f"{docs / 'race'},{project / 'snippets'}"
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, folders, str(secret), str(RACE_FILES), str(ready)])
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
    assert {"guide.md", "included.md"} <= files <= {"guide.md", "included.md", *(f"race/f{i}.md" for i in range(12))}
