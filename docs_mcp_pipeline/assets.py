"""The index assets. Each is a thin wrapper over the core function `docs-mcp build` runs, in the module named
after the asset (sources/staged_docs.py, then indexing/chunks.py, fingerprints.py, cached_vectors.py,
lancedb_index.py, metadata.py and cache_audit.py), and each takes only the asset before it (values.py):
the asset graph is the chain the build is."""

import time
from pathlib import Path
from typing import Any

import dagster as dg

from docs_mcp_core.chunking.chunker import CHUNKER_VERSION
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.fsutil import dir_size
from docs_mcp_core.indexing.cache_audit import record_build
from docs_mcp_core.indexing.cached_vectors import embed_chunks
from docs_mcp_core.indexing.chunks import chunk_corpus
from docs_mcp_core.indexing.fingerprints import fingerprint_chunks
from docs_mcp_core.indexing.lancedb_index import write_index
from docs_mcp_core.indexing.metadata import publish_metadata
from docs_mcp_core.indexing.version_audit import version_reuse
from docs_mcp_core.indexing.versioned import list_version, other_versions_vectors
from docs_mcp_core.output.freshness import age_fields
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.sources.git import staged_line
from docs_mcp_core.sources.local import StagedDocs
from docs_mcp_core.sources.staged_docs import stage_corpus
from docs_mcp_core.sources.versioned_build import resolve_and_prune, stage_version

from .partitions import split_key
from .resources import DagsterReporter, DocsMcpConfig, failure_on_error
from .values import Chunked, Embedded, Fingerprinted, Indexed, Published

GROUP = "docs_index"
COMMIT_TAG = "docs_mcp/commit"  # set by docs_repo_sensor: the exact commit a run must index
CORPUS_TAG = "docs_mcp/corpus"  # on the sensor's runs of a version: dagster.yaml queues one run per corpus
EMBEDDING_POOL = "embedding_api"  # Dagster concurrency pool of the steps that call the embedding provider


def staged_path(docs_mcp: DocsMcpConfig, key: str) -> Path:
    corpus, label = split_key(key)
    layout = OutputLayout(docs_mcp.corpus_out(key))
    return layout.staged if label is None else layout.version_staged(label)


def stage_partition(docs_mcp: DocsMcpConfig, key: str, reporter: DagsterReporter) -> StagedDocs:
    """Stage one version of a versioned corpus, after taking out of its output the versions the config no
    longer names (as `docs-mcp build --config` does)."""
    config = docs_mcp.config()
    corpus, label = split_key(key)
    assert label is not None
    if config.remote(corpus) is not None:
        raise DocsMcpError(f"corpus {corpus!r}: an s3:// out is not versioned yet; give a folder as its out")
    resolved, _ = resolve_and_prune(config, corpus, reporter)
    return stage_version(config, corpus, resolved.get(label), docs_mcp.corpus_out(key), reporter)


def reuse_metadata(out: Path, label: str) -> dict[str, Any]:
    """What this version's build embedded and reused from which version (the joined audit of every version),
    and the command that shows it for all of them."""
    row = next((r for r in version_reuse(out) if r.label == label), None)
    if row is None:
        return {}
    return {
        "vectors": row.vectors,
        "embedded_new": row.embedded,
        "reused_from": dg.MetadataValue.json(
            {
                **row.reused_from,
                **({"earlier builds": row.from_earlier_builds} if row.from_earlier_builds else {}),
                **({"unrecorded": row.unrecorded} if row.unrecorded else {}),
            }
        ),
        "versions_query": dg.MetadataValue.md(f"`docs-mcp audit --index {out}`"),
    }


def published_path(remote: str | None, local: Path) -> dict[str, dg.MetadataValue]:
    """`path` is where readers find the output: the s3:// object for a corpus published to a bucket,
    whose local mirror (what the build wrote first) goes in `state_path`."""
    if remote is None:
        return {"path": dg.MetadataValue.path(str(local))}
    return {"path": dg.MetadataValue.path(remote), "state_path": dg.MetadataValue.path(str(local))}


def build_assets(partitions: dg.PartitionsDefinition) -> list[dg.AssetsDefinition]:
    @dg.asset(partitions_def=partitions, group_name=GROUP, code_version="1")
    def staged_docs(context: dg.AssetExecutionContext, docs_mcp: DocsMcpConfig) -> dg.MaterializeResult[StagedDocs]:
        """The corpus source (a folder, one commit of a git repo, or a docs website fetched with conditional
        requests) copied into a deterministic folder."""
        key = context.partition_key
        corpus, label = split_key(key)
        with failure_on_error():
            config = docs_mcp.config()
            if label is None and (remote := config.remote(corpus)) is not None:
                remote.check_bucket()  # before anything is staged, parsed or embedded
            web = config.web_source(corpus) is not None
            with docs_mcp.build_lock(context):  # held until the run ends: one build per output
                if label is None:
                    staged = stage_corpus(
                        config,
                        corpus,
                        staged_path(docs_mcp, key),
                        commit=context.run.tags.get(COMMIT_TAG),
                        reporter=DagsterReporter(context),  # a website's per-page lines, as they happen
                    )
                else:
                    staged = stage_partition(docs_mcp, key, DagsterReporter(context))
            if label is None and (repo := config.git_source(corpus)) is not None:
                source = config.get(corpus).source
                context.log.info(staged_line(staged, repo, source.ref, source.subdir))
        for line in staged.warnings if not web else []:  # skipped symlinks and special files, as build reports them
            context.log.warning(line)
        crawl = {f"pages_{k}": v for k, v in staged.crawl.get("counts", {}).items() if k != "pages"}
        if staged.crawl:  # a website: what the crawl did, and its requests by HTTP status
            crawl |= {
                "pages": staged.crawl["counts"]["pages"],
                "method": staged.crawl["method"],
                "requests": dg.MetadataValue.json(staged.crawl["requests"]),
            }
        return dg.MaterializeResult(
            value=staged,
            data_version=dg.DataVersion(staged.data_version),
            metadata={
                "files": len(staged.files),
                "bytes": staged.bytes,
                "source_commit": staged.source_commit or "",
                "added": len(staged.added),
                "changed": len(staged.changed),
                "removed": len(staged.removed),
                "skipped": len(staged.warnings),
                "changed_files": dg.MetadataValue.json(
                    {"added": staged.added[:50], "changed": staged.changed[:50], "removed": staged.removed[:50]}
                ),
                "path": dg.MetadataValue.path(staged.path),
                **({"version": label, "ref": staged.ref or "", "source_url": staged.source_url or ""} if label else {}),
                **crawl,
            },
        )

    @dg.asset(partitions_def=partitions, group_name=GROUP, code_version=CHUNKER_VERSION)
    def chunks(
        context: dg.AssetExecutionContext, docs_mcp: DocsMcpConfig, staged_docs: StagedDocs
    ) -> dg.MaterializeResult[Chunked]:
        """Every staged file parsed and chunked (unchanged files reused); validation errors fail the run."""
        with failure_on_error(), docs_mcp.build_lock(context):
            name = split_key(context.partition_key)[0]
            docs_mcp.config().signer(name)  # a key that cannot sign fails the run before it pays
            corpus = docs_mcp.config().get(name)
            chunkset = chunk_corpus(
                Path(staged_docs.path),
                DagsterReporter(context),
                reuse_from=docs_mcp.out_dir(context.partition_key),
                allow_empty=corpus.allow_empty,
                workers=corpus.workers,
                trust_settings=docs_mcp.config().trust(name),
            )
        return dg.MaterializeResult(
            value=Chunked(staged_docs, chunkset),
            metadata={
                "chunks": chunkset.chunk_count,
                "files": len(chunkset.files),
                "files_reparsed": chunkset.reparsed,
                "files_reused": chunkset.reused,
                "workers": chunkset.workers,
                "warnings": len(chunkset.warnings),
                "quarantined": sum(chunkset.quarantined.values()),
                "seconds": round(chunkset.seconds, 3),
                "path": dg.MetadataValue.path(str(OutputLayout(docs_mcp.out_dir(context.partition_key)).chunks)),
            },
        )

    @dg.asset(partitions_def=partitions, group_name=GROUP, code_version="1")
    def fingerprints(
        context: dg.AssetExecutionContext, docs_mcp: DocsMcpConfig, chunks: Chunked
    ) -> dg.MaterializeResult[Fingerprinted]:
        """One embedding fingerprint per passage: what decides whether a cached vector is reusable."""
        with failure_on_error(), docs_mcp.build_lock(context):
            prints = fingerprint_chunks(chunks.chunkset, docs_mcp.provider(context.partition_key))
        return dg.MaterializeResult(
            value=Fingerprinted(chunks.staged, chunks.chunkset, prints),
            metadata={
                "count": len(prints),
                "distinct": len(set(prints)),
                "path": dg.MetadataValue.path(str(docs_mcp.cache_dir(context.partition_key))),
            },
        )

    # The one step that calls the embedding provider: runs of several corpora share the
    # `embedding_api` pool, whose limit (dagster.yaml) keeps them within the provider's rate limit.
    @dg.asset(partitions_def=partitions, group_name=GROUP, code_version="1", pool=EMBEDDING_POOL)
    def cached_vectors(
        context: dg.AssetExecutionContext, docs_mcp: DocsMcpConfig, fingerprints: Fingerprinted
    ) -> dg.MaterializeResult[Embedded]:
        """Cache hits reused, only misses embedded (kept in .pending); the cache is pruned once `metadata` publishes."""
        corpus = context.partition_key
        label = split_key(corpus)[1]
        with failure_on_error(), docs_mcp.build_lock(context):
            provider = docs_mcp.provider(corpus)
            keep = other_versions_vectors(docs_mcp.corpus_out(corpus), label, provider) if label else set()
            result = embed_chunks(
                fingerprints.chunkset,
                fingerprints.fingerprints,
                provider,
                cache_dir=docs_mcp.cache_dir(corpus),
                reporter=DagsterReporter(context),
                keep=keep,
            )
        stats = result.stats
        return dg.MaterializeResult(
            value=Embedded(fingerprints.staged, fingerprints.chunkset, fingerprints.fingerprints, result),
            metadata={
                "provider": provider.name,
                "chunks": fingerprints.chunkset.chunk_count,
                "passages": len(fingerprints.fingerprints),
                "hits": stats.hits,
                "misses": stats.misses,
                "hit_rate": round(stats.hit_rate, 2),
                "embedded": stats.embedded,
                "pruned": stats.pruned,
                **(
                    {"shared_with_other_versions": result.shared, "kept_for_other_versions": len(result.kept)}
                    if label
                    else {}
                ),
                "seconds": round(stats.seconds, 3),
                "tokens": stats.tokens,
                "estimated_cost_usd": round(stats.cost, 6),
                "path": dg.MetadataValue.path(str(docs_mcp.cache_dir(corpus))),
            },
        )

    @dg.asset(partitions_def=partitions, group_name=GROUP, code_version="1")
    def lancedb_index(
        context: dg.AssetExecutionContext, docs_mcp: DocsMcpConfig, cached_vectors: Embedded
    ) -> dg.MaterializeResult[Indexed]:
        """chunks.json and a fully indexed LanceDB table version, checked before it is published."""
        corpus, label = split_key(context.partition_key)
        out = docs_mcp.out_dir(context.partition_key)
        remote = docs_mcp.config().remote(corpus) if label is None else None
        value = cached_vectors
        with failure_on_error(), docs_mcp.build_lock(context):
            info = write_index(out, value.chunkset, value.embedded, DagsterReporter(context), publish_to=remote)
        return dg.MaterializeResult(
            value=Indexed(value.staged, value.chunkset, value.fingerprints, value.embedded, info),
            metadata={
                "rows": info.rows,
                "table": info.made,
                "table_version": info.version,
                "index_bytes": dir_size(OutputLayout(out).lancedb),
                **published_path(remote.lancedb_uri if remote else None, OutputLayout(out).lancedb),
            },
        )

    @dg.asset(name="metadata", partitions_def=partitions, group_name=GROUP, code_version="1")
    def metadata_json(
        context: dg.AssetExecutionContext, docs_mcp: DocsMcpConfig, lancedb_index: Indexed
    ) -> dg.MaterializeResult[Published]:
        """metadata.json, written last: the publish marker the MCP server watches."""
        corpus, label = split_key(context.partition_key)
        config = docs_mcp.config()
        out = docs_mcp.out_dir(context.partition_key)
        remote = config.remote(corpus) if label is None else None
        value = lancedb_index
        with failure_on_error(), docs_mcp.build_lock(context):
            published = publish_metadata(
                out,
                value.chunkset,
                value.index,
                docs_mcp.provider(context.partition_key),
                description=config.get(corpus).description,
                source_commit=value.staged.source_commit,
                embedded=value.embedded,
                reporter=DagsterReporter(context),
                corpus=corpus,
                publish_to=remote,
                signer=config.signer(corpus),
            )
            if label is not None:  # versions.json last: the corpus-level publish marker
                spec = config.get(corpus)
                list_version(
                    docs_mcp.corpus_out(context.partition_key),
                    label,
                    published,
                    corpus=corpus,
                    ref=value.staged.ref,
                    source_url=value.staged.source_url,
                    source_date=value.staged.source_date,
                    configured_default=spec.versions.default if spec.versions else None,
                    package=spec.package.model_dump() if spec.package else None,
                )
        return dg.MaterializeResult(
            value=Published(value.staged, value.chunkset, value.fingerprints, value.embedded, value.index, published),
            metadata={
                **published_path(
                    f"{remote.url}/{OutputLayout(out).metadata.name}" if remote else None, OutputLayout(out).metadata
                ),
                "total_chunks": published.stats.total_chunks,
                "total_files": published.stats.total_files,
                "source_commit": published.stats.source_commit or "",
                **{
                    k: v
                    for k, v in age_fields(published.stats.indexed_at, config.max_age(corpus)).items()
                    if v is not None
                },
                "taxonomy": dg.MetadataValue.json({k: v.values for k, v in published.taxonomy.items()}),
                "table_version": value.index.version,
            },
        )

    @dg.asset(partitions_def=partitions, group_name=GROUP, code_version="1", kinds={"duckdb"})
    def cache_audit(
        context: dg.AssetExecutionContext, docs_mcp: DocsMcpConfig, metadata: Published
    ) -> dg.MaterializeResult[Any]:
        """One row per build and one per chunk per build (hit, miss or pruned), kept across builds."""
        corpus, label = split_key(context.partition_key)
        out = docs_mcp.out_dir(context.partition_key)
        record = context.instance.get_run_record_by_id(context.run_id)
        started = record.start_time if record and record.start_time else time.time()
        with failure_on_error(), docs_mcp.build_lock(context):
            record_build(
                out,
                build_id=context.run_id,
                corpus=corpus,
                source_commit=metadata.staged.source_commit,
                chunkset=metadata.chunkset,
                fingerprints=metadata.fingerprints,
                embedded=metadata.embedded,
                provider=docs_mcp.provider(context.partition_key),
                table_version=metadata.index.version,
                seconds=time.time() - started,
                pages=metadata.staged.crawl.get("events"),
            )
            reuse = reuse_metadata(docs_mcp.corpus_out(context.partition_key), label) if label else {}
        stats = metadata.embedded.stats
        return dg.MaterializeResult(
            metadata={
                "build_id": context.run_id,
                "hits": stats.hits,
                "misses": stats.misses,
                "pruned": stats.pruned,
                **({"version": label, "shared_with_other_versions": metadata.embedded.shared} if label else {}),
                **reuse,
                "path": dg.MetadataValue.path(str(OutputLayout(out).audit)),
                "query": dg.MetadataValue.md(f"`docs-mcp audit --index {out}` or `duckdb {OutputLayout(out).audit}`"),
            }
        )

    return [staged_docs, chunks, fingerprints, cached_vectors, lancedb_index, metadata_json, cache_audit]
