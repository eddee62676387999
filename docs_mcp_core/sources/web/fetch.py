"""Polite HTTP for crawling: a few requests at a time, a per-host limit, a timeout, retries with
backoff on 429/5xx (honouring Retry-After), a size cap, a clear User-Agent, and robots.txt
(its rules, its sitemaps, and its Crawl-delay / Request-rate as a minimum gap between requests).

Built on httpx2 (the HTTP client the MCP SDK and openai already bring).
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import httpx2

from ... import __version__

USER_AGENT = f"docs-mcp/{__version__} (documentation indexer; conditional requests)"
RETRY_STATUSES = {429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Politeness:
    """How hard a crawl may press a site (docs-mcp.yaml `source:` settings, `build --url` options)."""

    concurrency: int = 4  # requests in flight at once
    per_host: int = 2  # of which at most this many to one host
    timeout: float = 30.0  # seconds per request
    retries: int = 3  # further attempts after a 429, a 5xx or a network error
    backoff: float = 0.5  # seconds before the first retry, doubled each time (Retry-After wins, up to max_wait)
    max_wait: float = 60.0  # also caps a robots.txt Crawl-delay
    max_bytes: int = 5 * 2**20  # a page larger than this is skipped
    max_redirects: int = 10
    user_agent: str = USER_AGENT


@dataclass
class Fetched:
    """One page's answer. kind: ok, not_modified, gone (404/410), skipped (a definite answer that is
    not a page: other 4xx, not HTML, too large, redirect loop) or failed (5xx/429/network after retries)."""

    url: str
    kind: str
    status: int = 0
    final_url: str = ""
    body: bytes = b""
    content_type: str = ""
    etag: str | None = None
    last_modified: str | None = None
    reason: str = ""


@dataclass
class Fetcher:
    politeness: Politeness = field(default_factory=Politeness)
    requests: Counter[str] = field(default_factory=Counter)  # "200", "304", "500", "network error"...
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
            follow_redirects=True,
            max_redirects=p.max_redirects,
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
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            answer = await self.get(f"{origin}/robots.txt", check_robots=False)
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
        origin = f"{parts.scheme}://{parts.netloc}"
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

    async def get(
        self, url: str, *, etag: str | None = None, last_modified: str | None = None, check_robots: bool = True
    ) -> Fetched:
        """GET with the validators given; retries transient failures; never raises for HTTP trouble."""
        if check_robots and not await self.allowed(url):
            return Fetched(url, "skipped", reason="disallowed by robots.txt")
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        p = self.politeness
        result = Fetched(url, "failed", reason="not tried")
        for attempt in range(p.retries + 1):
            wait = p.backoff * 2**attempt
            if check_robots:
                await self._pace(url)
            async with self._all, self._host_limit(url):  # type: ignore[union-attr]
                result, retry_after = await self._once(url, headers)
            if result.kind != "failed" or attempt == p.retries:
                break
            await asyncio.sleep(min(p.max_wait, retry_after if retry_after is not None else wait))
        return result

    async def _once(self, url: str, headers: dict[str, str]) -> tuple[Fetched, float | None]:
        assert self._client is not None
        p = self.politeness
        try:
            async with self._client.stream("GET", url, headers=headers) as response:
                status = response.status_code
                self.requests[str(status)] += 1
                final = str(response.url)
                ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
                base = Fetched(
                    url,
                    "ok",
                    status,
                    final,
                    b"",
                    ctype,
                    response.headers.get("etag"),
                    response.headers.get("last-modified"),
                )
                if status == 304:
                    base.kind = "not_modified"
                    return base, None
                if status in (404, 410):
                    base.kind, base.reason = "gone", f"HTTP {status}"
                    return base, None
                if status in RETRY_STATUSES:
                    base.kind, base.reason = "failed", f"HTTP {status}"
                    return base, _retry_after(response.headers.get("retry-after"))
                if status != 200:
                    base.kind, base.reason = "skipped", f"HTTP {status}"
                    return base, None
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > p.max_bytes:
                    base.kind, base.reason = "skipped", f"larger than {p.max_bytes:,} bytes ({int(declared):,})"
                    return base, None
                body = bytearray()
                async for piece in response.aiter_bytes():
                    body.extend(piece)
                    if len(body) > p.max_bytes:
                        base.kind, base.reason = "skipped", f"larger than {p.max_bytes:,} bytes"
                        return base, None
                base.body = bytes(body)
                return base, None
        except httpx2.TooManyRedirects:
            self.requests["redirect loop"] += 1
            return Fetched(url, "skipped", reason=f"redirect loop (more than {p.max_redirects} redirects)"), None
        except httpx2.TimeoutException:
            self.requests["timeout"] += 1
            return Fetched(url, "failed", reason=f"timed out after {p.timeout:g}s"), None
        except (httpx2.TransportError, httpx2.DecodingError) as exc:
            self.requests["network error"] += 1
            return Fetched(url, "failed", reason=f"network error ({type(exc).__name__}: {exc})"[:200]), None


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
