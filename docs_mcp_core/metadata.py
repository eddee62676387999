"""metadata.json: what the server needs to build its tools, and the publish marker it watches."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from . import __version__
from .errors import DocsMcpError
from .fsutil import read_json, write_json_atomic

METADATA_FILE = "metadata.json"
METADATA_VERSION = "1.0.0"
SUPPORTED_MAJOR = 1
DEFAULT_DESCRIPTION = "Documentation corpus"


def build_metadata(
    *,
    description: str,
    taxonomy: dict[str, Any],
    total_chunks: int,
    total_files: int,
    source_commit: str | None,
    embedding: dict[str, Any] | None,
    prompts: list[dict[str, Any]],
    instructions: str | None,
    index: dict[str, Any],
    chunker_version: str,
) -> dict[str, Any]:
    return {
        "metadata_version": METADATA_VERSION,
        "corpus_description": description,
        "taxonomy": taxonomy,
        "stats": {
            "total_chunks": total_chunks,
            "total_files": total_files,
            "indexed_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "source_commit": source_commit,
        },
        "embedding": embedding,
        "prompts": prompts,
        "mcpServerInstructions": instructions,
        "index": index,
        "build": {"docs_mcp_version": __version__, "chunker_version": chunker_version},
    }


def write_metadata(out: Path, metadata: dict[str, Any]) -> Path:
    path = Path(out) / METADATA_FILE
    write_json_atomic(path, metadata)
    return path


def read_metadata(out: Path) -> dict[str, Any] | None:
    """The published metadata, or None if nothing was published; a broken file is an error."""
    path = Path(out) / METADATA_FILE
    try:
        data = read_json(path)
    except ValueError as exc:
        raise DocsMcpError(f"{path} is not valid JSON ({exc}); rebuild the index") from None
    if data is None:
        return None
    version = str(data.get("metadata_version", ""))
    if not version.split(".")[0].isdigit() or int(version.split(".")[0]) != SUPPORTED_MAJOR:
        raise DocsMcpError(
            f"{path} has metadata_version {version!r}; this docs-mcp reads {SUPPORTED_MAJOR}.x.x — rebuild the index"
        )
    return data


def require_metadata(out: Path) -> dict[str, Any]:
    data = read_metadata(out)
    if data is None:
        raise DocsMcpError(f"no index at {out} ({METADATA_FILE} is missing); build one with `docs-mcp build --out {out}`")
    return data
