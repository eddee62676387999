"""Hostile docs websites, through real `docs-mcp build --url` processes against real servers on 127.0.0.1:
redirects never leave the site (no request is ever sent elsewhere), an endless crawl ends, a server that
drips one byte at a time is given up on, decompression is bounded, and one bad page is skipped with a
warning naming its URL while the rest of the site builds. Never a traceback, never a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from .hostile_site import HostileSite, Reply, gzip_bomb, page, redirect, sitemap

BUILD_TIMEOUT = 90  # seconds; a hang fails the test instead of blocking the suite


def docs_mcp(*args: str, timeout: float = BUILD_TIMEOUT) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def build(url: str, out: Path, *extra: str, timeout: float = BUILD_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return docs_mcp(
        "build", "--url", url, "--out", str(out), "--embedding-provider", "none", "--retries", "0", *extra,
        timeout=timeout,
    )  # fmt: skip


def chunks(out: Path) -> list[dict]:
    return json.loads((out / "chunks.json").read_text())


def text_of(out: Path) -> str:
    return "\n".join(c["content"] for c in chunks(out))


def warnings(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("warn: ")]


# ---- redirects (item 2; item 19's redirects to other schemes)


@pytest.mark.slow
def test_redirects_never_leave_the_site_and_nothing_is_requested_elsewhere(tmp_path: Path) -> None:
    with HostileSite() as other, HostileSite() as site:
        other.routes = {
            "/x/": page("Elsewhere", "elsewhere wombat text"),
            "/llms-full.txt": Reply(body=b"# Elsewhere\n\nforeign wombat text\n", headers={"Content-Type": "text/markdown"}),
        }  # fmt: skip
        docs, origin = f"{site.url}docs/", site.origin
        https = f"https://127.0.0.1:{origin.rsplit(':', 1)[1]}/docs/page/"
        refusals = {  # page: (where it redirects, why that is not followed)
            "away": (f"{other.url}x/", f"another site than {origin}"),  # another port of 127.0.0.1
            "up": ("/private/secret/", f"outside {origin}/docs/"),  # this host, outside the path prefix
            "https": (https, f"another site than {origin}"),  # another scheme
        }
        site.routes = {
            "/docs/": page("Home", "the welcome page"),
            "/docs/old/": redirect("/docs/new/", 301),  # inside the prefix: followed
            "/docs/new/": page("New", "the moved page"),
            "/private/secret/": page("Private", "private wombat text"),
            "/docs/llms-full.txt": redirect(f"{other.url}llms-full.txt"),
            **{f"/docs/{name}/": redirect(target) for name, (target, _) in refusals.items()},
            "/sitemap.xml": sitemap([docs, f"{docs}old/", *(f"{docs}{name}/" for name in refusals)]),
        }
        out = tmp_path / "out"
        proc = build(docs, out)
        assert proc.returncode == 0, proc.stderr
        assert other.log == [], other.log  # not one request reached the other host
        assert site.requested("/private/secret/") == 0 and site.requested("/docs/page/") == 0
        for name, (target, why) in refusals.items():
            target = target if "://" in target else origin + target
            assert f"warn: {docs}{name}/: skipped, redirected from {docs}{name}/ to {target}: {why}\n" in proc.stderr
        assert {c["filepath"] for c in chunks(out)} == {"index.md", "old/index.md"}
        assert "the moved page" in text_of(out) and "wombat" not in text_of(out)
        assert next(c for c in chunks(out) if c["filepath"] == "old/index.md")["source_url"] == f"{docs}new/"

        full = build(docs, tmp_path / "full", "--llms-txt", "full")
        assert full.returncode == 1 and other.log == []
        assert (
            f"error: cannot read {docs}llms-full.txt: redirected from {docs}llms-full.txt to "
            f"{other.url}llms-full.txt: another site than {origin}" in full.stderr
        )
        assert not (tmp_path / "full" / "metadata.json").exists()


@pytest.mark.slow
def test_a_redirect_to_another_scheme_or_a_malformed_url_skips_the_page(tmp_path: Path) -> None:
    targets = {
        "file": ("file:///etc/passwd", "a file: URL is never fetched"),
        "ftp": ("ftp://127.0.0.1/pub/", "a ftp: URL is never fetched"),
        "data": ("data:text/html,<main><p>data wombat</p></main>", "a data: URL is never fetched"),
        "js": ("javascript:alert(1)", "a javascript: URL is never fetched"),
        "badport": ("http://127.0.0.1:99999/", "not a valid http(s) URL (Port out of range 0-65535)"),
        "v6": ("http://[::1/", "not a valid http(s) URL (Invalid IPv6 URL)"),
    }
    with HostileSite() as site:
        site.routes = {
            "/": page("Home", "the welcome page"),
            **{f"/{name}/": redirect(target) for name, (target, _) in targets.items()},
            "/sitemap.xml": sitemap([site.url, *(f"{site.url}{name}/" for name in targets)]),
        }
        out = tmp_path / "out"
        proc = build(site.url, out, "--retries", "2")  # a first build: nothing to keep, and still it builds
        assert proc.returncode == 0, proc.stderr
        for name, (target, why) in targets.items():
            url = f"{site.url}{name}/"
            assert f"warn: {url}: skipped, redirected from {url} to {target}: {why}\n" in proc.stderr
            assert site.requested(f"/{name}/") == 1  # a definite answer: not retried
        assert {c["filepath"] for c in chunks(out)} == {"index.md"} and "wombat" not in text_of(out)


# ---- an endless crawl (item 5)


def endless(path: str) -> Reply | None:
    """/hub/N/: navigation only, no main text, linking ten new hubs; the site never runs out of them."""
    if path.startswith("/hub/") and path[5:-1].isdigit():
        n = int(path[5:-1])
        return page(f"Hub {n}", "", tuple(f"/hub/{n * 10 + k}/" for k in range(1, 11)))
    return None


@pytest.mark.slow
def test_pages_without_text_count_towards_max_pages_so_an_endless_crawl_ends(tmp_path: Path) -> None:
    with HostileSite(generate=endless) as site:
        site.routes["/"] = page("Home", "the only page with text", ("/hub/0/",))
        out = tmp_path / "out"
        proc = build(site.url, out, "--max-pages", "20", timeout=60)
        assert proc.returncode == 0, proc.stderr
        pages = [line for line in site.log if line.split(" ")[1] not in ("/robots.txt", "/sitemap.xml")]
        assert len(pages) == 20, len(pages)  # every page requested counts, staged or not
        assert len(site.log) == 22  # and robots.txt and the sitemap that is not there
        assert "the crawl stopped at max_pages=20 pages requested" in proc.stderr
        assert {c["filepath"] for c in chunks(out)} == {"index.md"}


@pytest.mark.slow
def test_redirects_and_retries_count_against_a_request_budget(tmp_path: Path) -> None:
    """A sitemap page that redirects 10 times and then fails, for every page: requests stay within 4 x max_pages + 100."""

    def chain(path: str) -> Reply | None:
        name, _, hop = path.strip("/").partition("/")
        if name.startswith("p") and (hop == "" or hop.isdigit()):
            n = int(hop or 0)
            return redirect(f"/{name}/{n + 1}") if n < 9 else Reply(503, b"down")
        return None

    with HostileSite(generate=chain) as site:
        site.routes["/sitemap.xml"] = sitemap([f"{site.url}p{i}/" for i in range(5)])
        out = tmp_path / "out"
        proc = build(site.url, out, "--max-pages", "5", "--retries", "10", timeout=60)
        assert proc.returncode == 1
        assert len(site.log) == 4 * 5 + 100, len(site.log)
        assert "the budget of 120 requests (4 x max_pages + 100) is used up" in proc.stderr
        assert "could not be fetched and have no previous version" in proc.stderr


# ---- a server that never finishes (item 6)


@pytest.mark.slow
def test_a_dripping_page_misses_its_deadline_and_the_build_ends(tmp_path: Path) -> None:
    with HostileSite() as site:
        site.routes = {
            "/": page("Home", "the welcome page"),
            "/slow/": page("Slow", "the slow page, once fast"),
            "/sitemap.xml": sitemap([site.url, f"{site.url}slow/"]),
        }
        out = tmp_path / "out"
        assert build(site.url, out).returncode == 0
        before = (out / "chunks.json").read_bytes()
        site.routes["/slow/"] = Reply(drip=0.2)  # a byte every 0.2 s: no read timeout ever fires
        kept = build(site.url, out, "--timeout", "2")
        assert kept.returncode == 0, kept.stderr
        assert (
            f"warn: {site.url}slow/: no complete answer within 2s (timeout); kept the previously fetched "
            "version of slow/index.md" in kept.stderr
        )
        assert (out / "chunks.json").read_bytes() == before

        fresh = build(site.url, tmp_path / "fresh", "--timeout", "2")
        assert fresh.returncode == 1
        assert f"{site.url}slow/: no complete answer within 2s (timeout)" in fresh.stderr
        assert not (tmp_path / "fresh" / "metadata.json").exists()
        again = build(site.url, out, "--timeout", "2")  # the lock was let go
        assert again.returncode == 0, again.stderr


# ---- bounded decompression (item 14)


@pytest.mark.slow
def test_a_gzip_bomb_sitemap_is_cut_off_and_the_site_is_crawled(tmp_path: Path) -> None:
    with HostileSite() as site:
        site.routes = {
            "/robots.txt": Reply(
                body=f"User-agent: *\nAllow: /\nSitemap: {site.url}sitemap.xml.gz\n".encode(),
                headers={"Content-Type": "text/plain"},
            ),
            "/sitemap.xml.gz": gzip_bomb(200 * 2**20),
            "/": page("Home", "the welcome page", ("/bomb/",)),
            "/bomb/": gzip_bomb(100 * 2**20, "text/html", encoding="gzip"),
        }
        out = tmp_path / "out"
        proc = build(site.url, out)
        assert proc.returncode == 0, proc.stderr
        assert (
            f"warn: {site.url}sitemap.xml.gz is not used as a sitemap: it inflates to more than 52,428,800 bytes"
            in proc.stderr
        )
        assert f"warn: {site.url}bomb/: skipped, larger than 5,242,880 bytes" in proc.stderr
        assert "via crawl" in proc.stderr and {c["filepath"] for c in chunks(out)} == {"index.md"}


# ---- pages that cannot be converted or staged (items 15 and 19)


@pytest.mark.slow
def test_deeply_nested_html_converts_with_a_warning(tmp_path: Path) -> None:
    deep = "<html><body><main><h1>Deep</h1>" + "<div>" * 400 + "<p>the deep numbat text</p>" + "</div>" * 400
    with HostileSite() as site:
        site.routes = {
            "/": page("Home", "the welcome page"),
            "/deep/": Reply(body=(deep + "</main></body></html>").encode()),
            "/sitemap.xml": sitemap([site.url, f"{site.url}deep/"]),
        }
        out = tmp_path / "out"
        proc = build(site.url, out)
        assert proc.returncode == 0, proc.stderr
        assert (
            f"warn: {site.url}deep/: its HTML is nested more than 100 levels deep; 1 element(s) kept as plain text"
            in proc.stderr
        )
        assert "the deep numbat text" in text_of(out)


@pytest.mark.slow
def test_one_bad_page_is_skipped_with_its_url_and_the_site_builds(tmp_path: Path) -> None:
    long = "a" * 300
    with HostileSite() as site:
        site.routes = {
            "/": page("Home", "the welcome page"),
            f"/{long}/": page("Long", "a page whose URL segment has 300 characters"),
            "/hint.md": Reply(
                body=b'# Hinted\n\n<!-- mcp_chunking_hint: {"chunk_by": "h9"} -->\n\nA remote page with a bad hint.\n',
                headers={"Content-Type": "text/markdown"},
            ),
            "/sitemap.xml": sitemap([site.url, f"{site.url}{long}/", f"{site.url}hint.md"]),
        }
        out = tmp_path / "out"
        proc = build(site.url, out)
        assert proc.returncode == 0, proc.stderr
        lines = warnings(proc)
        assert f"warn: {site.url}{long}/: skipped, its path is too long to stage as a file" in "\n".join(lines)
        assert site.requested(f"/{long}/") == 0
        assert any(
            line.startswith(f"warn: {site.url}hint.md: skipped, mcp_chunking_hint.chunk_by:") for line in lines
        ), lines
        assert "validate --docs-dir" not in proc.stderr
        assert {c["filepath"] for c in chunks(out)} == {"index.md"}


@pytest.mark.slow
def test_bad_start_urls_are_one_error_line(tmp_path: Path) -> None:
    for url, problem in (("http://[::1", "Invalid IPv6 URL"), ("http://127.0.0.1:99999/", "Port out of range")):
        proc = docs_mcp("build", "--url", url, "--out", str(tmp_path / "out"), "--embedding-provider", "none")
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 1 and len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"error: --url {url!r} is not a valid URL ({problem}")
        assert "a port 1-65535" in lines[0]


# ---- HTTP as servers actually speak it (item 20)


@pytest.mark.slow
def test_the_http_charset_is_honoured(tmp_path: Path) -> None:
    text = "Café crème, déjà vu, naïve façade: à la carte"
    with HostileSite() as site:
        site.routes = {
            "/": page("Accents", text, charset="iso-8859-1"),
            "/notes.md": Reply(
                body=f"# Notes\n\n{text}\n".encode("iso-8859-1"),
                headers={"Content-Type": "text/markdown; charset=latin-1"},
            ),
            "/sitemap.xml": sitemap([site.url, f"{site.url}notes.md"]),
        }
        out = tmp_path / "out"
        proc = build(site.url, out)
        assert proc.returncode == 0, proc.stderr
        got = {c["filepath"]: c["content"] for c in chunks(out)}
        assert text in got["index.md"] and text in got["notes.md"], got


@pytest.mark.slow
def test_force_sends_no_validators_so_a_lying_304_cannot_keep_a_page_stale(tmp_path: Path) -> None:
    with HostileSite() as site:
        site.routes = {
            "/": replace(page("Home", "the first version"), lie_304=True),
            "/sitemap.xml": sitemap([site.url]),
        }
        out = tmp_path / "out"
        assert build(site.url, out).returncode == 0
        site.routes["/"] = replace(page("Home", "the second version"), lie_304=True)
        assert build(site.url, out).returncode == 0
        assert "the first version" in text_of(out)  # a conditional rebuild believes the 304
        proc = build(site.url, out, "--force")
        assert proc.returncode == 0, proc.stderr
        assert site.conditional("/") == [False, True, False]
        assert "the second version" in text_of(out)


@pytest.mark.slow
def test_a_sitemap_answered_with_html_or_naming_no_page_falls_back_to_crawling(tmp_path: Path) -> None:
    with HostileSite() as site:
        site.routes = {
            "/": page("Home", "the welcome page", ("/guide/",)),
            "/guide/": page("Guide", "the guide page"),
            "/sitemap.xml": page("Not found", "Sorry, this page does not exist"),  # a "soft 404": 200, HTML
        }
        out = tmp_path / "out"
        proc = build(site.url, out)
        assert proc.returncode == 0, proc.stderr
        assert f"warn: {site.url}sitemap.xml is not used as a sitemap: an HTML page, not sitemap XML" in proc.stderr
        assert "2 pages via crawl" in proc.stderr
        assert {c["filepath"] for c in chunks(out)} == {"index.md", "guide/index.md"}
        site.routes["/sitemap.xml"] = sitemap([])  # what MkDocs writes when site_url is not set
        proc = build(site.url, tmp_path / "empty-sitemap")
        assert proc.returncode == 0, proc.stderr
        assert f"warn: {site.url}sitemap.xml: the sitemap names no pages; crawling links from {site.url} instead" in (
            proc.stderr
        )
        assert "2 pages via crawl" in proc.stderr
