"""Hostile use of ``python -m bot serve`` (twenty-seventh session's break-it pass): a gzip body of 1 MB that inflates
to 1 GB held the event loop for seconds before the key was even checked; a broken gzip body was a 500; an ``id`` of
``1e999`` was echoed as ``Infinity``, which is not JSON. The service runs in a subprocess on port 0 and is called
over real HTTP (:mod:`tests.serve_proc`, the keyword scorer of :mod:`tests.serve_scorers`)."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import zlib

import aiohttp
import pytest

from tests.serve_proc import start_service
from tests.test_serve import ANALYZE, KEY, _post, _ready

BODY = {"comment": {"text": "you idiot"}, "requestedAttributes": {"TOXICITY": {}}}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    svc = start_service(tmp_path_factory.mktemp("serve27"), "--rate", "1000", "--burst", "1000", keys=f"red:{KEY}\n")
    asyncio.run(_ready(svc.url))
    yield svc
    svc.stop()


def _bomb() -> bytes:
    """About 1 MB of gzip that inflates to 1 GiB of spaces."""
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    return b"".join([co.compress(block) for _ in range(1024)] + [co.flush()])


async def test_a_gzip_bomb_costs_the_service_nothing_with_or_without_a_key(keyed):
    """Without a key: 403 at once, and /healthz is answered meanwhile (before, the body was inflated on the event
    loop as it arrived: 403 after 5.2 s, /healthz stalled 2.9 s). With a key: 413, inflated only up to the 1 MiB
    body limit."""
    bomb = _bomb()

    async def health_gaps(stop: asyncio.Event) -> float:
        worst = 0.0
        async with aiohttp.ClientSession() as s:
            while not stop.is_set():
                t = time.perf_counter()
                async with s.get(keyed.url + "/healthz") as r:
                    assert r.status == 200
                worst = max(worst, time.perf_counter() - t)
                await asyncio.sleep(0.02)
        return worst

    stop = asyncio.Event()
    probe = asyncio.create_task(health_gaps(stop))
    started = time.perf_counter()
    status, doc, _ = await _post(keyed.url + ANALYZE, None, raw=bomb, headers={"Content-Encoding": "gzip"})
    no_key_s = time.perf_counter() - started
    assert status == 403
    status, doc, _ = await _post(keyed.url + ANALYZE, None, raw=bomb, headers={"Content-Encoding": "gzip"},
                                 params={"key": KEY})
    stop.set()
    assert status == 413 and "inflated" in doc["error"]["message"]
    assert no_key_s < 2.0 and await probe < 1.0


async def test_gzip_and_deflate_bodies_are_read_and_broken_ones_are_400_not_500(keyed):
    """A gzip or deflate body (zlib-wrapped or raw) is read like a plain one; a body that does not inflate, or an
    encoding the service does not read, is a 400 INVALID_REQUEST (it was a 500 and an ERROR line per request)."""
    raw = json.dumps(BODY).encode()
    plain = await _post(keyed.url + ANALYZE, BODY, params={"key": KEY})
    assert plain[0] == 200
    deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    for encoding, data in (("gzip", gzip.compress(raw)), ("deflate", zlib.compress(raw)),
                           ("deflate", deflater.compress(raw) + deflater.flush())):
        status, doc, _ = await _post(keyed.url + ANALYZE, None, raw=data, headers={"Content-Encoding": encoding},
                                     params={"key": KEY})
        assert (status, doc) == (200, plain[1]), encoding
    for encoding, data in (("gzip", b"hello"), ("br", raw), ("gzip", gzip.compress(raw)[:-12])):
        status, doc, _ = await _post(keyed.url + ANALYZE, None, raw=data, headers={"Content-Encoding": encoding},
                                     params={"key": KEY})
        assert status == 400 and doc["error"]["details"][0]["errorType"] == "INVALID_REQUEST", (encoding, data[:8])


async def test_a_number_that_overflows_is_refused_not_echoed_as_infinity(keyed):
    """``{"id": 1e999}`` was answered ``"id": Infinity``, which JSON parsers refuse."""
    status, doc, _ = await _post(keyed.url + "/v1/score", None, raw=b'{"texts": [{"id": 1e999, "text": "hi"}]}',
                                 params={"key": KEY})
    assert status == 400 and "out of range" in doc["error"]["message"]
    status, doc, _ = await _post(keyed.url + "/v1/score", None, raw=b'{"texts": [{"id": 1e300, "text": "hi"}]}',
                                 params={"key": KEY})
    assert status == 200 and doc["results"][0]["id"] == 1e300
    # one that underflows was echoed as 0.0, another id than the caller sent
    status, doc, _ = await _post(keyed.url + "/v1/score", None, raw=b'{"texts": [{"id": 1e-999, "text": "hi"}]}',
                                 params={"key": KEY})
    assert status == 400 and "out of range" in doc["error"]["message"]
    # a number that is not echoed may underflow: it is read as zero
    status, doc, _ = await _post(keyed.url + "/v1/score", None, raw=b'{"texts": [{"id": 7, "text": "hi", "w": 1e-999}]}',
                                 params={"key": KEY})
    assert status == 200 and doc["results"][0]["id"] == 7


def test_perspectives_own_python_sample_runs_against_the_service(keyed):
    """Perspective's documented Python client (google-api-python-client: ``discovery.build("commentanalyzer",
    "v1alpha1", developerKey=..., discoveryServiceUrl=...)``, then ``comments().analyze(body=...).execute()``) found
    no discovery document (404 on ``/$discovery/rest``), so such a client could not switch by URL alone. It now
    builds from the service's document and reads its scores back."""
    from googleapiclient import discovery, errors

    client = discovery.build("commentanalyzer", "v1alpha1", developerKey=KEY, static_discovery=False,
                             discoveryServiceUrl=keyed.url + "/$discovery/rest?version=v1alpha1",
                             cache_discovery=False)
    request = {"comment": {"text": "you idiot"}, "requestedAttributes": {"TOXICITY": {}, "INSULT": {}},
               "languages": ["en"], "doNotStore": True}
    response = client.comments().analyze(body=request).execute()
    assert response["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.86
    assert set(response["attributeScores"]) == {"TOXICITY", "INSULT"}
    bad = discovery.build("commentanalyzer", "v1alpha1", developerKey="wrong-key", static_discovery=False,
                          discoveryServiceUrl=keyed.url + "/$discovery/rest?version=v1alpha1", cache_discovery=False)
    with pytest.raises(errors.HttpError) as err:
        bad.comments().analyze(body=request).execute()
    assert err.value.resp.status == 400


async def test_a_language_given_twice_is_echoed_once(keyed):
    """``"languages": ["en", "en-US", "EN"]`` was echoed as given; they are one language."""
    status, doc, _ = await _post(keyed.url + ANALYZE, {**BODY, "languages": ["en", "en-US", "EN"]},
                                 params={"key": KEY})
    assert status == 200 and doc["languages"] == ["en"]


def test_expect_100_continue_with_a_body_over_the_limit_is_refused_before_it_is_sent(keyed):
    """A client announcing 999,999,999 bytes with ``Expect: 100-continue`` was told "100 Continue"; it now gets
    413 at once, a wrong key gets its error before sending the body, and a body within the limit from a key still
    gets "100 Continue" and its answer."""
    import socket

    host, port = keyed.url.removeprefix("http://").rsplit(":", 1)

    def exchange(length: int, body: bytes = b"", key: str = KEY) -> bytes:
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(f"POST {ANALYZE}?key={key} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n".encode())
            first = s.recv(65536)
            if body:
                s.sendall(body)
                until = time.monotonic() + 10
                while b"HTTP/1.1 200" not in first and time.monotonic() < until:
                    first += s.recv(65536)
            return first

    refused = exchange(999_999_999)
    assert refused.startswith(b"HTTP/1.1 413") and b"100 Continue" not in refused
    wrong = exchange(100, key="not-a-key")  # refused by the key check before the body is invited
    assert wrong.startswith(b"HTTP/1.1 400") and b"100 Continue" not in wrong
    body = json.dumps(BODY).encode()
    ok = exchange(len(body), body)
    assert ok.startswith(b"HTTP/1.1 100 Continue") and b"HTTP/1.1 200" in ok


async def test_every_gzip_member_is_read_and_trailing_bytes_are_refused(keyed):
    """After aiohttp's inflating was turned off, only the first gzip member was read: a document split over two
    members was refused, a second document was silently dropped, and trailing garbage was accepted, so the service
    scored other text than a proxy inflating the whole body would log. Every member is read, as gzip.decompress
    does; bytes after the end are a 400."""
    raw = json.dumps(BODY).encode()
    plain = await _post(keyed.url + ANALYZE, BODY, params={"key": KEY})
    split = gzip.compress(raw[:10]) + gzip.compress(raw[10:])
    status, doc, _ = await _post(keyed.url + ANALYZE, None, raw=split, headers={"Content-Encoding": "gzip"},
                                 params={"key": KEY})
    assert (status, doc) == (200, plain[1])
    for data, encoding in ((gzip.compress(raw) + b"GARBAGE", "gzip"), (gzip.compress(raw) + gzip.compress(raw), "gzip"),
                           (zlib.compress(raw) + b"x", "deflate")):
        status, doc, _ = await _post(keyed.url + ANALYZE, None, raw=data, headers={"Content-Encoding": encoding},
                                     params={"key": KEY})
        assert status == 400, (encoding, data[-8:])


async def test_the_discovery_document_is_never_cached_and_names_no_hostile_host(keyed):
    """The discovery document echoed any Host (``evil.example``, ``127.0.0.1:1/attacker?x=``) with no cache
    headers: a shared cache keyed on the path would hand an attacker's rootUrl, and with it clients' keys and
    comments, to everyone. It is answered ``Cache-Control: no-store`` (``Vary: Host``), a Host that could add a
    path, query or user info is a 400, and only ``X-Forwarded-Proto: https`` changes the scheme."""
    async with aiohttp.ClientSession() as s:
        async with s.get(keyed.url + "/$discovery/rest", params={"version": "v1alpha1"}) as r:
            doc = await r.json()
            assert r.status == 200 and r.headers["Cache-Control"] == "no-store" and "Host" in r.headers["Vary"]
            assert doc["rootUrl"] == keyed.url + "/"
        for host in ("127.0.0.1:1/attacker?x=", "good.example@evil.example", "a b"):
            async with s.get(keyed.url + "/$discovery/rest", headers={"Host": host}) as r:
                assert r.status == 400, host
        async with s.get(keyed.url + "/$discovery/rest",
                         headers={"Host": "scores.example:8443", "X-Forwarded-Proto": "https"}) as r:
            assert (await r.json())["rootUrl"] == "https://scores.example:8443/"
        async with s.get(keyed.url + "/$discovery/rest", headers={"X-Forwarded-Proto": "ftp"}) as r:
            assert (await r.json())["rootUrl"].startswith("http://")
