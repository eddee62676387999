"""The metadata asset shows the index's age against the corpus's max_age, as the server reckons it."""

from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_core.output.freshness import age_fields, parse_max_age
from docs_mcp_pipeline import build_definitions

from ..conftest import write
from .conftest import write_config
from .test_pipeline import materialize


@pytest.mark.slow
def test_metadata_shows_indexed_at_age_and_max_age(tmp_path: Path) -> None:
    write(tmp_path, "docs/guide.md", "# Guide\n\n## Setup\n\nInstall it.\n")
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "guide",
                "source": {"path": str(tmp_path / "docs")},
                "out": str(tmp_path / "out"),
                "embedding": {"provider": "none"},
                "max_age": "30d",
            }
        ],
    )
    defs = build_definitions(str(config))
    with dg.instance_for_test() as instance:
        result = materialize(defs, "guide", instance)
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey("metadata")]
    shown = {k: v.value for k, v in event.materialization.metadata.items()}
    assert shown["max_age"] == "30d" and shown["stale"] is False and shown["age_days"] == 0.0
    assert {k: shown[k] for k in ("indexed_at", "max_age", "stale")} == {
        k: v for k, v in age_fields(shown["indexed_at"], parse_max_age("30d")).items() if k != "age_days"
    }
