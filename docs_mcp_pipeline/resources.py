"""Resources: the config, docs-mcp.yaml (which also holds each run's build lock and provider), a reporter for the run
log, and the one place a core error becomes a Dagster failure."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from docs_mcp_core.embedding import EmbeddingProvider, make_provider
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.fsutil import read_json, write_json_atomic
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.output.lock import BuildLock, BuildLockBusy
from docs_mcp_core.sources.config import Config, load_config

from .partitions import split_key


class DocsMcpConfig(dg.ConfigurableResource["DocsMcpConfig"]):  # the resource is its own value
    """Points at docs-mcp.yaml (empty: $DOCS_MCP_CONFIG, else ./docs-mcp.yaml).

    For the rest of the run it holds what is costly to make: each corpus's embedding provider
    (built once per run, by the first asset that asks; a local model hashes its weights when
    built) and the build lock of the partition's output, from the first asset that asks for it
    (`build_lock`) until the resource is torn down. With the
    in-process executor that is one lock for the whole run, like `docs-mcp build`. With an
    executor that runs each step in its own process the flock lasts one step, so a lease
    (`.docs-mcp/build-run.json`: run ID, host, run worker pid) keeps other runs out until
    this run has finished in the Dagster instance or its worker process is gone.
    """

    config_path: str = ""
    _locks: dict[str, BuildLock] = PrivateAttr(default_factory=dict)
    _providers: dict[str, EmbeddingProvider] = PrivateAttr(default_factory=dict)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._locks = {}
        self._providers = {}

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        try:
            for provider in self._providers.values():
                provider.close()
        finally:
            for lock in self._locks.values():
                lock.release()
            self._locks = {}
            self._providers = {}

    @contextmanager
    def build_lock(self, context: dg.AssetExecutionContext) -> Iterator[None]:
        """Hold the partition's build lock for this run; the core steps inside re-enter it.

        While another build or run holds it (another version of the corpus, from a backfill that
        launched them side by side), wait up to `lock_wait_seconds`, then fail with the core's
        line ("another docs-mcp build is writing to …").
        """
        out = self.corpus_out(context.partition_key)  # a versioned corpus: its versions build one after another
        key = os.path.realpath(out)
        lock = self._locks.get(key)
        if lock is None:
            lock = _wait_for_lock(context, out, self.config().lock_wait_seconds)
            self._locks[key] = lock
        with lock.owned():
            yield

    def config(self) -> Config:
        return load_config(self.config_path or None)

    def corpus_out(self, key: str) -> Path:
        """The corpus's output folder (a partition key names a corpus, or one version of it)."""
        return self.config().out_dir(split_key(key)[0])

    def out_dir(self, key: str) -> Path:
        """The index folder the partition builds: the corpus's output, or one version's folder in it."""
        corpus, label = split_key(key)
        out = self.config().out_dir(corpus)
        return out if label is None else OutputLayout(out).version(label)

    def cache_dir(self, key: str) -> Path:
        """The corpus's embedding cache, shared by all its versions."""
        config = self.config()
        corpus = split_key(key)[0]
        configured = config.get(corpus).cache_dir
        return config.resolve(configured) if configured else OutputLayout(config.out_dir(corpus)).embedding_cache

    def provider(self, key: str) -> EmbeddingProvider:
        """The corpus's embedding provider, built on first use and shared by the run's assets."""
        corpus = split_key(key)[0]
        provider = self._providers.get(corpus)
        if provider is None:
            provider = self._providers[corpus] = make_provider(self.config().get(corpus).embedding.settings())
        return provider


@contextmanager
def failure_on_error() -> Iterator[None]:
    """Bad input ends the step with the core's actionable message (DocsMcpError), not a traceback."""
    try:
        yield
    except DocsMcpError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc


LOCK_POLL_SECONDS = 1.0
WAITING_LINE_EVERY = 60.0  # a "still waiting" line this often, and whenever the holder changes


def _wait_for_lock(context: dg.AssetExecutionContext, out: Path, wait_seconds: int) -> BuildLock:
    """Take the output's build lock and lease, trying again while another build holds either.

    Runs that Dagster starts side by side (a backfill of several versions of one corpus: its runs
    carry no tag the queue could limit per corpus) then build one after another instead of failing.
    """
    deadline = time.monotonic() + wait_seconds
    said, said_at = "", 0.0
    while True:
        try:
            lock = BuildLock(out)
        except BuildLockBusy as exc:
            busy = exc
        else:
            try:
                _take_lease(context, lock)
                return lock
            except BuildLockBusy as exc:
                lock.release()
                busy = exc
            except BaseException:
                lock.release()
                raise
        now = time.monotonic()
        if now >= deadline:
            if wait_seconds == 0:
                raise busy
            raise BuildLockBusy(f"{busy} (gave up after waiting {wait_seconds} s: lock_wait_seconds in docs-mcp.yaml)")
        holder = _holder(context, out)
        if holder != said or now - said_at >= WAITING_LINE_EVERY:
            context.log.info(
                f"{context.partition_key}: waiting for {holder} to finish with {out} "
                f"(up to {wait_seconds} s in all: lock_wait_seconds)"
            )
            said, said_at = holder, now
        time.sleep(min(LOCK_POLL_SECONDS, max(deadline - now, 0.0)))


def _holder(context: dg.AssetExecutionContext, out: Path) -> str:
    """Who holds the output, as far as the lease tells: the build of a partition by a Dagster run still
    going, else another docs-mcp build (the CLI, or a run that has not written its lease yet)."""
    try:
        held = read_json(OutputLayout(out).build_lease)
    except ValueError:
        held = None
    holder = held.get("run_id") if isinstance(held, dict) else None
    if isinstance(holder, str) and holder != context.run_id:
        run = context.instance.get_run_by_id(holder)
        if run is not None and not run.is_finished:
            partition = run.tags.get("dagster/partition")
            return f"the build of {partition or 'this output'} (Dagster run {holder[:8]})"
    return "another docs-mcp build"


def _take_lease(context: dg.AssetExecutionContext, lock: BuildLock) -> None:
    """Refuse an output whose lease names another run that is still going; else name this run.

    A run counts as going while the Dagster instance says it has not finished and its run
    worker process (recorded in the lease) is alive, so a worker killed before Dagster
    noticed does not keep the output locked.
    """
    lease = OutputLayout(lock.out).build_lease
    try:
        held = read_json(lease)
    except ValueError:
        held = None
    held = held if isinstance(held, dict) else {}
    holder = held.get("run_id")
    if isinstance(holder, str) and holder != context.run_id:
        run = context.instance.get_run_by_id(holder)
        if run is not None and not run.is_finished:
            if _worker_alive(held):
                raise BuildLockBusy(
                    f"another docs-mcp build is writing to {lock.out} (Dagster run {holder}); wait "
                    "for it to finish or build into another --index"
                )
            context.log.warning(f"Dagster run {holder} left {lock.out} locked but its process is gone; taking over")
    if holder != context.run_id:
        write_json_atomic(
            lease, {"run_id": context.run_id, "host": socket.gethostname(), "pid": _run_worker_pid(context)}
        )


def _run_worker_pid(context: dg.AssetExecutionContext) -> int:
    """The process executing this run (each step's own process under a multiprocess executor)."""
    records = context.instance.get_records_for_run(context.run_id, of_type=dg.DagsterEventType.RUN_START, limit=1)
    event = records.records[0].event_log_entry.dagster_event if records.records else None
    return event.pid if event is not None and event.pid else os.getpid()


def _worker_alive(lease: dict[str, object]) -> bool:
    pid = lease.get("pid")
    if lease.get("host") != socket.gethostname() or not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True  # cannot tell from here: trust the Dagster instance
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DagsterReporter:
    """Core progress/status lines, sent to the run's log instead of stderr."""

    def __init__(self, context: dg.AssetExecutionContext) -> None:
        self.log = context.log
        self._last: tuple[str, int] = ("", -1)

    def info(self, message: str) -> None:
        self.log.info(message)

    def warn(self, message: str) -> None:
        self.log.warning(message)

    def progress(self, label: str, done: int, total: int) -> None:
        step = int(10 * done / total) if total else 10
        if (label, step) != self._last:
            self._last = (label, step)
            self.log.debug(f"{label}: {done}/{total}")
