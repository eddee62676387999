"""How asset values travel between steps, and which executor runs the steps.

Each asset's value (the staged listing, the chunk set, the fingerprints, the embedded vectors…)
is pickled between steps as with Dagster's default IO manager, so a step can run in another
process or on another machine. The difference is the `path` metadata: Dagster's IO manager
reports its pickle file there; this one keeps the `path` the asset reported itself (the
published index, the staged folder, the embedding cache), which is where the data really is.
"""

from __future__ import annotations

import pickle
from typing import Any

import dagster as dg
from upath import UPath


class _StepValues(dg.UPathIOManager):
    extension = ""

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        with path.open("wb") as file:
            pickle.dump(obj, file, pickle.HIGHEST_PROTOCOL)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        with path.open("rb") as file:
            return pickle.load(file)

    def get_metadata(self, context: dg.OutputContext, obj: Any) -> dict[str, dg.MetadataValue]:
        own = context.output_metadata.get("path")
        return {"path": own} if isinstance(own, dg.MetadataValue) else {}


class StepValuesIOManager(dg.ConfigurableIOManagerFactory[dg.UPathIOManager]):
    """Pickles step values under `base_dir`: empty for the instance's storage folder ($DAGSTER_HOME/storage).

    When steps of one run can land on different machines (celery, k8s_job_executor), point
    `base_dir` at storage they all reach: a shared volume, or `s3://bucket/prefix` with s3fs
    installed (any fsspec URL works).
    """

    base_dir: str = ""

    def create_io_manager(self, context: dg.InitResourceContext) -> dg.UPathIOManager:
        # Dagster types the context's instance as optional; a run's resources always have one
        base = self.base_dir or context.instance.storage_directory()  # type: ignore[union-attr]
        return _StepValues(base_path=UPath(base))


# The pipeline's executor: Dagster's own, in-process unless the run config asks for processes.
# One process per step costs seconds a step for nothing here (the steps of a corpus run in a
# line); runs of different corpora already run side by side. Choose per run with
#   execution: {config: {multiprocess: {max_concurrent: 2}}}
# (the Launchpad, `dg launch --config-json`, a backfill's run config); the options are Dagster's.
docs_mcp_executor = dg.multi_or_in_process_executor.configured(
    lambda config: config,
    name="docs_mcp_executor",
    config_schema=dg.Field(
        dg.Selector({"in_process": dg.Permissive(), "multiprocess": dg.Permissive()}),
        default_value={"in_process": {}},
        description="in_process (the default) or multiprocess, with Dagster's options for each.",
    ),
)
