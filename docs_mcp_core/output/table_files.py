"""The files of a LanceDB table version, read from the filesystem without importing LanceDB.

The build's no-op path uses this to check, mostly in stat calls, that the version it is about
to republish still exists and that every file it was written with is intact (table_checksums);
pruning uses it to find the versions that no published build names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..fsutil import file_stat
from . import table_checksums
from .layout import OutputLayout
from .metadata import TableVersion

_U64 = 2**64 - 1
_FILE_DIRS = ("data", "_indices", "_deletions", "_serving")  # _serving: serving_snapshot.py
_MAGIC = b"LANC"
_MANIFESTS = "_versions/"


def table_dir(out: Path, table: str) -> Path:
    return OutputLayout(out).table(table)


def manifests(out: Path, table: str) -> dict[int, Path]:
    """Version number -> manifest file (Lance names them u64::MAX - version, or plainly in old tables)."""
    folder = table_dir(out, table) / "_versions"
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[int, Path] = {}
    for name in names:
        stem, dot, ext = name.partition(".")
        if ext != "manifest" or not stem.isdigit():
            continue
        number = int(stem)
        found[_U64 - number if len(stem) == 20 and number > 2**63 else number] = folder / name
    return found


def files_of(out: Path, table: str) -> dict[str, int]:
    """Every data, index and deletion file of the table (relative path -> size)."""
    root = table_dir(out, table)
    sizes: dict[str, int] = {}
    for sub in _FILE_DIRS:
        for dirpath, _, names in os.walk(root / sub):
            for name in names:
                path = Path(dirpath) / name
                try:
                    sizes[path.relative_to(root).as_posix()] = path.stat().st_size
                except FileNotFoundError:
                    continue
    return sizes


def _ends_with_magic(path: Path) -> bool:
    """Lance files (manifests, data, indexes) end with the magic bytes LANC."""
    try:
        with open(path, "rb") as fh:
            fh.seek(-len(_MAGIC), os.SEEK_END)
            return fh.read() == _MAGIC
    except OSError:
        return False


def _records(out: Path) -> table_checksums.Records:
    return table_checksums.load(OutputLayout(out).table_files)


def _usable(out: Path) -> table_checksums.Records:
    """The records, or none when they cannot vouch for anything (damaged: then every version is unverified)."""
    records = _records(out)
    return table_checksums.Records(records.path) if records.problem else records


def _manifest_rel(out: Path, table: str, version: int) -> str | None:
    manifest = manifests(out, table).get(version)
    return manifest.relative_to(table_dir(out, table)).as_posix() if manifest else None


def record_files(out: Path, table: str, version: int, files: dict[str, int]) -> None:
    """Remember the files (relative path -> size) `table` was written with at `version`, and its manifest,
    with their checksums: a file another kept version recorded with the stat it still has keeps that
    entry, the others are read (a manifest always: a table written afresh numbers its versions again)."""
    records = _usable(out)
    root = table_dir(out, table)
    known = {rel: e for other in records.versions.values() for rel, e in other.items()}
    wanted = {rel: size for rel, size in files.items() if not rel.startswith(_MANIFESTS)}
    manifest = _manifest_rel(out, table, version)
    if manifest is not None:
        wanted[manifest] = (root / manifest).stat().st_size
    entries: dict[str, dict[str, Any]] = {}
    for rel, size in sorted(wanted.items()):
        found = known.get(rel)
        same = found is not None and found["stat"] is not None and found["stat"] == file_stat(root / rel)
        fresh = found if same and not rel.startswith(_MANIFESTS) else table_checksums.entry(root / rel, size)
        if fresh is not None:
            entries[rel] = fresh
    records.versions[f"{table}:{version}"] = entries
    records.save()


def add_records(out: Path, table: str, version: int, files: dict[str, int]) -> None:
    """Record more files (relative path -> size) of `table` at `version`, read for their checksums: a
    version's serving snapshot, written when it is published."""
    records = _usable(out)
    entries = records.files(table, version)
    if entries is None:
        return
    root = table_dir(out, table)
    for rel, size in sorted(files.items()):
        fresh = table_checksums.entry(root / rel, size)
        if fresh is not None:
            entries[rel] = fresh
    records.versions[f"{table}:{version}"] = dict(sorted(entries.items()))
    records.save()


def forget_records(out: Path, table: str, keep: set[int]) -> None:
    """Drop the records of every version but `keep` (they were pruned)."""
    records = _usable(out)
    wanted = {f"{table}:{v}" for v in keep}
    if set(records.versions) - wanted and records.exists:
        records.versions = {k: v for k, v in records.versions.items() if k in wanted}
        records.save()


def complete_versions(out: Path, table: str, versions: set[int]) -> set[int]:
    """The versions in `versions` whose recorded files are all present."""
    root = table_dir(out, table)
    records = _usable(out)
    return {v for v in versions if all((root / rel).exists() for rel in (records.files(table, v) or {}))}


def forget_missing(out: Path, table: str, versions: set[int]) -> None:
    """Drop from the records of `versions` (complete before Lance's cleanup) the files that are gone
    after it: the cleanup removes nothing a remaining version references, so those were not in use."""
    records = _usable(out)
    root = table_dir(out, table)
    changed = False
    for version in versions:
        files = records.files(table, version)
        if files is not None:
            present = {rel: e for rel, e in files.items() if (root / rel).exists()}
            if present != files:
                records.versions[f"{table}:{version}"], changed = present, True
    if changed:
        records.save()


def recorded_files(out: Path, table: str, version: int) -> dict[str, int] | None:
    """The data, index and deletion files recorded for `version` (relative path -> size), or None."""
    files = _usable(out).files(table, version)
    if files is None:
        return None
    return {rel: e["size"] for rel, e in files.items() if not rel.startswith(_MANIFESTS)}


def records_problem(out: Path, index: TableVersion) -> str | None:
    """Why the build state cannot vouch for the files of the published version `index`, or None:
    table-files.json is missing, damaged, from an older docs-mcp, or has no record of it."""
    records = _records(out)
    if records.problem:
        return records.problem
    if records.files(index.table, index.version) is None:
        return (
            f"{records.path} has no record of table version {index.version}"
            if records.exists
            else f"{records.path} is missing"
        )
    return None


def version_problem(out: Path, index: TableVersion) -> str | None:
    """Why the table version `index` (metadata.json `index`) cannot be served as is, or None.

    Checks that its manifest exists and, when they were recorded, that each of its files (the
    manifest, data and index files) is present with the size and checksum it was written with
    (table_checksums.verify). Call with the build lock held: stats found changed on files whose
    bytes are intact are recorded, so the next check costs a stat again.
    """
    table, version = index.table, index.version
    root = table_dir(out, table)
    manifest = manifests(out, table).get(version)
    if manifest is None:
        return f"table version {version} is missing from {root}"
    if not _ends_with_magic(manifest):
        return f"{manifest} is not a Lance manifest"
    records = _usable(out)
    files = records.files(table, version)
    if files is None:
        return None
    problem, refreshed = table_checksums.verify(root, files)
    if refreshed and problem is None:
        files.update(refreshed)
        records.save()
    return problem


def unrecorded_files(out: Path, table: str, versions: set[int]) -> list[str] | None:
    """Data and index files no version in `versions` was written with (left by superseded,
    never-published or interrupted writes); None when a version's files were not recorded."""
    records = [recorded_files(out, table, v) for v in sorted(versions)]
    if any(record is None for record in records):
        return None
    needed = {rel for record in records for rel in record or {}}
    return sorted(rel for rel in files_of(out, table) if rel not in needed)


def remove_files(out: Path, table: str, relpaths: list[str]) -> None:
    """Delete table files (and index folders left empty). Only with the build lock held."""
    root = table_dir(out, table)
    for rel in relpaths:
        (root / rel).unlink(missing_ok=True)
    for folder in {(root / rel).parent for rel in relpaths if rel.startswith(("_indices/", "_serving/"))}:
        try:
            folder.rmdir()
        except OSError:
            pass
