"""The values the assets hand along the chain staged_docs → chunks → fingerprints → cached_vectors →
lancedb_index → metadata, and on to cache_audit.

Each asset takes only the asset before it, so the asset graph is that chain, and each value carries
on what a later step needs: the staged source (its commit, a website's page events), the chunk set,
the fingerprints, the embedding result, the table version. Each value is stored whole by the IO
manager, so a step re-executed later reads one consistent build, never parts of two.
"""

from __future__ import annotations

from dataclasses import dataclass

from docs_mcp_core.embedding.cache import EmbedResult
from docs_mcp_core.indexing.contract import ChunkSet
from docs_mcp_core.output.metadata import PublishedMetadata, TableVersion
from docs_mcp_core.sources.local import StagedDocs


@dataclass
class Chunked:
    """The `chunks` asset: the staged source and its chunks."""

    staged: StagedDocs
    chunkset: ChunkSet


@dataclass
class Fingerprinted(Chunked):
    """The `fingerprints` asset: one fingerprint per passage, chunk after chunk."""

    fingerprints: list[str]


@dataclass
class Embedded(Fingerprinted):
    """The `cached_vectors` asset: where each fingerprint's vector is, and what the cache lookup found."""

    embedded: EmbedResult


@dataclass
class Indexed(Embedded):
    """The `lancedb_index` asset: the table version written (not yet published)."""

    index: TableVersion


@dataclass
class Published(Indexed):
    """The `metadata` asset: metadata.json as published."""

    metadata: PublishedMetadata
