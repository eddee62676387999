"""The build, as steps. The CLI runs them in a row; each Dagster asset wraps exactly one.

chunk_corpus → fingerprint_chunks → embed_chunks → write_index → publish_metadata
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..chunking.chunker import CHUNKER_VERSION
from ..corpus.beneath import read_beneath
from ..corpus.prompts import load_prompts
from ..corpus.site import pages_site_name
from ..corpus.taxonomy import build_taxonomy, check_taxonomy_limits, server_instructions
from ..corpus.walk import decode_text, manifest_rules, read_hashed, scan_corpus
from ..diagnostics import Diagnostic, error, has_errors
from ..embedding import EmbeddingProvider
from ..embedding.cache import EmbedResult, commit_cache, embed_with_cache, may_hold_vectors
from ..errors import DocsMcpError, ValidationFailed
from ..failpoints import pause
from ..fsutil import file_stat, remove_temp_files, write_atomic, write_json_atomic
from ..output.chunk import Chunk
from ..output.layout import CHUNKS, FILE_STATE, METADATA, OutputLayout
from ..output.lock import build_lock
from ..output.metadata import (
    SCHEMA_VERSION,
    PublishedMetadata,
    TableVersion,
    build_metadata,
    read_metadata,
    write_metadata,
)
from ..output.table_files import (
    forget_records,
    manifests,
    record_files,
    records_problem,
    remove_files,
    unrecorded_files,
    version_problem,
)
from ..output.vector_index import INDEX_KIND, VectorIndexPolicy
from ..progress import NullReporter, Reporter, Timer
from .audit import new_build_id, record_build
from .chunk_lines import SourceUrls, Spill, chunk_line, parse_line
from .file_reuse import (
    PreviousChunks,
    chunk_pieces,
    discard_pending,
    file_key,
    load_previous,
    pending_paths,
    publish_pending,
    published_files,
    recorded_passages_key,
    write_pending,
    write_pending_chunks,
)
from .parsing import Parsed, ParseJob, Parser
from .passages import passage_plan, recorded_passages

if TYPE_CHECKING:  # object storage is imported only to build for it
    from ..output.objectstore import RemoteOutput


@dataclass
class FileRecord:
    relpath: str
    sha256: str
    chunks: int
    key: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)  # headings of its level-1 chunks, for the default description
    reused: bool = False
    stat: list[int] | None = None  # fsutil.file_stat when it was scanned
    included: dict[str, str] = field(default_factory=dict)  # files its includes read (project-relative) -> sha256
    constructs: list[tuple[str, int]] = field(default_factory=list)  # dialect constructs (parsed files only)


@dataclass
class ChunkSet:
    """Output of the chunk step: everything later steps and metadata.json need.

    The chunks themselves are not held: parsed files' chunks wait in a spill file, unchanged
    files' chunks in the previous build's chunks.json, and `lines()` reads them back in order,
    a file at a time. `unchanged_sha256` names that chunks.json when this build's chunks are
    exactly its chunks, which lets a no-op build skip re-serializing them.
    """

    root: str
    files: list[FileRecord]
    taxonomy: dict[str, Any]
    instructions: str | None
    prompts: list[dict[str, Any]]
    diagnostics: list[Diagnostic]
    reparsed: int = 0
    reused: int = 0
    seconds: float = 0.0
    workers: int = 1  # processes that parsed files (1: this one)
    hashed: int = 0  # files read and hashed; the others were trusted by their recorded stat
    scanned_ns: int = 0  # when the scan began: the racy limit of the stats recorded for the next build
    base_sha256: str = ""  # the previous build's chunks.json, which `changed_files` are relative to
    changed_files: list[str] = field(default_factory=list)  # files whose chunks differ from it (edited or gone)
    replaced_rows: int = 0  # chunks the previous build had for those files
    unchanged_sha256: str = ""
    framework: str | None = None  # the docs framework detected (corpus/framework.py), e.g. "MkDocs (../mkdocs.yml)"
    site_name: str | None = None  # what the corpus calls itself: its framework's site name, else its README's title
    site_description: str | None = None  # the framework's site description, else the README's first paragraph
    notes: list[str] = field(
        default_factory=list
    )  # what validate and build say besides findings (config keys not read)
    _chunks: list[Chunk] | None = field(default=None, repr=False)
    _previous: PreviousChunks | None = field(default=None, repr=False)
    _spill: Spill | None = field(default=None, repr=False)

    def lines(self, only: set[str] | None = None) -> Iterator[bytes]:
        """This build's chunks.json lines, in order (chunk_lines.chunk_line), holding one file's at a time;
        with `only`, those of these files (the previous chunks.json is read only if one of them is reused)."""
        if self._chunks is not None:
            yield from (chunk_line(c) for c in self._chunks if only is None or c.filepath in only)
            return
        wanted = [f for f in self.files if f.chunks and (only is None or f.relpath in only)]
        reused = {f.relpath for f in wanted if f.reused}
        previous = self._previous.file_lines(reused) if self._previous is not None and reused else iter(())
        ahead: dict[str, list[bytes]] = {}  # files the previous chunks.json had before the one wanted
        for record in wanted:
            if not record.reused:
                assert self._spill is not None
                yield from self._spill.lines(record.relpath)
                continue
            while record.relpath not in ahead:
                path, lines = next(previous, (None, []))
                if path is None:
                    break
                ahead[path] = lines
            found = ahead.pop(record.relpath, [])
            if len(found) != record.chunks:
                raise DocsMcpError(
                    f"the previous chunks.json does not have the {record.chunks} chunks its build state "
                    f"records for {record.relpath}; rebuild with --force"
                )
            yield from found  # as this chunker wrote them (the reuse key changes with CHUNKER_VERSION)
        for _ in previous:  # read to the end: that checks its sha256
            pass

    @property
    def previous(self) -> PreviousChunks | None:
        """The last published build this one reuses files from (None: none, or the chunks are held)."""
        return self._previous

    def iter_chunks(self) -> Iterator[Chunk]:
        return (parse_line(line) for line in self.lines())

    def parsed_chunks(self) -> list[Chunk]:
        """The chunks of the files this build parsed (not reused): what a table update adds."""
        parsed = {f.relpath for f in self.files if not f.reused and f.chunks}
        if self._chunks is not None:
            return [c for c in self._chunks if c.filepath in parsed]
        assert self._spill is not None or not parsed
        return [parse_line(line) for f in self.files if f.relpath in parsed for line in self._spill.lines(f.relpath)]

    @property
    def chunks(self) -> list[Chunk]:
        """Every chunk, in memory: for callers that want a list (the build itself streams `lines()`)."""
        if self._chunks is None:
            self._chunks = list(self.iter_chunks())
            self._previous, self._spill = None, None
        return self._chunks

    @property
    def chunk_count(self) -> int:
        return sum(f.chunks for f in self.files)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (between Dagster assets) with its chunks: the previous chunks.json may be gone by then."""
        _ = self.chunks  # loads them: the property reads the previous chunks.json on first use
        return {**self.__dict__, "_previous": None, "_spill": None}

    @property
    def taxonomy_keys(self) -> list[str]:
        return sorted(self.taxonomy)

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


def _titles(chunks: list[Chunk]) -> list[str]:
    return [c.heading for c in chunks if c.heading_level == 1 and c.heading]


# What a config key that could not be read costs, for the note that says so.
UNREAD = {
    "title": "the corpus description names the site otherwise",
    "site": "pages get no source_url",
    "routeBasePath": "pages get no source_url",
    "srcExclude": "pages it leaves out are indexed",
}


def analyze_corpus(
    docs_dir: Path,
    reporter: Reporter | None = None,
    previous: PreviousChunks | None = None,
    *,
    workers: int | None = None,
    spill_dir: Path | None = None,
) -> ChunkSet:
    """Parse, check and chunk every file, reusing unchanged files' chunks from `previous`.

    Files that need parsing go to `workers` processes (default: one per core) when there are
    enough of them to pay for it (indexing/parsing.py); the result does not depend on it.
    Their chunks go to a spill file in `spill_dir` (default: the system's temporary folder).
    """
    reporter = reporter or NullReporter()
    timer = Timer()
    scanned_ns = time.time_ns()
    scan = scan_corpus(Path(docs_dir))
    diags = list(scan.diagnostics)
    files: list[FileRecord] = []
    spill = Spill(spill_dir)
    seen_ids: set[str] = set()
    waiting: deque[FileRecord] = deque()  # files sent to the parser, in order, awaiting their result
    includes = scan.includes
    context = scan.context_key
    parser = Parser(scan.manifests, workers, includes=includes, site=scan.site)
    hashed = 0

    def take(results: Iterator[Parsed]) -> None:
        for result in results:
            record = waiting.popleft()
            record.chunks, record.diagnostics, record.metadata = len(result.chunks), result.diagnostics, result.metadata
            record.titles = _titles(result.chunks)
            record.included, record.constructs = result.included, result.constructs
            if result.chunks:
                diags.extend(_duplicate_ids(result.chunks, seen_ids))
                spill.add(record.relpath, result.chunks)

    root = os.path.join(str(scan.root), "")  # ends with the separator: a path per file is one concatenation
    try:
        for n, rel in enumerate(scan.markdown, start=1):
            path = root + rel  # a str: a Path per file cost a no-op of 4,560 files ~30 ms
            stat = file_stat(path)
            rules = manifest_rules(rel, scan.manifests)
            # as git trusts its index: a settled file with its recorded stat is not read again
            trusted = previous.trusted_sha256(rel, stat) if previous else None
            key = file_key(rel, trusted, rules, context) if trusted else ""
            hit = previous.match(rel, key, includes.project_root) if previous and trusted else None
            if hit is not None:
                data, digest, problem = None, trusted or "", None
            else:
                data, digest, problem = read_hashed(scan.root, rel)
                hashed += 1
                key = file_key(rel, digest, rules, context)
                # the same bytes decoded before: a reused file is not decoded again
                hit = previous.match(rel, key, includes.project_root) if previous and data is not None else None
            text = None
            if hit is None and data is not None:
                text, problem = decode_text(data, rel)
            if problem:
                diags.append(problem)
                continue
            if hit is not None:
                count, file_diags, metadata, titles, included = hit
                files.append(
                    FileRecord(
                        rel, digest, count, key, metadata, file_diags, titles, reused=True, stat=stat, included=included
                    )
                )
            else:
                record = FileRecord(rel, digest, 0, key, stat=stat)
                files.append(record)
                waiting.append(record)
                take(parser.feed(ParseJob(rel, text or "", digest, rules)))
            reporter.progress("parsing", n, len(scan.markdown))
        take(parser.finish())
    finally:
        parser.close()
    for record in files:
        diags.extend(record.diagnostics)
    reused = sum(f.reused for f in files)
    diags.extend(check_taxonomy_limits([(f.relpath, f.metadata) for f in files]))
    prompts, prompt_diags = load_prompts(scan.root, scan.templates)
    diags.extend(prompt_diags)
    taxonomy, tax_diags = build_taxonomy((f.metadata for f in files if f.chunks), scan.manifests)
    diags.extend(tax_diags)
    instructions, instr_diags = server_instructions(scan.manifests)
    diags.extend(instr_diags)
    chunkset = ChunkSet(
        str(scan.root),
        files,
        taxonomy,
        instructions,
        prompts,
        sorted(set(diags)),
        reparsed=len(files) - reused,
        reused=reused,
        seconds=timer.seconds,
        workers=parser.used_workers,
        hashed=hashed,
        scanned_ns=scanned_ns,
    )
    if previous is not None:  # what a table update has to replace (indexing/table.py update_table)
        kept = {f.relpath for f in files if f.reused}
        chunkset.base_sha256 = previous.chunks_sha256
        chunkset.changed_files = sorted(set(previous.files) - kept | {f.relpath for f in files if not f.reused})
        chunkset.replaced_rows = sum(int(previous.files.get(p, {}).get("chunks", 0)) for p in chunkset.changed_files)
    chunkset._spill, chunkset._previous = spill, previous if reused else None
    if scan.framework is not None:
        chunkset.framework = scan.framework.shown(scan.root)
        for key in scan.framework.unreadable:  # the framework's config, not the docs: a note, not a warning
            chunkset.notes.append(
                f"{scan.framework.name} config {os.path.relpath(scan.framework.config, scan.root)}: '{key}' is not "
                f"a plain value (computed, or a template string) and was not read ({UNREAD.get(key, 'not used')}); "
                "docs-mcp reads configs as data and never runs them"
            )
        chunkset.site_name, chunkset.site_description = scan.framework.site_name, scan.framework.description
    if not chunkset.site_name:  # pages staged from a website name their site (og:site_name, <title>)
        chunkset.site_name = pages_site_name(scan.root, [f.relpath for f in files])
    if not chunkset.site_name:
        chunkset.site_name, readme_text = readme_summary(scan.root, files)
        chunkset.site_description = chunkset.site_description or readme_text
    if previous is not None and reused == len(files) and [f.relpath for f in files] == list(previous.files):
        chunkset.unchanged_sha256 = previous.chunks_sha256  # nothing parsed, nothing gone: its chunks.json as is
    return chunkset


def _duplicate_ids(chunks: Iterable[Chunk], seen: set[str]) -> list[Diagnostic]:
    diags = []
    for c in chunks:
        if c.chunk_id in seen:
            diags.append(
                error(
                    c.filepath,
                    1,
                    f"two chunks get the ID '{c.chunk_id}'; rename one of the headings",
                    "duplicate-chunk-id",
                )
            )
        seen.add(c.chunk_id)
    return diags


def chunk_corpus(
    docs_dir: Path,
    reporter: Reporter | None = None,
    *,
    reuse_from: Path | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
    spill_dir: Path | None = None,
) -> ChunkSet:
    """The chunk step: validation errors stop the build; unchanged files reuse `reuse_from`'s chunks.

    Parsed chunks wait for the later steps in an unnamed file in `spill_dir` (default:
    `reuse_from`'s state folder, else the system's temporary folder).

    A corpus with no chunks is refused unless `allow_empty`: an empty index is almost always a
    wrong --docs-dir, and publishing it would silently replace a good one.
    """
    reporter = reporter or NullReporter()
    previous, why_not = load_previous(reuse_from)
    if why_not:
        reporter.info(f"re-parsing every file: {why_not}")
    if spill_dir is None and reuse_from is not None:
        spill_dir = OutputLayout(reuse_from).state
    chunkset = analyze_corpus(docs_dir, reporter, previous, workers=workers, spill_dir=spill_dir)
    if has_errors(chunkset.diagnostics):
        raise ValidationFailed(chunkset.diagnostics)
    if not chunkset.chunk_count and not allow_empty:
        found = (
            f"its {len(chunkset.files)} Markdown file(s) have no content"
            if chunkset.files
            else "it has no Markdown files (*.md, *.markdown, *.mdx, outside dot-folders and node_modules)"
        )
        raise DocsMcpError(
            f"nothing to index in {docs_dir}: {found}; check the docs folder, or pass --allow-empty "
            "(allow_empty: true in docs-mcp.yaml) to publish an empty index"
        )
    for d in chunkset.warnings:
        if d.code != "no-strategy":
            reporter.warn(d.format())
    defaults = sum(d.code == "no-strategy" for d in chunkset.warnings)
    if defaults:
        reporter.warn(
            f"{defaults} file(s) have no explicit chunking strategy; the default chunk_by: h2 applies "
            "(run `docs-mcp validate` for the list)"
        )
    if chunkset.framework:
        reporter.info(f"docs framework: {chunkset.framework}")
    for note in chunkset.notes:
        reporter.info(f"note: {note}")
    reporter.info(chunk_summary(chunkset))
    return chunkset


def chunk_summary(chunkset: ChunkSet) -> str:
    """The chunk step's line: the files parsed and those reused unchanged add up to all of them."""
    files, chunks = _count(len(chunkset.files), "file"), _count(chunkset.chunk_count, "chunk")
    workers = [f"{chunkset.workers} worker processes"] if chunkset.workers > 1 else []
    if not chunkset.reused:
        notes = f" ({workers[0]})" if workers else ""
        return f"parsed {files} into {chunks} in {chunkset.seconds:.1f}s{notes}"
    # the reused files not read were trusted by their recorded size and times
    reused = [f"{_count(chunkset.reused, 'unchanged file')} reused, {_count(chunkset.hashed, 'file')} read", *workers]
    return f"parsed {chunkset.reparsed} of {files} ({'; '.join(reused)}): {chunks} in {chunkset.seconds:.1f}s"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def load_model_early(
    provider: EmbeddingProvider, cache_dir: Path, *, rebuild: bool = False, changed: bool = False
) -> threading.Thread | None:
    """Start loading a slow model in a background thread when this build will embed every chunk, or
    (`changed`: files were parsed because their text changed) probably some.

    Why: on a cold build the load (imports, opening the model) then overlaps parsing instead of
    following it; after an edit, it overlaps the fingerprints and the cache lookup (importing
    LanceDB). Only then: a build that may embed nothing (a no-op rebuild, a touched file) must not
    pay for a model. A failed load is left for the embed step, which loads again and reports it.
    Join the thread before the build returns.
    """
    if not (provider.produces_vectors and provider.slow_to_load):
        return None
    if not (rebuild or changed) and may_hold_vectors(cache_dir, provider):
        return None

    # numpy first, on this thread: the model's runtime imports it in the thread while this one imports it
    # for the embedding cache, and two threads importing numpy at once left one of them a partial module
    # ("cannot import name '__cpu_features__'"; a third of rebuilds after the cache was removed failed)
    import numpy  # noqa: F401

    def load() -> None:
        try:
            provider.load()
        except Exception:  # noqa: BLE001, S110 - the embed step loads again and reports the failure
            pass

    thread = threading.Thread(target=load, name="docs-mcp-load-model", daemon=True)
    thread.start()
    return thread


def fingerprint_chunks(chunkset: ChunkSet, provider: EmbeddingProvider) -> list[str]:
    """One fingerprint per passage, chunk after chunk; none for a provider that makes no vectors
    (nothing is cached for it, and a no-op build then never loads the previous chunks). Files reused
    unchanged keep the fingerprints the last build recorded for them (passages.py)."""
    if not provider.produces_vectors:
        return []
    return passage_plan(chunkset, provider).fingerprints


def embed_chunks(
    chunkset: ChunkSet,
    fingerprints: list[str],
    provider: EmbeddingProvider,
    *,
    cache_dir: Path,
    rebuild_cache: bool = False,
    reporter: Reporter | None = None,
) -> EmbedResult:
    """Vectors for every passage of every chunk: cache hits reused, only misses sent to the provider."""
    if not provider.produces_vectors:
        return embed_with_cache(
            [], [], fingerprints, provider, Path(cache_dir), rebuild=rebuild_cache, reporter=reporter
        )
    plan = passage_plan(chunkset, provider)
    ids = [row[0] for row in plan.rows for _ in row[1:]]
    counts = [len(row) - 1 for row in plan.rows]
    if plan.fingerprints != fingerprints:
        raise DocsMcpError(f"{len(fingerprints)} fingerprints for {len(ids)} passages: the chunks changed; build again")
    embedded = embed_with_cache(
        ids,
        lambda missing: plan.texts_of(chunkset, provider, missing),
        fingerprints,
        provider,
        Path(cache_dir),
        rebuild=rebuild_cache,
        reporter=reporter,
    )
    # a list of vectors per row only when there are rows: LanceDB fails to create a multivector table from none
    embedded.passages = counts if provider.multivector and counts else None
    if embedded.stats.embedded:  # the model is loaded: make what its query embedding will open (once per machine)
        provider.prepare_queries()
    return embedded


def chunks_json(chunks: list[Chunk]) -> bytes:
    """chunks.json's bytes: a JSON array with one chunk per line (builds stream it: file_reuse.chunk_pieces)."""
    return b"".join(chunk_pieces(sorted(chunks, key=lambda c: (c.filepath, c.chunk_index))))


def index_content_hash(chunks_sha256: str, embedded: EmbedResult, keys: list[str]) -> str:
    """Everything the table is made of: chunks (by chunks.json's sha256), taxonomy columns, and (via fingerprints) vectors."""
    h = hashlib.sha256(f"schema={SCHEMA_VERSION}\0keys={','.join(keys)}\0dims={embedded.dimensions}\0".encode())
    h.update(chunks_sha256.encode())
    if embedded.passages is not None:  # a list of vectors per row (table.py): the layout is part of the table
        h.update(b"passages\0")
    for fp in embedded.fingerprints:
        h.update(fp.encode())
    return h.hexdigest()


def _read_published(out: Path, reporter: Reporter) -> PublishedMetadata | None:
    """The published metadata (empty when nothing is published), or None when it is damaged: a warning."""
    try:
        return read_metadata(out) or PublishedMetadata()
    except DocsMcpError as exc:
        reporter.warn(f"ignoring the published index and rebuilding: {exc}")
        return None


def _clean_leftovers(out: Path, published: TableVersion | None) -> None:
    """What a build killed earlier left behind: temp files, and chunks.json/state it wrote aside.

    If it was stopped after publishing metadata.json, its chunks.json is moved in now;
    never-published table versions go when this build prunes (see publish_metadata).
    """
    layout = OutputLayout(out)
    remove_temp_files(layout.root, [CHUNKS, METADATA])
    remove_temp_files(
        layout.state,
        [
            p.name
            for p in (layout.file_state, layout.written, layout.writing_marker, layout.table_files, layout.remote_base)
        ],
    )
    remove_temp_files(layout.pending, [CHUNKS, FILE_STATE])
    if published is not None and published.chunks_sha256:
        publish_pending(out, published.chunks_sha256)
    else:
        discard_pending(out)


UPDATE_MAX_SHARE = 0.1  # a change to at most this share of the rows updates the table; more rewrites it


def _update_published(
    out: Path,
    published: TableVersion,
    chunkset: ChunkSet,
    embedded: EmbedResult,
    keys: list[str],
    digest: str,
    reporter: Reporter,
    source_urls: bool,
) -> TableVersion | None:
    """A new table version made by updating the published one (table.update_table), or None when the
    table is to be written whole: it was not built from the previous chunks, it is damaged, its
    vectors were made under another config or format than this build's (or it does not say: a
    table published before `passages_key`), or the change is not small. With vectors, the kept
    rows' are this build's (same chunks, same passages key: same fingerprints) and the new rows
    get theirs from the embedding cache. `source_urls`: whether a chunk of this build has one
    (seen as chunks.json was written, which it always is when a file changed)."""
    if not chunkset.changed_files or published.chunks_sha256 != chunkset.base_sha256:
        return None
    if embedded.dimensions and not (embedded.passages_key and published.passages_key == embedded.passages_key):
        return None
    changed = set(chunkset.changed_files)
    rows = chunkset.replaced_rows + sum(f.chunks for f in chunkset.files if f.relpath in changed)
    if rows > UPDATE_MAX_SHARE * max(chunkset.chunk_count, 1) or version_problem(out, published) is not None:
        return None
    from .table import RowVectors, update_table

    chunks = chunkset.parsed_chunks()
    vectors = RowVectors.of(chunks, embedded) if embedded.dimensions else None
    marker = OutputLayout(out).writing_marker
    write_atomic(marker, b"")
    updated = update_table(
        out, published.version, chunkset.changed_files, chunks, keys, digest, source_urls=source_urls, vectors=vectors
    )
    marker.unlink()
    if updated is not None:
        reporter.info(
            f"index updated: a new table version, the rows of {_count(len(changed), 'changed file')} replaced "
            "and its indexes rebuilt"
        )
    return updated


def _reuse_problem(out: Path, published: TableVersion) -> tuple[str, bool] | None:
    """Why the published table version cannot simply be republished, and whether it is damage.

    Cheap: a directory listing and a stat per recorded file (a file whose stat changed is read
    and its checksum compared), no LanceDB. Build state that cannot vouch for the version's files
    (table-files.json missing, damaged or without its record) counts as damage: the table is
    rewritten rather than trusted unverified.
    """
    unverified = records_problem(out, published)
    if unverified:
        return f"cannot verify the published table: {unverified}", True
    problem = version_problem(out, published)
    if problem:
        return f"the published index is damaged ({problem})", True
    if max(manifests(out, published.table)) != published.version:
        return "an interrupted build left table versions that were never published", False
    return None


def write_index(
    out: Path,
    chunkset: ChunkSet,
    embedded: EmbedResult,
    reporter: Reporter | None = None,
    *,
    force: bool = False,
    vector_index: VectorIndexPolicy | None = None,
    publish_to: RemoteOutput | None = None,
) -> TableVersion:
    """Write a new, fully indexed table version, and chunks.json aside (nothing is published yet).

    If nothing the table is made of changed and the published version is intact, it is
    reused as is; `force` rewrites it anyway. A damaged published version is rewritten.
    `vector_index` decides whether the vector column gets an ANN index (default: when the
    vectors outgrow the server's in-memory budget); whether it has one is part of the content hash.
    With `publish_to` (an s3:// location), `out` is its local mirror: first brought up to date
    with what is published there.
    """
    reporter = reporter or NullReporter()
    out = Path(out)
    keys = chunkset.taxonomy_keys
    vector_rows = len(embedded.fingerprints) if embedded.cache_dir is not None else 0  # passages included
    ann = (vector_index or VectorIndexPolicy()).wanted(vector_rows or chunkset.chunk_count, embedded.dimensions)
    marker = OutputLayout(out).writing_marker
    with build_lock(out):
        if publish_to is not None and _objectstore().pull(publish_to, out, reporter.warn):
            reporter.info(f"{out} brought up to date with {publish_to.url}")
        current = _read_published(out, reporter)
        published = current.index if current else None
        _clean_leftovers(out, published)
        chunks_sha = chunkset.unchanged_sha256
        chunks_file = OutputLayout(out).chunks  # this build's chunks.json: the table is written from it
        source_urls: SourceUrls | None = None
        if not chunks_sha or published_files(out, chunks_sha)[0] != chunks_file:
            source_urls = SourceUrls()
            chunks_sha = write_pending_chunks(out, source_urls.watch(chunkset.lines()))  # streamed, never held whole
            chunks_file = pending_paths(out)[0]
        digest = index_content_hash(chunks_sha, embedded, keys)
        if ann:  # only then, so the hash of an index without one is what it always was
            digest = hashlib.sha256(f"{digest}\0vector-index={INDEX_KIND}".encode()).hexdigest()
        unchanged = published is not None and published.content_hash == digest
        reuse = unchanged and not marker.exists() and not embedded.forced and not force
        problem = _reuse_problem(out, published) if reuse and published else None
        if problem and problem[1]:
            reporter.warn(f"{problem[0]}; rewriting the table")
        elif problem:
            reporter.info(f"{problem[0]}; writing a new version so they can be removed")
        if reuse and published and not problem:  # the same fingerprints: the same passages key
            info = TableVersion(
                table=published.table,
                version=published.version,
                rows=published.rows,
                content_hash=digest,
                chunks_sha256=chunks_sha,
                passages_key=embedded.passages_key,
                vectors=vector_rows,
                made="kept",
            )
            reporter.info("index unchanged: the published table version is kept")
        elif (
            not (ann or force or embedded.forced)
            and published
            and (
                updated := _update_published(
                    out, published, chunkset, embedded, keys, digest, reporter, bool(source_urls and source_urls.found)
                )
            )
        ):
            info = updated.model_copy(
                update={
                    "chunks_sha256": chunks_sha,
                    "passages_key": embedded.passages_key,
                    "vectors": vector_rows,
                    "made": "updated",
                }
            )
            record_files(out, info.table, info.version, info.files)
        else:
            from .table import write_table  # LanceDB is imported only when a table is written

            write_atomic(marker, b"")
            vectors = embedded.load_vectors()
            intact = published is not None and version_problem(out, published) is None
            if ann:
                reporter.info(f"adding a vector index ({chunkset.chunk_count} rows, --vector-index to change)")
            written = write_table(
                out,
                chunks_file,
                vectors,
                keys,
                digest,
                discard_damaged=not intact,
                vector_index=ann,
                passages=embedded.passages,
            )
            info = written.model_copy(
                update={
                    "chunks_sha256": chunks_sha,
                    "passages_key": embedded.passages_key,
                    "vectors": vector_rows,
                    "made": "written",
                }
            )
            record_files(out, info.table, info.version, info.files)
            marker.unlink()
            indexes = "full-text and vector indexes" if embedded.dimensions else "full-text indexes"
            reporter.info(f"index written: a new table version, {_count(info.rows, 'row')} with {indexes}")
        key = embedded.passages_key if embedded.chunk_ids else None
        if (
            chunkset.hashed
            or chunks_sha != chunkset.unchanged_sha256
            or published_files(out, chunks_sha)[1] is None
            or recorded_passages_key(out, chunks_sha) != key
        ):
            write_pending(
                out, chunks_sha, chunkset.files, chunkset.scanned_ns, recorded_passages(chunkset.files, embedded)
            )
        # else every file was trusted by its recorded stat: the state in place already says all this one would
        write_json_atomic(OutputLayout(out).written, info.to_json())  # the version written, not yet published
    if info.rows != chunkset.chunk_count:
        raise DocsMcpError(f"index has {info.rows} rows but the build has {chunkset.chunk_count} chunks; rebuild")
    pause("written")
    return info


DESCRIPTION_TITLES = 8  # page titles named in a default corpus description
DESCRIPTION_VALUES = 8  # values named per taxonomy key


DESCRIPTION_SUMMARY = 300  # characters of a site description or README paragraph quoted
# Folder names that say nothing about what a corpus is: the description names the folder above them instead.
GENERIC_FOLDERS = {
    "docs",
    "doc",
    "documentation",
    "content",
    "src",
    "site",
    "pages",
    "website",
    "www",
    "staged",
    "source",
}


_BADGES = re.compile(r"\[image: [^\]]*\]")  # images as website staging writes them


def readme_summary(root: Path, files: list[FileRecord]) -> tuple[str | None, str | None]:
    """(title, first paragraph) of the corpus's top-level README, when it has one with a title."""
    from ..corpus.markdown import parser, split_frontmatter

    readme = next(
        (f for f in files if f.relpath.lower() in ("readme.md", "readme.mdx", "readme.rst", "index.md")), None
    )
    if readme is None or not readme.titles:
        return None, None
    try:  # inside the docs folder only, whatever it became since the walk (corpus/beneath.py)
        text = read_beneath(root, readme.relpath).decode("utf-8", errors="replace")
    except OSError:
        return readme.titles[0], None
    tokens = parser().parse(split_frontmatter(text).body)
    for i, tok in enumerate(tokens):
        if tok.type == "paragraph_open" and tok.level == 0 and i + 1 < len(tokens):
            from ..corpus.markdown import inline_text

            first = " ".join(inline_text(tokens[i + 1]).split())
            if len(_BADGES.sub("", first).strip()) > 20:  # not a row of badges
                return readme.titles[0], first
    return readme.titles[0], None


def corpus_label(name: str, root: str) -> str:
    """A corpus name that says something: a docs folder called `docs` is named after the folder above it."""
    path = Path(root)
    if name != path.name:
        return name
    for part in [path, *path.parents]:
        if part.name and part.name.lower() not in GENERIC_FOLDERS:
            return part.name
    return name


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def default_description(name: str, chunkset: ChunkSet) -> str:
    """What the corpus is, for agents choosing whether to search it: what it calls itself (its docs
    framework's site name and description, else its README's title and first paragraph), its size,
    page titles and taxonomy.

    Used when no --description is given; shown in the search_docs tool description.
    """
    shallow_first = sorted(chunkset.files, key=lambda f: (f.relpath.count("/"), f.relpath))
    # top-level pages first: a file's title is its first level-1 heading; each title once, in that order
    titles = list(dict.fromkeys(t for record in shallow_first for t in record.titles))
    files = len(chunkset.files)
    parts = [f"{files} page{'s' if files != 1 else ''}"]
    if titles:
        more = len(titles) - DESCRIPTION_TITLES
        parts.append(
            "pages such as " + ", ".join(titles[:DESCRIPTION_TITLES]) + (f" and {more} more" if more > 0 else "")
        )
    for key, field_ in sorted(chunkset.taxonomy.items()):
        values = list(field_.get("values", []))
        if values:
            more = len(values) - DESCRIPTION_VALUES
            parts.append(
                f"{key}: " + ", ".join(values[:DESCRIPTION_VALUES]) + (f" and {more} more" if more > 0 else "")
            )
    label = chunkset.site_name or corpus_label(name, chunkset.root)
    about = f": {_clip(chunkset.site_description, DESCRIPTION_SUMMARY)}" if chunkset.site_description else ""
    return f"{label} documentation{about} ({'; '.join(parts)})"


def publish_metadata(
    out: Path,
    chunkset: ChunkSet,
    index: TableVersion,
    provider: EmbeddingProvider,
    *,
    description: str | None = None,
    source_commit: str | None = None,
    embedded: EmbedResult | None = None,
    reporter: Reporter | None = None,
    corpus: str | None = None,
    publish_to: RemoteOutput | None = None,
) -> PublishedMetadata:
    """Write metadata.json: from this moment servers switch to the new table version.

    Without a description, one is made from the corpus (`corpus`, else the docs folder's name).

    Then chunks.json and the build state are moved in, table versions other than this one
    and the one published before it are pruned, and only then is the embedding cache pruned
    to `embedded`'s vectors (commit_cache), so a build that never publishes never takes a
    vector away from the published index.
    """
    out = Path(out)
    with build_lock(out):
        current = _read_published(out, NullReporter())  # write_index already warned about a damaged one
        old = current.index if current else None
        previous = old.version if old and old.table == index.table else None
        if previous == index.version:  # republished as is: the version before it stays the one to keep
            previous = old.previous_version if old else None
        entry = index.to_json()
        if isinstance(previous, int) and previous != index.version:
            entry["previous_version"] = previous
        metadata = build_metadata(
            description=description or default_description(corpus or Path(chunkset.root).name, chunkset),
            taxonomy=chunkset.taxonomy,
            total_chunks=chunkset.chunk_count,
            total_files=len(chunkset.files),
            source_commit=source_commit,
            embedding=provider.describe(),
            prompts=chunkset.prompts,
            instructions=chunkset.instructions,
            index=entry,
            chunker_version=CHUNKER_VERSION,
        )
        write_metadata(out, metadata)
        pause("publish")
        if index.chunks_sha256:
            publish_pending(out, index.chunks_sha256)
        keep = {index.version} | ({previous} if isinstance(previous, int) else set())
        # An unreadable metadata.json hid which version a running server may still hold: keep them all this time.
        if current is not None:
            _prune(out, index.table, keep)
        if publish_to is not None:  # the mirror is published: copy it up, metadata.json last
            timer = Timer()
            stats = _objectstore().push(out, publish_to)
            (reporter or NullReporter()).info(
                f"published to {publish_to.url}: {stats.uploaded} files ({stats.uploaded_bytes / 2**20:.1f} MB) "
                f"uploaded, {stats.deleted} deleted in {timer.seconds:.1f}s"
            )
        if embedded is not None:
            commit_cache(embedded, provider, reporter)
    return metadata


def _prune(out: Path, table: str, keep: set[int]) -> None:
    """Remove table versions not in `keep` and the files only they used (also those of an
    interrupted prune, which a no-op build finds without importing LanceDB)."""
    found = manifests(out, table)
    keep = {v for v in keep if v in found} | ({max(found)} if found else set())
    if set(found) - keep:
        from .table import prune_versions

        prune_versions(out, table, keep)
    else:
        remove_files(out, table, unrecorded_files(out, table, keep) or [])
    forget_records(out, table, keep)


@dataclass
class BuildSummary:
    out: str
    files: int
    chunks: int
    reused_files: int
    embedded: EmbedResult
    seconds: float
    index: TableVersion
    metadata: PublishedMetadata


def build(
    docs_dir: Path,
    out: Path,
    provider: EmbeddingProvider,
    *,
    description: str | None = None,
    source_commit: str | None = None,
    cache_dir: Path | None = None,
    rebuild_cache: bool = False,
    force: bool = False,
    corpus: str | None = None,
    reporter: Reporter | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
    pages: list[dict[str, Any]] | None = None,
    vector_index: VectorIndexPolicy | None = None,
    publish_to: RemoteOutput | None = None,
) -> BuildSummary:
    """Every step in order, all under the output's build lock; validation errors stop it before anything is written.

    The lock is taken before anything is parsed or paid for, so a second build of the same
    output fails at once instead of embedding everything again. `force` re-parses every
    file, re-embeds every chunk and rewrites the table. `pages`: a website crawl's page events,
    for the audit.
    """
    reporter = reporter or NullReporter()
    timer = Timer()
    out = Path(out)
    cache_dir = cache_dir or OutputLayout(out).embedding_cache
    with build_lock(out):
        loading = load_model_early(provider, cache_dir, rebuild=rebuild_cache or force)
        try:
            chunkset = chunk_corpus(
                docs_dir,
                reporter,
                reuse_from=None if force else out,
                allow_empty=allow_empty,
                workers=workers,
                spill_dir=OutputLayout(out).state,
            )
            if loading is None and chunkset.reparsed:
                loading = load_model_early(provider, cache_dir, changed=True)
            fingerprints = fingerprint_chunks(chunkset, provider)
            embedded = embed_chunks(
                chunkset,
                fingerprints,
                provider,
                cache_dir=cache_dir,
                rebuild_cache=rebuild_cache or force,
                reporter=reporter,
            )
            info = write_index(
                out, chunkset, embedded, reporter, force=force, vector_index=vector_index, publish_to=publish_to
            )
            metadata = publish_metadata(
                out,
                chunkset,
                info,
                provider,
                description=description,
                source_commit=source_commit,
                embedded=embedded,
                reporter=reporter,
                corpus=corpus,
                publish_to=publish_to,
            )
            try:
                record_build(
                    out,
                    build_id=new_build_id(),
                    corpus=corpus or out.resolve().name,
                    source_commit=source_commit,
                    chunkset=chunkset,
                    fingerprints=fingerprints,
                    embedded=embedded,
                    provider=provider,
                    table_version=info.version,
                    seconds=timer.seconds,
                    pages=pages,
                    defer=True,
                )
            except Exception as exc:  # noqa: BLE001 - the index is published; a locked audit file must not undo that
                reporter.warn(f"could not record this build in the audit database: {exc}")
            return BuildSummary(
                str(out),
                len(chunkset.files),
                chunkset.chunk_count,
                chunkset.reused,
                embedded,
                timer.seconds,
                info,
                metadata,
            )
        finally:
            if loading is not None:  # embed waited for it already; a failed build waits here
                loading.join()


def _objectstore() -> Any:
    from ..output import objectstore

    return objectstore


def build_remote(
    docs_dir: Path,
    url: str,
    provider: EmbeddingProvider,
    *,
    state_dir: Path | None = None,
    reporter: Reporter | None = None,
    **options: Any,
) -> BuildSummary:
    """`build` into the local mirror of `url` (`state_dir`), publishing it there (objectstore.py).

    The mirror is brought up to date before anything is parsed, so unchanged files are reused.
    The build lock is the mirror's: builds of one location from one machine never overlap;
    builds from two machines must be kept apart by whoever schedules them.
    """
    reporter = reporter or NullReporter()
    remote = _objectstore().RemoteOutput.parse(url)
    local = Path(state_dir) if state_dir else remote.default_state_dir()
    with build_lock(local):
        remote.check_bucket()
        if _objectstore().pull(remote, local, reporter.warn):
            reporter.info(f"state dir {local} brought up to date with {remote.url}")
        summary = build(docs_dir, local, provider, reporter=reporter, publish_to=remote, **options)
    summary.out = remote.url
    return summary
