"""stdin and stdout as asyncio pipes, for the MCP SDK's stdio transport.

The SDK reads each line of stdin and writes and flushes each message in a worker thread
(`anyio.wrap_file`): three hand-offs between threads per request, each waking the event loop
through its self-pipe. On a pipe or a socket (how MCP clients start a server) the event loop can
read and write the descriptors itself. Anything else (a regular file, a terminal, Windows) keeps
the SDK's threads.

Like the SDK, the descriptors are claimed while serving: fd 0 reads the null device and fd 1
writes to stderr, so a stray print or a child process cannot corrupt the protocol; both are
restored on exit, and so is blocking mode.

A message (one line) is at most MAX_MESSAGE_BYTES, as a request body over HTTP: a longer line is
read past without being kept, answered with a JSON-RPC error and logged, and the server goes on.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

MAX_MESSAGE_BYTES = 4 * 2**20  # the MCP SDK's limit on an HTTP request body (DEFAULT_MAX_REQUEST_BODY_SIZE)
CHUNK = 2**16  # read at a time; the reader stops reading the pipe while twice this is waiting
EDGE = 1024  # bytes kept of each end of a refused line, to find its request id
INVALID_REQUEST = -32600
# The request id of a refused line: a top-level "id" before any nested value (as the Python SDK
# writes requests), or as the last member (as the TypeScript SDK does).
_ID_FIRST = re.compile(
    rb'^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,256}")'
)
_ID_LAST = re.compile(rb',\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,256}")\s*\}\s*$')


def request_id(head: bytes, tail: bytes) -> int | str | None:
    """The id of the request a refused line held, if it can be told from its ends; else None."""
    found = _ID_FIRST.match(head) or _ID_LAST.search(tail)
    try:
        return json.loads(found.group(1)) if found else None
    except ValueError:  # not UTF-8, or a control character in a string id
        return None


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def can_use_pipes() -> bool:
    """Whether stdin and stdout are pipes or sockets the event loop can watch (POSIX only)."""
    return sys.platform != "win32" and _is_pipe(0) and _is_pipe(1)


Refuse = Callable[[int, bytes, bytes], Awaitable[None]]  # (bytes, head, tail) of a line over the limit


class PipeLines:
    """`async for line in stdin`: decoded lines, as the SDK's text wrapper gives them, each at most
    `limit` bytes; `refuse` is told of every longer one, which is skipped."""

    def __init__(self, reader: asyncio.StreamReader, refuse: Refuse, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.reader = reader
        self.refuse = refuse
        self.limit = limit
        self.buffer = bytearray()
        self.scanned = 0  # the first bytes of `buffer` that hold no newline

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end >= 0:
                line = bytes(self.buffer[: end + 1])
                del self.buffer[: end + 1]
                self.scanned = 0
                if len(line) > self.limit:
                    await self.refuse(len(line), line[:EDGE], line[-EDGE:])
                    continue
                return line.decode("utf-8", errors="replace")
            self.scanned = len(self.buffer)
            if len(self.buffer) > self.limit:
                await self._skip()
                continue
            chunk = await self.reader.read(CHUNK)
            if not chunk:
                if not self.buffer:
                    raise StopAsyncIteration
                line = bytes(self.buffer)
                self.buffer.clear()
                return line.decode("utf-8", errors="replace")
            self.buffer += chunk

    async def _skip(self) -> None:
        """Read past the rest of an over-long line, keeping only its ends, then refuse it."""
        head, tail, size = bytes(self.buffer[:EDGE]), bytes(self.buffer[-EDGE:]), len(self.buffer)
        self.buffer.clear()
        self.scanned = 0
        while chunk := await self.reader.read(CHUNK):
            end = chunk.find(b"\n")
            if end >= 0:
                size += end + 1
                tail = (tail + chunk[: end + 1])[-EDGE:]
                self.buffer += chunk[end + 1 :]
                break
            size += len(chunk)
            tail = (tail + chunk)[-EDGE:]
        await self.refuse(size, head, tail)


class PipeWriter:
    """`await stdout.write(text)` and `await stdout.flush()`, on the event loop. Each message is
    written in one call, so the error for a refused line never lands inside another message."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()

    async def refuse(self, size: int, head: bytes, tail: bytes) -> None:
        """Answer a line over the limit with a JSON-RPC error (to its request id when it can be told)."""
        limit = f"{MAX_MESSAGE_BYTES} bytes ({MAX_MESSAGE_BYTES // 2**20} MB)"
        print(
            f"docs-mcp: refused a message of {size} bytes on stdin: a message is at most {limit}, as over HTTP",
            file=sys.stderr,
            flush=True,
        )
        error = {
            "jsonrpc": "2.0",
            "id": request_id(head, tail),
            "error": {
                "code": INVALID_REQUEST,
                "message": f"request too large: {size} bytes; a message is at most {limit}",
            },
        }
        await self.write(json.dumps(error) + "\n")
        await self.flush()


def _claim(fd: int, diversion: int) -> int:
    """A private duplicate of `fd` for the protocol; `fd` itself now points at `diversion`."""
    private = os.dup(fd)
    os.set_inheritable(private, False)
    os.dup2(diversion, fd)
    return private


@asynccontextmanager
async def pipe_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """(stdin, stdout) for `mcp.server.stdio.stdio_server(stdin, stdout)`; only when can_use_pipes()."""
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        private_in = _claim(0, devnull)
    finally:
        os.close(devnull)
    try:
        diversion = os.dup(2)
    except OSError:  # no stderr: stray output goes nowhere
        diversion = os.open(os.devnull, os.O_WRONLY)
    try:
        private_out = _claim(1, diversion)
    finally:
        os.close(diversion)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=CHUNK)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(private_in, "rb", buffering=0, closefd=False)
        )
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(private_out, "wb", buffering=0, closefd=False)
        )
        transports.append(write_transport)
        write_transport.set_write_buffer_limits(high=0)  # flush() returns once the message is in the pipe
        writer = PipeWriter(asyncio.StreamWriter(write_transport, protocol, None, loop))
        yield PipeLines(reader, writer.refuse), writer
    finally:
        for transport in transports:
            transport.close()
        for fd, private in ((0, private_in), (1, private_out)):
            try:
                os.set_blocking(private, True)  # the open file may be shared with the client
                os.dup2(private, fd)
            except OSError:
                pass
            os.close(private)
