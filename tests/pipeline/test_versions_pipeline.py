"""Versioned corpora in the pipeline: one dynamic partition per corpus@version, added (and removed) by
docs_repo_sensor from the real sqlmodel repository's tags; each version's run materializes its own index
under the corpus output, lists it in versions.json, and says what it reused from the other versions."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_pipeline import build_definitions
from docs_mcp_pipeline.partitions import VERSIONS_PARTITIONS

from ..versions.conftest import TAGS, sqlmodel_repo  # noqa: F401 - the session fixture
from .test_pipeline import materialize

pytestmark = pytest.mark.slow


def write_config(path: Path, repo: Path, keep: int) -> Path:
    path.write_text(
        "corpora:\n"
        "  - name: sqlmodel\n"
        f"    source: {{git: {repo}, subdir: docs}}\n"
        "    out: out/sqlmodel\n"
        "    embedding: {provider: hash}\n"
        f'    versions: {{tags: "0.0.*", keep: {keep}}}\n'
        "  - name: notes\n"
        "    source: {path: notes}\n"
        "    embedding: {provider: none}\n"
    )
    (path.parent / "notes").mkdir(exist_ok=True)
    (path.parent / "notes" / "a.md").write_text("# Notes\n\n## One\n\nText.\n")
    return path


def evaluate_sensor(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None) -> dg.SensorResult:
    """The sensor's own answer, as Dagster's testing guide invokes a sensor (evaluate_tick would check
    the run requests' keys against an instance the test context does not hand on)."""
    sensor = defs.resolve_sensor_def("docs_repo_sensor")
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=defs.resources) as context:
        result = sensor(context)
    assert isinstance(result, dg.SensorResult)
    return result


def apply(instance: dg.DagsterInstance, tick) -> None:  # type: ignore[no-untyped-def]
    """What the daemon does with a tick's partition requests."""
    for request in tick.dynamic_partitions_requests or []:
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)


def asset_metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    for event in result.get_asset_materialization_events():
        if event.asset_key == dg.AssetKey(asset):
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise AssertionError(f"{asset} was not materialized")


def test_one_partition_per_version_added_by_the_sensor(sqlmodel_repo: Path, tmp_path: Path) -> None:  # noqa: F811
    config = write_config(tmp_path / "docs-mcp.yaml", sqlmodel_repo, keep=2)
    defs = build_definitions(str(config))
    with dg.instance_for_test() as instance:  # a sensor resolves dynamic keys only with a persistent instance
        check_versions(defs, config, sqlmodel_repo, instance, tmp_path)


def check_versions(
    defs: dg.Definitions, config: Path, repo: Path, instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    tick = evaluate_sensor(defs, instance, None)
    apply(instance, tick)
    keys = [f"sqlmodel@{t}" for t in TAGS[-2:]]
    assert sorted(instance.get_dynamic_partitions(VERSIONS_PARTITIONS)) == sorted([*keys, "notes"])
    assert sorted(r.partition_key for r in tick.run_requests) == sorted(keys)

    older, newer = (materialize(defs, key, instance) for key in keys)
    out = tmp_path / "out" / "sqlmodel"
    manifest = json.loads(OutputLayout(out).versions_manifest.read_text())
    assert [v["label"] for v in manifest["versions"]] == TAGS[:-3:-1]
    assert all(v["ref"] == v["label"] and len(v["source_commit"]) == 40 for v in manifest["versions"])
    assert asset_metadata(older, "cached_vectors")["shared_with_other_versions"] == 0
    shared = asset_metadata(newer, "cached_vectors")
    assert shared["shared_with_other_versions"] > 0 and shared["embedded"] < shared["passages"]
    audit = asset_metadata(newer, "cache_audit")
    assert audit["version"] == TAGS[-1]
    # what the newer version reused, joined from both versions' audits: all from the older one
    assert audit["reused_from"] == {TAGS[-2]: shared["shared_with_other_versions"]}
    assert audit["embedded_new"] == shared["embedded"]
    assert audit["vectors"] == shared["embedded"] + shared["shared_with_other_versions"]
    assert asset_metadata(older, "cache_audit")["reused_from"] == {}
    checks = newer.get_asset_check_evaluations()
    assert checks and all(c.passed for c in checks)
    assert (OutputLayout(out).version(TAGS[-1]) / "metadata.json").exists()

    materialize(defs, "notes", instance)  # an unversioned corpus keeps its plain key
    assert (tmp_path / "indexes" / "notes" / "metadata.json").exists()

    # a quiet tick requests nothing; a smaller keep drops the oldest version's partition and, at the
    # next run of the corpus, its index
    write_config(config, repo, keep=1)
    defs = build_definitions(str(config))
    tick = evaluate_sensor(defs, instance, tick.cursor)
    apply(instance, tick)
    assert f"sqlmodel@{TAGS[-2]}" not in instance.get_dynamic_partitions(VERSIONS_PARTITIONS)
    materialize(defs, f"sqlmodel@{TAGS[-1]}", instance)
    manifest = json.loads(OutputLayout(out).versions_manifest.read_text())
    assert [v["label"] for v in manifest["versions"]] == [TAGS[-1]]
    assert not OutputLayout(out).version(TAGS[-2]).exists()
