"""A build's chunks as chunks.json lines on disk, read back a file at a time: a build never holds them all.

chunks.json is a JSON array with one chunk per line, in path order (each file's chunks in
document order). Parsed files' lines go to a `Spill` (an unnamed temporary file) as the
parser returns them; unchanged files' lines stay in the previous build's chunks.json. The
table wants its rows in chunk-ID order instead: `by_chunk_id` reads a written chunks.json
back in that order, one file at a time.

A file's chunk IDs are its path, or its path followed by `#…`, so two files' ID ranges
only overlap in rare cases (`a.md` split into parts by `chunk_by: file` against `a.md x.md`,
whose IDs sort between `a.md` and `a.md#_part-2`): such files are read and sorted together.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..output.chunk import Chunk


def chunk_line(chunk: Chunk) -> bytes:
    """One chunk as chunks.json holds it: one line of JSON."""
    return json.dumps(chunk.to_dict(), ensure_ascii=False).encode()


def parse_line(line: bytes) -> Chunk:
    return Chunk.from_dict(json.loads(line))


def has_source_url(line: bytes) -> bool:
    """Whether a chunks.json line has a source URL (decoded only when the key is there at all)."""
    return b'"source_url": ' in line and bool(json.loads(line).get("source_url"))


class SourceUrls:
    """Whether any line that went through `watch` has a source URL (then the table has the column)."""

    def __init__(self) -> None:
        self.found = False

    def watch(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        for line in lines:
            self.found = self.found or has_source_url(line)
            yield line


def framed(lines: Iterable[bytes]) -> Iterator[bytes]:
    """chunks.json piece by piece from its lines: `[`, the lines separated by `,`, `]`."""
    first = True
    for line in lines:
        yield (b"[\n" if first else b",\n") + line
        first = False
    yield b"[]\n" if first else b"\n]\n"


def _unescape(raw: bytes) -> str:
    return json.loads(b'"' + raw + b'"') if b"\\" in raw else raw.decode()


_ID_AT = b'{"chunk_id": "'
_PATH_AT = b'", "filepath": "'
_PATH_END = b'", "heading": '


def head(line: bytes) -> tuple[str, str]:
    """(chunk_id, filepath) of a chunks.json line, without decoding the whole chunk.

    In the layout chunk_line writes, the first `", "filepath": "` ends the ID: inside a JSON
    string every quote is escaped, so that sequence cannot occur there.
    """
    if line.startswith(_ID_AT):
        path_at = line.find(_PATH_AT)
        path_end = line.find(_PATH_END, path_at)
        if path_at > 0 and path_end > 0:
            return _unescape(line[len(_ID_AT) : path_at]), _unescape(line[path_at + len(_PATH_AT) : path_end])
    data = json.loads(line)  # not the layout chunk_line writes: read it the slow way
    return data["chunk_id"], data["filepath"]


def read_lines(raw_lines: Iterable[bytes], offset: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """(offset, size, line) of each chunk in chunks.json's raw lines (from `offset`), without the
    array's brackets and the commas."""
    for raw in raw_lines:
        start = offset
        offset += len(raw)
        line = raw.rstrip(b"\n")
        if line.endswith(b","):
            line = line[:-1]
        if line.startswith(b"{"):
            yield start, len(raw), line


def _split(data: bytes) -> list[bytes]:
    """Lines with their newline, as iterating a binary file gives them."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


class Spill:
    """Parsed files' chunks.json lines, kept in an unnamed temporary file (nothing is left behind)."""

    def __init__(self, folder: Path | None = None) -> None:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        self._fh = tempfile.TemporaryFile(dir=folder)
        self._spans: dict[str, tuple[int, int]] = {}
        self._end = 0

    def add(self, relpath: str, chunks: list[Chunk]) -> None:
        data = b"".join(chunk_line(c) + b"\n" for c in chunks)
        self._fh.seek(self._end)
        self._fh.write(data)
        self._spans[relpath] = (self._end, len(data))
        self._end += len(data)

    def lines(self, relpath: str) -> list[bytes]:
        start, size = self._spans[relpath]
        self._fh.seek(start)
        return self._fh.read(size).split(b"\n")[:-1]

    def close(self) -> None:
        self._fh.close()


@dataclass
class _Run:
    """One file's lines in a chunks.json: where they are, which rows, and the span of their IDs."""

    start: int
    end: int
    first_row: int
    low: str
    high: str


def _runs(fh: IO[bytes]) -> tuple[list[_Run], int, bool]:
    """Each file's run of lines, the number of chunks, and whether any chunk has a source URL."""
    runs: list[_Run] = []
    current = None
    rows = 0
    source_urls = False
    for offset, size, line in read_lines(fh):
        chunk_id, filepath = head(line)
        source_urls = source_urls or has_source_url(line)
        if current is None or filepath != current[0]:
            current = (filepath, _Run(offset, offset, rows, chunk_id, chunk_id))
            runs.append(current[1])
        run = current[1]
        run.end = offset + size
        run.low, run.high = min(run.low, chunk_id), max(run.high, chunk_id)
        rows += 1
    return runs, rows, source_urls


def _groups(runs: list[_Run]) -> Iterator[list[_Run]]:
    """Runs by their lowest ID, those whose ID ranges overlap together: each group's IDs all sort
    after the previous group's."""
    group: list[_Run] = []
    high = ""
    for run in sorted(runs, key=lambda r: r.low):
        if group and run.low > high:
            yield group
            group = []
        high = max(high, run.high) if group else run.high
        group.append(run)
    if group:
        yield group


@dataclass
class ChunkOrder:
    """A written chunks.json, readable in chunk-ID order (the table's row order)."""

    path: Path
    rows: int
    source_urls: bool
    _runs: list[_Run]

    @classmethod
    def scan(cls, path: Path) -> ChunkOrder:
        with open(path, "rb") as fh:
            runs, rows, source_urls = _runs(fh)
        return cls(path, rows, source_urls, runs)

    def by_chunk_id(self) -> Iterator[tuple[int, Chunk]]:
        """(row in chunks.json, chunk) in chunk-ID order, holding one file's chunks at a time."""
        with open(self.path, "rb") as fh:
            for group in _groups(self._runs):
                found: list[tuple[int, Chunk]] = []
                for run in sorted(group, key=lambda r: r.first_row):
                    fh.seek(run.start)
                    lines = read_lines(_split(fh.read(run.end - run.start)))
                    found += [(run.first_row + n, parse_line(line)) for n, (_, _, line) in enumerate(lines)]
                found.sort(key=lambda item: item[1].chunk_id)
                yield from found
