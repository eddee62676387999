"""Exact nearest chunks over the in-memory vectors, in two passes when the matrix is big.

Ranking every vector reads the whole float32 matrix per query, and is the part of a hybrid search
that grows with the corpus. The first pass instead scans an int8 copy (8-bit codes with one scale per
block of 32 values, ONNX Runtime's `MatMulNBits` with int8 dot products: a quarter of the bytes) and
gives every row a lower and an upper bound on its exact score. Only the chunks whose upper bound reaches the depth-th best lower bound can be among the
best (the server keeps this copy beside the float32 one), and only they are scored exactly
(float64 sums, rounded to float32). The answer is the exact ranking, not an approximation: the
bounds are proofs, not estimates.

The bound of row i: the first pass computes ŵ·â exactly (up to float rounding), where ŵ is the
row as its codes give it back and â the query quantized the way the kernel quantizes it (fed to
it already quantized, so the kernel's own quantization changes nothing). Then
|w·q − ŵ·â| ≤ |δw·q| + |ŵ·δa| ≤ ‖δw‖·‖q‖ + ‖ŵ‖·‖δa‖, bounded for every row with the largest
‖δw‖ of any row (one slack per query: one pass fewer over the scores), ‖δa‖ being known per query.
When the copy is made, probe queries run through the kernel and are compared with ŵ·â computed
in numpy: an onnxruntime that computes otherwise gets no first pass at all. Measurements:
docs/decisions/0020-two-pass-exact-vector-scan.md.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..embedding.onnx_graphs import block_codes, nbits_layout

BLOCK = 32  # values per quantization block along a vector
# float32 vectors from which the first pass is built: below, one exact scan takes about as long
# (decision 0020), and its memory (the int8 copy and ONNX Runtime's packed one, ~1 byte per
# float32) would buy little
SCAN_BYTES = 24 * 2**20
ROUNDING = 2e-4  # allowance for the kernel's float rounding (measured: at most 1.1e-7 from q^.w^ in numpy)
PROBES = 4  # probe queries of the self-check when the first pass is built
CHECK_ROWS = 2048  # rows those probes are checked on
STEP_ROWS = 1024  # rows quantized at a time
SIMILARITY_BLOCK = 2**18  # matrix elements per BLAS call in `similarities`


def similarities(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`vectors @ query`, a block of rows at a time, on the calling thread.

    One BLAS call over a big matrix fans out to every core and then waits for the slowest, which on a
    busy machine costs many times the scan itself. Blocks of a multiple
    of 256 rows stay on one thread and give exactly what a single-threaded call gives, so the
    scores no longer depend on the number of cores either.
    """
    query = np.asarray(query, dtype=vectors.dtype)
    rows = max(256, SIMILARITY_BLOCK // max(1, vectors.shape[1]) // 256 * 256)
    out = np.empty(len(vectors), dtype=vectors.dtype)
    for start in range(0, len(vectors), rows):
        np.matmul(vectors[start : start + rows], query, out=out[start : start + rows])
    return out


def _dequantize(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    rows, dims = codes.shape
    wide: np.ndarray = codes.reshape(rows, dims // BLOCK, BLOCK).astype(np.float32) * scales[:, :, None]
    return wide.reshape(rows, dims)


def _available() -> bool:
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))
    except (ImportError, ValueError):
        return False


@dataclass
class QuantizedScan:
    """The first pass over one matrix: its int8 copy inside an ONNX Runtime session, and the largest ‖δw‖."""

    session: Any
    error: float  # the largest norm of what a row's codes lose
    dims: int
    buffers: tuple[Any, ...] = ()  # what the session reads: kept alive with it

    @classmethod
    def of(cls, vectors: np.ndarray, min_bytes: int | None = None) -> QuantizedScan | None:
        """The first pass for `vectors` (unit float32 rows), or None: a small matrix (one exact scan is
        as quick), dimensions not a multiple of BLOCK, no onnxruntime and onnx (the semantic extra), or
        a kernel that fails the self-check."""
        rows, dims = vectors.shape
        if (
            vectors.nbytes < (SCAN_BYTES if min_bytes is None else min_bytes)
            or dims % BLOCK
            or not rows
            or not _available()
        ):
            return None
        try:
            packed = np.empty((rows, dims // BLOCK, BLOCK), dtype=np.uint8)  # the kernel's layout: code + 128
            scales = np.empty((rows, dims // BLOCK), dtype=np.float32)
            error = 0.0
            for start in range(0, rows, STEP_ROWS):  # a few MB of temporaries at a time, not the matrix's size
                part = vectors[start : start + STEP_ROWS]
                codes, part_scales = block_codes(part, BLOCK)
                packed[start : start + len(part)] = nbits_layout(codes, BLOCK)
                scales[start : start + len(part)] = part_scales
                lost = part.astype(np.float64) - _dequantize(codes, part_scales)
                error = max(error, float(np.sqrt(np.einsum("ij,ij->i", lost, lost)).max()))
            session, buffers = _session(packed, scales)
            scan = cls(session, error, dims, buffers)
            return scan if scan._agrees(packed, scales, vectors) else None
        except Exception:  # noqa: BLE001 - any failure only costs speed: the exact scan answers
            return None

    def _agrees(self, packed: np.ndarray, scales: np.ndarray, vectors: np.ndarray) -> bool:
        """The kernel computes ŵ·â, for probe queries (rows of the matrix and mixtures of them) on a
        sample of rows."""
        rng = np.random.default_rng(0)
        sample = np.sort(rng.choice(len(vectors), size=min(CHECK_ROWS, len(vectors)), replace=False))
        rows = _dequantize(
            (packed[sample].astype(np.int16) - 128).reshape(len(sample), -1).astype(np.int8), scales[sample]
        ).astype(np.float64)
        picks = rng.choice(len(vectors), size=min(PROBES, len(vectors)), replace=False)
        for n, row in enumerate(picks):
            query = vectors[row] if n % 2 == 0 else vectors[row] + vectors[picks[0]] * np.float32(0.5)
            quantized, _ = query_codes((query / (np.linalg.norm(query) or 1.0)).astype(np.float32))
            got = self.session.run(None, {"query": quantized[None]})[0][0][sample].astype(np.float64)
            if not np.all(np.abs(got - rows @ quantized.astype(np.float64)) <= ROUNDING / 2):
                return False
        return True

    def approximate(self, query: np.ndarray) -> tuple[np.ndarray, float]:
        """(first-pass score of every row, slack): each row's exact score against `query` lies within
        slack of its first-pass score. One slack for all rows, from the largest ‖δw‖: one pass fewer
        over the scores, for a few more rows scored exactly."""
        quantized, lost = query_codes(query)
        approx = self.session.run(None, {"query": quantized[None]})[0][0]
        return approx, self.error * float(np.linalg.norm(query)) + (1 + self.error) * lost + ROUNDING


def query_codes(query: np.ndarray) -> tuple[np.ndarray, float]:
    """The query as the kernel quantizes it (codes times scales, float32), and ‖δa‖ (what that loses)."""
    codes, scales = block_codes(query.reshape(1, -1).astype(np.float32), BLOCK)
    quantized = _dequantize(codes, scales)[0]
    return quantized, float(np.linalg.norm(query.astype(np.float64) - quantized))


def _session(packed: np.ndarray, scales: np.ndarray) -> tuple[Any, tuple[Any, ...]]:
    """An ONNX Runtime session computing query · rowsᵀ over the int8 rows, on one thread, and the
    buffers it reads, which must live as long as it does.

    The codes and scales are handed over as external initializers, not inside the model: a model
    holding them was copied twice more while the session loaded (about twice the memory this way
    takes, most of which is the kernel's own packed layout).
    """
    import onnxruntime as ort
    from onnx import TensorProto, helper

    rows, blocks, _ = packed.shape
    dims = blocks * BLOCK
    flat_scales = np.ascontiguousarray(scales.reshape(-1))
    buffers = {"codes": (packed, TensorProto.UINT8), "scales": (flat_scales, TensorProto.FLOAT)}

    def external(name: str) -> Any:
        array, dtype = buffers[name]
        tensor = TensorProto(name=name, data_type=dtype, dims=array.shape)
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", f"in-memory-{name}"), ("offset", "0"), ("length", str(array.nbytes))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        return tensor

    node = helper.make_node(
        "MatMulNBits",
        ["query", "codes", "scales"],
        ["scores"],
        domain="com.microsoft",
        K=dims,
        N=rows,
        bits=8,
        block_size=BLOCK,
        accuracy_level=4,
    )  # 4: int8 dot products
    graph = helper.make_graph(
        [node],
        "scan",
        [helper.make_tensor_value_info("query", TensorProto.FLOAT, [1, dims])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, rows])],
        [external("codes"), external("scales")],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1  # the full-text queries run on the other core meanwhile
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    values = tuple(ort.OrtValue.ortvalue_from_numpy(buffers[name][0]) for name in ("codes", "scales"))
    options.add_external_initializers(["codes", "scales"], list(values))
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session, (values, packed, flat_scales)


def nearest_rows(
    vectors: np.ndarray,
    query: np.ndarray,
    starts: np.ndarray | None,
    allowed: np.ndarray | None,
    depth: int,
    scan: QuantizedScan | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(chunk rows, exact cosine similarities) holding every allowed chunk at least as close as the
    depth-th closest allowed one (maybe more): a chunk is as close as its closest passage (`starts`:
    each chunk's first row in `vectors`, None for one row per chunk). `query` is a unit float32 vector.
    Without `scan`, every row is scored exactly (similarities), as for small indexes."""
    chunks = len(vectors) if starts is None else len(starts)
    if scan is None:
        similarity = similarities(vectors, query)
        if starts is not None:
            similarity = np.maximum.reduceat(similarity, starts)
        rows = np.arange(chunks) if allowed is None else np.flatnonzero(allowed)
        return rows, similarity[rows]
    approx, slack = scan.approximate(query)
    if starts is not None:
        approx = np.maximum.reduceat(approx, starts)
    if allowed is not None:
        approx = np.where(allowed, approx, -np.inf)
        count = int(np.count_nonzero(allowed))
    else:
        count = chunks
    if count <= depth:
        rows = np.flatnonzero(approx > -np.inf)
    else:  # below the depth-th best first-pass score by more than twice the slack: provably not among the best
        floor = np.partition(approx, chunks - depth)[chunks - depth] - 2 * slack
        rows = np.flatnonzero(approx >= floor)
    return rows, _exact(vectors, query, starts, rows)


def _exact(vectors: np.ndarray, query: np.ndarray, starts: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
    """Exact similarities of these chunks (their closest passage), summed in float64: a row's score
    does not depend on which other rows were scored with it."""
    wide = query.astype(np.float64)
    if starts is None:
        scores: np.ndarray = (vectors[rows].astype(np.float64) @ wide).astype(np.float32)
        return scores
    ends = np.append(starts[1:], len(vectors))
    lengths = ends[rows] - starts[rows]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    passages = np.repeat(starts[rows] - offsets, lengths) + np.arange(int(lengths.sum()))
    scores = (vectors[passages].astype(np.float64) @ wide).astype(np.float32)
    return np.maximum.reduceat(scores, offsets) if len(rows) else scores
