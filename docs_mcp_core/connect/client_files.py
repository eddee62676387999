"""`mcp-config --write`: merge one server entry into a client's config file, keeping everything else in it.

The file is a user's own (other servers, editor settings), so: a backup is taken before the first
byte changes; a file that does not parse, or whose comments a rewrite would lose, is refused with
nothing written; the new file replaces the old one atomically, with the old one's mode, through
a symlink rather than over it (dotfile managers link these files). TOML is never re-serialized:
the table is appended as text and the result is parsed back and compared before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError
from ..fsutil import write_atomic
from .clients import CLIENTS, Snippet, toml_table

NOTHING_WRITTEN = "nothing was written"


@dataclass(frozen=True)
class Written:
    path: Path
    status: str  # created | added | replaced | unchanged
    backup: Path | None = None


def write_snippet(snip: Snippet, path: Path) -> Written:
    """Add (or replace) `snip`'s server in the config file at `path`."""
    target = Path(os.path.realpath(path.expanduser()))
    text = _read(target)
    client = CLIENTS[snip.client]
    merge = _merge_toml if client.fmt == "toml" else _merge_json
    new_text, status = merge(text, snip, target)
    if status == "unchanged":
        return Written(target, status)
    backup = _backup(target) if text is not None else None
    mode = stat.S_IMODE(target.stat().st_mode) if text is not None else None
    write_atomic(target, new_text.encode("utf-8"), mode)
    return Written(target, status, backup)


def _read(path: Path) -> str | None:
    if not path.exists():
        return None
    if not path.is_file():
        raise DocsMcpError(f"{path} is not a file; pass --path with the client's config file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DocsMcpError(
            f"{path} is not UTF-8 text, so not a config file docs-mcp can merge into; {NOTHING_WRITTEN}"
        ) from None


def _backup(path: Path) -> Path:
    """A copy beside the file, named for the time, never over an earlier backup."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup, n = path.with_name(f"{path.name}.{stamp}.bak"), 2
    while backup.exists():
        backup, n = path.with_name(f"{path.name}.{stamp}-{n}.bak"), n + 1
    shutil.copy2(path, backup)
    return backup


def strip_jsonc(text: str) -> str:
    """`text` without // and /* */ comments (outside strings) and without trailing commas. Used only to
    tell a JSON-with-comments file (refused: a rewrite would lose the comments) from a broken one."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(text[i])
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _parse_json(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        try:
            json.loads(strip_jsonc(text))
        except json.JSONDecodeError:
            raise DocsMcpError(
                f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); fix it, or pass --path to "
                f"write another file; {NOTHING_WRITTEN}"
            ) from None
        raise DocsMcpError(
            f"{path} has comments or trailing commas, which a rewrite would lose, so {NOTHING_WRITTEN}: run "
            "without --write and paste the printed entry into it yourself"
        ) from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")


def _merge_json(text: str | None, snip: Snippet, path: Path) -> tuple[str, str]:
    key = CLIENTS[snip.client].key
    data = _parse_json(text, path) if text is not None and text.strip() else {}
    if not isinstance(data, dict):
        raise DocsMcpError(f"{path}: the file holds {_kind(data)}, not a JSON object; {NOTHING_WRITTEN}")
    servers = data.get(key, {})
    if not isinstance(servers, dict):
        raise DocsMcpError(f'{path}: "{key}" is {_kind(servers)}, not an object of servers; {NOTHING_WRITTEN}')
    merged = {**data, key: {**servers, snip.name: snip.entry}}
    if snip.inputs:  # VS Code: an input of the same id is ours to replace; the others stay
        inputs = data.get("inputs", [])
        if not isinstance(inputs, list):
            raise DocsMcpError(f'{path}: "inputs" is {_kind(inputs)}, not an array; {NOTHING_WRITTEN}')
        ours = {i["id"] for i in snip.inputs}
        merged["inputs"] = [i for i in inputs if not (isinstance(i, dict) and i.get("id") in ours)] + snip.inputs
    if merged == data:
        return "", "unchanged"
    status = "created" if text is None else "replaced" if snip.name in servers else "added"
    return json.dumps(merged, indent=2, ensure_ascii=False) + "\n", status


def _drop_toml_table(text: str, key: str, name: str) -> str:
    """`text` without the `[KEY.NAME]` table and its sub-tables (each up to the next table header)."""
    quoted = rf'(?:{re.escape(name)}|"{re.escape(name)}"|\'{re.escape(name)}\')'
    ours = re.compile(rf"^\s*\[\s*{re.escape(key)}\s*\.\s*{quoted}\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$")
    header = re.compile(r"^\s*\[")
    kept, dropping = [], False
    for line in text.splitlines(keepends=True):
        if header.match(line):
            dropping = bool(ours.match(line))
        if not dropping:
            kept.append(line)
    return "".join(kept)


def _merge_toml(text: str | None, snip: Snippet, path: Path) -> tuple[str, str]:
    key = CLIENTS[snip.client].key
    try:
        data = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        raise DocsMcpError(
            f"{path}: not valid TOML ({exc}); fix it, or pass --path to write another file; {NOTHING_WRITTEN}"
        ) from None
    servers = data.get(key, {})
    if not isinstance(servers, dict):
        raise DocsMcpError(f"{path}: {key} is not a table of servers; {NOTHING_WRITTEN}")
    if servers.get(snip.name) == snip.entry:
        return "", "unchanged"
    body = _drop_toml_table(text or "", key, snip.name) if snip.name in servers else text or ""
    body = body.rstrip("\n")
    new_text = (body + "\n\n" if body.strip() else "") + toml_table(f"{key}.{snip.name}", snip.entry)
    expected = {**data, key: {**servers, snip.name: snip.entry}}
    try:
        merged = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        merged = None
    if merged != expected:  # e.g. mcp_servers written as an inline table, or the entry as dotted keys
        raise DocsMcpError(
            f"{path} defines {key} in a form docs-mcp cannot add [{key}.{snip.name}] to without rewriting "
            f"the file, so {NOTHING_WRITTEN}: run without --write and add the printed table yourself"
        )
    status = "created" if text is None else "replaced" if snip.name in servers else "added"
    return new_text, status
