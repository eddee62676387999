"""Invariants of a written index, checked from what is on disk (the Dagster asset checks).

Each check returns a CheckOutcome; none raises for a broken index, only for one that
cannot be read at all.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.manifest import MAX_TAXONOMY_KEYS, MAX_TAXONOMY_VALUES, MAX_VALUE_CHARS
from ..output.layout import OutputLayout
from ..output.metadata import read_metadata
from ..output.table_schema import vector_column


@dataclass
class CheckOutcome:
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


def _chunks(out: Path) -> list[dict[str, Any]]:
    """The written build's chunks.json: the pending one until it is published, then the one in place."""
    from .file_reuse import pending_paths

    pending = pending_paths(Path(out))[0]
    path = pending if pending.exists() else OutputLayout(out).chunks
    chunks: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return chunks


def _table(out: Path, version: int | None) -> Any:  # a lancedb table (open_table's)
    from .table import open_table

    return open_table(out, version)


def _column(out: Path, version: int, name: str) -> list[Any]:
    table = _table(out, version)
    values: list[Any] = (
        table.search().select([name]).limit(max(1, table.count_rows())).to_arrow().column(name).to_pylist()
    )
    return values


def chunk_ids_unique(out: Path, version: int) -> CheckOutcome:
    """No two chunks share an ID, in chunks.json or in the table version."""
    file_ids = Counter(c["chunk_id"] for c in _chunks(out))
    table_ids = Counter(_column(out, version, "chunk_id"))
    dupes = sorted({k for counts in (file_ids, table_ids) for k, n in counts.items() if n > 1})
    if dupes:
        return CheckOutcome(False, f"{len(dupes)} duplicated chunk ID(s), e.g. {dupes[0]}", {"duplicates": dupes[:20]})
    return CheckOutcome(True, f"{len(file_ids)} chunk IDs, all unique", {"chunks": len(file_ids)})


def index_rows_match_chunks(out: Path, version: int) -> CheckOutcome:
    rows = _table(out, version).count_rows()
    chunks = len(_chunks(out))
    if rows != chunks:
        return CheckOutcome(
            False,
            f"table version {version} has {rows} rows but chunks.json has {chunks} chunks",
            {"rows": rows, "chunks": chunks},
        )
    return CheckOutcome(True, f"{rows} rows = {chunks} chunks", {"rows": rows, "chunks": chunks})


def no_chunks_from_removed_files(out: Path, version: int, staged_files: set[str]) -> CheckOutcome:
    """Every chunk (in chunks.json and in the table) comes from a file in the staged corpus."""
    paths = {c["filepath"] for c in _chunks(out)}
    paths |= set(_column(out, version, "filepath"))
    stale = sorted(paths - staged_files)
    if stale:
        return CheckOutcome(
            False,
            f"{len(stale)} file(s) in the index are not in the staged corpus, e.g. {stale[0]}",
            {"stale_files": stale[:20]},
        )
    return CheckOutcome(True, f"all {len(paths)} indexed files are in the staged corpus", {"files": len(paths)})


def taxonomy_within_limits(taxonomy: dict[str, Any]) -> CheckOutcome:
    problems = []
    if len(taxonomy) > MAX_TAXONOMY_KEYS:
        problems.append(f"{len(taxonomy)} keys (max {MAX_TAXONOMY_KEYS})")
    for key, entry in sorted(taxonomy.items()):
        values = entry.get("values", [])
        if len(values) > MAX_TAXONOMY_VALUES:
            problems.append(f"'{key}' has {len(values)} values (max {MAX_TAXONOMY_VALUES})")
        long = [v for v in values if len(v) > MAX_VALUE_CHARS]
        if long:
            problems.append(f"'{key}' has a value of {len(long[0])} characters (max {MAX_VALUE_CHARS})")
    sizes = {k: len(v.get("values", [])) for k, v in taxonomy.items()}
    if problems:
        return CheckOutcome(False, "taxonomy over its limits: " + "; ".join(problems), {"values_per_key": sizes})
    return CheckOutcome(True, f"{len(taxonomy)} keys within limits", {"values_per_key": sizes})


def chunks_taxonomy(out: Path) -> dict[str, Any]:
    values: dict[str, set[str]] = {}
    for chunk in _chunks(out):
        for key, value in chunk["metadata"].items():
            values.setdefault(key, set()).add(value)
    return {k: {"values": sorted(v)} for k, v in values.items()}


def vector_dimensions_match(out: Path) -> CheckOutcome:
    """The published table's vectors have the size metadata.json announces (or there are none)."""
    meta = read_metadata(Path(out))
    version = meta.index.version if meta and meta.index else None
    table = _table(out, version)
    expected = meta.embedding.dimensions if meta and meta.embedding else None
    actual = vector_column(table.schema)[0] or None
    if expected != actual:
        return CheckOutcome(
            False,
            f"metadata.json says {expected} dimensions but table version {version} has {actual}",
            {"metadata_dimensions": expected, "table_dimensions": actual},
        )
    return CheckOutcome(True, f"vector dimensions {actual} match metadata.json", {"dimensions": actual or 0})


def trust_quarantine(out: Path) -> CheckOutcome:
    """No chunk of the written build was quarantined by the trust scan (docs/trust.md); when some were,
    which, with file, line, rule and excerpt. Read from the build state the build wrote beside chunks.json."""
    from ..output.build_state import read_state
    from .quarantine import QUARANTINED, Flag

    layout = OutputLayout(Path(out))
    state = read_state(layout.pending_file_state) or read_state(layout.file_state) or {}
    found = []
    for path, entry in sorted((state.get("files") or {}).items()):
        rows = entry.get("trust") if isinstance(entry, dict) else None
        for row in rows if isinstance(rows, list) else []:
            flag = Flag.from_row(row)
            if flag is not None and flag.status == QUARANTINED:
                found.append((path, flag))
    chunks = sorted({(path, f.chunk_id) for path, f in found})
    if not chunks:
        return CheckOutcome(True, "no chunk quarantined by the trust scan", {"quarantined": 0})
    listed = [f"{path}:{f.line}: {f.rule}: {f.excerpt}" for path, f in found[:20]]
    files = len({path for path, _ in chunks})
    return CheckOutcome(
        False,
        f"{len(chunks)} chunk(s) in {files} file(s) quarantined by the trust scan and not served, e.g. {listed[0]}; "
        "`docs-mcp validate` lists them all; allow a legitimate page in its .docs-mcp.json (docs/trust.md)",
        {"quarantined": len(chunks), "files": files, "findings": listed},
    )
