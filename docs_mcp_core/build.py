"""The build, as steps. The CLI runs them in a row; each Dagster asset wraps exactly one.

chunk_corpus → fingerprint_chunks → embed_chunks → write_index → publish_metadata
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .chunking import CHUNKER_VERSION, chunk_markdown
from .corpus import read_source, scan_corpus
from .diagnostics import Diagnostic, error, has_errors
from .embedding import EmbeddingProvider, compute_fingerprint, to_embedding_input
from .errors import DocsMcpError, ValidationFailed
from .fsutil import build_lock, dump_json, write_atomic
from .index import IndexInfo, content_hash, latest_version, prune_versions, write_table
from .metadata import DEFAULT_DESCRIPTION, build_metadata, read_metadata, write_metadata
from .models import Chunk
from .progress import NullReporter, Reporter, Timer
from .prompts import load_prompts
from .taxonomy import build_taxonomy, check_taxonomy_limits, server_instructions

CHUNKS_FILE = "chunks.json"


@dataclass
class FileRecord:
    relpath: str
    sha256: str
    chunks: int


@dataclass
class ChunkSet:
    """Output of the chunk step: everything later steps and metadata.json need."""

    root: str
    chunks: list[Chunk]
    files: list[FileRecord]
    taxonomy: dict[str, Any]
    instructions: str | None
    prompts: list[dict[str, Any]]
    diagnostics: list[Diagnostic]
    reparsed: int = 0
    reused: int = 0
    seconds: float = 0.0

    @property
    def taxonomy_keys(self) -> list[str]:
        return sorted(self.taxonomy)

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


def analyze_corpus(docs_dir: Path, reporter: Reporter | None = None) -> ChunkSet:
    """Parse, check and chunk every file; collect every problem rather than stop at the first."""
    reporter = reporter or NullReporter()
    timer = Timer()
    scan = scan_corpus(Path(docs_dir))
    diags = list(scan.diagnostics)
    chunks: list[Chunk] = []
    files: list[FileRecord] = []
    per_file_meta: list[tuple[str, dict[str, str]]] = []
    total = len(scan.markdown)
    for n, rel in enumerate(scan.markdown, start=1):
        source, problems = read_source(scan, rel)
        diags.extend(problems)
        if source is not None:
            file_chunks = chunk_markdown(source.relpath, source.body, source.strategy, source.metadata,
                                         tokens=source.tokens, title=source.title)
            chunks.extend(file_chunks)
            files.append(FileRecord(rel, source.sha256, len(file_chunks)))
            per_file_meta.append((rel, source.metadata))
        reporter.progress("parsing", n, total)
    diags.extend(check_taxonomy_limits(per_file_meta))
    diags.extend(_duplicate_ids(chunks))
    prompts, prompt_diags = load_prompts(scan.root, scan.templates)
    diags.extend(prompt_diags)
    taxonomy, tax_diags = build_taxonomy(chunks, scan.manifests)
    diags.extend(tax_diags)
    instructions, instr_diags = server_instructions(scan.manifests)
    diags.extend(instr_diags)
    chunks.sort(key=lambda c: (c.filepath, c.chunk_index))
    return ChunkSet(str(scan.root), chunks, files, taxonomy, instructions, prompts, sorted(set(diags)),
                    reparsed=len(files), seconds=timer.seconds)


def _duplicate_ids(chunks: list[Chunk]) -> list[Diagnostic]:
    seen: set[str] = set()
    diags = []
    for c in chunks:
        if c.chunk_id in seen:
            diags.append(error(c.filepath, 1, f"two chunks get the ID '{c.chunk_id}'; rename one of the headings"))
        seen.add(c.chunk_id)
    return diags


def chunk_corpus(docs_dir: Path, reporter: Reporter | None = None) -> ChunkSet:
    """The chunk step: like analyze_corpus, but validation errors stop the build."""
    reporter = reporter or NullReporter()
    chunkset = analyze_corpus(docs_dir, reporter)
    if has_errors(chunkset.diagnostics):
        raise ValidationFailed(chunkset.diagnostics)
    for d in chunkset.warnings:
        if "no explicit chunking strategy" not in d.message:
            reporter.warn(d.format())
    defaults = sum("no explicit chunking strategy" in d.message for d in chunkset.warnings)
    if defaults:
        reporter.warn(f"{defaults} file(s) have no explicit chunking strategy; the default chunk_by: h2 applies "
                      "(run `docs-mcp validate` for the list)")
    reporter.info(f"parsed {len(chunkset.files)} files into {len(chunkset.chunks)} chunks in {chunkset.seconds:.1f}s")
    return chunkset


def fingerprint_chunks(chunks: list[Chunk], provider: EmbeddingProvider) -> list[str]:
    config = provider.config_fingerprint
    return [compute_fingerprint(c, config) for c in chunks]


@dataclass
class EmbedResult:
    vectors: np.ndarray | None  # (n_chunks, dims) aligned with the chunk list; None without vectors
    embedded: int = 0
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)


def embed_chunks(chunks: list[Chunk], provider: EmbeddingProvider, reporter: Reporter | None = None) -> EmbedResult:
    """Embed every chunk in batches (the embedding cache replaces this with lookups first)."""
    reporter = reporter or NullReporter()
    if not provider.produces_vectors:
        return EmbedResult(None)
    timer = Timer()
    out = np.zeros((len(chunks), provider.dimensions), dtype=np.float32)
    size = max(1, provider.batch_size)
    for start in range(0, len(chunks), size):
        batch = chunks[start : start + size]
        out[start : start + len(batch)] = provider.embed([to_embedding_input(c) for c in batch])
        reporter.progress(f"embedding via {provider.name}", start + len(batch), len(chunks))
    reporter.info(f"embedded {len(chunks)} chunks via {provider.name} in {timer.seconds:.1f}s")
    return EmbedResult(out, len(chunks), timer.seconds)


def chunks_json(chunks: list[Chunk]) -> bytes:
    ordered = sorted(chunks, key=lambda c: (c.filepath, c.chunk_index))
    return dump_json([c.to_dict() for c in ordered])


def write_index(out: Path, chunkset: ChunkSet, vectors: np.ndarray | None, reporter: Reporter | None = None) -> IndexInfo:
    """Write chunks.json and a new, fully indexed table version (not yet published)."""
    reporter = reporter or NullReporter()
    out = Path(out)
    data = chunks_json(chunkset.chunks)
    keys = chunkset.taxonomy_keys
    digest = content_hash(data, vectors, keys)
    with build_lock(out):
        published = (read_metadata(out) or {}).get("index") or {}
        if published.get("content_hash") == digest and latest_version(out) == published.get("version"):
            info = IndexInfo(published["table"], published["version"], published["rows"], digest,
                             int(vectors.shape[1]) if vectors is not None else 0)
            reporter.info("index unchanged: reusing the published table version")
        else:
            info = write_table(out, chunkset.chunks, vectors, keys, digest)
        write_atomic(out / CHUNKS_FILE, data)
    if info.rows != len(chunkset.chunks):
        raise DocsMcpError(f"index has {info.rows} rows but the build has {len(chunkset.chunks)} chunks; rebuild")
    return info


def publish_metadata(
    out: Path,
    chunkset: ChunkSet,
    index: IndexInfo,
    provider: EmbeddingProvider,
    *,
    description: str | None = None,
    source_commit: str | None = None,
) -> dict[str, Any]:
    """Write metadata.json last: from this moment servers switch to the new table version."""
    out = Path(out)
    with build_lock(out):
        previous = ((read_metadata(out) or {}).get("index") or {}).get("version")
        metadata = build_metadata(
            description=description or DEFAULT_DESCRIPTION,
            taxonomy=chunkset.taxonomy,
            total_chunks=len(chunkset.chunks),
            total_files=len(chunkset.files),
            source_commit=source_commit,
            embedding=provider.describe(),
            prompts=chunkset.prompts,
            instructions=chunkset.instructions,
            index=index.to_json(),
            chunker_version=CHUNKER_VERSION,
        )
        write_metadata(out, metadata)
        if previous != index.version:
            prune_versions(out, previous)
    return metadata


@dataclass
class BuildSummary:
    out: str
    files: int
    chunks: int
    embedded: int
    seconds: float
    index: IndexInfo
    metadata: dict[str, Any]


def build(
    docs_dir: Path,
    out: Path,
    provider: EmbeddingProvider,
    *,
    description: str | None = None,
    source_commit: str | None = None,
    reporter: Reporter | None = None,
) -> BuildSummary:
    """Every step in order; validation errors stop it before anything is written."""
    reporter = reporter or NullReporter()
    timer = Timer()
    chunkset = chunk_corpus(docs_dir, reporter)
    embedded = embed_chunks(chunkset.chunks, provider, reporter)
    info = write_index(out, chunkset, embedded.vectors, reporter)
    metadata = publish_metadata(out, chunkset, info, provider, description=description, source_commit=source_commit)
    reporter.info(f"wrote {len(chunkset.chunks)} chunks and .lancedb index to {out}")
    return BuildSummary(str(out), len(chunkset.files), len(chunkset.chunks), embedded.embedded, timer.seconds, info, metadata)
