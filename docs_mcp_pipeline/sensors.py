"""docs_repo_sensor: one run per new commit of each git corpus; a schedule for the rest."""

import json

import dagster as dg

from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import Config
from docs_mcp_core.sources.git import remote_commit
from docs_mcp_core.sources.versioned_build import wanted_labels
from docs_mcp_core.sources.versions import resolve_versions

from .assets import COMMIT_TAG, CORPUS_TAG
from .partitions import VERSIONS_PARTITIONS, known_keys, partition_key, split_key
from .resources import DocsMcpConfig


def build_sensor(config: Config, job_name: str, dynamic: bool = False) -> dg.SensorDefinition:
    @dg.sensor(
        name="docs_repo_sensor",
        job_name=job_name,
        minimum_interval_seconds=config.sensor_interval_seconds,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Polls each git corpus's ref and requests a run for its partition when the commit changes; "
        "for a versioned corpus, adds a partition for each new version (a new matching tag) and removes those "
        "the config no longer names.",
    )
    def docs_repo_sensor(
        context: dg.SensorEvaluationContext, docs_mcp: DocsMcpConfig
    ) -> dg.SensorResult | dg.SkipReason:
        config = docs_mcp.config()
        cursor: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
        requests = []
        partition_requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
        if dynamic:
            versioned, version_requests, stale = _version_requests(context, config, cursor)
            requests += version_requests
            existing = set(context.instance.get_dynamic_partitions(VERSIONS_PARTITIONS))
            new = [k for k in known_keys(config, versioned) if k not in existing]
            if new:
                partition_requests.append(dg.AddDynamicPartitionsRequest(VERSIONS_PARTITIONS, new))
            gone = sorted(existing & stale)
            if gone:
                partition_requests.append(dg.DeleteDynamicPartitionsRequest(VERSIONS_PARTITIONS, gone))
        for corpus in config.corpora:
            if corpus.versions is not None:
                continue
            repo = config.git_source(corpus.name)
            if repo is None:
                continue
            try:
                commit = remote_commit(repo, corpus.source.ref)
            except DocsMcpError as exc:
                context.log.warning(f"{corpus.name}: {exc}")
                continue
            if cursor.get(corpus.name) == commit:
                continue
            cursor[corpus.name] = commit
            requests.append(
                dg.RunRequest(run_key=f"{corpus.name}:{commit}", partition_key=corpus.name, tags={COMMIT_TAG: commit})
            )
        if not requests and not partition_requests:
            return dg.SkipReason("no git corpus has a new commit")
        return dg.SensorResult(
            run_requests=requests,
            cursor=json.dumps(cursor, sort_keys=True),
            dynamic_partitions_requests=partition_requests or None,
        )

    return docs_repo_sensor


def _version_requests(
    context: dg.SensorEvaluationContext, config: Config, cursor: dict[str, str]
) -> tuple[dict[str, list[str]], list[dg.RunRequest], set[str]]:
    """Each versioned corpus's versions now ({corpus: labels}), a run for each version that is new or whose
    commit moved, and the keys of versions the config no longer names (their partitions go)."""
    versioned: dict[str, list[str]] = {}
    requests = []
    stale: set[str] = set()
    existing = set(context.instance.get_dynamic_partitions(VERSIONS_PARTITIONS))
    for corpus in config.corpora:
        if corpus.versions is None:
            continue
        try:
            resolved = resolve_versions(config, corpus.name)
        except DocsMcpError as exc:
            context.log.warning(f"{corpus.name}: {exc}")
            continue
        assert resolved is not None
        for note in resolved.notes:
            context.log.warning(note)
        versioned[corpus.name] = resolved.labels
        for version in resolved.versions:
            key = partition_key(corpus.name, version.label)
            marker = version.commit or version.url or str(version.path)
            if cursor.get(key) == marker:
                continue
            cursor[key] = marker
            tags = {CORPUS_TAG: corpus.name, **({COMMIT_TAG: version.commit} if version.commit else {})}
            requests.append(dg.RunRequest(run_key=f"{key}:{marker}", partition_key=key, tags=tags))
        wanted = {partition_key(corpus.name, label) for label in wanted_labels(config, corpus.name, resolved)}
        stale |= {k for k in existing if split_key(k)[0] == corpus.name and "@" in k and k not in wanted}
    return versioned, requests, stale


def build_schedule(config: Config, job_name: str) -> dg.ScheduleDefinition:
    refresh = config.refresh
    unwatched = [
        partition_key(c.name, label)
        for c in config.corpora
        if c.source.git is None
        for label in (c.versions.labels() if c.versions else [None])
    ]

    @dg.schedule(
        name="docs_refresh_schedule",
        job_name=job_name,
        cron_schedule=refresh.cron,
        execution_timezone=refresh.timezone,
        default_status=dg.DefaultScheduleStatus.RUNNING if refresh.enabled else dg.DefaultScheduleStatus.STOPPED,
        description="Rebuilds corpora the sensor cannot watch (local folders, docs websites: conditional requests "
        "make an unchanged site cheap); enable with refresh.enabled.",
    )
    def docs_refresh_schedule(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        stamp = context.scheduled_execution_time.isoformat() if context.scheduled_execution_time else "manual"
        return [dg.RunRequest(run_key=f"{name}:{stamp}", partition_key=name) for name in unwatched]

    return docs_refresh_schedule
