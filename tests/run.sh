#!/usr/bin/env bash
# The test command: set up ./.venv if needed, then run the whole suite (extra args go to pytest).
# Three pytest-xdist workers, a test file per worker at a time (its module fixtures built once): many
# tests wait on a subprocess, a server or Dagster's daemon, so with two workers two cores were busy
# about three quarters of the time. DOCS_MCP_TEST_WORKERS=N sets the count; 0 runs in one process.
# Files are handed out in the order tests/conftest.py gives them (the most slow tests first), not
# xdist's (the most tests first).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash .ci/bootstrap
exec .venv/bin/python -m pytest -n "${DOCS_MCP_TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder "$@"
