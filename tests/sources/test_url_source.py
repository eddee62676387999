"""Docs websites as sources, against a real HTTP server on 127.0.0.1 serving the httpx site
(tests/fixtures/httpx-site, a real MkDocs build whose sitemap names the production host), and the
real CLI: discovery, conditional requests, removal, failures, and source_url in search hits."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main

from ..fakes.docs_site import DocsSite, copy_site

PAGES = 23  # <loc> entries in its sitemap.xml


SMALL = ("", "async", "http2", "logging", "quickstart", "troubleshooting")  # most tests: 6 of its pages


@pytest.fixture
def whole_site_dir(tmp_path: Path) -> Path:
    return copy_site(tmp_path / "site")


@pytest.fixture
def site_dir(tmp_path: Path) -> Path:
    """The site with a sitemap of six pages (the others still served), to keep each build short."""
    return copy_site(tmp_path / "site", SMALL)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str) -> Run:
    """The real `docs-mcp` command, run in this process (a subprocess per build would double the file's time)."""
    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def build(site: DocsSite, out: Path, *extra: str) -> Run:
    return cli("build", "--url", site.url, "--out", str(out), "--embedding-provider", "hash", "--retries", "1", *extra)


def embedded(result: Run) -> int:
    match = re.search(r"done in .*?, (\d+) chunks? embedded;", result.stderr)
    assert match, result.stderr
    return int(match.group(1))


def chunks(out: Path) -> list[dict]:
    return json.loads((out / "chunks.json").read_text())


def table_version(out: Path) -> int:
    return json.loads((out / "metadata.json").read_text())["index"]["version"]


def statuses(requests: list) -> Counter[int]:
    return Counter(r.status for r in requests)


@pytest.mark.slow
def test_first_build_fetches_every_page_and_a_rebuild_gets_only_304s(whole_site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DocsSite(whole_site_dir) as site:
        first = build(site, out)
        assert first.returncode == 0, first.stderr
        pages = site.page_requests()
        assert statuses(pages) == {200: PAGES} and not any(r.conditional for r in pages)
        # the sitemap names https://www.python-httpx.org/...: mapped to this server, said once
        assert first.stderr.count("names 23 URL(s) on https://www.python-httpx.org") == 1
        got = chunks(out)
        assert {c["filepath"] for c in got} >= {"index.md", "quickstart/index.md", "advanced/clients/index.md"}
        assert embedded(first) == len(got)
        by_id = {c["chunk_id"]: c for c in got}
        assert by_id["quickstart/index.md#_preamble"]["source_url"] == f"{site.url}quickstart/"
        assert (
            by_id["quickstart/index.md#quickstart/passing-parameters-in-urls"]["source_url"]
            == f"{site.url}quickstart/#passing-parameters-in-urls"
        )
        assert "```pycon\n>>> import httpx" in by_id["quickstart/index.md#_preamble"]["content"]
        assert not any("Material for MkDocs" in c["content"] for c in got)  # footer and navigation left out
        version = table_version(out)
        before = (out / "chunks.json").read_bytes()

        site.log.clear()
        again = build(site, out)
        assert again.returncode == 0, again.stderr
        pages = site.page_requests()
        assert statuses(pages) == {304: PAGES} and all(r.if_none_match for r in pages)
        assert embedded(again) == 0
        assert f"{PAGES} not modified (304)" in again.stderr and "23 unchanged files reused" in again.stderr
        assert table_version(out) == version and (out / "chunks.json").read_bytes() == before
        assert re.search(r"page events\s+23 not_modified", cli("audit", "--out", str(out)).stdout)

        hits = json.loads(
            cli("search", "--index", str(out), "--json", "--text-only", "Passing Parameters in URLs").stdout
        )
        assert hits["hits"][0]["source_url"] == f"{site.url}quickstart/#passing-parameters-in-urls"


@pytest.mark.slow
def test_an_edited_page_is_fetched_again_and_only_its_changed_chunks_are_embedded(
    site_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        assert build(site, out).returncode == 0
        before = {c["chunk_id"]: c["content"] for c in chunks(out)}
        page = site_dir / "quickstart" / "index.html"
        html = page.read_text()
        page.write_text(
            html.replace("To include URL query parameters in the request", "To add URL query parameters to the request")
        )
        site.log.clear()
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        pages = site.page_requests()
        assert statuses(pages) == {200: 1, 304: len(SMALL) - 1}
        assert [r.path for r in pages if r.status == 200] == ["/quickstart/"]
        after = {c["chunk_id"]: c["content"] for c in chunks(out)}
        changed = [cid for cid in after if before.get(cid) != after[cid]]
        assert changed == ["quickstart/index.md#quickstart/passing-parameters-in-urls"]
        assert embedded(result) == len(changed) == 1
        assert "1 fetched, 5 not modified (304)" in result.stderr and "1 changed" in result.stderr


@pytest.mark.slow
def test_removed_pages_leave_the_index(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        assert build(site, out).returncode == 0
        assert any(c["filepath"] == "http2/index.md" for c in chunks(out))
        # http2 answers 404 from now on; logging is no longer in the sitemap
        shutil.rmtree(site_dir / "http2")
        sitemap = site_dir / "sitemap.xml"
        sitemap.write_text(
            re.sub(
                r"\s*<url>\s*<loc>https://www.python-httpx.org/logging/</loc>.*?</url>",
                "",
                sitemap.read_text(),
                flags=re.S,
            )
        )
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        files = {c["filepath"] for c in chunks(out)}
        assert "http2/index.md" not in files and "logging/index.md" not in files
        assert f"{site.url}http2/: removed (gone (HTTP 404))" in result.stderr
        assert f"{site.url}logging/: removed (no longer discovered)" in result.stderr
        assert not (out / ".docs-mcp" / "staged" / "docs" / "http2").exists()
        hits = json.loads(cli("search", "--index", str(out), "--json", "--text-only", "HTTP/2 support").stdout)["hits"]
        assert not any(h["filepath"] in ("http2/index.md", "logging/index.md") for h in hits)
        meta = json.loads((out / "metadata.json").read_text())
        assert meta["index"]["rows"] == len(chunks(out))


@pytest.mark.slow
def test_a_server_without_validators_falls_back_to_content_hashes(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DocsSite(site_dir, validators="none") as site:
        assert build(site, out).returncode == 0
        site.log.clear()
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        pages = site.page_requests()
        assert statuses(pages) == {200: len(SMALL)} and not any(r.conditional for r in pages)
        assert "6 unchanged by hash" in result.stderr and "6 unchanged files reused" in result.stderr
        assert embedded(result) == 0


@pytest.mark.slow
def test_a_server_with_last_modified_only_gets_if_modified_since(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DocsSite(site_dir, validators="last-modified") as site:
        assert build(site, out).returncode == 0
        site.log.clear()
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        pages = site.page_requests()
        assert statuses(pages) == {304: len(SMALL)}
        assert all(r.if_modified_since and not r.if_none_match for r in pages)


@pytest.mark.slow
def test_a_500_keeps_the_previous_page_and_a_first_build_with_one_fails(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        assert build(site, out).returncode == 0
        before = (out / "chunks.json").read_bytes()
        version = table_version(out)
        page = site_dir / "async" / "index.html"
        page.write_text(page.read_text().replace("<h1", "<h1 data-edited='1'"))  # even if it changed meanwhile
        site.faults["/async/"] = "500"
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        lines = [line for line in result.stderr.splitlines() if "/async/" in line]
        assert lines == [f"warn: {site.url}async/: HTTP 500; kept the previously fetched version of async/index.md"]
        assert "1 failed (previous kept)" in result.stderr
        assert (out / "chunks.json").read_bytes() == before and table_version(out) == version
        assert [r.status for r in site.log if r.path == "/async/"][-2:] == [500, 500]  # one retry

        fresh = tmp_path / "fresh"
        first = build(site, fresh)
        assert first.returncode == 1
        assert "\nerror: 1 page(s) could not be fetched and have no previous version" in first.stderr
        assert f"{site.url}async/: HTTP 500" in first.stderr and "Traceback" not in first.stderr
        assert not (fresh / "metadata.json").exists()


@pytest.mark.slow
def test_redirect_loop_huge_page_and_non_html_are_skipped_with_clear_messages(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    sitemap = site_dir / "sitemap.xml"
    extra = "".join(f"<url><loc>https://www.python-httpx.org/{p}/</loc></url>" for p in ("loop", "huge", "data"))
    sitemap.write_text(sitemap.read_text().replace("</urlset>", extra + "</urlset>"))
    with DocsSite(site_dir, faults={"/loop/": "loop", "/huge/": "huge", "/data/": "json"}) as site:
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        assert f"warn: {site.url}loop/: skipped, redirect loop (more than 10 redirects)" in result.stderr
        assert f"warn: {site.url}huge/: skipped, larger than 5,242,880 bytes" in result.stderr
        assert (
            f"warn: {site.url}data/: skipped, not an HTML or Markdown page (content type application/json)"
            in result.stderr
        )
        assert "3 skipped" in result.stderr
        assert {c["filepath"].split("/")[0] for c in chunks(out)}.isdisjoint({"loop", "huge", "data"})


@pytest.mark.slow
def test_crawl_without_a_sitemap_follows_links_within_the_cap_and_honours_robots(
    whole_site_dir: Path, tmp_path: Path
) -> None:
    (whole_site_dir / "sitemap.xml").unlink()
    (whole_site_dir / "robots.txt").write_text("User-agent: *\nDisallow: /advanced/\n")
    out = tmp_path / "out"
    with DocsSite(whole_site_dir) as site:
        result = build(site, out, "--max-pages", "6")
        assert result.returncode == 0, result.stderr
        files = {c["filepath"] for c in chunks(out)}
        assert len(files) == 6 and "index.md" in files
        assert not any(f.startswith("advanced/") for f in files)
        assert not any(r.path.startswith("/advanced/") for r in site.log)
        assert "the crawl stopped at max_pages=6" in result.stderr and "via crawl" in result.stderr
        site.log.clear()  # a rebuild crawls on through the links remembered from pages that answer 304
        again = build(site, out, "--max-pages", "6")
        assert statuses(site.page_requests()) == {304: 6}
        assert {c["filepath"] for c in chunks(out)} == files and embedded(again) == 0


@pytest.mark.slow
def test_robots_crawl_delay_spaces_the_requests_to_the_site(tmp_path: Path) -> None:
    site_dir = copy_site(tmp_path / "site", ("", "async"))
    (site_dir / "robots.txt").write_text("User-agent: *\nCrawl-delay: 0.4\nAllow: /\n")
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        assert f"robots.txt asks for 1 s between requests to {site.origin}" in result.stderr
        paced = sorted(r.at for r in site.log if r.path != "/robots.txt")
        assert len(paced) == 3  # the sitemap and two pages
        gaps = [b - a for a, b in zip(paced, paced[1:])]
        assert min(gaps) >= 0.9, gaps  # 0.4 rounded up to whole seconds: a politeness floor, not a speed figure


def test_llms_txt_links_are_the_pages(site_dir: Path, tmp_path: Path) -> None:
    (site_dir / "llms.txt").write_text(
        "# HTTPX\n\n- [Quickstart](/guide/quickstart.md): first steps\n"
        "- [Clients](https://www.python-httpx.org/guide/clients.md)\n"
    )
    (site_dir / "guide").mkdir()
    (site_dir / "guide" / "quickstart.md").write_text("# Quickstart\n\n## Install\n\npip install httpx\n")
    (site_dir / "guide" / "clients.md").write_text("---\ntitle: x\n---\n# Clients\n\nUse a Client.\n")
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        result = build(site, out, "--llms-txt", "txt")
        assert result.returncode == 0, result.stderr
        got = {c["chunk_id"]: c for c in chunks(out)}
        assert set(got) == {
            "guide/quickstart.md#_preamble",
            "guide/quickstart.md#quickstart/install",
            "guide/clients.md#_preamble",
        }
        assert got["guide/clients.md#_preamble"]["source_url"] == f"{site.url}guide/clients.md"


@pytest.mark.slow
def test_429_is_retried_after_retry_after(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DocsSite(site_dir, faults={"/troubleshooting/": "429-once"}) as site:
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        assert [r.status for r in site.log if r.path == "/troubleshooting/"] == [429, 200]
        assert any(c["filepath"] == "troubleshooting/index.md" for c in chunks(out))


def test_bad_url_and_both_sources_are_one_clear_error(tmp_path: Path) -> None:
    result = cli("build", "--url", "ftp://example.com/", "--out", str(tmp_path / "o"))
    assert result.returncode == 1 and result.stderr.startswith(
        "error: --url 'ftp://example.com/' is not an http(s) URL"
    )
    result = cli("build", "--url", "http://127.0.0.1:9/", "--docs-dir", str(tmp_path), "--out", str(tmp_path / "o"))
    assert result.returncode == 1 and "give exactly one of --docs-dir" in result.stderr


def test_validate_url_checks_the_pages_as_they_would_be_staged(site_dir: Path) -> None:
    with DocsSite(site_dir) as site:
        result = cli("validate", "--url", site.url, "--max-pages", "3")
        assert result.returncode == 0, result.stderr
        assert "3 pages via sitemap" in result.stderr


@pytest.mark.slow
def test_a_page_whose_chrome_alone_changed_counts_as_unchanged(site_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        assert build(site, out).returncode == 0
        page = site_dir / "async" / "index.html"
        page.write_text(page.read_text().replace("Material for MkDocs", "Material for MkDocs (new footer)"))
        site.log.clear()
        result = build(site, out)
        assert statuses(site.page_requests()) == {200: 1, 304: len(SMALL) - 1}
        assert "1 unchanged by hash" in result.stderr and "0 changed" in result.stderr
        assert "6 unchanged files reused" in result.stderr and embedded(result) == 0


@pytest.mark.slow
@pytest.mark.anyio
async def test_mcp_search_and_get_doc_cite_the_page(site_dir: Path, tmp_path: Path) -> None:
    from mcp import Client

    from docs_mcp_core.server import create_server

    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        assert build(site, out).returncode == 0
        url = site.url
    async with Client(create_server(out).server) as client:
        result = await client.call_tool("search_docs", {"query": "Passing Parameters in URLs", "limit": 1})
        hit = json.loads(result.content[0].text)["hits"][0]
        assert hit["source_url"] == f"{url}quickstart/#passing-parameters-in-urls"
        doc = (await client.call_tool("get_doc", {"chunk_id": hit["chunk_id"]})).content[0].text
        assert doc.endswith(f"\n\nSource: {url}quickstart/#passing-parameters-in-urls")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
def test_sitemap_index_named_in_robots_txt(site_dir: Path, tmp_path: Path) -> None:
    (site_dir / "sitemap.xml").unlink()
    (site_dir / "maps").mkdir()
    (site_dir / "maps" / "index.xml").write_text(
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>https://www.python-httpx.org/maps/a.xml</loc></sitemap></sitemapindex>"
    )
    (site_dir / "maps" / "a.xml").write_text(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://www.python-httpx.org/async/</loc></url>"
        "<url><loc>https://www.python-httpx.org/http2/</loc></url></urlset>"
    )
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        (site_dir / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {site.url}maps/index.xml\n")
        result = build(site, out)
        assert result.returncode == 0, result.stderr
        assert {c["filepath"] for c in chunks(out)} == {"async/index.md", "http2/index.md"}
        assert "2 pages via sitemap" in result.stderr


def test_llms_full_txt_is_one_page(site_dir: Path, tmp_path: Path) -> None:
    (site_dir / "llms-full.txt").write_text("# HTTPX\n\n## Install\n\npip install httpx\n\n## Use\n\nhttpx.get(url)\n")
    out = tmp_path / "out"
    with DocsSite(site_dir) as site:
        result = build(site, out, "--llms-txt", "full")
        assert result.returncode == 0, result.stderr
        got = {c["chunk_id"]: c["source_url"] for c in chunks(out)}
        assert got == {
            "llms-full.md#_preamble": f"{site.url}llms-full.txt",
            "llms-full.md#httpx/install": f"{site.url}llms-full.txt",
            "llms-full.md#httpx/use": f"{site.url}llms-full.txt",
        }


@pytest.mark.slow
def test_a_website_is_described_by_the_name_its_pages_give_the_site(site_dir: Path, tmp_path: Path) -> None:
    """`<title>Page - HTTPX</title>` names the site HTTPX; an og:site_name, where pages have one, wins."""
    with DocsSite(site_dir) as site:
        assert build(site, tmp_path / "out").returncode == 0
        described = json.loads((tmp_path / "out" / "metadata.json").read_text())["corpus_description"]
        assert described.startswith("HTTPX documentation"), described
        assert "127.0.0.1" not in described  # the host is the name only when the pages give none
    for page in site_dir.rglob("index.html"):
        html = page.read_text(encoding="utf-8")
        page.write_text(html.replace("<head>", '<head><meta property="og:site_name" content="HTTPX Guide">', 1))
    with DocsSite(site_dir) as site:
        assert build(site, tmp_path / "out2").returncode == 0
        described = json.loads((tmp_path / "out2" / "metadata.json").read_text())["corpus_description"]
        assert described.startswith("HTTPX Guide documentation"), described
