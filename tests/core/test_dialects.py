"""Docs dialects (MkDocs Material, VitePress, MDX, MyST, GitHub alerts, reST): text, not markup, in the index."""

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.corpus.framework import detect_framework
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.embedding.input import to_embedding_input
from docs_mcp_core.indexing.build import build
from docs_mcp_core.indexing.chunks import analyze_corpus, chunk_corpus
from docs_mcp_core.indexing.description import default_description
from docs_mcp_core.indexing.parsing import ParseJob, parse_one
from docs_mcp_core.progress import NullReporter

from ..conftest import write

FIXTURES = Path(__file__).parents[1] / "fixtures"
# Copies of the shared dialect corpora (each with its licence and SOURCE.txt), and the docs folder of each.
CORPORA = {
    "sqlmodel-docs": "sqlmodel-docs/docs",
    "vite-docs": "vite-docs/docs",
    "starlight-docs": "starlight-docs/docs/src/content/docs",
    "requests-docs": "requests-docs/docs",
}
# Pages the fuzz test cuts and scrambles: one per construct family of each corpus.
FUZZED = [
    "sqlmodel-docs/docs/install.md",
    "sqlmodel-docs/docs/tutorial/update.md",
    "sqlmodel-docs/docs/tutorial/where.md",
    "vite-docs/docs/guide/features.md",
    "vite-docs/docs/guide/index.md",
    "vite-docs/docs/guide/static-deploy.md",
    "starlight-docs/docs/src/content/docs/components/icons.mdx",
    "starlight-docs/docs/src/content/docs/components/tabs.mdx",
    "starlight-docs/docs/src/content/docs/getting-started.mdx",
    "starlight-docs/docs/src/content/docs/guides/authoring-content.mdx",
    "requests-docs/docs/api.rst",
    "requests-docs/docs/index.rst",
    "requests-docs/docs/user/advanced.rst",
    "requests-docs/docs/user/quickstart.rst",
]
MARKUP = ("!!!", "???", "///", ":::", "--8<--", "{*", "{!", "<<<", "[!NOTE]", "[!WARNING]", "{ #", "<TabItem")


def chunks_of(docs: Path) -> dict[str, dict]:
    out = docs.parent / (docs.name + "-out")
    build(docs, out, make_provider(ProviderSettings("none")))
    return {c["chunk_id"]: c for c in json.loads((out / "chunks.json").read_text())}


def no_markup(chunk: dict) -> None:
    text = chunk["content_text"] + "\n" + chunk["breadcrumb"]
    for marker in MARKUP:
        assert marker not in text, (marker, chunk["chunk_id"], text)


MKDOCS_PAGE = """# Guide

## Tabs and notes { #tabs-and-notes }

!!! warning "Mind the gap"
    Old-style admonition body.


    Still inside after two blank lines.

??? tip
    Collapsed tip.

=== "Python"

    ```
    print("hi")
    ```

=== "Shell"

    ```bash
    echo hi
    ```

/// details | Full file preview

//// tab | Python 3.10+

{* ./docs_src/app.py ln[2:3] hl[2] *}

////

///

> [!NOTE]
> An alert.

## Snippets

--8<-- "snippets/shared.md"

```python
{!./docs_src/app.py!}
```

## API

::: mypkg.module
    options:
      show_source: false
"""


def mkdocs_project(root: Path) -> Path:
    write(
        root, "mkdocs.yml", "site_name: Widgets\nsite_description: Widgets for Python.\nsite_url: https://w.example/\n"
    )
    write(root, "docs_src/app.py", "import widgets\napp = widgets.App()\napp.run()\n")
    write(root, "snippets/shared.md", "Shared text from a snippet.\n")
    write(root, "docs/guide.md", MKDOCS_PAGE)
    write(root, "docs/api.md", "# API reference\n\n::: mypkg.api\n\n::: mypkg.models\n")
    return root / "docs"


def test_mkdocs_material_constructs_are_text_and_includes_resolve(tmp_path: Path) -> None:
    docs = mkdocs_project(tmp_path / "proj")
    chunks = chunks_of(docs)
    ids = sorted(chunks)
    assert ids == ["guide.md#_preamble", "guide.md#guide/snippets", "guide.md#guide/tabs-and-notes"], ids
    assert not any(i.startswith("api.md") for i in ids)  # a page of API stubs only: nothing to index
    tabs = chunks["guide.md#guide/tabs-and-notes"]
    assert tabs["heading"] == "Tabs and notes"  # the attribute list leaves the heading and its slug
    text = tabs["content_text"]
    assert "Warning: Mind the gap" in text and "Still inside after two blank lines." in text
    assert "Tip\nCollapsed tip." in text and 'Python\nprint("hi")' in text and "Full file preview" in text
    assert "app = widgets.App()\napp.run()" in text and "import widgets" not in text  # ln[2:3]
    assert "```python" in tabs["content"]  # the included code carries its language (the language facet)
    assert "Note\nAn alert." in text
    snippets = chunks["guide.md#guide/snippets"]
    assert "Shared text from a snippet." in snippets["content_text"] and "import widgets" in snippets["content_text"]
    for chunk in chunks.values():
        no_markup(chunk)
        assert "--8<--" not in to_embedding_input_of(chunk)


def to_embedding_input_of(chunk: dict) -> str:
    from docs_mcp_core.indexing.chunk_lines import parse_line

    return to_embedding_input(parse_line(json.dumps(chunk).encode()))


def test_vitepress_containers_code_groups_and_snippet_imports(tmp_path: Path) -> None:
    docs = tmp_path / "site" / "docs"
    write(
        docs,
        ".vitepress/config.ts",
        "export default defineConfig({\n  title: 'Vitely',\n  description: 'Fast builds',\n})\n",
    )
    write(docs, "guide/deploy.yaml", "# header\n#region content\nname: Deploy\non: push\n#endregion content\n")
    write(docs, "guide/part.md", "Included part.\n")
    write(
        docs,
        "guide/index.md",
        "---\ntitle: Getting started\nlayout: doc\n---\n\n## Install\n\n::: code-group\n\n```bash [npm]\nnpm i vitely\n```\n\n"
        "```bash [pnpm]\npnpm add vitely\n```\n\n:::\n\n::: tip `skipLibCheck` matters\nA tip.\n:::\n\n"
        "<<< ./deploy.yaml#content [.github/workflows/deploy.yml]\n\n<!--@include: ./part.md-->\n",
    )
    chunks = chunks_of(docs)
    install = chunks["guide/index.md#install"]
    assert install["breadcrumb"] == "guide/index.md > Getting started > Install"  # frontmatter title as the h1
    text = install["content_text"]
    assert "npm\nnpm i vitely" in text and "pnpm\npnpm add vitely" in text
    assert "Tip: skipLibCheck matters\nA tip." in text
    assert "name: Deploy\non: push" in text and "header" not in text and "Included part." in text
    assert "```yaml" in install["content"]
    no_markup(install)


def test_mdx_components_imports_asides_and_indented_fences(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(
        docs,
        "start.mdx",
        "---\ntitle: Start here\n---\nimport { Tabs, TabItem } from '@astrojs/starlight/components';\n\n"
        'Intro text.\n\n<Tabs>\n  <TabItem label="npm">\n\n    ```sh\n    npm create astro\n    ```\n\n  </TabItem>\n</Tabs>\n\n'
        ":::caution[Careful now]\nAn aside.\n:::\n\n<IconsList labels={{ copied: 'Copied!' }} />\n",
    )
    (chunk,) = chunks_of(docs).values()
    assert chunk["heading"] == "Start here" and chunk["breadcrumb"] == "start.mdx > Start here"
    text = chunk["content_text"]
    assert "npm\n" in text and "npm create astro" in text and "```" not in text
    assert "Caution: Careful now\nAn aside." in text and "IconsList" not in text and "Copied" not in text
    assert "import " not in text and "@astrojs" not in text
    no_markup(chunk)


RST = """.. _top:

Widgets
=======

.. module:: widgets

Use :class:`Widget <widgets.Widget>` and :meth:`~widgets.Widget.spin`.

.. note::
   Widgets spin.

Install
-------

.. code-block:: bash

   pip install widgets

.. autoclass:: widgets.Widget
   :members:

.. toctree::
   :maxdepth: 2

   other

.. sphinx-only-directive:: arg
   :unknown-option: yes

   Body text of an unknown directive.

Details
~~~~~~~

A :unknownrole:`thing` here.
"""


def test_rst_sections_become_chunks_with_the_same_id_rules(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "conf.py", "project = 'Widgets'\nextensions = ['sphinx.ext.autodoc']\n")
    write(docs, "index.rst", RST)
    write(docs, "broken.rst", "Title\n=====\n\n.. note::\n\n   x\n\n* a\n  b\n * c\n\n`unclosed\n")
    chunkset = analyze_corpus(docs)
    ids = [c.chunk_id for c in chunkset.chunks if c.filepath == "index.rst"]
    assert ids == ["index.rst#_preamble", "index.rst#widgets/install"], ids
    pre, install = [c for c in chunkset.chunks if c.filepath == "index.rst"]
    assert pre.heading == "Widgets" and "Use Widget and spin." in pre.content_text
    assert "Note:\nWidgets spin." in pre.content_text or "Note:" in pre.content_text
    assert (
        "```bash\npip install widgets\n```" in install.content
        and "Body text of an unknown directive." in install.content_text
    )
    assert "Details" in install.content_text and "A thing here." in install.content_text
    assert "autoclass" not in install.content and "toctree" not in install.content and ".." not in install.content_text
    assert any(c.filepath == "broken.rst" for c in chunkset.chunks)  # warnings, not a failed corpus
    assert not any(d.severity == "error" for d in chunkset.diagnostics)
    assert chunkset.framework == "Sphinx (conf.py)"


def test_include_safety_outside_root_loops_and_depth(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    docs = root / "docs"
    write(root, "mkdocs.yml", "site_name: Safe\n")
    write(tmp_path, "secret.md", "TOP SECRET\n")
    os.symlink(tmp_path / "secret.md", root / "link.md")
    write(root, "loop.md", '--8<-- "loop.md"\n')
    write(docs, "page.md", '# Page\n\n--8<-- "link.md"\n\n--8<-- "../../secret.md"\n\n--8<-- "loop.md"\n\nBody.\n')
    chunkset = analyze_corpus(docs)
    (chunk,) = chunkset.chunks
    assert "TOP SECRET" not in chunk.content and "Body." in chunk.content_text
    messages = [d.message for d in chunkset.diagnostics if d.code == "include-unresolved"]
    assert any("outside the project root" in m for m in messages), messages
    assert any("include loop" in m for m in messages), messages
    assert all(d.line in (3, 5, 7) for d in chunkset.diagnostics if d.code == "include-unresolved")


def test_a_changed_include_rechunks_only_the_pages_that_include_it(tmp_path: Path) -> None:
    docs = mkdocs_project(tmp_path / "proj")
    write(docs, "other.md", "# Other\n\nNo includes here.\n")
    out = tmp_path / "out"
    build(docs, out, make_provider(ProviderSettings("none")))
    write(tmp_path / "proj", "snippets/shared.md", "Changed snippet text.\n")
    chunkset = chunk_corpus(docs, NullReporter(), reuse_from=out)
    assert sorted(f.relpath for f in chunkset.files if not f.reused) == ["guide.md"]
    assert (
        "Changed snippet text."
        in next(c for c in chunkset.chunks if c.chunk_id == "guide.md#guide/snippets").content_text
    )
    assert chunk_corpus(docs, NullReporter(), reuse_from=out).reused == 2  # api.md (no chunks) and other.md


@pytest.mark.slow
def test_framework_detection_and_descriptions_on_the_shipped_corpora(tmp_path: Path) -> None:
    cases = {
        CORPORA["sqlmodel-docs"]: ("MkDocs", "SQLModel documentation: SQLModel, SQL databases in Python"),
        CORPORA["vite-docs"]: ("VitePress", "docs documentation: Next Generation Frontend Tooling"),
        CORPORA["starlight-docs"]: ("Starlight", "Starlight documentation ("),
        CORPORA["requests-docs"]: ("Sphinx", "Requests documentation ("),
    }
    for rel, (name, start) in cases.items():
        fw = detect_framework(FIXTURES / rel)
        assert fw is not None and fw.name == name, rel
        description = default_description("docs", analyze_corpus(FIXTURES / rel))
        if name == "VitePress":  # its title is a template string: reported, not guessed; its home page names it
            assert fw.unreadable == ["title"] and description.startswith("Vite documentation: Next Generation")
        else:
            assert description.startswith(start), description
    # no framework: the README's title and first paragraph; a generic folder name is not the corpus name
    docs = tmp_path / "pydantic-like" / "docs"
    write(docs, "README.md", "# Pydantic\n\nData validation using Python type hints, fast and extensible.\n")
    write(docs, "usage.md", "# Usage\n\nText.\n")
    assert default_description("docs", analyze_corpus(docs)).startswith(
        "Pydantic documentation: Data validation using Python type hints"
    )
    write(docs.parent / "other" / "docs", "a.md", "# Alpha\n\nText.\n")
    assert default_description("docs", analyze_corpus(docs.parent / "other" / "docs")).startswith("other documentation")


def test_a_config_above_that_does_not_cover_the_folder_is_ignored(tmp_path: Path) -> None:
    write(tmp_path, "mkdocs.yml", "site_name: Elsewhere\ndocs_dir: site-docs\n")
    write(tmp_path / "tests" / "corpus", "a.md", "# A\n\nText.\n")
    assert detect_framework(tmp_path / "tests" / "corpus") is None


def test_validate_prints_the_syntax_table_grouped(tmp_path: Path) -> None:
    docs = mkdocs_project(tmp_path / "proj")
    result = CliRunner().invoke(main, ["validate", "--docs-dir", str(docs)])
    lines = result.output.splitlines()
    assert "framework: MkDocs (../mkdocs.yml)" in lines
    table = [ln for ln in lines if ln.startswith("        ")]
    assert any("admonition !!!" in ln and " 1 " in ln and "guide.md:5" in ln for ln in table), table
    assert any("code include {* *}" in ln for ln in table) and any(
        "content tab ===" in ln and " 2 " in ln for ln in table
    )
    assert any("1 page(s) are only API stubs" in ln and "api.md" in ln for ln in lines), lines
    doc = json.loads(CliRunner().invoke(main, ["validate", "--docs-dir", str(docs), "--format", "json"]).output)
    assert doc["framework"].startswith("MkDocs") and {"construct", "count", "status", "example"} <= set(
        doc["syntax"][0]
    )


@pytest.mark.slow
def test_fuzz_truncated_and_mutated_pages_never_raise(tmp_path: Path) -> None:
    """Every parser on cut and scrambled real pages: warnings at most, never an exception."""
    rng = random.Random(36)
    for corpus in CORPORA:
        shutil.copytree(FIXTURES / corpus, tmp_path / "f" / corpus)
    noise = [
        "\n",
        "///",
        "////",
        ":::",
        "!!! ",
        '=== "x"',
        "```",
        "{* ",
        "*}",
        '--8<-- "',
        ".. ",
        "::",
        "<Tab",
        "\t",
        "{!",
        "`",
    ]
    for rel in FUZZED:
        page = FIXTURES / rel
        text = page.read_text(encoding="utf-8")
        variants = [text[: rng.randrange(len(text))] for _ in range(6)]
        for _ in range(6):
            chars = list(text)
            for _ in range(40):
                at = rng.randrange(len(chars))
                chars[at : at + rng.randrange(3)] = rng.choice(noise)
            variants.append("".join(chars))
        corpus = rel.split("/")[0]
        scan_root = tmp_path / "f" / CORPORA[corpus]
        from docs_mcp_core.corpus.walk import scan_corpus

        includes = scan_corpus(scan_root).includes
        for variant in variants:
            parsed = parse_one(ParseJob(page.name, variant, "x", _rules()), {}, includes)
            assert isinstance(parsed.chunks, list)


def _rules():
    from docs_mcp_core.corpus.walk import manifest_rules

    return manifest_rules("x.md", {})


def test_tab_labels_that_name_a_language_give_it_to_their_code(tmp_path: Path) -> None:
    """Material tabs, pymdownx tabs and JSX TabItems: a fence without a language gets the one its tab names."""
    from docs_mcp_core.output.derived_fields import code_languages

    docs = tmp_path / "docs"
    write(
        docs,
        "client.md",
        '# Client\n\n## Connect\n\n=== "Python"\n\n    ```\n    client = Client()\n    ```\n\n=== "Go"\n\n'
        '    ```\n    c := acme.New()\n    ```\n\n=== "npm"\n\n    ```\n    npm i acme\n    ```\n\n'
        "//// tab | Python 3.10+\n\n```\nx: int | None = None\n```\n\n////\n",
    )
    write(
        docs,
        "start.mdx",
        '---\ntitle: Start\n---\n\n## Install\n\n<Tabs>\n<TabItem value="ts" label="TypeScript">\n\n```\n'
        'const a = 1\n```\n\n</TabItem>\n<TabItem label="Yarn">\n\n```\nyarn add acme\n```\n\n</TabItem>\n</Tabs>\n',
    )
    chunks = chunks_of(docs)
    connect = chunks["client.md#client/connect"]
    assert "```python\n    client = Client()" in connect["content"] and "```go\n" in connect["content"]
    assert "```\n    npm i acme" in connect["content"]  # npm names no language: left as written
    assert code_languages(connect["content"]) == ["go", "python"]
    assert code_languages(chunks["start.mdx#install"]["content"]) == ["typescript"]
    result = CliRunner().invoke(main, ["validate", "--docs-dir", str(docs)])
    assert any("code language from its tab label" in ln and " 4 " in ln for ln in result.output.splitlines()), (
        result.output
    )


def test_validate_reports_unknown_components_once_per_name(tmp_path: Path) -> None:
    root = tmp_path / "site"
    write(root, "astro.config.mjs", "export default defineConfig({ integrations: [starlight({ title: 'S' })] });\n")
    docs = root / "src" / "content" / "docs"
    page = "---\ntitle: P{0}\n---\n\n## Use\n\n<Preview>\n\nText {0}.\n\n</Preview>\n\n<Aside>Note {0}.</Aside>\n"
    for n in range(3):
        write(docs, f"p{n}.mdx", page.format(n))
    write(docs, "q.mdx", "---\ntitle: Q\n---\n\n<Chart data={{ a: 1 }}>\n\nChart text.\n\n</Chart>\n")
    doc = json.loads(CliRunner().invoke(main, ["validate", "--docs-dir", str(docs), "--format", "json"]).output)
    assert doc["unknown_components"] == [
        {"name": "Preview", "count": 3, "example": "p0.mdx:7"},
        {"name": "Chart", "count": 1, "example": "q.mdx:5"},
    ]
    text = CliRunner().invoke(main, ["validate", "--docs-dir", str(docs)]).output
    notes = [ln for ln in text.splitlines() if "not the docs framework's own" in ln]
    assert len(notes) == 1 and "<Preview> (3, e.g. p0.mdx:7)" in notes[0] and "<Aside>" not in notes[0]
    assert not any(": warning: " in ln and "component" in ln for ln in text.splitlines())


def test_jsx_tags_with_expressions_or_over_several_lines_are_markup(tmp_path: Path) -> None:
    """Docusaurus-style `<Tabs values={[…]}>` over several lines: CommonMark cannot read it as a tag."""
    docs = tmp_path / "docs"
    write(
        docs,
        "install.mdx",
        "# Install\n\n## Pick a package manager\n\n<Tabs\n  groupId=\"pm\"\n  values={[\n    {label: 'npm', value: 'npm'},\n"
        "    {label: 'Yarn', value: 'yarn'},\n  ]}>\n<TabItem\n  value=\"npm\"\n  label=\"npm\">\n\n```bash\nnpm i acme\n```\n\n"
        "</TabItem>\n</Tabs>\n\n<Chart data={{ points: [1, 2] }} height={3}>Sales by month.</Chart>\n\n"
        "    ```jsx\n    <Tabs values={[1]}>\n    ```\n",
    )
    chunk = chunks_of(docs)["install.mdx#install/pick-a-package-manager"]
    text, _, code = chunk["content_text"].partition("Sales by month.")
    assert "values=" not in text and "groupId" not in text and "{label" not in text and "points" not in text
    assert "npm\n\nnpm i acme" in text and code.strip() == "<Tabs values={[1]}>"
    assert "<Tabs values={[1]}>" in chunk["content"]  # code shown in a fence is content, left as written


def test_rst_code_directives_of_sphinx_extensions_keep_their_language(tmp_path: Path) -> None:
    """sphinx-tabs `code-tab`, sphinx-prompt `prompt` and doctest's directives hold code, not reST."""
    from docs_mcp_core.corpus.rst import rst_to_markdown

    text = (
        "Install\n=======\n\n.. tabs::\n\n   .. code-tab:: py\n\n      import acme\n\n   .. code-tab:: js\n\n"
        "      require('acme')\n\n.. prompt:: bash $\n\n   pip install acme\n\n.. testcode::\n\n   acme.run()\n"
    )
    markdown = rst_to_markdown(text, "install.rst", None).markdown
    assert "```py\nimport acme\n```" in markdown and "```js\nrequire('acme')\n```" in markdown
    assert "```bash\npip install acme\n```" in markdown and "```python\nacme.run()\n```" in markdown


def test_a_fence_title_is_text_above_its_code(tmp_path: Path) -> None:
    """Docusaurus and Starlight name a code block's file with `title="…"`, as VitePress does with `[…]`."""
    docs = tmp_path / "docs"
    write(
        docs,
        "config.mdx",
        '# Config\n\n## Set the site\n\n```js title="docusaurus.config.js" {2}\nexport default {\n  url: "x",\n}\n```\n',
    )
    chunk = chunks_of(docs)["config.mdx#config/set-the-site"]
    assert "docusaurus.config.js\nexport default {" in chunk["content_text"]
