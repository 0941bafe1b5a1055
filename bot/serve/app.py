"""The scoring service: an aiohttp application and ``python -m bot serve``.

Routes (JSON in and out; errors always in Google's error shape, :class:`bot.serve.perspective.ApiError`):

- ``POST /v1alpha1/comments:analyze``: Perspective's ``AnalyzeComment`` (:mod:`bot.serve.perspective`).
- ``POST /v1/score``: the native batch endpoint, the ``score`` job's contract for many texts:
  ``{"texts": [str | {"id", "text"}], "policy": name?}`` -> ``{"model", "version", "results": [{"id", "scores":
  {label: float | null}, "score_status", "language", "labels"?, "flagged"?}]}`` (``labels``/``flagged`` from the
  named policy's tiers, model scores only: the service runs no blocklist or spam rules).
- ``POST /v1/model:score``: already-normalised texts scored as they are (``{"texts": [str]}`` -> ``{"model",
  "version", "models": [str], "labels", "routes", "text_missing": [[str]], "missing": [str], "scores": [{label:
  float}]}``, ``models`` naming the model that scored each text and ``text_missing`` the labels it lacks,
  ``missing`` those any of them lacks); with ``"plans": [[int]]`` (a message's texts by index, whole text first)
  each plan scored whole (``"plan_languages": [str | null]``, one per plan: the language its raw text routes it
  by, the bot's ``route_hint``) and answered combined in ``plan_scores``, ``plan_models`` and ``plan_missing`` instead:
  what :class:`bot.scoring.remote.RemoteScorer` calls, the bot having planned and normalised each message itself.
- ``GET /v1/model``: ``{"name", "version", "labels", "languages", "routes", "routing", "runtime"}`` (``routing``:
  each model's languages and the detector's thresholds when the model routes languages, else ``null``).
- ``GET /healthz`` (200 once the port accepts requests, also while the model loads), ``GET /readyz`` (200 once
  the model is loaded, 503 before and while draining), ``GET /metrics`` (Prometheus text format).

Serving properties: micro-batching (:class:`bot.serve.batcher.MicroBatcher`), API keys (``?key=`` as Perspective,
or the ``X-Goog-Api-Key`` / ``Authorization: Bearer`` header; :mod:`bot.serve.keys`), per-key rate limits (429 +
``Retry-After``), a body limit (413) and Perspective's 20 KB per comment, drain on SIGTERM (in-flight requests
finish, new ones get 503, ``/readyz`` turns 503 first). No access log is written (a URL can carry ``?key=``) and
no text is logged or stored.

Layer: composition root.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import math
import os
import re
import signal
import socket
import sys
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bot.core.models import LABELS, Scores
from bot.core.normalize import for_scoring
from bot.core.policy import Policy, PolicyError, load_policy
from bot.core.ports import Scorer
from bot.jobs.jsonlines import exact_float, holds_underflow
from bot.serve.batcher import PASS_CHARS, REFILL_S, UNIT_CHARS, BatcherClosed, MicroBatcher
from bot.serve.keys import KeyConfigError, KeyRing, RateLimiter
from bot.serve.options import (
    BODY_TIMEOUT_S,
    IDLE_TIMEOUT_S,
    MAX_BODY_BYTES,
    MAX_CONNECTIONS_PER_ADDRESS,
    STARTED,
    build_parser,
    check_options,
    default_max_connections,
    is_loopback_host,
    model_loader,
    serve_settings,
    serve_workers,
    start_loading,
)
from bot.serve.perspective import (
    ATTRIBUTES,
    MAX_COMMENT_BYTES,
    STATUS,
    ApiError,
    analyze_response,
    discovery_document,
    language_error,
    parse_analyze,
    utf16_spans,
)
from bot.serve.reading import Reading, read_text, sentence_spans

if TYPE_CHECKING:
    from bot.core.judge import Decision

log = logging.getLogger(__name__)
_T = TypeVar("_T")
_R = TypeVar("_R")

#: Most texts per native batch / model:score request.
MAX_TEXTS_PER_REQUEST = 512
#: Longest text of a native batch request, in characters: Slack's longest message (the policy's default
#: ``[scoring] max_chars``).
MAX_TEXT_CHARS = 40_000
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/$discovery/rest"})
#: A request whose texts hold more characters than this is read (normalised, planned, its language checked) in a
#: worker thread, so the event loop keeps answering everyone else (``/healthz`` included) meanwhile; smaller ones
#: are read inline (a thread hop costs more than reading a chat message). The 16-client benchmark's messages
#: average 210 characters (docs/performance.md).
READ_INLINE_CHARS = 2_000
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: A request body longer than this (bytes) is decoded as JSON and walked in a worker thread: 1 MB of ``[]`` items is
#: 340,000 values, which held the event loop (``/healthz`` included) for over a second per request; a chat
#: request's body is a few hundred bytes, cheaper to read inline than a thread hop.
PARSE_INLINE_BYTES = 8_192


@dataclass
class ServeConfig:
    """Options of one service process (``python -m bot serve`` flags).

    Attributes:
        host / port: Where to listen (``port=0``: any free port, printed at start).
        max_comment_bytes: Perspective's per-comment limit (UTF-8 bytes), 20,480 as Perspective.
        max_body_bytes: Largest request body (413 above it).
        rate / burst: Per-key token bucket (requests per second, requests at once).
        request_timeout_s: Longest a request waits for its score (504 after it).
        drain_s: Longest SIGTERM waits for in-flight requests.
        policies: Named policies for the native endpoint's ``"policy"`` (``"default"`` is always there).
        max_wait_s: Micro-batching wait after a first request (0: none; the batch grows while the model works).
        idle_timeout_s: A connection idle this long, or still sending its request line and headers, is closed.
        body_timeout_s: A body not received this long after its headers gets 408 (slowloris clients).
        refill_s: Longest wait for as many requests as the previous batch answered
            (:data:`bot.serve.batcher.REFILL_S`; 0: never).
        max_connections: Connections open at once from all clients (0: no cap); one more is answered 503 and
            closed (:class:`ConnectionCap`).
        max_connections_per_address: Connections one client address may hold open at once (0: no cap); one more
            is answered 429 and closed (:class:`ConnectionCap`).
        pass_chars: Characters of texts per forward pass at most (:data:`bot.serve.batcher.PASS_CHARS`; 0: none).
        unit_chars: A request's plan of more characters is scored in slices over several passes
            (:data:`bot.serve.batcher.UNIT_CHARS`; 0: never).
        workers: Forward passes scored at once, each in its own thread (:class:`bot.serve.batcher.MicroBatcher`);
            ``None``: :func:`bot.serve.options.serve_workers` on ONNX Runtime, else 1.
    """

    host: str = "127.0.0.1"
    port: int = 8080
    max_comment_bytes: int = MAX_COMMENT_BYTES
    max_body_bytes: int = MAX_BODY_BYTES
    rate: float = 50.0
    burst: int = 100
    request_timeout_s: float = 30.0
    drain_s: float = 20.0
    policies: dict[str, Path] = field(default_factory=dict)
    max_wait_s: float = 0.0
    idle_timeout_s: float = IDLE_TIMEOUT_S
    body_timeout_s: float = BODY_TIMEOUT_S
    refill_s: float = REFILL_S
    max_connections_per_address: int = MAX_CONNECTIONS_PER_ADDRESS
    max_connections: int = 0
    pass_chars: int = PASS_CHARS
    unit_chars: int = UNIT_CHARS
    workers: int | None = None


#: Seconds a connection over its address's cap stays open for its request (answered 429) before it is closed (the
#: idle timeout when that is shorter).
REFUSED_GRACE_S = 5.0


#: Length of the IPv6 prefix counted as one client: a host is given a whole /64 (RFC 6177, SLAAC) and may use any
#: address in it, so a cap or a limit per address would cap nothing.
IPV6_CLIENT_PREFIX = 64


def client_key(address: str) -> str:
    """The client an address belongs to, for the connection cap and the wrong-key limit: an IPv4 address itself
    (an IPv4-mapped IPv6 address ``::ffff:a.b.c.d`` as that IPv4 address), an IPv6 address as its /64 network
    (``"2001:db8:1:2::/64"``) except a link-local or loopback one, which is itself (every host of a link shares
    ``fe80::/64``; its zone ``%eth0`` is dropped); anything that is not an IP address as it is."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        if ip.is_link_local or ip.is_loopback:
            return str(ip)
        return str(ipaddress.IPv6Network((ip, IPV6_CLIENT_PREFIX), strict=False))
    return str(ip)


class ConnectionCap:
    """How many connections each client address holds open, against a cap (``limit``; 0: none).

    A connection is admitted while its address holds fewer than ``limit`` admitted connections; one more is refused:
    :class:`_QuietHandler` answers its request 429 (``RESOURCE_EXHAUSTED``, ``Retry-After: 1``) and closes it, or
    closes it after :data:`REFUSED_GRACE_S` when no request comes, so a client that opens connections and sends
    nothing (slowloris) holds at most ``limit`` of them for long. Refused connections are not counted. Addresses
    are the peer's IP address as the socket gives it (behind a proxy: the proxy's), counted per client
    (:func:`client_key`: an IPv6 address by its /64); :attr:`open` maps a client key to its open connections.
    """

    def __init__(self, limit: int, on_refuse: Callable[[], None] | None = None, *, total_limit: int = 0) -> None:
        self.limit = limit
        self.total_limit = total_limit
        self.open: dict[str, int] = {}
        self.total = 0
        #: Why the last refused connection was refused: ``"address"`` (its client's cap) or ``"total"``.
        self.refused_for = ""
        self._on_refuse = on_refuse

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (nothing counted; :attr:`refused_for` says why) when
        ``total_limit`` connections are open, or its client (:func:`client_key`) holds ``limit``."""
        key = client_key(address)
        held = self.open.get(key, 0)
        why = ("total" if self.total_limit and self.total >= self.total_limit
               else "address" if self.limit and held >= self.limit else "")
        if why:
            self.refused_for = why
            if self._on_refuse is not None:
                self._on_refuse()
            return False
        self.open[key] = held + 1
        self.total += 1
        return True

    def release(self, address: str) -> None:
        """An admitted connection from ``address`` closed."""
        key = client_key(address)
        if key in self.open:
            self.total -= 1
        held = self.open.get(key, 0) - 1
        if held > 0:
            self.open[key] = held
        else:
            self.open.pop(key, None)


class Metrics:
    """The service's Prometheus metrics, in a registry of its own (``/metrics``)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("modbot_serve_requests", "HTTP requests answered", ["endpoint", "code"],
                                registry=self.registry)
        self.latency = Histogram("modbot_serve_request_seconds", "Time from request to answer", ["endpoint"],
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
                                 registry=self.registry)
        self.batch_requests = Histogram("modbot_serve_batch_requests", "Requests served by one forward pass",
                                        buckets=(1, 2, 4, 8, 16, 32, 64, 128), registry=self.registry)
        self.batch_texts = Histogram("modbot_serve_batch_texts", "Distinct texts scored by one forward pass",
                                     buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), registry=self.registry)
        self.batch_seconds = Histogram("modbot_serve_batch_seconds", "Model time of one batch",
                                       buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
                                       registry=self.registry)
        self.queue_depth = Gauge("modbot_serve_queue_depth", "Requests waiting for a batch", registry=self.registry)
        self.inflight = Gauge("modbot_serve_inflight", "Requests being answered", registry=self.registry)
        self.ready = Gauge("modbot_serve_ready", "1 when the model is loaded and the service not draining",
                           registry=self.registry)
        self.precision = Gauge("modbot_serve_model_precision", "1 for the precision the model runs in",
                               ["precision"], registry=self.registry)
        self.connections_refused = Counter("modbot_serve_connections_refused", "Connections refused: their client "
                                           "address held --max-connections-per-address already",
                                           registry=self.registry)

    def observe_batch(self, requests: int, texts: int, seconds: float) -> None:
        """Record one forward pass (the batcher's ``observe`` hook)."""
        self.batch_requests.observe(requests)
        self.batch_texts.observe(texts)
        self.batch_seconds.observe(seconds)


class ScoringService:
    """State of one service process: the scorer (once loaded), its batcher, policies, keys, limits and metrics.

    Args:
        config: The process options.
        keys: API keys (empty: none needed).
        default_policy: The policy file whose ``[scoring]`` and ``[languages]`` settings every request is read
            under (the bots' default policy unless ``MODBOT_POLICY`` says otherwise).
    """

    def __init__(self, config: ServeConfig, keys: KeyRing, default_policy: Path) -> None:
        self.config = config
        self.keys = keys
        self.policies: dict[str, Policy] = {"default": load_policy(default_policy)}
        for name, path in config.policies.items():
            self.policies[name] = load_policy(path)
        self.limiter = RateLimiter(config.rate, config.burst)
        self.metrics = Metrics()
        self.scorer: Scorer | None = None
        self.batcher: MicroBatcher | None = None
        self.runtime = "unknown"
        self.precision = "unknown"
        self.precision_reason = ""
        self.draining = False
        self.inflight = 0
        self.load_error: str | None = None
        self.connections = ConnectionCap(config.max_connections_per_address, self.metrics.connections_refused.inc,
                                         total_limit=config.max_connections)

    # ---------------------------------------------------------------- lifecycle

    def set_scorer(self, scorer: Scorer, runtime: str) -> None:
        """Start serving with ``scorer`` (call on the event loop)."""
        self.scorer = scorer
        self.runtime = runtime
        self.precision, self.precision_reason = precision_of(scorer)
        self.metrics.precision.labels(self.precision).set(1)
        self.batcher = MicroBatcher(scorer, max_wait_s=self.config.max_wait_s, refill_s=self.config.refill_s,
                                    pass_chars=self.config.pass_chars, unit_chars=self.config.unit_chars,
                                    workers=self.config.workers or (serve_workers() if runtime == "onnx" else 1),
                                    observe=self.metrics.observe_batch)
        self.batcher.start()
        self.metrics.queue_depth.set_function(lambda: self.batcher.depth if self.batcher else 0)
        self.metrics.ready.set(1)

    @property
    def ready(self) -> bool:
        """The model is loaded and the service is not draining."""
        return self.scorer is not None and not self.draining

    async def drain(self) -> int:
        """Stop taking requests and wait (up to ``drain_s``) for those in flight; returns how many were left."""
        self.draining = True
        self.metrics.ready.set(0)
        deadline = time.monotonic() + self.config.drain_s
        while self.inflight and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        left = self.inflight
        if self.batcher is not None:
            await self.batcher.close(abandon=True)  # what is still queued is answered 503 now, not after its score
        return left

    # ---------------------------------------------------------------- the application

    def app(self) -> web.Application:
        """The aiohttp application (routes and middlewares)."""
        app = web.Application(middlewares=[self._middleware], client_max_size=self.config.max_body_bytes)
        app.router.add_post("/v1alpha1/comments:analyze", self.analyze, expect_handler=self._expect)
        app.router.add_post("/v1/score", self.score_batch, expect_handler=self._expect)
        app.router.add_post("/v1/model:score", self.model_score, expect_handler=self._expect)
        app.router.add_get("/v1/model", self.model_info)
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/readyz", self.readyz)
        app.router.add_get("/metrics", self.metrics_page)
        app.router.add_get("/$discovery/rest", self.discovery)
        return app

    async def _expect(self, request: web.Request) -> web.StreamResponse | None:
        """``Expect: 100-continue``: a body announced over ``max_body_bytes``, or a request the key check refuses, is
        answered before the body is sent (aiohttp's own handler said "100 Continue" to anyone); otherwise "100
        Continue", as aiohttp does. A refusal here never reaches the middleware, so it is counted here
        (``modbot_serve_requests_total`` and the latency histogram, as the middleware counts every other answer)."""
        started = time.perf_counter()
        if request.content_length is not None and request.content_length > self.config.max_body_bytes:
            resp = _error(413, f"Request payload too large: the limit is {self.config.max_body_bytes} bytes.",
                          "INVALID_REQUEST")
            return self._refused_early(request, resp, started)
        try:  # no key, over its rate, draining, a foreign Host: refused before the client sends its body
            self._admit(request)
            request["modbot_admitted"] = True  # the middleware does not check (or count) it again
        except ApiError as exc:
            refused = web.json_response(exc.body(), status=exc.code, headers=exc.headers)
            return self._refused_early(request, refused, started)
        if request.headers.get("Expect", "").lower() != "100-continue":  # in the error shape, as every answer
            unknown = _error(417, "Only 'Expect: 100-continue' is understood; send the request without this Expect "
                                  "header.", "INVALID_REQUEST")
            return self._refused_early(request, unknown, started)
        if request.version >= (1, 1):
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # as aiohttp's own handler resets it
        return None

    def _refused_early(self, request: web.Request, response: web.StreamResponse,
                       started: float) -> web.StreamResponse:
        """``response`` (a refusal of :meth:`_expect`, before the body) with its connection closed, counted in the
        metrics under the request's endpoint and status."""
        response.force_close()
        route = request.match_info.route.resource
        endpoint = route.canonical if route is not None else "unmatched"
        self.metrics.requests.labels(endpoint, str(response.status)).inc()
        self.metrics.latency.labels(endpoint).observe(time.perf_counter() - started)
        return response

    @web.middleware
    async def _middleware(self, request: web.Request,
                          handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        route = request.match_info.route.resource
        endpoint = route.canonical if route is not None else "unmatched"
        started = time.perf_counter()
        self.inflight += 1
        self.metrics.inflight.inc()
        try:
            response = await self._answer(request, handler)
        finally:
            self.inflight -= 1
            self.metrics.inflight.dec()
        self.metrics.requests.labels(endpoint, str(response.status)).inc()
        self.metrics.latency.labels(endpoint).observe(time.perf_counter() - started)
        return response

    async def _answer(self, request: web.Request,
                      handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        try:
            over = getattr(request.protocol, "over_cap", "")
            if over:
                err = self._over_total() if over == "total" else self._over_cap(request)
                resp = web.json_response(err.body(), status=err.code, headers={"Retry-After": "1"})
                resp.force_close()
                return resp
            if request.path not in OPEN_PATHS and not request.get("modbot_admitted"):
                self._admit(request)
            return await handler(request)
        except ApiError as exc:
            return web.json_response(exc.body(), status=exc.code, headers=exc.headers)
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"Request payload too large: the limit is {self.config.max_body_bytes} bytes.",
                          "INVALID_REQUEST")
        except web.HTTPNotFound:
            return _error(404, f"Method not found: {request.method} {request.path[:80]}.")
        except web.HTTPMethodNotAllowed:
            return _error(405, f"Method {request.method} is not allowed on {request.path[:80]}.")
        except Exception as exc:  # noqa: BLE001 - one bad request must not stop the service; no text is logged
            log.error("internal error on %s: %s", request.path[:80], type(exc).__name__)
            return _error(500, "Internal error.")

    def _over_total(self) -> ApiError:
        limit = self.config.max_connections
        return ApiError(503, f"The service holds at most {limit} connections open at once (--max-connections), "
                             "all in use; retry shortly or on another replica.")

    def _over_cap(self, request: web.Request) -> ApiError:
        limit = self.config.max_connections_per_address
        who = client_key(request.remote) if request.remote else "your address"
        return ApiError(429, f"Too many connections from {who}: at most {limit} open at once per client address "
                             "(an IPv6 /64 is one client). Reuse a connection (keep-alive) or close idle ones.")

    def _admit(self, request: web.Request) -> None:
        """Key check, rate limit, and refusal while loading or draining (raises :class:`ApiError`)."""
        if self.draining:
            raise ApiError(503, "The service is shutting down; retry on another replica.",
                           headers={"Retry-After": "1", "Connection": "close"})
        name = "anonymous"
        if not self.keys:
            self._refuse_non_local(request)
        if self.keys:
            presented_all = presented_keys(request)
            presented = presented_all[0] if len(presented_all) == 1 else None
            found = self.keys.identify(presented) if len(presented_all) <= 1 else None
            if found is None:
                # a flood of wrong or missing keys is limited per client address, as a key's requests are
                wait = self.limiter.take(f"address:{client_key(request.remote) if request.remote else 'unknown'}")
                if wait > 0:
                    raise ApiError(429, f"Quota exceeded for this client: {self.config.rate:g} requests per second.",
                                   headers={"Retry-After": RateLimiter.retry_after(wait)})
                if len(presented_all) > 1:
                    raise ApiError(400, f"The request presents {len(presented_all)} different API keys (in ?key=, "
                                   "X-Goog-Api-Key or Authorization: Bearer); pass one.")
                if presented is None:
                    raise ApiError(403, "The request is missing a valid API key.")
                raise ApiError(400, "API key not valid. Please pass a valid API key.")
            name = found
        wait = self.limiter.take(name)
        if wait > 0:
            raise ApiError(429, f"Quota exceeded for this API key: {self.config.rate:g} requests per second.",
                           headers={"Retry-After": RateLimiter.retry_after(wait)})
        if self.scorer is None:
            raise ApiError(503, "The model is loading; retry shortly." if self.load_error is None
                           else f"The model could not be loaded: {self.load_error}", headers={"Retry-After": "1"})

    @staticmethod
    def _refuse_non_local(request: web.Request) -> None:
        """Without API keys the service answers only requests addressed to this host: a ``Host`` that is not a
        loopback name (what DNS rebinding sends: a web page's own name resolved to 127.0.0.1) and an ``Origin``
        that is not a loopback page (a cross-site form or ``fetch`` from any page the operator visits) are refused
        with 403. Clients that are not browsers (curl, the bots, plugins) send a loopback ``Host`` and no ``Origin``.

        Raises:
            ApiError: 403.
        """
        host = request.headers.get("Host")
        if host is not None and not is_loopback_host(_host_name(host)):
            raise ApiError(403, "Without an API key configured the service answers only requests addressed to "
                                "localhost (this Host is not a loopback name); configure keys to serve it through a "
                                "proxy or under another name.")
        origin = request.headers.get("Origin")
        if origin is not None and not is_loopback_host(_host_name(origin.split("://", 1)[-1].split("/", 1)[0])):
            raise ApiError(403, "Cross-site request refused: without an API key configured the service answers "
                                "no web page but one served from localhost.")

    async def _read(self, chars: int, items: Sequence[_T], read: Callable[[_T], _R]) -> list[_R]:
        """``[read(item) for item in items]``, inline for small requests, in a worker thread past
        :data:`READ_INLINE_CHARS` characters. A request cancelled meanwhile (its client hung up, or the service
        stopped) stops being read at the next item, or is never read if its thread had not started: a client that
        sent 1 MB of texts and hung up left seconds of CPU each to the worker threads, and the requests of everyone
        else waited behind them."""
        if chars <= READ_INLINE_CHARS:
            return [read(item) for item in items]
        gone = threading.Event()

        def read_all() -> list[_R]:
            out: list[_R] = []
            for item in items:
                if gone.is_set():
                    raise _Abandoned  # nobody waits for the answer any more
                out.append(read(item))
            return out

        try:
            return await asyncio.to_thread(read_all)
        except asyncio.CancelledError:
            gone.set()
            raise

    async def _json(self, request: web.Request, texts: Callable[[tuple[str | int, ...]], bool] | None = None,
                    then: Callable[[Any], Any] | None = None) -> Any:
        """The request body as JSON (strict: ``NaN``/``Infinity`` literals, which Python's json accepts but JSON
        does not, are refused like any other invalid payload, so nothing non-JSON is echoed back in an answer), and
        with ``texts`` refused when it holds a lone surrogate outside the strings ``texts(path)`` says are texts
        (:func:`_refuse_lone_surrogates`); ``then(obj)`` instead of ``obj`` when given (the handler's own walk over
        it). A body over :data:`PARSE_INLINE_BYTES` is decoded and walked in a worker thread, so the event loop
        keeps answering everyone else meanwhile.

        Raises:
            ApiError: 400 ``INVALID_REQUEST`` for a body that is not UTF-8 or not JSON, or nested too deeply, or a
                lone surrogate outside ``texts``; whatever ``then`` raises; 408 when the body has not arrived within
                ``body_timeout_s``.
        """
        try:
            async with asyncio.timeout(self.config.body_timeout_s):  # no task of its own, unlike wait_for
                body = await request.read()
        except TimeoutError:
            raise ApiError(408, f"The request body did not arrive within {self.config.body_timeout_s:g} s.",
                           headers={"Connection": "close"}) from None
        encoding = request.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            body = await asyncio.to_thread(_inflate, body, encoding, self.config.max_body_bytes)
        if len(body) <= PARSE_INLINE_BYTES:
            return _parse_json(body, texts, then)
        return await asyncio.to_thread(_parse_json, body, texts, then)

    async def _score(self, plans: Sequence[tuple[str, ...]], model: Scorer | None = None) -> list[Scores]:
        """Scores of ``plans`` from the batcher (with ``model`` instead of the service's scorer when given: one of
        the models of a scorer that routes languages).

        Raises:
            ApiError: 503 + ``Retry-After`` (the wait would pass the request's limit, draining), 504, or 500 (the model
                failed on this request's texts: final, never worth another try)."""
        assert self.batcher is not None
        wait = self.batcher.wait_estimate_s(plans)
        if wait > self.config.request_timeout_s:  # it would be scored only after its 504: refuse it now, unscored
            raise ApiError(503, f"The service has about {wait:.0f} s of scoring to do before this request's end, "
                                f"longer than its {self.config.request_timeout_s:g} s limit: retry later or on another "
                                "replica, or send less text per request.",
                           headers={"Retry-After": str(max(1, min(60, math.ceil(wait - self.config.request_timeout_s))))})
        try:
            async with asyncio.timeout(self.config.request_timeout_s):
                return await self.batcher.score(plans, model)
        except BatcherClosed:
            raise ApiError(503, "The service is shutting down; retry on another replica.",
                           headers={"Retry-After": "1"}) from None
        except TimeoutError:
            raise ApiError(504, f"Scoring took longer than {self.config.request_timeout_s:g} s.") from None
        except ApiError:
            raise
        except Exception as exc:  # noqa: BLE001 - the scorer failed on this request (logged by the batcher)
            # final, not 503: the batcher has scored this request apart from those batched with it, so the model
            # failed on its own texts, and another try fails alike (a client retrying a 503 for its whole timeout
            # held its caller that long for nothing)
            raise ApiError(500, f"The model failed on this request's text ({type(exc).__name__}); another try "
                                "would fail alike.") from exc

    # ---------------------------------------------------------------- handlers

    async def analyze(self, request: web.Request) -> web.Response:
        """``POST /v1alpha1/comments:analyze``: Perspective's AnalyzeComment."""
        assert self.scorer is not None
        obj = await self._json(request, _comment_text)
        req = parse_analyze(obj, self.scorer.labels, max_comment_bytes=self.config.max_comment_bytes)
        policy = self.policies["default"]
        model_languages = tuple(getattr(self.scorer, "languages", None) or ())
        first_attr = req.attributes[0][0]
        if req.languages and model_languages and not req.allow_unsupported_languages:
            foreign = [x for x in req.languages if x not in model_languages]
            if foreign:
                raise language_error(first_attr, foreign, detected=False)
        # With allowUnsupportedLanguages the check's answer is never used: only detectedLanguages is read, from the
        # whole text (one detector pass instead of one per line and sentence; docs/performance.md, issue 27).
        [(reading, spans)] = await self._read(len(req.text), [req.text], lambda text: (
            read_text(text, policy, model_languages or None,
                      check_language=not req.languages and not req.allow_unsupported_languages, want_detected=True),
            sentence_spans(text) if req.span_annotations else []))
        # the language the answer names (stated, else detected) picks the model of a routing service
        model = self._model_for(req.languages or ([reading.detected] if reading.detected else []))
        route = getattr(self.scorer, "route", None)
        if model is None and spans and route is not None and reading.plan:
            # each span is scored as a text of its own: with the comment's model, as the bots score a message's
            # sentences with the model its whole text is routed to (a short sentence alone would be routed apart)
            [model] = await self._read(sum(map(len, reading.plan)), [reading.plan], route)
        if not reading.plan:
            raise ApiError(400, "Comment text was too short: nothing left to score.", "COMMENT_EMPTY")
        detected = reading.detected
        # Perspective decides by the language of the whole comment: a comment detected as one the model reads is
        # scored whole even when one of its lines is in another language (the bots score it too, and only ask a
        # review); that language is then listed in detectedLanguages after the comment's own.
        if (reading.score_status == "unsupported_language" and not req.allow_unsupported_languages
                and detected not in model_languages):
            raise language_error(first_attr, [reading.language or detected or "und"], detected=True)
        found = [x for x in (detected, reading.language) if x]
        plans = [reading.plan, *((for_scoring(req.text[b:e]),) for b, e in spans)]
        scored = await self._score(plans, model)
        languages = list(req.languages) or ([detected] if detected else list(model_languages[:1]))
        body = analyze_response(req, scored[0].values,
                                [(b, e, s.values) for (b, e), s in zip(utf16_spans(req.text, spans), scored[1:],
                                                                       strict=True)],
                                languages, list(dict.fromkeys(found)))
        return web.json_response(body)

    def _texts(self, obj: Any, *, ids: bool) -> tuple[list[Any], list[str]]:
        if not isinstance(obj, dict) or not isinstance(obj.get("texts"), list):
            raise ApiError(400, "Expected {\"texts\": [...]}.", "INVALID_REQUEST")
        items = obj["texts"]
        if not items:
            raise ApiError(400, "'texts' is empty.", "COMMENT_EMPTY")
        if len(items) > MAX_TEXTS_PER_REQUEST:
            raise ApiError(400, f"{len(items)} texts: at most {MAX_TEXTS_PER_REQUEST} per request.",
                           "INVALID_REQUEST")
        keys: list[Any] = []
        texts: list[str] = []
        for n, item in enumerate(items):
            ident: Any = n
            if ids and isinstance(item, dict):
                ident, item = item.get("id", n), item.get("text")
                if holds_underflow(ident):  # echoed as 0.0 it would be another id
                    raise ApiError(400, f"texts[{n}].id: Number out of range of a 64-bit float (it would be echoed "
                                   "as 0).", "INVALID_REQUEST")
            if not isinstance(item, str):
                raise ApiError(400, f"texts[{n}]: expected a string" + (" or {\"id\", \"text\"}." if ids else "."),
                               "INVALID_REQUEST")
            if len(item) > MAX_TEXT_CHARS:
                raise ApiError(400, f"texts[{n}]: {len(item)} characters, the limit is {MAX_TEXT_CHARS}.",
                               "COMMENT_TOO_LONG")
            keys.append(ident)
            texts.append(item)
        return keys, texts

    async def score_batch(self, request: web.Request) -> web.Response:
        """``POST /v1/score``: the native batch endpoint (the ``score`` job's contract per text)."""
        assert self.scorer is not None

        # the ids are walked (numbers that underflow) with the body, in a worker thread for a large one
        obj, (ids, texts) = await self._json(request, _batch_text, lambda o: (o, self._texts(o, ids=True)))
        name = obj.get("policy")
        if name is not None and not isinstance(name, str):  # ``"policy": 1`` is not the policy named "1"
            raise ApiError(400, f"Invalid value at 'policy': expected a policy name (a string), got {_json_kind(name)}; "
                           f"the service has {', '.join(self.policies)}.", "INVALID_REQUEST")
        if name is not None and name not in self.policies:
            raise ApiError(400, f"Unknown policy {name[:40]!r}: the service has {', '.join(self.policies)}.",
                           "INVALID_REQUEST")
        policy = self.policies[name or "default"]
        routed = await self._read(sum(map(len, texts)), texts, lambda t: self._read_routed(t, policy))
        readings = [r for r, _ in routed]
        scorable = [r.plan for r in readings if r.plan]
        hints = [h for r, h in routed if r.plan]
        scored = iter(await self._score_routed(scorable, hints)) if scorable else iter(())
        scores = [next(scored) if r.plan else None for r in readings]
        decisions: list[Decision] = []
        if name is not None:
            # judged as the bots judge a message's scores: identity_attack on a text that names no identity is held
            # to [identity_target] untargeted (the lexicon is read, and the text normalised, only when the score
            # reaches a tier); in a worker thread for a large request, as the reading
            decisions = await self._read(sum(map(len, texts)), list(zip(texts, readings, scores, strict=True)),
                                         lambda item: _decide_text(policy, *item))
        results = []
        for n, (ident, r, s) in enumerate(zip(ids, readings, scores, strict=True)):
            out: dict[str, Any] = {"id": ident,
                                   "scores": s.as_dict() if s else {label: None for label in LABELS},
                                   "score_status": r.score_status, "language": r.language}
            if name is not None:
                d = decisions[n]
                out["labels"], out["flagged"] = list(d.labels), d.flagged
                # what the bot would do, and why: a text flagged with no label (an unsupported language sent to
                # review by review_suspect) said nothing otherwise
                out["action"], out["reasons"] = d.strongest.label, [a.reason for a in d.actions]
            results.append(out)
        return web.json_response({"model": self.scorer.name, "version": self.scorer.version, "results": results})

    async def model_score(self, request: web.Request) -> web.Response:
        """``POST /v1/model:score``: normalised texts scored as given (the remote scorer's call); with ``"plans"``
        (lists of indices into ``texts``, a message's whole text first, then its pieces) each plan is scored whole
        and answered combined (``plan_scores``, ``plan_models``), so a service that routes languages between two
        models routes each message whole, as :func:`bot.core.pieces.score_plans` does in process."""
        assert self.scorer is not None
        obj, (_, texts) = await self._json(request, then=lambda o: (o, self._texts(o, ids=False)))
        for n, text in enumerate(texts):
            # the texts go to the model as they are, and its tokenizer refuses a lone surrogate (TypeError), which
            # would fail the whole forward pass, every request batched with this one; for_scoring never leaves one
            m = _LONE_SURROGATE.search(text)
            if m is not None:
                raise ApiError(400, f"texts[{n}]: a lone surrogate (U+{ord(m.group()):04X}) at character {m.start()}"
                               ": not Unicode text; normalise it (bot.core.normalize.for_scoring) first.",
                               "INVALID_REQUEST")
        plans = _plans(obj.get("plans"), len(texts))
        hints = _plan_languages(obj.get("plan_languages"), len(plans) if plans is not None else None)
        scored = (await self._score([(t,) for t in texts]) if plans is None
                  else await self._score_routed([tuple(texts[i] for i in plan) for plan in plans], hints))
        # the model that scored each text or plan: one service may route texts between two models
        # (MODBOT_ROUTE_MODEL), and "model" is then the pair's name, as GET /v1/model gives it
        which, what, lacks = (("models", "scores", "text_missing") if plans is None
                              else ("plan_models", "plan_scores", "plan_missing"))
        # the labels each text's (plan's) model lacks: a service routing between two models that lack different
        # labels has no one list for a request; "missing" (what older bots read, for every text) is what any of
        # them lacks, so an older bot never requires a label of a text whose model does not produce it
        each = [[label for label in LABELS if label in s.missing] for s in scored]
        return web.json_response({"model": self.scorer.name, "version": self.scorer.version,
                                  which: [s.model or self.scorer.name for s in scored],
                                  "labels": list(self.scorer.labels),
                                  "languages": list(getattr(self.scorer, "languages", None) or ()),
                                  "routes": self._routes(), "routing": self._routing(),
                                  "missing": [label for label in LABELS if any(label in m for m in each)],
                                  lacks: each,
                                  what: [dict(s.values) for s in scored]})

    async def discovery(self, request: web.Request) -> web.Response:
        """``GET /$discovery/rest?version=v1alpha1``: Perspective's discovery document, rooted at this service
        (:func:`bot.serve.perspective.discovery_document`): the URL the request came to, ``https`` when a proxy
        says so (``X-Forwarded-Proto``). Open like the probes: it holds no text and names no model."""
        version = request.query.get("version", "v1alpha1")
        if version != "v1alpha1":
            raise ApiError(404, f"Discovery document not found for API version {version[:20]!r}: this service "
                                "serves v1alpha1.")
        forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
        scheme = "https" if forwarded == "https" else request.scheme
        host = request.headers.get("Host", "").strip()
        if not host:  # HTTP/1.0 without Host: the address and port this connection came to
            sock = request.transport.get_extra_info("sockname") if request.transport is not None else None
            host = (f"[{sock[0]}]:{sock[1]}" if ":" in sock[0] else f"{sock[0]}:{sock[1]}") if sock else "127.0.0.1"
        if not _HOST_HEADER.fullmatch(host):
            raise ApiError(400, "The Host header is not a host name or address with an optional port.",
                           "INVALID_REQUEST")
        # never cached: the document names the address its request came to, and a shared cache would hand one
        # client's Host to every other (whose key and comments would then go there)
        return web.json_response(discovery_document(f"{scheme}://{host}/"),
                                 headers={"Cache-Control": "no-store", "Vary": "Host, X-Forwarded-Proto"})

    async def model_info(self, request: web.Request) -> web.Response:
        """``GET /v1/model``: what the service scores with."""
        assert self.scorer is not None
        return web.json_response(self._info())

    async def _score_routed(self, plans: Sequence[tuple[str, ...]],
                            hints: Sequence[str | None] | None) -> list[Scores]:
        """Scores of ``plans`` (:meth:`_score`), each plan with a language in ``hints`` (its raw text's, the bot's
        ``route_hint``) that the main model of a routing service does not read and its second model does scored by
        that model (:meth:`_model_for`), as :meth:`bot.scoring.routing.LanguageRoutedScorer.route` routes it in
        process; the others routed by their plan. Raises as :meth:`_score`."""
        groups: dict[int, tuple[Scorer | None, list[int]]] = {}
        for n, hint in enumerate(hints or [None] * len(plans)):
            model = self._model_for([hint]) if hint else None
            groups.setdefault(id(model), (model, []))[1].append(n)
        if len(groups) == 1:
            [(model, _)] = groups.values()
            return await self._score(plans, model)
        out: list[Scores | None] = [None] * len(plans)
        answers = await asyncio.gather(*(self._score([plans[n] for n in idx], model)
                                         for model, idx in groups.values()))
        for (_, idx), scored in zip(groups.values(), answers, strict=True):
            for n, s in zip(idx, scored, strict=True):
                out[n] = s
        return [s for s in out if s is not None]

    def _model_for(self, languages: Sequence[str]) -> Scorer | None:
        """The model that scores a comment in ``languages`` (those its client stated, Perspective's ``languages``,
        else the one detected in the whole comment: the answer's ``languages``), when the service routes languages
        between two models (:class:`bot.scoring.routing.LanguageRoutedScorer`) and the main model reads none of
        them: the second model, which reads one, as Perspective scores a comment in the language it is given. The
        routing itself goes by the detector over the normalised plan, which calls short text nothing and reads
        emoji spelt out in English words, so a short or emoji-rich French comment went to the English model.
        ``None`` (the routing decides) otherwise: no language, one the main model reads, or no routing."""
        main, second = getattr(self.scorer, "main", None), getattr(self.scorer, "second", None)
        if not languages or not self._routes() or main is None or second is None:
            return None
        main_languages = tuple(getattr(main, "languages", None) or ())
        second_languages = tuple(getattr(second, "languages", None) or ())
        if any(x in main_languages for x in languages) or not any(x in second_languages for x in languages):
            return None
        model: Scorer = second
        return model

    def _languages_for(self, plan: tuple[str, ...], hint: str | None = None) -> Sequence[str] | None:
        """The languages of the model that scores ``plan`` (a text's scoring plan), as the bots check a message in
        process (:meth:`bot.core.service.ModerationService._languages`): with a model that routes languages
        (:class:`bot.scoring.routing.LanguageRoutedScorer`) those of the model ``route(plan)`` picks, not both
        models' together, so a French line in a text the English model scores is ``unsupported_language``;
        otherwise the scorer's ``languages`` (``None`` or empty: not declared, no check). ``hint``: the text's
        ``route_hint`` (its raw text's language), which routes it too."""
        languages: Sequence[str] | None = getattr(self.scorer, "languages", None)
        route = getattr(self.scorer, "route", None)
        if languages and route is not None:
            model = route(plan, hint) if hint is not None else route(plan)
            languages = getattr(model, "languages", None) or languages
        return languages

    def _read_routed(self, text: str, policy: Policy) -> tuple[Reading, str | None]:
        """:func:`bot.serve.reading.read_text` of ``text`` as the bots read a message, with its ``route_hint`` (the
        language its raw text routes it by, on a scorer that routes languages, else ``None``), which picks both
        the model that scores it and the languages its check reads."""
        hint_of = getattr(self.scorer, "route_hint", None)
        hint = hint_of(text) if hint_of is not None else None
        return read_text(text, policy, lambda plan: self._languages_for(plan, hint)), hint

    def _routes(self) -> bool:
        """The model routes each plan to one of two models by language (``MODBOT_ROUTE_MODEL``): a remote scorer
        then sends whole plans (``/v1/model:score``'s ``plans``), never pieces to be routed one by one."""
        return getattr(self.scorer, "route", None) is not None

    def _routing(self) -> dict[str, Any] | None:
        """How the model routes (``None`` when it does not): each model's languages and the detector's thresholds
        (:class:`bot.scoring.routing.LanguageRoutedScorer`), so a remote scorer checks each message's languages
        against the model it is routed to, as the bot does in process (:meth:`bot.core.service.ModerationService
        ._languages`), not against both models' together."""
        main, second = getattr(self.scorer, "main", None), getattr(self.scorer, "second", None)
        if not self._routes() or main is None or second is None:
            return None
        return {"main_languages": list(getattr(main, "languages", None) or ()),
                "second_languages": list(getattr(second, "languages", None) or ()),
                "min_letters": getattr(self.scorer, "min_letters", 20),
                "min_confidence": getattr(self.scorer, "min_confidence", 0.9)}

    def _info(self) -> dict[str, Any]:
        assert self.scorer is not None
        return {"name": self.scorer.name, "version": self.scorer.version, "labels": list(self.scorer.labels),
                "languages": list(getattr(self.scorer, "languages", None) or ()), "routes": self._routes(),
                "routing": self._routing(), "runtime": self.runtime,
                "precision": self.precision, "precision_reason": self.precision_reason,
                "attributes": [a for a, label in ATTRIBUTES.items() if label in self.scorer.labels]}

    async def healthz(self, request: web.Request) -> web.Response:
        """``GET /healthz``: 200 whenever the process accepts requests."""
        return web.json_response({"status": "ok"})

    async def readyz(self, request: web.Request) -> web.Response:
        """``GET /readyz``: 200 with the model's name once loaded; 503 while loading, after a failed load, or
        while draining."""
        if not self.ready:
            state = "draining" if self.draining else ("failed" if self.load_error else "loading")
            return web.json_response({"status": state}, status=503)
        return web.json_response({"status": "ready", **self._info()})

    async def metrics_page(self, request: web.Request) -> web.Response:
        """``GET /metrics``: Prometheus text exposition."""
        return web.Response(body=generate_latest(self.metrics.registry),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})


class _QuietHandler(RequestHandler):
    """aiohttp's connection handler, answering a request it cannot parse (a malformed request line, a URL or
    header over its limits) in Google's error shape, echoing nothing of the request: aiohttp's own answer quotes
    the start of the request line, whose ``?key=`` is an API key.

    It also counts its connection against the client address's cap (:class:`ConnectionCap`, the server's
    ``connection_cap``): a connection over it is marked ``over_cap`` (its request is answered 429) and closed
    after :data:`REFUSED_GRACE_S` at the latest."""

    over_cap = ""  # why the connection was refused ("address", "total"), "" when admitted
    _capped: str | None = None
    _refused_close: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        cap: ConnectionCap | None = getattr(self._manager, "connection_cap", None)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else None
        if cap is None or address is None:
            return
        if cap.admit(address):
            self._capped = address
        else:
            self.over_cap = cap.refused_for or "address"
            grace = min(REFUSED_GRACE_S, self._keepalive_timeout or REFUSED_GRACE_S)  # never longer than idle
            self._refused_close = self._loop.call_later(grace, self.force_close)

    def connection_lost(self, exc: BaseException | None) -> None:
        cap: ConnectionCap | None = getattr(self._manager, "connection_cap", None)
        if cap is not None and self._capped is not None:
            cap.release(self._capped)
            self._capped = None
        if self._refused_close is not None:
            self._refused_close.cancel()
            self._refused_close = None
        super().connection_lost(exc)

    def handle_error(self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        super().handle_error(request, status, exc, None)  # logs (through _hide_request_line) and checks the writer
        code = status if status in STATUS else (400 if 400 <= status < 500 else 500)
        text = "Malformed HTTP request." if code < 500 else "Internal error."
        resp = web.json_response(ApiError(code, text).body(), status=code)
        resp.force_close()
        return resp


class _QuietServer(web.Server):
    """:class:`aiohttp.web.Server` whose connections are handled by :class:`_QuietHandler`, counted against
    ``connection_cap`` (set by :class:`_QuietRunner`)."""

    connection_cap: ConnectionCap | None = None

    def __call__(self) -> RequestHandler:
        return _QuietHandler(self, loop=self._loop, **self._kwargs)


class _QuietRunner(web.AppRunner):
    """:class:`aiohttp.web.AppRunner` serving through :class:`_QuietServer`, whose connections count against
    ``connection_cap`` (``None``: no cap)."""

    def __init__(self, app: web.Application, *, connection_cap: ConnectionCap | None = None, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._connection_cap = connection_cap

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _QuietServer
        assert isinstance(server, _QuietServer)
        server.connection_cap = self._connection_cap
        return server


#: A ``Host`` header the discovery document may name: a DNS name or IPv4 address, or a bracketed IPv6 address, with
#: an optional port; nothing that could add a path, a query or user info to the URL built from it.
_HOST_HEADER = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def _inflate(body: bytes, encoding: str, limit: int) -> bytes:
    """``body`` sent with ``Content-Encoding: gzip`` (every member, as ``gzip.decompress`` reads it) or ``deflate``
    (zlib, or raw deflate as some clients send), inflated to at most ``limit`` bytes (the body limit applies to what
    is inflated; a bomb is cut there, never inflated whole).

    Raises:
        ApiError: 400 for another encoding, a body that does not inflate or bytes after its end; 413 over ``limit``.
    """
    if encoding in ("gzip", "x-gzip"):
        tries, members = [zlib.MAX_WBITS | 16], True
    elif encoding == "deflate":
        tries, members = [zlib.MAX_WBITS, -zlib.MAX_WBITS], False
    else:
        raise ApiError(400, f"Content-Encoding {encoding[:40]!r} is not supported: send the body as is, or gzip or "
                            "deflate it.", "INVALID_REQUEST")
    broken = ApiError(400, f"Invalid {encoding} payload: the body does not inflate.", "INVALID_REQUEST")
    for wbits in tries:
        out = bytearray()
        rest = body
        try:
            while True:
                inflater = zlib.decompressobj(wbits)
                out += inflater.decompress(rest, limit + 1 - len(out))
                if len(out) > limit or inflater.unconsumed_tail:
                    raise ApiError(413, f"Request payload too large: the limit is {limit} bytes (inflated).")
                if not inflater.eof:
                    raise broken
                rest = inflater.unused_data
                if not rest:
                    return bytes(out)
                if not members:  # bytes after the deflate stream: not what a proxy that inflates it would read
                    raise ApiError(400, f"Invalid {encoding} payload: bytes after the end of the stream.",
                                   "INVALID_REQUEST")
        except zlib.error:
            if out:  # a later gzip member (or trailing bytes) does not inflate
                raise ApiError(400, f"Invalid {encoding} payload: bytes after the end of a member that are not "
                                    "another member.", "INVALID_REQUEST") from None
            continue
    raise broken


def _host_name(host: str) -> str:
    """The name or address of a ``Host`` header value (``"localhost:8080"`` -> ``"localhost"``, ``"[::1]:80"`` ->
    ``"::1"``)."""
    host = host.strip()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def presented_keys(request: web.BaseRequest) -> list[str]:
    """The distinct non-empty API keys a request presents, in order: every ``?key=`` value, every
    ``X-Goog-Api-Key`` header, every ``Authorization: Bearer`` token. More than one is refused by the key check
    (which one's quota, which one's identity?), so a proxy or client adding a second key cannot pick silently."""
    found = [*request.query.getall("key", []), *request.headers.getall("X-Goog-Api-Key", [])]
    found += [a[7:].strip() for a in request.headers.getall("Authorization", []) if a.lower().startswith("bearer ")]
    out: list[str] = []
    for key in found:
        if key and key not in out:
            out.append(key)
    return out


def precision_of(scorer: Scorer) -> tuple[str, str]:
    """``(precision, why)`` of a loaded scorer: its ``precision`` / ``precision_reason``
    (:func:`bot.scoring.onnx_scorer.load_embedded`), else ``bf16`` under torch autocast, ``int8`` for a torch
    model quantised with ``MODBOT_INT8`` (version ``+int8``), or ``fp32``."""
    precision = getattr(scorer, "precision", None)
    if isinstance(precision, str):
        return precision, str(getattr(scorer, "precision_reason", "") or "")
    if getattr(scorer, "bf16", False):
        return "bf16", "MODBOT_BF16 (torch autocast)"
    if str(getattr(scorer, "version", "")).endswith("+int8"):
        return "int8", "MODBOT_INT8 (torch dynamic quantisation)"
    return "fp32", ""


def _decide_text(policy: Policy, text: str, reading: Reading, scores: Scores | None) -> Decision:
    """The policy's decision on one ``/v1/score`` text from its scores, as :func:`bot.core.judging.judge` makes it
    for a message without rule hits, raid mode or channel: with the identity-target check
    (:func:`bot.core.rules.identity.untargeted_hit`) over the text's normalised parts."""
    from bot.core.judge import decide
    from bot.core.normalize import normalize
    from bot.core.pieces import chunks
    from bot.core.rules.identity import untargeted_hit

    parts = (normalize(t) for t in (text, *chunks(text, policy.scoring.max_chars)))
    untargeted = untargeted_hit(policy, policy.thresholds, scores, parts) is not None
    return decide(policy, policy.thresholds, scores, (), score_status=reading.score_status, untargeted=untargeted)


def _json_kind(value: object) -> str:
    """What a JSON value is, in an error message: ``"a number (1)"``, ``"a boolean (true)"``, ``"a list"``,
    ``"an object"`` (a number or boolean is shown as JSON writes it, at most 40 characters)."""
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, int | float):
        return f"a number ({json.dumps(value)[:40]})"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _error(code: int, message: str, error_type: str | None = None) -> web.Response:
    return web.json_response(ApiError(code, message, error_type).body(), status=code)


# -------------------------------------------------------------------- process entry point


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def listen_socket(host: str, port: int) -> tuple[socket.socket | None, bool]:
    """The listening socket for ``--host``, when it must be built here: ``(socket, dual)``, or ``(None, False)`` for
    any other host (aiohttp binds it).

    ``--host ::`` (the unspecified IPv6 address, however written) means every address, IPv4 and IPv6, as it does for
    Python's ``http.server --bind ::``, Go's ``net.Listen`` and Node's ``listen``; asyncio would bind it with
    ``IPV6_V6ONLY`` set and leave every IPv4 client refused. So it is one socket with ``IPV6_V6ONLY`` cleared
    (``dual`` True), IPv4 clients arriving as ``::ffff:a.b.c.d`` (counted as that IPv4 address, :func:`client_key`);
    where the system cannot do that (``socket.has_dualstack_ipv6()`` false) it is IPv6 only and ``dual`` is False,
    which the listening line says.

    Raises:
        OSError: the address is taken or not ours (reported by :func:`main` as "cannot listen").
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None, False
    if not (isinstance(ip, ipaddress.IPv6Address) and ip.is_unspecified):
        return None, False
    dual = socket.has_dualstack_ipv6()
    sock = socket.create_server((host, port), family=socket.AF_INET6, backlog=128, dualstack_ipv6=dual)
    sock.setblocking(False)
    return sock, dual


async def serve(config: ServeConfig, keys: KeyRing, loading: Future[tuple[Scorer, str]], default_policy: Path,
                port_file: Path | None = None) -> int:
    """Run the service until SIGTERM/SIGINT: listen first (``/healthz`` answers at once, ``/readyz`` 503 until the
    model is loaded), take the model from ``loading`` (a thread started by :func:`bot.serve.options.start_loading`)
    when it is ready, then serve; on the signal drain and stop. Returns the exit code (0; 1 when the model failed
    to load)."""
    svc = ScoringService(config, keys, default_policy)
    # handler_cancellation: a request whose client hung up is cancelled, and its queued units are dropped from the
    # batcher (a cancelled future is skipped), so an abandoned request stops costing the model
    # auto_decompress off: aiohttp would inflate a gzip body on the event loop as it arrives, before the key check
    # and before the size limit (a 1 MB body of 1 GB of spaces held the loop for seconds); ScoringService._json inflates
    # it in a thread, bounded by --max-body-bytes
    runner = _QuietRunner(svc.app(), connection_cap=svc.connections, access_log=None, handle_signals=False,
                          keepalive_timeout=config.idle_timeout_s, handler_cancellation=True, auto_decompress=False)
    await runner.setup()
    every, both = listen_socket(config.host, config.port)
    site: web.BaseSite = (web.SockSite(runner, every) if every is not None
                          else web.TCPSite(runner, config.host, config.port))
    await site.start()
    server = site._server  # noqa: SLF001 - aiohttp exposes the bound sockets only here
    port = server.sockets[0].getsockname()[1] if isinstance(server, asyncio.Server) and server.sockets else config.port
    host = f"[{config.host}]" if ":" in config.host else config.host  # an IPv6 literal in a URL (RFC 3986)
    reach = "" if every is None else (" (every IPv4 and IPv6 address)" if both else
                                      " (IPv6 only: this system cannot take IPv4 on an IPv6 socket; "
                                      "--host 0.0.0.0 listens on IPv4)")
    _out(f"serve: listening on http://{host}:{port}{reach}"
         + ("" if keys else " (no API key configured: localhost only)"))
    if port_file is not None:
        tmp = port_file.with_name(port_file.name + ".tmp")
        tmp.write_text(str(port), encoding="utf-8")
        os.replace(tmp, port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    code = 0
    loader = asyncio.wrap_future(loading)
    waiters: set[asyncio.Future[Any]] = {loader, asyncio.ensure_future(stop.wait())}  # the model, or a signal
    done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    if loader in done:
        try:
            scorer, runtime = loader.result()
        except Exception as exc:  # noqa: BLE001 - reported on one line; /readyz says "failed"
            svc.load_error = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            print(f"error: the model could not be loaded: {svc.load_error}", file=sys.stderr)  # noqa: T201
            code = 1
            stop.set()
        else:
            svc.set_scorer(scorer, runtime)
            _out(f"serve: ready: model {scorer.name} {scorer.version}, runtime {runtime}, precision {svc.precision}"
                 + (f" ({svc.precision_reason})" if svc.precision_reason else "")
                 + f", {svc.batcher.workers if svc.batcher else 1} scoring pass(es) at once"
                 + (f" of {os.environ['MODBOT_ONNX_THREADS']} thread(s)" if runtime == "onnx"
                    and os.environ.get("MODBOT_ONNX_THREADS") else "")
                 + f", {time.perf_counter() - STARTED:.2f} s after start")
    await stop.wait()
    left = await svc.drain()
    await runner.cleanup()
    _out(f"serve: stopped ({left} request(s) unfinished after {config.drain_s:g} s)" if left else "serve: stopped")
    return code


class _UnreadableRequestLog:
    """A filter on aiohttp's server log. aiohttp logs a request it cannot parse (a URL over 8 KB, a bad header)
    with a traceback quoting the request line, whose ``?key=`` is an API key: each is logged as one line naming only
    the error's type, and at most one such line per :attr:`every_s` seconds (a client sending garbage in a loop wrote
    1,000 lines in 0.6 s); the next line says how many were left out meanwhile."""

    every_s = 1.0

    def __init__(self) -> None:
        self._last = -1e9
        self._skipped = 0

    def __call__(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        if now - self._last < self.every_s:
            self._skipped += 1
            return False
        exc = record.exc_info[1] if record.exc_info else None
        more = f"; {self._skipped} more since the last such line" if self._skipped else ""
        record.msg, record.args = "refused an unreadable HTTP request (%s)%s", (
            type(exc).__name__ if exc else "error", more)
        record.exc_info = record.exc_text = None
        self._last, self._skipped = now, 0
        return True


_hide_request_line = _UnreadableRequestLog()


def main(argv: Sequence[str] | None = None, loading: Future[tuple[Scorer, str]] | None = None) -> int:
    """``python -m bot serve``: returns the exit code (2 with one line on stderr for bad options or config).

    Args:
        argv: The options after ``serve``.
        loading: The model already loading (:func:`bot.serve.options.preload`, started by ``bot.cli`` before this
            module was imported); ``None``: loading starts once the options are checked.
    """
    from bot.settings import Settings, SettingsError

    args = build_parser().parse_args(list(argv or []))
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    logging.getLogger("aiohttp.server").addFilter(_hide_request_line)
    try:
        settings = serve_settings(args, Settings.from_env())
    except SettingsError as exc:
        print(f"error: serve: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    try:
        keys, policies = check_options(args, settings)
        config = ServeConfig(host=args.host, port=args.port, max_comment_bytes=args.max_comment_bytes,
                             max_body_bytes=args.max_body_bytes, rate=args.rate, burst=args.burst,
                             drain_s=args.drain_s, policies=policies, max_wait_s=args.batch_wait_ms / 1000,
                             idle_timeout_s=args.idle_timeout_s, body_timeout_s=args.body_timeout_s,
                             max_connections_per_address=args.max_connections_per_address,
                             max_connections=(default_max_connections() if args.max_connections is None
                                              else args.max_connections),
                             refill_s=REFILL_S if args.batch_refill_ms is None else args.batch_refill_ms / 1000,
                             pass_chars=args.batch_chars, unit_chars=args.batch_slice_chars,
                             workers=args.batch_workers)
        ScoringService(config, keys, settings.default_policy)  # policy files checked before anything binds
    except (KeyConfigError, ValueError, OSError) as exc:
        msg = str(exc).splitlines()[0] if not isinstance(exc, PolicyError) else " ".join(str(exc).split())
        print(f"error: serve: {msg}", file=sys.stderr)  # noqa: T201
        return 2
    if loading is None:
        loading = start_loading(model_loader(args, settings))
    try:
        return asyncio.run(serve(config, keys, loading, settings.default_policy, args.port_file))
    except OSError as exc:  # the port is taken, the address is not ours
        where = f"[{args.host}]" if ":" in args.host else args.host  # ``[::]:8080``, not ``:::8080``
        print(f"error: serve: cannot listen on {where}:{args.port}: {exc.strerror or exc}", file=sys.stderr)  # noqa: T201
        return 2


def _lone_surrogate_at(obj: Any, texts: Callable[[tuple[str | int, ...]], bool]) -> str | None:
    """The path (``clientToken``, ``texts[0].id``, ``requestedAttributes.<key>``) of the first string or object key
    in ``obj`` holding a lone UTF-16 surrogate (JSON ``"\\ud800"``), leaving out the strings ``texts(path)`` says
    are texts to score (normalised like the bots' messages); ``None`` when there is none. Iterative: ``obj`` may be
    nested as deep as the JSON decoder allows."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), obj)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if not texts(path) and _LONE_SURROGATE.search(value):
                return _path_name(path)
        elif isinstance(value, dict):
            for k, v in value.items():
                if _LONE_SURROGATE.search(k):
                    return _path_name((*path, "<key>"))
                stack.append(((*path, k), v))
        elif isinstance(value, list):
            stack.extend(((*path, n), v) for n, v in enumerate(value))
    return None


def _path_name(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the body"


def _refuse_lone_surrogates(obj: Any, texts: Callable[[tuple[str | int, ...]], bool]) -> None:
    """Raise a 400 ``INVALID_REQUEST`` naming where ``obj`` holds a lone surrogate outside its texts: such a value is
    not Unicode text, and echoed back (``clientToken``, an id, a name in an error message) it would make the answer
    invalid UTF-8 JSON for strict parsers."""
    where = _lone_surrogate_at(obj, texts)
    if where is not None:
        raise ApiError(400, f"Invalid value at '{where}': a lone UTF-16 surrogate (not Unicode text).",
                       "INVALID_REQUEST")


def _comment_text(path: tuple[str | int, ...]) -> bool:
    return path == ("comment", "text")


def _batch_text(path: tuple[str | int, ...]) -> bool:
    return (len(path) == 2 and path[0] == "texts" and isinstance(path[1], int)) or (
        len(path) == 3 and path[0] == "texts" and isinstance(path[1], int) and path[2] == "text")


def _plans(value: Any, n_texts: int) -> list[list[int]] | None:
    """``/v1/model:score``'s ``plans``: ``None`` when absent, else non-empty lists of indices into its ``n_texts``
    texts, at most :data:`MAX_TEXTS_PER_REQUEST` of them.

    Raises:
        ApiError: 400 ``INVALID_REQUEST`` naming the first wrong item.
    """
    if value is None:
        return None
    if not isinstance(value, list) or not value or len(value) > MAX_TEXTS_PER_REQUEST:
        raise ApiError(400, f"'plans': expected 1 to {MAX_TEXTS_PER_REQUEST} lists of indices into 'texts'.",
                       "INVALID_REQUEST")
    for n, plan in enumerate(value):
        if not isinstance(plan, list) or not plan or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_texts for i in plan):
            raise ApiError(400, f"plans[{n}]: expected a non-empty list of indices into 'texts' (0 to {n_texts - 1}).",
                           "INVALID_REQUEST")
    return value


def _plan_languages(value: Any, n_plans: int | None) -> list[str | None] | None:
    """``/v1/model:score``'s ``plan_languages``: ``None`` when absent, else one language code (or ``null``) per plan
    of ``plans`` (``n_plans``; ``None``: the request has no plans).

    Raises:
        ApiError: 400 ``INVALID_REQUEST``.
    """
    if value is None:
        return None
    if n_plans is None or not isinstance(value, list) or len(value) != n_plans or not all(
            x is None or (isinstance(x, str) and 0 < len(x) <= 16) for x in value):
        raise ApiError(400, "'plan_languages': expected one language code (or null) per plan of 'plans'.",
                       "INVALID_REQUEST")
    return value


class _Abandoned(Exception):
    """Ends the reading of a request that was cancelled meanwhile (:meth:`ScoringService._read`); never answered."""


def _parse_json(body: bytes, texts: Callable[[tuple[str | int, ...]], bool] | None,
                then: Callable[[Any], Any] | None = None) -> Any:
    """``body`` decoded as UTF-8 JSON (:meth:`ScoringService._json`), checked for lone surrogates outside ``texts``
    when given; ``then(obj)`` when given, else ``obj``.

    Raises:
        ApiError: 400 ``INVALID_REQUEST``; whatever ``then`` raises.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"Invalid JSON payload: not valid UTF-8 at byte {exc.start}.",
                       "INVALID_REQUEST") from None
    try:
        obj = json.loads(text, parse_constant=_not_json, parse_float=exact_float)
    except RecursionError:
        raise ApiError(400, "Invalid JSON payload received. Nested too deeply.", "INVALID_REQUEST") from None
    except ValueError as exc:
        msg = str(exc).split(":")[0][:80]
        raise ApiError(400, f"Invalid JSON payload received. {msg}.", "INVALID_REQUEST") from None
    if texts is not None:
        _refuse_lone_surrogates(obj, texts)
    return obj if then is None else then(obj)


def _not_json(literal: str) -> Any:
    """``json.loads``'s ``parse_constant``: refuse ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON, RFC 8259)."""
    raise ValueError(f"{literal} is not a JSON value")
