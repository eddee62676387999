"""Per-file chunk reuse: a file whose bytes, governing rules and chunker are unchanged is not re-parsed.

The previous build's chunks come from its chunks.json; `.docs-mcp/files.json` records, per
file, the key that decided reuse plus the metadata and warnings the file produced.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..chunking.chunker import CHUNKER_VERSION
from ..corpus.manifest import Resolution
from ..diagnostics import Diagnostic
from ..fsutil import read_json, write_json_atomic
from ..models import Chunk

STATE_FILE = "files.json"
STATE_VERSION = "1"


def file_key(relpath: str, sha256: str, rules: Resolution) -> str:
    """Changes when the file, the manifest rules that govern it, or the chunker change."""
    parts = [CHUNKER_VERSION, relpath, sha256, rules.strategy.key(), json.dumps(rules.metadata, sort_keys=True)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def state_path(out: Path) -> Path:
    return Path(out) / ".docs-mcp" / STATE_FILE


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
        state = read_json(state_path(out))
    except ValueError:
        return None, f"{STATE_FILE} is corrupt"
    if state is None:
        return None, None
    if state.get("state_version") != STATE_VERSION or state.get("chunker_version") != CHUNKER_VERSION:
        return None, "the chunker changed since the last build"
    try:
        raw = (out / "chunks.json").read_bytes()
    except FileNotFoundError:
        return None, "chunks.json is missing"
    if hashlib.sha256(raw).hexdigest() != state.get("chunks_sha256"):
        return None, "chunks.json does not match the recorded build state"
    by_file: dict[str, list[Chunk]] = {}
    for item in json.loads(raw):
        by_file.setdefault(item["filepath"], []).append(Chunk.from_dict(item))
    return PreviousChunks(state.get("files", {}), by_file), None


def write_state(out: Path, chunks_json: bytes, files: list[Any]) -> None:
    """Record what the chunks.json just written was built from (FileRecord list)."""
    write_json_atomic(state_path(out), {
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
    })
