"""Which pages a docs site has: its sitemap (robots.txt's, or /sitemap.xml; indexes followed),
or its llms.txt links, parsed here; link crawling lives in stage.py, where pages are fetched."""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from ...errors import DocsMcpError
from .fetch import Fetcher
from .urls import Scope, clean

MAX_SITEMAPS = 50  # sitemap files read per build (an index and its children)
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


@dataclass
class Discovery:
    method: str  # "sitemap", "llms.txt", "llms-full.txt" or "crawl"
    urls: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # warnings for the build log (host mapping, caps)
    full_text: bytes | None = None  # llms-full.txt: the whole corpus in one document


def _locs(data: bytes, where: str) -> tuple[str, list[str]]:
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise DocsMcpError(
            f"{where} is not valid sitemap XML ({exc}); fix it or set `path_prefix`/crawl instead"
        ) from None
    kind = root.tag.rsplit("}", 1)[-1]
    locs = [el.text.strip() for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "loc" and el.text and el.text.strip()]
    return kind, locs


async def from_sitemap(fetcher: Fetcher, start: str, scope: Scope) -> Discovery | None:
    """The in-scope pages of the site's sitemaps, or None when it has none (then llms.txt or crawling).

    The sitemaps robots.txt names are all read; otherwise the first of sitemap.xml beside the
    start page, under the path prefix, or at the site root. Sitemap indexes are followed.
    """
    await fetcher.allowed(start)  # reads robots.txt, which may name the sitemaps
    named = [scope.on_this_host(c) for c in fetcher.robots_sitemaps(scope.origin)]
    fallbacks = list(
        dict.fromkeys(
            [urljoin(start, "sitemap.xml"), f"{scope.origin}{scope.prefix}sitemap.xml", f"{scope.origin}/sitemap.xml"]
        )
    )
    queue = list(dict.fromkeys(named)) or fallbacks[:1]
    spare = [] if named else fallbacks[1:]
    seen: set[str] = set()
    pages: list[str] = []
    found_any = False
    while (queue or (spare and not found_any)) and len(seen) < MAX_SITEMAPS:
        url = queue.pop(0) if queue else spare.pop(0)
        if url in seen:
            continue
        seen.add(url)
        answer = await fetcher.get(url)
        if answer.kind == "failed":
            raise DocsMcpError(
                f"cannot read the sitemap {url}: {answer.reason}; the staged pages and the published "
                "index are unchanged, try again later"
            )
        if answer.kind != "ok":
            continue
        kind, locs = _locs(answer.body, url)
        found_any = True
        if kind == "sitemapindex":
            queue.extend(scope.on_this_host(loc) for loc in locs)
        else:
            pages.extend(locs)
    if not found_any:
        return None
    return _in_scope("sitemap", pages, scope)


def _in_scope(method: str, locs: list[str], scope: Scope) -> Discovery:
    found = Discovery(method)
    foreign: dict[str, int] = {}
    urls: list[str] = []
    for loc in locs:
        url = clean(loc)
        if not scope.same_site(url):
            origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
            foreign[origin] = foreign.get(origin, 0) + 1
            url = scope.on_this_host(url)
        if scope.contains(url):
            urls.append(url)
    for origin, n in sorted(foreign.items()):
        found.notes.append(f"the {method} names {n} URL(s) on {origin}; fetching the same paths from {scope.origin}")
    outside = len(locs) - len(urls)
    if outside:
        found.notes.append(f"{outside} {method} URL(s) outside {scope.origin}{scope.prefix} are left out")
    found.urls = sorted(set(urls))
    return found


async def from_llms_txt(fetcher: Fetcher, start: str, scope: Scope, full: bool) -> Discovery:
    """llms.txt's links (pages, often Markdown), or llms-full.txt as one document."""
    name = "llms-full.txt" if full else "llms.txt"
    url = f"{scope.origin}{scope.prefix}{name}"
    answer = await fetcher.get(url)
    if answer.kind != "ok":
        raise DocsMcpError(
            f"cannot read {url}: {answer.reason or 'HTTP ' + str(answer.status)}; "
            f"{'try again later' if answer.kind == 'failed' else 'the site may not publish one: drop llms_txt'}"
        )
    if full:
        return Discovery(name, [url], full_text=answer.body)
    text = answer.body.decode("utf-8", errors="replace")
    links = [urljoin(answer.final_url or url, m.group(1)) for m in _LINK.finditer(text)]
    return _in_scope(name, links, scope)
