"""metadata.json: what the server needs to build its tools, and the publish marker it watches."""

from __future__ import annotations

import datetime as dt
import shlex
from pathlib import Path
from typing import Any

from . import __version__
from .errors import DocsMcpError
from .fsutil import read_json, write_json_atomic
from .layout import METADATA, OutputLayout

METADATA_VERSION = "1.0.0"
SUPPORTED_MAJOR = 1


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
    path = OutputLayout(out).metadata
    write_json_atomic(path, metadata)
    return path


# Fields readers rely on, and the JSON type each must have when present.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "taxonomy": (dict,), "stats": (dict,), "embedding": (dict, type(None)), "prompts": (list,),
    "index": (dict,), "corpus_description": (str,), "mcpServerInstructions": (str, type(None)),
}
_INDEX_TYPES: dict[str, tuple[type, ...]] = {"table": (str,), "version": (int,), "rows": (int,), "content_hash": (str,)}
_INDEX_OPTIONAL: dict[str, tuple[type, ...]] = {"chunks_sha256": (str,), "previous_version": (int,)}
_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer", type(None): "null"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return next((name for kind, name in _JSON_NAMES.items() if isinstance(value, kind)), type(value).__name__)


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    return isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)


def _type_problem(name: str, value: Any, kinds: tuple[type, ...]) -> str:
    want = " or ".join(_JSON_NAMES.get(k, k.__name__) for k in kinds)
    got = "missing" if value is None and type(None) not in kinds else _json_type(value)
    return f"field '{name}' must be {want} (got {got})"


def read_metadata(out: Path) -> dict[str, Any] | None:
    """The published metadata, or None if nothing was published; a broken file is a one-line error."""
    path = OutputLayout(out).metadata
    try:
        data = read_json(path)
    except ValueError as exc:
        raise DocsMcpError(f"{path} is not valid JSON ({exc}); rebuild the index") from None
    except OSError as exc:
        raise DocsMcpError(f"cannot read {path} ({exc.strerror or exc}); rebuild the index") from None
    if data is None:
        return None
    return check_metadata(data, path)


def check_metadata(data: Any, path: Any) -> dict[str, Any]:
    """Parsed metadata.json (from `path`, a file or an s3:// URL) as readers need it; a one-line error otherwise."""
    if not isinstance(data, dict):
        raise DocsMcpError(f"{path} holds {_json_type(data)}, not a JSON object; rebuild the index")
    version = str(data.get("metadata_version", ""))
    if not version.split(".")[0].isdigit() or int(version.split(".")[0]) != SUPPORTED_MAJOR:
        raise DocsMcpError(
            f"{path} has metadata_version {version!r}; this docs-mcp reads {SUPPORTED_MAJOR}.x.x — rebuild the index"
        )
    problems = [_type_problem(name, data[name], kinds) for name, kinds in _FIELD_TYPES.items()
                if name in data and not _is(data[name], kinds)]
    index = data.get("index")
    if isinstance(index, dict):
        problems += [_type_problem(f"index.{name}", index.get(name), kinds) for name, kinds in _INDEX_TYPES.items()
                     if not _is(index.get(name), kinds)]
        problems += [_type_problem(f"index.{name}", index[name], kinds) for name, kinds in _INDEX_OPTIONAL.items()
                     if name in index and not _is(index[name], kinds)]
    if problems:
        raise DocsMcpError(f"{path}: {problems[0]}; rebuild the index")
    return data


def no_index_message(out: Path) -> str:
    """Why `out` is not an index, and the complete command that makes one (for every reading command)."""
    out = Path(out)
    where = shlex.quote(str(out))
    if not out.exists():
        return f"no index at {out} (the folder does not exist); build one with `docs-mcp build --docs-dir DOCS --out {where}`"
    if not out.is_dir():
        return f"{out} is a file, not an index folder; build an index with `docs-mcp build --docs-dir DOCS --out INDEX`"
    if any(out.glob("*.md")) or (out / ".docs-mcp.json").is_file():
        return (f"{out} looks like a docs folder, not an index ({METADATA} is missing); build one with "
                f"`docs-mcp build --docs-dir {where} --out INDEX` and pass INDEX instead")
    return f"no index at {out} ({METADATA} is missing); build one with `docs-mcp build --docs-dir DOCS --out {where}`"


def require_metadata(out: Path) -> dict[str, Any]:
    """The published metadata of a valid index; a DocsMcpError with a complete build command otherwise."""
    path = OutputLayout(out).metadata
    if not path.is_file():
        raise DocsMcpError(no_index_message(out))
    try:
        data = read_metadata(out)
    except OSError as exc:
        raise DocsMcpError(f"cannot read {path} ({exc.strerror or exc}); check its permissions, or rebuild the index") from None
    if data is None:
        raise DocsMcpError(no_index_message(out))
    return data
