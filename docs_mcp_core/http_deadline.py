"""A total deadline on one HTTP request: connecting, sending, and reading the whole answer.

httpx's timeouts bound each network operation, so a server that sends one byte every few
seconds never trips them and one request can last for days. DeadlineTransport runs the request
and the reading of its whole body under one timer (a cancellation, which interrupts a read in
progress); running out is an httpx2.ReadTimeout, which callers, the openai client included,
treat as any timeout: retried, then reported. Async only: a blocking read cannot be cancelled,
so sync callers run their requests on a LoopThread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx2

T = TypeVar("T")


class AnswerTooLargeError(Exception):
    """The body went over the transport's `max_bytes`: not an httpx error, so that no client retries it."""


class DeadlineTransport(httpx2.AsyncBaseTransport):
    """Each request, body included, gets at most `seconds`; with `max_bytes`, at most that much body."""

    def __init__(
        self, seconds: float, *, max_bytes: int | None = None, inner: httpx2.AsyncBaseTransport | None = None
    ) -> None:
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            async with asyncio.timeout(self.seconds):
                response = await self.inner.handle_async_request(request)
                try:
                    body = await self._body(response)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise httpx2.ReadTimeout(
                f"no complete answer within {self.seconds:g} s (the total time one request may take)", request=request
            ) from None
        # the body as it came (still encoded): the client decodes it as it would have
        return httpx2.Response(
            response.status_code, headers=response.headers, content=body, extensions=response.extensions
        )

    async def _body(self, response: httpx2.Response) -> bytes:
        parts: list[bytes] = []
        size = 0
        async for part in response.aiter_raw():
            size += len(part)
            if self.max_bytes is not None and size > self.max_bytes:
                raise AnswerTooLargeError(f"is larger than {self.max_bytes:,} bytes")
            parts.append(part)
        return b"".join(parts)

    async def aclose(self) -> None:
        await self.inner.aclose()


class LoopThread:
    """An event loop on a daemon thread that sync code hands coroutines to (and waits for).

    One loop for the life of a client, so its connections are kept and reused between calls;
    any number of threads may call `run` at once.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._running()).result()

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def close(self) -> None:
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
