"""Definitions: the corpus partitions come from docs-mcp.yaml, read when the code location loads."""

import sys

import dagster as dg

from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import load_config

from .assets import build_assets
from .checks import build_checks
from .execution import StepValuesIOManager, docs_mcp_executor
from .partitions import partitions_for
from .resources import DocsMcpConfig
from .sensors import build_schedule, build_sensor

JOB = "docs_index_job"


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    config = load_config(config_path)
    partitions = partitions_for(config)
    job = dg.define_asset_job(JOB, selection=dg.AssetSelection.all(), partitions_def=partitions)
    return dg.Definitions(
        assets=build_assets(partitions),
        asset_checks=build_checks(partitions),
        jobs=[job],
        sensors=[build_sensor(config, JOB, dynamic=isinstance(partitions, dg.DynamicPartitionsDefinition))],
        schedules=[build_schedule(config, JOB)],
        resources={"docs_mcp": DocsMcpConfig(config_path=str(config.path)), "io_manager": StepValuesIOManager()},
        executor=docs_mcp_executor,  # in-process unless a run's config asks for multiprocess
    )


@dg.definitions
def defs() -> dg.Definitions:
    try:
        return build_definitions()
    except DocsMcpError as exc:
        # A bad docs-mcp.yaml is the user's to fix: say what is wrong, not where Dagster noticed it.
        print(f"docs-mcp: cannot load the pipeline: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
