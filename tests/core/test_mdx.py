"""MDX files (Docusaurus, Mintlify, Nextra, Starlight docs) are indexed like Markdown, without their
ESM lines and comments; so are `.markdown` files."""

import json
from pathlib import Path

from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.corpus.markdown import blank_mdx_syntax
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.search import run_search

from ..conftest import write

PAGE = """---
title: Webhooks
---
import { Tabs, Tab } from '@theme/Tabs';
import Callout from "../components/Callout";
export const meta = {
  section: "guides",
};

# Webhooks

{/* internal: keep this page short */}

Receive events when a label is bought.

<Callout type="warning">
Always verify the signature before you trust a payload.
</Callout>

## Verify the signature

<Tabs>
<Tab title="Python">

```python
import hmac
export_value = hmac.compare_digest(expected, received)
```

</Tab>
</Tabs>

{/*
  a comment over
  several lines
*/}

Compare the Parcelly-Signature header with your own digest.
"""


def test_blank_mdx_syntax_keeps_lines_and_code() -> None:
    body = PAGE.split("---\n", 2)[2]
    blanked = blank_mdx_syntax(body)
    assert blanked.count("\n") == body.count("\n")  # diagnostics keep the file's line numbers
    assert "import { Tabs" not in blanked and "export const" not in blanked and 'section: "guides"' not in blanked
    assert "internal:" not in blanked and "several lines" not in blanked
    assert "import hmac\nexport_value = hmac.compare_digest" in blanked  # code fences are left alone
    assert "Receive events" in blanked and "Compare the Parcelly-Signature header" in blanked
    prose = "Important: exporting data\nexported files are kept.\n"  # words that only start like ESM
    assert blank_mdx_syntax("```\nimport x\n```\n" + prose) == "```\nimport x\n```\n" + prose


def test_mdx_files_are_indexed_and_searchable(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "guides/webhooks.mdx", PAGE)
    write(docs, "plain.md", "# Plain\n\nA page about retries.\n")
    write(docs, "notes.markdown", "# Notes\n\nThe .markdown extension of older sites.\n")
    out = tmp_path / "out"
    build(docs, out, make_provider(ProviderSettings("none")))
    chunks = {c["chunk_id"]: c for c in json.loads((out / "chunks.json").read_text())}
    assert sorted(chunks) == [
        "guides/webhooks.mdx#_preamble",
        "guides/webhooks.mdx#webhooks/verify-the-signature",
        "notes.markdown#_preamble",
        "plain.md#_preamble",
    ]
    preamble = chunks["guides/webhooks.mdx#_preamble"]
    assert "import" not in preamble["content"] and "internal:" not in preamble["content"]
    assert "Always verify the signature" in preamble["content_text"] and "Callout" not in preamble["content_text"]
    section = chunks["guides/webhooks.mdx#webhooks/verify-the-signature"]
    assert "import hmac" in section["content_text"] and "several lines" not in section["content_text"]
    hits = run_search(out, "compare_digest signature header", hybrid=False).hits
    assert hits[0]["chunk_id"] == "guides/webhooks.mdx#webhooks/verify-the-signature"


def test_a_folder_of_mdx_files_alone_builds_and_lists_them(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "index.mdx", "import X from './x';\n\n# Home\n\nWelcome.\n")
    result = CliRunner().invoke(main, ["validate", "--docs-dir", str(docs), "--format", "json"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["build", "--docs-dir", str(docs), "--out", str(out), "--embedding-provider", "none"]
    )
    assert result.exit_code == 0, result.output
    assert [c["chunk_id"] for c in json.loads((out / "chunks.json").read_text())] == ["index.mdx#_preamble"]
