"""Hybrid search over a published index: the engine behind search_docs, get_doc and `docs-mcp search`.

Three ranked lists from LanceDB, queried concurrently with the same prefilter: full-text (BM25
over heading, breadcrumb, content_text and identifier sub-words, plus term proximity; text_query),
exact phrase (content_text, positions), and vector similarity when the index has vectors and a
query vector is available. With a vector list they are fused by their min-max scaled scores, full
text alone by weighted reciprocal rank fusion (fuse); ties break by chunk_id, so results are
deterministic.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import sys
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import SearchError
from ..failpoints import pause
from ..output.chunk import CHUNK_ID, meta_column, sql_literal
from ..output.derived_fields import normalize_language, subwords
from ..output.layout import METADATA, OutputLayout
from ..output.metadata import EmbeddingInfo, TaxonomyKey, require_metadata
from ..output.objectstore import RemoteOutput, is_remote, location, remote_signature
from ..output.table_checksums import published_files_problem
from ..output.table_schema import (
    DERIVED_COLUMNS,
    LIGHT_COLUMNS,
    SOURCE_URL_COLUMN,
    SUBWORDS_COLUMN,
    vector_column,
)
from ..output.vector_index import VECTOR_MEMORY_BYTES, ann_query, has_vector_index
from . import answers
from . import cursor as cursors
from .hits import SearchHit, TrimNote, ZeroResultHint
from .proximity import SLOP as PROXIMITY_SLOP
from .proximity import term_pairs
from .repeats import stems, without_repeats
from .vector_scan import QuantizedScan, nearest_rows
from .weights import Weights

if TYPE_CHECKING:
    from ..embedding.query import QueryEmbedder

_T = TypeVar("_T")


class UnreadableIndex(SearchError):  # noqa: N818 - a SearchError like the others, named for its cause
    """The published index cannot be read: its files are missing or damaged, or the version a request
    held was pruned under it (a request that outlived two publishes: see Library.search)."""


def unreadable_index(out: Path | str, exc: BaseException | str) -> UnreadableIndex:
    """LanceDB failing to open or read the table means files under `.lancedb` are missing or damaged."""
    reason = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
    return UnreadableIndex(
        f"the index at {out} cannot be read ({reason}); rebuild it with "
        f"`docs-mcp build --docs-dir DOCS --index {out}` (a damaged table is rewritten)"
    )


def index_gone(out: Path) -> UnreadableIndex:
    """A local index whose metadata.json has gone: a publish replaces it atomically, so the folder was deleted."""
    return UnreadableIndex(
        f"the index at {out} is gone (no {OutputLayout(out).metadata.name}: was the folder deleted or moved?); "
        f"rebuild it with `docs-mcp build --docs-dir DOCS --index {out}`"
    )


_PANICS = ("RustPanic", "PanicException")  # a Rust panic as an exception (PanicException is a BaseException)


def is_read_failure(exc: BaseException) -> bool:
    """Whether LanceDB failed on missing or damaged files: an IO error, a panic, or its ValueError for
    "invalid input" (a file that is not Lance's); a ValueError of our own code is not one."""
    if isinstance(exc, (RuntimeError, OSError)) or type(exc).__name__ in _PANICS:
        return True
    if not isinstance(exc, ValueError):
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return any(f"{os.sep}{package}{os.sep}" in where for package in ("lancedb", "pyarrow"))


def _readable(method: Callable[..., Awaitable[_T]]) -> Callable[..., Awaitable[_T]]:
    """A request on a damaged index fails with one clear sentence, not a LanceDB traceback."""

    @functools.wraps(method)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> _T:
        try:
            return await method(self, *args, **kwargs)
        except SearchError:
            raise
        except BaseException as exc:
            if not is_read_failure(exc):
                raise
            raise unreadable_index(self.out, exc) from None

    return wrapper


DEFAULT_LIMIT = 10
MAX_LIMIT = 50
MAX_CONTEXT = 5
CANDIDATES = 100  # per signal; the fused list (what pagination walks) is their union
# Small indexes keep snippet text and the vector matrix in memory (a LanceDB read costs ~2 ms);
# bigger ones read them from the table.
MEMORY_TEXT_BYTES = 64 * 2**20
MEMORY_VECTOR_BYTES = VECTOR_MEMORY_BYTES
_WORD = re.compile(r"[A-Za-z0-9_]+")
# Candidates fetched beyond a list's depth, so a tie at the cut is usually settled in one query.
TIE_SLACK = 16
# BM25 ties are as wide as the copies of a text (chunks with the same words and length score the
# same: versioned or duplicated pages), so full-text lists first fetch this many times their depth
# (plus TIE_SLACK). LanceDB answers 232 rows as fast as 116 (2.9 vs 2.8 ms on dub-ts ×30), and on
# ×30 copies it settles the tie in one query instead of two (benchmarks/scale.py).
FULL_TEXT_FETCH = 2


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


# Above this, the scan runs in a worker thread (numpy releases the GIL), overlapping the full-text
# queries instead of holding the event loop before they are sent; below, the hop costs more.
THREADED_SCAN_BYTES = 8 * 2**20


def phrase_applies(query: str) -> bool:
    """Whether the exact-phrase signal runs for this query (it needs two words or more)."""
    return len(_WORD.findall(query)) >= 2


def snippet(text: str, query: str, width: int = 220) -> str:
    """Up to `width` characters of the text, starting shortly before the first query word found."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lower = flat.lower()
    positions = [lower.find(w) for w in (t.lower() for t in _WORD.findall(query)) if len(w) > 2]
    anchor = min((p for p in positions if p >= 0), default=0)
    start = max(0, anchor - 60)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < anchor else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start + width // 2, end)
        end = space if space > 0 else end
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


def validate_filters(filters: dict[str, Any], taxonomy: dict[str, TaxonomyKey]) -> dict[str, str]:
    """Every key a taxonomy key, every value one of its indexed values; else a SearchError listing them."""
    clean: dict[str, str] = {}
    for key, value in filters.items():
        if key not in taxonomy:
            known = ", ".join(sorted(taxonomy)) or "none (this index has no taxonomy)"
            raise SearchError(f"Unknown filter '{key}'. Filterable keys: {known}.")
        allowed = taxonomy[key].values
        if not isinstance(value, str) or value not in allowed:
            raise SearchError(f"Invalid taxonomy value for '{key}': '{value}'. Allowed values: {', '.join(allowed)}")
        clean[key] = value
    return clean


def where_clause(filters: dict[str, str], taxonomy: dict[str, TaxonomyKey]) -> str | None:
    """A prefilter from validated values. `language` without `scope` also admits global guides."""
    auto_include = "language" in filters and "scope" not in filters and "scope" in taxonomy
    clauses = [
        f"{meta_column(k)} = {sql_literal(v)}"
        for k, v in sorted(filters.items())
        if not (auto_include and k == "language")
    ]
    if auto_include:
        lang, scope, language = sql_literal(filters["language"]), meta_column("scope"), meta_column("language")
        clauses.append(
            f"(({scope} = 'sdk-specific' AND {language} = {lang}) OR {scope} = 'global-guide' OR "
            f"(({scope} IS NULL OR {scope} NOT IN ('sdk-specific', 'global-guide')) AND "
            f"({language} IS NULL OR {language} = {lang})))"
        )
    return " AND ".join(clauses) or None


Ranked = list[tuple[str, float]]  # (chunk_id, score), best first; a higher score is a better match


def rrf(lists: list[tuple[float, list[str]]], k: int) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion; ties break by chunk_id."""
    scores: dict[str, float] = {}
    for weight, ranked in lists:
        for rank, chunk_id in enumerate(ranked, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def score_fusion(lists: list[tuple[float, Ranked, bool]]) -> list[tuple[str, float]]:
    """Weighted sum of each list's scores scaled to 0..1 over its candidates (min-max); a chunk missing
    from a list gets 0 there. Unlike ranks, scaled scores keep how far apart candidates are: a chunk
    BM25 puts far ahead is not overtaken by one the vector list prefers by a hair. A list marked
    whole (a full-text list that returned every chunk it matches) scales from 0, BM25's score for a
    chunk it does not match: its last match still counts for something (an exact phrase found in three
    chunks gave the third 0, as if it had not matched). Ties break by chunk_id."""
    scores: dict[str, float] = {}
    for weight, ranked, whole in lists:
        if not ranked:
            continue
        high, low = max(s for _, s in ranked), min(s for _, s in ranked)
        if whole:
            low = min(low, 0.0)
        spread = high - low
        for chunk_id, score in ranked:
            scaled = (score - low) / spread if spread > 0 else 1.0
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight * scaled
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def text_query(query: str, index: PublishedIndex, weights: Weights) -> Any:
    """BM25 over the chunk's fields, each times its boost: heading, breadcrumb (file path and parent
    headings), content_text, and the identifier sub-words of the chunk (output/derived_fields.py). `weights.fields`
    "max" keeps the best field's score (LanceDB's MultiMatchQuery), "sum" adds them. A camelCase
    identifier in the query also looks for its sub-words as plain words, at half the sub-word boost,
    so `WithMaxRetries` finds "max retries" while the exact identifier still scores highest. Each pair
    of neighbouring query words adds its score as a sloppy phrase in the text, at `weights.proximity`
    (proximity.py), so a chunk where the query's words stand together ranks above one that has the
    same words apart. A word the query repeats, in any form ("give … giving"), counts once (repeats.py)."""
    from lancedb.query import BooleanQuery, MatchQuery, MultiMatchQuery, Occur, PhraseQuery

    pairs = term_pairs(query) if weights.proximity > 0 else []
    query = without_repeats(query)
    # a phrase query takes no boost, so the other clauses are scaled by 1 / proximity instead: a common
    # factor changes neither BM25 order, nor the length prior, nor min-max scaled fusion
    scale = 1 / weights.proximity if pairs else 1.0
    fields = [
        ("heading", weights.heading),
        ("content_text", 1.0),
        ("breadcrumb", weights.breadcrumb),
        (SUBWORDS_COLUMN, weights.subwords),
    ]
    fields = [(column, boost * scale) for column, boost in fields if boost > 0]
    if weights.fields == "max":
        clauses: list[Any] = [MultiMatchQuery(query, [c for c, _ in fields], boosts=[b for _, b in fields])]
    else:
        clauses = [MatchQuery(query, column, boost=boost) for column, boost in fields]
    parts = subwords(query) if weights.subwords > 0 else ""
    if parts:
        clauses.append(MatchQuery(parts, "content_text", boost=weights.subwords / 2 * scale))
    clauses += [PhraseQuery(pair, "content_text", slop=PROXIMITY_SLOP) for pair in pairs]
    return clauses[0] if len(clauses) == 1 else BooleanQuery([(Occur.SHOULD, c) for c in clauses])


NAVIGATION_FROM = 0.5  # a chunk ranks lower once more than half of its text is a list of links
# A heading at least this many chunks share, and at least this share of them, names a kind of section
# ("Example Usage", "Values"), not its subject; so does no heading at all.
GENERIC_HEADING_CHUNKS = 5
GENERIC_HEADING_SHARE = 0.01


def says_nothing(info: ChunkInfo, index: PublishedIndex, query_stems: frozenset[str]) -> bool:
    """Bare code (no words of its own) under a heading that names no subject (index.generic_headings)
    and shares no word with the query: only its code can have matched the question."""
    return (
        info.bare_code
        and info.heading.strip().lower() in index.generic_headings
        and not stems(info.heading) & query_stems
    )


def text_scale(info: ChunkInfo, weights: Weights) -> float:
    """What a chunk's full-text and phrase scores are multiplied by: its share of `weights.text_short`
    characters of text. BM25 normalises by length, so a one-line chunk that repeats the query's words
    outscores the section that explains them; the answer is rarely in so little text."""
    if weights.text_short <= 0 or info.chars is None or info.chars >= weights.text_short:
        return 1.0
    return info.chars / weights.text_short


def in_language(info: ChunkInfo, language: str) -> bool:
    """Written for that language: its taxonomy says so, or its code blocks are in it."""
    value = info.metadata.get("language")
    return (value is not None and normalize_language(value) == language) or language in info.code_languages


def fuse(
    index: PublishedIndex, lists: dict[str, Ranked], weights: Weights, filters: dict[str, str], query: str = ""
) -> list[tuple[str, float]]:
    """The ranked lists → one ranking. With a vector list, the weighted sum of min-max scaled scores
    (score_fusion; `weights.hybrid` "rrf" ranks instead); full text alone, weighted RRF. Then a chunk with
    less text than `weights.short` characters (a bare title, a one-line stub) scales by its share of it; a
    chunk whose text is mostly a list of links (navigation over 0.5: an index, a table of contents, "see
    also") scales down linearly to 1 - `weights.navigation` when it is all links; bare code under a heading
    that names no subject and no word of the `query` scales by 1 - `weights.bare_code`; with a `language`
    filter, chunks in that language scale by 1 + `weights.language`; then one chunk per duplicated text
    (content_digest) and per page collapsed across a `vector_collapse` key. Ties break by chunk_id."""
    weight = {"text": weights.text, "phrase": weights.phrase, "vector": weights.vector}
    if weights.by_scores("vector" in lists):
        # a full-text list shorter than its depth holds every chunk the query matches (see _ranked's run)
        fused = score_fusion(
            [
                (weight[name], ranked[: weights.depth], name != "vector" and len(ranked) < weights.depth)
                for name, ranked in lists.items()
            ]
        )
    else:
        fused = rrf(
            [(weight[name], [cid for cid, _ in ranked[: weights.depth]]) for name, ranked in lists.items()], weights.k
        )
    language = normalize_language(filters["language"]) if "language" in filters else None
    query_stems = stems(query)
    if weights.short > 0 or weights.navigation > 0 or weights.bare_code > 0 or (language and weights.language):

        def prior(info: ChunkInfo) -> float:
            factor = min(1.0, (info.chars + 1) / weights.short) if weights.short > 0 and info.chars is not None else 1.0
            if weights.navigation > 0 and info.navigation > NAVIGATION_FROM:
                factor *= 1 - weights.navigation * (info.navigation - NAVIGATION_FROM) / (1 - NAVIGATION_FROM)
            if weights.bare_code > 0 and says_nothing(info, index, query_stems):
                factor *= 1 - weights.bare_code
            if language and weights.language and in_language(info, language):
                factor *= 1 + weights.language
            return factor

        fused = sorted(
            ((cid, score * prior(index.info[cid])) for cid, score in fused), key=lambda item: (-item[1], item[0])
        )
    active = [k for k in index.collapse_keys if k not in filters]
    seen: set[str] = set()
    kept = []
    for chunk_id, score in fused:
        info = index.info[chunk_id]
        groups = [
            g
            for g in (collapse_key(info, active) if active else None, f"digest:{info.digest}" if info.digest else None)
            if g is not None
        ]
        if not any(g in seen for g in groups):
            kept.append((chunk_id, score))
            seen.update(groups)
    return kept


def collapse_key(info: ChunkInfo, keys: list[str]) -> str | None:
    """Same page in another language: the path with the key's value starred, plus heading and part."""
    parts = info.filepath.split("/")
    starred = False
    for key in keys:
        value = info.metadata.get(key)
        if not value:
            return None
        if value in parts:
            parts[parts.index(value)] = "*"
            starred = True
    if not starred:
        return None
    part = re.search(r"-part-(\d+)$", info.chunk_id)
    return "/".join(parts) + ":" + info.heading + (f":{part.group(1)}" if part else "")


def hint_for(query: str, filters: dict[str, str], suggestions: dict[str, list[str]]) -> ZeroResultHint:
    """The zero-result hint: which values of the active filters would have matched."""
    summary = ", ".join(f"{k}='{v}'" for k, v in sorted(filters.items()))
    if suggestions:
        tips = "; ".join(f"{k}: {', '.join(v)}" for k, v in suggestions.items())
        message = (
            f"0 results found for query '{query}' with filters {summary}. It does match with other values ({tips})."
        )
    elif filters:
        message = f"0 results found for query '{query}' with filters {summary}, nor without them. Try other words."
    else:
        message = f"0 results found for query '{query}'. Try other words, an identifier, or a shorter query."
    return {"message": message, "suggested_filters": suggestions}


def match_case(filters: dict[str, Any], taxonomy: dict[str, TaxonomyKey]) -> dict[str, Any]:
    """Taxonomy values as indexed when they differ only in letter case from exactly one (`Python` -> `python`).

    search_docs and `docs-mcp search` both go through this, so they accept the same values.
    """
    fixed = dict(filters)
    for key, value in filters.items():
        allowed = taxonomy[key].values if key in taxonomy else []
        if isinstance(value, str) and value not in allowed:
            same = [v for v in allowed if v.casefold() == value.casefold()]
            if len(same) == 1:
                fixed[key] = same[0]
    return fixed


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
        self.remote = RemoteOutput.parse(self.out) if is_remote(self.out) else None
        self.signature = metadata_signature(self.out)  # before reading: a publish in between is noticed later
        self.metadata = self.remote.require_metadata() if self.remote else require_metadata(self.out)
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
        self._masks: dict[str, np.ndarray] = {}
        self._lock = asyncio.Lock()

    async def open(self) -> PublishedIndex:
        async with self._lock:
            if self.table is not None:
                return self
            import lancedb

            index = self.metadata.index
            if self.remote is None and index is not None:  # before LanceDB reads a damaged file (and may panic)
                problem = published_files_problem(OutputLayout(self.out), index.table, index.version)
                if problem:
                    raise unreadable_index(self.out, problem)
            try:
                uri = self.remote.lancedb_uri if self.remote else str(OutputLayout(self.out).lancedb)
                db = await lancedb.connect_async(uri)
                table = await db.open_table(self.table_name)
                if self.version is not None:
                    await table.checkout(self.version)
                await self._load(table)
            except SearchError:
                raise
            except BaseException as exc:  # no table, not that version, or damaged files
                if not is_read_failure(exc):
                    raise
                raise unreadable_index(self.out, exc) from None
        return self

    async def _load(self, table: Any) -> None:
        """What requests need in memory from the opened table version (row info, small texts and vectors)."""
        import pyarrow.compute as pc

        count = max(1, await table.count_rows())
        schema = await table.schema()
        self.has_vectors = "vector" in schema.names
        self.vector_indexed = self.has_vectors and has_vector_index(list(await table.list_indices()))
        self.rows = count
        # the snippet text itself: content_chars is content_text's length
        chars = await table.query().select(["content_chars"]).limit(count).to_arrow()
        text_bytes = int(pc.sum(chars.column("content_chars")).as_py() or 0)
        wanted = LIGHT_COLUMNS + DERIVED_COLUMNS + (["content_text"] if text_bytes <= MEMORY_TEXT_BYTES else [])
        wanted += [SOURCE_URL_COLUMN] if SOURCE_URL_COLUMN in schema.names else []  # website corpora
        dims, multivector = vector_column(schema)
        if self.has_vectors and self.embedding is not None and self.embedding.dimensions != dims:
            raise unreadable_index(
                self.out,
                f"its {METADATA} says the vectors have {self.embedding.dimensions} dimensions, the table's have {dims}",
            )
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
        row_ids = rows.column("_rowid").to_numpy()
        order = np.argsort(row_ids, kind="stable")
        self.row_ids = row_ids[order]
        self.row_chunks = [columns["chunk_id"][i] for i in order.tolist()]
        if "content_text" in columns:
            self.texts = dict(zip(columns["chunk_id"], columns["content_text"]))
        if "vector" in wanted:
            column = rows.column("vector").combine_chunks()
            if multivector:  # every passage is a row of the matrix; `passage_starts` says whose
                lengths = column.value_lengths().to_numpy(zero_copy_only=False)
                if not np.all(lengths == 1):
                    self.passage_starts = np.concatenate([[0], np.cumsum(lengths[:-1])]).astype(np.int64)
                matrix = column.flatten().flatten().to_numpy(zero_copy_only=False).reshape(-1, dims)
            else:
                matrix = column.values.to_numpy(zero_copy_only=False).reshape(-1, dims)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self.vectors = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
            self.ids = columns["chunk_id"]
            self.scan = await asyncio.to_thread(QuantizedScan.of, self.vectors)
        for i, chunk_id in enumerate(columns["chunk_id"]):
            languages = tuple(columns["code_languages"][i].split())
            digest = columns["content_digest"][i]
            chars = columns["content_chars"][i]
            self.info[chunk_id] = ChunkInfo(
                chunk_id,
                columns["filepath"][i],
                columns["heading"][i],
                columns["breadcrumb"][i],
                columns["chunk_index"][i],
                json.loads(columns["metadata"][i]),
                languages,
                digest,
                chars,
                columns[SOURCE_URL_COLUMN][i] if SOURCE_URL_COLUMN in columns else None,
                int(row_ids[i]),
                float(columns["navigation"][i] or 0.0),
                bool(columns["bare_code"][i]),
            )
        sizes = (
            await table.query()
            .select({"chunk_id": "chunk_id", "chars": "character_length(content)"})
            .limit(count)
            .to_arrow()
        )
        self.sizes = dict(zip(sizes.column("chunk_id").to_pylist(), sizes.column("chars").to_pylist()))
        self.files = {}
        for info in sorted(self.info.values(), key=lambda c: (c.filepath, c.chunk_index)):
            self.files.setdefault(info.filepath, []).append(info.chunk_id)
        headings = Counter(info.heading.strip().lower() for info in self.info.values())
        common = max(GENERIC_HEADING_CHUNKS, GENERIC_HEADING_SHARE * len(self.info))
        self.generic_headings = {heading for heading, n in headings.items() if n >= common} | {""}
        self.table = table

    def chunk_ids(self, row_ids: np.ndarray) -> list[str]:
        """The chunk IDs of the rows a query returned (selected by `_rowid`: no read of the chunk_id column)."""
        at = np.searchsorted(self.row_ids, row_ids)
        if len(at) and (int(at.max()) >= len(self.row_ids) or not np.array_equal(self.row_ids[at], row_ids)):
            raise RuntimeError("a query returned rows that the opened table version does not have")
        return [self.row_chunks[i] for i in at.tolist()]

    async def mask(self, where: str | None) -> np.ndarray | None:
        """Rows of `vectors` that pass a prefilter, from the same SQL LanceDB applies (cached)."""
        if where is None:
            return None
        if where not in self._masks:
            rows = await self.table.query().where(where).select(["chunk_id"]).limit(len(self.ids) or 1).to_arrow()
            allowed = set(rows.column("chunk_id").to_pylist())
            self._masks[where] = np.fromiter((cid in allowed for cid in self.ids), dtype=bool, count=len(self.ids))
        return self._masks[where]


@dataclass
class SearchPage:
    hits: list[SearchHit]
    next_cursor: str | None
    hint: ZeroResultHint | None = None
    mode: str = "text"  # "hybrid" when a query vector took part
    trimmed: TrimNote | None = None  # hits left out to fit max_chars, and how to get them
    modes: dict[str, str] | None = None  # each corpus's mode, when several are served
    unavailable: dict[str, str] | None = None  # corpora the search covers that cannot be read now, and why

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"hits": self.hits, "next_cursor": self.next_cursor, "hint": self.hint, "mode": self.mode}
        if self.modes:
            out["modes"] = self.modes
        if self.unavailable:
            out["unavailable"] = self.unavailable
        if self.trimmed:
            out["trimmed"] = self.trimmed
        return out


@dataclass
class SearchEngine:
    """Searches whatever index is currently published in `out`, switching when a new one is."""

    out: Path
    weights: Weights = field(default_factory=Weights)
    embedder_factory: Callable[[dict[str, Any]], QueryEmbedder] | None = None  # for the index's embedding block
    log: Any = None

    def __post_init__(self) -> None:
        self.out = location(self.out)
        self.current = PublishedIndex(self.out)  # first: nothing is written for a folder that is not an index
        self.secret = cursors.load_secret(self.out, log=self._log)
        self.embedder = self._embedder_for(self.current)
        self._cache: OrderedDict[tuple[Any, ...], list[tuple[str, float]]] = OrderedDict()
        self._reload_lock = asyncio.Lock()
        self._refused: tuple[Any, ...] | None = None

    def _embedder_for(self, index: PublishedIndex) -> QueryEmbedder | None:
        if self.embedder_factory is None or not index.embedding:
            return None
        return self.embedder_factory(index.embedding.to_json())

    def _log(self, message: str) -> None:
        if self.log:
            self.log(message)

    @_readable
    async def index(self) -> PublishedIndex:
        """The published index for this request; notices a new publish and switches to it.

        A local index whose metadata.json is gone was deleted: the index held open would answer from
        what is in memory until a read reaches a file that is gone, so it is reported at once instead.
        """
        signature = metadata_signature(self.out)
        if signature is None and not is_remote(self.out):
            raise index_gone(self.out)
        if signature != self.current.signature and signature is not None and signature != self._refused:
            async with self._reload_lock:
                if signature != self.current.signature:
                    try:
                        fresh = await PublishedIndex(self.out).open()
                    except Exception as exc:  # noqa: BLE001 - keep serving the index that works
                        self._refused = signature
                        self._log(
                            f"a new index was published but cannot be opened, still serving version "
                            f"{self.current.version}: {str(exc).splitlines()[0][:300]}"
                        )
                    else:
                        old = self.current
                        if fresh.embedding != old.embedding:
                            self.embedder = self._embedder_for(fresh)
                        self.current = fresh
                        self._cache.clear()
                        self._log(f"switched to the newly published index (table version {fresh.version})")
        return await self.current.open()

    def publish_refused(self) -> bool:
        """True when the publish now in metadata.json could not be opened and an older index serves."""
        return self._refused is not None and self._refused == metadata_signature(self.out)

    # -- search -----------------------------------------------------------------------------
    async def _query_vector(self, index: PublishedIndex, query: str) -> np.ndarray | None:
        if not index.has_vectors or self.embedder is None:
            return None
        return await self.embedder.vector_for(query)

    async def _ranked(self, index: PublishedIndex, query: str, where: str | None) -> dict[str, Ranked]:
        """The ranked candidate lists by signal, with their scores: "text" and "phrase" (BM25, scaled by
        text_scale) and "vector" (cosine similarity of the closest passage), when they apply.

        The query is embedded while the full-text queries run, not before them.
        """
        from lancedb.query import PhraseQuery

        table = index.table
        depth = self.weights.depth

        scaled = self.weights.text_short > 0

        async def run(make: Any, score: str, ascending: bool, limit: int, short: bool = False) -> Ranked:
            """The best `depth` rows by (score, chunk_id), whatever order the table holds its rows in: when
            rows tie with the last one kept, more are fetched (from `limit` rows, doubling) until the whole
            tie is in, then cut by ID. Rows come back by `_rowid` (PublishedIndex.chunk_ids), so no
            chunk_id column is read. With `short` (full-text scores) the candidates are the fetched rows
            that score above the last fetched one (all rows that do, so again not a matter of row order),
            re-ranked by score × `text_scale`: fetching until the scaled cut were exact cost ~25% of a
            text search on big corpora full of short chunks, for ranks past the fused list's reach."""
            sign = 1 if ascending else -1
            while True:
                builder = await make()
                if where:
                    builder = builder.where(where)
                rows = await builder.with_row_id().select([score]).limit(limit).to_arrow()
                raw = list(zip(rows.column(score).to_pylist(), index.chunk_ids(rows.column("_rowid").to_numpy())))
                full = len(raw) == limit  # more rows may match, some of them tied with the last fetched one
                if short:
                    last = max((sign * s for s, _ in raw), default=0.0)  # the last fetched row's sort key
                    kept = [(s, cid) for s, cid in raw if sign * s < last] if full else raw
                    if len(kept) >= depth or not full:
                        pairs = sorted(
                            ((s * text_scale(index.info[cid], self.weights), cid) for s, cid in kept),
                            key=lambda p: (sign * p[0], p[1]),
                        )
                        return [(cid, s) for s, cid in pairs[:depth]]
                else:
                    pairs = sorted(raw, key=lambda p: (sign * p[0], p[1]))
                    if not full or len(pairs) <= depth or pairs[-1][0] != pairs[depth - 1][0]:
                        return [(cid, s) for s, cid in pairs[:depth]]
                limit *= 2

        async def nearest() -> Ranked | None:
            vector = await self._query_vector(index, query)
            if vector is None:
                return None
            if index.vectors is not None:
                return await self._nearest_in_memory(index, vector, where, depth)

            async def vector_builder() -> Any:
                builder = table.vector_search(vector.astype(np.float32)).distance_type("cosine")
                return ann_query(builder, index.rows) if index.vector_indexed else builder

            return [
                (cid, 1.0 - distance)
                for cid, distance in await run(vector_builder, "_distance", True, depth + TIE_SLACK)
            ]

        async def text_builder() -> Any:
            return await table.search(text_query(query, index, self.weights), query_type="fts")

        async def phrase_builder() -> Any:
            return await table.search(PhraseQuery(query, "content_text", slop=0), query_type="fts")

        jobs = {"text": run(text_builder, "_score", False, FULL_TEXT_FETCH * depth + TIE_SLACK, scaled)}
        if phrase_applies(query):
            jobs["phrase"] = run(phrase_builder, "_score", False, FULL_TEXT_FETCH * depth + TIE_SLACK, scaled)
        jobs["vector"] = nearest()
        ranked = await asyncio.gather(*jobs.values())
        return {name: found for name, found in zip(jobs, ranked) if found is not None}

    async def _nearest_in_memory(
        self, index: PublishedIndex, vector: np.ndarray, where: str | None, depth: int = CANDIDATES
    ) -> Ranked:
        """Cosine ranking over the in-memory matrix; same prefilter, same tie-break as the table path."""
        assert index.vectors is not None
        query = vector.astype(np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        allowed = await index.mask(where)
        scan = functools.partial(nearest_rows, index.vectors, query, index.passage_starts, allowed, depth, index.scan)
        # a big matrix in a worker thread, so the full-text queries run meanwhile
        rows, scores = await asyncio.to_thread(scan) if index.vectors.nbytes >= THREADED_SCAN_BYTES else scan()
        if len(scores) > depth:  # every row tied with the depth-th best stays, then the cut is by ID
            kth = np.partition(-scores, depth - 1)[depth - 1]
            kept = np.flatnonzero(-scores <= kth)
            rows, scores = rows[kept], scores[kept]
        ranked = sorted(range(len(rows)), key=lambda i: (-float(scores[i]), index.ids[rows[i]]))[:depth]
        return [(index.ids[rows[i]], float(scores[i])) for i in ranked]

    def mode(self, index: PublishedIndex) -> str:
        """How a search would be answered now: "hybrid" once a query vector can take part, else "text"."""
        return (
            "hybrid"
            if index.has_vectors and self.embedder is not None and self.embedder.provider is not None
            else "text"
        )

    async def _fused(
        self, index: PublishedIndex, query: str, filters: dict[str, str]
    ) -> tuple[list[tuple[str, float]], str]:
        expected = self.mode(index)
        base = (index.key, " ".join(query.split()), tuple(sorted(filters.items())))
        if base + (expected,) in self._cache:
            self._cache.move_to_end(base + (expected,))
            return self._cache[base + (expected,)], expected
        lists = await self._ranked(index, query, where_clause(filters, index.taxonomy))
        mode = "hybrid" if "vector" in lists else "text"
        key = base + (mode,)
        fused = fuse(index, lists, self.weights, filters, query)
        self._cache[key] = fused
        if len(self._cache) > 256:
            self._cache.popitem(last=False)
        return fused, mode

    async def search(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        filters: dict[str, Any] | None = None,
        cursor: str | None = None,
        max_chars: int | None = None,
    ) -> SearchPage:
        """One page of hits; with `max_chars`, only the leading hits whose JSON fits (see answers.fit_page).

        The same code as a server of several corpora, with this one alone (library.Library).
        """
        from .library import Corpus, Library

        return await Library([Corpus("", self)]).search(
            query, limit=limit, filters=filters, cursor=cursor, max_chars=max_chars
        )

    async def _texts(self, index: PublishedIndex, ids: list[str], column: str = "content_text") -> dict[str, str]:
        if not ids:
            return {}
        if column == "content_text" and index.texts is not None:
            return {i: index.texts[i] for i in ids}
        rows = (
            await index.table.take_row_ids([index.info[i].row_id for i in ids])
            .with_row_id()
            .select([column])
            .to_arrow()
        )
        return dict(zip(index.chunk_ids(rows.column("_rowid").to_numpy()), rows.column(column).to_pylist()))

    async def _hint(self, index: PublishedIndex, query: str, filters: dict[str, str]) -> ZeroResultHint:
        """Which values of each active filter would have matched (found by dropping that filter)."""
        suggestions: dict[str, list[str]] = {}
        for key in sorted(filters):
            others = {k: v for k, v in filters.items() if k != key}
            fused, _ = await self._fused(index, query, others)
            values = {index.info[cid].metadata.get(key) for cid, _ in fused} - {None, filters[key]}
            if values:
                suggestions[key] = sorted(v for v in values if v)
        return hint_for(query, filters, suggestions)

    async def moved_on(self, index: PublishedIndex) -> bool:
        """Whether requests are now served from another index than `index` (a newer publish), so a
        request that failed on `index` (its version pruned under it) can try once more."""
        try:
            return await self.index() is not index
        except SearchError:
            return False

    # -- get_doc ----------------------------------------------------------------------------
    async def get_doc(
        self,
        chunk_id: str,
        context: int = 0,
        *,
        max_chars: int | None = None,
        offset: int = 0,
        tool: str = "get_doc",
        prefix: str = "",
    ) -> str:
        """A chunk's Markdown with `context` neighbours (see answers.render_doc for the budgets).

        A bare file path reads the file's first chunk, followed by the list of its chunk IDs.
        `prefix` ("corpus:" when several corpora are served) goes before every chunk ID the answer names.
        A request whose index version is pruned while it reads (it outlived two publishes) reads again,
        once, from the index published now.
        """
        if not isinstance(chunk_id, str) or not CHUNK_ID.match(chunk_id):
            raise SearchError(
                f"Chunk ID '{prefix}{chunk_id}' has invalid format. Expected {{filepath}} or "
                "{filepath}#{heading-path}, exactly as search_docs returns it."
            )
        if not isinstance(context, int) or not 0 <= context <= MAX_CONTEXT:
            raise SearchError(f"context must be an integer from 0 to {MAX_CONTEXT}")
        index = await self.index()
        pause("request")
        try:
            return await self._read_doc(index, chunk_id, context, max_chars, offset, tool, prefix)
        except UnreadableIndex:
            if not await self.moved_on(index):
                raise
        return await self._read_doc(await self.index(), chunk_id, context, max_chars, offset, tool, prefix)

    @_readable
    async def _read_doc(
        self,
        index: PublishedIndex,
        chunk_id: str,
        context: int,
        max_chars: int | None,
        offset: int,
        tool: str,
        prefix: str,
    ) -> str:
        target = index.info.get(chunk_id)
        listing = ""
        if target is None and "#" not in chunk_id and index.files.get(chunk_id):
            file_ids = index.files[chunk_id]
            target = index.info[file_ids[0]]
            listing = _file_listing(prefix + chunk_id, [prefix + i for i in file_ids], max_chars)
        if target is None:
            same_file = index.files.get(chunk_id.split("#", 1)[0], [])
            raise SearchError(
                f"Chunk ID '{prefix}{chunk_id}' not found. Use search_docs to discover valid chunk IDs."
                f"{_file_tip([prefix + i for i in same_file])}"
            )
        ids = index.files[target.filepath]
        position = ids.index(target.chunk_id)
        if not isinstance(offset, int) or not 0 <= offset < max(1, index.sizes.get(target.chunk_id, 1)):
            raise SearchError(
                f"offset must be an integer from 0 to {index.sizes.get(target.chunk_id, 1) - 1}: "
                f"the position in chunk '{prefix}{target.chunk_id}' to read on from, as a [trimmed: …] "
                "note gave it"
            )
        window = ids[max(0, position - context) : position + context + 1]
        contents = {prefix + i: text for i, text in (await self._texts(index, window, "content")).items()}
        if target.source_url:  # website corpora: the page to cite
            listing = f"\n\nSource: {target.source_url}{listing}"
        return answers.render_doc(
            prefix + target.chunk_id,
            [prefix + i for i in ids],
            [prefix + i for i in window],
            contents,
            max_chars=max_chars,
            offset=offset,
            tool=tool,
            trailer=listing,
        )

    def has(self, index: PublishedIndex, chunk_id: str) -> bool:
        """Whether get_doc would find this ID (a chunk, or a bare file path) in the index."""
        return chunk_id in index.info or ("#" not in chunk_id and chunk_id in index.files)

    def close(self) -> None:
        if self.embedder is not None:
            self.embedder.close()


FILE_TIP_IDS = 20


def _file_listing(path: str, file_ids: list[str], max_chars: int | None) -> str:
    """A file's chunk IDs after its first chunk; with a budget, as many as fit in half of it."""
    head = f"\n\n[{path} has {len(file_ids)} chunk{'s' if len(file_ids) != 1 else ''}: "
    shown = list(file_ids)
    while True:
        more = len(file_ids) - len(shown)
        tail = f" and {more} more (get_doc without max_chars lists them all)]" if more else "]"
        listing = head + ", ".join(shown) + tail
        if max_chars is None or len(listing) <= max_chars // 2 or len(shown) <= 1:
            return listing
        shown.pop()


def _file_tip(same_file: list[str]) -> str:
    """The chunk IDs of the file a bad chunk ID names: all of them, or the first ones and how many more."""
    if not same_file:
        return ""
    shown = ", ".join(same_file[:FILE_TIP_IDS])
    more = len(same_file) - FILE_TIP_IDS
    rest = (
        f' and {more} more (get_doc {{"chunk_id": "{same_file[0].split("#", 1)[0]}"}} lists them all)'
        if more > 0
        else ""
    )
    return f" That file has {len(same_file)} chunk{'s' if len(same_file) != 1 else ''}: {shown}{rest}."


def _stderr(message: str) -> None:
    print(f"docs-mcp: {message}", file=sys.stderr, flush=True)


def loaded_embedder(embedding: dict[str, Any]) -> QueryEmbedder:
    """For one-shot callers (the CLI): a query embedder whose model has finished loading."""
    from ..embedding.query import QueryEmbedder

    embedder = QueryEmbedder(embedding)
    embedder.wait()
    return embedder


def run_search(
    out: Path,
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    filters: dict[str, str] | None = None,
    hybrid: bool = True,
    weights: Weights | None = None,
) -> SearchPage:
    """One search from synchronous code, with the same engine the server uses."""

    async def once() -> SearchPage:
        engine = SearchEngine(
            out, weights or Weights(), embedder_factory=loaded_embedder if hybrid else None, log=_stderr
        )
        try:
            return await engine.search(query, limit=limit, filters=filters)
        finally:
            engine.close()

    return asyncio.run(once())


def run_get_doc(out: Path, chunk_id: str, *, context: int = 0, max_chars: int | None = None, offset: int = 0) -> str:
    """One get_doc from synchronous code: the engine call the get_doc tool makes for a served index."""

    async def once() -> str:
        engine = SearchEngine(out, Weights(), embedder_factory=None, log=_stderr)  # reading needs no query model
        try:
            return await engine.get_doc(chunk_id, context, max_chars=max_chars, offset=offset)
        finally:
            engine.close()

    return asyncio.run(once())
