"""The chunk record shared by chunks.json, the LanceDB table and the server, and the names both sides agree on."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# What a chunk ID looks like (`{filepath}` or `{filepath}#{heading-path}`, made in chunking/ids.py);
# get_doc refuses anything else before touching the table.
CHUNK_ID = re.compile(r"^[^#\s][^#\n]*(#[^#\s]+)?$")
META_PREFIX = "meta_"  # taxonomy key `k` is the chunks-table column `meta_k`

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
    source_url: str | None = None  # the web page it came from (+ heading anchor); None for local and git files

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "chunk_id": self.chunk_id,
            "filepath": self.filepath,
            "heading": self.heading,
            "heading_level": self.heading_level,
            "breadcrumb": self.breadcrumb,
            "content": self.content,
            "content_text": self.content_text,
            "chunk_index": self.chunk_index,
            "metadata": dict(sorted(self.metadata.items())),
        }
        if self.source_url is not None:  # left out otherwise: chunks.json of file corpora is unchanged
            data["source_url"] = self.source_url
        return data

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Chunk:
        return cls(**{k: d[k] for k in CHUNK_FIELDS}, source_url=d.get("source_url"))


def meta_column(key: str) -> str:
    """The chunks-table column that holds taxonomy key `key` (written by indexing, filtered by search)."""
    return META_PREFIX + key


def sql_literal(value: str) -> str:
    """A string as a LanceDB SQL literal, for the filters search writes and the deletes an update makes."""
    return "'" + value.replace("'", "''") + "'"
