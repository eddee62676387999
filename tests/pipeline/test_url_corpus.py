"""A docs website as a pipeline corpus: staged_docs fetches it conditionally and records what the
crawl did; the refresh schedule covers it; the cache audit records page events."""

import datetime as dt
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_pipeline import build_definitions

from ..fakes.docs_site import DocsSite, copy_site
from .conftest import write_config

PAGES = ("", "async", "http2", "quickstart")


def staged_metadata(result: dg.ExecuteInProcessResult) -> tuple[dict, str]:
    event = result.asset_materializations_for_node("staged_docs")[0]
    return {k: v.value for k, v in event.metadata.items()}, event.tags["dagster/data_version"]


@pytest.mark.slow
def test_url_corpus_is_staged_conditionally_and_audited(tmp_path: Path) -> None:
    site_dir = copy_site(tmp_path / "site", PAGES)
    out = tmp_path / "indexes" / "httpx"
    with DocsSite(site_dir) as site:
        config = write_config(
            tmp_path / "docs-mcp.yaml",
            [
                {
                    "name": "httpx",
                    "source": {"url": site.url, "retries": 0},
                    "out": str(out),
                    "embedding": {"provider": "hash", "dimensions": 64},
                }
            ],
        )
        defs = build_definitions(config)
        instance = dg.DagsterInstance.ephemeral()
        assets = [*(defs.assets or []), *(defs.asset_checks or [])]
        first = dg.materialize(assets, partition_key="httpx", instance=instance, resources=defs.resources)
        meta, version = staged_metadata(first)
        assert (meta["pages"], meta["pages_fetched"], meta["pages_added"], meta["method"]) == (4, 4, 4, "sitemap")
        assert meta["pages_not_modified"] == 0 and meta["requests"]["200"] >= 4

        second = dg.materialize(assets, partition_key="httpx", instance=instance, resources=defs.resources)
        meta2, version2 = staged_metadata(second)
        assert (meta2["pages_fetched"], meta2["pages_not_modified"], meta2["pages_added"]) == (0, 4, 0)
        assert version2 == version  # nothing changed: downstream assets stay fresh

        (site_dir / "http2" / "index.html").unlink()
        third = dg.materialize(assets, partition_key="httpx", instance=instance, resources=defs.resources)
        meta3, version3 = staged_metadata(third)
        assert (meta3["pages"], meta3["pages_removed"], meta3["pages_not_modified"]) == (3, 1, 3)
        assert version3 != version

        schedule = defs.resolve_schedule_def("docs_refresh_schedule")
        with dg.build_schedule_context(
            instance=instance,
            scheduled_execution_time=dt.datetime(2026, 1, 1),
            repository_def=defs.get_repository_def(),
        ) as context:
            requests = schedule.evaluate_tick(context).run_requests or []
        assert [r.partition_key for r in requests] == ["httpx"]

    with duckdb.connect(str(OutputLayout(out).audit), read_only=True) as con:
        rows = con.execute("SELECT event, count(*) FROM page_events GROUP BY event ORDER BY event").fetchall()
        removed = con.execute("SELECT path, http_status FROM page_events WHERE event = 'removed'").fetchall()
    assert rows == [("added", 4), ("not_modified", 7), ("removed", 1)]
    assert removed == [("http2/index.md", 404)]
