"""Several corpora behind one search_docs and get_doc: each corpus keeps its own engine (its own
index, hot reload and result cache; corpora built with one model share its query embedder and its
recent query vectors); this searches them all at once, fuses their rankings and names their chunks.

One corpus is the n=1 case of the same code: no `corpus:` prefix, no `corpus` field, scores
and cursors exactly as a lone SearchEngine gives them (SearchEngine.search comes here).

Fusion across corpora: a corpus's fused score is relative to its own candidates (weighted
reciprocal rank fusion of its full-text rankings, or with vectors the weighted sum of each list's
scores scaled to 0..1 over its candidates, engine.fuse), so scores of different corpora are on
one scale once divided by the best score that query could get there (every signal that ran
ranking the chunk first). Merging by that normalised score means the number
of hits a corpus has never matters, only how well each hit ranks inside its own corpus: a
corpus with many weak hits cannot outweigh a chunk another corpus ranks first by every signal,
and a chunk every signal agrees on comes before one only BM25 likes.
BM25 scores themselves are not compared: their IDF differs from corpus to corpus.

Rank-based fusion alone puts every corpus's best hit near the top, even for a question only
one corpus can answer (on the shipped suites, serving dub-ts and uv-docs together cost MRR@5
0.605 -> 0.528 and 0.692 -> 0.621). So when every corpus searched has vectors from the same
model, cosine similarity is comparable across them, and each corpus's scores are scaled by
(its best chunk's similarity to the query / the best corpus's) ** CORPUS_SIMILARITY_POWER:
a corpus that has nothing close to the question sinks as a whole, while the order inside each
corpus is unchanged (with it, both suites score as well as with their corpus alone).
Ties break by corpus order (as served), then chunk ID, so results stay deterministic.
"""

from __future__ import annotations

import asyncio
import contextlib
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import SearchError
from ..failpoints import pause
from ..output.metadata import PublishedMetadata, TaxonomyKey
from . import answers
from . import cursor as cursors
from .engine import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    PublishedIndex,
    SearchEngine,
    SearchPage,
    UnreadableIndex,
    hint_for,
    is_read_failure,
    match_case,
    phrase_applies,
    snippet,
    unreadable_index,
    validate_filters,
)
from .hits import SearchHit, TrimNote, ZeroResultHint

_T = TypeVar("_T")
CORPUS_SIMILARITY_POWER = 3  # see the module docstring; 1-2 recover most of the loss, 3 and up all of it


@dataclass
class Corpus:
    """One served corpus: its name (the chunk ID prefix when several are served) and engine."""

    name: str
    engine: SearchEngine
    description: str | None = None  # from docs-mcp.yaml's serve section; else the index's own

    def describe(self, index: PublishedIndex) -> str:
        text = self.description or index.metadata.corpus_description or f"the {self.name} documentation"
        return text.strip().rstrip(".").rstrip()


class CorpusFailed(Exception):  # noqa: N818 - carries a SearchError to the code that decides what to do
    """A corpus's index could not be read while a request was using `index`: Library.search retries once
    on a newer publish, or answers from the other corpora and says which one is missing."""

    def __init__(self, corpus: Corpus, index: PublishedIndex, error: UnreadableIndex) -> None:
        super().__init__(str(error))
        self.corpus, self.index, self.error = corpus, index, error


@contextlib.contextmanager
def _reading(corpus: Corpus, index: PublishedIndex) -> Iterator[None]:
    """A LanceDB failure names the corpus's folder in one sentence, as a lone engine does."""
    try:
        yield
    except UnreadableIndex as exc:
        raise CorpusFailed(corpus, index, exc) from None
    except SearchError:
        raise
    except BaseException as exc:
        if not is_read_failure(exc):
            raise
        raise CorpusFailed(corpus, index, unreadable_index(corpus.engine.out, exc)) from None


async def _each(
    scope: list[tuple[Corpus, PublishedIndex]], work: Callable[[Corpus, PublishedIndex], Awaitable[_T]]
) -> list[_T]:
    """work(corpus, index) for every corpus searched, all at once (their LanceDB queries share the cores),
    each under _reading; results in scope order. Every corpus finishes before the first failure is raised."""

    async def one(c: Corpus, index: PublishedIndex) -> _T:
        with _reading(c, index):
            return await work(c, index)

    results = await asyncio.gather(*(one(c, index) for c, index in scope), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


@dataclass(frozen=True)
class Served:
    """The published index of every corpus that requests use now.

    A corpus that cannot be read is still listed, with the last index it had (its metadata.json gives
    the tool schemas their corpus and taxonomy values), and in `unavailable` with the reason.
    """

    pairs: tuple[tuple[Corpus, PublishedIndex], ...]
    unavailable: Mapping[str, str] = field(default_factory=dict)  # corpus name -> why it cannot be read now

    @property
    def several(self) -> bool:
        return len(self.pairs) > 1

    def same(self, other: Served | None) -> bool:
        return (
            other is not None
            and len(other.pairs) == len(self.pairs)
            and all(a[1] is b[1] for a, b in zip(self.pairs, other.pairs))
        )

    def key(self, scope: list[tuple[Corpus, PublishedIndex]]) -> str:
        """What a cursor is bound to: the indexes it pages through. A republish of a corpus it
        searched makes it stale; one of a corpus it did not search (other filters, `corpus`) does not."""
        if not self.several:
            return self.pairs[0][1].key
        return "|".join(f"{corpus.name}={index.key}" for corpus, index in scope)

    @property
    def taxonomy(self) -> dict[str, TaxonomyKey]:
        """Every corpus's taxonomy keys, each with the values of all corpora (first corpus's description)."""
        if not self.several:
            return self.pairs[0][1].taxonomy
        union: dict[str, TaxonomyKey] = {}
        for _, index in self.pairs:
            for key, spec in index.taxonomy.items():
                if key not in union:
                    union[key] = spec.model_copy(update={"values": list(spec.values)})
                else:
                    union[key].values += [v for v in spec.values if v not in union[key].values]
        return union

    @property
    def by_corpus(self) -> dict[str, dict[str, list[str]]]:
        """Key -> corpus -> its values, for the keys whose values are not the same in every corpus."""
        if not self.several:
            return {}
        spread: dict[str, dict[str, list[str]]] = {}
        for key in self.taxonomy:
            spread[key] = {c.name: list(i.taxonomy[key].values) if key in i.taxonomy else [] for c, i in self.pairs}
        return {k: v for k, v in spread.items() if len({tuple(sorted(values)) for values in v.values()}) > 1}

    @property
    def hybrid(self) -> bool:
        return any(index.embedding is not None for _, index in self.pairs)

    @property
    def metadata(self) -> PublishedMetadata:
        """What the tool description reads: the lone index's metadata, or a summary of all of them."""
        if not self.several:
            return self.pairs[0][1].metadata
        parts = "; ".join(f"{corpus.name}: {corpus.describe(index)}" for corpus, index in self.pairs)
        return PublishedMetadata(
            corpus_description=f"documentation of {len(self.pairs)} corpora ({parts})", taxonomy=self.taxonomy
        )

    def corpora(self) -> list[tuple[str, str]]:
        return [(corpus.name, corpus.describe(index)) for corpus, index in self.pairs]

    def missing(
        self, name: str | None, filters: dict[str, str], failed: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """The corpora a search would cover but cannot read now (`unavailable`, or `failed` during the
        request), each with the reason."""
        down = {**self.unavailable, **(failed or {})}
        return {
            c.name: down[c.name]
            for c, i in self.pairs
            if c.name in down and (name is None or c.name == name) and _fits(i, filters)
        }

    def scope(
        self, name: str | None, filters: dict[str, str], failed: Mapping[str, str] | None = None
    ) -> list[tuple[Corpus, PublishedIndex]]:
        """The corpora a search runs in: the one named, else every corpus where each filter value exists,
        leaving out those that cannot be read now (see `missing`)."""
        names = [corpus.name for corpus, _ in self.pairs]
        if name is not None and name not in names:
            raise SearchError(f"Unknown corpus '{name}'. Served corpora: {', '.join(names)}.")
        chosen = [(c, i) for c, i in self.pairs if name is None or c.name == name]
        missing = self.missing(name, filters, failed)
        scope = [(c, i) for c, i in chosen if _fits(i, filters) and c.name not in missing]
        if not scope and missing:
            why = "; ".join(f"corpus '{n}': {reason}" for n, reason in missing.items())
            raise SearchError(f"No corpus this search covers can be read now ({why}).")
        if not scope:
            wanted = ", ".join(f"{k}='{v}'" for k, v in sorted(filters.items()))
            where = f"corpus '{name}'" if name is not None else "any one corpus"
            have = "; ".join(
                f"{c.name}: "
                + ", ".join(
                    f"{k} in ({', '.join(i.taxonomy[k].values if k in i.taxonomy else [])})" for k in sorted(filters)
                )
                for c, i in chosen
            )
            raise SearchError(
                f"No match for filters {wanted} in {where}: each corpus has its own values ({have}). "
                "Drop a filter or pick values of one corpus."
            )
        return scope


def _fits(index: PublishedIndex, filters: dict[str, str]) -> bool:
    """Whether every filter value is one of the index's taxonomy values."""
    return all(key in index.taxonomy and value in index.taxonomy[key].values for key, value in filters.items())


@dataclass
class Library:
    """The corpora one server serves, searched together; the first one's cursor secret signs cursors.

    With several corpora, one that cannot be read (damaged, deleted) is reported in the answers that
    would cover it, and the others keep answering; the server log says when it breaks and recovers.
    """

    corpora: list[Corpus]
    by_name: dict[str, Corpus] = field(init=False)
    # corpus -> the reason last logged, and the index a search failed to read (None: it failed to open)
    _down: dict[str, tuple[str, PublishedIndex | None]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.by_name = {corpus.name: corpus for corpus in self.corpora}

    def _report(self, corpus: Corpus, reason: str | None, *, read: PublishedIndex | None = None) -> None:
        """One log line when a corpus becomes unreadable, one when it recovers (not one per request).

        A corpus whose index opens but failed while a search read it (`read`) has recovered only once
        a search reads it; opening it again says nothing.
        """
        down = self._down.get(corpus.name)
        if reason is None:
            if down is not None and (read is not None or down[1] is None):
                del self._down[corpus.name]
                corpus.engine._log(f"corpus '{corpus.name}' can be read again")
        else:
            self._down[corpus.name] = (reason, read)
            if down is None:
                corpus.engine._log(f"corpus '{corpus.name}' cannot be read; the other corpora keep answering: {reason}")

    def read_failure(self, corpus: Corpus) -> str | None:
        """Why the last search could not read this corpus's index, while that index is still the one served
        (it opens, so only a search finds out: /healthz reports it from here)."""
        down = self._down.get(corpus.name)
        return down[0] if down is not None and down[1] is not None and down[1] is corpus.engine.current else None

    @property
    def several(self) -> bool:
        return len(self.corpora) > 1

    def starting(self) -> Served:
        """What is published now, without opening any table (for `initialize` and `tools/list`)."""
        return Served(tuple((c, c.engine.current) for c in self.corpora))

    async def served(self) -> Served:
        """Each corpus's current index, switching any corpus that was republished (each on its own).

        A lone corpus that cannot be read raises its error; with several, it is listed as unavailable.
        """
        if not self.several:
            corpus = self.corpora[0]
            return Served(((corpus, await corpus.engine.index()),))
        pairs, unavailable = [], {}
        for corpus in self.corpora:
            try:
                index = await corpus.engine.index()
            except Exception as exc:  # noqa: BLE001 - one corpus must not take the others down
                if not isinstance(exc, SearchError):
                    corpus.engine._log(f"opening corpus '{corpus.name}' failed:\n{traceback.format_exc()}")
                    exc = unreadable_index(corpus.engine.out, exc)
                unavailable[corpus.name] = str(exc)
                pairs.append((corpus, corpus.engine.current))
            else:
                pairs.append((corpus, index))
            self._report(corpus, unavailable.get(corpus.name))
        return Served(tuple(pairs), unavailable)

    async def serving(self) -> Served:
        """served(), but before the first request has opened LanceDB the metadata read at start stands in."""
        if any(corpus.engine.current.table is None for corpus in self.corpora):
            return self.starting()
        return await self.served()

    def changed(self) -> bool:
        """A corpus was republished since its index was opened (each corpus's metadata.json is watched)."""
        from .engine import metadata_signature

        return any(
            c.engine.current.table is not None and metadata_signature(c.engine.out) != c.engine.current.signature
            for c in self.corpora
        )

    # -- search -----------------------------------------------------------------------------
    async def search(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        filters: dict[str, Any] | None = None,
        cursor: str | None = None,
        max_chars: int | None = None,
        corpus: str | None = None,
    ) -> SearchPage:
        """One page of hits from the corpora the request covers.

        A corpus that fails while the request reads it is tried once more if a newer version of it
        was published meanwhile (the one the request held may have been pruned: only the published
        version and the one before it are kept); else, with several corpora, the page comes from the
        others and `unavailable` says which corpus is missing and why.
        """
        query = (query or "").strip()
        if not query:
            raise SearchError("query must be a non-empty string: describe what you are looking for")
        if not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise SearchError(f"limit must be an integer from 1 to {MAX_LIMIT}")
        served = await self.served()
        pause("request")
        retried: set[str] = set()
        failed: dict[str, str] = {}
        while True:
            try:
                return await self._search(served, failed, query, limit, filters, cursor, max_chars, corpus)
            except CorpusFailed as exc:
                name = exc.corpus.name
                if name not in retried and await exc.corpus.engine.moved_on(exc.index):
                    retried.add(name)
                    served = await self.served()
                    continue
                if not served.several:
                    raise exc.error from None
                failed[name] = str(exc.error)
                self._report(exc.corpus, failed[name], read=exc.index)

    async def _search(
        self,
        served: Served,
        failed: dict[str, str],
        query: str,
        limit: int,
        filters: dict[str, Any] | None,
        cursor: str | None,
        max_chars: int | None,
        corpus: str | None,
    ) -> SearchPage:
        taxonomy = served.taxonomy
        clean = validate_filters(match_case(filters or {}, taxonomy), taxonomy)
        scope = served.scope(corpus, clean, failed)
        unavailable = served.missing(corpus, clean, failed) or None
        request = {**clean, "corpus": corpus} if corpus is not None else clean  # what a cursor is bound to
        secret = self.corpora[0].engine.secret
        offset = cursors.decode(secret, cursor, query=query, filters=request, index=served.key(scope)) if cursor else 0
        order = {c.name: n for n, (c, _) in enumerate(served.pairs)}
        ranked: list[tuple[Corpus, PublishedIndex, str, float]] = []
        modes: dict[str, str] = {}

        # Every corpus at once: corpora built with one model also share its query vector
        # (QueryEmbedder.vector_for). One by one, each corpus added a whole search.
        fused_lists = await _each(scope, lambda c, index: c.engine._fused(index, query, clean))
        for c, index in scope if served.several else []:
            self._report(c, None, read=index)
        for (c, index), (fused, modes[c.name]) in zip(scope, fused_lists):
            best = _best_score(c.engine, query, modes[c.name]) if served.several else 1.0
            ranked += [(c, index, chunk_id, score / best) for chunk_id, score in fused]
        if served.several:
            closest = await _closest(scope, query, modes)
            if closest:
                top = max(closest.values()) or 1.0
                ranked = [
                    (c, i, cid, s * (max(closest[c.name], 0.0) / top) ** CORPUS_SIMILARITY_POWER)
                    for c, i, cid, s in ranked
                ]
        if served.several:
            ranked.sort(key=lambda r: (-r[3], order[r[0].name], r[2]))
        rows = ranked[offset : offset + limit]

        found = await _each(scope, lambda c, index: c.engine._texts(index, [cid for rc, _, cid, _ in rows if rc is c]))
        texts = {(c.name, chunk_id): text for (c, _), by_id in zip(scope, found) for chunk_id, text in by_id.items()}
        hits: list[SearchHit] = []
        for c, index, chunk_id, score in rows:
            info = index.info[chunk_id]
            hit: SearchHit = {
                "chunk_id": f"{c.name}:{chunk_id}" if served.several else chunk_id,
                **({"corpus": c.name} if served.several else {}),  # type: ignore[typeddict-item]
                "score": round(score, 6),
                "heading": info.heading,
                "breadcrumb": info.breadcrumb,
                "snippet": snippet(texts.get((c.name, chunk_id), ""), query),
                "filepath": info.filepath,
                "metadata": info.metadata,
                "chars": index.sizes.get(chunk_id, 0),
            }
            if info.source_url:  # website corpora: the page to cite
                hit["source_url"] = info.source_url
            hits.append(hit)
        more = offset + limit < len(ranked)

        def cursor_at(position: int) -> str:
            return cursors.encode(secret, offset=position, query=query, filters=request, index=served.key(scope))

        next_cursor = cursor_at(offset + limit) if more else None
        hint = await self._hint(scope, query, clean) if not hits and offset == 0 else None
        mode = "hybrid" if modes and all(m == "hybrid" for m in modes.values()) else "text"
        shown_modes = modes if served.several else None
        page = SearchPage(hits, next_cursor, hint, mode, modes=shown_modes, unavailable=unavailable)
        if max_chars is not None and hits:

            def page_json(kept: list[SearchHit], next_at: str | None, note: TrimNote | None) -> dict[str, Any]:
                return SearchPage(kept, next_at, hint, mode, note, shown_modes, unavailable).to_json()

            page.hits, page.next_cursor, page.trimmed = answers.fit_page(
                page_json, hits, next_cursor, lambda kept: cursor_at(offset + kept), max_chars
            )
        return page

    async def _hint(
        self, scope: list[tuple[Corpus, PublishedIndex]], query: str, filters: dict[str, str]
    ) -> ZeroResultHint:
        """The zero-result hint over the corpora searched: the other values that would match, in any of them."""
        merged: dict[str, set[str]] = {}
        for hint in await _each(scope, lambda c, index: c.engine._hint(index, query, filters)):
            for key, values in hint["suggested_filters"].items():
                merged.setdefault(key, set()).update(values)
        return hint_for(query, filters, {key: sorted(values) for key, values in sorted(merged.items())})

    # -- get_doc ----------------------------------------------------------------------------
    async def get_doc(
        self, chunk_id: str, context: int = 0, *, max_chars: int | None = None, offset: int = 0, tool: str = "get_doc"
    ) -> str:
        """get_doc in the corpus the ID names: `corpus:ID` always works with several corpora; a bare
        ID or file path works when exactly one corpus has it (else the error lists the prefixed IDs)."""
        if not self.several:
            return await self.corpora[0].engine.get_doc(
                chunk_id, context, max_chars=max_chars, offset=offset, tool=tool
            )
        if not isinstance(chunk_id, str):
            raise SearchError("chunk_id must be a string, exactly as search_docs returns it")
        name, sep, rest = chunk_id.partition(":")
        if sep and name in self.by_name:
            corpus, bare = self.by_name[name], rest
        else:
            served = await self.served()
            readable = [(c, index) for c, index in served.pairs if c.name not in served.unavailable]
            holders = [c for c, index in readable if c.engine.has(index, chunk_id)]
            if len(holders) > 1:
                choices = ", ".join(f"{c.name}:{chunk_id}" for c in holders)
                raise SearchError(f"Chunk ID '{chunk_id}' is in several corpora; pass one of: {choices}.")
            path = chunk_id.split("#", 1)[0]
            near = [c for c, index in readable if path in index.files]
            if not holders and not near:
                names = ", ".join(c.name for c, _ in readable)
                down = "".join(
                    f" Corpus '{name}' cannot be read now, so it was not looked in: {reason}"
                    for name, reason in served.unavailable.items()
                )
                raise SearchError(
                    f"Chunk ID '{chunk_id}' not found in any corpus ({names or 'none can be read'}). Use "
                    f"search_docs to discover valid chunk IDs: they start with the corpus name, e.g. "
                    f"'{self.corpora[0].name}:README.md'.{down}"
                )
            corpus, bare = (holders or near)[0], chunk_id
        return await corpus.engine.get_doc(
            bare, context, max_chars=max_chars, offset=offset, tool=tool, prefix=f"{corpus.name}:"
        )

    def close(self) -> None:
        closed: set[int] = set()  # corpora built with one model share its query embedder
        for corpus in self.corpora:
            if id(corpus.engine.embedder) not in closed:
                closed.add(id(corpus.engine.embedder))
                corpus.engine.close()


async def _closest(scope: list[tuple[Corpus, PublishedIndex]], query: str, modes: dict[str, str]) -> dict[str, float]:
    """Corpus -> cosine similarity of its chunk closest to the query; empty unless every corpus searched
    has its vectors in memory from one and the same model (only then are the similarities comparable)."""
    if any(index.embedding is None or index.embedding != scope[0][1].embedding for _, index in scope):
        return {}
    closest: dict[str, float] = {}
    for c, index in scope:
        if modes[c.name] != "hybrid" or index.vectors is None or not len(index.ids):
            return {}
        with _reading(c, index):
            vector = await c.engine._query_vector(index, query)
        if vector is None:
            return {}
        closest[c.name] = (await c.engine._nearest_in_memory(index, vector, None, depth=1))[0][1]
    return closest


def _best_score(engine: SearchEngine, query: str, mode: str) -> float:
    """The fused score of a chunk ranked first by every signal that ran for this query (engine._ranked):
    1 per list, times its weight, when scores are fused; 1 / (k + 1) per list when ranks are."""
    weights = engine.weights
    total = (
        weights.text
        + (weights.phrase if phrase_applies(query) else 0.0)
        + (weights.vector if mode == "hybrid" else 0.0)
    )
    return (total if weights.by_scores(mode == "hybrid") else total / (weights.k + 1)) or 1.0
