"""A real OpenAI-compatible chat server on 127.0.0.1 (`POST /v1/chat/completions`) for `fix --llm` tests.

It records every request body and Authorization header and answers with `reply`
(a string, or a function of the request body), as a chat model would; or, with `raw`,
with exactly those bytes as the whole answer body (broken answers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .local_http import LocalServer, send_json


@dataclass
class FakeChatServer(LocalServer):
    reply: str | Callable[[dict[str, Any]], str] = "{}"
    raw: bytes | None = None
    status: int = 200
    bodies: list[dict[str, Any]] = field(default_factory=list)
    raw_sizes: list[int] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)

    def start(self) -> FakeChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                body = json.loads(raw or b"{}")
                server.bodies.append(body)
                server.raw_sizes.append(len(raw))
                server.auth.append(self.headers.get("Authorization", ""))
                if server.status != 200:
                    return self._send(
                        server.status, {"error": {"message": "bad model", "type": "invalid_request_error"}}
                    )
                if server.raw is not None:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(server.raw)))
                    self.end_headers()
                    self.wfile.write(server.raw)
                    return None
                content = server.reply(body) if callable(server.reply) else server.reply
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model"),
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                send_json(self, status, payload)

        self._serve(Handler)
        return self
