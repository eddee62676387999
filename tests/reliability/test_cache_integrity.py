"""The embedding cache is checked, not trusted: damage is a warning and a correct build, never a bad vector."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.embedding.cache import _open
from docs_mcp_core.indexing.cached_vectors import embed_chunks
from docs_mcp_core.indexing.chunks import chunk_corpus
from docs_mcp_core.indexing.fingerprints import fingerprint_chunks
from docs_mcp_core.indexing.table import open_table

from ..conftest import EXAMPLE_DOCS, write

DIMS = 64
CACHE = ".embedding-cache"
PENDING = ".embedding-cache.pending"


def build(docs: Path, out: Path) -> str:
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--docs-dir",
            str(docs),
            "--out",
            str(out),
            "--embedding-provider",
            "hash",
            "--embedding-dimensions",
            str(DIMS),
        ],
    )
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return result.output


def published_vectors(out: Path) -> dict[str, list[float]]:
    meta = json.loads((out / "metadata.json").read_text())
    rows = open_table(out, meta["index"]["version"]).to_arrow()
    return dict(zip(rows.column("chunk_id").to_pylist(), rows.column("vector").to_pylist()))


def data_files(folder: Path) -> list[Path]:
    return sorted((folder / "vectors.lance" / "data").glob("*.lance"))


def overwrite_a_vector(folder: Path, values: np.ndarray) -> None:
    """Replace the stored bytes of one vector in place, as a bad disk or a stray write would."""
    rows = _open(folder).to_arrow()
    old = np.asarray(rows.column("vector")[0].as_py(), dtype="<f4")
    for path in data_files(folder):
        raw = bytearray(path.read_bytes())
        at = raw.find(old.tobytes())
        if at >= 0:
            new = old.copy()
            new[: len(values)] = values
            raw[at : at + old.nbytes] = new.tobytes()
            path.write_bytes(bytes(raw))
            return
    raise AssertionError("vector bytes not found in the table's data files")


def same_size_garbage(folder: Path) -> None:
    for path in data_files(folder):
        path.write_bytes(np.random.default_rng(7).bytes(path.stat().st_size))


def nan_and_inf(folder: Path) -> None:
    overwrite_a_vector(folder, np.array([np.nan, np.inf, -np.inf], dtype="<f4"))


def valid_but_wrong_floats(folder: Path) -> None:
    overwrite_a_vector(folder, np.linspace(0.1, 0.8, 8, dtype="<f4"))  # 32 bytes of plausible floats


def edit(docs: Path) -> None:
    """A change, so the next table version is written from cached vectors (not the published one reused)."""
    write(docs, "guides/integrity.md", "# Integrity\n\n## Checks\n\nEvery vector is verified when read.\n")


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[float]]:
    """What the edited corpus publishes when built from nothing (built once: the tests only compare)."""
    root = tmp_path_factory.mktemp("cold")
    reference = root / "reference-docs"
    shutil.copytree(EXAMPLE_DOCS, reference)
    edit(reference)
    build(reference, root / "cold")
    return published_vectors(root / "cold")


@pytest.mark.slow
@pytest.mark.parametrize("damage", [same_size_garbage, nan_and_inf, valid_but_wrong_floats])
def test_damaged_cache_file_is_a_warning_and_a_correct_build(example_docs: Path, tmp_path: Path, cold, damage) -> None:
    out = tmp_path / "out"
    build(example_docs, out)
    damage(out / CACHE)
    edit(example_docs)
    output = build(example_docs, out)
    assert "warn: embedding cache invalidated: the vectors table is damaged (vectors.lance/data/" in output
    assert "does not match its checksum" in output
    assert published_vectors(out) == cold
    assert "warn:" not in build(example_docs, out)  # the rewritten cache is sound


@pytest.mark.slow
@pytest.mark.parametrize(
    "meta",
    [
        {"entries": "x"},
        {"entries_digest": 5},
        {"files": "x"},
        {"files": {"a": "b"}},
        {"files": {"../../metadata.json": 1}},
        [1],
        "text",
        None,
    ],
)
def test_wrong_typed_cache_meta_is_a_warning_and_a_cold_build(example_docs: Path, tmp_path: Path, cold, meta) -> None:
    out = tmp_path / "out"
    build(example_docs, out)
    path = out / CACHE / "cache-meta.json"
    real = json.loads(path.read_text())
    path.write_text(json.dumps({**real, **meta} if isinstance(meta, dict) else meta))
    edit(example_docs)
    output = build(example_docs, out)
    assert "warn: embedding cache invalidated: cache-meta.json is corrupt" in output
    assert published_vectors(out) == cold


def unpublished_vectors(docs: Path, out: Path) -> None:
    """Embed the edited corpus but stop before publishing: the new vectors wait in .pending."""
    provider = make_provider(ProviderSettings("hash", dimensions=DIMS))
    chunkset = chunk_corpus(docs, reuse_from=out)
    embed_chunks(chunkset, fingerprint_chunks(chunkset, provider), provider, cache_dir=out / CACHE)
    assert _open(out / PENDING).count_rows() > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage,reason,embedded",
    [
        (same_size_garbage, "discarding vectors kept by an unfinished build: the vectors table is unreadable", 2),
        (nan_and_inf, "1 damaged vector(s) kept by an unfinished build ignored", 1),
        (valid_but_wrong_floats, "1 damaged vector(s) kept by an unfinished build ignored", 1),
    ],
)
def test_damaged_pending_store_is_a_warning_and_a_correct_build(
    example_docs: Path, tmp_path: Path, cold, damage: Callable[[Path], None], reason: str, embedded: int
) -> None:
    out = tmp_path / "out"
    build(example_docs, out)
    edit(example_docs)  # two new chunks
    unpublished_vectors(example_docs, out)
    damage(out / PENDING)
    output = build(example_docs, out)
    assert f"warn: embedding cache: {reason}" in output
    # only the damaged vectors are paid for again
    assert f", {embedded} chunk{'' if embedded == 1 else 's'} embedded;" in output
    assert published_vectors(out) == cold
    assert not (out / PENDING).exists()
