"""Per-file chunk reuse: a file whose bytes, governing rules and chunker are unchanged is not re-parsed.

The previous build's chunks come from its chunks.json; `.docs-mcp/files.json` records, per
file, the key that decided reuse plus the metadata and warnings the file produced. Both are
written aside (`.docs-mcp/pending/`) and moved in only after metadata.json is published.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..chunking.chunker import chunker_version
from ..corpus.beneath import read_beneath
from ..corpus.manifest import Resolution, Strategy
from ..diagnostics import Diagnostic
from ..errors import DocsMcpError
from ..fsutil import RACY_NS, file_sha256, write_atomic, write_atomic_pieces
from ..output.build_state import STATE_VERSION, Passages, read_state, state_json
from ..output.chunk import Chunk
from ..output.layout import FILE_STATE, METADATA, OutputLayout
from ..output.metadata import read_metadata
from .chunk_lines import chunk_line, framed, head, read_lines
from .quarantine import Flag


def file_key(relpath: str, sha256: str, rules: Resolution, context: str = "") -> str:
    """Changes when the file, the manifest rules that govern it, the chunker and its parsers, or the
    docs framework's config (`context`: what in it changes parsing) change. Included files are checked
    apart (PreviousChunks.match): they are known only once the file was parsed."""
    parts = [chunker_version(), relpath, sha256, _rules_key(rules.strategy, tuple(rules.metadata.items())), context]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


@functools.lru_cache(maxsize=1024)
def _rules_key(strategy: Strategy, metadata: tuple[tuple[str, str], ...]) -> str:
    # a corpus has a handful of strategies and metadata sets: serializing them per file showed in no-op builds
    return strategy.key() + "\0" + json.dumps(dict(metadata), sort_keys=True)


def chunk_pieces(chunks: Iterable[Chunk]) -> Iterator[bytes]:
    """chunks.json piece by piece: a JSON array with one chunk per line (readable, diffable, streamable)."""
    return framed(chunk_line(chunk) for chunk in chunks)


def pending_paths(out: Path) -> tuple[Path, Path]:
    """(chunks.json, files.json) of a written, not yet published build."""
    layout = OutputLayout(out)
    return layout.pending_chunks, layout.pending_file_state


def _sha256(path: Path) -> str | None:
    try:
        return file_sha256(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _stat(path: Path) -> list[int] | None:
    """(size, mtime_ns) of a file: a chunks.json still as its build wrote it has the ones its state records."""
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return [st.st_size, st.st_mtime_ns]


def chunks_match(path: Path, sha256: str, state: dict[str, Any] | None) -> bool:
    """Whether `path` holds the chunks.json with `sha256`: trusted without reading it when its size and
    mtime are the ones `state` recorded for it (as git trusts its index), hashed otherwise; a file of
    another size than the recorded one cannot hold it, and is not read either."""
    if state is not None and state.get("chunks_sha256") == sha256 and state.get("chunks_stat") is not None:
        found = _stat(path)
        if state.get("chunks_stat") == found:
            return True
        if found is not None and found[0] != state["chunks_stat"][0]:
            return False
    return _sha256(path) == sha256


def published_files(out: Path, chunks_sha256: str) -> tuple[Path | None, Path | None]:
    """The chunks.json and files.json of the published build (its metadata names `chunks_sha256`).

    They are the files in place, or, if a build was stopped between publishing metadata.json
    and moving them in, the pending ones; None where neither is.
    """
    out = Path(out)
    pending_chunks, pending_state = pending_paths(out)
    # the pending state first: with the same chunks.json it is the newer record of the files' stats
    states = [(p, read_state(p)) for p in (pending_state, OutputLayout(out).file_state)]
    state = next((p for p, s in states if s is not None and s.get("chunks_sha256") == chunks_sha256), None)
    recorded = next((s for p, s in states if p == state), None)
    chunks = next(
        (p for p in (OutputLayout(out).chunks, pending_chunks) if chunks_match(p, chunks_sha256, recorded)), None
    )
    return chunks, state


@dataclass
class PreviousChunks:
    """The last published build: its build state now, its chunks only when a reused file needs them."""

    files: dict[str, dict[str, Any]]
    chunks_path: Path
    chunks_sha256: str
    moved_to: Path | None = None  # where a pending chunks.json goes when its publish is finished
    scanned_ns: int = 0  # when that build began scanning the files (0: unknown, trust no stat)
    passages_key: str | None = None  # what its per-file passage fingerprints were made under (fingerprint.passages_key)

    def passages(self, relpath: str, key: str, chunks: int) -> list[list[str]] | None:
        """[chunk_id, fingerprint, …] per chunk of a reused file, as that build recorded them under `key`;
        None when it recorded none under this key (another model, or a text-only build)."""
        if key != self.passages_key:
            return None
        found = self.files.get(relpath, {}).get("passages")
        if (
            not isinstance(found, list)
            or len(found) != chunks
            or not all(isinstance(row, list) and len(row) > 1 and all(isinstance(v, str) for v in row) for row in found)
        ):
            return None  # not as a build writes it: the file's passages are split again
        return found

    def match(
        self, relpath: str, key: str, project_root: str | None = None
    ) -> tuple[int, list[Diagnostic], dict[str, str], list[str], dict[str, str], list[Flag]] | None:
        """(chunk count, diagnostics, metadata, titles, included files, trust findings) of an unchanged file
        whose included files (under `project_root`) are unchanged too, or None if it must be parsed."""
        entry = self.files.get(relpath)
        if entry is None or entry.get("key") != key:
            return None
        included = entry.get("included", {})
        if not isinstance(included, dict) or (included and not _unchanged(included, project_root)):
            return None
        diags = [
            Diagnostic(relpath, *fields) for fields in entry.get("diagnostics", [])
        ]  # line, severity, message, code
        rows = entry.get("trust", [])
        flags = [Flag.from_row(row) for row in rows] if isinstance(rows, list) else [None]
        if None in flags:
            return None  # not as a build writes them: parsed again
        return (
            int(entry.get("chunks", 0)),
            diags,
            dict(entry.get("metadata", {})),
            list(entry.get("titles", [])),
            dict(included),
            [f for f in flags if f is not None],
        )

    def trusted_sha256(self, relpath: str, stat: list[int] | None) -> str | None:
        """The sha256 recorded for a file whose stat is the recorded one and was settled (not racy)
        when recorded: its bytes need not be read. None: read and hash it."""
        entry = self.files.get(relpath)
        if entry is None or stat is None or entry.get("stat") != stat:
            return None
        sha = entry.get("sha256")
        if not isinstance(sha, str) or stat[1] >= self.scanned_ns - RACY_NS:
            return None
        return sha

    def file_lines(self, wanted: set[str]) -> Iterator[tuple[str, list[bytes]]]:
        """(path, chunks.json lines) of each file in `wanted`, in chunks.json's order, in one pass that
        holds one file's lines at a time; the whole file is checked against its sha256 as it is read."""
        path = self.chunks_path
        if not path.exists() and self.moved_to is not None:
            path = self.moved_to
        digest = hashlib.sha256()

        def hashed(fh: IO[bytes]) -> Iterator[bytes]:
            for raw in fh:
                digest.update(raw)
                yield raw

        current: str | None = None
        lines: list[bytes] = []
        with open(path, "rb") as fh:
            for _, _, line in read_lines(hashed(fh)):
                filepath = head(line)[1]
                if filepath != current:
                    if current in wanted:
                        yield current, lines
                    current, lines = filepath, []
                if filepath in wanted:
                    lines.append(line)
            if current is not None and current in wanted:
                yield current, lines
        if digest.hexdigest() != self.chunks_sha256:
            raise DocsMcpError(f"{path} changed during the build; build again")


def _unchanged(included: dict[str, str], project_root: str | None) -> bool:
    """Whether every file a page included still has the recorded sha256 (a gone file does not)."""
    if project_root is None:
        return False
    root = os.path.realpath(project_root)
    for rel, sha in included.items():
        try:  # beneath the project root only, as includes read them (a link leading out: not unchanged)
            if hashlib.sha256(read_beneath(root, str(rel))).hexdigest() != sha:
                return False
        except OSError:
            return False
    return True


def load_previous(out: Path | None) -> tuple[PreviousChunks | None, str | None]:
    """The last published build's build state, or None and the reason it cannot be reused.

    chunks.json is not read here: when its size and mtime are the recorded ones it is trusted
    until a reused file's chunks are needed (a no-op build never reads it).
    """
    if out is None:
        return None, None
    out = Path(out)
    try:
        meta = read_metadata(out)
        published = meta.index.chunks_sha256 if meta and meta.index else None
    except DocsMcpError:
        return None, f"{METADATA} is damaged"
    chunks_file, state_file = OutputLayout(out).chunks, OutputLayout(out).file_state
    if published:  # the published chunks.json and state: in place, or aside if a publish was stopped
        found_chunks, found_state = published_files(out, published)
        chunks_file, state_file = found_chunks or chunks_file, found_state or state_file
    if not state_file.exists():
        return None, None
    state = read_state(state_file)
    if state is None or not isinstance(state.get("files", {}), dict):
        return None, f"{FILE_STATE} is corrupt"
    if state.get("state_version") != STATE_VERSION or state.get("chunker_version") != chunker_version():
        return None, "the chunker changed since the last build"
    sha = state.get("chunks_sha256")
    if not chunks_file.exists():
        return None, "chunks.json is missing"
    if not isinstance(sha, str) or not chunks_match(chunks_file, sha, state):
        return None, "chunks.json does not match the recorded build state"
    if published and sha != published:
        return None, "chunks.json does not match the published index"
    scanned = state.get("scanned_ns")
    key = state.get("passages_key")
    return PreviousChunks(
        state.get("files", {}),
        chunks_file,
        sha,
        moved_to=OutputLayout(out).chunks,
        scanned_ns=scanned if isinstance(scanned, int) else 0,
        passages_key=key if isinstance(key, str) else None,
    ), None


def recorded_passages_key(out: Path, chunks_sha256: str) -> str | None:
    """The passages key of the state in place for this chunks.json (None: none recorded, or no state)."""
    state_file = published_files(out, chunks_sha256)[1]
    state = read_state(state_file) if state_file is not None else None
    key = state.get("passages_key") if state else None
    return key if isinstance(key, str) else None


def write_pending_chunks(out: Path, lines: Iterable[bytes]) -> str:
    """Write chunks.json aside from its lines (chunk_lines.chunk_line), streamed; returns its sha256."""
    return write_atomic_pieces(pending_paths(out)[0], framed(lines))


def write_pending(
    out: Path, chunks_sha256: str, files: list[Any], scanned_ns: int = 0, passages: Passages | None = None
) -> None:
    """Put the build state aside next to the chunks.json it describes (the pending one, or the one in
    place when this build's chunks are the published ones); publish_pending moves them in after metadata.json."""
    chunks, state = pending_paths(out)
    if not chunks.exists():
        chunks = OutputLayout(out).chunks
    record = state_json(chunker_version(), chunks_sha256, _stat(chunks), files, scanned_ns, passages)
    compact = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    write_atomic(state, compact.encode())  # one line: it grows with the corpus and only builds read it


def publish_pending(out: Path, chunks_sha256: str) -> None:
    """Move the published build's chunks.json and state into place (also finishes a stopped publish).

    metadata.json, written first, names the chunks.json it goes with, and load_previous
    reads the pending copy until this ran, so neither ever describes an unpublished build.
    """
    out = Path(out)
    chunks, state = published_files(out, chunks_sha256)
    published = OutputLayout(out).chunks
    if chunks is not None and chunks != published:
        os.replace(chunks, published)
    if state is not None and state != OutputLayout(out).file_state:
        os.replace(state, OutputLayout(out).file_state)
    discard_pending(out)


def discard_pending(out: Path) -> None:
    """Remove what a build wrote aside but never published."""
    for path in pending_paths(out):
        path.unlink(missing_ok=True)
    try:
        OutputLayout(out).pending.rmdir()
    except OSError:
        pass
