"""Per-file chunk reuse: a file whose bytes, governing rules and chunker are unchanged is not re-parsed.

The previous build's chunks come from its chunks.json; `.docs-mcp/files.json` records, per
file, the key that decided reuse plus the metadata and warnings the file produced. Both are
written aside (`.docs-mcp/pending/`) and moved in only after metadata.json is published.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..chunking.chunker import CHUNKER_VERSION
from ..corpus.manifest import Resolution
from ..diagnostics import Diagnostic
from ..errors import DocsMcpError
from ..fsutil import read_json, write_atomic, write_json_atomic
from ..layout import FILE_STATE, METADATA, OutputLayout
from ..metadata import read_metadata
from ..models import Chunk

STATE_VERSION = "1"


def file_key(relpath: str, sha256: str, rules: Resolution) -> str:
    """Changes when the file, the manifest rules that govern it, or the chunker change."""
    parts = [CHUNKER_VERSION, relpath, sha256, rules.strategy.key(), json.dumps(rules.metadata, sort_keys=True)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def state_path(out: Path) -> Path:
    return OutputLayout(out).file_state


def pending_dir(out: Path) -> Path:
    """Where write_index puts chunks.json and the reuse state until publish_metadata moves them in."""
    return OutputLayout(out).pending


def pending_paths(out: Path) -> tuple[Path, Path]:
    """(chunks.json, files.json) of a written, not yet published build."""
    layout = OutputLayout(out)
    return layout.pending_chunks, layout.pending_file_state


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _state_sha(path: Path) -> str | None:
    try:
        state = read_json(path)
    except (ValueError, OSError):
        return None
    return state.get("chunks_sha256") if isinstance(state, dict) else None


def published_files(out: Path, chunks_sha256: str) -> tuple[Path | None, Path | None]:
    """The chunks.json and files.json of the published build (its metadata names `chunks_sha256`).

    They are the files in place, or, if a build was stopped between publishing metadata.json
    and moving them in, the pending ones; None where neither is.
    """
    out = Path(out)
    pending_chunks, pending_state = pending_paths(out)
    chunks = next((p for p in (OutputLayout(out).chunks, pending_chunks) if _sha256(p) == chunks_sha256), None)
    state = next((p for p in (state_path(out), pending_state) if _state_sha(p) == chunks_sha256), None)
    return chunks, state


@dataclass
class PreviousChunks:
    files: dict[str, dict[str, Any]]
    chunks: dict[str, list[Chunk]]

    def match(self, relpath: str, key: str) -> tuple[list[Chunk], list[Diagnostic], dict[str, str]] | None:
        entry = self.files.get(relpath)
        if entry is None or entry.get("key") != key:
            return None
        stored = entry.get("diagnostics", [])
        if any(len(fields) != 4 for fields in stored):
            return None  # saved before diagnostics had codes: re-parse so every finding has one
        diags = [Diagnostic(relpath, *fields) for fields in stored]  # line, severity, message, code
        return self.chunks.get(relpath, []), diags, dict(entry.get("metadata", {}))


def load_previous(out: Path | None) -> tuple[PreviousChunks | None, str | None]:
    """The last published build's chunks, or None and the reason they cannot be reused."""
    if out is None:
        return None, None
    out = Path(out)
    try:
        meta = read_metadata(out)
        published = meta.index.chunks_sha256 if meta and meta.index else None
    except DocsMcpError:
        return None, f"{METADATA} is damaged"
    chunks_file, state_file = OutputLayout(out).chunks, state_path(out)
    if published:  # the published chunks.json and state: in place, or aside if a publish was stopped
        found_chunks, found_state = published_files(out, published)
        chunks_file, state_file = found_chunks or chunks_file, found_state or state_file
    try:
        state = read_json(state_file)
    except (ValueError, OSError):
        return None, f"{FILE_STATE} is corrupt"
    if state is None:
        return None, None
    if not isinstance(state, dict):
        return None, f"{FILE_STATE} is corrupt"
    if state.get("state_version") != STATE_VERSION or state.get("chunker_version") != CHUNKER_VERSION:
        return None, "the chunker changed since the last build"
    try:
        raw = chunks_file.read_bytes()
    except FileNotFoundError:
        return None, "chunks.json is missing"
    if hashlib.sha256(raw).hexdigest() != state.get("chunks_sha256"):
        return None, "chunks.json does not match the recorded build state"
    if published and state.get("chunks_sha256") != published:
        return None, "chunks.json does not match the published index"
    by_file: dict[str, list[Chunk]] = {}
    for item in json.loads(raw):
        by_file.setdefault(item["filepath"], []).append(Chunk.from_dict(item))
    return PreviousChunks(state.get("files", {}), by_file), None


def state_json(chunks_json: bytes, files: list[Any]) -> dict[str, Any]:
    """What a chunks.json was built from (FileRecord list): the reuse state saved with it."""
    return {
        "state_version": STATE_VERSION,
        "chunker_version": CHUNKER_VERSION,
        "chunks_sha256": hashlib.sha256(chunks_json).hexdigest(),
        "files": {
            f.relpath: {
                "key": f.key,
                "metadata": f.metadata,
                "diagnostics": [[d.line, d.severity, d.message, d.code] for d in f.diagnostics],
            }
            for f in files
        },
    }


def write_pending(out: Path, chunks_json: bytes, files: list[Any]) -> None:
    """Put chunks.json and its reuse state aside; publish_pending moves them in after metadata.json."""
    chunks, state = pending_paths(out)
    write_atomic(chunks, chunks_json)
    write_json_atomic(state, state_json(chunks_json, files))


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
    if state is not None and state != state_path(out):
        os.replace(state, state_path(out))
    discard_pending(out)


def discard_pending(out: Path) -> None:
    """Remove what a build wrote aside but never published."""
    for path in pending_paths(out):
        path.unlink(missing_ok=True)
    try:
        pending_dir(out).rmdir()
    except OSError:
        pass
