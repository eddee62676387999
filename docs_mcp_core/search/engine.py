"""The engine of one corpus: the index published in its output folder (switching when a new one is),
its ranked lists, their fusion (cached), and get_doc. Library (library.py) is the request API over one
or several engines: callers search and read through it.

Three ranked lists from LanceDB, queried concurrently with the same prefilter: full-text (BM25
over heading, breadcrumb, content_text and identifier sub-words, plus term proximity; text_query.py),
exact phrase (content_text, positions; not sent when no chunk holds all its words, chunk_words.py), and vector similarity when the index has vectors and a
query vector is available; fusion.py makes one ranking of them.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SearchError
from ..failpoints import pause
from ..output.chunk import CHUNK_ID
from ..output.objectstore import is_remote, location
from ..output.vector_index import ann_query
from . import answers, bm25
from . import cursor as cursors
from .filters import Prefilter, prefilter
from .fusion import Ranked, fuse
from .limits import MAX_CONTEXT
from .priors import text_scale
from .published import ChunkInfo, PublishedIndex, metadata_signature
from .text_query import phrase_applies, text_query
from .unreadable import UnreadableIndex, index_gone, reading
from .vector_scan import nearest_rows
from .weights import Weights

if TYPE_CHECKING:
    from ..embedding.query import QueryEmbedder
    from .chunk_words import ChunkWords

CANDIDATES = 100  # per signal; the fused list (what pagination walks) is their union
# Candidates fetched beyond a list's depth, so a tie at the cut is usually settled in one query.
TIE_SLACK = 16
# BM25 ties are as wide as the copies of a text (chunks with the same words and length score the
# same: versioned or duplicated pages), so full-text lists first fetch this many times their depth
# (plus TIE_SLACK): LanceDB answers twice the rows about as fast, and a tie across copies is then
# settled in one query instead of two (benchmarks/scale.py).
FULL_TEXT_FETCH = 2
# Above this, the scan runs in a worker thread (numpy releases the GIL), overlapping the full-text
# queries instead of holding the event loop before they are sent; below, the hop costs more.
THREADED_SCAN_BYTES = 8 * 2**20
# A `--shared` session sets it (resident.serve_child): forked from a resident that has imported LanceDB,
# it answers its first searches from the table, sooner than the word positions are built.
FIRST_SEARCHES_FROM_TABLE = False
RESULT_CACHE = 256  # fused rankings kept per engine: an agent pages through and repeats its queries


async def memory_rows(
    index: PublishedIndex, chunks: np.ndarray, scores: np.ndarray, where: Prefilter | None
) -> Callable[[int], Awaitable[list[tuple[float, str]]]]:
    """SearchEngine.ranked's `run` fetch of a full-text list computed in memory (bm25.py): `chunks` (places in
    `index.word_chunks`) with their scores, those that pass `where`, best first, ties by chunk ID."""
    if where is not None and len(chunks):
        allowed = await index.allowed(where)
        kept = np.fromiter((index.word_chunks[i] in allowed for i in chunks.tolist()), dtype=bool, count=len(chunks))
        chunks, scores = chunks[kept], scores[kept]
    order = np.lexsort((index.word_ranks[chunks], -scores))

    async def fetch(limit: int) -> list[tuple[float, str]]:  # as many Python objects as LanceDB's rows would be
        top = order[:limit]
        return list(zip(scores[top].tolist(), (index.word_chunks[i] for i in chunks[top].tolist())))

    return fetch


async def phrase_rows(
    index: PublishedIndex, query: str, holding: np.ndarray, where: Prefilter | None
) -> Callable[[int], Awaitable[list[tuple[float, str]]]]:
    """The exact-phrase list's fetch from memory: the chunks `holding` the phrase, scored as LanceDB scores
    them (bm25.py)."""
    assert index.words is not None
    return await memory_rows(index, holding, bm25.scores(index.words, index.words.terms(query) or [], holding), where)


@dataclass
class SearchEngine:
    """Searches whatever index is currently published in `out`, switching when a new one is."""

    out: Path | str  # a folder, or an s3:// URL
    weights: Weights = field(default_factory=Weights)
    embedder_factory: Callable[[dict[str, Any]], QueryEmbedder] | None = None  # for the index's embedding block
    log: Callable[[str], None] | None = None
    # build the word positions (chunk_words.py) after the first search: worth it for a server that answers on,
    # not for a one-shot search that would only start the thread and exit
    word_positions: bool = True

    def __post_init__(self) -> None:
        self.out = location(self.out)
        self.current = PublishedIndex(self.out)  # first: nothing is written for a folder that is not an index
        self.secret = cursors.load_secret(self.out, log=self.say)
        self.embedder = self._embedder_for(self.current)
        self._cache: OrderedDict[tuple[Any, ...], list[tuple[str, float]]] = OrderedDict()
        self._reload_lock = asyncio.Lock()
        self._refused: tuple[Any, ...] | None = None

    def _embedder_for(self, index: PublishedIndex) -> QueryEmbedder | None:
        if self.embedder_factory is None or not index.embedding:
            return None
        return self.embedder_factory(index.embedding.to_json())

    def say(self, message: str) -> None:
        """A line for the server log (stderr), when this engine has one."""
        if self.log:
            self.log(message)

    async def index(self) -> PublishedIndex:
        """The published index for this request; notices a new publish and switches to it.

        A local index whose metadata.json is gone was deleted: the index held open would answer from
        what is in memory until a read reaches a file that is gone, so it is reported at once instead.
        """
        with reading(self.out):
            signature = metadata_signature(self.out)
            if signature is None and not is_remote(self.out):
                raise index_gone(self.out)
            if signature != self.current.signature and signature is not None and signature != self._refused:
                async with self._reload_lock:
                    if signature != self.current.signature:
                        await self._switch(signature)
            return await self.current.open()

    async def _switch(self, signature: tuple[Any, ...]) -> None:
        try:
            fresh = await PublishedIndex(self.out).open()
        except Exception as exc:  # noqa: BLE001 - keep serving the index that works
            self._refused = signature
            self.say(
                f"a new index was published but cannot be opened, still serving version "
                f"{self.current.version}: {str(exc).splitlines()[0][:300]}"
            )
            return
        if fresh.embedding != self.current.embedding:
            self.embedder = self._embedder_for(fresh)
        self.current = fresh
        self._cache.clear()
        self.say(f"switched to the newly published index (table version {fresh.version})")

    async def warm(self) -> PublishedIndex:
        """Open the published index before the first request; for one read from its serving snapshot, also
        start building the word positions its full-text lists come from."""
        index = await self.index()
        if index.table is None and self.word_positions:
            index.build_words()
        return index

    def publish_refused(self) -> bool:
        """True when the publish now in metadata.json could not be opened and an older index serves."""
        return self._refused is not None and self._refused == metadata_signature(self.out)

    async def moved_on(self, index: PublishedIndex) -> bool:
        """Whether requests are now served from another index than `index` (a newer publish), so a
        request that failed on `index` (its version pruned under it) can try once more."""
        try:
            return await self.index() is not index
        except SearchError:
            return False

    def mode(self, index: PublishedIndex) -> str:
        """How a search would be answered now: "hybrid" once a query vector can take part, else "text"."""
        return (
            "hybrid"
            if index.has_vectors and self.embedder is not None and self.embedder.provider is not None
            else "text"
        )

    # -- ranking ----------------------------------------------------------------------------
    async def query_vector(self, index: PublishedIndex, query: str) -> np.ndarray | None:
        """The query's vector, or None (no vectors, no model, or the model is loading or failing)."""
        if not index.has_vectors or self.embedder is None:
            return None
        return await self.embedder.vector_for(query)

    async def ranked(self, index: PublishedIndex, query: str, where: Prefilter | None) -> dict[str, Ranked]:
        """The ranked candidate lists by signal, with their scores: "text" and "phrase" (BM25, scaled by
        text_scale) and "vector" (cosine similarity of the closest passage), when they apply.

        The query is embedded while the full-text queries run, not before them.
        """
        # read from its snapshot: the word positions answer instead of LanceDB, once built (a one-shot search
        # imports LanceDB rather than build them); the vector list does not wait for them
        waiting = index.table is None and self.word_positions
        if waiting:
            index.build_words()
        depth = self.weights.depth

        scaled = self.weights.text_short > 0

        async def run(
            fetch: Callable[[int], Awaitable[list[tuple[float, str]]]], ascending: bool, limit: int, short: bool = False
        ) -> Ranked:
            """The best `depth` rows by (score, chunk_id), whatever order the table holds its rows in: when
            rows tie with the last one kept, more are fetched (from `limit` rows, doubling) until the whole
            tie is in, then cut by ID. `fetch(limit)` gives the best `limit` (score, chunk ID) pairs, ties at
            the cut in any order. With `short` (full-text scores) the candidates are the fetched rows
            that score above the last fetched one (all rows that do, so again not a matter of row order),
            re-ranked by score × `text_scale`: fetching until the scaled cut were exact would cost a good
            share of a text search on big corpora full of short chunks, for ranks past the fused list's reach."""
            sign = 1 if ascending else -1
            while True:
                raw = await fetch(limit)
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

        def table_rows(make: Any, score: str) -> Callable[[int], Awaitable[list[tuple[float, str]]]]:
            """`run`'s fetch from a LanceDB query: rows come back by `_rowid` (PublishedIndex.chunk_ids), so no
            chunk_id column is read."""

            async def fetch(limit: int) -> list[tuple[float, str]]:
                builder = await make()
                if where is not None:
                    builder = builder.where(where.sql)
                rows = await builder.with_row_id().select([score]).limit(limit).to_arrow()
                return list(zip(rows.column(score).to_pylist(), index.chunk_ids(rows.column("_rowid").to_numpy())))

            return fetch

        async def nearest() -> Ranked | None:
            vector = await self.query_vector(index, query)
            if vector is None:
                return None
            if index.vectors is not None:
                return await self.nearest_in_memory(index, vector, where, depth)

            async def vector_builder() -> Any:
                table = await index.lance()
                builder = table.vector_search(vector.astype(np.float32)).distance_type("cosine")
                return ann_query(builder, index.rows) if index.vector_indexed else builder

            return [
                (cid, 1.0 - distance)
                for cid, distance in await run(table_rows(vector_builder, "_distance"), True, depth + TIE_SLACK)
            ]

        async def text_builder() -> Any:
            table = await index.lance()
            return await table.search(text_query(query, index, self.weights), query_type="fts")

        async def phrase_builder() -> Any:
            from lancedb import query as lancedb_query

            fts: Any = lancedb_query  # pydantic dataclasses: their keyword defaults are invisible to mypy
            table = await index.lance()
            return await table.search(fts.PhraseQuery(query, "content_text", slop=0), query_type="fts")

        fetch = FULL_TEXT_FETCH * depth + TIE_SLACK

        async def positions() -> ChunkWords | None:
            if waiting and not FIRST_SEARCHES_FROM_TABLE:
                await index.words_built()
            return index.words

        async def text() -> Ranked:
            words = await positions()
            # LanceDB's rows and scores from the word positions of every full-text column (bm25.py), or None
            found = (
                bm25.full_text(words, index.field_words, query, self.weights) if words and index.field_words else None
            )
            rows = await memory_rows(index, *found, where) if found else table_rows(text_builder, "_score")
            return await run(rows, False, fetch, scaled)

        async def phrase() -> Ranked:
            words = await positions()
            holding = words.holding(query) if words is not None and index.bm25_here else None
            if holding is not None:  # LanceDB's rows and scores, from the word positions
                return await run(await phrase_rows(index, query, holding, where), False, fetch, scaled)
            if words is None or words.may_match(query):
                return await run(table_rows(phrase_builder, "_score"), False, fetch, scaled)
            return []  # no chunk holds every word of the phrase: what the query would find

        # the vector list first: the query's embedding starts in its thread before the full-text lists are
        # computed in memory, on this one
        jobs: dict[str, Awaitable[Ranked | None]] = {"vector": nearest(), "text": text()}
        if phrase_applies(query):
            jobs["phrase"] = phrase()
        found = dict(zip(jobs, await asyncio.gather(*jobs.values())))
        if self.word_positions:
            index.build_words()
        return {name: ranked for name in ("text", "phrase", "vector") if (ranked := found.get(name)) is not None}

    async def nearest_in_memory(
        self, index: PublishedIndex, vector: np.ndarray, where: Prefilter | None, depth: int = CANDIDATES
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

    async def fused(
        self, index: PublishedIndex, query: str, filters: dict[str, str]
    ) -> tuple[list[tuple[str, float]], str]:
        """The one ranking of this corpus for a query and validated filters, and its mode ("hybrid" or
        "text"); the last RESULT_CACHE are kept, so paging and repeated queries rank once."""
        expected = self.mode(index)
        base = (index.key, " ".join(query.split()), tuple(sorted(filters.items())))
        if base + (expected,) in self._cache:
            self._cache.move_to_end(base + (expected,))
            return self._cache[base + (expected,)], expected
        lists = await self.ranked(index, query, prefilter(filters, index.taxonomy))
        mode = "hybrid" if "vector" in lists else "text"
        key = base + (mode,)
        fused = fuse(index, lists, self.weights, filters, query)
        self._cache[key] = fused
        if len(self._cache) > RESULT_CACHE:
            self._cache.popitem(last=False)
        return fused, mode

    async def texts(self, index: PublishedIndex, ids: list[str], column: str = "content_text") -> dict[str, str]:
        """A column's text of these chunks: content_text (snippets) from memory when the index keeps it there."""
        if not ids:
            return {}
        if column == "content_text" and index.texts is not None:
            return {i: index.texts[i] for i in ids}
        if column == "content" and index.snapshot is not None:
            return await asyncio.to_thread(index.contents, ids)
        table = await index.lance()
        rows = await table.take_row_ids([index.info[i].row_id for i in ids]).with_row_id().select([column]).to_arrow()
        return dict(zip(index.chunk_ids(rows.column("_rowid").to_numpy()), rows.column(column).to_pylist()))

    async def suggestions(self, index: PublishedIndex, query: str, filters: dict[str, str]) -> dict[str, list[str]]:
        """Which values of each active filter would have matched (found by dropping that filter)."""
        suggestions: dict[str, list[str]] = {}
        for key in sorted(filters):
            others = {k: v for k, v in filters.items() if k != key}
            fused, _ = await self.fused(index, query, others)
            values = {index.info[cid].metadata.get(key) for cid, _ in fused} - {None, filters[key]}
            if values:
                suggestions[key] = sorted(v for v in values if v)
        return suggestions

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
        lead: Callable[[PublishedIndex, ChunkInfo], str] | None = None,
    ) -> str:
        """A chunk's Markdown with `context` neighbours (see answers.render_doc for the budgets).

        A bare file path reads the file's first chunk, followed by the list of its chunk IDs.
        `prefix` ("corpus:" when several corpora are served) goes before every chunk ID the answer names;
        `lead(index, target)` gives the lines the answer opens with (within max_chars).
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
            with reading(self.out):
                return await self._read_doc(index, chunk_id, context, max_chars, offset, tool, prefix, lead)
        except UnreadableIndex:
            if not await self.moved_on(index):
                raise
        index = await self.index()
        with reading(self.out):
            return await self._read_doc(index, chunk_id, context, max_chars, offset, tool, prefix, lead)

    async def _read_doc(
        self,
        index: PublishedIndex,
        chunk_id: str,
        context: int,
        max_chars: int | None,
        offset: int,
        tool: str,
        prefix: str,
        lead: Callable[[PublishedIndex, ChunkInfo], str] | None = None,
    ) -> str:
        target = index.info.get(chunk_id)
        listing = ""
        if target is None and "#" not in chunk_id and index.files.get(chunk_id):
            file_ids = index.files[chunk_id]
            target = index.info[file_ids[0]]
            listing = answers.file_listing(prefix + chunk_id, [prefix + i for i in file_ids], max_chars)
        if target is None and (why := index.withheld(chunk_id)):
            raise SearchError(
                f"Chunk '{prefix}{chunk_id}' was withheld at build time by the trust scan: {why}; "
                "`docs-mcp validate` on the docs shows what it found."
            )
        if target is None and index.metadata.unlisted(chunk_id):
            raise SearchError(
                f"Chunk '{prefix}{chunk_id}' is not served. It may have been withheld at build time by the trust "
                f"scan, which withheld {index.metadata.quarantined_count} chunks, more than metadata.json names; "
                "`docs-mcp validate` on the docs shows them all. Use search_docs to discover valid chunk IDs."
            )
        if target is None:
            same_file = index.files.get(chunk_id.split("#", 1)[0], [])
            raise SearchError(
                f"Chunk ID '{prefix}{chunk_id}' not found. Use search_docs to discover valid chunk IDs."
                f"{answers.file_tip([prefix + i for i in same_file])}"
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
        contents = {prefix + i: text for i, text in (await self.texts(index, window, "content")).items()}
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
            lead=lead(index, target) if lead else "",
        )

    def close(self) -> None:
        if self.embedder is not None:
            self.embedder.close()
