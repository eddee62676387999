"""npm lockfiles: package-lock.json (v1–v3) and npm-shrinkwrap.json, pnpm-lock.yaml (v5–v9), yarn.lock
(classic v1 and Berry). The version a project uses is its direct dependency's, not a nested copy."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..locked import Locked, LockfileError
from .formats import line_of, load_json, load_yaml, read_text

DEP_SECTIONS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_PNPM_SUFFIX = re.compile(r"[(_].*$")  # 1.2.3(react@18.2.0) or 1.2.3_react@18.2.0: the peers a copy was built for
_YARN_VERSION = re.compile(r'^\s+version:?\s+"?([^"\s]+)"?\s*$')


def read_package_lock(path: Path, matches: Callable[[str], bool], notes: list[str]) -> list[Locked]:
    """v2/v3: `packages["node_modules/NAME"]` is the top-level copy; v1: `dependencies[NAME]`."""
    text = read_text(path)
    data = load_json(path, text)
    if not isinstance(data, dict):
        raise LockfileError(f"{path}: not a package-lock.json (no top-level object); skipped")
    packages = data.get("packages")
    found = []
    if isinstance(packages, dict):
        for key, entry in packages.items():
            name = key.rsplit("node_modules/", 1)[-1]
            top_level = key.startswith("node_modules/") and "/node_modules/" not in key  # not another package's copy
            if top_level and matches(name):
                if isinstance(entry, dict) and isinstance(entry.get("version"), str):
                    found.append(Locked(name, entry["version"], path, line_of(text, f'"{key}"')))
        return found
    deps = data.get("dependencies", {})
    if not isinstance(deps, dict):
        raise LockfileError(f"{path}: neither 'packages' nor 'dependencies' is an object; skipped")
    for name, entry in deps.items():
        if matches(name) and isinstance(entry, dict) and isinstance(entry.get("version"), str):
            found.append(Locked(name, entry["version"], path))
    return found


def _pnpm_version(value: Any) -> str | None:
    version = value.get("version") if isinstance(value, dict) else value
    if not isinstance(version, str) or version.startswith(("link:", "file:", "workspace:")):
        return None
    return _PNPM_SUFFIX.sub("", version)


def read_pnpm_lock(path: Path, matches: Callable[[str], bool], notes: list[str]) -> list[Locked]:
    """The root project's direct dependencies: `importers["."]` (v6 workspaces, v9) or the top level (v5, v6)."""
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise LockfileError(f"{path}: not a pnpm-lock.yaml (no top-level mapping); skipped")
    importers = data.get("importers")
    root = importers.get(".", {}) if isinstance(importers, dict) else data
    found = []
    for section in DEP_SECTIONS:
        deps = root.get(section) if isinstance(root, dict) else None
        for name, value in (deps or {}).items() if isinstance(deps, dict) else ():
            version = _pnpm_version(value)
            if matches(str(name)) and version:
                found.append(Locked(str(name), version, path))
    return found


def _yarn_names(header: str) -> list[tuple[str, str]]:
    """(name, range) of each descriptor of a yarn.lock entry: `"@scope/pkg@^1.0.0", pkg@npm:^2`."""
    out = []
    for spec in header.rstrip(":").split(","):
        spec = spec.strip().strip('"')
        at = spec.find("@", 1)  # a scope's own @ comes first
        if at > 0:
            out.append((spec[:at], spec[at + 1 :].removeprefix("npm:")))
    return out


def read_yarn_lock(path: Path, matches: Callable[[str], bool], notes: list[str]) -> list[Locked]:
    """Classic (v1) entries are `descriptors:` lines with an indented `version "x"`; Berry writes the same
    shape as YAML (`version: x`). Read line by line, both; several copies are chosen between by package.json."""
    text = read_text(path)
    found: list[tuple[Locked, list[str]]] = []
    ranges: list[str] = []
    name: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            if not line.rstrip().endswith(":"):
                notes.append(f"{path}:{number}: not a yarn.lock entry ({line[:60]!r}); skipped")
                name, ranges = None, []
                continue
            named = [(n, r) for n, r in _yarn_names(line.rstrip()) if matches(n)]
            name, ranges = (named[0][0], [r for _, r in named]) if named else (None, [])
            continue
        m = _YARN_VERSION.match(line)
        if name is not None and m and line.startswith("  ") and not line.startswith("   "):
            found.append((Locked(name, m.group(1), path, number), ranges))
            name = None
    if len(found) > 1:
        wanted = _manifest_range(path.parent / "package.json", {lk.name for lk, _ in found})
        direct = [lk for lk, rs in found if wanted is not None and wanted in rs]
        if direct:
            return direct
    return [lk for lk, _ in found]


def _manifest_range(manifest: Path, names: set[str]) -> str | None:
    """The range package.json asks for (to tell the direct copy from others); None if unknown."""
    try:
        data = load_json(manifest) if manifest.is_file() else None
    except LockfileError:
        return None
    if not isinstance(data, dict):
        return None
    for section in DEP_SECTIONS:
        deps = data.get(section)
        for name in sorted(names):
            if isinstance(deps, dict) and isinstance(deps.get(name), str):
                return str(deps[name])
    return None
