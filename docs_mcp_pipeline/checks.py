"""Asset checks: invariants of the written index, read back from disk.

The index checks are blocking, so a broken table version is never published: the
`metadata` step, which publishes, does not run when one fails.
"""

import warnings
from pathlib import Path

import dagster as dg

from docs_mcp_core.fsutil import read_json
from docs_mcp_core.indexing import checks
from docs_mcp_core.output.layout import OutputLayout, staged_listing

from .assets import staged_path
from .partitions import split_key
from .resources import DocsMcpConfig

# Partitioned asset checks are a preview feature in Dagster 1.13; keep the notice out of run logs.
warnings.filterwarnings(
    "ignore", message=r"Specifying a partitions_def on an AssetCheckSpec", category=dg.PreviewWarning
)


def _result(
    outcome: checks.CheckOutcome, corpus: str, severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR
) -> dg.AssetCheckResult:
    """The outcome as Dagster records it, each number labelled with its corpus ("chunks (example)").

    Why: the UI plots a check's numbers by label over time, all partitions in one series; labelled
    per corpus, each corpus gets a plot of its own instead of a line jumping between corpora.
    """
    metadata = {
        (f"{key} ({corpus})" if isinstance(value, int | float) and not isinstance(value, bool) else key): value
        for key, value in outcome.metadata.items()
    }
    return dg.AssetCheckResult(
        passed=outcome.passed, description=outcome.description, metadata=metadata, severity=severity
    )


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
        corpus = context.partition_key
        return _result(checks.chunk_ids_unique(*_written(docs_mcp, corpus)), corpus)

    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def index_rows_match_chunks(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """The table version has exactly one row per chunk in chunks.json."""
        corpus = context.partition_key
        return _result(checks.index_rows_match_chunks(*_written(docs_mcp, corpus)), corpus)

    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def no_chunks_from_removed_files(
        context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig
    ) -> dg.AssetCheckResult:
        """Nothing in the index comes from a file that left the corpus (no stale vectors)."""
        corpus = context.partition_key
        listing = read_json(staged_listing(staged_path(docs_mcp, corpus))) or {}
        staged = set(listing)  # every staged file (a page may be a Sphinx .txt; configs and includes match no chunk)
        return _result(checks.no_chunks_from_removed_files(*_written(docs_mcp, corpus), staged), corpus)

    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def taxonomy_within_limits(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """At most 64 keys, 512 values per key, 128 characters per value."""
        corpus = context.partition_key
        return _result(checks.taxonomy_within_limits(checks.chunks_taxonomy(docs_mcp.out_dir(corpus))), corpus)

    @dg.asset_check(asset="metadata", blocking=True, partitions_def=partitions)
    def vector_dimensions_match(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """The published table's vectors have the dimensions metadata.json announces."""
        corpus = context.partition_key
        return _result(checks.vector_dimensions_match(docs_mcp.out_dir(corpus)), corpus)

    @dg.asset_check(asset="lancedb_index", blocking=True, partitions_def=partitions)
    def no_quarantined_chunks(context: dg.AssetCheckExecutionContext, docs_mcp: DocsMcpConfig) -> dg.AssetCheckResult:
        """No chunk was quarantined by the trust scan (text addressed to an AI agent, or hidden from readers).

        Quarantined chunks are never served either way. With the corpus's `trust_check: blocking` a
        failure stops the run before `metadata` publishes (the last good index stays); with
        `warning` (the default) the rest of the corpus is published and the check shows a warning.
        """
        corpus = context.partition_key
        blocking = docs_mcp.config().get(split_key(corpus)[0]).trust_check == "blocking"
        severity = dg.AssetCheckSeverity.ERROR if blocking else dg.AssetCheckSeverity.WARN
        return _result(checks.trust_quarantine(docs_mcp.out_dir(corpus)), corpus, severity)

    return [
        chunk_ids_unique,
        index_rows_match_chunks,
        no_chunks_from_removed_files,
        taxonomy_within_limits,
        vector_dimensions_match,
        no_quarantined_chunks,
    ]
