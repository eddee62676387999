"""Checksums of a table version's files: recorded when the version is written, verified before it is
served or republished.

OUT/.docs-mcp/table-files.json holds, for each kept version, every data, index and deletion file
and its manifest, each with its size, a checksum of its bytes and its stat (fsutil.file_stat).
Lance never rewrites a file, so any change to one is damage. As git does for its index, a file
whose stat is the recorded one costs a stat call: writing into a file changes its ctime, which
no tool sets back. A file with another stat (a copied folder, a restored backup) or that was
racy when recorded is read and its checksum compared. The build and the readers share this
check; only the build (under its lock) writes the file.

xxh3-128 (the xxhash library) hashes as fast as the bytes are read (docs/performance.md has the
figures); 128 bits make an accidental match of damaged bytes impossible in practice.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fsutil import RACY_NS, file_stat, read_json, write_json_atomic
from .layout import OutputLayout

FORMAT = 2
SNAPSHOT_FOLDER = "_serving/"  # a version's serving snapshot (serving_snapshot.py)
ALGORITHM = "xxh3_128"
_READ = 1 << 20


def checksum(path: Path) -> str:
    """xxh3-128 of the file's bytes, as hex."""
    import xxhash

    digest = xxhash.xxh3_128()
    with open(path, "rb") as fh:
        while block := fh.read(_READ):
            digest.update(block)
    return digest.hexdigest()


def entry(path: Path, size: int | None = None) -> dict[str, Any] | None:
    """What is recorded for a file: size, checksum, and its stat when settled (None: it is gone).

    The stat is taken before and after reading: a file that changed meanwhile is recorded
    without one, so its checksum is compared next time whatever its stat says.
    """
    before = file_stat(path)
    if before is None:
        return None
    digest = checksum(path)
    after = file_stat(path)
    settled = after == before and max(before[1], before[2]) < time.time_ns() - RACY_NS
    return {"size": before[0] if size is None else size, "checksum": digest, "stat": before if settled else None}


@dataclass
class Records:
    """table-files.json, read: `versions` maps "TABLE:VERSION" to {relative path: entry}.

    `problem` says why the file cannot vouch for any version (damaged, or written without
    checksums); a missing file is no record at all (`versions` empty, no problem).
    """

    path: Path
    versions: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    problem: str | None = None
    exists: bool = True

    def files(self, table: str, version: int) -> dict[str, dict[str, Any]] | None:
        return self.versions.get(f"{table}:{version}")

    def save(self) -> None:
        write_json_atomic(
            self.path, {"format": FORMAT, "checksum": ALGORITHM, "versions": dict(sorted(self.versions.items()))}
        )


def _valid_entry(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("checksum"), str):
        return False
    size, stat = value.get("size"), value.get("stat")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return False
    return stat is None or (isinstance(stat, list) and len(stat) == 4 and all(type(n) is int for n in stat))


def load(path: Path) -> Records:
    """The records in `path`; anything but a complete file in this format is a `problem`, never trusted in part."""
    try:
        data = read_json(path)
    except (ValueError, OSError) as exc:
        return Records(path, problem=f"{path} cannot be read ({str(exc).splitlines()[0][:200] if str(exc) else exc})")
    if data is None:
        return Records(path, exists=False)
    if not isinstance(data, dict):
        return Records(path, problem=f"{path} is damaged (not a JSON object)")
    if data.get("format") != FORMAT or data.get("checksum") != ALGORITHM:
        return Records(path, problem=f"{path} has format {data.get('format')!r}, not {FORMAT} with {ALGORITHM}")
    versions = data.get("versions")
    if not isinstance(versions, dict) or not all(
        isinstance(files, dict) and all(isinstance(rel, str) and _valid_entry(e) for rel, e in files.items())
        for files in versions.values()
    ):
        return Records(path, problem=f"{path} is damaged (its 'versions' are not lists of files with checksums)")
    return Records(path, versions)


def verify(root: Path, files: dict[str, dict[str, Any]]) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """Why the recorded `files` (paths relative to the table folder `root`) are not intact, or None;
    and the entries whose stat changed while their bytes did not, refreshed (for the build to record).
    """
    refreshed: dict[str, dict[str, Any]] = {}
    for rel, recorded in sorted(files.items()):
        path = root / rel
        stat = file_stat(path)
        if stat is None or not os.path.isfile(path):
            return f"{path} is missing", refreshed
        if stat[0] != recorded["size"]:
            return f"{path} has {stat[0]} bytes, not the {recorded['size']} it was written with", refreshed
        if recorded.get("stat") == stat:
            continue
        fresh = entry(path, recorded["size"])
        if fresh is None:
            return f"{path} is missing", refreshed
        if fresh["checksum"] != recorded["checksum"]:
            return f"{path} changed since it was written (its checksum differs)", refreshed
        if fresh["stat"] is not None:
            refreshed[rel] = fresh
    return None, refreshed


def _recorded(layout: OutputLayout, table: str, version: int, snapshot: bool) -> dict[str, dict[str, Any]] | None:
    records = load(layout.table_files)
    files = None if records.problem else records.files(table, version)
    if files is None:
        return None
    return {rel: e for rel, e in files.items() if rel.startswith(SNAPSHOT_FOLDER) == snapshot}


def published_files_problem(layout: OutputLayout, table: str, version: int) -> str | None:
    """For readers, before LanceDB opens the version: why its recorded files are not intact, or None
    (also when nothing usable is recorded: readers leave build state to the next build). Its serving
    snapshot's files are not among them: a damaged snapshot leaves the table to be read instead."""
    files = _recorded(layout, table, version, snapshot=False)
    return None if files is None else verify(layout.table(table), files)[0]


def snapshot_files_problem(layout: OutputLayout, table: str, version: int) -> str | None:
    """Why the recorded files of the version's serving snapshot are not intact, or None."""
    files = _recorded(layout, table, version, snapshot=True)
    return None if files is None else verify(layout.table(table), files)[0]
