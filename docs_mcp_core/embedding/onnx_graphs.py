"""The graphs saved beside an ONNX model, one folder per kind, made once and then only opened.

*fp32*: ONNX Runtime's optimized graph of the model. *int8* (models whose products by a weight
use int8 codes with one scale per column, as the bundled all-MiniLM-L6-v2 does): every such
product runs as MatMulIntegerToFloat on those exact codes and the activations quantized to 8 bits with
one scale per token, then scaled back. Its sums are integers, so a vector depends neither on the
batch nor on the kernel: the signed-weight graph (for x86 CPUs with VNNI, where it is fast) and
the unsigned-weight graph (elsewhere: without VNNI, ONNX Runtime's signed kernel saturates 16-bit
pair sums) give the same bits. It embeds dub-ts 1.8x faster than the fp32 graph, at cosine 0.998
(mean) from it; it makes index and query vectors alike. *q8*, for fp32-weight models: a query
graph whose products run as MatMulNBits with 8-bit weights and activations per block of 32
(docs/providers.md, "The ONNX backend").

Every kind is saved under ~/.cache/docs-mcp/onnx per model file and onnxruntime version, checked
against the sha256 recorded with it.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are made: a no-op build (fingerprints only) never needs it
    import numpy as np

from ..fsutil import file_sha256, write_json_atomic
from ..paths import user_cache

GRAPH_FILES = ("model.onnx", "model.data")
QUERY_BLOCK = 32  # values per quantization block along the sum (K): closer to fp32 than 64 (decision 0022)
QUERY_SCHEME = f"matmulnbits-8bit-block{QUERY_BLOCK}-v1"  # recorded with the graph; a new scheme, a new folder
INT8_SCHEME = "int8-per-token-v1"  # in the vectors' fingerprint: a new scheme gives other vectors
FP32_SCHEME = "fp32-v2"  # v2: layer norms unfused (DISABLED_OPTIMIZERS), which moved the last bits
# ONNX Runtime's SkipLayerNormalization kernel is slower here than the LayerNormalization and Add it
# fuses (profiled in decision 0022)
DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)
KINDS = {"fp32": "", "q8": "-q8", "int8": "-i8", "int8-unsigned": "-i8u"}  # kind -> folder suffix
QUERY_GRAPH_EXTRA = "the int8 graphs need the onnx package (pip install 'docs-mcp[semantic]')"


def can_rewrite_graphs() -> bool:
    """Whether the onnx package that writes the int8 and q8 graphs is installed (checked without importing it)."""
    try:
        return importlib.util.find_spec("onnx") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as absent
        return False


def graph_cache_root() -> Path:
    """Where saved graphs are kept, one folder per model file, kind and onnxruntime version."""
    return user_cache("onnx")


def _graph_digests(folder: Path) -> dict[str, str]:
    return {name: file_sha256(folder / name) for name in GRAPH_FILES}


def graph_folder(root: Path, source_sha256: str, ort_version: str, kind: str) -> Path:
    return root / f"{source_sha256[:32]}{KINDS[kind]}-ort{ort_version}"


def int8_kind() -> str:
    """The int8 graph this CPU runs fast and exactly: signed weights need VNNI on x86 (the bits are the same)."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return "int8-unsigned"  # ARM's dot products take unsigned pairs natively
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:  # not Linux: assume no VNNI, the safe choice
        flags = []
    return "int8" if {"avx512_vnni", "avx_vnni"} & set(flags) else "int8-unsigned"


def session_source(kind: str, source: Path, dest_dir: Path) -> Path:
    """The model a graph of `kind` is optimized from: `source` itself, or its rewrite written into `dest_dir`."""
    if kind == "fp32":
        return source
    model = dest_dir / f"{kind}.onnx"
    if kind == "q8":
        int8_query_model(source, model)
    else:
        int8_activation_model(source, model, unsigned=kind == "int8-unsigned")
    return model


def optimized_graph(ort: Any, source: Path, source_sha256: str, root: Path, *, kind: str = "fp32") -> Path | None:
    """ONNX Runtime's optimized graph of `source` (or of its q8/int8 rewrite), saved once with its
    weights in a file of their own.

    Why: an int8 model's weights are folded into fp32 every time a session opens it, which costs
    ~100 MB of peak and ~50 MB of steady memory and a few hundred ms. Opening the saved graph
    with optimizations off maps the fp32 weights from disk instead (untouched rows of the token
    table never become resident), and gives bit-identical vectors
    (tests/core/test_onnx_provider.py). None when the folder cannot be written or read, or the
    query model cannot be made: the caller opens something else. The files are checked against
    the sha256 recorded with them.
    """
    folder = graph_folder(root, source_sha256, ort.__version__, kind)
    meta = folder / "graph.json"
    scheme = {"fp32": FP32_SCHEME, "q8": QUERY_SCHEME}.get(kind, INT8_SCHEME)
    try:
        if meta.is_file():
            recorded = json.loads(meta.read_text())
            if (
                recorded.get("source_sha256") == source_sha256
                and recorded.get("scheme") == scheme
                and recorded.get("files") == _graph_digests(folder)
            ):
                return folder / GRAPH_FILES[0]
            shutil.rmtree(folder, ignore_errors=True)  # damaged or half-replaced: make it again
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        try:
            model = session_source(kind, source, tmp)
            options = optimizing_options(ort)
            options.log_severity_level = 3
            options.optimized_model_filepath = str(tmp / GRAPH_FILES[0])
            options.add_session_config_entry("session.optimized_model_external_initializers_file_name", GRAPH_FILES[1])
            options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
            options.enable_cpu_mem_arena = False
            ort.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(DISABLED_OPTIMIZERS)
            )
            if model != source:
                model.unlink()
            (tmp / "graph.json").write_text(
                json.dumps(
                    {
                        "source": str(source),
                        "source_sha256": source_sha256,
                        "scheme": scheme,
                        "onnxruntime": ort.__version__,
                        "files": _graph_digests(tmp),
                    }
                )
            )
            try:
                tmp.rename(folder)
            except OSError:  # another process got there first: use its copy
                if not meta.is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _remove_superseded(folder, source_sha256[:32], kind)
        return folder / GRAPH_FILES[0]
    except Exception:  # noqa: BLE001 - a read-only or full disk only costs memory, never a failure
        return None


def optimizing_options(ort: Any, options: Any = None) -> Any:
    """EXTENDED, not ALL: a saved graph stays portable (ALL may add hardware-specific layouts), and a
    model opened without a saved graph is optimized the same way (the same bits)."""
    options = options or ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    return options


def _remove_superseded(folder: Path, model: str, kind: str) -> None:
    """Drop this model's graphs that a new one replaces: the same kind saved by other onnxruntime
    versions (~60-90 MB each, left behind by an upgrade), and, beside a new int8 graph, the model's
    fp32 and q8 graphs (~150 MB, which earlier versions ran it on; an install without the onnx
    package makes its fp32 graph again if it needs one).

    Only when a new graph was just made: a process still running an old one keeps its mapped files
    (removing an open file on POSIX leaves the mapping valid) and remakes its folder if it loads again.
    """
    kinds = {kind, "fp32", "q8"} if kind.startswith("int8") else {kind}
    by_suffix = {suffix: name for name, suffix in KINDS.items()}
    for other in folder.parent.glob(f"{model}*-ort*"):
        if other != folder and other.is_dir() and by_suffix.get(other.name[len(model) :].split("-ort", 1)[0]) in kinds:
            shutil.rmtree(other, ignore_errors=True)


def int8_query_model(source: Path, dest: Path) -> int:
    """Write `source` with every product by a constant 2-D weight run as MatMulNBits (8-bit weights,
    int8 compute, blocks of QUERY_BLOCK); returns how many were rewritten. Needs the onnx package."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    nodes, rewritten = [], 0
    for node in graph.node:
        weight = _block_weights(node.input[1], constants, numpy_helper) if node.op_type == "MatMul" else None
        if weight is None:
            nodes.append(node)
            continue
        codes, scales = weight
        n, k = codes.shape
        names = (f"{node.name or node.output[0]}_q8", f"{node.name or node.output[0]}_q8_scales")
        graph.initializer.extend(
            [
                numpy_helper.from_array(nbits_layout(codes, QUERY_BLOCK), names[0]),
                numpy_helper.from_array(scales.reshape(-1), names[1]),
            ]
        )
        nodes.append(
            helper.make_node(
                "MatMulNBits",
                [node.input[0], *names],
                list(node.output),
                name=f"{node.name}_q8",
                domain="com.microsoft",
                K=k,
                N=n,
                bits=8,
                block_size=QUERY_BLOCK,
                accuracy_level=4,
            )
        )  # 4: int8 compute
        rewritten += 1
    _save(model, nodes, dest)
    return rewritten


def _save(model: Any, nodes: list[Any], dest: Path) -> None:
    """Write `model` with `nodes` as its graph, minus the nodes and constants nothing reads any more."""
    import onnx
    from onnx import helper

    graph = model.graph
    del graph.node[:]
    graph.node.extend(_live(nodes, {output.name for output in graph.output}))
    used = {name for node in graph.node for name in node.input}
    live_constants = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live_constants)
    if not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(dest))


def block_codes(rows: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """(int8 codes, float32 scale max|x|/127 per block of `block` values) of each row, symmetric, rounded
    to nearest (an all-zero block gets scale 1): what MatMulNBits reads, for the q8 query graph's
    weights and the server's first-pass vector scan (search/vector_scan.py) alike."""
    import numpy as np

    count, dims = rows.shape
    blocks = rows.reshape(count, dims // block, block)
    scales = (np.abs(blocks).max(axis=2) / np.float32(127)).astype(np.float32)
    scales[scales == 0] = 1
    codes = np.clip(np.rint(blocks / scales[:, :, None]), -127, 127).astype(np.int8)
    return codes.reshape(count, dims), scales


def unsigned_codes(codes: np.ndarray) -> np.ndarray:
    """int8 codes as uint8 with zero point 128 (code + 128): the same integers, as the unsigned kernels read them."""
    import numpy as np

    return (codes.astype(np.int16) + 128).astype(np.uint8)


def nbits_layout(codes: np.ndarray, block: int) -> np.ndarray:
    """Rows of int8 codes as MatMulNBits stores 8-bit values: code + 128, rows × blocks × block."""
    return unsigned_codes(codes).reshape(len(codes), -1, block)


def _block_weights(name: str, constants: dict[str, Any], numpy_helper: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(int8 codes N×K, scales per block N×K/QUERY_BLOCK: block_codes of each output column) of a
    constant fp32 weight K×N, or None if it is not one. (A model with int8 weights runs its int8 graph
    for queries instead.)"""
    import numpy as np

    if name not in constants:
        return None
    weight = numpy_helper.to_array(constants[name])
    if weight.dtype != np.float32 or weight.ndim != 2 or weight.shape[0] % QUERY_BLOCK:
        return None
    return block_codes(weight.T, QUERY_BLOCK)


def _column_codes(
    name: str, constants: dict[str, Any], producers: dict[str, Any], numpy_helper: Any
) -> tuple[np.ndarray, np.ndarray] | None:
    """(int8 codes K×N, one scale per column N) of a weight stored as Mul(Cast(int8 codes), scales), else None."""
    import numpy as np

    mul = producers.get(name)
    cast = producers.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
    if mul is None or cast is None or cast.op_type != "Cast" or cast.input[0] not in constants:
        return None
    if mul.input[1] not in constants:
        return None
    codes = numpy_helper.to_array(constants[cast.input[0]])
    column_scales = numpy_helper.to_array(constants[mul.input[1]]).astype(np.float32)
    if (
        codes.dtype != np.int8
        or codes.ndim != 2
        or column_scales.size != codes.shape[1]
        or column_scales.shape[-1] != codes.shape[1]
    ):
        return None
    return codes, column_scales.reshape(-1)


def has_int8_weights(source: Path, source_sha256: str, root: Path | None) -> bool:
    """Whether the model's products by a weight use int8 codes with a scale per column (the int8 graph's
    precondition). Read from the graph once per model file (remembered under `root`, so a no-op build
    of a custom model does not parse it again); False for a graph the onnx package cannot read."""
    memo = root / f"{source_sha256[:32]}-weights.json" if root else None
    try:
        if memo is not None and memo.is_file():
            return bool(json.loads(memo.read_text())["int8"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # unreadable: read the graph again
    try:
        import onnx
        from onnx import numpy_helper

        graph = onnx.load(str(source), load_external_data=False).graph
        constants = {tensor.name: tensor for tensor in graph.initializer}
        producers = {output: node for node in graph.node for output in node.output}
        found = any(
            node.op_type == "MatMul" and _column_codes(node.input[1], constants, producers, numpy_helper) is not None
            for node in graph.node
        )
    except Exception:  # noqa: BLE001 - a graph onnx cannot read: ONNX Runtime may still run it as it is
        return False
    if memo is not None:
        try:
            write_json_atomic(memo, {"int8": found, "source_sha256": source_sha256})
        except OSError:
            pass  # a read-only cache: read the graph each time
    return found


def int8_activation_model(source: Path, dest: Path, *, unsigned: bool = False) -> int:
    """Write `source` with every product by int8 column-scaled weights run as an integer product of
    those codes and the activations quantized per token; returns how many were rewritten.

    A token's activations x get the scale s = max|x| / 127 and the codes round(x / s) + 128 (uint8,
    zero point 128; QuantizeLinear per row); the integer product (MatMulIntegerToFloat) is scaled
    back by the column's scale and then by s. With `unsigned`, weight codes are stored +128 with
    zero point 128: the same integers, for CPUs whose signed kernel saturates (int8_kind). Needs the
    onnx package."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    producers = {output: node for node in graph.node for output in node.output}
    shared = [
        numpy_helper.from_array(np.array(1 / 127, np.float32), "i8_inv127"),
        numpy_helper.from_array(np.array(1e-30, np.float32), "i8_tiny"),  # an all-zero token: scale > 0
        numpy_helper.from_array(np.array(128, np.uint8), "i8_zero"),
        numpy_helper.from_array(np.array([0], np.int64), "i8_0"),
        numpy_helper.from_array(np.array([-1], np.int64), "i8_last"),
        numpy_helper.from_array(np.array([1], np.int64), "i8_axis1"),
        numpy_helper.from_array(np.array(1.0, np.float32), "i8_one"),
    ]
    nodes: list[Any] = []
    shapes: set[str] = set()  # output shapes made so far: [batch, tokens, width] per lead and width
    rewritten = 0

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    weights = {
        n.output[0]: found
        for n in graph.node
        if n.op_type == "MatMul"
        for found in [_column_codes(n.input[1], constants, producers, numpy_helper)]
        if found is not None
    }
    tokens = _token_input(model, {n.input[0] for n in graph.node if n.output[0] in weights})
    if tokens is not None:  # every quantized input is [batch, tokens, K]: their shapes are computed once
        lead = node("Shape", [tokens], "i8_lead")
        zeros = node("Expand", ["i8_zero", node("ReduceProd", [lead], "i8_rows", keepdims=1)], "i8_zeros")
    quantized: set[str] = set()
    for original in graph.node:
        if original.output[0] not in weights:
            nodes.append(original)
            continue
        codes, column_scales = weights[original.output[0]]
        k, n = codes.shape
        x, out = original.input[0], original.output[0]
        if x not in quantized:  # Q, K and V read the same activations: quantized once
            quantized.add(x)
            graph.initializer.append(numpy_helper.from_array(np.array([-1, k], np.int64), f"{x}_i8_2d"))
            rows = node("Reshape", [x, f"{x}_i8_2d"], f"{x}_i8_rows")  # one row per token
            peak = node("ReduceMax", [node("Abs", [rows], f"{x}_i8_abs")], f"{x}_i8_peak", axes=[1], keepdims=0)
            scale = node("Mul", [node("Max", [peak, "i8_tiny"], f"{x}_i8_peak1"), "i8_inv127"], f"{x}_i8_scale")
            if tokens is None:
                zeros = node("Expand", ["i8_zero", node("Shape", [scale], f"{x}_i8_n")], f"{x}_i8_zeros")
                lead = node("Slice", [node("Shape", [x], f"{x}_i8_shape"), "i8_0", "i8_last"], f"{x}_i8_lead")
            node("QuantizeLinear", [rows, scale, zeros], f"{x}_i8_codes", axis=0)
            node("Unsqueeze", [scale, "i8_axis1"], f"{x}_i8_token_scale")  # a column: one scale per row
        stored = unsigned_codes(codes) if unsigned else codes
        graph.initializer.extend(
            [numpy_helper.from_array(stored, f"{out}_i8_w"), numpy_helper.from_array(column_scales, f"{out}_i8_cols")]
        )
        # the integer product times the column scales (in the kernel's epilogue), then times the token's
        # scale: one pass fewer than MatMulInteger, DequantizeLinear and Mul
        product = node(
            "MatMulIntegerToFloat",
            [f"{x}_i8_codes", f"{out}_i8_w", "i8_one", f"{out}_i8_cols", "i8_zero", *(["i8_zero"] if unsigned else [])],
            f"{out}_i8_float",
            domain="com.microsoft",
        )
        columns = node("Mul", [product, f"{x}_i8_token_scale"], f"{out}_i8_2d")
        lead_of_x = lead if tokens is not None else f"{x}_i8_lead"
        if f"{lead_of_x}_{n}" not in shapes:
            graph.initializer.append(numpy_helper.from_array(np.array([n], np.int64), f"i8_width_{n}"))
            shapes.add(node("Concat", [lead_of_x, f"i8_width_{n}"], f"{lead_of_x}_{n}", axis=0))
        nodes.append(helper.make_node("Reshape", [columns, f"{lead_of_x}_{n}"], [out], name=f"{out}_i8"))
        rewritten += 1
    graph.initializer.extend(shared)
    outputs = {output.name for output in graph.output}
    _save(model, _fused_gelu(_without_nan_guards(nodes, outputs), constants, numpy_helper), dest)
    return rewritten


def _token_input(model: Any, inputs: set[str]) -> str | None:
    """A graph input shaped [batch, tokens] when ONNX shape inference finds every one of `inputs`
    shaped [batch, tokens, K] (a transformer's activations): the rewrite then computes the token
    count and output shapes once per run instead of once per product (~130 fewer nodes, which a
    query of a dozen tokens pays for in dispatch). None when anything is unknown."""
    import onnx

    try:
        graph = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 - no inference: shapes per product, as before
        return None

    def dims(value: Any) -> list[str | int]:
        return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]

    known = {value.name: dims(value) for value in [*graph.value_info, *graph.input]}
    leads = {tuple(known[name][:2]) if name in known and len(known[name]) == 3 else None for name in inputs}
    lead = leads.pop() if len(leads) == 1 else None
    if lead is None or not all(isinstance(d, str) and d for d in lead):
        return None
    return next((value.name for value in graph.input if tuple(dims(value)) == lead), None)


def _fused_gelu(nodes: list[Any], constants: dict[str, Any], numpy_helper: Any) -> list[Any]:
    """x · 0.5 · (erf(x / √2) + 1), as exported, becomes one BiasGelu (with the bias Add before it) or
    Gelu. ONNX Runtime's own fusion does not match this order of the factors; unfused, its five
    passes over the feed-forward activations took ~10% of the int8 graph's time (profiled on dub-ts)."""
    import numpy as np
    from onnx import helper

    def constant(name: str) -> float | None:
        value = numpy_helper.to_array(constants[name]) if name in constants else None
        return float(value.reshape(-1)[0]) if value is not None and value.size == 1 else None

    def other(node: Any, name: str) -> str | None:
        """The input of a two-input node that is not `name`."""
        rest = [i for i in node.input if i != name]
        return rest[0] if len(node.input) == 2 and len(rest) == 1 else None

    producers = {output: node for node in nodes for output in node.output}
    readers: dict[str, list[Any]] = {}
    for node in nodes:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    gone: set[int] = set()
    fused: dict[int, Any] = {}  # id of the node the fused one takes the place of -> the fused node
    for erf in nodes:
        if erf.op_type != "Erf":
            continue
        div = producers.get(erf.input[0])
        if (
            div is None
            or div.op_type != "Div"
            or (root_two := constant(div.input[1])) is None
            or not np.isclose(root_two, np.sqrt(2), rtol=1e-6)
        ):
            continue
        x = div.input[0]
        chain = [div, erf]
        for op, value in (("Add", 1.0), ("Mul", 0.5)):
            nxt = readers.get(chain[-1].output[0], [])
            term = other(nxt[0], chain[-1].output[0]) if len(nxt) == 1 and nxt[0].op_type == op else None
            if term is None or constant(term) != value:
                break
            chain.append(nxt[0])
        last = readers.get(chain[-1].output[0], []) if len(chain) == 4 else []
        if len(last) != 1 or last[0].op_type != "Mul" or other(last[0], chain[-1].output[0]) != x:
            continue
        chain.append(last[0])
        add = producers.get(x)
        bias = other(add, add.input[0]) if add is not None and add.op_type == "Add" else None
        if (
            add is not None
            and bias in constants
            and numpy_helper.to_array(constants[bias]).ndim == 1
            and {id(n) for n in readers.get(x, [])} == {id(div), id(last[0])}
        ):
            chain.insert(0, add)
            node = helper.make_node(
                "BiasGelu", [add.input[0], bias], [last[0].output[0]], name=f"{x}_gelu", domain="com.microsoft"
            )
        else:
            node = helper.make_node("Gelu", [x], [last[0].output[0]], name=f"{x}_gelu", domain="com.microsoft")
        gone.update(id(n) for n in chain)
        fused[id(last[0])] = node
    return [fused.get(id(node), node) for node in nodes if id(node) not in gone or id(node) in fused]


def _without_nan_guards(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """Drop Where(IsNaN(p), c, p) after a Softmax p: an exported attention's guard for rows whose every
    position is masked. Texts run unpadded (an attention mask of ones), so p never holds NaN and the
    guard returned p itself, at 7% of the int8 graph's time (profiled on dub-ts); the bits are the same."""
    producers = {output: node for node in nodes for output in node.output}
    renamed: dict[str, str] = {}
    kept = []
    for node in nodes:
        check = producers.get(node.input[0]) if node.op_type == "Where" and len(node.input) == 3 else None
        if (
            check is not None
            and check.op_type == "IsNaN"
            and check.input[0] == node.input[2]
            and node.output[0] not in outputs
            and producers.get(node.input[2]) is not None
            and producers[node.input[2]].op_type == "Softmax"
        ):
            renamed[node.output[0]] = node.input[2]
            continue
        kept.append(node)
    for node in kept:
        for i, name in enumerate(node.input):
            if name in renamed:
                node.input[i] = renamed[name]
    return kept


def _live(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """The nodes something still reads (the Cast/Mul that made a rewritten weight are dropped), in order."""
    while True:
        read = outputs | {name for node in nodes for name in node.input}
        kept = [node for node in nodes if any(output in read for output in node.output)]
        if len(kept) == len(nodes):
            return kept
        nodes = kept
