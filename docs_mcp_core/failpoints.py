"""Failpoints for tests: pause at a named phase when DOCS_MCP_TEST_PAUSE_AT names it.

Phases: the build's (so a kill test can kill it exactly there; `embedded-batch` before each batch of
vectors is kept, `parse-worker` as a parse worker process starts), `query-model-load` (so a
server test sees text-only answers before the query model is ready), `request` (a search_docs
or get_doc request holding its index version, so a test can publish under it) and `indexes-opened`
(a stdio server that has opened its indexes, before any request asked it to).
DOCS_MCP_TEST_PAUSE_AT=write,publish:2 prints `docs-mcp-test: paused at <phase>` on stderr and
sleeps 2 s (default 5) at each listed phase. With DOCS_MCP_TEST_RELEASE=<file> it waits
instead until that file exists (at most 120 s), so a test decides when the phase goes on,
however slow the machine. With DOCS_MCP_TEST_PAUSED_DIR=<folder>, a file `<phase>-<pid>` stays in
that folder while the process is paused, so a test can see several processes paused at once.
Unset (always, outside tests), it does nothing.
"""

from __future__ import annotations

import os
import sys
import time

ENV = "DOCS_MCP_TEST_PAUSE_AT"
RELEASE_ENV = "DOCS_MCP_TEST_RELEASE"
PAUSED_DIR_ENV = "DOCS_MCP_TEST_PAUSED_DIR"
RELEASE_WAIT = 120.0


def pause(phase: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    phases, _, seconds = spec.partition(":")
    if phase in phases.split(","):
        print(f"docs-mcp-test: paused at {phase}", file=sys.stderr, flush=True)
        folder = os.environ.get(PAUSED_DIR_ENV)
        mark = os.path.join(folder, f"{phase}-{os.getpid()}") if folder else None
        if mark:
            open(mark, "w").close()
        try:
            release = os.environ.get(RELEASE_ENV)
            if not release:
                time.sleep(float(seconds or 5))
                return
            deadline = time.monotonic() + RELEASE_WAIT
            while not os.path.exists(release) and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            if mark:
                os.remove(mark)
