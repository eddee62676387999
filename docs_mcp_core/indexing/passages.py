"""Each chunk's passages (the texts embedded for it) and their fingerprints, per build.

Splitting a chunk into passages reads its text and tokenizes long ones, which was most of a no-op
rebuild with a model (docs/decisions/0015). So the build state (files.json)
records, per file, each chunk's ID and passage fingerprints under a key naming the embedding
config and format (fingerprint.passages_key), and a later build takes them as they are for every
file it reuses unchanged: the same bytes under the same chunker and rules give the same chunks,
so the same passages. Only the files it parses, and the cache misses of reused ones (a lost
cache), are split again. A change to how passages are made must bump EMBEDDING_FORMAT_VERSION,
which changes the key.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..embedding import EmbeddingProvider, passage_fingerprint, passages
from ..embedding.cache import EmbedResult
from ..embedding.fingerprint import passages_key
from ..embedding.input import passage_input
from ..errors import DocsMcpError
from ..output.build_state import Passages
from .chunk_lines import parse_line
from .contract import ChunkSet, FileRecord


@dataclass
class PassagePlan:
    """[chunk_id, fingerprint, …] per chunk in chunks.json's order, and where the rows came from."""

    rows: list[list[str]]
    recorded: set[str]  # files whose rows are the last build's
    texts: dict[str, str] = field(default_factory=dict)  # fingerprint -> text, of the rows computed here

    @property
    def fingerprints(self) -> list[str]:
        """One per passage, chunk after chunk."""
        return [fp for row in self.rows for fp in row[1:]]

    def texts_of(self, chunkset: ChunkSet, provider: EmbeddingProvider, missing: list[str]) -> dict[str, str]:
        """The texts of `missing` fingerprints (cache misses): the recorded files are split again when
        a miss is among them."""
        if any(fp not in self.texts for fp in missing) and self.recorded:
            config = provider.config_fingerprint
            for _, texts in split_passages(chunkset, provider, self.recorded):
                self.texts.update((passage_fingerprint(text, config), text) for text in texts)
        lost = [fp for fp in missing if fp not in self.texts]
        if lost:
            raise DocsMcpError(
                f"{len(lost)} passage fingerprint(s) recorded in the build state (.docs-mcp/files.json) "
                "match no chunk; rebuild with --force"
            )
        return {fp: self.texts[fp] for fp in missing}


def split_passages(
    chunkset: ChunkSet, provider: EmbeddingProvider, only: set[str] | None = None
) -> Iterator[tuple[str, list[str]]]:
    """(chunk_id, its passages) per chunk of the files in `only` (default every file), in order."""
    for line in chunkset.lines(only):
        chunk = parse_line(line)
        text, heading, prose_end = passage_input(chunk)
        yield chunk.chunk_id, passages(provider, text, heading, prose_end)


def passage_plan(chunkset: ChunkSet, provider: EmbeddingProvider) -> PassagePlan:
    """Rows recorded by the last build for the files this one reuses, computed for the others."""
    config = provider.config_fingerprint
    key = passages_key(config)
    previous = chunkset.previous
    recorded: dict[str, list[list[str]]] = {}
    if previous is not None:
        for record in chunkset.files:
            if record.reused and record.chunks:
                found = previous.passages(record.relpath, key, record.chunks)
                if found is not None:
                    recorded[record.relpath] = found
    computed = {f.relpath for f in chunkset.files if f.chunks and f.relpath not in recorded}
    plan = PassagePlan([], set(recorded))
    split = split_passages(chunkset, provider, computed) if computed else iter(())
    for record in chunkset.files:
        if record.relpath in recorded:
            plan.rows.extend(recorded[record.relpath])
            continue
        for chunk_id, texts in itertools.islice(split, record.chunks):
            prints = [passage_fingerprint(text, config) for text in texts]
            plan.texts.update(zip(prints, texts))
            plan.rows.append([chunk_id, *prints])
    if len(plan.rows) != chunkset.chunk_count:
        raise DocsMcpError(f"{len(plan.rows)} chunks have passages, the build has {chunkset.chunk_count}; build again")
    return plan


def recorded_passages(files: list[FileRecord], embedded: EmbedResult) -> Passages | None:
    """What the build state records of this build's passages (None when it has no vectors)."""
    if not embedded.passages_key or not embedded.chunk_ids:
        return None
    rows = [[chunk_id, *prints] for chunk_id, prints in embedded.by_chunk().items()]
    if len(rows) != sum(f.chunks for f in files):
        return None
    each = iter(rows)
    return embedded.passages_key, {f.relpath: list(itertools.islice(each, f.chunks)) for f in files if f.chunks}
