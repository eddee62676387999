"""The table files a signature covers: a signed metadata.json names, in `index.file_digests`, every file
of the table version it pins (its manifest, data, index and deletion files) with its size and SHA-256.

The signature over metadata.json then covers the bytes a server reads, not only the file that points
at them: a verifying reader (`--verify`) checks each file before LanceDB opens the version, on a folder
and on s3://, and refuses the index in one line naming the first file that does not match. The list
is written by the signing build from the files it recorded for the version (table-files.json), read
again with SHA-256: table-files.json's own checksums are not cryptographic and it is never published,
so a verifying reader does not consult it.

A verifying process checks a given list at a given location once: later opens of the same version
(a republished build that kept it) compare the files' stats on a folder, and nothing on s3://.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError
from ..fsutil import file_sha256
from .layout import LANCEDB, METADATA, OutputLayout
from .metadata import TableVersion
from .objectstore import RemoteOutput, is_remote

_VERIFIED: dict[tuple[str, str], tuple[Any, ...]] = {}  # (location, list) -> the stats it was verified with


def digests(out: Path, table: str, version: int) -> dict[str, dict[str, Any]]:
    """For the signing build: each file of `table` at `version`, relative to the table folder, with its
    size and SHA-256. Raises DocsMcpError when the build recorded no files for it."""
    from . import table_checksums

    records = table_checksums.load(OutputLayout(out).table_files)
    files = None if records.problem else records.files(table, version)
    if not files:
        why = records.problem or f"{records.path} has no record of the files of table version {version}"
        raise DocsMcpError(f"cannot sign the index at {out}: {why}; run the build again")
    root = OutputLayout(out).table(table)
    found: dict[str, dict[str, Any]] = {}
    for rel in sorted(files):
        path = root / rel
        try:
            found[rel] = {"size": path.stat().st_size, "sha256": file_sha256(path)}
        except OSError as exc:
            raise DocsMcpError(f"cannot sign the index at {out}: {path}: {exc.strerror or exc}") from None
    return found


def _remote_digest(remote: RemoteOutput, rel: str) -> tuple[int, str] | None:
    """Size and SHA-256 of an object, streamed; None when it does not exist."""
    from .objectstore import _s3_error

    digest, size = hashlib.sha256(), 0
    try:
        with remote.fs.open_input_stream(remote.key(rel)) as stream:
            while block := stream.read(1 << 20):
                digest.update(block)
                size += len(block)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if "NoSuchKey" in str(exc) or "not found" in str(exc).lower():
            return None
        raise _s3_error("read", f"{remote.url}/{rel}", exc) from None
    return size, digest.hexdigest()


def _local_digest(path: Path) -> tuple[int, str] | None:
    try:
        if not path.is_file():
            return None
        return path.stat().st_size, file_sha256(path)
    except OSError:
        return None


def _stats(root: Path, rels: list[str]) -> tuple[Any, ...]:
    found = []
    for rel in rels:
        try:
            st = os.stat(root / rel)
        except OSError:
            return ("gone", rel)
        found.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(found)


def _signed_list(index: TableVersion) -> dict[str, dict[str, Any]] | None:
    if not index.file_digests or any(rel.startswith("/") or ".." in rel.split("/") for rel in index.file_digests):
        return None
    return {rel: entry.to_json() for rel, entry in index.file_digests.items()}


def check(location: Path | str, index: TableVersion | None) -> None:
    """Refuse (DocsMcpError, one line) the index at `location` when a file of the table version its
    signed metadata.json pins is missing or differs from the size and SHA-256 the signature covers."""
    if index is None:
        return
    where = str(location).rstrip("/") if is_remote(location) else os.path.abspath(location)
    listed = _signed_list(index)
    if listed is None:
        raise DocsMcpError(
            f"refusing the index at {location}: its {METADATA} names no table files with their SHA-256 "
            f"(signed by an older docs-mcp, or damaged); rebuild it with `docs-mcp build --sign KEYFILE`"
        )
    rels = sorted(listed)
    key = (where, json.dumps(listed, sort_keys=True))
    remote = RemoteOutput.parse(str(location)) if is_remote(location) else None
    root = OutputLayout(Path(where)).table(index.table) if remote is None else None
    stats: tuple[Any, ...] = () if root is None else _stats(root, rels)
    if _VERIFIED.get(key) == stats:
        return
    for rel in rels:
        signed = listed[rel]
        if remote is not None:
            name = f"{LANCEDB}/{index.table}.lance/{rel}"
            found = _remote_digest(remote, name)
            shown = f"{remote.url}/{name}"
        else:
            assert root is not None
            found = _local_digest(root / rel)
            shown = str(root / rel)
        if found is None:
            why = "it is missing"
        elif found[0] != signed["size"]:
            why = f"it has {found[0]} bytes, not the {signed['size']} signed"
        elif found[1] != signed["sha256"]:
            why = "its SHA-256 is not the one signed (it was changed after signing)"
        else:
            continue
        raise DocsMcpError(f"refusing the index at {location}: its table file {shown} does not verify: {why}")
    _VERIFIED[key] = stats
