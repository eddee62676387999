"""Streamable HTTP: /mcp (optionally behind a bearer token) and /healthz, bound to 127.0.0.1 by default.

Every path goes through one Host/Origin check (DNS-rebinding protection) before anything else;
the SDK's own check is turned off so that /healthz and /mcp cannot disagree.
"""

from __future__ import annotations

import errno
import hmac
import json
import socket
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..errors import DocsMcpError
from ..search import MIN_SECRET_CHARS
from .app import DocsServer, log

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::")


async def _plain(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BearerTokenGate:
    """Answers 401 on /mcp unless `Authorization: Bearer <token>` matches (compared in constant time).

    The scheme name is case-insensitive (RFC 9110 §11.1): `bearer <token>` works too.
    """

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    def _allowed(self, header: bytes) -> bool:
        scheme, _, given = header.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            if not self._allowed(dict(scope.get("headers") or []).get(b"authorization", b"")):
                body = json.dumps(
                    {"error": "unauthorized", "message": "send the server's token as 'Authorization: Bearer <token>'"}
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class HostRule:
    """A host name (lowercase, IPv6 without brackets) and its port; None accepts any port, or none."""

    name: str
    port: int | None = None

    def matches(self, name: str, port: int | None) -> bool:
        return name == self.name and (self.port is None or port == self.port)


def split_host(value: str) -> tuple[str, int | None] | None:
    """'LocalHost:8080' -> ('localhost', 8080), '[::1]' -> ('::1', None); None if it is not a host[:port]."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text = value.partition(":")
        if not sep:
            port_text = None
    if not name or (port_text is not None and not (port_text.isdigit() and int(port_text) <= 65535)):
        return None
    return name, int(port_text) if port_text is not None else None


@dataclass(frozen=True)
class HostPolicy:
    """Which Host and Origin headers this server answers: loopback names, --host and --allowed-host
    (each with any port or none, or exactly the port given), plus --allowed-origin values."""

    hosts: tuple[HostRule, ...]
    origins: tuple[tuple[str, HostRule], ...]  # (scheme, rule) from --allowed-origin

    @classmethod
    def make(cls, host: str, allowed_hosts: list[str], allowed_origins: list[str]) -> HostPolicy:
        rules = [HostRule(name) for name in LOOPBACK]
        if host not in LOOPBACK and host not in WILDCARD:
            rules.append(HostRule(host.strip("[]").lower()))
        for value in allowed_hosts:
            wildcard = value.endswith(":*")
            parsed = split_host(value[:-2] if wildcard else value)
            if parsed is None:
                raise DocsMcpError(
                    f"--allowed-host {value!r} is not a host name with an optional port, e.g. "
                    "docs.example.com or docs.example.com:8443"
                )
            rules.append(HostRule(parsed[0], parsed[1]))
        origins = []
        for value in allowed_origins:
            text = value.strip().rstrip("/").lower()
            any_port = text.endswith(":*")
            parts = urlsplit(text[:-2] if any_port else text)
            try:
                port = parts.port
            except ValueError:
                port = None
            if parts.scheme and parts.hostname:
                origins.append((parts.scheme, HostRule(parts.hostname, None if any_port else port)))
        return cls(tuple(rules), tuple(origins))

    def host_ok(self, header: str | None) -> bool:
        parsed = split_host(header) if header else None
        return parsed is not None and any(rule.matches(*parsed) for rule in self.hosts)

    def origin_ok(self, header: str | None) -> bool:
        if not header:
            return True  # not a browser, or a same-origin request
        parts = urlsplit(header.strip().lower())
        try:
            port = parts.port
        except ValueError:
            return False
        if not parts.hostname or parts.scheme not in ("http", "https"):
            return False
        if any(rule.matches(parts.hostname, port) for rule in self.hosts):
            return True
        return any(scheme == parts.scheme and rule.matches(parts.hostname, port) for scheme, rule in self.origins)


class HostGate:
    """421 for a Host header this server does not answer, 403 for a foreign Origin: on every path.

    A request with two Host or two Origin headers is refused (400): which one counts would depend
    on who reads them (a proxy may check the first, the application read the last)."""

    def __init__(self, app: Any, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            names = [k for k, _ in scope.get("headers") or []]
            for name in (b"host", b"origin"):
                if names.count(name) > 1:
                    await _plain(send, 400, f"Duplicate {name.decode().capitalize()} header".encode())
                    return
            headers = {k: v.decode("latin-1") for k, v in scope.get("headers") or []}
            if not self.policy.host_ok(headers.get(b"host")):
                await _plain(send, 421, b"Invalid Host header")
                return
            if not self.policy.origin_ok(headers.get(b"origin")):
                await _plain(send, 403, b"Invalid Origin header")
                return
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class HttpLimits:
    """What one HTTP server holds at most, and for how long (`docs-mcp serve` options)."""

    header_timeout: float = 10.0  # seconds for a request's header, from its first byte
    body_timeout: float = 30.0  # seconds for its body, from the end of its header
    session_idle_timeout: float = 1800.0  # a stateful session with no request in flight ends after this
    max_sessions: int = 1000  # stateful sessions open at once; another initialize is answered 503


MIN_TOKEN_CHARS = MIN_SECRET_CHARS


def check_token(variable: str, token: str) -> None:
    """A bearer token long enough not to be guessed, and sendable as a header value as it is."""
    if len(token) < MIN_TOKEN_CHARS:
        raise DocsMcpError(
            f"--auth-token-env {variable}: the token is {len(token)} characters; use at least {MIN_TOKEN_CHARS} "
            'random characters, e.g. the output of `python -c "import secrets; print(secrets.token_urlsafe(32))"`'
        )
    if not all("!" <= c <= "~" for c in token):
        raise DocsMcpError(
            f"--auth-token-env {variable}: the token has spaces or characters other than visible ASCII; "
            "clients send it in a header, so use letters, digits and punctuation only"
        )


def build_app(
    docs: DocsServer,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    stateless: bool = False,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    limits: HttpLimits | None = None,
) -> Any:
    limits = limits or HttpLimits()
    policy = HostPolicy.make(host, allowed_hosts or [], allowed_origins or [])

    async def healthz(request: Request) -> JSONResponse:
        """A lone index's health at the top level; several corpora listed under `corpora`, each with its own.

        With several, "degraded" (still 200: the others answer) while some corpus cannot be read, and
        "error" (503) only when none can.
        """
        corpora = docs.library.corpora
        if len(corpora) == 1:
            body, ok = await docs.library.health(corpora[0])
            return JSONResponse(body, status_code=200 if ok else 503)
        listed, healthy = [], 0
        for corpus in corpora:
            body, ok = await docs.library.health(corpus)
            listed.append({"name": corpus.name, **body})
            healthy += ok
        status = "ok" if healthy == len(corpora) else "degraded" if healthy else "error"
        return JSONResponse({"status": status, "corpora": listed}, status_code=200 if healthy else 503)

    app = docs.server.streamable_http_app(
        stateless_http=stateless,
        json_response=stateless,
        session_idle_timeout=limits.session_idle_timeout,
        max_sessions=limits.max_sessions,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),  # HostGate does it
        custom_starlette_routes=[Route("/healthz", healthz, methods=["GET"])],
    )
    return HostGate(BearerTokenGate(app, token) if token else app, policy)


def bind_listeners(host: str, port: int, shown: str) -> list[socket.socket]:
    """Bind each address of HOST:PORT, as uvicorn's asyncio server would, and hand the sockets to it.

    A port in use or a host that is not this machine's is one `error:` line before "serving on", not
    uvicorn's log line and exit code 3; with port 0 every address shares the port the first one got,
    which is the port "serving on" shows.
    """
    bound: list[socket.socket] = []
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, proto, _, sockaddr in dict.fromkeys(addresses):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio: an IPv6 socket does not take IPv4 too
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if len(bound) > 1:
                sockaddr = (sockaddr[0], bound[0].getsockname()[1], *sockaddr[2:])
            sock.bind(sockaddr)
    except OSError as exc:
        for sock in bound:
            sock.close()
        why = (exc.strerror or str(exc)).lower()
        fix = "stop what listens there or choose another --port" if exc.errno == errno.EADDRINUSE else "check --host"
        raise DocsMcpError(f"cannot listen on {shown}:{port}: {why}; {fix}") from None
    return bound


def serve_http(
    docs: DocsServer,
    *,
    host: str,
    port: int,
    token: str | None,
    stateless: bool,
    allowed_hosts: list[str],
    allowed_origins: list[str],
    limits: HttpLimits | None = None,
) -> None:
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from .http_protocol import MAX_HEADER_BYTES, ReadDeadlines, protocol_class

    limits = limits or HttpLimits()
    app = build_app(
        docs,
        host=host,
        token=token,
        stateless=stateless,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        limits=limits,
    )
    shown = f"[{host}]" if ":" in host else host
    listeners = bind_listeners(host, port, shown)
    port = listeners[0].getsockname()[1]
    auth = "bearer token required" if token else "no auth"
    log(f"serving on http://{shown}:{port}/mcp ({auth}{', stateless' if stateless else ''}); health at /healthz")
    if host not in LOOPBACK and not token:
        log("warning: listening beyond localhost without --auth-token-env; anyone who can reach this port can search")
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        http=protocol_class(ReadDeadlines(limits.header_timeout, limits.body_timeout)),
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=listeners)
    except KeyboardInterrupt:
        pass
    if not server.started:  # the lifespan failed: uvicorn.run's exit code
        sys.exit(STARTUP_FAILURE)
