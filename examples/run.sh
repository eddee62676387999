#!/usr/bin/env bash
# The main job on the bundled example: set up ./.venv if needed, build the `example` corpus
# through the Dagster pipeline, then print a sample search over the published index.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash .ci/bootstrap
export DAGSTER_HOME="$PWD"   # uses ./dagster.yaml; instance state goes to ./.dagster/
export PATH="$PWD/.venv/bin:$PATH"

echo "==> dagster asset materialize -m docs_mcp_pipeline --select '*' --partition example" >&2
dagster asset materialize -m docs_mcp_pipeline --select '*' --partition example 2> .dagster-run.log \
  || { tail -n 40 .dagster-run.log >&2; echo "materialization failed; full log in .dagster-run.log" >&2; exit 1; }
grep -E "STEP_SUCCESS|RUN_SUCCESS" .dagster-run.log | sed -E 's/.* - (STEP_SUCCESS|RUN_SUCCESS) - /  /' >&2
rm -f .dagster-run.log

echo >&2
echo "==> docs-mcp search --index indexes/example \"verify webhook signature\" --filter language=python" >&2
docs-mcp search --index indexes/example "verify webhook signature" --filter language=python --limit 3
