"""The published index as the engine reads it: metadata.json plus the table version it pins, opened
once for async reads, with what each search needs of every chunk held in memory.

Small indexes also keep their snippet text and vector matrix in memory, since a LanceDB read costs
more than a dict lookup; bigger ones read them from the table (MEMORY_TEXT_BYTES, MEMORY_VECTOR_BYTES).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..heap import give_back
from ..output import serving_snapshot, signed_files
from ..output.layout import METADATA, OutputLayout
from ..output.metadata import EmbeddingInfo, TaxonomyKey, require_metadata
from ..output.objectstore import RemoteOutput, is_remote, location, remote_signature
from ..output.serving_snapshot import Snapshot, SnapshotError, unit_rows
from ..output.signature import required
from ..output.table_checksums import published_files_problem, snapshot_files_problem
from ..output.table_schema import SOURCE_URL_COLUMN, SUBWORDS_COLUMN, served_columns, vector_column
from ..output.vector_index import VECTOR_MEMORY_BYTES, has_vector_index
from . import bm25, words_cache
from .chunk_words import MAX_CHARS, MAX_CHUNKS, ChunkWords
from .filters import Prefilter
from .unreadable import reading, unreadable_index
from .vector_scan import QuantizedScan

MEMORY_TEXT_BYTES = serving_snapshot.TEXT_BYTES
MEMORY_VECTOR_BYTES = VECTOR_MEMORY_BYTES
# Off: every index is read through LanceDB, as one without a snapshot is (tests compare the two).
USE_SNAPSHOT = True
# A heading at least this many chunks share, and at least this share of them, names a kind of section
# ("Example Usage", "Values"), not its subject; so does no heading at all (priors.says_nothing).
GENERIC_HEADING_CHUNKS = 5
GENERIC_HEADING_SHARE = 0.01


@dataclass(frozen=True)
class ChunkInfo:
    chunk_id: str
    filepath: str
    heading: str
    breadcrumb: str
    chunk_index: int
    metadata: dict[str, str]
    code_languages: tuple[str, ...] = ()
    digest: str | None = None
    chars: int | None = None  # length of content_text
    source_url: str | None = None  # the web page (and heading anchor) of website corpora
    row_id: int = -1  # its `_rowid` in the pinned table version
    navigation: float = 0.0  # share of its text in link-led list items
    bare_code: bool = False  # fenced code and next to no words (derived_fields.bare_code)
    lead: str = ""  # the sentence it opens with (derived_fields.lead_sentence)
    tables: float = 0.0  # share of its Markdown in table rows (derived_fields.table_share)


def pin_schema(table: Any, schema: Any) -> None:
    """Answer the table's `schema()` from the one read when it was opened.

    LanceDB asks the table for its Arrow schema before every query it runs (to see whether the
    projection reads blob columns), converting it from Rust each time: a large share of a short
    query's time in Python. The opened table version, pinned by checkout, cannot change its schema.
    """

    async def pinned() -> Any:
        return schema

    table.schema = pinned


def metadata_signature(out: Path | str) -> tuple[Any, ...] | None:
    """What changes when a new index is published: metadata.json's stat, or on s3:// its content
    hash, polled at most every DOCS_MCP_S3_POLL_SECONDS."""
    if is_remote(out):
        return remote_signature(str(out))
    try:
        st = os.stat(OutputLayout(out).metadata)
    except OSError:  # missing, or the folder itself is gone or not a folder
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class PublishedIndex:
    """One published build: metadata.json plus the table version it pins, opened for async reads."""

    def __init__(self, out: Path | str) -> None:
        self.out = location(out)
        self.remote = RemoteOutput.parse(str(self.out)) if is_remote(self.out) else None
        self.signature = metadata_signature(self.out)  # before reading: a publish in between is noticed later
        self.metadata = self.remote.require_metadata() if self.remote else require_metadata(Path(self.out))
        index = self.metadata.index
        self.table_name = index.table if index else "chunks"
        self.version: int | None = index.version if index else None
        self.key = f"{index.content_hash[:16] if index else ''}:{self.version}"
        self.taxonomy: dict[str, TaxonomyKey] = self.metadata.taxonomy
        self.embedding: EmbeddingInfo | None = self.metadata.embedding
        self.collapse_keys = sorted(k for k, v in self.taxonomy.items() if v.vector_collapse)
        self.table: Any = None
        self.has_vectors = False
        self.vector_indexed = False  # an ANN index on `vector`: searched by LanceDB, never held in memory
        self.rows = 0
        self.info: dict[str, ChunkInfo] = {}
        self.generic_headings: set[str] = set()  # lowercase headings that name a kind of section (says_nothing)
        self.files: dict[str, list[str]] = {}
        self.sizes: dict[str, int] = {}  # chunk_id -> characters of its Markdown (what get_doc returns)
        self.texts: dict[str, str] | None = None  # chunk_id -> content_text, when small enough
        self.ids: list[str] = []  # row order of `vectors`
        self.row_ids: np.ndarray = np.empty(0, dtype=np.uint64)  # every row's `_rowid`, sorted
        self.row_chunks: list[str] = []  # the chunk ID of each of them
        self.vectors: np.ndarray | None = None  # unit rows, when small enough: one per passage
        # where each chunk's passages start in `vectors` (rows of `ids`), when some chunk has more than one
        self.passage_starts: np.ndarray | None = None
        self.scan: QuantizedScan | None = None  # the first pass over a big `vectors` (vector_scan.py)
        self._masks: dict[Prefilter, np.ndarray] = {}
        self._lock = asyncio.Lock()
        self._table_lock = asyncio.Lock()
        self.opened = False
        # the serving snapshot the index was read from (serving_snapshot.py): the table is then opened only
        # for what the snapshot cannot answer
        self.snapshot: Snapshot | None = None
        self._snapshot_rows: dict[str, int] = {}  # chunk ID -> its row in the snapshot
        self.words: ChunkWords | None = None  # which chunks hold each word (chunk_words.py), once built
        # content_text's full-text index covers every row as bm25.py scores it: `words` can answer for it
        self.bm25_here = False
        self.word_chunks: list[str] = []  # the chunk ID of each chunk of `words`
        self.word_ranks: np.ndarray = np.empty(0, dtype=np.int64)  # each one's place in chunk ID order
        # the other full-text columns' words (heading, breadcrumb, sub-words), in the chunks' order of `words`,
        # when their indexes are as bm25.py scores them: the full-text list is then answered from memory
        self.field_words: dict[str, ChunkWords] = {}
        self.bm25_fields: set[str] = set()  # the full-text columns whose indexes bm25.py scores as LanceDB does
        self._subwords: list[str] | None = None  # content_subwords of every chunk, in the order of `texts`
        self._allowed: dict[Prefilter, frozenset[str]] = {}
        self._words_started = False
        self._words_done = threading.Event()
        self.words_source: str | None = None  # "built", or "cache" when mapped from words_cache.py

    def build_words(self) -> None:
        """Start building `words` in a thread, once, when the texts are in memory: the first searches are
        answered without it (it only spares LanceDB queries that would find nothing), so it costs the
        first answer nothing."""
        if self._words_started or self.texts is None:
            return
        self._words_started = True
        if len(self.texts) > MAX_CHUNKS or sum(map(len, self.texts.values())) > MAX_CHARS:
            self._words_done.set()
            return
        texts = list(self.texts.values())
        self.word_chunks = list(self.texts)
        self.word_ranks = np.argsort(np.argsort(np.asarray(self.word_chunks, dtype=object), kind="stable"))
        fields = {
            "heading": [self.info[cid].heading or "" for cid in self.word_chunks],
            "breadcrumb": [self.info[cid].breadcrumb or "" for cid in self.word_chunks],
        }
        if self._subwords is not None:
            fields[SUBWORDS_COLUMN] = self._subwords

        # read from a snapshot: kept in the per-user cache once built, mapped from it by the next server
        digest = self.snapshot.digest if self.snapshot is not None else ""

        def build() -> None:
            built: tuple[ChunkWords, dict[str, ChunkWords]] | None = None
            entry = None
            try:
                with contextlib.suppress(Exception):  # without them every exact-phrase query is sent, as before
                    entry = words_cache.key(digest) if digest else None
                    found = words_cache.load(entry, len(texts)) if entry else None
                    if found is None:
                        words = ChunkWords.of(texts)
                        field_words = {}
                        if self.bm25_here and words.exact and len(self.bm25_fields) == len(fields) + 1:
                            field_words = {name: ChunkWords.of(column) for name, column in fields.items()}
                        built = words, field_words
                    else:
                        words, field_words = found
                    self.field_words = field_words
                    self.words = words
                    self.words_source = "built" if built else "cache"
            finally:
                self._words_done.set()
            if entry and built:  # after the searches waiting for them are answered
                with contextlib.suppress(Exception):
                    words_cache.save(entry, *built)

        try:
            threading.Thread(target=build, name="docs-mcp-chunk-words", daemon=True).start()
        except RuntimeError:  # no thread to spare (a process limit): searches as before
            self._words_done.set()

    async def words_built(self) -> None:
        """Wait for `build_words` to finish, once started."""
        if self._words_started and not self._words_done.is_set():
            await asyncio.to_thread(self._words_done.wait)

    async def open(self) -> PublishedIndex:
        """Read what requests need: from the version's serving snapshot when it has a usable one (LanceDB is
        then not imported until a request needs the table), else from the table."""
        async with self._lock:
            if self.opened:
                return self
            index = self.metadata.index
            if required(self.out):  # a verifying reader: every file the signature covers, before LanceDB reads one
                await asyncio.to_thread(signed_files.check, self.out, index)
            if self.remote is None and index is not None:  # before LanceDB reads a damaged file (and may panic)
                problem = published_files_problem(OutputLayout(self.out), index.table, index.version)
                if problem:
                    raise unreadable_index(self.out, problem)
            snapshot = await asyncio.to_thread(self._usable_snapshot)
            if snapshot is not None:
                await self._load_snapshot(snapshot)
            else:
                with reading(self.out):  # no table, not that version, or damaged files
                    await self._load(await self._open_table())
                give_back()  # what reading the table freed (its record batches), held by malloc otherwise
            self.opened = True
        return self

    async def _open_table(self) -> Any:
        import lancedb

        uri = self.remote.lancedb_uri if self.remote else str(OutputLayout(self.out).lancedb)
        db = await lancedb.connect_async(uri)
        table = await db.open_table(self.table_name)
        if self.version is not None:
            await table.checkout(self.version)
        pin_schema(table, await table.schema())
        return table

    async def lance(self) -> Any:
        """The opened table version; for an index read from its snapshot, opened (LanceDB imported) on the
        first request that needs it: a query beyond ASCII, a phrase the word positions cannot answer."""
        if self.table is None:
            async with self._table_lock:
                if self.table is None:
                    with reading(self.out):
                        self.table = await self._open_table()
        return self.table

    def snapshot_present(self) -> bool:
        """Whether the published version has a serving snapshot (a stat: none is read)."""
        index = self.metadata.index
        return (
            USE_SNAPSHOT
            and self.remote is None
            and index is not None
            and serving_snapshot.present(self.out, index.table, index.version)
        )

    def _usable_snapshot(self) -> Snapshot | None:
        """The version's serving snapshot, when it has one whose files are intact and that fits the memory
        budgets; a damaged one is reported on stderr, and the table read instead."""
        index = self.metadata.index
        if not self.snapshot_present() or index is None:
            return None
        try:
            problem = snapshot_files_problem(OutputLayout(self.out), index.table, index.version)
            if problem:
                raise SnapshotError(problem)
            snapshot = serving_snapshot.read(self.out, index.table, index.version)
        except SnapshotError as exc:
            print(
                f"docs-mcp: warning: the serving snapshot of {self.out} cannot be used, reading the index "
                f"through LanceDB instead (slower to open; the next build writes it again): {exc}",
                file=sys.stderr,
                flush=True,
            )
            return None
        if snapshot is None:
            return None
        head = snapshot.head
        if head["text_bytes"] > MEMORY_TEXT_BYTES or head["vectors"] * head["dims"] * 4 > MEMORY_VECTOR_BYTES:
            return None
        return snapshot

    async def _load_snapshot(self, snapshot: Snapshot) -> None:
        """What `_load` reads of the table, from its snapshot."""
        head = snapshot.head
        indices = snapshot.indices
        count = int(head["count"])
        self.has_vectors = bool(head["dims"])
        self.vector_indexed = self.has_vectors and has_vector_index(indices)
        self.bm25_here = bm25.same_index(indices, count)
        self.bm25_fields = bm25.same_indexes(indices, count)
        self.rows = count
        self._check_dimensions(int(head["dims"]))
        columns = snapshot.columns
        sizes = dict(zip(columns["chunk_id"], head["sizes"]))  # characters of `content`, as get_doc counts them
        self._fill(columns, snapshot.row_ids, snapshot.vectors, snapshot.starts, sizes)
        self._snapshot_rows = {cid: i for i, cid in enumerate(columns["chunk_id"])}
        snapshot.head = {k: v for k, v in head.items() if k not in ("columns", "row_ids", "sizes", "content_ends")}
        self.snapshot = snapshot  # its per-row lists dropped: what was needed of them is held above
        if self.vectors is not None:
            self.scan = await asyncio.to_thread(QuantizedScan.of, self.vectors)

    def contents(self, ids: list[str]) -> dict[str, str]:
        """get_doc's `content` of these chunks, from the snapshot."""
        assert self.snapshot is not None
        return dict(zip(ids, self.snapshot.content([self._snapshot_rows[i] for i in ids])))

    def _check_dimensions(self, dims: int) -> None:
        if self.has_vectors and self.embedding is not None and self.embedding.dimensions != dims:
            raise unreadable_index(
                self.out,
                f"its {METADATA} says the vectors have {self.embedding.dimensions} dimensions, the table's have {dims}",
            )

    async def _load(self, table: Any) -> None:
        """What requests need in memory from the opened table version (row info, small texts and vectors)."""
        import pyarrow.compute as pc

        count = max(1, await table.count_rows())
        schema = await table.schema()
        self.has_vectors = "vector" in schema.names
        indices = list(await table.list_indices())
        self.vector_indexed = self.has_vectors and has_vector_index(indices)
        self.bm25_here = bm25.same_index(indices, count)
        self.bm25_fields = bm25.same_indexes(indices, count)
        self.rows = count
        # the snippet text itself: content_chars is content_text's length
        chars = await table.query().select(["content_chars"]).limit(count).to_arrow()
        text_bytes = int(pc.sum(chars.column("content_chars")).as_py() or 0)
        # the texts with the sub-words, for the full-text list from memory (bm25.py)
        wanted = served_columns(schema.names, texts=text_bytes <= MEMORY_TEXT_BYTES)
        dims, multivector = vector_column(schema)
        self._check_dimensions(dims)
        from ..embedding.input import PASSAGES

        # the vectors the build recorded, as it counted them for its ANN decision; should a damaged
        # metadata.json not say, a list of passages per row holds up to PASSAGES of them: budget for them all
        vectors = (
            self.metadata.index.vectors
            if self.metadata.index and self.metadata.index.vectors
            else count * (PASSAGES if multivector else 1)
        )
        if self.has_vectors and not self.vector_indexed and vectors * dims * 4 <= MEMORY_VECTOR_BYTES:
            wanted.append("vector")
        rows = await table.query().with_row_id().select(wanted).limit(count).to_arrow()
        columns = {name: rows.column(name).to_pylist() for name in wanted if name != "vector"}
        vectors_read, starts = (
            unit_rows(rows.column("vector"), dims, multivector) if "vector" in wanted else (None, None)
        )
        sizes = (
            await table.query()
            .select({"chunk_id": "chunk_id", "chars": "character_length(content)"})
            .limit(count)
            .to_arrow()
        )
        row_ids = rows.column("_rowid").to_numpy()
        del rows
        self._fill(
            columns,
            row_ids,
            vectors_read,
            starts,
            dict(zip(sizes.column("chunk_id").to_pylist(), sizes.column("chars").to_pylist())),
        )
        if self.vectors is not None:  # its int8 copy made once the record batches read above are freed
            del row_ids, columns, sizes
            give_back()
            self.scan = await asyncio.to_thread(QuantizedScan.of, self.vectors)
        self.table = table

    def _fill(
        self,
        columns: dict[str, list[Any]],
        row_ids: np.ndarray,
        vectors: np.ndarray | None,
        starts: np.ndarray | None,
        sizes: dict[str, int],
    ) -> None:
        """Hold the columns read (of the table or of its snapshot), each a list in the table's row order."""
        order = np.argsort(row_ids, kind="stable")
        self.row_ids = row_ids[order]
        self.row_chunks = [columns["chunk_id"][i] for i in order.tolist()]
        if "content_text" in columns:
            self.texts = dict(zip(columns["chunk_id"], columns["content_text"]))
        if SUBWORDS_COLUMN in columns:
            self._subwords = [words or "" for words in columns[SUBWORDS_COLUMN]]
        if vectors is not None:
            self.vectors, self.passage_starts = vectors, starts
            self.ids = columns["chunk_id"]
        for i, chunk_id in enumerate(columns["chunk_id"]):
            self.info[chunk_id] = ChunkInfo(
                chunk_id,
                columns["filepath"][i],
                columns["heading"][i],
                columns["breadcrumb"][i],
                columns["chunk_index"][i],
                json.loads(columns["metadata"][i]),
                tuple(columns["code_languages"][i].split()),
                columns["content_digest"][i],
                columns["content_chars"][i],
                columns[SOURCE_URL_COLUMN][i] if SOURCE_URL_COLUMN in columns else None,
                int(row_ids[i]),
                float(columns["navigation"][i] or 0.0),
                bool(columns["bare_code"][i]),
                columns["lead"][i] or "",
                float(columns["tables"][i] or 0.0),
            )
        self.sizes = sizes
        self.files = {}
        for info in sorted(self.info.values(), key=lambda c: (c.filepath, c.chunk_index)):
            self.files.setdefault(info.filepath, []).append(info.chunk_id)
        headings = Counter(info.heading.strip().lower() for info in self.info.values())
        common = max(GENERIC_HEADING_CHUNKS, GENERIC_HEADING_SHARE * len(self.info))
        self.generic_headings = {heading for heading, n in headings.items() if n >= common} | {""}

    def chunk_ids(self, row_ids: np.ndarray) -> list[str]:
        """The chunk IDs of the rows a query returned (selected by `_rowid`: no read of the chunk_id column)."""
        at = np.searchsorted(self.row_ids, row_ids)
        if len(at) and (int(at.max()) >= len(self.row_ids) or not np.array_equal(self.row_ids[at], row_ids)):
            raise unreadable_index(self.out, "a query returned rows that the opened table version does not have")
        return [self.row_chunks[i] for i in at.tolist()]

    async def mask(self, where: Prefilter | None) -> np.ndarray | None:
        """Rows of `vectors` that pass a prefilter (cached)."""
        if where is None:
            return None
        if where not in self._masks:
            allowed = await self.allowed(where)
            self._masks[where] = np.fromiter((cid in allowed for cid in self.ids), dtype=bool, count=len(self.ids))
        return self._masks[where]

    async def allowed(self, where: Prefilter) -> frozenset[str]:
        """The chunk IDs that pass a prefilter, from their metadata in memory as LanceDB's SQL would (cached)."""
        if where not in self._allowed:
            self._allowed[where] = frozenset(cid for cid, info in self.info.items() if where.passes(info.metadata))
        return self._allowed[where]

    def has(self, chunk_id: str) -> bool:
        """Whether get_doc would find this ID (a chunk, or a bare file path) in the index."""
        return chunk_id in self.info or ("#" not in chunk_id and chunk_id in self.files)

    def withheld(self, chunk_id: str) -> str | None:
        """Why the trust scan left this chunk out (its rules and where), or for a bare file path none of whose
        chunks is served, its chunks'; None when it did not."""
        quarantined = self.metadata.quarantined
        if chunk_id in quarantined or "#" in chunk_id or not quarantined or chunk_id in self.files:
            return quarantined.get(chunk_id)
        found = [why for cid, why in quarantined.items() if cid.split("#", 1)[0] == chunk_id]
        return ", ".join(dict.fromkeys(found)) or None
