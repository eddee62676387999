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


MAX_SEGMENT_BYTES = 200  # a staged file or folder name (file systems allow 255, the atomic write's temp name adds 14)
MAX_PATH_BYTES = 1000  # a staged path, relative to the staged folder
_DEFAULT_PORTS = {"http": 80, "https": 443}
ACCEPTED = "an http:// or https:// URL with a host name, an IPv4 address or an [IPv6] address, and a port 1-65535"


def url_problem(url: str) -> str | None:
    """Why `url` is not a fetchable http(s) URL (malformed brackets, a port out of range...), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return str(exc)
    if any(c.isspace() or not c.isprintable() for c in parts.netloc):
        return "its host contains a space or a control character"
    if parts.scheme.lower() not in _DEFAULT_PORTS:
        return f"the scheme is {parts.scheme.lower() or 'missing'}"
    if not parts.hostname:
        return "there is no host"
    if port == 0:
        return "port 0 cannot be connected to"
    return None


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]` of an http(s) URL, lowercased and without the scheme's default port;
    None when it is not a valid http(s) URL. Two URLs are on the same site when these are equal."""
    if url_problem(url):
        return None
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = "" if parts.port in (None, _DEFAULT_PORTS[scheme]) else f":{parts.port}"
    return f"{scheme}://{host}{port}"


def check_start_url(url: str) -> str:
    """The start URL normalized (host lowercased, default port dropped, no query or fragment), or one clear error."""
    url = url.strip()
    problem = url_problem(url)
    if problem:
        what = "an http(s) URL" if problem.startswith("the scheme") else f"a valid URL ({problem})"
        raise DocsMcpError(
            f"--url {url!r} is not {what}; give the docs site's start page, e.g. https://docs.example.com/ ({ACCEPTED})"
        )
    origin = origin_of(url) or ""
    return f"{origin}{urlsplit(url).path or '/'}"


def clean(url: str) -> str | None:
    """Without fragment, host lowercased, an empty path '/'; None when it is not a valid http(s) URL."""
    origin = origin_of(url)
    if origin is None:
        return None
    parts = urlsplit(url)
    return origin + urlunsplit(("", "", parts.path or "/", parts.query, ""))


@dataclass(frozen=True)
class Scope:
    """The start URL's origin and the path prefix every page of the corpus lives under."""

    origin: str  # scheme://host[:port], as origin_of gives it
    prefix: str  # path, ends with "/"

    @classmethod
    def of(cls, start: str, path_prefix: str | None = None) -> Scope:
        parts = urlsplit(start)
        prefix = path_prefix if path_prefix is not None else parts.path[: parts.path.rfind("/") + 1]
        if not prefix.startswith("/"):
            prefix = "/" + prefix
        if not prefix.endswith("/"):
            prefix += "/"
        return cls(origin_of(start) or f"{parts.scheme}://{parts.netloc}", prefix)

    def host(self) -> str:
        return urlsplit(self.origin).netloc

    def same_site(self, url: str) -> bool:
        return origin_of(url) == self.origin

    def contains(self, url: str) -> bool:
        parts = urlsplit(url)
        return self.same_site(url) and not parts.query and (parts.path or "/").startswith(self.prefix)

    def redirect_refusal(self, target: str, whole_site: bool) -> str | None:
        """Why a redirect to `target` is not followed, or None: it must stay on the start URL's
        scheme, host and port and, unless `whole_site` (robots.txt, sitemaps at the root), inside the prefix."""
        if problem := url_problem(target):
            scheme = problem.removeprefix("the scheme is ")
            if scheme != problem and scheme != "missing":
                return f"a {scheme.lower()}: URL is never fetched"
            return f"not a valid http(s) URL ({problem})"
        if not self.same_site(target):
            return f"another site than {self.origin}"
        if not whole_site and not (urlsplit(target).path or "/").startswith(self.prefix):
            return f"outside {self.origin}{self.prefix}"
        return None

    def on_this_host(self, url: str) -> str:
        """The same path on the start URL's origin (a sitemap naming the production host, crawled from a mirror)."""
        parts = urlsplit(url)
        return self.origin + urlunsplit(("", "", parts.path or "/", parts.query, ""))

    def resolve_link(self, base: str, href: str) -> str | None:
        """An in-scope page URL for a link on `base`, or None (other sites, assets, queries, mailto:, malformed)."""
        try:
            target = clean(urljoin(base, href.strip()))
        except ValueError:  # `http://[::1` and the like
            return None
        if target is None or not self.contains(target) or urlsplit(target).path.lower().endswith(_NOT_PAGES):
            return None
        return target

    def staged_path(self, url: str) -> tuple[str | None, str]:
        """(staged path, "") or (None, why not): `advanced/clients/` -> advanced/clients/index.md,
        `guide.html` -> guide.md."""
        path = urlsplit(url).path or "/"
        if not path.startswith(self.prefix):
            return None, f"outside {self.origin}{self.prefix}"
        rel = unquote(path[len(self.prefix) :])
        if rel == "" or rel.endswith("/"):
            rel += "index.md"
        else:
            base, ext = posixpath.splitext(rel)
            rel = (base if ext.lower() in _PAGE_SUFFIXES else rel) + ".md"
        rel = posixpath.normpath(rel)
        if rel.startswith(("../", "/")) or rel == ".." or any(part.startswith(".") for part in rel.split("/")):
            return None, "its path has a segment starting with '.'"
        if rel.endswith(".template.md"):
            return None, "its staged name would end in .template.md, which is a prompt template"
        if problem := bad_name(rel):
            return None, f"its staged name cannot be indexed ({problem})"
        longest = max(len(part.encode()) for part in rel.split("/"))
        if longest > MAX_SEGMENT_BYTES or len(rel.encode()) > MAX_PATH_BYTES:
            return None, (
                f"its path is too long to stage as a file (a segment of {longest} bytes; at most "
                f"{MAX_SEGMENT_BYTES} per segment and {MAX_PATH_BYTES} in all)"
            )
        return rel, ""
