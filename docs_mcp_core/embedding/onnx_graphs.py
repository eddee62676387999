"""The graphs saved beside an ONNX model: ONNX Runtime's optimized graph, and an int8 query graph.

Both are made once per model file and onnxruntime version under ~/.cache/docs-mcp/onnx, checked
against the sha256 recorded with them, and opened with optimizations off from then on.

The query graph is for embedding search queries. A query is a dozen tokens, and at that size a
fp32 run of all-MiniLM-L6-v2 is bound by reading its 45 MB of layer weights, ~3.3 ms on one
core: as long as the full-text search it runs beside. The query graph runs every product by a
weight as ONNX Runtime's MatMulNBits with 8-bit weights and 8-bit activations, both quantized per
block of 32 along the sum, ~1.5 ms. Weights that are already int8 with one scale per column (the
bundled model's) keep their exact values; fp32 weights get one scale per block. Measured against
the fp32 graph's vectors (600 queries and 300 dub-ts chunks): cosine ≥ 0.9997 for queries, closer
than the torch backend is to the onnx one. Index vectors still come from the fp32 graph: the
build's throughput gained only ~10% from it, and the vectors would change.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are made: a no-op build (fingerprints only) never needs it
    import numpy as np

from ..fsutil import file_sha256

GRAPH_FILES = ("model.onnx", "model.data")
QUERY_BLOCK = 32  # values per quantization block along the sum (K): 64 ran 5% faster, 2x further from fp32
QUERY_SCHEME = f"matmulnbits-8bit-block{QUERY_BLOCK}-v1"  # recorded with the graph; a new scheme, a new folder
QUERY_GRAPH_EXTRA = "the int8 query graph needs the onnx package (pip install 'docs-mcp[semantic]')"


def can_make_query_graph() -> bool:
    """Whether the onnx package that writes the int8 query graph is installed (checked without importing it)."""
    try:
        return importlib.util.find_spec("onnx") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as absent
        return False


def graph_cache_root() -> Path:
    """Where saved graphs are kept, one folder per model file, kind and onnxruntime version."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "docs-mcp" / "onnx"


def _graph_digests(folder: Path) -> dict[str, str]:
    return {name: file_sha256(folder / name) for name in GRAPH_FILES}


def graph_folder(root: Path, source_sha256: str, ort_version: str, for_queries: bool) -> Path:
    return root / f"{source_sha256[:32]}{'-q8' if for_queries else ''}-ort{ort_version}"


def optimized_graph(ort: Any, source: Path, source_sha256: str, root: Path, *, for_queries: bool = False) -> Path | None:
    """ONNX Runtime's optimized graph of `source` (with `for_queries`, of its int8 query model), saved
    once with its weights in a file of their own.

    Why: an int8 model's weights are folded into fp32 every time a session opens it, which costs
    ~100 MB of peak and ~50 MB of steady memory and a few hundred ms. Opening the saved graph
    with optimizations off maps the fp32 weights from disk instead (untouched rows of the token
    table never become resident), and gives bit-identical vectors
    (tests/core/test_onnx_provider.py). None when the folder cannot be written or read, or the
    query model cannot be made: the caller opens something else. The files are checked against
    the sha256 recorded with them.
    """
    folder = graph_folder(root, source_sha256, ort.__version__, for_queries)
    meta = folder / "graph.json"
    scheme = QUERY_SCHEME if for_queries else None
    try:
        if meta.is_file():
            recorded = json.loads(meta.read_text())
            if recorded.get("source_sha256") == source_sha256 and recorded.get("scheme") == scheme \
                    and recorded.get("files") == _graph_digests(folder):
                return folder / GRAPH_FILES[0]
            shutil.rmtree(folder, ignore_errors=True)  # damaged or half-replaced: make it again
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        try:
            model = source
            if for_queries:
                model = tmp / "int8.onnx"
                int8_query_model(source, model)
            options = ort.SessionOptions()
            options.log_severity_level = 3
            # EXTENDED, not ALL: the saved graph stays portable (ALL may add hardware-specific layouts).
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            options.optimized_model_filepath = str(tmp / GRAPH_FILES[0])
            options.add_session_config_entry("session.optimized_model_external_initializers_file_name", GRAPH_FILES[1])
            options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
            options.enable_cpu_mem_arena = False
            ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
            if model != source:
                model.unlink()
            (tmp / "graph.json").write_text(json.dumps({"source": str(source), "source_sha256": source_sha256,
                                                        "scheme": scheme, "onnxruntime": ort.__version__,
                                                        "files": _graph_digests(tmp)}))
            try:
                tmp.rename(folder)
            except OSError:  # another process got there first: use its copy
                if not meta.is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _remove_other_versions(folder)
        return folder / GRAPH_FILES[0]
    except Exception:  # noqa: BLE001 - a read-only or full disk only costs memory, never a failure
        return None


def _remove_other_versions(folder: Path) -> None:
    """Drop this model's graphs of the same kind saved by other onnxruntime versions (~90 MB each),
    which an upgrade leaves behind.

    Only when a new graph was just made: a process still on the old version keeps its mapped files
    (removing an open file on POSIX leaves the mapping valid) and remakes its folder if it loads again.
    """
    prefix = folder.name.split("-ort", 1)[0] + "-ort"
    for other in folder.parent.glob(f"{prefix}*"):
        if other != folder and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)


def int8_query_model(source: Path, dest: Path) -> int:
    """Write `source` with every product by a constant 2-D weight run as MatMulNBits (8-bit weights,
    int8 compute, blocks of QUERY_BLOCK); returns how many were rewritten. Needs the onnx package."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    producers = {output: node for node in graph.node for output in node.output}
    nodes, rewritten = [], 0
    for node in graph.node:
        weight = _block_weights(node.input[1], constants, producers, numpy_helper) if node.op_type == "MatMul" else None
        if weight is None:
            nodes.append(node)
            continue
        codes, scales = weight
        k, n = codes.shape
        packed = (codes.T.astype(np.int16) + 128).astype(np.uint8).reshape(n, k // QUERY_BLOCK, QUERY_BLOCK)
        names = (f"{node.name or node.output[0]}_q8", f"{node.name or node.output[0]}_q8_scales")
        graph.initializer.extend([numpy_helper.from_array(packed, names[0]),
                                  numpy_helper.from_array(np.ascontiguousarray(scales.T).reshape(-1), names[1])])
        nodes.append(helper.make_node("MatMulNBits", [node.input[0], *names], list(node.output),
                                      name=f"{node.name}_q8", domain="com.microsoft", K=k, N=n, bits=8,
                                      block_size=QUERY_BLOCK, accuracy_level=4))  # 4: int8 compute
        rewritten += 1
    del graph.node[:]
    graph.node.extend(_live(nodes, {output.name for output in graph.output}))
    used = {name for node in graph.node for name in node.input}
    live_constants = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live_constants)
    if not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(dest))
    return rewritten


def _block_weights(name: str, constants: dict[str, Any], producers: dict[str, Any],
                   numpy_helper: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(int8 codes K×N, scales per block K/QUERY_BLOCK×N) of a constant weight, or None if it is not one.

    A weight stored as Mul(Cast(int8 codes), one scale per column) keeps its codes and scales, so the
    query graph's weights are exactly the model's; an fp32 weight gets max|w|/127 per block."""
    import numpy as np

    if name in constants:
        weight = numpy_helper.to_array(constants[name])
        if weight.dtype != np.float32 or weight.ndim != 2 or weight.shape[0] % QUERY_BLOCK:
            return None
        blocks = weight.reshape(weight.shape[0] // QUERY_BLOCK, QUERY_BLOCK, weight.shape[1])
        scales = np.abs(blocks).max(axis=1) / np.float32(127)
        scales[scales == 0] = 1
        codes = np.clip(np.rint(blocks / scales[:, None, :]), -127, 127).astype(np.int8)
        return codes.reshape(weight.shape), scales.astype(np.float32)
    mul = producers.get(name)
    cast = producers.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
    if cast is None or cast.op_type != "Cast" or cast.input[0] not in constants or mul.input[1] not in constants:
        return None
    codes = numpy_helper.to_array(constants[cast.input[0]])
    column_scales = numpy_helper.to_array(constants[mul.input[1]]).astype(np.float32)
    if codes.dtype != np.int8 or codes.ndim != 2 or codes.shape[0] % QUERY_BLOCK \
            or column_scales.size != codes.shape[1] or column_scales.shape[-1] != codes.shape[1]:
        return None
    return codes, np.tile(column_scales.reshape(1, -1), (codes.shape[0] // QUERY_BLOCK, 1))


def _live(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """The nodes something still reads (the Cast/Mul that made a rewritten weight are dropped), in order."""
    while True:
        read = outputs | {name for node in nodes for name in node.input}
        kept = [node for node in nodes if any(output in read for output in node.output)]
        if len(kept) == len(nodes):
            return kept
        nodes = kept
