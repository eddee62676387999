"""A real docs website on 127.0.0.1 for the URL-source tests: serves a folder (a copy of the
httpx site), with or without validators, and with faults per path; logs every request."""

from __future__ import annotations

import email.utils
import hashlib
import re
import shutil
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from .local_http import LocalServer

HTTPX_SITE = Path(__file__).resolve().parent.parent / "fixtures" / "httpx-site"
PRODUCTION = "https://www.python-httpx.org/"


def copy_site(dest: Path, pages: tuple[str, ...] | None = None) -> Path:
    """A copy of the httpx site; with `pages` (paths like "", "async"), a sitemap naming only those."""
    shutil.copytree(HTTPX_SITE, dest)
    if pages is not None:
        keep = {PRODUCTION + (f"{p}/" if p else "") for p in pages}
        sitemap = dest / "sitemap.xml"
        sitemap.write_text(
            re.sub(
                r"\s*<url>\s*<loc>(.*?)</loc>.*?</url>",
                lambda m: m.group(0) if m.group(1) in keep else "",
                sitemap.read_text(),
                flags=re.S,
            )
        )
    return dest


@dataclass
class Request:
    path: str
    status: int
    if_none_match: str | None
    if_modified_since: str | None
    at: float = 0.0  # time.monotonic() when the request arrived

    @property
    def conditional(self) -> bool:
        return bool(self.if_none_match or self.if_modified_since)


@dataclass
class DocsSite(LocalServer):
    """`validators`: "etag" (ETag and Last-Modified), "last-modified" (like http.server) or "none".

    `faults` maps a path to "500", "429-once", "loop" (redirects to itself), "huge" (6 MiB of HTML)
    or "json" (a JSON document).
    """

    root: Path
    validators: str = "etag"
    faults: dict[str, str] = field(default_factory=dict)
    log: list[Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"{self.origin}/"

    def page_requests(self) -> list[Request]:
        """Requests for pages (not robots.txt, sitemaps or llms.txt)."""
        return [r for r in self.log if not r.path.endswith((".txt", ".xml"))]

    def start(self) -> DocsSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                at = time.monotonic()
                status = site._answer(self)
                with site._lock:
                    site.log.append(
                        Request(
                            self.path,
                            status,
                            self.headers.get("If-None-Match"),
                            self.headers.get("If-Modified-Since"),
                            at,
                        )
                    )

        self._serve(Handler)
        return self

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        body: bytes = b"",
        ctype: str = "text/html",
        headers: dict[str, str] | None = None,
    ) -> int:
        h.send_response(status)
        if status != 304:
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        h.end_headers()
        if status != 304:
            h.wfile.write(body)
        return status

    def _answer(self, h: BaseHTTPRequestHandler) -> int:
        path = h.path.split("?", 1)[0]
        fault = self.faults.get(path)
        if fault == "500":
            return self._send(h, 500, b"boom")
        if fault == "429-once":
            self.faults.pop(path)
            return self._send(h, 429, b"slow down", headers={"Retry-After": "1"})
        if fault == "loop":
            return self._send(h, 302, headers={"Location": path})
        if fault == "huge":
            return self._send(h, 200, b"<html><body><main><p>" + b"x" * (6 * 2**20) + b"</p></main></body></html>")
        if fault == "json":
            return self._send(h, 200, b'{"not": "a page"}', "application/json")
        file = self.root / path.lstrip("/")
        if path.endswith("/"):
            file = file / "index.html"
        if not file.is_file():
            return self._send(h, 404, b"not found")
        body = file.read_bytes()
        ctype = {"xml": "application/xml", "txt": "text/plain", "md": "text/markdown"}.get(file.suffix[1:], "text/html")
        headers: dict[str, str] = {}
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = email.utils.formatdate(int(file.stat().st_mtime), usegmt=True)
        if self.validators == "etag":
            headers["ETag"] = etag
            if h.headers.get("If-None-Match") == etag:
                return self._send(h, 304, headers=headers)
        if self.validators in ("etag", "last-modified"):
            headers["Last-Modified"] = modified
            since = h.headers.get("If-Modified-Since")
            if since and self.validators == "last-modified" and since == modified:
                return self._send(h, 304, headers=headers)
        return self._send(h, 200, body, ctype, headers)
