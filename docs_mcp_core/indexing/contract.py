"""The build's data contract: what the chunks step hands to the steps after it (and Dagster pickles
between assets), file by file."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic
from ..errors import DocsMcpError
from ..output.chunk import Chunk
from .chunk_lines import Spill, chunk_line, parse_line
from .file_reuse import PreviousChunks
from .quarantine import QUARANTINED, Flag


@dataclass
class FileRecord:
    relpath: str
    sha256: str
    chunks: int
    key: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)  # headings of its level-1 chunks, for the default description
    reused: bool = False
    stat: list[int] | None = None  # fsutil.file_stat when it was scanned
    included: dict[str, str] = field(default_factory=dict)  # files its includes read (project-relative) -> sha256
    constructs: list[tuple[str, int]] = field(default_factory=list)  # dialect constructs (parsed files only)
    flags: list[Flag] = field(default_factory=list)  # trust findings (indexing/quarantine.py)


@dataclass
class ChunkSet:
    """Output of the chunk step: everything later steps and metadata.json need.

    The chunks themselves are not held: parsed files' chunks wait in a spill file, unchanged
    files' chunks in the previous build's chunks.json, and `lines()` reads them back in order,
    a file at a time. `unchanged_sha256` names that chunks.json when this build's chunks are
    exactly its chunks, which lets a no-op build skip re-serializing them.
    """

    root: str
    files: list[FileRecord]
    taxonomy: dict[str, Any]
    instructions: str | None
    prompts: list[dict[str, Any]]
    diagnostics: list[Diagnostic]
    reparsed: int = 0
    reused: int = 0
    seconds: float = 0.0
    workers: int = 1  # processes that parsed files (1: this one)
    hashed: int = 0  # files read and hashed; the others were trusted by their recorded stat
    scanned_ns: int = 0  # when the scan began: the racy limit of the stats recorded for the next build
    base_sha256: str = ""  # the previous build's chunks.json, which `changed_files` are relative to
    changed_files: list[str] = field(default_factory=list)  # files whose chunks differ from it (edited or gone)
    replaced_rows: int = 0  # chunks the previous build had for those files
    unchanged_sha256: str = ""
    framework: str | None = None  # the docs framework detected (corpus/framework.py), e.g. "MkDocs (../mkdocs.yml)"
    site_name: str | None = None  # what the corpus calls itself: its framework's site name, else its README's title
    site_description: str | None = None  # the framework's site description, else the README's first paragraph
    notes: list[str] = field(
        default_factory=list
    )  # what validate and build say besides findings (config keys not read)
    _chunks: list[Chunk] | None = field(default=None, repr=False)
    _previous: PreviousChunks | None = field(default=None, repr=False)
    _spill: Spill | None = field(default=None, repr=False)

    def lines(self, only: set[str] | None = None) -> Iterator[bytes]:
        """This build's chunks.json lines, in order (chunk_lines.chunk_line), holding one file's at a time;
        with `only`, those of these files (the previous chunks.json is read only if one of them is reused)."""
        if self._chunks is not None:
            yield from (chunk_line(c) for c in self._chunks if only is None or c.filepath in only)
            return
        wanted = [f for f in self.files if f.chunks and (only is None or f.relpath in only)]
        reused = {f.relpath for f in wanted if f.reused}
        previous = self._previous.file_lines(reused) if self._previous is not None and reused else iter(())
        ahead: dict[str, list[bytes]] = {}  # files the previous chunks.json had before the one wanted
        for record in wanted:
            if not record.reused:
                assert self._spill is not None
                yield from self._spill.lines(record.relpath)
                continue
            while record.relpath not in ahead:
                path, lines = next(previous, (None, []))
                if path is None:
                    break
                ahead[path] = lines
            found = ahead.pop(record.relpath, [])
            if len(found) != record.chunks:
                raise DocsMcpError(
                    f"the previous chunks.json does not have the {record.chunks} chunks its build state "
                    f"records for {record.relpath}; rebuild with --force"
                )
            yield from found  # as this chunker wrote them (the reuse key changes with CHUNKER_VERSION)
        for _ in previous:  # read to the end: that checks its sha256
            pass

    @property
    def previous(self) -> PreviousChunks | None:
        """The last published build this one reuses files from (None: none, or the chunks are held)."""
        return self._previous

    def iter_chunks(self) -> Iterator[Chunk]:
        return (parse_line(line) for line in self.lines())

    def parsed_chunks(self) -> list[Chunk]:
        """The chunks of the files this build parsed (not reused): what a table update adds."""
        parsed = {f.relpath for f in self.files if not f.reused and f.chunks}
        if self._chunks is not None:
            return [c for c in self._chunks if c.filepath in parsed]
        if not parsed:
            return []
        assert self._spill is not None
        return [parse_line(line) for f in self.files if f.relpath in parsed for line in self._spill.lines(f.relpath)]

    @property
    def chunks(self) -> list[Chunk]:
        """Every chunk, in memory: for callers that want a list (the build itself streams `lines()`)."""
        if self._chunks is None:
            self._chunks = list(self.iter_chunks())
            self._previous, self._spill = None, None
        return self._chunks

    @property
    def chunk_count(self) -> int:
        return sum(f.chunks for f in self.files)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (between Dagster assets) with its chunks: the previous chunks.json may be gone by then."""
        _ = self.chunks  # loads them: the property reads the previous chunks.json on first use
        return {**self.__dict__, "_previous": None, "_spill": None}

    @property
    def taxonomy_keys(self) -> list[str]:
        return sorted(self.taxonomy)

    @property
    def quarantined(self) -> dict[str, int]:
        """Files with quarantined chunks -> how many (not served: not in chunks.json or the table)."""
        found = {f.relpath: len({x.chunk_id for x in f.flags if x.status == QUARANTINED}) for f in self.files}
        return {path: n for path, n in found.items() if n}

    def flags(self) -> list[tuple[str, Flag]]:
        """Every trust finding with its file, in path order."""
        return [(f.relpath, flag) for f in self.files for flag in f.flags]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]
