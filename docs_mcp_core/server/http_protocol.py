"""uvicorn's HTTP/1.1 protocol with a deadline for each request's header and body, and a bound on the header.

uvicorn times out only idle keep-alive connections. A connection that sends part of a request
header (or nothing at all), or a header and then part of its body, was held for ever, before any
application code, authentication included, saw it; and its httptools parser kept any header it
was sent, however large (h11 stops at 16 KB). Here a request's header must arrive within
`header_timeout` seconds of its first byte (of the connection opening, for the first request),
else the connection is answered 408 and closed; its body within `body_timeout` seconds of the
header, else the connection is closed (the application sees the client leave); and a header over
MAX_HEADER_BYTES is answered 431.

What "a request is complete" means comes from uvicorn itself: it starts a new request cycle once
a header is parsed, and marks the cycle's `more_body` false once the body is in. The subclass
works with either of uvicorn's parsers (httptools when installed, as uvicorn picks it, else h11).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

MAX_HEADER_BYTES = 64 * 1024  # a request line and header fields; h11 is given the same bound


@dataclass(frozen=True)
class ReadDeadlines:
    header_timeout: float
    body_timeout: float


class _Deadlines:
    """The mix-in: see the module docstring. `deadlines` is set on the class made by protocol_class."""

    deadlines: ReadDeadlines
    cycle: Any
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._timer: asyncio.TimerHandle | None = None
        self._header_bytes = 0
        self._arm(self.deadlines.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        between = before is None or before.response_complete  # this data belongs to the next request
        super().data_received(data)  # type: ignore[misc]
        cycle = self.cycle
        if self.transport.is_closing():
            self._disarm()
        elif cycle is not before:  # a header is complete: the body's deadline, if one is on its way
            self._header_bytes = 0
            self._disarm()
            if cycle.more_body and not cycle.response_complete:
                self._arm(self.deadlines.body_timeout)
        elif between:  # part of a header
            self._header_bytes += len(data)
            if self._header_bytes > MAX_HEADER_BYTES:
                self._refuse(
                    431, "Request Header Fields Too Large", f"a request header is at most {MAX_HEADER_BYTES} bytes"
                )
            elif self._timer is None:
                self._arm(self.deadlines.header_timeout)
        elif not cycle.more_body or cycle.response_complete:  # the body is in, or answered without it
            self._disarm()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if getattr(self, "_timer", None) is not None:
            self._timer.cancel()  # type: ignore[union-attr]
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:
            self._refuse(
                408, "Request Timeout", f"the request header did not arrive within {self.deadlines.header_timeout:g} s"
            )
        else:  # the application has the request: it sees the client leave
            self.transport.close()

    def _refuse(self, status: int, reason: str, message: str) -> None:
        body = message.encode()
        self.transport.write(
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
            + body
        )
        self.transport.close()
        self._disarm()


def protocol_class(deadlines: ReadDeadlines) -> type[asyncio.Protocol]:
    """The protocol class for uvicorn's `http=`: uvicorn's own parser choice, with these deadlines."""
    base: type[asyncio.Protocol]
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:  # httptools is optional: uvicorn uses h11 then
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol
    return type(f"Deadline{base.__name__}", (_Deadlines, base), {"deadlines": deadlines})
