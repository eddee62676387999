"""Which pages a docs site has: its sitemap (robots.txt's, or /sitemap.xml; indexes followed),
or its llms.txt links, parsed here; link crawling lives in stage.py, where pages are fetched."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass, field
from urllib.parse import urljoin

from ...errors import DocsMcpError
from .fetch import Fetcher
from .urls import Scope, clean, origin_of

MAX_SITEMAPS = 50  # sitemap files read per build (an index and its children)
MAX_SITEMAP_BYTES = 50 * 2**20  # an inflated .xml.gz sitemap (the sitemap protocol's own limit)
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


@dataclass
class Discovery:
    method: str  # "sitemap", "llms.txt", "llms-full.txt" or "crawl"
    urls: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # warnings for the build log (host mapping, caps)
    full_text: bytes | None = None  # llms-full.txt: the whole corpus in one document


def inflate(data: bytes, limit: int) -> tuple[bytes | None, str]:
    """gzip `data` inflated, never holding more than `limit` bytes: (bytes, "") or (None, why not)."""
    out = bytearray()
    while data:
        unpacker = zlib.decompressobj(wbits=31)
        try:
            out += unpacker.decompress(data, limit + 1 - len(out))
        except zlib.error as exc:
            return None, f"not valid gzip ({exc})"
        if len(out) > limit or unpacker.unconsumed_tail:
            return None, f"it inflates to more than {limit:,} bytes"
        data = unpacker.unused_data if unpacker.eof else b""  # a file of several gzip members
    return bytes(out), ""


def _locs(data: bytes, content_type: str = "") -> tuple[str, list[str], str]:
    """(root element, <loc>s, "") of a sitemap, or ("", [], why it is not one)."""
    if data[:2] == b"\x1f\x8b":
        inflated, problem = inflate(data, MAX_SITEMAP_BYTES)
        if inflated is None:
            return "", [], problem
        data = inflated
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:  # an HTML "soft 404" (an error page answered 200) is the usual case
        html = content_type in ("text/html", "application/xhtml+xml") or b"<html" in data[:1024].lower()
        return "", [], "an HTML page, not sitemap XML" if html else f"not valid sitemap XML ({exc})"
    kind = root.tag.rsplit("}", 1)[-1]
    if kind == "html":
        return "", [], "an HTML page, not sitemap XML"
    if kind not in ("urlset", "sitemapindex"):
        return "", [], f"XML whose root is <{kind}>, not <urlset> or <sitemapindex>"
    locs = [el.text.strip() for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "loc" and el.text and el.text.strip()]
    return kind, locs, ""


async def from_sitemap(fetcher: Fetcher, start: str, scope: Scope) -> Discovery:
    """The in-scope pages of the site's sitemaps, or method "crawl" when it has none (then links are crawled).

    The sitemaps robots.txt names are all read; otherwise the first of sitemap.xml beside the
    start page, under the path prefix, or at the site root. Sitemap indexes are followed. An answer
    that is not a sitemap (an HTML "soft 404", a gzip bomb, a redirect off the site) is skipped with
    a note, as a missing one is; so is a sitemap that names no page (an empty <urlset>).
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
    notes: list[str] = []
    found_any = False
    while (queue or (spare and not found_any)) and len(seen) < MAX_SITEMAPS:
        url = queue.pop(0) if queue else spare.pop(0)
        if url in seen:
            continue
        seen.add(url)
        answer = await fetcher.get(url, whole_site=True)
        if answer.kind == "failed":
            raise DocsMcpError(
                f"cannot read the sitemap {url}: {answer.reason}; the staged pages and the published "
                "index are unchanged, try again later"
            )
        if answer.kind == "skipped":
            notes.append(f"{url}: skipped, {answer.reason}")
        if answer.kind != "ok":
            continue
        kind, locs, problem = _locs(answer.body, answer.content_type)
        if problem:
            notes.append(f"{url} is not used as a sitemap: {problem}")
            continue
        found_any = True
        if kind == "sitemapindex":
            queue.extend(scope.on_this_host(loc) for loc in locs)
        else:
            pages.extend(locs)
    if found_any and not pages:  # MkDocs writes <urlset></urlset> when its site_url is not set
        notes.append(f"{', '.join(sorted(seen))}: the sitemap names no pages; crawling links from {start} instead")
    if not pages:
        return Discovery("crawl", notes=notes)
    found = _in_scope("sitemap", pages, scope)
    found.notes[:0] = notes
    return found


def _in_scope(method: str, locs: list[str], scope: Scope) -> Discovery:
    found = Discovery(method)
    foreign: dict[str, int] = {}
    urls: list[str] = []
    for loc in locs:
        url = clean(loc)
        if url is None:  # not an http(s) URL, or a malformed one (`http://[::1`, a port out of range)
            continue
        if not scope.same_site(url):
            origin = origin_of(url) or url
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
            + (
                "try again later"
                if answer.kind == "failed"
                else "drop llms_txt"
                if answer.reason.startswith("redirected")
                else "the site may not publish one: drop llms_txt"
            )
        )
    if full:
        return Discovery(name, [url], full_text=answer.body)
    text = answer.body.decode(answer.charset or "utf-8", errors="replace")
    links = []
    for m in _LINK.finditer(text):
        try:
            links.append(urljoin(answer.final_url or url, m.group(1)))
        except ValueError:  # a malformed link (`http://[::1`) leads nowhere
            continue
    return _in_scope(name, links, scope)
