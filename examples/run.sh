#!/usr/bin/env bash
# The main job on the bundled example: set up ./.venv if needed, build the `example` corpus
# through the Dagster pipeline (semantic search with the bundled offline model, the default),
# then show where the index is, how to serve it, and a sample search over it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash .ci/bootstrap
export DAGSTER_HOME="$PWD/.dagster"   # absolute: reads dagster.yaml (via the link .dagster/dagster.yaml), keeps the instance state there
export PATH="$PWD/.venv/bin:$PATH"
# Dagster's Python warnings (preview and deprecation notices) are for pipeline authors, not for this run.
export PYTHONWARNINGS="${PYTHONWARNINGS:-ignore}"
index="$PWD/indexes/example"

echo "==> building the example corpus through Dagster: dg launch -m docs_mcp_pipeline --job docs_index_job --partition example" >&2
echo "    (embedding: the default, local/onnx with the bundled all-MiniLM-L6-v2 when docs-mcp[semantic] is installed; a line per step)" >&2
set +e
dg launch -m docs_mcp_pipeline --job docs_index_job --partition example 2>&1 \
  | tee .dagster-run.log \
  | grep --line-buffered -E " - (STEP_START|STEP_SUCCESS|STEP_FAILURE|RUN_SUCCESS|RUN_FAILURE) - " \
  | sed -u -E 's/.* - (STEP_START|STEP_SUCCESS|STEP_FAILURE|RUN_SUCCESS|RUN_FAILURE) - /  \1 /; s/^  STEP_START (.*)/  started \1/; s/^  STEP_SUCCESS (.*)/  done    \1/' >&2
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  tail -n 40 .dagster-run.log >&2
  echo "materialization failed; full log in .dagster-run.log" >&2
  exit 1
fi
checks=$(grep -c "ASSET_CHECK_EVALUATION - Asset check '.*' passed" .dagster-run.log || true)
echo "  $checks asset checks passed" >&2
rm -f .dagster-run.log

embedding=$(python -c 'import json, sys; e = json.load(open(sys.argv[1]))["embedding"]; print("%s/%s, %s" % (e["provider"], e.get("backend") or "-", e["model"]) if e else "none (text-only)")' "$index/metadata.json")
echo >&2
echo "==> the index is in $index (embedding: $embedding)" >&2
echo "    serve it to an MCP client over stdio:  $PWD/.venv/bin/docs-mcp serve --index $index" >&2
echo "    or over HTTP:                          $PWD/.venv/bin/docs-mcp serve --index $index --transport http" >&2
echo "    mcpServers entry for your client's config (docs/serving.md, \"Client setup\", has more):" >&2
echo "      \"parcelly-docs\": {\"command\": \"$PWD/.venv/bin/docs-mcp\", \"args\": [\"serve\", \"--index\", \"$index\"]}" >&2

echo >&2
echo "==> docs-mcp search --index indexes/example \"verify webhook signature\" --filter language=python --limit 3" >&2
docs-mcp search --index indexes/example "verify webhook signature" --filter language=python --limit 3
