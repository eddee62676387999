"""The embedding cache (seed 000): fingerprint → vector, so a rebuild pays only for what changed.

Layout, for a cache folder C (default `{out}/.embedding-cache`):

    C/cache-meta.json     cache_version, format_version, config_fingerprint, entries digest
    C/vectors.lance/      LanceDB table: fingerprint, chunk_id, vector
    C.pending/            vectors embedded by a build that has not finished yet
    C.tmp/, C.old/        the two sides of a rotate-and-rename in progress

Every embedded batch is appended to `C.pending` as soon as it arrives, so a build that
fails or is killed part-way loses nothing it paid for. A successful build writes the
pruned cache (exactly this build's fingerprints) into `C.tmp`, swaps it in with two
renames and drops `C.pending`. Lookups and copies go in batches: stale entries are never
read, and no step holds the whole cache in memory.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .embedding import EMBEDDING_FORMAT_VERSION, EmbeddingProvider
from .errors import DocsMcpError
from .fsutil import read_json, write_json_atomic
from .progress import NullReporter, Reporter, Timer

CACHE_VERSION = "1"
CACHE_DIR = ".embedding-cache"
META_FILE = "cache-meta.json"
TABLE = "vectors"
LOOKUP_BATCH = 1000


def entries_digest(fingerprints: list[str]) -> str:
    """Identifies the exact set of entries a cache holds (sorted, unique fingerprints)."""
    h = hashlib.sha256()
    for fp in sorted(set(fingerprints)):
        h.update(fp.encode())
    return h.hexdigest()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    embedded: int = 0
    reused_pending: int = 0
    pruned: int = 0
    seconds: float = 0.0
    cost: float = 0.0
    tokens: int = 0
    invalidated: str | None = None

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return 100.0 * self.hits / total if total else 100.0


@dataclass
class EmbedResult:
    """What the embed step hands on: not the vectors, but where to read them, by fingerprint."""

    fingerprints: list[str]
    dimensions: int
    cache_dir: str | None  # None when the provider makes no vectors
    stats: CacheStats = field(default_factory=CacheStats)
    forced: bool = False  # --rebuild-cache: write the index even if its inputs look unchanged
    fingerprint_events: dict[str, str] = field(default_factory=dict)  # fingerprint -> hit|miss
    pruned: list[tuple[str, str]] = field(default_factory=list)  # (fingerprint, chunk_id) dropped from the cache

    def load_vectors(self) -> np.ndarray | None:
        if self.cache_dir is None:
            return None
        return read_vectors(Path(self.cache_dir), self.fingerprints, self.dimensions)


def _schema(dims: int):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.schema([("fingerprint", pa.string()), ("chunk_id", pa.string()), ("vector", pa.list_(pa.float32(), dims))])


def _batch(fps: list[str], chunk_ids: list[str], vectors: np.ndarray):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    dims = vectors.shape[1]
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), pa.float32())
    return pa.table(
        [pa.array(fps, pa.string()), pa.array(chunk_ids, pa.string()), pa.FixedSizeListArray.from_arrays(flat, dims)],
        schema=_schema(dims),
    )


def _open(folder: Path):  # type: ignore[no-untyped-def]
    import lancedb

    return lancedb.connect(str(folder)).open_table(TABLE)


def _lookup(table: Any, fps: list[str]) -> Iterator[tuple[str, np.ndarray]]:
    """Yield (fingerprint, vector) for the fingerprints the table holds, a batch at a time."""
    for start in range(0, len(fps), LOOKUP_BATCH):
        batch = fps[start : start + LOOKUP_BATCH]
        in_list = ",".join(f"'{fp}'" for fp in batch)  # fingerprints are sha256 hex: safe to quote
        rows = (table.search().where(f"fingerprint IN ({in_list})").select(["fingerprint", "vector"])
                .limit(len(batch)).to_arrow())
        if rows.num_rows == 0:
            continue
        dims = rows.schema.field("vector").type.list_size
        vectors = rows.column("vector").combine_chunks().values.to_numpy(zero_copy_only=False).reshape(-1, dims)
        yield from zip(rows.column("fingerprint").to_pylist(), vectors)


def _entries(table: Any) -> list[tuple[str, str]]:
    """(fingerprint, chunk_id) of every entry: strings only, no vectors."""
    rows = table.search().select(["fingerprint", "chunk_id"]).limit(max(1, table.count_rows())).to_arrow()
    return list(zip(rows.column("fingerprint").to_pylist(), rows.column("chunk_id").to_pylist()))


def read_vectors(cache: Path, fingerprints: list[str], dims: int) -> np.ndarray:
    """Vectors aligned with `fingerprints`, read from a written cache in batches."""
    out = np.zeros((len(fingerprints), dims), dtype=np.float32)
    where: dict[str, list[int]] = {}
    for i, fp in enumerate(fingerprints):
        where.setdefault(fp, []).append(i)
    found = 0
    for fp, vec in _lookup(_open(cache), list(where)):
        out[where[fp]] = vec
        found += 1
    if found != len(where):
        raise DocsMcpError(f"the embedding cache at {cache} lacks {len(where) - found} vector(s) this build needs; "
                           "it changed during the build — run the build again")
    return out


class EmbeddingCache:
    """One cache folder and its pending/tmp/old siblings."""

    def __init__(self, path: Path, provider: EmbeddingProvider, reporter: Reporter) -> None:
        self.path = Path(path)
        self.pending = self.path.with_name(self.path.name + ".pending")
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.old = self.path.with_name(self.path.name + ".old")
        self.provider = provider
        self.reporter = reporter

    def expected_meta(self) -> dict[str, Any]:
        return {
            "cache_version": CACHE_VERSION,
            "format_version": EMBEDDING_FORMAT_VERSION,
            "config_fingerprint": self.provider.config_fingerprint,
            "provider": self.provider.name,
            "model": self.provider.model,
            "dimensions": self.provider.dimensions,
        }

    # 1. cleanup -----------------------------------------------------------------------
    def recover(self) -> None:
        """Finish or undo a rotate that was interrupted, then remove leftovers (with a warning)."""
        if not self.path.exists():
            if (self.tmp / META_FILE).exists():
                self.tmp.rename(self.path)
                self.reporter.warn(f"embedding cache: completed an interrupted swap ({self.tmp.name} → {self.path.name})")
            elif (self.old / META_FILE).exists():
                self.old.rename(self.path)
                self.reporter.warn(f"embedding cache: restored {self.old.name} left by an interrupted swap")
        for leftover in (self.tmp, self.old):
            if leftover.exists():
                shutil.rmtree(leftover, ignore_errors=True)
                self.reporter.warn(f"embedding cache: removed leftover {leftover.name} from an interrupted build")

    # 2. load ------------------------------------------------------------------------------
    def _problem(self, folder: Path) -> str | None:
        """Why the cache in `folder` cannot be used, or None if it can."""
        try:
            meta = read_json(folder / META_FILE)
        except ValueError:
            return f"{META_FILE} is corrupt (not valid JSON)"
        if meta is None:
            return f"{META_FILE} is missing"
        if not isinstance(meta, dict):
            return f"{META_FILE} is corrupt (not an object)"
        want = self.expected_meta()
        if str(meta.get("cache_version", "")).split(".")[0] != CACHE_VERSION:
            return f"cache_version {meta.get('cache_version')!r} is not supported (this docs-mcp writes {CACHE_VERSION})"
        if meta.get("format_version") != want["format_version"]:
            return "format_version mismatch (the embedding input format changed)"
        if meta.get("config_fingerprint") != want["config_fingerprint"]:
            return "config_fingerprint mismatch (provider config changed)"
        if "files" in meta:  # a written cache lists its files: check them without opening LanceDB
            for rel, size in sorted(meta["files"].items()):
                path = folder / rel
                if not path.exists():
                    return f"the vectors table is damaged ({rel} is missing)"
                if path.stat().st_size != size:
                    return f"the vectors table is damaged ({rel} has {path.stat().st_size} of {size} bytes)"
            return None
        try:  # the pending store is appended to as batches arrive, so it is opened instead
            _open(folder).search().select(["fingerprint", "vector"]).limit(1).to_arrow()
        except Exception as exc:  # noqa: BLE001 - any failure to read means: unusable
            return f"the vectors table is unreadable ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})"
        return None

    def load(self) -> dict[str, Any] | None:
        """The usable cache's meta; an unusable cache is discarded with a warning naming why."""
        if not self.path.exists():
            return None
        problem = self._problem(self.path)
        if problem is None:
            return read_json(self.path / META_FILE)
        self.reporter.warn(f"embedding cache invalidated: {problem}")
        shutil.rmtree(self.path, ignore_errors=True)
        return None

    def load_pending(self) -> bool:
        """Whether vectors kept by an unfinished build can be reused."""
        if not self.pending.exists():
            return False
        problem = self._problem(self.pending) if (self.pending / f"{TABLE}.lance").exists() else "it is empty"
        if problem is None:
            return True
        self.reporter.warn(f"embedding cache: discarding vectors kept by an unfinished build: {problem}")
        shutil.rmtree(self.pending, ignore_errors=True)
        return False

    # 4. embed, keeping every batch --------------------------------------------------------
    def _append_pending(self, fps: list[str], chunk_ids: list[str], vectors: np.ndarray) -> None:
        import lancedb

        batch = _batch(fps, chunk_ids, vectors)
        if not (self.pending / f"{TABLE}.lance").exists():
            self.pending.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.pending / META_FILE, self.expected_meta())
            lancedb.connect(str(self.pending)).create_table(TABLE, data=batch)
        else:
            _open(self.pending).add(batch)

    def embed_missing(self, items: list[tuple[str, str, str]], stats: CacheStats) -> None:
        """Embed (fingerprint, chunk_id, input) items in batches, `concurrency` requests at a time."""
        provider = self.provider
        size = max(1, provider.batch_size)
        batches = [items[i : i + size] for i in range(0, len(items), size)]
        workers = max(1, getattr(provider, "concurrency", 1) or 1)
        timer = Timer()
        done = 0
        failure: BaseException | None = None
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="embed") as pool:
            futures: dict[Future[np.ndarray], list[tuple[str, str, str]]] = {}
            queue = iter(batches)
            for batch in queue:
                futures[pool.submit(provider.embed, [text for _, _, text in batch])] = batch
                if len(futures) >= workers * 2:
                    break
            while futures:
                finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
                for future in finished:
                    batch = futures.pop(future)
                    try:
                        vectors = future.result()
                    except BaseException as exc:  # noqa: BLE001 - reported below, after in-flight batches land
                        failure = failure or exc
                        continue
                    self._append_pending([fp for fp, _, _ in batch], [cid for _, cid, _ in batch], vectors)
                    done += len(batch)
                    stats.embedded += len(batch)
                    self.reporter.progress(f"embedding via {provider.name}", done, len(items))
                if failure is None:
                    for batch in queue:
                        futures[pool.submit(provider.embed, [text for _, _, text in batch])] = batch
                        if len(futures) >= workers * 2:
                            break
        stats.seconds = timer.seconds
        stats.tokens = int(getattr(provider, "tokens_used", 0))
        stats.cost = float(getattr(provider, "estimated_cost", 0.0))
        truncated = getattr(provider, "truncated", [])
        if truncated:
            self.reporter.warn(f"{len(truncated)} embedding input(s) were longer than {provider.model}'s limit and "
                               f"were truncated (longest: {max(truncated)} characters)")
        if failure is not None:
            if isinstance(failure, DocsMcpError):
                reason = str(failure)
            else:
                reason = f"{type(failure).__name__}: {failure}"
            kept = (f"embedded {stats.embedded} of {len(items)} missing chunks before the failure; they are kept in "
                    f"{self.pending} and the next build will not pay for them again." if stats.embedded else
                    f"none of the {len(items)} missing chunks were embedded.")
            raise DocsMcpError(f"{reason}\n{kept} The published index and the embedding cache are unchanged.")

    # 6. prune and write -------------------------------------------------------------------
    def write(self, fingerprints: list[str], chunk_ids: dict[str, str], sources: list[Path]) -> int:
        """Write exactly `fingerprints` (copied in batches from `sources`) to C.tmp and swap it in."""
        import lancedb
        from lancedb.index import BTree

        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir(parents=True)
        dims = self.provider.dimensions
        wanted = list(dict.fromkeys(fingerprints))
        remaining = set(wanted)

        def batches() -> Iterator[Any]:
            for source in sources:
                fps, vecs = [], []
                for fp, vec in _lookup(_open(source), sorted(remaining)):
                    if fp in remaining:
                        remaining.discard(fp)
                        fps.append(fp)
                        vecs.append(vec)
                        if len(fps) >= LOOKUP_BATCH:
                            yield _batch(fps, [chunk_ids[f] for f in fps], np.stack(vecs))
                            fps, vecs = [], []
                if fps:
                    yield _batch(fps, [chunk_ids[f] for f in fps], np.stack(vecs))

        # Batches are appended one by one (LanceDB must not pull them from its own event loop).
        db = lancedb.connect(str(self.tmp))
        table = db.create_table(TABLE, schema=_schema(dims))
        for batch in batches():
            table.add(batch)
        if remaining:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise DocsMcpError(f"{len(remaining)} vector(s) went missing while writing the embedding cache; build again")
        table.create_index("fingerprint", config=BTree())
        table_dir = self.tmp / f"{TABLE}.lance"
        files = {str(p.relative_to(self.tmp)): p.stat().st_size for p in sorted(table_dir.rglob("*")) if p.is_file()}
        write_json_atomic(self.tmp / META_FILE, {**self.expected_meta(), "entries": len(wanted),
                                                 "entries_digest": entries_digest(wanted), "files": files})
        if self.path.exists():
            self.path.rename(self.old)
        self.tmp.rename(self.path)
        shutil.rmtree(self.old, ignore_errors=True)
        shutil.rmtree(self.pending, ignore_errors=True)
        return len(wanted)


def embed_with_cache(
    chunk_ids: list[str],
    inputs: list[str],
    fingerprints: list[str],
    provider: EmbeddingProvider,
    cache_dir: Path,
    *,
    rebuild: bool = False,
    reporter: Reporter | None = None,
) -> EmbedResult:
    """Seed 000's lifecycle: clean up, load, match, embed misses, write the pruned cache."""
    reporter = reporter or NullReporter()
    stats = CacheStats()
    if not provider.produces_vectors:
        return EmbedResult(fingerprints, 0, None, stats)
    cache = EmbeddingCache(cache_dir, provider, reporter)
    cache.recover()
    unique = list(dict.fromkeys(fingerprints))
    first_id = dict(zip(reversed(fingerprints), reversed(chunk_ids)))
    input_of = dict(zip(reversed(fingerprints), reversed(inputs)))
    meta = None if rebuild else cache.load()
    pending = False if rebuild else cache.load_pending()
    if rebuild and cache.pending.exists():
        shutil.rmtree(cache.pending, ignore_errors=True)
    events: dict[str, str] = {}

    if meta is not None and not pending and meta.get("entries_digest") == entries_digest(unique):
        # The cache holds exactly this build's vectors: nothing to embed, nothing to rewrite.
        stats.hits = len(fingerprints)
        events = {fp: "hit" for fp in unique}
        _report_lookup(reporter, stats)
        return EmbedResult(fingerprints, provider.dimensions, str(cache.path), stats, fingerprint_events=events)

    have: set[str] = set()
    sources: list[Path] = []
    if meta is not None:
        try:
            have.update(fp for fp, _ in _lookup(_open(cache.path), unique))
        except Exception as exc:  # noqa: BLE001 - damage the file check could not see
            reporter.warn(f"embedding cache invalidated: the vectors table is unreadable ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:160]})")
            shutil.rmtree(cache.path, ignore_errors=True)
            meta = None
    pruned: list[tuple[str, str]] = []
    if meta is not None:
        current = set(unique)
        pruned = [(fp, cid) for fp, cid in _entries(_open(cache.path)) if fp not in current]
        stats.pruned = len(pruned)
        sources.append(cache.path)
    if pending:
        kept = {fp for fp, _ in _lookup(_open(cache.pending), [fp for fp in unique if fp not in have])}
        stats.reused_pending = len(kept)
        have |= kept
    if pending or (set(unique) - have):
        sources.append(cache.pending)
    stats.hits = sum(1 for fp in fingerprints if fp in have)
    stats.misses = len(fingerprints) - stats.hits
    events = {fp: ("hit" if fp in have else "miss") for fp in unique}
    _report_lookup(reporter, stats)
    missing = [fp for fp in unique if fp not in have]
    if missing:
        cache.embed_missing([(fp, first_id[fp], input_of[fp]) for fp in missing], stats)
        _report_embedded(reporter, stats, provider)
    cache.write(unique, first_id, sources)
    return EmbedResult(fingerprints, provider.dimensions, str(cache.path), stats, forced=rebuild,
                       fingerprint_events=events, pruned=pruned)


def _report_lookup(reporter: Reporter, stats: CacheStats) -> None:
    reporter.info(f"embedding cache: {stats.hits} hits, {stats.misses} misses ({stats.hit_rate:.1f}% hit rate)")
    if stats.reused_pending:
        reporter.info(f"reused {stats.reused_pending} vectors kept by an earlier unfinished build")


def _report_embedded(reporter: Reporter, stats: CacheStats, provider: EmbeddingProvider) -> None:
    cost = f" ({stats.tokens} tokens, estimated cost ${stats.cost:.4f})" if stats.tokens else ""
    reporter.info(f"embedded {stats.embedded} chunks via {provider.name} in {stats.seconds:.1f}s{cost}")
