"""An index that cannot be read: LanceDB's failure, translated once into a sentence that names the
index and the command that rebuilds it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import SearchError
from ..output.layout import OutputLayout

_PANICS = ("RustPanic", "PanicException")  # a Rust panic as an exception (PanicException is a BaseException)


class UnreadableIndex(SearchError):  # noqa: N818 - a SearchError like the others, named for its cause
    """The published index cannot be read: its files are missing or damaged, or the version a request
    held was pruned under it (a request that outlived two publishes: see Library.search)."""


def is_read_failure(exc: BaseException) -> bool:
    """Whether LanceDB failed on missing or damaged files: an IO error, a panic, or its ValueError for
    "invalid input" (a file that is not Lance's); a ValueError of our own code is not one."""
    if isinstance(exc, (RuntimeError, OSError)) or type(exc).__name__ in _PANICS:
        return True
    if not isinstance(exc, ValueError):
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return any(f"{os.sep}{package}{os.sep}" in where for package in ("lancedb", "pyarrow"))


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
