"""Per-file chunk reuse, and the chunker version that invalidates it."""

import hashlib
import json
from pathlib import Path

import pytest

from docs_mcp_core.chunking.chunker import CHUNKER_VERSION
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing import file_reuse as reuse
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.chunks import analyze_corpus, chunk_corpus
from docs_mcp_core.indexing.lancedb_index import chunks_json
from docs_mcp_core.progress import NullReporter

from ..conftest import write

# sha256 of the chunk output for the bundled corpora, per chunker version. When this test
# fails, chunk output changed: bump CHUNKER_VERSION in docs_mcp_core/chunking/chunker.py (so every
# previous build's reused chunks are invalidated) and record the new digest under it.
GOLDEN = {
    "1": "a997b3015c8a05929ab52cf85e6332ec11a8615e1531612103e89a32cd2373f2",
    "2": "ada12e7e3ffdcbaefb5dd9d79aa06f093adccf3f8fd77439af6315b08fc14e20",  # shallower headings with text of their own start a chunk
    "3": "829b407e68c34585b7e53939c59a14295d2f6ab4bd223c7f4cba4e96564fae22",  # GitHub alerts read as "Note" instead of "[!NOTE]"
    "4": "829b407e68c34585b7e53939c59a14295d2f6ab4bd223c7f4cba4e96564fae22",  # headings cut to 500 characters (none here)
    "5": "522551e5a315d7b3512acec5d2a641679ef55364e20991e2246460d57c86cef3",  # visible text only: HTML comments gone
}


@pytest.mark.slow
def test_chunker_version_is_bumped_when_chunk_output_changes(dub_ts_docs: Path) -> None:
    h = hashlib.sha256()
    for root in (Path(__file__).parents[2] / "examples" / "parcelly-docs", dub_ts_docs):
        h.update(json.dumps([c.to_dict() for c in analyze_corpus(root).chunks], sort_keys=True).encode())
    assert CHUNKER_VERSION in GOLDEN, f"record the chunk output digest for CHUNKER_VERSION {CHUNKER_VERSION}"
    assert h.hexdigest() == GOLDEN[CHUNKER_VERSION], (
        "chunk output changed for the fixtures: bump CHUNKER_VERSION and add "
        f"{h.hexdigest()!r} to GOLDEN under the new version"
    )


class Recorder(NullReporter):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)


def none_build(docs: Path, out: Path):
    return build(docs, out, make_provider(ProviderSettings("none")))


def test_unchanged_files_are_not_reparsed(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert none_build(example_docs, out).reused_files == 0
    assert none_build(example_docs, out).reused_files == 18
    page = example_docs / "guides" / "errors.md"
    page.write_text(page.read_text() + "\nmore\n")
    result = chunk_corpus(example_docs, reuse_from=out)
    assert (result.reparsed, result.reused) == (1, 17)


def test_manifest_rules_change_reparses_the_files_they_govern(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    none_build(example_docs, out)
    manifest = example_docs / "sdks" / "go" / ".docs-mcp.json"
    data = json.loads(manifest.read_text())
    data["metadata"]["maturity"] = "beta"
    manifest.write_text(json.dumps(data))
    result = chunk_corpus(example_docs, reuse_from=out)
    assert result.reparsed == 2 and result.reused == 16  # the two Go pages
    go_chunks = [c for c in result.chunks if c.filepath.startswith("sdks/go/")]
    assert go_chunks and all(c.metadata["maturity"] == "beta" for c in go_chunks)


def test_reused_files_still_report_their_warnings(example_docs: Path, tmp_path: Path) -> None:
    write(example_docs, "guides/odd.md", "---\nsidebar: 3\n---\n# Odd\n\ntext\n")
    out = tmp_path / "out"
    none_build(example_docs, out)
    again = chunk_corpus(example_docs, reuse_from=out)
    assert again.reused == 19
    assert any("unknown frontmatter key 'sidebar'" in d.message and d.line == 2 for d in again.warnings)


def test_results_with_and_without_reuse_are_identical(example_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    none_build(example_docs, out)
    for name in ("guides/retries.md", "sdks/python/README.md"):
        page = example_docs / name
        page.write_text(page.read_text().replace("Retries", "Retry policy", 1))
    warm = chunk_corpus(example_docs, reuse_from=out)
    cold = chunk_corpus(example_docs)
    assert chunks_json(warm.chunks) == chunks_json(cold.chunks)
    assert warm.taxonomy == cold.taxonomy and warm.reused == 16


def test_chunker_version_or_damaged_state_disables_reuse_with_a_reason(
    example_docs: Path, tmp_path: Path, monkeypatch
) -> None:
    out = tmp_path / "out"
    none_build(example_docs, out)
    # an upgraded parser is a changed chunker: chunker_version() names the parsers' versions
    monkeypatch.setattr(reuse, "chunker_version", lambda: f"{CHUNKER_VERSION} (markdown-it-py 99.0)")
    recorder = Recorder()
    assert chunk_corpus(example_docs, recorder, reuse_from=out).reused == 0
    assert "re-parsing every file: the chunker changed since the last build" in recorder.lines
    monkeypatch.undo()
    (out / "chunks.json").write_text((out / "chunks.json").read_text().replace("Parcelly", "Parcel-ly", 1))
    recorder = Recorder()
    assert chunk_corpus(example_docs, recorder, reuse_from=out).reused == 0
    assert "re-parsing every file: chunks.json does not match the recorded build state" in recorder.lines
    (out / ".docs-mcp" / "files.json").write_text("{oops")
    recorder = Recorder()
    assert chunk_corpus(example_docs, recorder, reuse_from=out).reused == 0
    assert "re-parsing every file: files.json is corrupt" in recorder.lines
