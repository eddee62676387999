"""The files of a LanceDB table version, read from the filesystem without importing LanceDB.

The build's no-op path uses this to check, in a few stat calls, that the version it is about
to republish still exists and that every data and index file it was written with is intact;
pruning uses it to find the versions that no published build names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..fsutil import read_json, write_json_atomic
from ..layout import OutputLayout
from ..metadata import IndexRef

_U64 = 2**64 - 1
_FILE_DIRS = ("data", "_indices", "_deletions")
_MAGIC = b"LANC"


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


def _records(out: Path) -> dict[str, Any]:
    try:
        data = read_json(OutputLayout(out).table_files)
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def record_files(out: Path, table: str, version: int, files: dict[str, int]) -> None:
    """Remember the files `table` was written with at `version`."""
    records = _records(out)
    records[f"{table}:{version}"] = dict(sorted(files.items()))
    write_json_atomic(OutputLayout(out).table_files, dict(sorted(records.items())))


def forget_records(out: Path, table: str, keep: set[int]) -> None:
    """Drop the records of every version but `keep` (they were pruned)."""
    records = _records(out)
    wanted = {f"{table}:{v}" for v in keep}
    if set(records) - wanted:
        write_json_atomic(OutputLayout(out).table_files, {k: v for k, v in sorted(records.items()) if k in wanted})


def complete_versions(out: Path, table: str, versions: set[int]) -> set[int]:
    """The versions in `versions` whose recorded files are all present."""
    root = table_dir(out, table)
    return {v for v in versions if all((root / rel).exists() for rel in (recorded_files(out, table, v) or {}))}


def forget_missing(out: Path, table: str, versions: set[int]) -> None:
    """Drop from the records of `versions` (complete before Lance's cleanup) the files that are gone
    after it: the cleanup removes nothing a remaining version references, so those were not in use."""
    records = _records(out)
    root = table_dir(out, table)
    changed = False
    for version in versions:
        files = records.get(f"{table}:{version}")
        if isinstance(files, dict):
            present = {rel: size for rel, size in files.items() if (root / rel).exists()}
            if present != files:
                records[f"{table}:{version}"], changed = present, True
    if changed:
        write_json_atomic(OutputLayout(out).table_files, dict(sorted(records.items())))


def recorded_files(out: Path, table: str, version: int) -> dict[str, int] | None:
    files = _records(out).get(f"{table}:{version}")
    return files if isinstance(files, dict) else None


def version_problem(out: Path, index: IndexRef) -> str | None:
    """Why the table version `index` (metadata.json `index`) cannot be served as is, or None.

    Checks that its manifest exists and, when they were recorded, that each of its data and
    index files is present with the size it was written with.
    """
    table, version = index.table, index.version
    root = table_dir(out, table)
    manifest = manifests(out, table).get(version)
    if manifest is None:
        return f"table version {version} is missing from {root}"
    if not _ends_with_magic(manifest):
        return f"{manifest} is not a Lance manifest"
    for rel, size in sorted((recorded_files(out, table, version) or {}).items()):
        try:
            actual = (root / rel).stat().st_size
        except (FileNotFoundError, NotADirectoryError):
            return f"{root / rel} is missing"
        if actual != size:
            return f"{root / rel} has {actual} bytes, not the {size} it was written with"
    return None


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
    for folder in {(root / rel).parent for rel in relpaths if rel.startswith("_indices/")}:
        try:
            folder.rmdir()
        except OSError:
            pass
