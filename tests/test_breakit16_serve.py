"""Hostile requests to ``python -m bot serve`` (sixteenth session's break-it pass): the connection cap and the
wrong-key limit per client, where an IPv6 client owns a whole /64 (one host picks any of its 2**64 addresses, so
counting per address capped nothing); real :class:`bot.serve.app.ConnectionCap` and the service over real HTTP."""

from __future__ import annotations

import asyncio
import json
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.serve.app import ConnectionCap, client_key
from bot.serve.keys import KeyConfigError, KeyRing
from tests.serve_proc import Served, read_http_answer, start_service
from tests.test_serve import ANALYZE, KEY, OTHER_KEY, _ready


@pytest.mark.parametrize(("a", "b"), [
    ("2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe"),
    ("2001:db8:1:2::1", "2001:DB8:1:2:0:0:0:2"),
    ("fe80::1%eth0", "fe80::1%eth1"),
    ("::ffff:192.0.2.7", "192.0.2.7"),
])
def test_addresses_of_one_ipv6_slash_64_are_one_client(a: str, b: str):
    assert client_key(a) == client_key(b)


@pytest.mark.parametrize(("a", "b"), [
    ("2001:db8:1:2::1", "2001:db8:1:3::1"),
    ("192.0.2.7", "192.0.2.8"),
    ("::1", "2001:db8::1"),
    ("::1", "::2"),
    ("fe80::1%eth0", "fe80::2%eth0"),  # every host of a link is in fe80::/64
])
def test_other_prefixes_and_every_ipv4_address_are_other_clients(a: str, b: str):
    assert client_key(a) != client_key(b)


def test_client_key_of_something_not_an_address_is_that_text():
    assert client_key("unix-socket") == "unix-socket"


def test_connection_cap_counts_an_ipv6_slash_64_as_one_address():
    refused: list[int] = []
    cap = ConnectionCap(2, lambda: refused.append(1))
    assert cap.admit("2001:db8:1:2::1") and cap.admit("2001:db8:1:2::2")
    assert not cap.admit("2001:db8:1:2:dead:beef:0:1")  # a third address of the same /64
    assert cap.admit("2001:db8:1:3::1")  # another /64
    assert refused == [1]
    cap.release("2001:db8:1:2::2")
    assert cap.admit("2001:db8:1:2::99")
    assert cap.open == {"2001:db8:1:2::/64": 2, "2001:db8:1:3::/64": 1}


# ------------------------------------------------------------------ over real HTTP (the fake scorer's service)

@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One service with two API keys, shared by this module's HTTP tests."""
    cwd = tmp_path_factory.mktemp("serve16")
    svc = start_service(cwd, "--rate", "1000", "--burst", "1000", keys=f"red:{KEY}\nforum:{OTHER_KEY}\n")
    asyncio.run(_ready(svc.url))
    yield svc
    svc.stop()


async def _send(url: str, body: object, *, query: str = "", headers: dict[str, str] | None = None,
                ) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as s, s.post(
            url + ANALYZE + query, data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", **(headers or {})}) as r:
        return r.status, json.loads(await r.text())


GOOD = {"comment": {"text": "you idiot"}, "requestedAttributes": {"TOXICITY": {}}}


@pytest.mark.parametrize(("query", "headers"), [
    (f"?key={KEY}&key=wrong-key-0123456789", {}),
    (f"?key=wrong-key-0123456789&key={KEY}", {}),
    (f"?key={KEY}", {"X-Goog-Api-Key": "wrong-key-0123456789"}),
    ("?key=wrong-key-0123456789", {"X-Goog-Api-Key": KEY}),
    (f"?key={KEY}", {"X-Goog-Api-Key": OTHER_KEY}),  # two valid keys: whose quota?
    ("", {"X-Goog-Api-Key": KEY, "Authorization": f"Bearer {OTHER_KEY}"}),
], ids=["query-twice-good-first", "query-twice-good-last", "query-good-header-bad", "query-bad-header-good",
        "two-valid-keys", "header-and-bearer"])
async def test_keys_that_disagree_are_refused_whatever_their_order(served: Served, query: str,
                                                                   headers: dict[str, str]):
    """The first ``?key=`` won: ``?key=GOOD&key=BAD`` was served and ``?key=BAD&key=GOOD`` refused, and a key in
    the query silently overrode a different one in a header. Keys that disagree are now one answer whatever their
    order: 400 ``INVALID_ARGUMENT`` saying so, with no key echoed; the service keeps serving."""
    status, doc = await _send(served.url, GOOD, query=query, headers=headers)
    assert status == 400, doc
    err = doc["error"]
    assert err["status"] == "INVALID_ARGUMENT" and "different API keys" in err["message"]
    assert KEY not in json.dumps(doc) and OTHER_KEY not in json.dumps(doc) and "wrong-key" not in json.dumps(doc)
    assert (await _send(served.url, GOOD, query=f"?key={KEY}"))[0] == 200


@pytest.mark.parametrize(("query", "headers"), [
    (f"?key={KEY}&key={KEY}", {}),
    (f"?key=&key={KEY}", {}),  # an empty key is no key (was 403 "missing a valid API key")
    ("?key=", {"X-Goog-Api-Key": KEY}),
    (f"?key={KEY}", {"X-Goog-Api-Key": KEY, "Authorization": f"Bearer {KEY}"}),
], ids=["same-twice", "empty-then-good", "empty-query-header", "same-everywhere"])
async def test_the_same_key_presented_more_than_once_is_served(served: Served, query: str, headers: dict[str, str]):
    status, doc = await _send(served.url, GOOD, query=query, headers=headers)
    assert status == 200, doc


@pytest.mark.parametrize(("patch", "where"), [
    ({"comment": "you idiot"}, "comment"),
    ({"comment": 1}, "comment"),
    ({"comment": ["you idiot"]}, "comment"),
    ({"sessionId": 1}, "sessionId"),
    ({"sessionId": []}, "sessionId"),
    ({"communityId": {"a": 1}}, "communityId"),
    ({"context": "the thread"}, "context"),
    ({"context": [1]}, "context"),
])
async def test_wrong_types_in_accepted_fields_are_invalid_requests(served: Served, patch: dict[str, Any], where: str):
    """The docs promise 400 ``INVALID_REQUEST`` for wrong field types, but ``sessionId: []`` and ``context: "x"``
    were served and a ``comment`` that is a string was ``COMMENT_EMPTY`` ("must be specified")."""
    status, doc = await _send(served.url, {**GOOD, **patch}, query=f"?key={KEY}")
    assert status == 400, doc
    assert doc["error"]["details"][0]["errorType"] == "INVALID_REQUEST" and f"'{where}'" in doc["error"]["message"]


async def test_null_enums_are_their_defaults_and_ignored_fields_of_the_right_type_are_served(served: Served):
    """proto3 JSON reads ``null`` as the field's default: ``comment.type: null`` and ``scoreType: null`` were
    refused as "'None' is not supported"."""
    body = {"comment": {"text": "you idiot", "type": None}, "requestedAttributes": {"TOXICITY": {"scoreType": None}},
            "sessionId": "s1", "communityId": "c1", "context": {"entries": [{"text": "earlier"}]}}
    status, doc = await _send(served.url, body, query=f"?key={KEY}")
    assert status == 200, doc
    assert doc["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.86


@pytest.mark.parametrize("name", ["TOXICıTY", "ſEVERE_TOXICITY", "ＴＯＸＩＣＩＴＹ"])
async def test_an_attribute_name_is_matched_in_ascii_only(served: Served, name: str):
    """``str.upper`` maps dotless i, long s and fullwidth letters onto ASCII, so ``"TOXICıTY"`` was answered as
    ``TOXICITY``; it is an unknown attribute."""
    status, doc = await _send(served.url, {**GOOD, "requestedAttributes": {name: {}}}, query=f"?key={KEY}")
    assert status == 400 and doc["error"]["details"][0]["errorType"] == "ATTRIBUTE_NOT_SUPPORTED", doc


def test_the_same_key_under_two_names_is_refused_at_start(tmp_path: Path):
    """Two names sharing one key were accepted: every request then counted as the first name's (its metrics and its
    rate), and revoking one client's key silently revoked the other's."""
    f = tmp_path / "keys.txt"
    f.write_text(f"red:{KEY}\nforum:{KEY}\n", encoding="utf-8")
    with pytest.raises(KeyConfigError, match=r"line 2: key 'forum' is the same as key 'red'") as exc:
        KeyRing.load(f, env={})
    assert KEY not in str(exc.value)
    with pytest.raises(KeyConfigError, match="the same as key"):
        KeyRing.load(None, env={"MODBOT_SERVE_KEYS": f"a:{KEY},b:{KEY}"})


@pytest.mark.parametrize("key", ["é" * 20, "k" * 16 + "\x7f", "k" * 16 + "\u200b"])
def test_a_key_that_is_not_printable_ascii_is_refused_at_start(tmp_path: Path, key: str):
    """A key travels in a URL (``?key=``) and in HTTP headers (Latin-1 at best): a non-ASCII or control character
    makes a key no client can send as written."""
    f = tmp_path / "keys.txt"
    f.write_text(f"red:{key}\n", encoding="utf-8")
    with pytest.raises(KeyConfigError, match="printable ASCII"):
        KeyRing.load(f, env={})


def test_the_listening_line_of_an_ipv6_host_is_a_url_that_works(tmp_path: Path):
    """``--host ::1`` printed ``listening on http://::1:PORT``, which no client or browser reads as a URL (RFC 3986
    puts an IPv6 literal in brackets); the line is a URL that answers."""
    svc = start_service(tmp_path, "--host", "::1")
    try:
        port = svc.url.rsplit(":", 1)[1]
        asyncio.run(_ready(f"http://[::1]:{port}"))
    finally:
        _, out, _ = svc.stop()
    assert f"serve: listening on http://[::1]:{port} (no API key configured: localhost only)" in out, out


def _answer(sock: socket.socket) -> bytes:
    body = json.dumps(GOOD).encode()
    sock.sendall(b"POST " + ANALYZE.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    sock.settimeout(10)
    return read_http_answer(sock)


def test_connections_past_the_total_cap_are_answered_503_and_closed(tmp_path: Path):
    """The cap was per client address only: forty loopback addresses held 2,400 connections (2,409 descriptors in
    the service) and nothing bounded the total, so a few hosts (or one IPv4 /24) could run the process out of file
    descriptors, where accept() fails and new clients hang. ``--max-connections`` bounds the total: one more
    connection, from any address, is answered 503 ``UNAVAILABLE`` with ``Retry-After`` and closed; the admitted
    ones keep being served, and a slot freed is served again."""
    svc = start_service(tmp_path, "--max-connections", "2", "--max-connections-per-address", "0")
    port = int(svc.url.rsplit(":", 1)[1])

    def connect(address: str) -> socket.socket:
        s = socket.socket()
        s.bind((address, 0))
        s.connect(("127.0.0.1", port))
        return s

    try:
        asyncio.run(_ready(svc.url))  # its connection is closed when _ready's session ends
        time.sleep(0.3)
        first, second = connect("127.0.0.2"), connect("127.0.0.3")
        with first, second:
            assert _answer(first).startswith(b"HTTP/1.1 200") and _answer(second).startswith(b"HTTP/1.1 200")
            with connect("127.0.0.4") as extra:
                refused = _answer(extra)
                assert extra.recv(1) == b""
            assert _answer(first).startswith(b"HTTP/1.1 200")
            first.close()
            time.sleep(0.3)
            with connect("127.0.0.5") as again:
                served_again = _answer(again)
    finally:
        svc.stop()
    head, _, body = refused.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503") and b"Connection: close" in head and b"Retry-After: 1" in head, head
    error = json.loads(body)["error"]
    assert error["status"] == "UNAVAILABLE" and "at most 2 connections open at once" in error["message"], error
    assert served_again.startswith(b"HTTP/1.1 200")


def test_max_connections_defaults_below_the_file_descriptor_limit_and_checks_its_value(tmp_path: Path):
    from bot.serve.options import build_parser, check_options, default_max_connections
    from bot.settings import Settings

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert 64 <= default_max_connections() < soft or soft == resource.RLIM_INFINITY
    for bad in ("-1", "10000001"):
        args = build_parser().parse_args(["--max-connections", bad])
        with pytest.raises(ValueError, match="--max-connections"):
            check_options(args, Settings.from_env())


def test_a_keys_file_that_cannot_be_read_is_refused_with_the_reason_in_words(tmp_path: Path):
    """A missing or non-UTF-8 keys file named only the exception's class ("FileNotFoundError"); the admin reads the
    reason in words, with the file's path."""
    missing = tmp_path / "nope.txt"
    with pytest.raises(KeyConfigError, match=r"nope\.txt: cannot read the keys file: No such file or directory$"):
        KeyRing.load(missing, env={})
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"red:caf\xe9caf\xe9caf\xe9caf\xe9caf\xe9\n")
    with pytest.raises(KeyConfigError, match=r"latin\.txt: cannot read the keys file: not UTF-8$"):
        KeyRing.load(latin, env={})
