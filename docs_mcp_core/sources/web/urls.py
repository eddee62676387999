"""Which URLs belong to a corpus, and the stable staged path each page gets."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from ...corpus.walk import bad_name
from ...errors import DocsMcpError

_PAGE_SUFFIXES = (".html", ".htm", ".md", ".markdown", ".txt")
# Links a crawl never follows: assets and downloads, by their extension.
_NOT_PAGES = (
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".svg",
    ".webp",
    ".ico",
    ".css",
    ".js",
    ".json",
    ".xml",
    ".pdf",
    ".zip",
    ".gz",
    ".tar",
    ".whl",
    ".woff",
    ".woff2",
    ".ttf",
    ".mp4",
    ".webm",
    ".map",
    ".rss",
    ".atom",
)


def check_start_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DocsMcpError(
            f"--url {url!r} is not an http(s) URL; give the docs site's start page, e.g. https://docs.example.com/"
        )
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


def clean(url: str) -> str:
    """Without fragment; an empty path is '/'."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


@dataclass(frozen=True)
class Scope:
    """The start URL's origin and the path prefix every page of the corpus lives under."""

    origin: str  # scheme://host[:port]
    prefix: str  # path, ends with "/"

    @classmethod
    def of(cls, start: str, path_prefix: str | None = None) -> Scope:
        parts = urlsplit(start)
        prefix = path_prefix if path_prefix is not None else parts.path[: parts.path.rfind("/") + 1]
        if not prefix.startswith("/"):
            prefix = "/" + prefix
        if not prefix.endswith("/"):
            prefix += "/"
        return cls(f"{parts.scheme}://{parts.netloc}", prefix)

    def host(self) -> str:
        return urlsplit(self.origin).netloc

    def same_site(self, url: str) -> bool:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" == self.origin

    def contains(self, url: str) -> bool:
        parts = urlsplit(url)
        return self.same_site(url) and not parts.query and (parts.path or "/").startswith(self.prefix)

    def on_this_host(self, url: str) -> str:
        """The same path on the start URL's origin (a sitemap naming the production host, crawled from a mirror)."""
        parts = urlsplit(url)
        origin = urlsplit(self.origin)
        return urlunsplit((origin.scheme, origin.netloc, parts.path or "/", parts.query, ""))

    def resolve_link(self, base: str, href: str) -> str | None:
        """An in-scope page URL for a link on `base`, or None (other sites, assets, queries, mailto:...)."""
        target = urljoin(base, href.strip())
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https"):
            return None
        url = urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))
        if not self.contains(url) or parts.path.lower().endswith(_NOT_PAGES):
            return None
        return url

    def staged_path(self, url: str) -> str | None:
        """`advanced/clients/` -> advanced/clients/index.md, `guide.html` -> guide.md; None if it cannot be one."""
        path = urlsplit(url).path or "/"
        if not path.startswith(self.prefix):
            return None
        rel = unquote(path[len(self.prefix) :])
        if rel == "" or rel.endswith("/"):
            rel += "index.md"
        else:
            base, ext = posixpath.splitext(rel)
            rel = (base if ext.lower() in _PAGE_SUFFIXES else rel) + ".md"
        rel = posixpath.normpath(rel)
        if rel.startswith(("../", "/")) or rel == ".." or any(part.startswith(".") for part in rel.split("/")):
            return None
        if bad_name(rel) or rel.endswith((".template.md",)):
            return None
        return rel
