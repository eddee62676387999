"""Stage a docs website: discover its pages, fetch them with conditional requests, and keep one
Markdown file per page (frontmatter: source_url, heading anchors) plus the per-page fetch state.

State (`pages.json` beside the staged folder: layout.page_state) holds, per staged path: URL, final URL after
redirects, ETag, Last-Modified, and hashes of the response body and of the staged file. The
next build sends If-None-Match / If-Modified-Since; a 304 reuses the staged file as is, a 200
with the same body hash counts as unchanged, a page that answers 404/410 or is no longer
discovered is removed. A page that fails (5xx, 429, network) keeps its previous staged version,
with a warning; a failing page that has no previous version fails the staging, so a
half-crawled corpus is never published as complete. A page that cannot be a corpus file (a redirect
out of the site, a path too long for a file name, an invalid docs-mcp comment) is skipped with a
warning naming its URL, and the rest of the site builds.

Every request counts against a budget (request_budget): a site that links endlessly, redirects or
fails everywhere ends the crawl instead of running on.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...corpus.manifest import MANIFEST_NAME
from ...corpus.walk import resolve_file
from ...errors import DocsMcpError
from ...fsutil import read_json, write_atomic, write_json_atomic
from ...output.layout import page_state, staged_listing
from ...progress import NullReporter, Reporter
from ..local import StagedDocs, _remove_strays, listing_version
from .discover import Discovery, from_llms_txt, from_sitemap
from .fetch import Fetched, Fetcher, Politeness
from .html_markdown import MAX_DEPTH, html_to_markdown
from .urls import Scope, check_start_url

STATE_VERSION = 1
CONVERTER_VERSION = "2"  # bump when html_markdown's output changes: every page is then fetched and converted again
# Staged sites are chunked at h2 like any corpus without a manifest, but say so (no per-file warning).
SITE_MANIFEST = b'{\n  "version": "1",\n  "strategy": {"chunk_by": "h2"}\n}\n'
HTML_TYPES = ("text/html", "application/xhtml+xml")
MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
LLMS_CHOICES = ("off", "txt", "full")


def request_budget(max_pages: int) -> int:
    """Requests one staging may send, robots.txt, sitemaps, redirects and retries included."""
    return 4 * max_pages + 100


@dataclass(frozen=True)
class WebSource:
    url: str
    path_prefix: str | None = None  # only pages under this path (default: the start URL's folder)
    max_pages: int = 500
    llms_txt: str = "off"  # off: sitemap, else crawl; txt: llms.txt's links; full: llms-full.txt as one page
    politeness: Politeness = field(default_factory=Politeness)


@dataclass
class PageEvent:
    path: str
    url: str
    event: str  # added, changed, not_modified, unchanged, removed, kept (failed, previous kept), failed, skipped
    status: int = 0
    detail: str = ""


@dataclass
class CrawlReport:
    method: str
    pages: int = 0
    fetched: int = 0  # answered 200 (downloaded)
    not_modified: int = 0  # answered 304
    unchanged_by_hash: int = 0  # answered 200 with the same body as last time
    added: int = 0
    changed: int = 0
    removed: int = 0
    failed: int = 0  # previous version kept
    skipped: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    events: list[PageEvent] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if isinstance(v, int)}

    def summary(self) -> str:
        reqs = ", ".join(f"{n}x {status}" for status, n in sorted(self.requests.items()))
        return (
            f"{self.pages} pages via {self.method}: {self.fetched} fetched, {self.not_modified} not modified (304), "
            f"{self.unchanged_by_hash} unchanged by hash, {self.added} added, {self.changed} changed, "
            f"{self.removed} removed, {self.failed} failed (previous kept), {self.skipped} skipped, "
            f"in {self.seconds:.1f}s; requests: {reqs or 'none'}"
        )


def staged_file(url: str, markdown: str, anchors: list[tuple[str, str]], site_name: str | None = None) -> bytes:
    """The staged Markdown: frontmatter naming the page URL, its heading anchors and the site's name, then the page."""
    front: dict[str, Any] = {"source_url": url}
    if anchors:
        front["source_anchors"] = [[text, anchor] for text, anchor in anchors]
    if site_name:
        front["site_name"] = site_name
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=None)
    return f"---\n{head}---\n{markdown}".encode()


def _strip_frontmatter(text: str) -> str:
    from ...corpus.markdown import split_frontmatter

    return split_frontmatter(text.replace("\r\n", "\n")).body


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _page_bytes(answer: Fetched) -> tuple[bytes | None, list[str], str, str]:
    """(staged file, links, why not, note): HTML converted, Markdown kept, anything else refused."""
    ctype = answer.content_type
    url = answer.final_url or answer.url
    path = url.split("?", 1)[0].lower()
    note = ""
    if ctype in HTML_TYPES or (not ctype and path.endswith((".html", ".htm", "/"))):
        try:
            page = html_to_markdown(answer.body, answer.charset)
        except RecursionError:
            return None, [], "its HTML is nested too deeply to convert", ""
        if not page.markdown.strip().lstrip("#").strip():
            return None, page.links, "no text in the page's main content", ""
        if page.flattened:
            note = (
                f"its HTML is nested more than {MAX_DEPTH} levels deep; {page.flattened} element(s) kept as plain text"
            )
        return staged_file(url, page.markdown, page.anchors, page.site_name), page.links, "", note
    if ctype in MARKDOWN_TYPES or (ctype in ("text/plain", "") and path.endswith((".md", ".markdown", ".txt"))):
        text = _strip_frontmatter(answer.body.decode(answer.charset or "utf-8-sig", errors="replace"))
        return staged_file(url, text if text.endswith("\n") else text + "\n", []), [], "", ""
    return None, [], f"not an HTML or Markdown page (content type {ctype or 'unknown'})", ""


def _page_error(rel: str, data: bytes) -> str:
    """The first validation error the staged page would fail the build with (a bad docs-mcp comment), or ""."""
    _, diagnostics = resolve_file(rel, data.decode(), _sha(data), {})
    errors = [d for d in diagnostics if d.severity == "error"]
    return f"{errors[0].message} (line {errors[0].line} of the staged page)" if errors else ""


def _convert(rel: str, answer: Fetched) -> tuple[bytes | None, list[str], str, str]:
    """_page_bytes, and a page the build would refuse is refused here, by itself."""
    data, links, why, note = _page_bytes(answer)
    if data is not None and (why := _page_error(rel, data)):
        data = None
    return data, links, why, note


def _same_body(answer: Fetched, url: str, prev: dict[str, Any] | None) -> bool:
    """The page answered exactly what was staged from last time, from the same final URL."""
    return (
        prev is not None
        and prev.get("sha256") == _sha(answer.body)
        and prev.get("final_url") == (answer.final_url or url)
    )


class _Crawl:
    def __init__(self, source: WebSource, dest: Path, reporter: Reporter, force: bool = False) -> None:
        self.source = source
        self.force = force  # no validators sent: every page is downloaded again
        self.start = check_start_url(source.url)
        self.scope = Scope.of(self.start, source.path_prefix)
        self.dest = dest
        self.reporter = reporter
        state = read_json(page_state(dest)) or {}
        # Validators only mean something to the site that sent them, and staged pages only to this converter.
        fresh = (
            state.get("version") == STATE_VERSION
            and state.get("converter") == CONVERTER_VERSION
            and state.get("start_url") == self.start
        )
        self.previous: dict[str, dict[str, Any]] = state.get("pages", {}) if fresh else {}
        self.pages: dict[str, dict[str, Any]] = {}  # the new state, by staged path
        self.report = CrawlReport("sitemap")
        self.failed_new: list[str] = []
        self.requested = 0  # page URLs that cost at least one request: a crawl stops at max_pages of them
        self.notes: list[str] = []  # warnings about pages that were staged (deep HTML)
        self.converter = ThreadPoolExecutor(1, thread_name_prefix="docs-mcp-html")  # shut down by run()

    def _usable(self, rel: str) -> dict[str, Any] | None:
        """The previous state of `rel`, if its staged file is still exactly what was staged."""
        prev = self.previous.get(rel)
        if not prev:
            return None
        try:
            return prev if _sha((self.dest / rel).read_bytes()) == prev.get("staged_sha256") else None
        except OSError:
            return None

    async def fetch_page(self, fetcher: Fetcher, url: str) -> list[str]:
        """Fetch one page conditionally and record the outcome; returns its in-scope links."""
        rel, why = self.scope.staged_path(url)
        if rel is None:
            self.report.events.append(PageEvent("", url, "skipped", 0, why))
            return []
        if rel in self.pages:
            return []
        prev = self._usable(rel)
        self.pages[rel] = {}  # claimed: a second URL mapping to the same path is not fetched twice
        validators = prev if prev is not None and not self.force else {}
        answer = await fetcher.get(url, etag=validators.get("etag"), last_modified=validators.get("last_modified"))
        sent = answer.sent
        if answer.kind == "failed" and not sent and prev is None and self.report.method == "crawl":
            del self.pages[rel]  # not requested, the budget being used up: the crawl ends here, as at max_pages
            return []
        if answer.kind == "not_modified" and not validators:  # a 304 to a request without validators: once more
            answer = await fetcher.get(url)
            sent += answer.sent
            if answer.kind == "not_modified":
                answer.kind = "failed" if prev is not None else "skipped"
                answer.reason = "answered 304 Not Modified to a request without validators"
        self.requested += bool(sent)
        converted = None
        if answer.kind == "ok" and not _same_body(answer, url, prev):
            # off the event loop: converting a big page must not hold up the other requests' deadlines
            loop = asyncio.get_running_loop()
            converted = await loop.run_in_executor(self.converter, _convert, rel, answer)
        return self._record(rel, url, answer, prev, converted)

    def _record(
        self,
        rel: str,
        url: str,
        answer: Fetched,
        prev: dict[str, Any] | None,
        converted: tuple[bytes | None, list[str], str, str] | None = None,
    ) -> list[str]:
        report = self.report
        event = PageEvent(rel, url, "", answer.status, answer.reason)
        links: list[str] = []
        entry: dict[str, Any] | None = None
        if answer.kind == "not_modified" and prev is not None:
            report.not_modified += 1
            event.event = "not_modified"
            entry = {
                **prev,
                "etag": answer.etag or prev.get("etag"),
                "last_modified": answer.last_modified or prev.get("last_modified"),
            }
            links = prev.get("links", [])
        elif answer.kind == "ok":
            report.fetched += 1
            final = answer.final_url or url  # inside the scope: the fetcher follows no redirect out of it
            body_sha = _sha(answer.body)
            if _same_body(answer, url, prev):
                assert prev is not None
                report.unchanged_by_hash += 1
                event.event = "unchanged"
                entry = {**prev, "etag": answer.etag, "last_modified": answer.last_modified}
                links = prev.get("links", [])
            else:
                data, links, why, note = converted or _convert(rel, answer)
                if data is None:
                    event.event, event.detail = "skipped", why
                else:
                    if note:
                        self.notes.append(f"{url}: {note}")
                    entry = {
                        "url": url,
                        "final_url": final,
                        "etag": answer.etag,
                        "last_modified": answer.last_modified,
                        "sha256": body_sha,
                        "staged_sha256": _sha(data),
                    }
                    if prev is not None and prev.get("staged_sha256") == entry["staged_sha256"]:
                        # only the page's chrome changed (a new entry in the site navigation, say)
                        report.unchanged_by_hash += 1
                        event.event = "unchanged"
                    else:
                        write_atomic(self.dest / rel, data)
                        event.event = "changed" if rel in self.previous else "added"
        elif answer.kind == "gone":
            event.event = "removed" if rel in self.previous else "skipped"
            event.detail = f"gone ({answer.reason})"
        elif answer.kind == "failed":
            if prev is not None:
                event.event = "kept"
                entry, links = prev, prev.get("links", [])
            else:
                event.event = "failed"
                self.failed_new.append(f"{url}: {answer.reason}")
        else:
            event.event = "skipped"
        if event.event == "skipped" and rel in self.previous:
            event.event = "removed"
        base = (entry or {}).get("final_url") or answer.final_url or url  # relative links resolve after redirects
        found = sorted({u for link in links if (u := self.scope.resolve_link(base, link))})
        if entry is not None:
            entry["links"] = found if self.report.method == "crawl" else []  # a 304 page still leads on
            self.pages[rel] = entry
        else:
            del self.pages[rel]
        report.events.append(event)
        return found

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            self.converter.shutdown(cancel_futures=True)

    async def _run(self) -> None:
        budget = request_budget(self.source.max_pages)
        async with Fetcher(self.source.politeness, self.scope, budget) as fetcher:
            discovery: Discovery
            if self.source.llms_txt != "off":
                discovery = await from_llms_txt(fetcher, self.start, self.scope, self.source.llms_txt == "full")
            else:
                discovery = await from_sitemap(fetcher, self.start, self.scope)
            self.report.method = discovery.method
            for note in discovery.notes:
                self.reporter.warn(note)
            if delay := fetcher.crawl_delay(self.scope.origin):
                self.reporter.info(
                    f"robots.txt asks for {delay:g} s between requests to {self.scope.origin}: "
                    "requests start at least that far apart"
                )
            if discovery.full_text is not None:
                self._full_text(discovery)
            elif discovery.method == "crawl":
                await self._crawl(fetcher)
            else:
                urls = discovery.urls
                if len(urls) > self.source.max_pages:
                    self.reporter.warn(
                        f"the {discovery.method} lists {len(urls)} pages; only the first "
                        f"{self.source.max_pages} are indexed (raise max_pages)"
                    )
                    urls = urls[: self.source.max_pages]
                await asyncio.gather(*(self.fetch_page(fetcher, u) for u in urls))
            if not fetcher.budget_left():
                self.reporter.warn(
                    f"the budget of {budget:,} requests (4 x max_pages + 100) is used up: pages not requested "
                    "keep their previous version, a crawl stops there, a new sitemap page fails the build; "
                    "redirects, retries and failing pages use it up (raising max_pages raises it)"
                )
            self.report.requests = dict(fetcher.requests)

    async def _crawl(self, fetcher: Fetcher) -> None:
        """Breadth first from the start URL: at most max_pages page URLs are requested, whatever they answer
        (a page of links without text counts as much as a page that is staged)."""
        frontier, seen = [self.start], {self.start}
        capped = False
        while frontier:
            room = self.source.max_pages - self.requested
            if room <= 0 or not fetcher.budget_left():
                capped = True
                break
            batch, frontier = frontier[:room], frontier[room:]
            found = await asyncio.gather(*(self.fetch_page(fetcher, u) for u in batch))
            for links in found:
                for link in links:
                    if link not in seen:
                        seen.add(link)
                        frontier.append(link)
        if capped and frontier:
            self.reporter.warn(
                f"the crawl stopped at max_pages={self.source.max_pages} pages requested; "
                f"{len(frontier)} more linked page(s) were not fetched"
            )

    def _full_text(self, discovery: Discovery) -> None:
        url = discovery.urls[0]
        fake = Fetched(url, "ok", 200, url, discovery.full_text or b"", "text/markdown")
        self.report.fetched += 1
        rel = "llms-full.md"
        self.pages[rel] = {}
        self._record(rel, url, fake, self._usable(rel))


def corpus_name(url: str, staged: Path | None = None) -> str:
    """What a website corpus is called in its default description: the name its pages give the site
    (og:site_name or the site part of their <title>, the most common one), else its host name."""
    from urllib.parse import urlsplit

    from ...corpus.site import pages_site_name

    if staged is not None:
        pages = sorted(p.relative_to(staged).as_posix() for p in Path(staged).rglob("*.md"))
        if name := pages_site_name(Path(staged), pages):
            return name
    return urlsplit(url).hostname or "website"


def stage_url(source: WebSource, dest: Path, reporter: Reporter | None = None, force: bool = False) -> StagedDocs:
    """Stage the site into `dest`, conditionally unless `force`; see the module docstring for the rules."""
    reporter = reporter or NullReporter()
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    crawl = _Crawl(source, dest, reporter, force)
    started = time.monotonic()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(crawl.run())
    else:  # called from async code (a notebook, an async orchestrator): crawl on a thread of its own
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, crawl.run()).result()
    report = crawl.report
    report.seconds = time.monotonic() - started
    for rel in sorted(set(crawl.previous) - set(crawl.pages)):
        (dest / rel).unlink(missing_ok=True)
        if not any(e.path == rel and e.event == "removed" for e in report.events):
            report.events.append(
                PageEvent(rel, crawl.previous[rel].get("url", ""), "removed", 0, "no longer discovered")
            )
    write_atomic(dest / MANIFEST_NAME, SITE_MANIFEST)
    keep = set(crawl.pages) | {MANIFEST_NAME}
    _remove_strays(dest, keep)
    report.events.sort(key=lambda e: (e.path, e.url))
    tally = Counter(e.event for e in report.events)
    report.added, report.changed, report.removed = tally["added"], tally["changed"], tally["removed"]
    report.failed, report.skipped = tally["kept"] + tally["failed"], tally["skipped"]
    report.pages = len(crawl.pages)
    write_json_atomic(
        page_state(dest),
        {
            "version": STATE_VERSION,
            "converter": CONVERTER_VERSION,
            "start_url": crawl.start,
            "pages": dict(sorted(crawl.pages.items())),
        },
    )
    for e in report.events:
        if e.event == "kept":
            reporter.warn(f"{e.url}: {e.detail}; kept the previously fetched version of {e.path}")
        elif e.event == "skipped":
            reporter.warn(f"{e.url}: skipped, {e.detail}")
        elif e.event == "removed":
            reporter.info(f"{e.url}: removed ({e.detail or 'gone'}); its chunks leave the index")
    for note in crawl.notes:
        reporter.warn(note)
    if crawl.failed_new:
        raise DocsMcpError(
            f"{len(crawl.failed_new)} page(s) could not be fetched and have no previous version, so the "
            "corpus would be incomplete; nothing was published (run the build again later):\n"
            + "\n".join(f"  {line}" for line in sorted(crawl.failed_new))
        )
    if not crawl.pages:
        raise DocsMcpError(
            f"no pages found at {crawl.start} (looked for a sitemap, then crawled links under "
            f"{crawl.scope.prefix}); check the URL, path_prefix and robots.txt"
        )
    reporter.info(report.summary())
    files = {rel: _sha((dest / rel).read_bytes()) for rel in sorted(keep)}
    write_json_atomic(staged_listing(dest), files)
    changed_events = {e.event: sorted(x.path for x in report.events if x.event == e.event) for e in report.events}
    return StagedDocs(
        path=str(dest),
        files=files,
        bytes=sum((dest / rel).stat().st_size for rel in files),
        data_version=listing_version(files),
        added=changed_events.get("added", []),
        changed=changed_events.get("changed", []),
        removed=changed_events.get("removed", []),
        warnings=[f"{e.url}: {e.event}: {e.detail}" for e in report.events if e.event in ("kept", "skipped")],
        crawl={
            "counts": report.counts(),
            "requests": report.requests,
            "method": report.method,
            "events": [asdict(e) for e in report.events],
        },
    )
