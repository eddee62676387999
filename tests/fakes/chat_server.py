"""A real OpenAI-compatible chat server on 127.0.0.1 (`POST /v1/chat/completions`) for `fix --llm` tests.

It records every request body and Authorization header and answers with `reply`
(a string, or a function of the request body), as a chat model would.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class FakeChatServer:
    reply: str | Callable[[dict[str, Any]], str] = "{}"
    status: int = 200
    bodies: list[dict[str, Any]] = field(default_factory=list)
    raw_sizes: list[int] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> "FakeChatServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                body = json.loads(raw or b"{}")
                server.bodies.append(body)
                server.raw_sizes.append(len(raw))
                server.auth.append(self.headers.get("Authorization", ""))
                if server.status != 200:
                    return self._send(server.status, {"error": {"message": "bad model", "type": "invalid_request_error"}})
                content = server.reply(body) if callable(server.reply) else server.reply
                self._send(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "FakeChatServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
