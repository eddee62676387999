"""A real HTTP server on 127.0.0.1 that answers every request one byte at a time, forever.

Each byte comes well within any read timeout, so only a total deadline on the request ends it.
It counts the requests it received; the connection closes when the client gives up.
"""

from __future__ import annotations

import itertools
import socket
import socketserver
import threading
import time
from dataclasses import dataclass, field


@dataclass
class DripServer:
    interval: float = 0.5  # seconds between bytes
    headers_first: bool = False  # send the status line and headers at once, then drip the body
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: socketserver.ThreadingTCPServer | None = None

    @property
    def origin(self) -> str:
        assert self._server is not None, "the server is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.origin}/v1"

    def start(self) -> DripServer:
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                data = b""
                while b"\r\n\r\n" not in data:  # the request's head; its body is never needed
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                with server._lock:
                    server.requests += 1
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
                try:
                    if server.headers_first:
                        sock.sendall(head)
                    for byte in itertools.chain(b"" if server.headers_first else head, itertools.repeat(ord(" "))):
                        sock.sendall(bytes([byte]))
                        time.sleep(server.interval)
                except OSError:
                    return  # the client gave up

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> DripServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
