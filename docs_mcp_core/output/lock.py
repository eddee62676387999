"""The build lock: an exclusive flock on OUT/.docs-mcp/build.lock, so two builds never write one output at once."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import IO

from ..errors import DocsMcpError
from .layout import OutputLayout


class BuildLockBusy(DocsMcpError):  # noqa: N818 - names the outcome a caller catches, not a fault
    """Another build holds the output's lock: a caller that can wait (a pipeline run) tries again."""


_OWNED: ContextVar[Mapping[str, BuildLock]] = ContextVar("docs_mcp_build_locks", default=MappingProxyType({}))


class BuildLock:
    """An exclusive flock on OUT/.docs-mcp/build.lock, held until `release()`.

    flock belongs to one open file description, so a second acquisition fails even from the
    same process; only code running inside `owned()` (this build) re-enters via `build_lock`.
    """

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        layout = OutputLayout(self.out)
        state = layout.state
        self.path = layout.build_lock
        self.key = os.path.realpath(self.path)
        self._created = [d for d in (self.out, state) if not d.exists()]
        try:
            state.mkdir(parents=True, exist_ok=True)
            self._fh = self._acquire()
        except OSError as exc:
            self._remove_created()
            raise DocsMcpError(
                f"cannot use {self.out} as the output folder ({exc.strerror or exc}); choose a writable --index"
            ) from None

    def _acquire(self) -> IO[str]:
        for _ in range(20):  # the file can be unlinked by a holder cleaning up: lock the one on disk
            fh = open(self.path, "a+")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                raise BuildLockBusy(
                    f"another docs-mcp build is writing to {self.out}; wait for it to finish or "
                    "build into another --index"
                ) from None
            try:
                if os.stat(self.path).st_ino == os.fstat(fh.fileno()).st_ino:
                    return fh
            except FileNotFoundError:
                pass
            fh.close()
        raise DocsMcpError(f"could not lock {self.path}: it keeps being replaced; build again")

    @contextmanager
    def owned(self) -> Iterator[BuildLock]:
        """Mark the code inside as this build: nested `build_lock(out)` calls re-enter."""
        token = _OWNED.set({**_OWNED.get(), self.key: self})
        try:
            yield self
        finally:
            _OWNED.reset(token)

    def release(self) -> None:
        if self._fh.closed:
            return
        self._remove_created()  # still locked: nobody else can be using the file we unlink
        self._fh.close()

    def _remove_created(self) -> None:
        """A build that failed before writing anything leaves no output folder behind."""
        if not self._created:
            return
        try:
            if {p.name for p in self.path.parent.iterdir()} <= {self.path.name}:
                self.path.unlink(missing_ok=True)
                for folder in reversed(self._created):
                    folder.rmdir()
        except OSError:
            pass


def held_build_lock(out: Path) -> BuildLock | None:
    """The lock this build (the current context) holds on `out`, if any."""
    return _OWNED.get().get(os.path.realpath(OutputLayout(out).build_lock))


@contextmanager
def build_lock(out: Path) -> Iterator[BuildLock]:
    """Exclusive, non-blocking: a second build of the same output fails fast and says why.

    Re-entrant for the build that holds it, so the whole build and each step inside it can
    both say `with build_lock(out)`.
    """
    held = held_build_lock(out)
    if held is not None:
        yield held
        return
    lock = BuildLock(out)
    try:
        with lock.owned():
            yield lock
    finally:
        lock.release()
