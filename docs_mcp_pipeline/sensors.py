"""docs_repo_sensor: one run per new commit of each git corpus; a schedule for the rest."""

import json

import dagster as dg

from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import Config
from docs_mcp_core.sources.git import remote_commit

from .assets import COMMIT_TAG
from .resources import DocsMcpConfig


def build_sensor(config: Config, job_name: str) -> dg.SensorDefinition:
    @dg.sensor(
        name="docs_repo_sensor",
        job_name=job_name,
        minimum_interval_seconds=config.sensor_interval_seconds,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Polls each git corpus's ref and requests a run for its partition when the commit changes.",
    )
    def docs_repo_sensor(
        context: dg.SensorEvaluationContext, docs_mcp: DocsMcpConfig
    ) -> dg.SensorResult | dg.SkipReason:
        config = docs_mcp.config()
        cursor: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
        requests = []
        for corpus in config.corpora:
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
        if not requests:
            return dg.SkipReason("no git corpus has a new commit")
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(cursor, sort_keys=True))

    return docs_repo_sensor


def build_schedule(config: Config, job_name: str) -> dg.ScheduleDefinition:
    refresh = config.refresh
    unwatched = [c.name for c in config.corpora if c.source.git is None]

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
