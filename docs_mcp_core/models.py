"""The chunk record shared by chunks.json, the LanceDB table and the server."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

CHUNK_FIELDS = (
    "chunk_id",
    "filepath",
    "heading",
    "heading_level",
    "breadcrumb",
    "content",
    "content_text",
    "chunk_index",
    "metadata",
)


@dataclass
class Chunk:
    chunk_id: str
    filepath: str
    heading: str
    heading_level: int
    breadcrumb: str
    content: str
    content_text: str
    chunk_index: int
    metadata: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["metadata"] = dict(sorted(self.metadata.items()))
        return {k: d[k] for k in CHUNK_FIELDS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Chunk":
        return cls(**{k: d[k] for k in CHUNK_FIELDS})
