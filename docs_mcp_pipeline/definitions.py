"""Definitions: the corpus partitions come from docs-mcp.yaml, read when the code location loads."""

from __future__ import annotations

import dagster as dg

from docs_mcp_core.config import load_config

from .assets import build_assets
from .resources import DocsMcpConfig


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    corpora = load_config(config_path)
    partitions = dg.StaticPartitionsDefinition(corpora.names)
    return dg.Definitions(
        assets=build_assets(partitions),
        resources={"docs_mcp": DocsMcpConfig(config_path=str(corpora.path))},
        # One process per step costs ~20 s a run; switch to multiprocess/k8s executors to scale out.
        executor=dg.in_process_executor,
    )


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions()
