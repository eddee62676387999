"""Asset checks: invariants of the written index, read back from disk.

The index checks are blocking, so a broken table version is never published: the
`metadata` step, which publishes, does not run when one fails.
"""

import warnings
from pathlib import Path

import dagster as dg

from docs_mcp_core.fsutil import read_json
from docs_mcp_core.indexing import checks
from docs_mcp_core.layout import OutputLayout, staged_listing
from docs_mcp_core.paths import MARKDOWN_SUFFIXES

from .assets import staged_path
from .resources import DocsMcpConfig

# Partitioned asset checks are a preview feature in Dagster 1.13; keep the notice out of run logs.
warnings.filterwarnings(
    "ignore", message=r"Specifying a partitions_def on an AssetCheckSpec", category=dg.PreviewWarning
)


def _result(outcome: checks.CheckOutcome) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=outcome.passed, description=outcome.description, metadata=outcome.metadata)


def _written(docs_mcp: DocsMcpConfig, corpus: str) -> tuple[Path, int]:
    """The output folder and the table version this run's lancedb_index wrote."""
    out = docs_mcp.out_dir(corpus)
    return out, int((read_json(OutputLayout(out).written) or {})["version"])


def build_checks(partitions: dg.PartitionsDefinition) -> list[dg.AssetChecksDefinition]:
    # Checks read what is on disk (not asset values: those would load every partition). Each
    # is partitioned like its asset, so a result is recorded for the corpus it checked: a pass
    # on one corpus does not hide a failure on another.
    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def chunk_ids_unique(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """No two chunks share an ID."""
        return _result(checks.chunk_ids_unique(*_written(docs_mcp, context.partition_key)))

    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def index_rows_match_chunks(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """The table version has exactly one row per chunk in chunks.json."""
        return _result(checks.index_rows_match_chunks(*_written(docs_mcp, context.partition_key)))

    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def no_chunks_from_removed_files(
        context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig
    ) -> dg.AssetCheckResult:
        """Nothing in the index comes from a file that left the corpus (no stale vectors)."""
        corpus = context.partition_key
        listing = read_json(staged_listing(staged_path(docs_mcp, corpus))) or {}
        staged = {path for path in listing if path.endswith(MARKDOWN_SUFFIXES)}
        return _result(checks.no_chunks_from_removed_files(*_written(docs_mcp, corpus), staged))

    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def taxonomy_within_limits(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """At most 64 keys, 512 values per key, 128 characters per value."""
        out = docs_mcp.out_dir(context.partition_key)
        return _result(checks.taxonomy_within_limits(checks.chunks_taxonomy(out)))

    @dg.asset_check(asset="metadata", blocking=True, partitions_def=partitions)
    def vector_dimensions_match(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """The published table's vectors have the dimensions metadata.json announces."""
        return _result(checks.vector_dimensions_match(docs_mcp.out_dir(context.partition_key)))

    return [
        chunk_ids_unique,
        index_rows_match_chunks,
        no_chunks_from_removed_files,
        taxonomy_within_limits,
        vector_dimensions_match,
    ]
