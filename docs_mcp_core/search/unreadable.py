"""An index that cannot be read: LanceDB's failure, translated once into a sentence that names the
index and the command that rebuilds it."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import SearchError, internal_error_text
from ..output.layout import OutputLayout

_PANICS = ("RustPanic", "PanicException")  # a Rust panic as an exception (PanicException is a BaseException)
_READERS = ("lancedb", "lance", "pyarrow")  # the packages whose errors while reading mean damaged files
_PASSING = ("asyncio", "concurrent")  # where an error raised elsewhere passes on its way up
_EXHAUSTED = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN}  # the process's limits, not the files'


class UnreadableIndex(SearchError):  # noqa: N818 - a SearchError like the others, named for its cause
    """The published index cannot be read: its files are missing or damaged, or the version a request
    held was pruned under it (a request that outlived two publishes: see Library.search)."""


def is_read_failure(exc: BaseException) -> bool:
    """Whether the index's files are missing or damaged: a LanceDB panic, an IO error, or an error LanceDB
    or Arrow raised while reading (a RuntimeError for most of Lance's failures, a ValueError for "invalid
    input", a file that is not Lance's). The same types raised by our own code or the interpreter (no thread
    to spare, a bug) are not: rebuilding would not help, and saying so would hide the bug."""
    if type(exc).__name__ in _PANICS:
        return True
    if isinstance(exc, OSError):
        return exc.errno not in _EXHAUSTED
    return isinstance(exc, (RuntimeError, ValueError)) and raised_by_reader(exc)


def raised_by_reader(exc: BaseException) -> bool:
    """Whether the innermost frame of `exc`'s traceback, past asyncio's (a LanceDB future raises in
    asyncio's code), is LanceDB's, Lance's or Arrow's."""
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not any(f"{os.sep}{part}{os.sep}" in name for part in _PASSING):
            where = name
        tb = tb.tb_next
    return any(f"{os.sep}{package}{os.sep}" in where for package in _READERS)


def internal_error(out: Path | str, exc: BaseException) -> SearchError:
    """An error that is not the index's: said as what it is, not as damage to rebuild."""
    reason = (str(exc).splitlines() or [""])[0][:300]
    return SearchError(internal_error_text(f"reading the index at {out} failed", exc, reason))


def unreadable_index(out: Path | str, exc: BaseException | str) -> UnreadableIndex:
    """LanceDB failing to open or read the table means files under `.lancedb` are missing or damaged."""
    reason = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
    return UnreadableIndex(
        f"the index at {out} cannot be read ({reason}); rebuild it with "
        f"`docs-mcp build --docs-dir DOCS --index {out}` (a damaged table is rewritten)"
    )


def index_gone(out: Path | str) -> UnreadableIndex:
    """A local index whose metadata.json has gone: a publish replaces it atomically, so the folder was deleted."""
    return UnreadableIndex(
        f"the index at {out} is gone (no {OutputLayout(out).metadata.name}: was the folder deleted or moved?); "
        f"rebuild it with `docs-mcp build --docs-dir DOCS --index {out}`"
    )


@contextlib.contextmanager
def reading(out: Path | str) -> Iterator[None]:
    """Around every read of the index at `out`: a LanceDB failure (is_read_failure) becomes an
    UnreadableIndex, not a traceback; anything else passes through."""
    try:
        yield
    except SearchError:
        raise
    except BaseException as exc:
        if not is_read_failure(exc):
            raise
        raise unreadable_index(out, exc) from None
