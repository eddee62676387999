"""The embedding cache is pruned only after publish: a build killed before publishing takes nothing away."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main

from ..conftest import EXAMPLE_CHUNKS
from ..fakes.openai_server import FakeEmbeddingServer

# Every step of a build up to (not including) publish_metadata, under the build lock, then wait to be killed.
UNPUBLISHED_BUILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from docs_mcp_core.indexing.cached_vectors import embed_chunks
    from docs_mcp_core.indexing.chunks import chunk_corpus
    from docs_mcp_core.indexing.fingerprints import fingerprint_chunks
    from docs_mcp_core.indexing.lancedb_index import write_index
    from docs_mcp_core.embedding import ProviderSettings, make_provider
    from docs_mcp_core.output.lock import build_lock

    docs, out, url = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    provider = make_provider(ProviderSettings("openai", model="fake-embed", dimensions=32, base_url=url))
    with build_lock(out):
        chunkset = chunk_corpus(docs, reuse_from=out)
        embedded = embed_chunks(chunkset, fingerprint_chunks(chunkset, provider), provider,
                                cache_dir=out / ".embedding-cache")
        write_index(out, chunkset, embedded)
        print("written", flush=True)
        time.sleep(600)
""")


def cli(docs: Path, out: Path, server: FakeEmbeddingServer) -> str:
    server.reset_counts()
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--docs-dir",
            str(docs),
            "--out",
            str(out),
            "--embedding-provider",
            "openai",
            "--embedding-model",
            "fake-embed",
            "--embedding-dimensions",
            "32",
            "--embedding-base-url",
            server.url,
        ],
    )
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_revert_after_a_kill_before_publish_embeds_nothing(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    page = example_docs / "guides" / "rate-limits.md"
    original = page.read_text()
    with FakeEmbeddingServer(dims=32) as fake:
        cli(example_docs, out, fake)
        published = json.loads((out / "metadata.json").read_text())["index"]
        page.write_text(original.replace("so that one integration", "so that one noisy integration"))
        fake.reset_counts()
        proc = subprocess.Popen(
            [sys.executable, "-c", UNPUBLISHED_BUILD, str(example_docs), str(out), fake.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "written\n", proc.stderr
        finally:
            proc.kill()
            proc.wait()
        assert len(fake.inputs) == 1  # the edited chunk was paid for, then the build died unpublished
        assert json.loads((out / "metadata.json").read_text())["index"] == published
        page.write_text(original)
        output = cli(example_docs, out, fake)
        assert fake.requests == 0 and f"embedding cache: {EXAMPLE_CHUNKS} hits, 0 misses" in output
        assert not (out / ".embedding-cache.pending").exists()  # published: the cache is exactly this build's
