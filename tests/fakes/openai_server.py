"""A real OpenAI-compatible embeddings server on 127.0.0.1 for tests and benchmarks.

It counts every input it receives and can be told to misbehave: 429 with Retry-After,
500s, slow responses, dropped connections, or a hard failure from some request on.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import numpy as np

from .local_http import LocalServer, send_json


def fake_vector(text: str, dims: int) -> list[float]:
    """Deterministic unit vector from the words of `text` (similar texts, similar vectors)."""
    vec = np.zeros(dims, dtype=np.float32)
    for word in text.lower().split() or [text]:
        h = zlib.crc32(word.encode())
        vec[h % dims] += 1.0 if h & 0x80000000 else -1.0
    norm = float(np.linalg.norm(vec)) or 1.0
    return (vec / norm).tolist()


@dataclass
class Fault:
    kind: str  # "429" | "500" | "slow" | "drop" | "400"
    seconds: float = 0.0  # Retry-After for 429, delay for slow


@dataclass
class FakeEmbeddingServer(LocalServer):
    dims: int = 64
    latency: float = 0.0
    faults: deque = field(default_factory=deque)  # applied to the next requests, one each
    fail_from_request: int | None = None  # every request from this (1-based) number on gets fail_status
    fail_status: int = 500
    inputs: list[str] = field(default_factory=list)
    requests: int = 0
    models: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def start(self) -> FakeEmbeddingServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self._reply(404, {"error": {"message": f"no route {self.path}"}})
                with server._lock:
                    server.requests += 1
                    number = server.requests
                    fault = server.faults.popleft() if server.faults else None
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if server.latency:
                    time.sleep(server.latency)
                if fault is not None:
                    if fault.kind == "drop":
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.close_connection = True
                        return
                    if fault.kind == "slow":
                        time.sleep(fault.seconds)
                    elif fault.kind == "429":
                        return self._reply(
                            429,
                            {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                            {"Retry-After": str(fault.seconds)},
                        )
                    elif fault.kind == "500":
                        return self._reply(500, {"error": {"message": "internal error", "type": "server_error"}})
                    elif fault.kind == "400":
                        return self._reply(400, {"error": {"message": "bad request", "type": "invalid_request_error"}})
                if server.fail_from_request is not None and number >= server.fail_from_request:
                    return self._reply(
                        server.fail_status, {"error": {"message": "quota exceeded", "type": "insufficient_quota"}}
                    )
                texts = body.get("input", [])
                texts = [texts] if isinstance(texts, str) else texts
                with server._lock:
                    server.inputs.extend(texts)
                    server.models.append(body.get("model", ""))
                dims = int(body.get("dimensions") or server.dims)
                data = []
                for i, text in enumerate(texts):
                    vec = fake_vector(text, dims)
                    if body.get("encoding_format") == "base64":
                        vec = base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode()
                    data.append({"object": "embedding", "index": i, "embedding": vec})
                tokens = sum(len(t.split()) for t in texts)
                self._reply(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model"),
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

            def _reply(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                send_json(self, status, payload, headers)

        self._serve(Handler)
        return self

    def reset_counts(self) -> None:
        with self._lock:
            self.inputs.clear()
            self.requests = 0
