"""Parse and chunk the files a build cannot reuse: in this process, or across worker processes.

Workers are started with `spawn` (LanceDB, loaded later in the build, is not fork-safe). By
default there is one per core, started only when enough files need parsing to pay for their
start (PARALLEL_MIN_FILES); an explicit worker count is always used. Files go out
in small batches with a bounded number in flight, and results come back in input order, so a
parallel build makes exactly the chunks a serial one does and never holds the whole corpus.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..chunking.chunker import chunk_markdown
from ..chunking.source_urls import with_site_urls, with_source_urls
from ..corpus.includes import IncludeContext
from ..corpus.manifest import LoadedManifest, Resolution
from ..corpus.markdown import mdx_mode
from ..corpus.site import SiteContext
from ..corpus.walk import resolve_file
from ..diagnostics import Diagnostic
from ..errors import DocsMcpError
from ..failpoints import pause
from ..gc_freeze import settle
from ..output.chunk import Chunk
from ..process import own_process
from .quarantine import Flag, screen_file

if TYPE_CHECKING:  # worker processes are started only for many changed files
    from concurrent.futures import Future, ProcessPoolExecutor

    from markdown_it.token import Token

    from ..trust.policy import Trust

# Files to parse before worker processes pay off (when the worker count is not given): a spawned
# worker costs ~0.35 s to start and import the parser, a dub-ts file ~1.3 ms to parse, and each
# file ~0.2 ms to send and receive; on 2 cores that breaks even near 800 files (benchmarks/scale.py).
PARALLEL_MIN_FILES = 800
BATCH_FILES = 16  # files per task: amortizes inter-process overhead, keeps the pipeline full
IN_FLIGHT_PER_WORKER = 4  # batches queued per worker: bounds the text held in memory


def default_workers() -> int:
    return os.cpu_count() or 1


@dataclass
class ParseJob:
    relpath: str
    text: str
    sha256: str
    rules: Resolution


@dataclass
class Parsed:
    chunks: list[Chunk]
    diagnostics: list[Diagnostic]
    metadata: dict[str, str]
    included: dict[str, str] = field(default_factory=dict)  # files its includes read -> sha256
    constructs: list[tuple[str, int]] = field(default_factory=list)  # dialect constructs seen (validate's table)
    flags: list[Flag] = field(default_factory=list)  # trust findings (indexing/quarantine.py)


_MANIFESTS: dict[str, LoadedManifest] = {}
_INCLUDES: IncludeContext | None = None
_SITE: SiteContext | None = None
_TRUST: Trust | None = None


def _init_worker(
    manifests: dict[str, LoadedManifest],
    includes: IncludeContext | None = None,
    site: SiteContext | None = None,
    trust: Trust | None = None,
) -> None:
    global _MANIFESTS, _INCLUDES, _SITE, _TRUST
    _MANIFESTS, _INCLUDES, _SITE, _TRUST = manifests, includes, site, trust
    pause("parse-worker")
    own_process()
    settle()  # the parser's imports and the manifests: not walked by each collection while parsing


def parse_one(
    job: ParseJob,
    manifests: dict[str, LoadedManifest],
    includes: IncludeContext | None = None,
    site: SiteContext | None = None,
    trust: Trust | None = None,
) -> Parsed:
    """One file's chunks, diagnostics and metadata (frontmatter, hints and manifest rules applied); with
    a docs framework's `site`, breadcrumbs that follow its navigation and the published page's URL; with
    `trust`, only the chunks to serve (indexing/quarantine.py) and the file's findings."""
    source, diags = resolve_file(job.relpath, job.text, job.sha256, manifests, job.rules, includes)
    if source.left_out is not None:
        return Parsed([], diags, source.metadata, source.included, source.constructs)
    nav_title, sections = site.nav.get(job.relpath, (None, ())) if site is not None else (None, ())
    flags: list[Flag] = []
    with mdx_mode(job.relpath.endswith(".mdx")):

        def chunked(body: str, tokens: list[Token] | None = None) -> list[Chunk]:
            title = source.title or nav_title
            return chunk_markdown(
                job.relpath, body, source.strategy, source.metadata, tokens=tokens, title=title, sections=sections
            )

        chunks = chunked(source.body, source.tokens)
        if trust is not None:
            chunks, flags = screen_file(trust, job.relpath, job.text, source.body, chunks, chunked)
    if source.source_url:
        chunks = with_source_urls(chunks, source.source_url, source.source_anchors)
    else:
        chunks = with_site_urls(chunks, site, job.relpath, source.page, source.tokens)
    return Parsed(chunks, diags, source.metadata, source.included, source.constructs, flags)


def _parse_batch(jobs: list[ParseJob]) -> list[Parsed]:
    return [parse_one(job, _MANIFESTS, _INCLUDES, _SITE, _TRUST) for job in jobs]


class Parser:
    """Takes files to parse in order and yields their results in the same order.

    `feed` returns the results that are ready; `finish` the rest. With one worker everything
    is parsed in this process; without a worker count (one per core), also when fewer than
    `min_files` files need parsing.
    """

    def __init__(
        self,
        manifests: dict[str, LoadedManifest],
        workers: int | None = None,
        min_files: int = PARALLEL_MIN_FILES,
        includes: IncludeContext | None = None,
        site: SiteContext | None = None,
        trust: Trust | None = None,
    ) -> None:
        self.manifests = manifests
        self.trust = trust
        self.includes = includes
        self.site = site
        self.workers = max(1, workers if workers is not None else default_workers())
        self.min_files = min_files if workers is None else 1
        self.waiting: list[ParseJob] = []  # held until we know whether workers pay off
        self.batch: list[ParseJob] = []
        self.in_flight: deque[Future[list[Parsed]]] = deque()
        self.pool: ProcessPoolExecutor | None = None
        self.used_workers = 1  # processes that parsed: 1 in-process, else the pool's size

    def feed(self, job: ParseJob) -> Iterator[Parsed]:
        if self.workers == 1:
            yield parse_one(job, self.manifests, self.includes, self.site, self.trust)
            return
        if self.pool is None:
            self.waiting.append(job)
            if len(self.waiting) < self.min_files:
                return
            self._start()
            for queued in self.waiting:
                yield from self._submit(queued)
            self.waiting = []
            return
        yield from self._submit(job)

    def finish(self) -> Iterator[Parsed]:
        for job in self.waiting:  # too few to pay for workers
            yield parse_one(job, self.manifests, self.includes, self.site, self.trust)
        self.waiting = []
        if self.batch:
            self._send()
        while self.in_flight:
            yield from _result(self.in_flight.popleft())
        self.close()

    def close(self) -> None:
        if self.pool is not None:
            for future in self.in_flight:
                future.cancel()
            self.in_flight.clear()
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def _start(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(self.manifests, self.includes, self.site, self.trust),
        )
        self.used_workers = self.workers

    def _submit(self, job: ParseJob) -> Iterator[Parsed]:
        self.batch.append(job)
        if len(self.batch) >= BATCH_FILES:
            self._send()
        while len(self.in_flight) > self.workers * IN_FLIGHT_PER_WORKER:
            yield from _result(self.in_flight.popleft())

    def _send(self) -> None:
        assert self.pool is not None
        with _ctrl_c_held():  # submit is where the pool starts its workers
            self.in_flight.append(self.pool.submit(_parse_batch, self.batch))
        self.batch = []


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold SIGINT back in this thread: a worker started here inherits the mask through spawn's exec and
    never sees Ctrl-C (sent to the whole process group), so it prints no traceback; this process gets the
    signal, stops the build and ends its workers. A SIGINT that comes meanwhile is delivered afterwards."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _result(future: Future[list[Parsed]]) -> list[Parsed]:
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool:
        raise DocsMcpError(
            "a worker process parsing the docs stopped unexpectedly (out of memory, killed, or a "
            'script calling build() without `if __name__ == "__main__":`); nothing was published — '
            "build again, or with --workers 1"
        ) from None
