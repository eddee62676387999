"""The version of a package a project locks, read from its lockfiles (as data: never run).

Per ecosystem the files are read in the order of LOCKFILES; the first that locks the package answers.
A file that cannot be read is one note, and the next file is read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...fsutil import file_stat
from ..locked import Locked, LockfileError, LockLookup, name_matcher, newest
from .formats import read_package_tables
from .go import read_go_mod
from .node import read_package_lock, read_pnpm_lock, read_yarn_lock
from .python import read_pipfile_lock, read_pylock
from .requirements import read_requirements

Reader = Callable[[Path, Callable[[str], bool], list[str]], list[Locked]]  # notes: lines it could not read
REQUIREMENTS = "requirements"

# (glob in the project folder, reader), in the order they are asked.
LOCKFILES: dict[str, list[tuple[str, Reader | str]]] = {
    "pypi": [
        ("uv.lock", read_package_tables),
        ("poetry.lock", read_package_tables),
        ("pdm.lock", read_package_tables),
        ("pylock.toml", read_pylock),
        ("pylock.*.toml", read_pylock),
        ("Pipfile.lock", read_pipfile_lock),
        ("requirements*.txt", REQUIREMENTS),
        ("requirements/*.txt", REQUIREMENTS),
    ],
    "npm": [
        ("npm-shrinkwrap.json", read_package_lock),
        ("package-lock.json", read_package_lock),
        ("pnpm-lock.yaml", read_pnpm_lock),
        ("yarn.lock", read_yarn_lock),
    ],
    "go": [("go.mod", read_go_mod)],
    "cargo": [("Cargo.lock", read_package_tables)],
}


def _files(project: Path, pattern: str) -> list[Path]:
    # requirements.txt before requirements-dev.txt and the rest, by name
    return sorted((p for p in project.glob(pattern) if p.is_file()), key=lambda p: (p.stem != "requirements", p.name))


def find_locked(project: Path, name: str, ecosystem: str) -> LockLookup:
    """What `project` locks for package `name` of `ecosystem` (pypi, npm, go, cargo), with a note per
    file it could not read and per choice it made."""
    lookup = LockLookup(name, ecosystem)
    if ecosystem not in LOCKFILES:
        lookup.notes.append(f"ecosystem {ecosystem!r} has no lockfile reader; known: {', '.join(LOCKFILES)}")
        return lookup
    if not project.is_dir():
        lookup.notes.append(f"{project}: not a folder; no lockfile read")
        return lookup
    matches = name_matcher(name, ecosystem)
    unpinned: list[str] = []
    for pattern, reader in LOCKFILES[ecosystem]:
        for path in _files(project, pattern):
            try:
                if reader == REQUIREMENTS:
                    scan = read_requirements(path, matches, lookup.notes)
                    unpinned += scan.unpinned
                    found = scan.pins
                else:
                    assert callable(reader)
                    found = reader(path, matches, lookup.notes)
            except LockfileError as exc:
                lookup.notes.append(str(exc))
                continue
            if found:
                lookup.locked = newest(found)
                versions = sorted({lk.version for lk in found})
                if len(versions) > 1:
                    lookup.notes.append(
                        f"{path.name} locks {name} at {len(versions)} versions ({', '.join(versions)}); "
                        f"using the newest, {lookup.locked.version}"
                    )
                return lookup
    if unpinned:
        lookup.notes.append(f"{name} is required but not pinned to one version ({'; '.join(dict.fromkeys(unpinned))})")
    return lookup


__all__ = ["LOCKFILES", "Locked", "LockLookup", "LockfileError", "find_locked"]


def lockfiles_signature(project: Path) -> tuple[tuple[str, tuple[int, ...] | None], ...]:
    """What changes when a lockfile the readers would read is written, added or removed (every
    ecosystem's, in `project` and its requirements/ folder): a server re-pins when it does."""
    found: dict[str, tuple[int, ...] | None] = {}
    for patterns in LOCKFILES.values():
        for pattern, _ in patterns:
            for path in _files(project, pattern):
                st = file_stat(path)
                found[str(path.relative_to(project))] = tuple(st) if st else None
    return tuple(sorted(found.items()))
