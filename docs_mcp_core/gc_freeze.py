"""Keep Python's cyclic garbage collector off what a short-lived process keeps until it exits.

Importing docs-mcp's build path leaves ~50,000 objects (modules, classes, functions, pydantic
schemas) that live as long as the process. Every full collection walks all of them again, and
so does the last one at exit: ~35 ms of a 0.3 s no-op build of dub-ts x10. `gc.freeze()` moves
every object that exists now to a generation the collector skips. Reference counting still frees
those objects as usual; only a reference cycle among them would outlive its last use, and
objects made by imports are never freed anyway.

Only for processes of our own (the `docs-mcp` command, the parse workers: process.own_process): in
a host process (a test calling the CLI in-process, a Dagster run) it would also keep that host's
uncollected cycles forever.
"""

from __future__ import annotations

import atexit
import gc

_own_process = False


def enable() -> None:
    """Freeze from now on: this process is docs-mcp's own (process.own_process)."""
    global _own_process
    if not _own_process:
        _own_process = True
        atexit.register(gc.freeze)  # what the run made since: the collection at exit skips it too


def settle() -> None:
    """After a command's imports: nothing made so far is walked by later collections (own process only)."""
    if _own_process:
        gc.freeze()
