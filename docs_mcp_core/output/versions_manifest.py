"""`versions.json`: the published versions of a versioned corpus, newest first, and the default one.

A versioned corpus's output holds one complete output per version (`versions/<label>/`, each laid out
as an unversioned output) and one embedding cache. This file is written last, atomically, after a
version publishes, and before a removed version's folder is deleted: a server reads only the versions
it lists, so it never opens a half-built or half-deleted one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DocsMcpError
from ..fsutil import read_json, write_json_atomic
from .layout import OutputLayout

SCHEMA = 1
# What each entry records: where the version came from, and when it was indexed.
ENTRY_FIELDS = (
    "label",
    "version",
    "path",
    "ref",
    "source_commit",
    "source_url",
    "source_date",  # when the version's docs last changed: commit date, newest Last-Modified, newest file
    "indexed_at",
    "chunks",
)


def read_manifest(out: Path) -> dict[str, Any] | None:
    """versions.json of a corpus output, or None when the output is not versioned (no such file)."""
    path = OutputLayout(out).versions_manifest
    try:
        data = read_json(path)
    except (ValueError, OSError) as exc:
        raise DocsMcpError(f"{path} cannot be read ({exc}); build the corpus again") from None
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("versions"), list):
        raise DocsMcpError(f"{path} is not a versions manifest of schema {SCHEMA}; build the corpus again")
    return data


def version_label(index: Path | str) -> str | None:
    """The label of the version an index folder holds, when it is one version of a versioned corpus
    output (OUT/versions/LABEL, with OUT/versions.json); else None."""
    if isinstance(index, str) and "://" in index:
        return None
    index = Path(index)
    root = index.parent.parent
    if index.parent.name == "versions" and OutputLayout(root).versions_manifest.is_file():
        return index.name
    return None


def manifest_entries(out: Path) -> list[dict[str, Any]]:
    """The published versions (newest first); none for an output that is not versioned yet."""
    manifest = read_manifest(out)
    return list(manifest["versions"]) if manifest else []


def write_manifest(
    out: Path,
    corpus: str,
    entries: list[dict[str, Any]],
    default: str | None,
    package: dict[str, str] | None = None,
    configured_default: str | None = None,
) -> dict[str, Any]:
    """Write versions.json with `entries` in the order given (the caller orders them newest first).
    `default` is the version served when nothing pins one; `configured_default` the one docs-mcp.yaml
    names (kept for later builds of a single version, which do not read the config)."""
    manifest: dict[str, Any] = {
        "schema": SCHEMA,
        "corpus": corpus,
        "default": default,
        "configured_default": configured_default,
        "versions": [{k: e.get(k) for k in ENTRY_FIELDS} for e in entries],
    }
    if package:
        manifest["package"] = package
    write_json_atomic(OutputLayout(out).versions_manifest, manifest)
    return manifest
