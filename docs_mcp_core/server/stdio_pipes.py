"""stdin and stdout as asyncio pipes, for the MCP SDK's stdio transport.

The SDK reads each line of stdin and writes and flushes each message in a worker thread
(`anyio.wrap_file`): three hand-offs between threads per request, each waking the event loop
through its self-pipe. On a pipe or a socket (how MCP clients start a server) the event loop can
read and write the descriptors itself. Anything else (a regular file, a terminal, Windows) keeps
the SDK's threads.

Like the SDK, the descriptors are claimed while serving: fd 0 reads the null device and fd 1
writes to stderr, so a stray print or a child process cannot corrupt the protocol; both are
restored on exit, and so is blocking mode.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

READ_LIMIT = 2**30  # a JSON-RPC message is one line, however long


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def can_use_pipes() -> bool:
    """Whether stdin and stdout are pipes or sockets the event loop can watch (POSIX only)."""
    return sys.platform != "win32" and _is_pipe(0) and _is_pipe(1)


class PipeLines:
    """`async for line in stdin`: decoded lines, as the SDK's text wrapper gives them."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class PipeWriter:
    """`await stdout.write(text)` and `await stdout.flush()`, on the event loop."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


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
        reader = asyncio.StreamReader(limit=READ_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(private_in, "rb", buffering=0, closefd=False)
        )
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(private_out, "wb", buffering=0, closefd=False)
        )
        transports.append(write_transport)
        write_transport.set_write_buffer_limits(high=0)  # flush() returns once the message is in the pipe
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        yield PipeLines(reader), PipeWriter(writer)
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
