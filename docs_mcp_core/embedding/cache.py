"""The embedding cache (seed 000): fingerprint → vector, so a rebuild pays only for what changed.

Layout, for a cache folder C (default `{out}/.embedding-cache`):

    C/cache-meta.json     cache_version, format_version, config_fingerprint, entries digest,
                          size and sha256 of every table file
    C/vectors.lance/      LanceDB table: fingerprint, chunk_id, vector, checksum (per row)
    C.pending/            vectors embedded by a build that has not been published yet
    C.tmp/, C.old/        the two sides of a rotate-and-rename in progress

Every embedded batch is appended to `C.pending` as soon as it arrives, so a build that
fails or is killed part-way loses nothing it paid for. Only after the build is published
(`commit_cache`, called by publish_metadata) is the pruned cache (exactly this build's
fingerprints) written into `C.tmp`, swapped in with two renames, and `C.pending` dropped:
until then C still holds every vector the published index uses. Lookups and copies go in
batches: stale entries are never read, and no step holds the whole cache in memory.

Nothing read back is trusted: table files must match the checksums in cache-meta.json, and
every vector must have the right dimension, finite values and its row checksum. Anything
else is a warning and the affected vectors are embedded again, never an error.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are handled: a text-only build never needs it
    import numpy as np

from ..errors import DocsMcpError
from ..failpoints import pause
from ..fsutil import file_sha256, read_json, write_json_atomic
from ..progress import NullReporter, Reporter, Timer
from . import hooks
from .base import EmbeddingProvider, makes_vectors
from .fingerprint import EMBEDDING_FORMAT_VERSION, passages_key
from .input import multivector

CACHE_VERSION = "1"
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
    sources: list[str] = field(default_factory=list)  # folders holding this build's vectors, cache first
    chunk_ids: list[str] = field(default_factory=list)  # aligned with fingerprints: recorded in the cache
    commit: bool = False  # the cache must be rewritten to exactly this build's entries once it is published
    passages: list[int] | None = None  # passages (fingerprints) per chunk, in order; None: one each, one vector a row
    passages_key: str = ""  # fingerprint.passages_key of the config the fingerprints were made under ("": no vectors)
    kept: dict[str, str] = field(
        default_factory=dict
    )  # other versions' entries the commit keeps: fingerprint -> chunk_id
    shared: int = 0  # fingerprints found in the cache that another version of the corpus uses too

    def load_vectors(self, fingerprints: list[str] | None = None) -> np.ndarray | None:
        """One row per fingerprint (per passage when `passages` is set), or per one of `fingerprints`."""
        if self.cache_dir is None:
            return None
        wanted = self.fingerprints if fingerprints is None else fingerprints
        return read_vectors([Path(s) for s in self.sources or [self.cache_dir]], wanted, self.dimensions)

    def by_chunk(self) -> dict[str, list[str]]:
        """Each chunk's passage fingerprints, in chunks.json's order."""
        found: dict[str, list[str]] = {}
        for chunk_id, fp in zip(self.chunk_ids, self.fingerprints):
            found.setdefault(chunk_id, []).append(fp)
        return found


def _schema(dims: int):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.schema(
        [
            ("fingerprint", pa.string()),
            ("chunk_id", pa.string()),
            ("vector", pa.list_(pa.float32(), dims)),
            ("checksum", pa.string()),
        ]
    )


def row_checksum(fingerprint: str, vector: np.ndarray) -> str:
    """Ties a vector to its fingerprint: damaged bytes in either are noticed when read."""
    import numpy as np

    return hashlib.sha256(fingerprint.encode() + np.ascontiguousarray(vector, dtype="<f4").tobytes()).hexdigest()[:32]


def _batch(fps: list[str], chunk_ids: list[str], vectors: np.ndarray):  # type: ignore[no-untyped-def]
    import numpy as np
    import pyarrow as pa

    dims = vectors.shape[1]
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    flat = pa.array(vectors.reshape(-1), pa.float32())
    sums = [row_checksum(fp, vec) for fp, vec in zip(fps, vectors)]
    return pa.table(
        [
            pa.array(fps, pa.string()),
            pa.array(chunk_ids, pa.string()),
            pa.FixedSizeListArray.from_arrays(flat, dims),
            pa.array(sums, pa.string()),
        ],
        schema=_schema(dims),
    )


def _open(folder: Path):  # type: ignore[no-untyped-def]
    import lancedb

    return lancedb.connect(str(folder)).open_table(TABLE)


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:160]}"


def _lookup(
    table: Any, fps: list[str], dims: int, rejected: set[str] | None = None
) -> Iterator[tuple[str, np.ndarray]]:
    """Yield (fingerprint, vector) once per fingerprint the table holds a sound vector for, a batch at a time.

    A sound vector has `dims` finite values and matches its row checksum (tables written
    before checksums existed are checked for dimension and finiteness only). Fingerprints
    whose only rows fail go to `rejected`. Duplicate rows (two builds appending the same
    fingerprint) are harmless: the first sound one wins.
    """
    import numpy as np

    checked = "checksum" in table.schema.names
    columns = ["fingerprint", "vector", "checksum"] if checked else ["fingerprint", "vector"]
    if table.schema.field("vector").type.list_size != dims:
        if rejected is not None:
            rejected.update(fps)
        return
    for start in range(0, len(fps), LOOKUP_BATCH):
        batch = fps[start : start + LOOKUP_BATCH]
        in_list = ",".join(f"'{fp}'" for fp in batch)  # fingerprints are sha256 hex: safe to quote
        rows = table.search().where(f"fingerprint IN ({in_list})").select(columns).limit(None).to_arrow()
        if rows.num_rows == 0:
            continue
        column = rows.column("vector").combine_chunks()
        flat = column.values.slice(column.offset * dims, len(column) * dims)
        vectors = flat.to_numpy(zero_copy_only=False).astype(np.float32, copy=False).reshape(-1, dims)
        nulls = column.is_null().to_numpy(zero_copy_only=False)
        sums = rows.column("checksum").to_pylist() if checked else [None] * rows.num_rows
        seen: set[str] = set()
        bad: set[str] = set()
        for fp, vec, null, want in zip(rows.column("fingerprint").to_pylist(), vectors, nulls, sums):
            if fp in seen:
                continue
            if null or not np.isfinite(vec).all() or (checked and want != row_checksum(fp, vec)):
                bad.add(fp)
                continue
            seen.add(fp)
            yield fp, vec
        if rejected is not None:
            rejected.update(bad - seen)


def _entries(table: Any) -> list[tuple[str, str]]:
    """(fingerprint, chunk_id) of every entry: strings only, no vectors."""
    rows = table.search().select(["fingerprint", "chunk_id"]).limit(None).to_arrow()
    return list(dict.fromkeys(zip(rows.column("fingerprint").to_pylist(), rows.column("chunk_id").to_pylist())))


def read_vectors(sources: list[Path], fingerprints: list[str], dims: int) -> np.ndarray:
    """Vectors aligned with `fingerprints`, read in batches from the first source that has each."""
    import numpy as np

    out = np.zeros((len(fingerprints), dims), dtype=np.float32)
    where: dict[str, list[int]] = {}
    for i, fp in enumerate(fingerprints):
        where.setdefault(fp, []).append(i)
    remaining = set(where)
    for source in sources:
        if not remaining or not (Path(source) / f"{TABLE}.lance").exists():
            continue
        for fp, vec in _lookup(_open(source), sorted(remaining), dims):
            out[where[fp]] = vec
            remaining.discard(fp)
    if remaining:
        raise DocsMcpError(
            f"the embedding cache at {sources[0]} lacks {len(remaining)} vector(s) this build needs; "
            "it changed during the build — run the build again"
        )
    return out


def _meta_type_problem(meta: dict[str, Any]) -> str | None:
    """cache-meta.json is valid JSON; say which field, if any, has the wrong type."""
    if "entries" in meta and (not isinstance(meta["entries"], int) or isinstance(meta["entries"], bool)):
        return "field 'entries' is not a number"
    if "entries_digest" in meta and not isinstance(meta["entries_digest"], str):
        return "field 'entries_digest' is not a string"
    files = meta.get("files")
    if "files" in meta and not isinstance(files, dict):
        return "field 'files' is not an object"
    for rel, want in (files or {}).items():
        sound = (isinstance(want, int) and not isinstance(want, bool)) or (
            isinstance(want, dict) and isinstance(want.get("size"), int) and isinstance(want.get("sha256"), str)
        )
        if not sound or ".." in Path(rel).parts or Path(rel).is_absolute():
            return f"field 'files' has a bad entry for {rel!r}"
    return None


def cache_folders(path: Path) -> tuple[Path, Path, Path, Path]:
    """The cache folder and its siblings: (C, C.pending, C.tmp, C.old), as the module docstring describes."""
    pending, tmp, old = (path.with_name(path.name + suffix) for suffix in (".pending", ".tmp", ".old"))
    return path, pending, tmp, old


def may_hold_vectors(cache_dir: Path, provider: EmbeddingProvider) -> bool:
    """Whether the cache folder or a sibling (pending, tmp, old) says it holds vectors of this provider's config.

    Only the meta files are read, nothing is checked: it is a guess for starting a model load early
    (indexing/cached_vectors.py load_model_early), and a wrong guess costs a load or a wait, never a vector.
    """
    want = provider.config_fingerprint
    for folder in cache_folders(Path(cache_dir)):
        try:
            meta = read_json(folder / META_FILE)
        except (OSError, ValueError):
            meta = None
        if meta is None:
            continue
        if not isinstance(meta, dict) or meta.get("config_fingerprint") == want:
            return True  # unreadable: it may still be this provider's, so assume it is
    return False


class EmbeddingCache:
    """One cache folder and its pending/tmp/old siblings."""

    def __init__(self, path: Path, provider: EmbeddingProvider, reporter: Reporter) -> None:
        self.path, self.pending, self.tmp, self.old = cache_folders(Path(path))
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
                self.reporter.warn(
                    f"embedding cache: completed an interrupted swap ({self.tmp.name} → {self.path.name})"
                )
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
        if meta is None and not (folder / META_FILE).is_file():
            return f"{META_FILE} is missing"
        if not isinstance(meta, dict):
            return f"{META_FILE} is corrupt (not an object)"
        want = self.expected_meta()
        typed = _meta_type_problem(meta)
        if typed:
            return f"{META_FILE} is corrupt ({typed})"
        if str(meta.get("cache_version", "")).split(".")[0] != CACHE_VERSION:
            return (
                f"cache_version {meta.get('cache_version')!r} is not supported (this docs-mcp writes {CACHE_VERSION})"
            )
        if meta.get("format_version") != want["format_version"]:
            return "format_version mismatch (the embedding input format changed)"
        if meta.get("config_fingerprint") != want["config_fingerprint"]:
            return "config_fingerprint mismatch (provider config changed)"
        if "files" in meta:  # a written cache lists its files: check their bytes without opening LanceDB
            for rel, want_file in sorted(meta["files"].items()):
                path = folder / rel
                size = want_file if isinstance(want_file, int) else want_file["size"]
                if not path.is_file():
                    return f"the vectors table is damaged ({rel} is missing)"
                if path.stat().st_size != size:
                    return f"the vectors table is damaged ({rel} has {path.stat().st_size} of {size} bytes)"
                if isinstance(want_file, dict) and file_sha256(path) != want_file["sha256"]:
                    return f"the vectors table is damaged ({rel} does not match its checksum)"
            return None
        try:  # the pending store is appended to as batches arrive: opened, and each row checked when read
            table = _open(folder)
            if table.schema != _schema(self.provider.dimensions):  # new batches are appended to it
                return "the vectors table has another layout (wrong dimension, or written by an older docs-mcp)"
            table.search().select(["fingerprint", "vector"]).limit(1).to_arrow()
        except Exception as exc:  # noqa: BLE001 - any failure to read means: unusable
            return f"the vectors table is unreadable ({_reason(exc)})"
        return None

    def load(self) -> dict[str, Any] | None:
        """The usable cache's meta; an unusable cache is discarded with a warning naming why."""
        if not self.path.exists():
            return None
        problem = self._problem(self.path)
        if problem is None:
            return read_json(self.path / META_FILE)
        # Not deleted here: until this build is published, commit_cache has not replaced it.
        self.reporter.warn(f"embedding cache invalidated: {problem}")
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
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(fps), self.provider.dimensions) or not np.isfinite(vectors).all():
            raise DocsMcpError(
                f"{self.provider.name} returned vectors of shape {vectors.shape} or with NaN/inf "
                f"values for {len(fps)} input(s); expected {self.provider.dimensions} finite numbers each"
            )
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
        items = [items[i] for i in hooks.embedding_order(provider, [text for _, _, text in items])]
        size = max(1, provider.batch_size)
        batches = [items[i : i + size] for i in range(0, len(items), size)]
        workers = max(1, provider.concurrency)
        timer = Timer()
        done = 0
        failure: BaseException | None = None
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="embed") as pool:
            futures: dict[Future[np.ndarray], list[tuple[str, str, str]]] = {}
            queue = iter(batches)

            def submit(in_flight: int) -> None:
                for batch in queue:
                    futures[pool.submit(provider.embed, [text for _, _, text in batch])] = batch
                    in_flight += 1
                    if in_flight >= workers * 2:
                        break

            submit(0)
            while futures:
                finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                if failure is None and all(future.exception() is None for future in finished):
                    # the next batches go in before the finished ones are written: the provider never
                    # waits for the cache
                    submit(len(futures) - len(finished))
                for future in finished:
                    batch = futures.pop(future)
                    try:
                        pause("embedded-batch")
                        self._append_pending([fp for fp, _, _ in batch], [cid for _, cid, _ in batch], future.result())
                    except BaseException as exc:  # noqa: BLE001 - reported below, after in-flight batches land
                        failure = failure or exc
                        continue
                    done += len(batch)
                    stats.embedded += len(batch)
                    self.reporter.progress(f"embedding via {provider.name}", done, len(items))
        stats.seconds = timer.seconds
        usage = hooks.usage(provider)
        stats.tokens = usage.tokens
        stats.cost = usage.cost
        truncated = usage.truncated
        if truncated:
            self.reporter.warn(
                f"{len(truncated)} embedding input(s) were longer than {provider.model}'s limit and "
                f"were truncated (longest: {max(truncated)} characters)"
            )
        if failure is not None:
            if not isinstance(failure, Exception):  # Ctrl-C: stop as interrupted, the vectors kept in .pending
                raise failure
            if isinstance(failure, DocsMcpError):
                reason = str(failure)
            else:
                reason = f"{type(failure).__name__}: {failure}"
            what = _noun(provider, len(items))
            kept = (
                f"embedded {stats.embedded} of {len(items)} missing {what} before the failure; they are kept in "
                f"{self.pending} and the next build will not pay for them again."
                if stats.embedded
                else f"none of the {len(items)} missing {what} were embedded."
            )
            raise DocsMcpError(f"{reason}\n{kept} The published index and the embedding cache are unchanged.")

    # 6. prune and write (after publish) --------------------------------------------------
    def write(self, fingerprints: list[str], chunk_ids: dict[str, str], sources: list[Path]) -> int:
        """Write exactly `fingerprints` (copied in batches from `sources`) to C.tmp and swap it in.

        A vector no source holds soundly is left out (with a warning): the next build embeds it again.
        """
        import lancedb
        import numpy as np
        from lancedb.index import BTree

        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir(parents=True)
        dims = self.provider.dimensions
        wanted = list(dict.fromkeys(fingerprints))
        remaining = set(wanted)

        def batches() -> Iterator[Any]:
            for source in sources:
                if not (source / f"{TABLE}.lance").exists():
                    continue
                fps, vecs = [], []
                for fp, vec in _lookup(_open(source), sorted(remaining), dims):
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
            self.reporter.warn(
                f"embedding cache: {len(remaining)} vector(s) could not be read back and were left out; "
                "the next build embeds them again"
            )
            wanted = [fp for fp in wanted if fp not in remaining]
        table.create_index("fingerprint", config=BTree())
        table_dir = self.tmp / f"{TABLE}.lance"
        files = {
            str(p.relative_to(self.tmp)): {"size": p.stat().st_size, "sha256": file_sha256(p)}
            for p in sorted(table_dir.rglob("*"))
            if p.is_file()
        }
        write_json_atomic(
            self.tmp / META_FILE,
            {**self.expected_meta(), "entries": len(wanted), "entries_digest": entries_digest(wanted), "files": files},
        )
        if self.path.exists():
            self.path.rename(self.old)
        self.tmp.rename(self.path)
        shutil.rmtree(self.old, ignore_errors=True)
        shutil.rmtree(self.pending, ignore_errors=True)
        return len(wanted)

    def drop(self, folder: Path, why: str) -> None:
        """Discard a cache or pending store found damaged while reading it."""
        which = (
            "embedding cache invalidated"
            if folder == self.path
            else "embedding cache: discarding vectors kept by an unfinished build"
        )
        self.reporter.warn(f"{which}: {why}")
        shutil.rmtree(folder, ignore_errors=True)


def embed_with_cache(
    chunk_ids: list[str],
    inputs: Sequence[str] | Callable[[list[str]], dict[str, str]],
    fingerprints: list[str],
    provider: EmbeddingProvider,
    cache_dir: Path,
    *,
    rebuild: bool = False,
    reporter: Reporter | None = None,
    keep: Collection[str] = (),
) -> EmbedResult:
    """Seed 000's lifecycle: clean up, load, match, embed misses. The pruned cache is written by commit_cache.

    `inputs`: the text of each fingerprint, or a function giving the texts of the missing ones (a build
    whose chunks are mostly unchanged does not split them into passages again to find none missing).
    `keep`: the fingerprints the other published versions of a versioned corpus use; the cache is shared
    by every version, so pruning keeps them too (the cache holds the union of what every version uses)."""
    reporter = reporter or NullReporter()
    stats = CacheStats()
    if not makes_vectors(provider):
        return EmbedResult(fingerprints, 0, None, stats)
    cache = EmbeddingCache(cache_dir, provider, reporter)
    dims = provider.dimensions
    cache.recover()
    unique = list(dict.fromkeys(fingerprints))
    keep = frozenset(keep)
    others = keep - set(unique)
    first_id = dict(zip(reversed(fingerprints), reversed(chunk_ids)))
    meta = None if rebuild else cache.load()
    pending = False if rebuild else cache.load_pending()
    if rebuild and cache.pending.exists():
        shutil.rmtree(cache.pending, ignore_errors=True)
    events: dict[str, str] = {}
    for_others: dict[str, str] = {}  # other versions' entries the commit keeps

    def result(sources: list[Path], commit: bool, pruned: list[tuple[str, str]]) -> EmbedResult:
        return EmbedResult(
            fingerprints,
            dims,
            str(cache.path),
            stats,
            forced=rebuild,
            fingerprint_events=events,
            pruned=pruned,
            sources=[str(p) for p in sources],
            chunk_ids=list(chunk_ids),
            commit=commit,
            passages_key=passages_key(provider.config_fingerprint),
            kept=for_others,
            shared=sum(1 for fp in unique if fp in keep and events.get(fp) == "hit"),
        )

    if meta is not None and not pending and meta.get("entries_digest") == entries_digest([*unique, *others]):
        # The cache holds exactly this build's vectors: nothing to embed, nothing to rewrite. Its files
        # matched their checksums; a cache written before checksums existed has its vectors read instead
        # (if any is unsound, the lookup below says so and only those are embedded again).
        found = len(unique)
        if not all(isinstance(f, dict) for f in meta.get("files", {}).values()):
            try:
                found = sum(1 for _ in _lookup(_open(cache.path), unique, dims))
            except Exception:  # noqa: BLE001 - the lookup below reports and handles it
                found = -1
        if found == len(unique):
            stats.hits = len(fingerprints)
            events = {fp: "hit" for fp in unique}
            _report_lookup(reporter, stats, provider, chunk_ids, rebuild)
            return result([cache.path], False, [])

    have: set[str] = set()
    sources: list[Path] = []
    pruned: list[tuple[str, str]] = []
    if meta is not None:
        bad_cached: set[str] = set()
        try:
            table = _open(cache.path)
            have.update(fp for fp, _ in _lookup(table, unique, dims, bad_cached))
            current = set(unique)
            entries = _entries(table)
            for_others = {fp: cid for fp, cid in entries if fp in others}
            pruned = [(fp, cid) for fp, cid in entries if fp not in current and fp not in others]
        except Exception as exc:  # noqa: BLE001 - damage the file check could not see
            cache.drop(cache.path, f"the vectors table is unreadable ({_reason(exc)})")
            have, pruned, meta, for_others = set(), [], None, {}
        else:
            sources.append(cache.path)
            if bad_cached:
                reporter.warn(
                    f"embedding cache: {len(bad_cached)} damaged vector(s) ignored (wrong dimension, NaN/inf or "
                    "checksum mismatch); they are embedded again"
                )
    kept_from: list[Path] = []
    if rebuild and others and cache.load() is not None:
        # One version rebuilt from scratch: its own vectors are embedded again, the other versions'
        # entries stay as they are (read after .pending, so this build's new vectors win).
        try:
            for_others = {fp: cid for fp, cid in _entries(_open(cache.path)) if fp in others}
        except Exception as exc:  # noqa: BLE001 - only the other versions' reuse is lost
            reporter.warn(f"embedding cache: the other versions' vectors cannot be kept ({_reason(exc)})")
        else:
            kept_from.append(cache.path)
    stats.pruned = len(pruned)
    if pending:
        bad_pending: set[str] = set()
        try:
            kept = {
                fp
                for fp, _ in _lookup(_open(cache.pending), [fp for fp in unique if fp not in have], dims, bad_pending)
            }
        except Exception as exc:  # noqa: BLE001 - a damaged pending store only costs what it held
            cache.drop(cache.pending, f"the vectors table is unreadable ({_reason(exc)})")
            kept = set()
        if bad_pending:
            reporter.warn(
                f"embedding cache: {len(bad_pending)} damaged vector(s) kept by an unfinished build ignored "
                "(wrong dimension, NaN/inf or checksum mismatch); they are embedded again"
            )
        stats.reused_pending = len(kept)
        have |= kept
    sources.append(cache.pending)
    sources += kept_from
    stats.hits = sum(1 for fp in fingerprints if fp in have)
    stats.misses = len(fingerprints) - stats.hits
    events = {fp: ("hit" if fp in have else "miss") for fp in unique}
    _report_lookup(reporter, stats, provider, chunk_ids, rebuild)
    missing = [fp for fp in unique if fp not in have]
    if missing:
        input_of = inputs(missing) if callable(inputs) else dict(zip(reversed(fingerprints), reversed(inputs)))
        cache.embed_missing([(fp, first_id[fp], input_of[fp]) for fp in missing], stats)
        _report_embedded(reporter, stats, provider)
    return result(sources, True, pruned)


def commit_cache(embedded: EmbedResult, provider: EmbeddingProvider, reporter: Reporter | None = None) -> None:
    """After publish: rewrite the cache to exactly the published build's vectors (and those other versions
    of the corpus use, `embedded.kept`) and drop `.pending`.

    Deferred to here so that a build killed before publishing leaves the cache still holding
    every vector the published index uses. A failure only costs a warning: the index is
    already published and the next build finds the vectors in the cache and `.pending`.
    """
    reporter = reporter or NullReporter()
    if embedded.cache_dir is None or not embedded.commit:
        return
    cache = EmbeddingCache(Path(embedded.cache_dir), provider, reporter)
    first_id = dict(zip(reversed(embedded.fingerprints), reversed(embedded.chunk_ids)))
    try:
        wanted = [*dict.fromkeys(embedded.fingerprints), *(fp for fp in embedded.kept if fp not in first_id)]
        cache.write(wanted, {**embedded.kept, **first_id}, [Path(s) for s in embedded.sources])
    except Exception as exc:  # noqa: BLE001 - the index is published; the next build retries this
        shutil.rmtree(cache.tmp, ignore_errors=True)
        reporter.warn(f"could not update the embedding cache ({_reason(exc)}); the next build will")


def _noun(provider: EmbeddingProvider, count: int) -> str:
    """What is embedded: passages when a long chunk can have several (embedding/input.py), else chunks."""
    what = "passage" if multivector(provider) else "chunk"
    return what if count == 1 else f"{what}s"


def _plural(count: int, word: str, plural: str) -> str:
    return f"{count} {word if count == 1 else plural}"


def _report_lookup(
    reporter: Reporter, stats: CacheStats, provider: EmbeddingProvider, chunk_ids: list[str], rebuild: bool
) -> None:
    """One line whose counts add up: hits + misses = the passages (or chunks) of this build."""
    total = stats.hits + stats.misses
    of = f"{total} {_noun(provider, total)}"
    if multivector(provider):
        chunks = len(dict.fromkeys(chunk_ids))
        of += f" of {_plural(chunks, 'chunk', 'chunks')}"
    which = "embedding cache (rebuilt from scratch)" if rebuild else "embedding cache"
    reporter.info(
        f"{which}: {_plural(stats.hits, 'hit', 'hits')}, {_plural(stats.misses, 'miss', 'misses')} among {of} "
        f"({stats.hit_rate:.1f}% hit rate)"
    )
    if stats.reused_pending:
        reporter.info(f"reused {stats.reused_pending} vectors kept by an earlier unfinished build")


def _report_embedded(reporter: Reporter, stats: CacheStats, provider: EmbeddingProvider) -> None:
    cost = f" ({stats.tokens} tokens, estimated cost ${stats.cost:.4f})" if stats.tokens else ""
    repeats = stats.misses - stats.embedded
    # two chunks with the same embedding input are one miss each but one call to the provider
    same = f"; {_plural(repeats, 'miss repeats', 'misses repeat')} another's text" if repeats > 0 else ""
    reporter.info(
        f"embedded {stats.embedded} {_noun(provider, stats.embedded)} via {provider.name} in "
        f"{stats.seconds:.1f}s{cost}{same}"
    )
