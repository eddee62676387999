"""Stage a source into a deterministic folder: only what gets indexed, byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import list_tree
from .fsutil import read_json, write_json_atomic

LISTING = "staged-files.json"


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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing_version(files: dict[str, str]) -> str:
    """Hash of the staged file list and contents: the staged_docs data version."""
    return hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()


def stage_local(source: Path, dest: Path, *, source_commit: str | None = None) -> StagedDocs:
    """Mirror the indexable files of `source` into `dest`; report what changed since last time."""
    source, dest = Path(source), Path(dest)
    md, manifests, templates = list_tree(source)
    wanted = sorted(md + manifests + templates)
    dest.mkdir(parents=True, exist_ok=True)
    previous: dict[str, str] = read_json(dest.parent / LISTING) or {}
    files: dict[str, str] = {}
    total = 0
    for rel in wanted:
        src = source / rel
        digest = _sha256(src)
        target = dest / rel
        if previous.get(rel) != digest or not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
        files[rel] = digest
        total += src.stat().st_size
    for rel in set(previous) - set(files):
        (dest / rel).unlink(missing_ok=True)
    _remove_strays(dest, set(files))
    write_json_atomic(dest.parent / LISTING, files)
    return StagedDocs(
        path=str(dest),
        files=files,
        bytes=total,
        data_version=listing_version(files),
        source_commit=source_commit,
        added=sorted(set(files) - set(previous)),
        changed=sorted(r for r in files if r in previous and previous[r] != files[r]),
        removed=sorted(set(previous) - set(files)),
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



