"""What `repomap serve` checks before a request reaches an endpoint: one ASGI middleware.

In this order, each refusal a structured error (`{"error": {"code", "message"}}`):

1. Host: on a loopback address, only `Host: 127.0.0.1 / localhost / [::1]` is served, so a web
   page cannot reach the server through a DNS name rebound to 127.0.0.1 (403 FORBIDDEN).
2. Origin: a browser's cross-origin request is served only from an origin in the CORS
   allow-list (none by default; the server's own origin is always allowed): a preflight from
   an allowed origin gets 204 and the CORS headers, any request from another origin 403
   FORBIDDEN. Requests without an `Origin` (curl, scripts, MCP clients) pass.
3. Rate: a token bucket per client address (`rate_limit` requests per `window` seconds,
   refilled continuously; 0 turns it off): 429 RATE_LIMITED with `Retry-After` in seconds.
4. Token: with a bearer token configured, every request but `/healthz` and preflights must
   carry `Authorization: Bearer TOKEN` (401 UNAUTHORIZED).
5. Body: at most `max_body_bytes`, by `Content-Length` or as counted (413 PAYLOAD_TOO_LARGE).
   The body is read here, before the endpoint runs.

Pure ASGI rather than starlette's BaseHTTPMiddleware, which costs a task and a stream per
request (about a third of a small request's time).
"""

from __future__ import annotations

import hmac
import json
import math
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
OPEN_PATHS = frozenset({"/healthz"})  # no token, no rate limit: a health check reads nothing
ALLOWED_METHODS = "GET, POST, DELETE, OPTIONS"  # DELETE ends an MCP session
ALLOWED_HEADERS = frozenset(
    {"authorization", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"}
)
EXPOSED_HEADERS = "Retry-After, Mcp-Session-Id"
PREFLIGHT_MAX_AGE = "600"
MAX_BUCKETS = 10_000  # clients remembered; full buckets are forgotten first


@dataclass(frozen=True)
class GuardOptions:
    token: str | None = None
    rate_limit: int = 600  # requests per window and client; 0: no limit
    window: float = 60.0  # seconds
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 65536
    loopback: bool = True  # bound to a loopback address: check Host


def error_body(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


@dataclass
class TokenBuckets:
    """One bucket per client: `capacity` requests, refilled at capacity/window per second."""

    capacity: int
    window: float
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)  # tokens, at

    def take(self, client: str) -> float:
        """0 when the request may go ahead (a token taken), else the seconds until one is due."""
        rate = self.capacity / self.window
        now = self.clock()
        tokens, at = self._buckets.get(client, (float(self.capacity), now))
        tokens = min(float(self.capacity), tokens + (now - at) * rate)
        if tokens >= 1.0:
            self._buckets[client] = (tokens - 1.0, now)
            if len(self._buckets) > MAX_BUCKETS:
                self._forget(now, rate)
            return 0.0
        self._buckets[client] = (tokens, now)
        return (1.0 - tokens) / rate

    def _forget(self, now: float, rate: float) -> None:
        for client, (tokens, at) in list(self._buckets.items()):
            if tokens + (now - at) * rate >= self.capacity:
                del self._buckets[client]


class Guard:
    def __init__(self, app: ASGIApp, options: GuardOptions) -> None:
        self.app = app
        self.options = options
        self.origins = frozenset(origin.rstrip("/") for origin in options.cors_origins)
        self.buckets = (
            TokenBuckets(options.rate_limit, options.window) if options.rate_limit > 0 else None
        )
        self.expected = f"Bearer {options.token}".encode() if options.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, value)
        host = headers.get(b"host", b"").decode("latin-1")
        if self.options.loopback and not _loopback_host(host):
            await _refuse(send, 403, "FORBIDDEN", f"Host {host!r} is not served: use 127.0.0.1")
            return
        origin = headers.get(b"origin", b"").decode("latin-1").rstrip("/")
        cross = bool(origin) and origin != f"{scope.get('scheme', 'http')}://{host}"
        if cross and origin not in self.origins:
            await _refuse(
                send, 403, "FORBIDDEN",
                f"origin {origin} is not allowed; start the server with --cors-origin {origin}",
            )  # fmt: skip
            return
        extra: list[tuple[bytes, bytes]] = []
        if cross:
            extra = [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"vary", b"Origin"),
                (b"access-control-expose-headers", EXPOSED_HEADERS.encode()),
            ]
        if scope["method"] == "OPTIONS" and b"access-control-request-method" in headers:
            await self._preflight(send, headers, extra)
            return
        path = scope["path"]
        if path not in OPEN_PATHS:
            if self.buckets is not None:
                client = (scope.get("client") or ("unknown", 0))[0]
                wait = self.buckets.take(client)
                if wait > 0:
                    retry = str(max(1, math.ceil(wait)))
                    await _refuse(
                        send, 429, "RATE_LIMITED",
                        f"more than {self.options.rate_limit} requests in "
                        f"{self.options.window:g} s from {client}; retry in {retry} s",
                        [(b"retry-after", retry.encode()), *extra],
                    )  # fmt: skip
                    return
            if self.expected is not None and not hmac.compare_digest(
                headers.get(b"authorization", b""), self.expected
            ):
                await _refuse(
                    send, 401, "UNAUTHORIZED",
                    "this server requires `Authorization: Bearer TOKEN` (the --token it was "
                    "started with)",
                    [(b"www-authenticate", b'Bearer realm="repomap"'), *extra],
                )  # fmt: skip
                return
        if scope["method"] in ("POST", "PUT", "PATCH"):
            body = await self._body(headers, receive)
            if body is None:
                await _refuse(
                    send, 413, "PAYLOAD_TOO_LARGE",
                    f"the request body is larger than {self.options.max_body_bytes} bytes",
                    extra,
                )  # fmt: skip
                return
            receive = _replay(body, receive)
        if extra:
            send = _with_headers(send, extra)
        await self.app(scope, receive, send)

    async def _preflight(
        self, send: Send, headers: dict[bytes, bytes], extra: list[tuple[bytes, bytes]]
    ) -> None:
        asked = headers.get(b"access-control-request-headers", b"").decode("latin-1")
        wanted = {h.strip().lower() for h in asked.split(",") if h.strip()}
        if unknown := sorted(wanted - ALLOWED_HEADERS):
            await _refuse(
                send, 403, "FORBIDDEN",
                f"header {', '.join(unknown)} is not allowed in cross-origin requests",
                extra,
            )  # fmt: skip
            return
        response = [
            *extra,
            (b"access-control-allow-methods", ALLOWED_METHODS.encode()),
            (b"access-control-allow-headers", ", ".join(sorted(ALLOWED_HEADERS)).encode()),
            (b"access-control-max-age", PREFLIGHT_MAX_AGE.encode()),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": response})
        await send({"type": "http.response.body", "body": b""})

    async def _body(self, headers: dict[bytes, bytes], receive: Receive) -> bytes | None:
        """The whole request body, or None when it is larger than allowed."""
        limit = self.options.max_body_bytes
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _loopback_host(host: str) -> bool:
    if host.startswith("["):  # [::1]:8766
        name = host.split("]", 1)[0] + "]"
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.lower() in LOOPBACK_NAMES


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive() that gives the body read already, then what the client sends next (an
    http.disconnect, which a streaming MCP response waits for)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return sending


async def _refuse(
    send: Send, status: int, code: str, message: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = error_body(code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
