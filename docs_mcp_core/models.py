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


@dataclass(frozen=True)
class IndexInfo:
    """Which table version holds a build, and what it was made from (metadata.json `index`)."""

    table: str
    version: int
    rows: int
    content_hash: str
    files: dict[str, int] = field(default_factory=dict, compare=False)  # data/index files -> size (tablefiles.py)
    chunks_sha256: str = ""  # the chunks.json this version was built with
    passages_key: str = ""  # what its vectors' fingerprints were made under (fingerprint.passages_key; "": none)
    vectors: int = 0  # vectors the table holds, passages included (0: none)
    made: str = field(default="written", compare=False)  # by this build: written | updated | kept (the published one)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "table": self.table,
            "version": self.version,
            "rows": self.rows,
            "content_hash": self.content_hash,
        }
        if self.chunks_sha256:
            data["chunks_sha256"] = self.chunks_sha256
        if self.passages_key:
            data["passages_key"] = self.passages_key
        if self.vectors:
            data["vectors"] = self.vectors
        return data
