"""A hostile docs website on 127.0.0.1 for the website-source reliability tests: each path answers with a
scripted reply (a page, a redirect anywhere, a body dripped one byte at a time forever, a gzip bomb, a
lying 304), unknown paths may be generated on the fly (an endless site), and every request is logged so a
test can assert what was never asked for."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from http.server import BaseHTTPRequestHandler

from ..fakes.local_http import LocalServer


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    drip: float = 0.0  # > 0: the body is never finished, one byte sent every `drip` seconds
    lie_304: bool = False  # answer 304 to any request that carries a validator, whatever changed


def page(title: str, text: str = "", links: tuple[str, ...] = (), charset: str = "utf-8") -> Reply:
    """A docs page: its text in <main> (none: a page of navigation only) and links in a <nav>."""
    nav = "".join(f'<a href="{escape(href)}">{escape(href)}</a>' for href in links)
    main = f"<main><h1>{escape(title)}</h1><p>{escape(text)}</p></main>" if text else ""
    head = f"<head><title>{escape(title)}</title></head>" if text else ""  # no text: a page that is all chrome
    html = f"<html>{head}<body><nav>{nav}</nav>{main}</body></html>"
    return Reply(
        body=html.encode(charset),
        headers={"Content-Type": f"text/html; charset={charset}", "ETag": f'"{zlib.crc32(html.encode())}"'},
    )


def redirect(location: str, status: int = 302) -> Reply:
    return Reply(status, headers={"Location": location})


def sitemap(urls: list[str]) -> Reply:
    locs = "".join(f"<url><loc>{escape(u)}</loc></url>" for u in urls)
    body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    return Reply(body=body.encode(), headers={"Content-Type": "application/xml"})


def gzip_bomb(inflated: int, content_type: str = "application/x-gzip", encoding: str | None = None) -> Reply:
    """`inflated` bytes of spaces in a few hundred KB of gzip: as a .gz file, or as a Content-Encoding."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * 2**20
    parts = [packer.compress(block) for _ in range(inflated // len(block))]
    body = b"".join(parts) + packer.flush()
    headers = {"Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    return Reply(body=body, headers=headers)


@dataclass
class HostileSite(LocalServer):
    """`routes` maps a path (query included) to its reply; `generate` answers the paths it knows, else 404."""

    routes: dict[str, Reply] = field(default_factory=dict)
    generate: Callable[[str], Reply | None] | None = None
    log: list[str] = field(default_factory=list)  # "METHOD path If-None-Match If-Modified-Since" per request
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"{self.origin}/"

    def requested(self, path: str) -> int:
        return sum(1 for line in self.log if line.split(" ")[1] == path)

    def conditional(self, path: str) -> list[bool]:
        """For each request of `path`: whether it carried If-None-Match or If-Modified-Since."""
        return [line.split(" ")[2:] != ["-", "-"] for line in self.log if line.split(" ")[1] == path]

    def start(self) -> HostileSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                etag, since = self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
                with site._lock:
                    site.log.append(f"GET {self.path} {etag or '-'} {since or '-'}")
                reply = site.routes.get(self.path) or (site.generate and site.generate(self.path))
                site._answer(self, reply or Reply(404, b"not found"), bool(etag or since))

        self._serve(Handler)
        return self

    def stop(self) -> None:
        self._stopping.set()
        super().stop()

    def _answer(self, h: BaseHTTPRequestHandler, reply: Reply, conditional: bool) -> None:
        if reply.lie_304 and conditional:
            h.send_response(304)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_response(reply.status)
        for key, value in reply.headers.items():
            h.send_header(key, value)
        if reply.drip > 0:  # a server that never finishes: no length, no end
            h.send_header("Connection", "close")
            h.end_headers()
            self._drip(h, reply.drip)
            return
        h.send_header("Content-Length", str(len(reply.body)))
        h.end_headers()
        h.wfile.write(reply.body)

    def _drip(self, h: BaseHTTPRequestHandler, every: float) -> None:
        try:
            h.wfile.write(b"<html><body><main><p>")
            h.wfile.flush()
            while not self._stopping.wait(every):
                h.wfile.write(b"x")
                h.wfile.flush()
        except OSError:  # the client gave up: what the test wants
            pass
        h.close_connection = True
