"""Polite HTTP for crawling: a few requests at a time, a per-host limit, a deadline per request, retries
with backoff on 429/5xx (honouring Retry-After), a size cap, a clear User-Agent, and robots.txt
(its rules, its sitemaps, and its Crawl-delay / Request-rate as a minimum gap between requests).

It is also where a hostile site is held in check: redirects are followed by hand, each target checked
before it is requested (Scope.redirect_refusal), every request counts against the build's request
budget, and each attempt, redirects included, must finish within the timeout (a server that drips
one byte at a time never resets it).

Built on httpx2 (the HTTP client the MCP SDK and openai already bring).
"""

from __future__ import annotations

import asyncio
import codecs
import email.utils
import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx2

from ... import __version__
from .urls import Scope, origin_of

USER_AGENT = f"docs-mcp/{__version__} (documentation indexer; conditional requests)"
RETRY_STATUSES = {429, 500, 502, 503, 504}
REDIRECT_STATUSES = {301, 302, 303, 307, 308}


@dataclass(frozen=True)
class Politeness:
    """How hard a crawl may press a site (docs-mcp.yaml `source:` settings, `build --url` options)."""

    concurrency: int = 4  # requests in flight at once
    per_host: int = 2  # of which at most this many to one host
    timeout: float = 30.0  # seconds for one attempt, connecting to the last byte, redirects included
    retries: int = 3  # further attempts after a 429, a 5xx or a network error
    backoff: float = 0.5  # seconds before the first retry, doubled each time (Retry-After wins, up to max_wait)
    max_wait: float = 60.0  # also caps a robots.txt Crawl-delay
    max_bytes: int = 5 * 2**20  # a page larger than this is skipped
    max_redirects: int = 10
    user_agent: str = USER_AGENT


@dataclass
class Fetched:
    """One page's answer. kind: ok, not_modified, gone (404/410), skipped (a definite answer that is
    not a page: other 4xx, not HTML, too large, a redirect loop or a redirect out of the site) or failed
    (5xx/429/network/deadline after retries, or the request budget used up)."""

    url: str
    kind: str
    status: int = 0
    final_url: str = ""
    body: bytes = b""
    content_type: str = ""
    etag: str | None = None
    last_modified: str | None = None
    reason: str = ""
    charset: str | None = None  # the Content-Type's charset parameter
    sent: int = 0  # requests sent for it (redirects and retries included)


@dataclass
class Fetcher:
    """`scope` bounds where redirects may lead; `max_requests` (0: no limit) bounds the requests sent."""

    politeness: Politeness = field(default_factory=Politeness)
    scope: Scope | None = None
    max_requests: int = 0
    requests: Counter[str] = field(default_factory=Counter)  # "200", "304", "500", "network error"...
    sent: int = 0
    _client: httpx2.AsyncClient | None = None
    _all: asyncio.Semaphore | None = None
    _hosts: dict[str, asyncio.Semaphore] = field(default_factory=dict)
    _robots: dict[str, RobotFileParser | None] = field(default_factory=dict)
    _next_start: dict[str, float] = field(default_factory=dict)  # per origin, when the next request may start

    async def __aenter__(self) -> Fetcher:
        p = self.politeness
        self._client = httpx2.AsyncClient(
            headers={"User-Agent": p.user_agent},
            timeout=p.timeout,
            follow_redirects=False,  # by hand, each target checked before it is requested
            limits=httpx2.Limits(max_connections=p.concurrency, max_keepalive_connections=p.concurrency),
        )
        self._all = asyncio.Semaphore(p.concurrency)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()

    def _host_limit(self, url: str) -> asyncio.Semaphore:
        host = urlsplit(url).netloc
        if host not in self._hosts:
            self._hosts[host] = asyncio.Semaphore(self.politeness.per_host)
        return self._hosts[host]

    async def allowed(self, url: str) -> bool:
        """robots.txt of the URL's origin (fetched once) allows our user agent to read it."""
        parts = urlsplit(url)
        origin = origin_of(url) or f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            answer = await self.get(f"{origin}/robots.txt", check_robots=False, whole_site=True)
            parser: RobotFileParser | None = None
            if answer.kind == "ok":
                parser = RobotFileParser()
                parser.parse(_whole_crawl_delays(answer.body.decode("utf-8", errors="replace")).splitlines())
            self._robots[origin] = parser
        parser = self._robots[origin]
        return parser is None or parser.can_fetch(self.politeness.user_agent, url)

    def crawl_delay(self, origin: str) -> float:
        """Seconds robots.txt asks between requests to `origin` (Crawl-delay or Request-rate, whichever
        is longer), capped at max_wait; 0 when it asks for none or was not read yet."""
        parser = self._robots.get(origin)
        if parser is None:
            return 0.0
        agent = self.politeness.user_agent
        delays = [float(parser.crawl_delay(agent) or 0)]
        rate = parser.request_rate(agent)
        if rate is not None and rate.requests > 0:
            delays.append(rate.seconds / rate.requests)
        return min(self.politeness.max_wait, max(0.0, *delays))

    async def _pace(self, url: str) -> None:
        """Wait for this origin's next slot: requests start at least crawl_delay apart."""
        parts = urlsplit(url)
        origin = origin_of(url) or f"{parts.scheme}://{parts.netloc}"
        delay = self.crawl_delay(origin)
        if delay <= 0:
            return
        now = time.monotonic()
        start = max(now, self._next_start.get(origin, now))
        self._next_start[origin] = start + delay  # reserved before sleeping: the event loop runs one task at a time
        if start > now:
            await asyncio.sleep(start - now)

    def robots_sitemaps(self, origin: str) -> list[str]:
        parser = self._robots.get(origin)
        return list(parser.site_maps() or []) if parser is not None else []

    def budget_left(self) -> bool:
        return not self.max_requests or self.sent < self.max_requests

    async def get(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        check_robots: bool = True,
        whole_site: bool = False,
    ) -> Fetched:
        """GET with the validators given; retries transient failures; never raises for HTTP trouble.

        Redirects stay inside the scope: the site's origin and, unless `whole_site` (robots.txt and
        sitemaps, which may live at the root), its path prefix."""
        if check_robots and not await self.allowed(url):
            return Fetched(url, "skipped", reason="disallowed by robots.txt")
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        p = self.politeness
        result = Fetched(url, "failed", reason="not tried")
        sent = 0
        for attempt in range(p.retries + 1):
            wait = p.backoff * 2**attempt
            if check_robots:
                await self._pace(url)
            assert self._all is not None, "a Fetcher fetches inside `async with`"
            async with self._all, self._host_limit(url):
                before = self.sent
                result, retry_after = await self._attempt(url, headers, whole_site)
                sent += self.sent - before
            if result.kind != "failed" or attempt == p.retries or not self.budget_left():
                break
            await asyncio.sleep(min(p.max_wait, retry_after if retry_after is not None else wait))
        result.sent = sent
        return result

    async def _attempt(self, url: str, headers: dict[str, str], whole_site: bool) -> tuple[Fetched, float | None]:
        """One attempt: the request and the redirects it leads to, within the timeout from start to end."""
        p = self.politeness
        current = url
        try:
            async with asyncio.timeout(p.timeout):
                for _ in range(p.max_redirects + 1):
                    result, retry_after, location = await self._once(url, current, headers)
                    if location is None:
                        return result, retry_after
                    target, refusal = self._redirect(current, location, whole_site)
                    if refusal:
                        return Fetched(
                            url, "skipped", result.status, reason=f"redirected from {current} to {target}: {refusal}"
                        ), None
                    current = target
        except TimeoutError:
            self.requests["timeout"] += 1
            return Fetched(url, "failed", reason=f"no complete answer within {p.timeout:g}s (timeout)"), None
        self.requests["redirect loop"] += 1
        return Fetched(url, "skipped", reason=f"redirect loop (more than {p.max_redirects} redirects)"), None

    def _redirect(self, current: str, location: str, whole_site: bool) -> tuple[str, str | None]:
        """(target, why it is not followed or None), decided before anything is sent to it."""
        try:
            target = urljoin(current, location.strip())
        except ValueError as exc:
            return location, f"not a valid http(s) URL ({exc})"
        if self.scope is None:  # no site to stay in (a caller fetching one URL): http(s) only
            scheme = urlsplit(target).scheme.lower()
            return target, None if scheme in ("http", "https") else f"a {scheme or 'schemeless'} URL is never fetched"
        refusal = self.scope.redirect_refusal(target, whole_site)
        robots = None if whole_site else self._robots.get(self.scope.origin)
        if refusal is None and robots is not None and not robots.can_fetch(self.politeness.user_agent, target):
            refusal = "disallowed by robots.txt"
        return target, refusal

    async def _once(self, url: str, current: str, headers: dict[str, str]) -> tuple[Fetched, float | None, str | None]:
        """One request: (answer, Retry-After, the Location of a redirect to follow or None)."""
        assert self._client is not None
        p = self.politeness
        if not self.budget_left():
            return (
                Fetched(
                    url,
                    "failed",
                    reason=f"not requested: the build's budget of {self.max_requests:,} requests is used up",
                ),
                None,
                None,
            )
        self.sent += 1
        try:
            async with self._client.stream("GET", current, headers=headers) as response:
                status = response.status_code
                self.requests[str(status)] += 1
                ctype, charset = _content_type(response.headers.get("content-type", ""))
                base = Fetched(
                    url,
                    "ok",
                    status,
                    current,
                    b"",
                    ctype,
                    response.headers.get("etag"),
                    response.headers.get("last-modified"),
                    charset=charset,
                )
                location = response.headers.get("location")
                if status in REDIRECT_STATUSES and location:
                    return base, None, location
                if status == 304:
                    base.kind = "not_modified"
                    return base, None, None
                if status in (404, 410):
                    base.kind, base.reason = "gone", f"HTTP {status}"
                    return base, None, None
                if status in RETRY_STATUSES:
                    base.kind, base.reason = "failed", f"HTTP {status}"
                    return base, _retry_after(response.headers.get("retry-after")), None
                if status != 200:
                    base.kind, base.reason = "skipped", f"HTTP {status}"
                    return base, None, None
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > p.max_bytes:
                    base.kind, base.reason = "skipped", f"larger than {p.max_bytes:,} bytes ({int(declared):,})"
                    return base, None, None
                body = bytearray()
                async for piece in response.aiter_bytes():  # decoded in pieces of at most 1 MiB: a gzip bomb stops here
                    body.extend(piece)
                    if len(body) > p.max_bytes:
                        base.kind, base.reason = "skipped", f"larger than {p.max_bytes:,} bytes"
                        return base, None, None
                base.body = bytes(body)
                return base, None, None
        except httpx2.TimeoutException:
            self.requests["timeout"] += 1
            return Fetched(url, "failed", reason=f"timed out after {p.timeout:g}s"), None, None
        except httpx2.InvalidURL as exc:
            return Fetched(url, "skipped", reason=f"not a valid URL ({exc})"), None, None
        except (httpx2.TransportError, httpx2.DecodingError) as exc:
            self.requests["network error"] += 1
            return Fetched(url, "failed", reason=f"network error ({type(exc).__name__}: {exc})"[:200]), None, None


def _content_type(header: str) -> tuple[str, str | None]:
    """(media type, charset or None) of a Content-Type header; a charset Python has no codec for is None."""
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("'\"").lower() or None
    if charset is not None:
        try:
            codecs.lookup(charset)
        except LookupError:
            charset = None
    return media.strip().lower(), charset


def _whole_crawl_delays(robots: str) -> str:
    """`Crawl-delay: 0.5` rounded up to 1: Python's robots parser reads whole seconds only and would drop it."""
    return re.sub(
        r"(?im)^(\s*crawl-delay\s*:\s*)(\d*\.\d+)\s*$", lambda m: f"{m.group(1)}{math.ceil(float(m.group(2)))}", robots
    )


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
