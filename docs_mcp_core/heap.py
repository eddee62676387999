"""What glibc's malloc keeps for a long-lived process: fewer arenas, and freed memory given back.

glibc gives each thread that allocates an arena of its own, up to eight per core, and keeps what is
freed in them for reuse. A server's LanceDB runtime threads allocate while an index opens (the
query's record batches, read once and dropped), then little: those arenas and the freed pages stay
resident for the session's life, memory each session holds alone. Elsewhere (musl, macOS) these do
nothing.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h
SERVER_ARENAS = 2  # as MALLOC_ARENA_MAX for `serve --shared` residents (shared_session.RESIDENT_ENV)

_libc: Any = None


def _glibc() -> Any:
    global _libc
    if _libc is None:
        try:
            libc = ctypes.CDLL(None)  # the process's own symbols, libc's among them: find_library runs ldconfig
            _libc = libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else False
        except OSError:
            _libc = False
    return _libc


def limit_arenas(arenas: int = SERVER_ARENAS) -> bool:
    """Cap the arenas threads created from now on share, unless MALLOC_ARENA_MAX already says; True if set."""
    libc = _glibc()
    if not libc or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))


def give_back() -> None:
    """Return the free memory at the top and in the middle of every arena to the system (malloc_trim)."""
    libc = _glibc()
    if libc:
        libc.malloc_trim(0)
