"""Streamable HTTP: /mcp (optionally behind a bearer token) and /healthz, bound to 127.0.0.1 by default."""

from __future__ import annotations

import hmac
import json
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .app import DocsServer, log

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class BearerTokenGate:
    """Answers 401 on /mcp unless `Authorization: Bearer <token>` matches (compared in constant time)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"error": "unauthorized",
                                   "message": "send the server's token as 'Authorization: Bearer <token>'"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def security_settings(host: str, allowed_hosts: list[str], allowed_origins: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection: only the Host and Origin headers this server is meant to answer."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if host not in LOOPBACK and host not in ("0.0.0.0", "::"):
        hosts.append(f"{host}:*")
        origins += [f"http://{host}:*", f"https://{host}:*"]
    for name in allowed_hosts:
        hosts.append(name if ":" in name else f"{name}:*")
        origins += [f"http://{name}", f"https://{name}"] if ":" in name else [f"http://{name}:*", f"https://{name}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins + list(allowed_origins))


def build_app(docs: DocsServer, *, host: str = "127.0.0.1", token: str | None = None, stateless: bool = False,
              allowed_hosts: list[str] | None = None, allowed_origins: list[str] | None = None) -> Any:
    engine = docs.engine

    async def healthz(request: Request) -> JSONResponse:
        index = engine.current
        embedder = engine.embedder
        return JSONResponse({
            "status": "ok",
            "index_version": index.version,
            "chunks": (index.metadata.get("stats") or {}).get("total_chunks"),
            "vector_search": embedder.status if embedder is not None else "none",
        })

    app = docs.server.streamable_http_app(
        stateless_http=stateless,
        json_response=stateless,
        host=host,
        transport_security=security_settings(host, allowed_hosts or [], allowed_origins or []),
        custom_starlette_routes=[Route("/healthz", healthz, methods=["GET"])],
    )
    return BearerTokenGate(app, token) if token else app


def serve_http(docs: DocsServer, *, host: str, port: int, token: str | None, stateless: bool,
               allowed_hosts: list[str], allowed_origins: list[str]) -> None:
    import uvicorn

    app = build_app(docs, host=host, token=token, stateless=stateless, allowed_hosts=allowed_hosts,
                    allowed_origins=allowed_origins)
    shown = f"[{host}]" if ":" in host else host
    auth = "bearer token required" if token else "no auth"
    log(f"serving on http://{shown}:{port}/mcp ({auth}{', stateless' if stateless else ''}); health at /healthz")
    if host not in LOOPBACK and not token:
        log("warning: listening beyond localhost without --auth-token-env; anyone who can reach this port can search")
    uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
