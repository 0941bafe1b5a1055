"""Hostile use of ``python -m bot serve`` (thirtieth session's break-it pass). The service runs in a subprocess on
port 0 and is called over real HTTP (:mod:`tests.serve_proc`, the keyword scorer of :mod:`tests.serve_scorers`)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
from pathlib import Path

import aiohttp
import pytest

from tests.serve_proc import read_http_answer, start_service
from tests.test_serve import ANALYZE, KEY, _post, _ready


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    svc = start_service(tmp_path_factory.mktemp("serve30"), "--rate", "1000", "--burst", "1000", keys=f"red:{KEY}\n")
    asyncio.run(_ready(svc.url))
    yield svc
    svc.stop()


async def test_a_deeply_nested_id_is_echoed_not_a_500(keyed):
    """An ``id`` of a few hundred nested lists, which ``json.loads`` reads, was a 500 "Internal error." and an ERROR
    line per request: the check for numbers that underflow walked it recursively (two frames per level) and hit
    Python's recursion limit at 350 levels. Every depth the decoder accepts is now echoed (or, past the decoder's
    own limit, a 400), never a 500."""
    async with aiohttp.ClientSession() as s:
        for depth in (350, 600, 900, 5000):
            ident = "[" * depth + "]" * depth
            body = f'{{"texts": [{{"id": {ident}, "text": "hi"}}]}}'.encode()
            async with s.post(keyed.url + "/v1/score", data=body, params={"key": KEY}) as r:
                status, doc = r.status, await r.json(content_type=None)
            assert status in (200, 400), (depth, status, doc)
            if status == 200:
                echoed, levels = doc["results"][0]["id"], 0
                while echoed:
                    echoed, levels = echoed[0], levels + 1
                assert levels == depth - 1
            else:
                assert doc["error"]["details"][0]["errorType"] == "INVALID_REQUEST", depth


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's CPU time from /proc")
async def test_requests_whose_clients_hung_up_are_not_read_on(tmp_path):
    """Seven clients each send 1 MB of texts (about 4 s of reading each: normalising, planning, language checks)
    and hang up 0.3 s later. Their texts were read to the end anyway, in the worker threads every long request
    shares: the service burnt a core for half a minute after the last one left (2.5-2.9 s of CPU in the 3 s
    measured here; 0 now), and a 3,000-character request sent then waited 19-31 s behind them, past the 30 s request
    limit. A request that is gone is read no further now."""
    svc = start_service(tmp_path, "--rate", "1000", "--burst", "1000", keys=f"red:{KEY}\n")
    try:
        await _ready(svc.url)
        random.seed(30)
        texts = ["".join(random.choice("aé😀 .\nЖ中") for _ in range(1900)) for _ in range(265)]
        body = json.dumps({"texts": texts}, ensure_ascii=False).encode()
        head = (f"POST /v1/score?key={KEY} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        for _ in range(7):
            with socket.create_connection(("127.0.0.1", int(svc.url.rsplit(":", 1)[1]))) as sock:
                sock.sendall(head + body)
                await asyncio.sleep(0.3)
        await asyncio.sleep(0.5)
        before = _cpu_seconds(svc.proc.pid)
        await asyncio.sleep(3.0)
        busy = _cpu_seconds(svc.proc.pid) - before
        status, doc, _ = await _post(svc.url + "/v1/score", {"texts": [" ".join(["hello friend"] * 250)]},
                                     params={"key": KEY})
        assert status == 200, doc
        assert busy < 0.6, busy  # CPU time of the service itself, not a wall-clock figure
    finally:
        svc.proc.kill()
        svc.wait()


def test_an_expect_header_other_than_100_continue_is_answered_in_the_error_shape(keyed):
    """``Expect: something-else`` on a POST endpoint was answered by aiohttp in plain text ("Unknown Expect: ..."),
    the one answer of the service that a Perspective client could not read as ``{"error": ...}``."""
    body = json.dumps({"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {}}}).encode()
    with socket.create_connection(("127.0.0.1", int(keyed.url.rsplit(":", 1)[1])), timeout=5) as sock:
        sock.sendall((f"POST {ANALYZE}?key={KEY} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                      f"Expect: 200-ok\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
        head, _, raw = read_http_answer(sock).partition(b"\r\n\r\n")
    assert head.split()[1] == b"417"
    error = json.loads(raw)["error"]
    assert (error["code"], error["status"], error["details"][0]["errorType"]) == (417, "FAILED_PRECONDITION",
                                                                                  "INVALID_REQUEST")


def _requests_counted(url: str, status: int) -> float:
    """``modbot_serve_requests_total`` of the analyze endpoint with ``status`` (0.0 when no such series)."""
    import urllib.request

    page = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
    total = 0.0
    for line in page.splitlines():
        if (line.startswith("modbot_serve_requests_total{") and f'code="{status}"' in line
                and "comments:analyze" in line):
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.mark.parametrize(("key", "length", "status"), [("wrong-key-0123456789", 10, 400), (KEY, 50_000_000, 413)])
def test_a_refusal_before_the_body_is_counted_in_the_metrics(keyed, key, length, status):
    """A request sent with ``Expect: 100-continue`` (curl adds it to bodies over 1 MiB) that is refused before its
    body (a wrong key, a body announced over the limit, over its rate, draining) was answered but never counted in
    ``modbot_serve_requests_total``: the refusal came before the middleware that counts every other answer."""
    before = _requests_counted(keyed.url, status)
    with socket.create_connection(("127.0.0.1", int(keyed.url.rsplit(":", 1)[1])), timeout=5) as sock:
        sock.sendall((f"POST {ANALYZE}?key={key} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                      f"Expect: 100-continue\r\nContent-Length: {length}\r\n\r\n").encode())
        head = read_http_answer(sock).partition(b"\r\n\r\n")[0]
    assert head.split()[1] == str(status).encode()
    assert _requests_counted(keyed.url, status) == before + 1


def test_error_messages_name_the_value_as_json_wrote_it_and_the_real_problem():
    """``"type": false`` was said as Python's ``'False'``; ``"requestedAttributes": ["TOXICITY"]`` (a list, as some
    clients write it) was told it names no attribute, although it names one: the problem is its type."""
    from bot.serve.perspective import ApiError, parse_analyze

    def message(obj: dict) -> str:
        with pytest.raises(ApiError) as info:
            parse_analyze(obj, ("toxicity",))
        assert info.value.code == 400 and info.value.error_type == "INVALID_REQUEST"
        return info.value.message

    assert "'comment.type': false is not supported" in message(
        {"comment": {"text": "hi", "type": False}, "requestedAttributes": {"TOXICITY": {}}})
    assert message({"comment": {"text": "hi"}, "requestedAttributes": ["TOXICITY"]}).startswith(
        "Invalid value at 'requestedAttributes': expected an object")
