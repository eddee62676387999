"""What docs-mcp's own processes set up before they work: the `docs-mcp` console script and the parse
workers. `import docs_mcp_core` changes nothing in the process that imports it (a test, a Dagster run,
an application using the library): it keeps its own environment, import system and garbage collector.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NoReturn

from . import gc_freeze, lazy_imports

_before_exit: list[Callable[[int], None]] = []


def own_process() -> None:
    """Quiet LanceDB's Rust logger (it reads LANCEDB_LOG once, at import), defer the parts of `import
    lancedb` docs-mcp never calls (lazy_imports.py), and keep the garbage collector off what the imports
    made (gc_freeze.py). Idempotent; call it before anything imports lancedb."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    lazy_imports.install()
    gc_freeze.enable()


def before_exit(tell: Callable[[int], None]) -> None:
    """Have `tell(code)` called just before exit_now ends the process (a shared session's child tells its
    launcher how it ended: resident.py)."""
    _before_exit.append(tell)


def exit_now(code: int) -> NoReturn:
    """End the process at once with `code`, without interpreter finalization (see serve_then_exit)."""
    for tell in _before_exit:
        try:
            tell(code)
        except Exception:  # noqa: BLE001, S110 - the process ends either way
            pass
    os._exit(code)
