"""Stage a source into a deterministic folder: only what gets indexed, byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.beneath import LinkOutsideError, read_beneath
from ..corpus.walk import list_tree, outside_warning, show_path
from ..errors import DocsMcpError
from ..fsutil import read_json, write_json_atomic
from ..output.layout import staged_listing
from ..paths import check_docs_dir, check_writable_dir


@dataclass
class StagedDocs:
    path: str
    files: dict[str, str]  # relpath -> sha256
    bytes: int
    data_version: str
    source_commit: str | None = None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the walk skipped, `path:line: message` each
    crawl: dict[str, Any] = field(default_factory=dict)  # website sources: counts, requests by status, page events
    ref: str | None = None  # one version of a versioned corpus: the git ref it was staged from
    source_url: str | None = None  # or its URL
    source_date: str | None = None  # when its docs last changed (UTC ISO 8601), when known


def listing_version(files: dict[str, str]) -> str:
    """Hash of the staged file list and contents: the staged_docs data version."""
    return hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()


def stage_local(
    source: Path,
    dest: Path,
    *,
    source_commit: str | None = None,
    exclude: list[str] | tuple[str, ...] = (),
    boundary: Path | None = None,
) -> StagedDocs:
    """Mirror the indexable files of `source` into `dest`; report what changed since last time.

    The walk is the one validate and build use (corpus.list_tree), so the same symlinks and
    special files are skipped, with the same warnings; staged files are always regular files.
    Under a docs framework, `dest` mirrors the project (the folder of the framework's config) with
    only what the build reads: the pages, the config and the files the pages' includes read
    (sources/project.py); the staged docs folder is then `dest/<docs folder in the project>`. Listing
    keys are relative to the docs folder (`../mkdocs.yml`, `../docs_src/app.py`). `boundary`: the
    framework's config is not looked for above it (a git source's extracted tree).
    """
    from ..corpus.framework import detect_framework
    from .project import project_files, project_root

    source, dest = Path(source), Path(dest)
    check_docs_dir(source, "source folder")
    framework = detect_framework(source, boundary)
    tree = list_tree(source, exclude, framework)  # excluded files are never staged
    check_writable_dir(dest, "staging folder (under the corpus's out)")
    errors = [d.format() for d in tree.diagnostics if d.severity == "error"]
    if errors:
        raise DocsMcpError(f"cannot stage {source}:\n" + "\n".join(errors))
    root = project_root(source, framework)
    docs_rel = os.path.relpath(os.path.realpath(source), root).replace(os.sep, "/")
    docs_rel = "" if docs_rel == "." else docs_rel + "/"
    # dest-relative path -> (folder, path under it) it is read from: the pages, manifests and templates
    # beneath the docs folder, then the project's files beneath the project root
    wanted = {docs_rel + rel: (source, rel) for rel in sorted(tree.markdown + tree.manifests + tree.templates)}
    for rel in sorted(project_files(source, tree.markdown, framework)):
        wanted.setdefault(rel, (root, rel))
    dest.mkdir(parents=True, exist_ok=True)
    previous: dict[str, str] = read_json(staged_listing(dest)) or {}
    files: dict[str, str] = {}
    total = 0
    warnings = [d.located() for d in tree.diagnostics]
    staged: set[str] = set()
    for rel, (folder, under) in wanted.items():
        key = posixpath.relpath(rel, docs_rel) if docs_rel else rel  # docs-relative: pages keep their names
        try:
            data = read_beneath(folder, under)
        except LinkOutsideError as exc:  # became a link leading out since the walk: skipped, as the walk skips one
            warnings.append(outside_warning(key, exc.target).located())
            continue
        except OSError as exc:
            raise DocsMcpError(f"cannot stage {show_path(key)} from {source}: {exc.strerror}") from None
        digest = hashlib.sha256(data).hexdigest()
        target = dest / rel
        if previous.get(key) != digest or not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        files[key] = digest
        staged.add(rel)
        total += len(data)
    _remove_strays(dest, staged)  # what left the source, and what an older layout staged
    write_json_atomic(staged_listing(dest), files)
    return StagedDocs(
        path=str(dest / docs_rel) if docs_rel else str(dest),
        files=files,
        bytes=total,
        data_version=listing_version(files),
        source_commit=source_commit,
        added=sorted(set(files) - set(previous)),
        changed=sorted(r for r in files if r in previous and previous[r] != files[r]),
        removed=sorted(set(previous) - set(files)),
        warnings=warnings,
    )


def _remove_strays(dest: Path, keep: set[str]) -> None:
    """Delete files the listing does not name (and empty folders), so staging is exact."""
    for dirpath, _, filenames in os.walk(dest, topdown=False):
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), dest).replace(os.sep, "/")
            if rel not in keep:
                os.unlink(os.path.join(dirpath, name))
        if dirpath != str(dest) and not os.listdir(dirpath):
            os.rmdir(dirpath)
