"""Python lockfiles besides requirements files: pylock.toml (PEP 751) and Pipfile.lock (uv.lock, poetry.lock and
pdm.lock are plain `[[package]]` tables: formats.read_package_tables)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..locked import Locked, LockfileError
from .formats import load_json, read_package_tables


def read_pylock(path: Path, matches: Callable[[str], bool], notes: list[str]) -> list[Locked]:
    return read_package_tables(path, matches, notes, key="packages")


def read_pipfile_lock(path: Path, matches: Callable[[str], bool], notes: list[str]) -> list[Locked]:
    """Pipfile.lock: `default` then `develop`, each {name: {version: "==1.2.3"}}."""
    data = load_json(path)
    if not isinstance(data, dict):
        raise LockfileError(f"{path}: not a Pipfile.lock (no top-level object); skipped")
    found = []
    for section in ("default", "develop"):
        packages = data.get(section, {})
        if not isinstance(packages, dict):
            raise LockfileError(f"{path}: '{section}' is not an object; skipped")
        for name, entry in sorted(packages.items()):
            version = entry.get("version") if isinstance(entry, dict) else None
            if matches(name) and isinstance(version, str) and version.startswith("=="):
                found.append(Locked(name, version.lstrip("="), path))
    return found
