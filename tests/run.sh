#!/usr/bin/env bash
# The test command: set up ./.venv if needed, then run the whole suite (extra args go to pytest).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash .ci/bootstrap
exec .venv/bin/python -m pytest "$@"
