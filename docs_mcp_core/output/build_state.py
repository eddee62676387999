"""The build state a build keeps for the next one (`.docs-mcp/files.json`): per file, what decided its
reuse, what it produced, and its passages' fingerprints; and which chunks.json it describes.

Written beside the chunks.json it describes (aside in `.docs-mcp/pending/` until metadata.json is
published); read by indexing/file_reuse.py. A state of another STATE_VERSION or chunker is not reused.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ..fsutil import read_json

# (passages key, {file: [[chunk_id, fingerprint, …] per chunk]}): what a build's passages were
Passages = tuple[str, dict[str, list[list[str]]]]

STATE_VERSION = "2"  # 2: per-file chunk counts and titles, and chunks.json's size and mtime


def read_state(path: Path) -> dict[str, Any] | None:
    """A build state file, parsed once per version of it: a build looks at it several times."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _parsed_state(str(path), st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _parsed_state(path: str, inode: int, size: int, mtime_ns: int) -> dict[str, Any] | None:
    try:
        state = read_json(Path(path))
    except (ValueError, OSError):
        return None
    return state if isinstance(state, dict) else None


def state_json(
    chunker_version: str,
    chunks_sha256: str,
    chunks_stat: list[int] | None,
    files: list[Any],
    scanned_ns: int = 0,
    passages: Passages | None = None,
) -> dict[str, Any]:
    """What a chunks.json was built from (`files`: indexing's FileRecords) by the chunker of
    `chunker_version`: the build state saved with it, with each file's sha256 and stat (file_stat)
    as that build found them when it began at `scanned_ns`, and the fingerprints its chunks'
    passages had (a later build that reuses the file reuses them too)."""
    key, by_file = passages if passages is not None else (None, {})
    state = {
        "state_version": STATE_VERSION,
        "chunker_version": chunker_version,
        "chunks_sha256": chunks_sha256,
        "chunks_stat": chunks_stat,
        "scanned_ns": scanned_ns,
        "files": {
            f.relpath: {
                "key": f.key,
                "sha256": f.sha256,
                "stat": f.stat,
                "chunks": f.chunks,
                "titles": f.titles,
                "metadata": f.metadata,
                "diagnostics": [[d.line, d.severity, d.message, d.code] for d in f.diagnostics],
                **({"included": f.included} if getattr(f, "included", None) else {}),
                **({"trust": [flag.row() for flag in f.flags]} if getattr(f, "flags", None) else {}),
                **({"passages": by_file[f.relpath]} if f.relpath in by_file else {}),
            }
            for f in files
        },
    }
    if key is not None:
        state["passages_key"] = key
    return state
