"""The request API of the read path: search_docs, get_doc, paging and hints over the corpora one server
(or one `docs-mcp search`) serves. The server, the CLI and the eval harness search and read through
Library alone; each corpus keeps its own engine (engine.py: its index, hot reload and result cache),
and corpora built with one model share its query embedder and its recent query vectors.

One corpus is the n=1 case of the same code: no `corpus:` prefix, no `corpus` field, scores and
cursors exactly as that corpus's engine ranks them.

Fusion across corpora: a corpus's fused score is relative to its own candidates (fusion.fuse), so
scores of different corpora are on one scale once divided by the best score that query could get
there (fusion.best_score: every signal that ran ranking the chunk first). Merging by that normalised
score means the number of hits a corpus has never matters, only how well each hit ranks inside its
own corpus: a corpus with many weak hits cannot outweigh a chunk another corpus ranks first by every
signal, and a chunk every signal agrees on comes before one only BM25 likes. BM25 scores themselves
are not compared: their IDF differs from corpus to corpus.

Rank-based fusion alone puts every corpus's best hit near the top, even for a question only one
corpus can answer. So when every corpus searched has vectors from the same model, cosine similarity
is comparable across them, and each corpus's scores are scaled by fusion.corpus_factor (its best
chunk's similarity to the query over the best corpus's, to a power): a corpus that has nothing close
to the question sinks as a whole, while the order inside each corpus is unchanged
(docs/decisions/0004-several-corpora-fused-by-reachable-score.md). Ties break by corpus order (as
served), then chunk ID, so results stay deterministic.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..errors import SearchError
from ..failpoints import pause
from ..output.versions_manifest import read_manifest, version_label
from . import answers
from . import cursor as cursors
from .engine import SearchEngine
from .filters import hint_for, match_case, validate_filters
from .fusion import best_score, corpus_factor
from .hits import SearchHit, SearchPage, TrimNote, ZeroResultHint
from .limits import DEFAULT_LIMIT, MAX_LIMIT
from .provenance import Provenance, provenance
from .published import ChunkInfo, PublishedIndex, metadata_signature
from .served import Corpus, Served
from .unreadable import UnreadableIndex, internal_error, is_read_failure, reading, unreadable_index
from .weights import Weights

if TYPE_CHECKING:
    from ..embedding.query import QueryEmbedder

_T = TypeVar("_T")
LOCKFILES_SECONDS = 1.0  # how often a server serving --project looks at the project's lockfiles
QueryModel = Literal["background", "loaded", "none"]


class CorpusFailed(Exception):  # noqa: N818 - carries a SearchError to the code that decides what to do
    """A corpus's index could not be read (or its search failed with an internal error) while a request was
    using `index`: Library.search retries once on a newer publish, or answers from the other corpora and says
    which one is missing."""

    def __init__(self, corpus: Corpus, index: PublishedIndex, error: SearchError) -> None:
        super().__init__(str(error))
        self.corpus, self.index, self.error = corpus, index, error


async def _each(
    scope: list[tuple[Corpus, PublishedIndex]], work: Callable[[Corpus, PublishedIndex], Awaitable[_T]]
) -> list[_T]:
    """work(corpus, index) for every corpus searched, all at once (their LanceDB queries share the cores);
    results in scope order. A corpus whose index cannot be read raises CorpusFailed, once every corpus
    has finished."""

    async def one(c: Corpus, index: PublishedIndex) -> _T:
        try:
            with reading(c.out):
                return await work(c, index)
        except UnreadableIndex as exc:
            raise CorpusFailed(c, index, exc) from None
        except SearchError:
            raise
        except Exception as exc:  # noqa: BLE001 - one corpus's internal error must not take the others down
            c.engine.say(f"searching the index at {c.out} failed:\n{traceback.format_exc()}")
            raise CorpusFailed(c, index, internal_error(c.out, exc)) from None

    results = await asyncio.gather(*(one(c, index) for c, index in scope), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


def _stderr(message: str) -> None:
    print(f"docs-mcp: {message}", file=sys.stderr, flush=True)


def loaded_embedder(embedding: dict[str, Any]) -> QueryEmbedder:
    """For one-shot callers (the CLI): a query embedder whose model has finished loading."""
    from ..embedding.query import QueryEmbedder

    embedder = QueryEmbedder(embedding)
    embedder.wait()
    return embedder


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
    # a versioned corpus's other versions, opened on first use: (corpus, label) -> its Corpus
    _other_versions: dict[tuple[str, str], Corpus] = field(init=False, default_factory=dict)
    _engine_for: Callable[[Path | str], SearchEngine] | None = field(init=False, default=None)
    _provenance: dict[tuple[Any, ...], Provenance] = field(init=False, default_factory=dict)
    # each re-pinned corpus: what its versions.json and its project's lockfiles looked like when last pinned
    _pins: dict[str, tuple[Any, ...]] = field(init=False, default_factory=dict)
    _locks_seen: dict[str, tuple[float, tuple[Any, ...]]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.by_name = {corpus.name: corpus for corpus in self.corpora}

    @classmethod
    def open(
        cls,
        indexes: Sequence[tuple[str, Path | str, str | None]],
        *,
        weights: Weights | None = None,
        query_model: QueryModel = "background",
        log: Callable[[str], None] | None = _stderr,
        word_positions: bool = True,
    ) -> Library:
        """Serve these (name, output folder or s3:// URL, description) indexes: reads each metadata.json
        now (a folder that is not an index is refused here); LanceDB opens on the first request.

        `query_model`: "background" loads each index's query model in a background thread, one per
        distinct model (search is text-only until it is ready); "loaded" waits for it (a one-shot
        search); "none" searches by text alone. `word_positions`: build them after the first search (a
        server); a one-shot search leaves them out.
        """
        factory: Callable[[dict[str, Any]], QueryEmbedder] | None = None
        if query_model == "loaded":
            factory = loaded_embedder
        elif query_model == "background":
            from ..embedding.query import QueryEmbedder

            embedders: dict[str, QueryEmbedder] = {}

            def factory(embedding: dict[str, Any]) -> QueryEmbedder:
                """One query model per distinct embedding block: corpora built with the same model share it."""
                key = json.dumps(embedding, sort_keys=True)
                if key not in embedders:
                    embedders[key] = QueryEmbedder(embedding, **({"log": log} if log else {}))
                return embedders[key]

        def engine_for(out: Path | str) -> SearchEngine:
            return SearchEngine(
                out, weights or Weights(), embedder_factory=factory, log=log, word_positions=word_positions
            )

        library = cls(
            [Corpus(name, engine_for(out), description, version_label(out)) for name, out, description in indexes]
        )
        library._engine_for = engine_for
        return library

    def versions(self) -> dict[str, list[str]]:
        """Each versioned corpus's indexed versions (newest first): what `version` may name."""
        found = {}
        for corpus in self.corpora:
            if corpus.version is not None:
                manifest = read_manifest(Path(corpus.out).parent.parent)
                found[corpus.name] = [v["label"] for v in manifest["versions"]] if manifest else [corpus.version]
        return found

    def at_version(self, name: str | None, version: str) -> tuple[Corpus, Corpus]:
        """(the served corpus, the one to answer from) for `version` of corpus `name` (or of the one
        versioned corpus); the other versions share the served one's query model."""
        versions = self.versions()
        if name is None and len(versions) == 1:
            name = next(iter(versions))
        if name not in versions:
            which = ", ".join(versions) or "none"
            raise SearchError(f"version needs a versioned corpus (name it with corpus); versioned: {which}")
        corpus = self.by_name[name]
        if version not in versions[name]:
            raise SearchError(f"corpus '{name}' has no version '{version}'; indexed: {', '.join(versions[name])}")
        if version == corpus.version:
            return corpus, corpus
        other = self._other_versions.get((name, version))
        if other is None:
            assert self._engine_for is not None
            engine = self._engine_for(Path(corpus.out).parent / version)
            other = Corpus(name, engine, corpus.description, version, max_age=corpus.max_age)
            self._other_versions[(name, version)] = other
        return corpus, other

    async def _with_version(self, served: Served, name: str | None, version: str | None) -> Served:
        if version is None:
            return served
        corpus, other = self.at_version(name, version)
        if other is corpus:
            return served
        index = await other.engine.index()
        pairs = tuple((other, index) if c is corpus else (c, i) for c, i in served.pairs)
        return Served(pairs, served.unavailable)

    def provenance(self, corpus: Corpus, index: PublishedIndex) -> Provenance:
        """Where `index` (served as `corpus`) came from, read once per published index."""
        key = (corpus.name, corpus.version, str(index.out), index.signature, not index.opened)
        if key not in self._provenance:
            if len(self._provenance) > 64:  # old publishes: a long-running server must not keep them all
                self._provenance.clear()
            self._provenance[key] = provenance(corpus, index)
        return self._provenance[key]

    def notes(self, scope: Sequence[tuple[Corpus, PublishedIndex]]) -> list[str]:
        """The lines an answer from these corpora opens with: each pinned corpus served at another version
        than the project locks (the pinning rule's notice), then each index older than its max_age."""
        notes = [c.notice for c, _ in scope if c.notice]
        for c, index in scope:
            stale = self.provenance(c, index).stale_note(c.max_age)
            if stale:
                notes.append(stale)
        return notes

    # -- versions published, removed and re-pinned while serving ------------------------------------
    def _pin_signature(self, corpus: Corpus) -> tuple[Any, ...]:
        """versions.json's stat (each request), and the project's lockfiles' (globbing them costs about a
        millisecond, so at most every LOCKFILES_SECONDS)."""
        from ..fsutil import file_stat
        from ..output.layout import OutputLayout
        from ..versions.lockfiles import lockfiles_signature

        assert corpus.versions_out is not None
        manifest = file_stat(OutputLayout(corpus.versions_out).versions_manifest)
        locks: tuple[Any, ...] = ()
        if corpus.project is not None:
            now = time.monotonic()
            checked = self._locks_seen.get(corpus.name)
            if checked is None or now - checked[0] >= LOCKFILES_SECONDS:
                checked = self._locks_seen[corpus.name] = (now, lockfiles_signature(corpus.project))
            locks = checked[1]
        return (tuple(manifest or ()), locks)

    def pins(self) -> tuple[Any, ...]:
        """What the served versions were last chosen from: tool schemas listing versions follow it."""
        return tuple(sorted(self._pins.items()))

    def pins_changed(self) -> bool:
        """versions.json or a project's lockfile changed since the served versions were chosen."""
        return any(
            c.versions_out is not None and self._pins.get(c.name) != self._pin_signature(c) for c in self.corpora
        )

    def repin(self) -> None:
        """Follow each versioned corpus's versions.json and its project's lockfiles: a version published
        or removed, a new default or a new lock changes the version served (by the pinning rule) without a
        restart; versions no longer listed are dropped. The first call only records what was chosen at start."""
        for corpus in self.corpora:
            if corpus.versions_out is None:
                continue
            signature = self._pin_signature(corpus)
            known = self._pins.get(corpus.name)
            self._pins[corpus.name] = signature
            if known is None or known == signature:
                continue
            from ..versions.serving import served_version

            try:
                chosen = served_version(corpus.versions_out, corpus.project)
                engine = None
                if chosen.label != corpus.version:
                    other = self._other_versions.get((corpus.name, str(chosen.label)))
                    assert self._engine_for is not None
                    engine = other.engine if other is not None else self._engine_for(chosen.index)
            except Exception as exc:  # noqa: BLE001 - a half-written output must not stop the server
                corpus.engine.say(
                    f"versions of corpus '{corpus.name}' changed but cannot be read ({str(exc).splitlines()[0]}); "
                    f"still serving {corpus.version}"
                )
                continue
            for key in [k for k in self._other_versions if k[0] == corpus.name and k[1] not in chosen.labels]:
                del self._other_versions[key]  # removed: its folder is gone or going
            for note in chosen.notes:
                if note != corpus.notice:
                    corpus.engine.say(note)
            corpus.notice = chosen.notice
            if engine is not None and chosen.label is not None:
                old = corpus.version
                if old is not None and old in chosen.labels:  # still indexed: kept open for `version`
                    self._other_versions[(corpus.name, old)] = Corpus(
                        corpus.name, corpus.engine, corpus.description, old, max_age=corpus.max_age
                    )
                self._other_versions.pop((corpus.name, chosen.label), None)
                corpus.engine, corpus.version = engine, chosen.label
                corpus.engine.say(f"corpus '{corpus.name}' now answers from version {chosen.label} (was {old})")

    def _report(self, corpus: Corpus, reason: str | None, *, read: PublishedIndex | None = None) -> None:
        """One log line when a corpus becomes unreadable, one when it recovers (not one per request).

        A corpus whose index opens but failed while a search read it (`read`) has recovered only once
        a search reads it; opening it again says nothing.
        """
        down = self._down.get(corpus.name)
        if reason is None:
            if down is not None and (read is not None or down[1] is None):
                del self._down[corpus.name]
                corpus.engine.say(f"corpus '{corpus.name}' can be read again")
        else:
            self._down[corpus.name] = (reason, read)
            if down is None:
                corpus.engine.say(f"corpus '{corpus.name}' cannot be read; the other corpora keep answering: {reason}")

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
        self.repin()
        if not self.several:
            corpus = self.corpora[0]
            return Served(((corpus, await corpus.engine.index()),))
        pairs, unavailable = [], {}
        for corpus in self.corpora:
            try:
                index = await corpus.engine.index()
            except Exception as exc:  # noqa: BLE001 - one corpus must not take the others down
                if not isinstance(exc, SearchError):
                    corpus.engine.say(f"opening corpus '{corpus.name}' failed:\n{traceback.format_exc()}")
                    exc = unreadable_index(corpus.out, exc) if is_read_failure(exc) else internal_error(corpus.out, exc)
                unavailable[corpus.name] = str(exc)
                pairs.append((corpus, corpus.engine.current))
            else:
                pairs.append((corpus, index))
            self._report(corpus, unavailable.get(corpus.name))
        return Served(tuple(pairs), unavailable)

    def needs_lancedb(self) -> bool:
        """Whether a corpus's published index has no serving snapshot, so its first request imports LanceDB."""
        return any(not corpus.engine.current.snapshot_present() for corpus in self.corpora)

    async def serving(self) -> Served:
        """served(), but before the first request has opened LanceDB the metadata read at start stands in."""
        if any(not corpus.engine.current.opened for corpus in self.corpora):
            self.repin()
            return self.starting()
        return await self.served()

    def changed(self) -> bool:
        """A corpus was republished since its index was opened (each corpus's metadata.json is watched)."""
        return self.pins_changed() or any(
            c.engine.current.opened and metadata_signature(c.out) != c.engine.current.signature for c in self.corpora
        )

    async def health(self, corpus: Corpus) -> tuple[dict[str, Any], bool]:
        """One corpus's health (/healthz): the index requests are served from now (a publish since the last
        request is picked up here too), or why it cannot be read: it does not open, or (with several
        corpora) a search failed to read it."""
        engine = corpus.engine
        try:
            index = await engine.index()
            failure = self.read_failure(corpus)
        except Exception as exc:  # noqa: BLE001 - health says what is wrong instead of a 500 page
            failure = str(exc)
        if failure is not None:
            return {
                "status": "error",
                "index_version": engine.current.version,
                "message": failure.splitlines()[0][:300],
            }, False
        embedder = engine.embedder
        body: dict[str, Any] = {
            "status": "ok",
            "index_version": index.version,
            "chunks": index.metadata.stats.total_chunks,
            "vector_search": embedder.status if embedder is not None else "none",
            "mode": engine.mode(index),
        }
        if engine.publish_refused():
            body["warning"] = (
                f"the index published last cannot be opened; still serving table version "
                f"{index.version} (see the server log)"
            )
        return body, True

    def wait_for_query_models(self) -> None:
        """Until every corpus's query model has loaded (or failed to): then searches are hybrid from the first."""
        for corpus in self.corpora:
            if corpus.engine.embedder is not None:
                corpus.engine.embedder.wait()

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
        version: str | None = None,
    ) -> SearchPage:
        """One page of hits from the corpora the request covers; with `max_chars`, only the leading hits
        whose JSON fits (see answers.fit_page).

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
        served = await self._with_version(await self.served(), corpus, version)
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
                    served = await self._with_version(await self.served(), corpus, version)
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
        fused_lists = await _each(scope, lambda c, index: c.engine.fused(index, query, clean))
        for c, index in scope if served.several else []:
            self._report(c, None, read=index)
        for (c, index), (fused, modes[c.name]) in zip(scope, fused_lists):
            best = best_score(c.engine.weights, query, modes[c.name] == "hybrid") if served.several else 1.0
            ranked += [(c, index, chunk_id, score / best) for chunk_id, score in fused]
        if served.several:
            closest = await _closest(scope, query, modes)
            if closest:
                top = max(closest.values()) or 1.0
                ranked = [(c, i, cid, s * corpus_factor(closest[c.name], top)) for c, i, cid, s in ranked]
        if served.several:
            ranked.sort(key=lambda r: (-r[3], order[r[0].name], r[2]))
        rows = ranked[offset : offset + limit]

        found = await _each(scope, lambda c, index: c.engine.texts(index, [cid for rc, _, cid, _ in rows if rc is c]))
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
                "snippet": answers.snippet(texts.get((c.name, chunk_id), ""), query),
                "filepath": info.filepath,
                "metadata": info.metadata,
                "chars": index.sizes.get(chunk_id, 0),
            }
            if c.version is not None:  # one version of a versioned corpus: which one answered
                hit["version"] = c.version
            if info.source_url:  # website corpora: the page to cite
                hit["source_url"] = info.source_url
            hits.append(hit)
        origins = [self.provenance(c, index) for c, index, _, _ in rows]
        notes = self.notes(scope) or None
        sources = {origin.name: origin.line() for origin in origins} or None
        hit_sources = [origin.name for origin in origins]
        fields = [origin.hit(index.info[cid].filepath) for origin, (_, index, cid, _) in zip(origins, rows)]
        more = offset + limit < len(ranked)

        def cursor_at(position: int) -> str:
            return cursors.encode(secret, offset=position, query=query, filters=request, index=served.key(scope))

        next_cursor = cursor_at(offset + limit) if more else None
        hint = await self._hint(scope, query, clean) if not hits and offset == 0 else None
        mode = "hybrid" if modes and all(m == "hybrid" for m in modes.values()) else "text"
        shown_modes = modes if served.several else None
        page = SearchPage(
            hits, next_cursor, hint, mode, None, shown_modes, unavailable, notes, sources, hit_sources, fields
        )
        if max_chars is not None and hits:

            def page_json(kept: list[SearchHit], next_at: str | None, note: TrimNote | None) -> dict[str, Any]:
                trimmed = SearchPage(
                    kept, next_at, hint, mode, note, shown_modes, unavailable, notes, sources, hit_sources
                )
                return trimmed.to_json()

            page.hits, page.next_cursor, page.trimmed = answers.fit_page(
                page_json, hits, next_cursor, lambda kept: cursor_at(offset + kept), max_chars
            )
        return page

    async def _hint(
        self, scope: list[tuple[Corpus, PublishedIndex]], query: str, filters: dict[str, str]
    ) -> ZeroResultHint:
        """The zero-result hint over the corpora searched: the other values that would match, in any of them."""
        merged: dict[str, set[str]] = {}
        for suggestions in await _each(scope, lambda c, index: c.engine.suggestions(index, query, filters)):
            for key, values in suggestions.items():
                merged.setdefault(key, set()).update(values)
        return hint_for(query, filters, {key: sorted(values) for key, values in sorted(merged.items())})

    # -- get_doc ----------------------------------------------------------------------------
    async def get_doc(
        self,
        chunk_id: str,
        context: int = 0,
        *,
        max_chars: int | None = None,
        offset: int = 0,
        tool: str = "get_doc",
        version: str | None = None,
        lead_for: Callable[[Corpus], Callable[[PublishedIndex, ChunkInfo], str]] | None = None,
    ) -> str:
        """get_doc in the corpus the ID names: `corpus:ID` always works with several corpora; a bare
        ID or file path works when exactly one corpus has it (else the error lists the prefixed IDs).
        With `version`, from that version of the (named, or only) versioned corpus."""
        if version is not None:
            if not isinstance(chunk_id, str):
                raise SearchError("chunk_id must be a string, exactly as search_docs returns it")
            name, sep, rest = chunk_id.partition(":")
            named = sep and name in self.by_name and self.several
            _, other = self.at_version(name if named else None, version)
            prefix = f"{other.name}:" if self.several else ""
            bare = rest if named else chunk_id
            return await other.engine.get_doc(
                bare,
                context,
                max_chars=max_chars,
                offset=offset,
                tool=tool,
                prefix=prefix,
                lead=lead_for(other) if lead_for else None,
            )
        if not self.several:
            lone = self.corpora[0]
            return await lone.engine.get_doc(
                chunk_id,
                context,
                max_chars=max_chars,
                offset=offset,
                tool=tool,
                lead=lead_for(lone) if lead_for else None,
            )
        if not isinstance(chunk_id, str):
            raise SearchError("chunk_id must be a string, exactly as search_docs returns it")
        name, sep, rest = chunk_id.partition(":")
        if sep and name in self.by_name:
            corpus, bare = self.by_name[name], rest
        else:
            served = await self.served()
            readable = [(c, index) for c, index in served.pairs if c.name not in served.unavailable]
            holders = [c for c, index in readable if index.has(chunk_id) or index.withheld(chunk_id)]
            if len(holders) > 1:
                choices = ", ".join(f"{c.name}:{chunk_id}" for c in holders)
                raise SearchError(f"Chunk ID '{chunk_id}' is in several corpora; pass one of: {choices}.")
            path = chunk_id.split("#", 1)[0]
            near = [c for c, index in readable if path in index.files]
            unlisted = [] if holders or near else [c for c, i in readable if i.metadata.unlisted(chunk_id)]
            if not holders and not near and not unlisted:
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
            corpus, bare = (holders or near or unlisted)[0], chunk_id
        return await corpus.engine.get_doc(
            bare,
            context,
            max_chars=max_chars,
            offset=offset,
            tool=tool,
            prefix=f"{corpus.name}:",
            lead=lead_for(corpus) if lead_for else None,
        )

    async def read_doc(
        self,
        chunk_id: str,
        context: int = 0,
        *,
        max_chars: int | None = None,
        offset: int = 0,
        tool: str = "get_doc",
        version: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """get_doc as the server answers it: opened by the notes of the corpus that answered, one line each
        (within max_chars), with that chunk's provenance fields for the structured content. The text has
        no source line: search_docs gave it once for the corpus and version, and agents pay per character."""
        fields: dict[str, Any] = {}

        def lead_for(corpus: Corpus) -> Callable[[PublishedIndex, ChunkInfo], str]:
            def lead(index: PublishedIndex, target: ChunkInfo) -> str:
                fields.update(self.provenance(corpus, index).hit(target.filepath))
                return "".join(f"{note}\n" for note in self.notes([(corpus, index)]))

            return lead

        text = await self.get_doc(
            chunk_id, context, max_chars=max_chars, offset=offset, tool=tool, version=version, lead_for=lead_for
        )
        return text, fields

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
        try:
            with reading(c.out):
                vector = await c.engine.query_vector(index, query)
        except UnreadableIndex as exc:
            raise CorpusFailed(c, index, exc) from None
        if vector is None:
            return {}
        closest[c.name] = (await c.engine.nearest_in_memory(index, vector, None, depth=1))[0][1]
    return closest


def run_search(
    out: Path | str,
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    filters: dict[str, str] | None = None,
    hybrid: bool = True,
    weights: Weights | None = None,
) -> SearchPage:
    """One search from synchronous code (`docs-mcp search`): the request API with one corpus, as served."""

    async def once() -> SearchPage:
        library = Library.open(
            [("", out, None)], weights=weights, query_model="loaded" if hybrid else "none", word_positions=False
        )
        try:
            return await library.search(query, limit=limit, filters=filters)
        finally:
            library.close()

    return asyncio.run(once())


def run_get_doc(
    out: Path | str, chunk_id: str, *, context: int = 0, max_chars: int | None = None, offset: int = 0
) -> str:
    """One get_doc from synchronous code (`docs-mcp get`): what the get_doc tool answers for a served index."""

    async def once() -> str:
        library = Library.open([("", out, None)], query_model="none")  # reading needs no query model
        try:
            return await library.get_doc(chunk_id, context, max_chars=max_chars, offset=offset)
        finally:
            library.close()

    return asyncio.run(once())
