#!/usr/bin/env bash
# The main job on the bundled example: set up ./.venv with what the example needs (the pipeline and the
# default offline model: no torch, no test tools), build the `example` corpus through the Dagster
# pipeline, then show where the index is, how to serve it, and a sample search over it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$(date +%s)
bash .ci/bootstrap example
export DAGSTER_HOME="$PWD"   # absolute: the instance reads ./dagster.yaml and keeps its runs in history/, storage/, … here
export PATH="$PWD/.venv/bin:$PATH"
index="$PWD/indexes/example"

echo "==> building the example corpus through Dagster: docs-mcp pipeline launch example" >&2
echo "    (dg launch of the partition \`example\`; embedding: the default, local/onnx with the bundled all-MiniLM-L6-v2)" >&2
set +e
# Dagster's log lines, without their date, logger and run ID: `step - what it did`.
docs-mcp pipeline launch example 2>&1 \
  | sed -u -E 's/^[0-9-]+ [0-9:]+ [+-][0-9]+ - dagster - ([A-Z]+) - [^ ]+ - [0-9a-f-]{36} - /  \1 /; s/^  INFO /  /' >&2
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "the pipeline run failed (see above; the UI has the whole run: dg dev -w workspace.yaml)" >&2
  exit 1
fi

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

echo >&2
echo "==> .venv: $(du -sm .venv | cut -f1) MB; this run took $(( $(date +%s) - started ))s" >&2
