"""What a docs framework's config says about the site: published URLs, navigation, pages left out, .txt sources."""

from pathlib import Path

from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.indexing.chunks import analyze_corpus

from ..conftest import write


def urls(docs: Path) -> dict[str, str | None]:
    return {c.chunk_id: c.source_url for c in analyze_corpus(docs, workers=1).chunks}


def test_mkdocs_site_url_directory_urls_and_heading_ids(tmp_path: Path) -> None:
    write(tmp_path, "mkdocs.yml", "site_name: W\nsite_url: https://w.example/docs/\n")
    docs = tmp_path / "docs"
    write(docs, "index.md", "# Home\n\nWelcome.\n\n## Get started\n\nText.\n")
    write(
        docs,
        "guide/install.md",
        "# Install\n\nIntro.\n\n## With pip { #pip }\n\nText.\n\n## Notes\n\nOne.\n\n## Notes\n\nTwo.\n\n"
        "## Über Café: the `fast` way\n\nThree.\n",
    )
    got = urls(docs)
    assert got["index.md#home/get-started"] == "https://w.example/docs/#get-started"
    assert got["guide/install.md#_preamble"] == "https://w.example/docs/guide/install/"
    assert got["guide/install.md#install/with-pip"] == "https://w.example/docs/guide/install/#pip"  # explicit id
    assert got["guide/install.md#install/notes"] == "https://w.example/docs/guide/install/#notes"
    assert got["guide/install.md#install/notes-2"] == "https://w.example/docs/guide/install/#notes_1"
    assert got["guide/install.md#install/ber-caf-the-fast-way"].endswith("#uber-cafe-the-fast-way")
    write(tmp_path, "mkdocs.yml", "site_url: https://w.example/\nuse_directory_urls: false\n")
    assert urls(docs)["guide/install.md#_preamble"] == "https://w.example/guide/install.html"
    write(tmp_path, "mkdocs.yml", "site_name: W\n")  # no site_url: no source_url
    assert set(urls(docs).values()) == {None}


def test_mkdocs_nav_sections_lead_breadcrumbs_and_excluded_pages_are_left_out(tmp_path: Path) -> None:
    write(
        tmp_path,
        "mkdocs.yml",
        "site_name: W\nexclude_docs: |\n  drafts/\n  *.tmp.md\nnav:\n  - Home: index.md\n  - Guides:\n"
        "    - guides/index.md\n    - Setting up: guides/setup.md\n  - '':\n    - api/index.md\n    - api/client.md\n",
    )
    docs = tmp_path / "docs"
    write(docs, "index.md", "# Home\n\nText.\n")
    write(docs, "guides/index.md", "# All guides\n\nText.\n")
    write(docs, "guides/setup.md", "# Setup\n\n## Step one\n\nText.\n")
    write(docs, "api/index.md", "---\ntitle: API reference\n---\n\nText.\n")
    write(docs, "api/client.md", "# Client\n\n## Connect\n\nText.\n")
    write(docs, "drafts/idea.md", "# Idea\n\nText.\n")
    write(docs, "notes.tmp.md", "# Tmp\n\nText.\n")
    chunkset = analyze_corpus(docs, workers=1)
    crumbs = {c.chunk_id: c.breadcrumb for c in chunkset.chunks}
    assert crumbs["guides/setup.md#setup/step-one"] == "guides/setup.md > Guides > Setup > Step one"
    assert crumbs["guides/index.md#_preamble"] == "guides/index.md > Guides > All guides"
    # an untitled section is named after its index page, whose own breadcrumb does not repeat it
    assert crumbs["api/client.md#client/connect"] == "api/client.md > API reference > Client > Connect"
    assert crumbs["api/index.md#_preamble"] == "api/index.md > API reference"
    assert not any(c.filepath.startswith("drafts/") or c.filepath == "notes.tmp.md" for c in chunkset.chunks)
    listing = CliRunner().invoke(main, ["validate", "--docs-dir", str(docs), "--list-files"]).output
    assert "drafts/  (left out of the site by mkdocs.yml exclude_docs 'drafts/')" in listing, listing
    assert "notes.tmp.md  (left out of the site by mkdocs.yml exclude_docs '*.tmp.md')" in listing


def test_docusaurus_urls_slugs_ids_and_drafts(tmp_path: Path) -> None:
    write(
        tmp_path,
        "docusaurus.config.js",
        "module.exports = {\n  title: 'Acme',\n  url: 'https://acme.dev',\n  baseUrl: '/sdk/',\n};\n",
    )
    docs = tmp_path / "docs"
    write(docs, "01-intro.md", "# Intro\n\n## What it does\n\nText.\n")
    write(docs, "guides/auth.mdx", "---\nslug: /authentication\n---\n# Auth\n\n## API keys {#keys}\n\nText.\n")
    write(docs, "guides/errors.md", "---\nid: error-codes\n---\n# Errors\n\nText.\n")
    write(docs, "guides/index.md", "# Guides\n\nText.\n")
    write(docs, "wip.md", "---\ndraft: true\n---\n# Work in progress\n\nText.\n")
    write(docs, "hidden.md", "---\nunlisted: true\n---\n# Hidden\n\nText.\n")
    chunkset = analyze_corpus(docs, workers=1)
    got = {c.chunk_id: c.source_url for c in chunkset.chunks}
    assert got["01-intro.md#intro/what-it-does"] == "https://acme.dev/sdk/docs/intro#what-it-does"
    assert got["guides/auth.mdx#auth/api-keys"] == "https://acme.dev/sdk/docs/authentication#keys"
    assert got["guides/errors.md#_preamble"] == "https://acme.dev/sdk/docs/guides/error-codes"
    assert got["guides/index.md#_preamble"] == "https://acme.dev/sdk/docs/guides/"
    assert got["hidden.md#_preamble"] == "https://acme.dev/sdk/docs/hidden"  # unlisted pages are published
    assert not any(c.filepath == "wip.md" for c in chunkset.chunks)  # drafts are not
    wip = next(f for f in chunkset.files if f.relpath == "wip.md")
    assert wip.chunks == 0 and ("draft page (frontmatter draft: true)", 2) in wip.constructs
    assert not any(d.code == "empty-file" for d in chunkset.diagnostics)


def test_vitepress_hostname_base_clean_urls_and_src_exclude(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(
        docs,
        ".vitepress/config.mts",
        "export default defineConfig({\n  title: 'V',\n  base: '/v/',\n  cleanUrls: true,\n"
        "  srcExclude: ['**/README.md', 'drafts/**'],\n  sitemap: {\n    hostname: 'https://v.dev'\n  },\n})\n",
    )
    write(docs, "guide/index.md", "# Guide\n\n## Getting Started!\n\nText.\n")
    write(docs, "guide/ssr.md", "# SSR\n\n## 2. Build it\n\nText.\n")
    write(docs, "README.md", "# Readme\n\nText.\n")
    write(docs, "drafts/x.md", "# X\n\nText.\n")
    got = urls(docs)
    assert got["guide/index.md#guide/getting-started"] == "https://v.dev/v/guide/#getting-started"
    assert got["guide/ssr.md#ssr/2-build-it"] == "https://v.dev/v/guide/ssr#_2-build-it"
    assert not any(k.startswith(("README.md", "drafts/")) for k in got)
    write(docs, ".vitepress/config.mts", "export default {\n  sitemap: { hostname: 'https://v.dev' },\n}\n")
    assert urls(docs)["guide/ssr.md#_preamble"] == "https://v.dev/guide/ssr.html"  # cleanUrls off


def test_starlight_site_and_a_site_that_is_not_a_plain_value(tmp_path: Path) -> None:
    root = tmp_path / "site"
    write(
        root,
        "astro.config.mjs",
        "export default defineConfig({\n  site: 'https://s.dev',\n  integrations: [starlight({ title: 'S' })],\n});\n",
    )
    docs = root / "src" / "content" / "docs"
    write(docs, "Guides/Getting-Started.mdx", "---\ntitle: Getting started\n---\n\n## Install it\n\nText.\n")
    write(docs, "custom.md", "---\ntitle: Custom\nslug: about/custom\n---\n\nText.\n")
    got = urls(docs)
    assert got["Guides/Getting-Started.mdx#install-it"] == "https://s.dev/guides/getting-started/#install-it"
    assert got["custom.md#_preamble"] == "https://s.dev/about/custom/"
    write(
        root,
        "astro.config.mjs",
        "const site = process.env.SITE || 'https://s.dev';\nexport default defineConfig({\n  site,\n  integrations: [starlight({ title: 'S' })],\n});\n",
    )
    chunkset = analyze_corpus(docs, workers=1)
    assert {c.source_url for c in chunkset.chunks} == {None}
    assert any("'site' is not a plain value" in note for note in chunkset.notes), chunkset.notes
    assert not any(d.severity == "warning" and d.code.startswith("framework") for d in chunkset.diagnostics)


def test_sphinx_baseurl_html_ids_and_txt_sources(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(
        docs,
        "conf.py",
        "project = 'P'\nhtml_baseurl = 'https://p.dev/en/latest/'\n"
        "source_suffix = {'.rst': 'restructuredtext', '.txt': 'restructuredtext'}\nexclude_patterns = ['_build', 'old/*']\n",
    )
    write(docs, "index.rst", "Welcome\n=======\n\nHello.\n\nFirst Steps\n-----------\n\nText.\n")
    write(docs, "user/guide.txt", "User Guide\n==========\n\nUse it.\n\nAdvanced Usage!\n---------------\n\nMore.\n")
    write(docs, "old/legacy.rst", "Legacy\n======\n\nOld.\n")
    write(docs, "notes.txt", "not a page when .txt is not a source suffix\n")
    got = urls(docs)
    assert got["index.rst#welcome/first-steps"] == "https://p.dev/en/latest/index.html#first-steps"
    assert got["user/guide.txt#user-guide/advanced-usage"] == "https://p.dev/en/latest/user/guide.html#advanced-usage"
    assert not any(k.startswith("old/") for k in got)
    write(docs, "conf.py", "project = 'P'\n")
    assert not any(k.endswith(".txt") or ".txt#" in k for k in urls(docs))  # .txt is not a page by default
