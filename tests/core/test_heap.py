"""A server caps malloc's arenas unless MALLOC_ARENA_MAX already says (heap.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CODE = "from docs_mcp_core.heap import give_back, limit_arenas; give_back(); print(limit_arenas())"


def limited(env: dict[str, str]) -> str:
    """limit_arenas() in a fresh process (it changes the process's malloc for good)."""
    return subprocess.run(
        [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_arena_cap_is_set_unless_the_environment_already_sets_one() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert limited(env) == "True"
    assert limited({**env, "MALLOC_ARENA_MAX": "4"}) == "False"
