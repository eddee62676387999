"""Search over a published index. Text ranking for now; hybrid fusion arrives with the server."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lancedb.query import MultiMatchQuery

from .errors import DocsMcpError
from .index import meta_column, open_table
from .metadata import require_metadata

HEADING_BOOST = 3.0
_WORD = re.compile(r"\w+")


@dataclass
class Hit:
    chunk_id: str
    score: float
    heading: str
    breadcrumb: str
    snippet: str
    filepath: str
    metadata: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "score": round(self.score, 6),
            "heading": self.heading,
            "breadcrumb": self.breadcrumb,
            "snippet": self.snippet,
            "filepath": self.filepath,
            "metadata": self.metadata,
        }


def snippet(text: str, query: str, width: int = 240) -> str:
    """A window of the text around the first query word, on word boundaries."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lower = flat.lower()
    positions = [lower.find(w) for w in _WORD.findall(query.lower()) if len(w) > 2]
    first = min((p for p in positions if p >= 0), default=0)
    start = max(0, first - width // 3)
    if start:
        start = flat.find(" ", start) + 1 or start
    end = start + width
    if end < len(flat):
        end = flat.rfind(" ", start, end) if flat.rfind(" ", start, end) > start else end
    return ("… " if start else "") + flat[start:end] + (" …" if end < len(flat) else "")


def filter_sql(filters: dict[str, str], taxonomy: dict[str, Any]) -> str | None:
    """A prefilter from values already checked against the taxonomy enums (never raw input)."""
    clauses = []
    for key, value in sorted(filters.items()):
        allowed = (taxonomy.get(key) or {}).get("values")
        if allowed is None:
            raise DocsMcpError(f"unknown filter '{key}'; filterable keys: {', '.join(sorted(taxonomy)) or 'none'}")
        if value not in allowed:
            raise DocsMcpError(f"invalid value '{value}' for '{key}'; allowed: {', '.join(allowed)}")
        literal = value.replace("'", "''")  # value is one of the indexed enum values
        clauses.append(f"{meta_column(key)} = '{literal}'")
    return " AND ".join(clauses) or None


class SearchIndex:
    """A published index, pinned to the table version metadata.json names."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.metadata = require_metadata(self.out)
        index = self.metadata.get("index") or {}
        self.table = open_table(self.out, index.get("version"))

    @property
    def taxonomy(self) -> dict[str, Any]:
        return self.metadata.get("taxonomy") or {}

    def text_search(self, query: str, limit: int = 10, filters: dict[str, str] | None = None) -> list[Hit]:
        where = filter_sql(filters or {}, self.taxonomy)
        q = self.table.search(MultiMatchQuery(query, ["heading", "content_text"], boosts=[HEADING_BOOST, 1.0]),
                              query_type="fts")
        if where:
            q = q.where(where, prefilter=True)
        rows = q.select(["chunk_id", "heading", "breadcrumb", "content_text", "filepath", "metadata", "_score"]).limit(limit).to_list()
        rows.sort(key=lambda r: (-r["_score"], r["chunk_id"]))
        return [
            Hit(r["chunk_id"], float(r["_score"]), r["heading"], r["breadcrumb"], snippet(r["content_text"], query),
                r["filepath"], json.loads(r["metadata"]))
            for r in rows
        ]
