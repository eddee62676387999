"""Line numbers of JSON paths, so manifest errors can point at the offending line."""

from __future__ import annotations

import json
import re

_WS = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()

Path = tuple[str | int, ...]


def json_line_map(text: str) -> dict[Path, int]:
    """Map each path (keys and list indexes) in valid JSON `text` to its 1-based line."""
    lines: dict[Path, int] = {}
    _value(text, _skip(text, 0), (), lines)
    return lines


def line_of(lines: dict[Path, int], path: Path) -> int:
    """The line of the longest known prefix of `path` (1 if none)."""
    for n in range(len(path), -1, -1):
        if path[:n] in lines:
            return lines[path[:n]]
    return 1


def _skip(text: str, pos: int) -> int:
    spaces = _WS.match(text, pos)
    return spaces.end() if spaces else pos


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _value(text: str, pos: int, path: Path, lines: dict[Path, int]) -> int:
    lines.setdefault(path, _line(text, pos))
    ch = text[pos]
    if ch == "{":
        pos = _skip(text, pos + 1)
        if text[pos] == "}":
            return pos + 1
        while True:
            key_pos = pos
            key, pos = _decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            assert text[pos] == ":"
            child = path + (key,)
            lines[child] = _line(text, key_pos)
            pos = _value(text, _skip(text, pos + 1), child, lines)
            pos = _skip(text, pos)
            if text[pos] == "}":
                return pos + 1
            pos = _skip(text, pos + 1)  # ","
    if ch == "[":
        pos = _skip(text, pos + 1)
        if text[pos] == "]":
            return pos + 1
        index = 0
        while True:
            pos = _value(text, pos, path + (index,), lines)
            pos = _skip(text, pos)
            if text[pos] == "]":
                return pos + 1
            pos = _skip(text, pos + 1)
            index += 1
    _, end = _decoder.raw_decode(text, pos)
    return end
