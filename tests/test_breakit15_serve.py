"""Hostile requests to ``python -m bot serve`` (fifteenth session's break-it pass), over real HTTP to the service in
a subprocess with the fake scorer of :mod:`tests.serve_scorers` (as strict as the real model: a batch holding a lone
surrogate fails as the ``tokenizers`` package fails it)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import aiohttp

from tests.serve_proc import read_http_answer, start_service
from tests.test_serve import ANALYZE, _ready


async def _call(s: aiohttp.ClientSession, url: str, raw: bytes) -> tuple[int, dict]:
    async with s.post(url, data=raw, headers={"Content-Type": "application/json"}) as r:
        return r.status, json.loads(await r.text())


async def test_lone_surrogate_sent_to_model_score_is_refused_and_fails_no_other_caller(tmp_path: Path):
    """``POST /v1/model:score`` takes texts "as given"; ``{"texts": ["\\ud800"]}`` reached the real tokenizer,
    which refuses a lone surrogate, and failed the whole forward pass: every request batched with it (20
    concurrent Perspective clients, measured against the real model) got 503. It is a 400 naming the text, and the
    requests around it are answered."""
    svc = start_service(tmp_path, env={"MODBOT_TEST_BATCH_DELAY_S": "0.2"})
    try:
        await _ready(svc.url)
        async with aiohttp.ClientSession() as s:
            good = [json.dumps({"comment": {"text": f"thanks for the help, number {i}"},
                                "requestedAttributes": {"TOXICITY": {}}}).encode() for i in range(8)]
            first = asyncio.ensure_future(_call(s, svc.url + ANALYZE, good[0]))  # keeps the model busy
            await asyncio.sleep(0.05)
            results = await asyncio.gather(
                *(_call(s, svc.url + ANALYZE, g) for g in good[1:4]),
                _call(s, svc.url + "/v1/model:score", b'{"texts": ["fine", "bad \\ud800 text"]}'),
                *(_call(s, svc.url + ANALYZE, g) for g in good[4:]))
            results.insert(0, await first)
    finally:
        svc.stop()
    bad = results.pop(4)
    assert [code for code, _ in results] == [200] * 8
    assert all(doc["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.01 for _, doc in results)
    assert bad[0] == 400
    assert bad[1]["error"]["details"][0]["errorType"] == "INVALID_REQUEST"
    assert "texts[1]" in bad[1]["error"]["message"] and "surrogate" in bad[1]["error"]["message"]


async def test_a_text_the_model_fails_on_fails_only_its_own_request(tmp_path: Path):
    """A forward pass serves every request queued behind the running one; when the model failed on one text of it,
    every caller of that batch got 503. The batch is scored again request by request, so only the request holding
    the failing text gets an error, and the others their scores. That error is final (500 INTERNAL, no
    ``Retry-After``): the model failed on the request's own text, and another try fails alike."""
    svc = start_service(tmp_path, env={"MODBOT_TEST_BATCH_DELAY_S": "0.2", "MODBOT_TEST_FAIL_ON": "explode"})

    def body(text: str) -> bytes:
        return json.dumps({"comment": {"text": text}, "requestedAttributes": {"INSULT": {}}}).encode()

    try:
        await _ready(svc.url)
        async with aiohttp.ClientSession() as s:
            first = asyncio.ensure_future(_call(s, svc.url + ANALYZE, body("hello there")))
            await asyncio.sleep(0.05)
            queued = await asyncio.gather(*(_call(s, svc.url + ANALYZE, body(t)) for t in
                                            ("you idiot", "please explode now", "see you at the meetup", "idiot")))
            await first
    finally:
        svc.stop()
    assert [code for code, _ in queued] == [200, 500, 200, 200]
    assert queued[1][1]["error"]["status"] == "INTERNAL"
    assert [doc["attributeScores"]["INSULT"]["summaryScore"]["value"] for code, doc in queued if code == 200] == [
        0.88, 0.01, 0.88]


def _open_until_closed(port: int, first: bytes, trickle: bytes, every_s: float, limit_s: float) -> tuple[float, bytes]:
    """Send ``first``, then ``trickle`` every ``every_s`` until the server answers or closes; ``(seconds, answer)``
    (``limit_s`` seconds and ``b""`` when it never did)."""
    sock = socket.create_connection(("127.0.0.1", port))
    started = time.monotonic()
    try:
        if first:
            sock.sendall(first)
        sock.settimeout(every_s)
        while time.monotonic() - started < limit_s:
            try:
                data = sock.recv(4096)
                return time.monotonic() - started, data or b"(closed)"
            except TimeoutError:
                pass
            except ConnectionResetError:
                # the server closed with our trickled bytes unread: the kernel answers with a reset, not a FIN
                return time.monotonic() - started, b"(closed)"
            if trickle:
                try:
                    sock.sendall(trickle)
                except OSError:
                    return time.monotonic() - started, b"(closed)"
        return limit_s, b""
    finally:
        sock.close()


def test_slow_and_idle_connections_are_closed_after_their_timeouts(tmp_path: Path):
    """Slowloris: a connection that sends nothing, one that trickles headers and one that trickles its body were
    held for ever (aiohttp's default idle timeout is an hour, and nothing bounds a body), so anyone who can reach
    the port could hold connections until the process ran out of file descriptors. An idle or half-sent request
    is closed after ``--idle-timeout-s``, a body not received within ``--body-timeout-s`` gets 408, and a normal
    request is still served."""
    svc = start_service(tmp_path, "--idle-timeout-s", "2", "--body-timeout-s", "1.5")
    port = int(svc.url.rsplit(":", 1)[1])
    body = json.dumps({"comment": {"text": "hello there"}, "requestedAttributes": {"TOXICITY": {}}}).encode()
    head = (f"POST {ANALYZE} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    try:
        asyncio.run(_ready(svc.url))
        idle = _open_until_closed(port, b"", b"", 0.25, 15)
        headers = _open_until_closed(port, f"POST {ANALYZE} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode(), b"X-A: b\r\n", 0.25, 15)
        slow_body = _open_until_closed(port, head + body[:5], b" ", 0.25, 15)
        served = _open_until_closed(port, head + body, b"", 0.25, 15)
    finally:
        svc.stop()
    assert idle[1] == b"(closed)" and 1.5 <= idle[0] < 6
    assert headers[1] == b"(closed)" and 1.5 <= headers[0] < 6
    assert slow_body[1].startswith(b"HTTP/1.1 408") and 1.0 <= slow_body[0] < 6
    assert b'"errorType"' not in slow_body[1] and b"DEADLINE_EXCEEDED" in slow_body[1]
    assert served[1].startswith(b"HTTP/1.1 200") and served[0] < 5


_HOSTILE_ECHOES = [
    (ANALYZE, b'{"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {}}, "clientToken": "t\\ud800"}', 400),
    (ANALYZE, b'{"comment": {"text": "hi"}, "requestedAttributes": {"TOX\\udc00": {}}}', 400),
    (ANALYZE, b'{"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {}}, "languages": ["\\ud800"]}', 400),
    ("/v1/score", b'{"texts": [{"id": "m\\ud800", "text": "hi"}]}', 400),
    ("/v1/score", b'{"texts": ["hi"], "policy": "p\\ud800"}', 400),
    ("/v1/score", b'{"texts": [{"id": "m\\ud83d\\ude00", "text": "hi \\ud800"}]}', 200),
]


def test_every_answer_is_utf8_json_even_when_the_request_holds_lone_surrogates(tmp_path: Path):
    """A lone surrogate escape (``"\\ud800"``) in a value the service echoes (``clientToken``, a native id, an
    attribute name, a language, a policy name) came back as ``"\\ud800"``, which is not Unicode text: strict JSON
    parsers (serde_json, Go's encoding/json replaces it) refuse or alter it, the defect ``score`` already fixed for
    ids. Such a request is a 400 whose message holds no surrogate; a valid pair (an emoji) in an id is echoed, and
    a lone surrogate in the text itself is scored as the bots score it (U+FFFD)."""
    svc = start_service(tmp_path)

    async def calls() -> list[tuple[int, str]]:
        await _ready(svc.url)
        out = []
        async with aiohttp.ClientSession() as s:
            for path, raw, _ in _HOSTILE_ECHOES:
                async with s.post(svc.url + path, data=raw, headers={"Content-Type": "application/json"}) as r:
                    out.append((r.status, await r.text()))
        return out

    try:
        answers = asyncio.run(calls())
    finally:
        svc.stop()
    for (_path, raw, status), (code, text) in zip(_HOSTILE_ECHOES, answers, strict=True):
        doc = json.loads(text)
        json.dumps(doc, ensure_ascii=False).encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
        assert code == status, (raw, text)
        if code == 400:
            assert doc["error"]["details"][0]["errorType"] in ("INVALID_REQUEST", "ATTRIBUTE_NOT_SUPPORTED")
    assert json.loads(answers[-1][1])["results"][0]["id"] == "m\U0001f600"


def test_span_offsets_count_utf16_code_units_as_perspective_does(tmp_path: Path):
    """Perspective's API reference (``SpanScore``): begin/end "are the UTF-16 codepoint range", end exclusive: what a
    JavaScript, Java or .NET client slices its string by. The service counted Unicode code points, so after an
    emoji (two UTF-16 units) every span of a Perspective client was off by one per emoji before it. The offsets
    slice the text's UTF-16 form; a lone surrogate counts one unit, as it does in the client's string."""
    svc = start_service(tmp_path)
    text = "\U0001f600\U0001f600 hello there \U0001f44b. You are an idiot!\n\U0001f308 see you tomorrow at the meetup."

    async def call() -> tuple[int, dict]:
        await _ready(svc.url)
        body = {"comment": {"text": text}, "requestedAttributes": {"INSULT": {}}, "spanAnnotations": True}
        async with aiohttp.ClientSession() as s:
            return await _call(s, svc.url + ANALYZE, json.dumps(body).encode())

    try:
        status, doc = asyncio.run(call())
    finally:
        svc.stop()
    assert status == 200
    units = text.encode("utf-16-le")
    spans = doc["attributeScores"]["INSULT"]["spanScores"]
    assert [units[2 * s["begin"]:2 * s["end"]].decode("utf-16-le") for s in spans] == [
        "\U0001f600\U0001f600 hello there \U0001f44b.", "You are an idiot!", "\U0001f308 see you tomorrow at the meetup."]
    assert [s["score"]["value"] for s in spans] == [0.01, 0.88, 0.01]
    assert spans[-1]["end"] == len(units) // 2


def test_rate_limiter_forgets_idle_clients_so_many_addresses_cannot_grow_it_without_bound():
    """Wrong-key requests are limited per client address, and the limiter kept a bucket for every name it ever saw:
    one request from each of a million IPv6 addresses (a /64 holds 2**64) kept a million buckets for the life of
    the process. Buckets that have refilled (idle clients, which lose nothing by being forgotten) are dropped once
    there are more than ``max_names``; a client that is being limited stays limited."""
    from bot.serve.keys import RateLimiter

    now = [0.0]
    limiter = RateLimiter(rate=1.0, burst=2, clock=lambda: now[0], max_names=1000)
    assert limiter.take("address:flooder") == 0.0 and limiter.take("address:flooder") == 0.0
    assert limiter.take("address:flooder") > 0  # limited now
    for i in range(50_000):
        limiter.take(f"address:2001:db8::{i:x}")
        now[0] += 0.002  # 50,000 addresses in 100 s; a bucket is full again 1 s after its one request
        if i == 200:
            assert limiter.take("address:flooder") > 0  # still limited: its bucket is not full, so it is kept
    assert len(limiter) <= 2000


def test_a_language_code_with_no_language_in_it_is_an_invalid_request():
    """``languages: ["-en"]`` or ``["-"]`` became the language ``""``, answered as LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE
    with an empty language list ("does not support request languages: "); it is INVALID_REQUEST naming the entry.
    Region subtags and case are still read (``"EN-us"`` is English)."""
    from bot.serve.perspective import ApiError, parse_analyze

    base = {"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {}}}
    for bad in (["-en"], ["en", "-"], ["_"]):
        try:
            parse_analyze({**base, "languages": bad}, ("toxicity",))
        except ApiError as exc:
            assert exc.code == 400 and exc.error_type == "INVALID_REQUEST" and "languages[" in exc.message
        else:
            raise AssertionError(f"{bad} was accepted")
    assert parse_analyze({**base, "languages": ["EN-us", " "]}, ("toxicity",)).languages == ("en",)


def _request(sock: socket.socket, path: str = "/healthz") -> bytes:
    """Send one keep-alive GET on ``sock`` and read its whole answer (headers and a ``Content-Length`` body)."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return read_http_answer(sock)


def test_connections_past_the_per_address_cap_are_answered_429_and_closed(tmp_path: Path):
    """One client address could open connections until the process ran out of file descriptors (the docs said to
    put a proxy in front). With ``--max-connections-per-address 2`` two keep-alive connections are served; a third
    from the same address gets 429 ``RESOURCE_EXHAUSTED`` naming the cap, ``Connection: close`` and is closed;
    once one of the two closes, a new connection is served; one over the cap that sends nothing is closed after
    5 s, not after the 10 s idle timeout; ``/metrics`` counts the refusals."""
    svc = start_service(tmp_path, "--max-connections-per-address", "2", "--idle-timeout-s", "10")
    port = int(svc.url.rsplit(":", 1)[1])
    try:
        asyncio.run(_ready(svc.url))
        first, second = (socket.create_connection(("127.0.0.1", port)) for _ in range(2))
        with first, second:
            assert _request(first).startswith(b"HTTP/1.1 200") and _request(second).startswith(b"HTTP/1.1 200")
            with socket.create_connection(("127.0.0.1", port)) as extra:
                refused = _request(extra)
                assert extra.recv(1) == b""  # closed after the answer
            assert _request(first).startswith(b"HTTP/1.1 200")  # the admitted ones keep working
            first.close()
            time.sleep(0.3)  # the server sees the close
            with socket.create_connection(("127.0.0.1", port)) as again:
                served_again = _request(again)
                silent = _open_until_closed(port, b"", b"", 0.25, 15)  # over the cap again: second and again
                metrics = _request(second, "/metrics")
    finally:
        svc.stop()
    head, _, body = refused.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 429") and b"Connection: close" in head and b"Retry-After: 1" in head, head
    error = json.loads(body)["error"]
    assert error["status"] == "RESOURCE_EXHAUSTED" and "Too many connections from 127.0.0.1" in error["message"]
    assert "at most 2 open at once per client address" in error["message"]
    assert served_again.startswith(b"HTTP/1.1 200")
    assert silent[1] == b"(closed)" and 4.5 <= silent[0] < 8, silent
    assert b"modbot_serve_connections_refused_total 2.0" in metrics
