"""Reading a lockfile as data (TOML, JSON, YAML or text), never executing it; a broken one is one line."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..locked import Locked, LockfileError

MAX_BYTES = 64 * 2**20  # a lockfile bigger than this is not one


def read_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise LockfileError(f"{path}: larger than {MAX_BYTES // 2**20} MB; not read as a lockfile")
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LockfileError(f"{path}: not UTF-8 (byte {exc.start}); skipped") from None
    except OSError as exc:
        raise LockfileError(f"{path}: cannot be read ({exc.strerror or exc}); skipped") from None


def load_toml(path: Path, text: str | None = None) -> dict[str, Any]:
    try:
        return tomllib.loads(read_text(path) if text is None else text)
    except tomllib.TOMLDecodeError as exc:
        raise LockfileError(f"{path}: invalid TOML ({exc}); skipped") from None


def load_json(path: Path, text: str | None = None) -> Any:
    try:
        return json.loads(read_text(path) if text is None else text)
    except json.JSONDecodeError as exc:
        raise LockfileError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg}); skipped") from None
    except RecursionError:
        raise LockfileError(f"{path}: nested too deeply; skipped") from None


def load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise LockfileError(f"{path}{where}: invalid YAML ({getattr(exc, 'problem', None) or exc}); skipped") from None
    except RecursionError:
        raise LockfileError(f"{path}: nested too deeply; skipped") from None


def table_list(data: Any, key: str, path: Path) -> list[dict[str, Any]]:
    """`[[key]]` entries of a TOML lockfile (uv, poetry, pylock, Cargo); the wrong shape is a LockfileError."""
    if not isinstance(data, dict):
        raise LockfileError(f"{path}: not a lockfile (no top-level table); skipped")
    entries = data.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise LockfileError(f"{path}: '{key}' is not a list of tables; skipped")
    return entries


def line_of(text: str, needle: str) -> int | None:
    """The 1-based line where `needle` first appears (a courtesy for messages), or None."""
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def read_package_tables(
    path: Path, matches: Callable[[str], bool], notes: list[str], key: str = "package"
) -> list[Locked]:
    """`[[package]]` tables with `name` and `version`: uv.lock, poetry.lock, pdm.lock, Cargo.lock; pylock.toml
    (PEP 751) calls them `[[packages]]` and may leave out the version (a folder or VCS install)."""
    text = read_text(path)
    found = []
    for entry in table_list(load_toml(path, text), key, path):
        name, version = entry.get("name"), entry.get("version")
        if isinstance(name, str) and matches(name) and isinstance(version, str):
            line = line_of(text, f'name = "{name}"\nversion = "{version}"') or line_of(text, f'name = "{name}"')
            found.append(Locked(name, version, path, line))
    return found
