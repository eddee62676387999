#!/usr/bin/env bash
# The test command: set up ./.venv if needed, then run the whole suite (extra args go to pytest).
# Two pytest-xdist workers, a test file per worker at a time (its module fixtures built once);
# DOCS_MCP_TEST_WORKERS=0 runs in one process.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash .ci/bootstrap
exec .venv/bin/python -m pytest -n "${DOCS_MCP_TEST_WORKERS:-2}" --dist loadfile "$@"
