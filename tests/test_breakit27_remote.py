"""The bot's remote scorer against a misbehaving scoring service (twenty-seventh session's break-it pass): real HTTP
to small stand-in services (``http.server`` in a thread), each defect found by a tester and pinned here."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bot.scoring import ScorerError, ScorerLoadError
from bot.scoring import remote as remote_mod
from bot.scoring.remote import RemoteScorer

LABELS = ["toxicity", "severe_toxicity", "obscene", "threat", "insult", "identity_attack", "sexual_explicit"]


def _answer(texts: list[str], version: str | None = "1", **extra: object) -> dict:
    return {"model": "stand-in", "version": version, "labels": LABELS, "missing": [],
            "scores": [dict.fromkeys(LABELS, 0.9 if "idiot" in t else 0.01) for t in texts], **extra}


class StandIn:
    """A scoring service stand-in: ``reply(handler, texts) -> None`` writes the answer to each POST; every request's
    path, headers and texts are recorded."""

    def __init__(self, reply: Callable[[BaseHTTPRequestHandler, list[str]], None]) -> None:
        self.requests: list[tuple[str, dict[str, str], list[str]]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                stand_in.requests.append((self.path, dict(self.headers), []))
                send(self, 200, json.dumps({"name": "stand-in", "version": "1", "labels": LABELS}).encode())

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                texts = body.get("texts", [])
                stand_in.requests.append((self.path, dict(self.headers), texts))
                reply(self, texts)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(body)


@pytest.fixture
def stand_ins():
    made: list[StandIn] = []

    def make(reply: Callable[[BaseHTTPRequestHandler, list[str]], None]) -> StandIn:
        made.append(StandIn(reply))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_an_answer_sent_a_byte_at_a_time_is_cut_at_the_deadline(stand_ins):
    """A service that trickles its answer (one byte every 0.2 s) held the bot's only scoring thread for 24.5 s
    against a 3 s deadline: the socket timeout bounded each read, not the call. The call now ends at its deadline
    with a ScorerError (so the policy's on_scorer_error applies)."""
    def drip(h: BaseHTTPRequestHandler, texts: list[str]) -> None:
        body = json.dumps(_answer(texts)).encode()
        h.send_response(200)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            for i in range(len(body)):
                h.wfile.write(body[i:i + 1])
                h.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    svc = stand_ins(drip)
    scorer = RemoteScorer(svc.url, timeout_s=1.5)
    started = time.monotonic()
    with pytest.raises(ScorerError, match="within 1.5 s"):
        scorer.score_batch(["hello"])
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize("scores", [[{}], [{"TOXICITY": 0.99, "INSULT": 0.99}], [{"toxicity": 0.99}]])
def test_score_objects_without_the_labels_served_are_an_error_not_a_clean_verdict(stand_ins, scores):
    """``{"scores": [{}]}`` or Perspective-style names gave Scores with no values: every message read as clean.
    A score object must hold every label the service says it scores (and not missing)."""
    svc = stand_ins(lambda h, texts: send(h, 200, json.dumps({**_answer(texts), "scores": scores}).encode()))
    with pytest.raises(ScorerError, match="without|none of the labels"):
        RemoteScorer(svc.url, timeout_s=2).score_batch(["you idiot"])


def test_labels_the_service_lists_as_missing_are_not_required(stand_ins):
    """A model without ``sexual_explicit`` says so in ``missing``: its scores are accepted without that label."""
    def reply(h: BaseHTTPRequestHandler, texts: list[str]) -> None:
        a = _answer(texts, missing=["sexual_explicit"])
        for s in a["scores"]:
            del s["sexual_explicit"]
        send(h, 200, json.dumps(a).encode())

    svc = stand_ins(reply)
    [s] = RemoteScorer(svc.url, timeout_s=2).score_batch(["you idiot"])
    assert s.values["toxicity"] == 0.9 and s.missing == ("sexual_explicit",)


def test_a_redirect_is_not_followed_so_the_key_never_reaches_another_host(stand_ins):
    """urllib followed a 302 and sent X-Goog-Api-Key to whatever host the Location named."""
    other = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts)).encode()))
    svc = stand_ins(lambda h, texts: send(h, 302, b"{}", {"Location": other.url + "/v1/model:score"}))
    with pytest.raises(ScorerError, match="redirect"):
        RemoteScorer(svc.url, key="SECRET-KEY-123", timeout_s=2).score_batch(["hi"])
    assert other.requests == []
    assert svc.requests[0][1].get("X-Goog-Api-Key") == "SECRET-KEY-123"


def test_a_key_with_a_carriage_return_is_trimmed_and_a_bad_one_refused_without_showing_it(stand_ins):
    """A key read from a CRLF .env file ended in "\\r": every request failed with an error that printed the key.
    Surrounding whitespace is trimmed; a key an HTTP header cannot carry is a load error that does not show it."""
    svc = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts)).encode()))
    RemoteScorer(svc.url, key="SECRET-KEY-123\r", timeout_s=2).score_batch(["hi"])
    assert svc.requests[-1][1]["X-Goog-Api-Key"] == "SECRET-KEY-123"
    with pytest.raises(ScorerLoadError) as err:
        RemoteScorer(svc.url, key="SECRET\nKEY", timeout_s=2)
    assert "SECRET" not in str(err.value) and "MODBOT_SCORER_KEY" in str(err.value)


def test_a_url_with_a_password_is_refused_without_showing_it():
    """``http://admin:hunter2@host`` was taken whole for a host name (sent to DNS) and printed in every error."""
    with pytest.raises(ScorerLoadError) as err:
        RemoteScorer("http://admin:hunter2@127.0.0.1:9", timeout_s=2)
    assert "hunter2" not in str(err.value) and "MODBOT_SCORER_KEY" in str(err.value)


def test_wrong_key_at_start_names_the_variable_to_set(stand_ins):
    """A 403 at start said only "missing a valid API key"; it now names MODBOT_SCORER_KEY."""
    svc = stand_ins(lambda h, texts: None)

    def refuse(h: BaseHTTPRequestHandler) -> None:
        send(h, 403, json.dumps({"error": {"code": 403, "message": "The request is missing a valid API key."}}).encode())

    svc.server.RequestHandlerClass.do_GET = refuse
    with pytest.raises(ScorerLoadError, match="set MODBOT_SCORER_KEY"):
        RemoteScorer.connect(svc.url, timeout_s=2)


@pytest.mark.parametrize("body", [b"[1, 2]", b'{"scores": [{}], "missing": 5}', b'{"scores": [{}], "missing": "threat"}'])
def test_malformed_answers_are_scorer_errors(stand_ins, body):
    """A JSON list answer raised AttributeError (a crash at start-up), ``"missing": 5`` a TypeError, and
    ``"missing": "threat"`` became the labels t, h, r, e, a, t: each is now a ScorerError."""
    svc = stand_ins(lambda h, texts: send(h, 200, body))
    with pytest.raises(ScorerError):
        RemoteScorer(svc.url, timeout_s=2).score_batch(["hi"])


def test_an_answer_cut_short_is_retried_and_an_odd_retry_after_is_read_as_none(stand_ins):
    """A replica dying mid-answer (IncompleteRead) was not retried, and ``Retry-After: ²`` raised ValueError.
    Both are now transient: the next attempt gets the answer."""
    calls = []

    def reply(h: BaseHTTPRequestHandler, texts: list[str]) -> None:
        calls.append(1)
        if len(calls) == 1:
            h.send_response(200)
            h.send_header("Content-Length", "500")
            h.end_headers()
            h.wfile.write(b'{"scores": [')
            h.close_connection = True
        elif len(calls) == 2:
            send(h, 503, b"{}", {"Retry-After": "\u00b2"})
        else:
            send(h, 200, json.dumps(_answer(texts)).encode())

    svc = stand_ins(reply)
    [s] = RemoteScorer(svc.url, timeout_s=5).score_batch(["you idiot"])
    assert s.values["insult"] == 0.9 and len(calls) == 3


def test_one_call_never_mixes_two_model_versions(stand_ins, monkeypatch):
    """Behind a load balancer during a rolling upgrade, one call's requests were answered by two versions and the
    message's whole text and pieces were combined across them. The call is then sent again, once, so every score
    of the call comes from one version; an answer that names no version counts as another version."""
    monkeypatch.setattr(remote_mod, "REQUEST_TEXTS", 2)
    versions = iter(["1", "2", "2", "2", "2"])
    svc = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts, version=next(versions))).encode()))
    scorer = RemoteScorer(svc.url, timeout_s=5)
    out = scorer.score_batch(["a", "b", "you idiot", "d"])
    assert [s.values["insult"] for s in out] == [0.01, 0.01, 0.9, 0.01]
    assert scorer.version == "2" and len(svc.requests) == 4  # both chunks sent again
    unnamed = iter([None, "2", None, "2"])
    svc2 = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts, version=next(unnamed))).encode()))
    with pytest.raises(ScorerError, match="several model versions"):
        RemoteScorer(svc2.url, timeout_s=5).score_batch(["a", "b", "c"])


def test_requests_stay_under_the_service_body_limit(stand_ins):
    """256 texts of 1,400 CJK characters (under Discord's 2,000) made a 1.1 MB request, over the service's
    default 1 MiB limit: the whole batch was refused. Requests are now cut by bytes as well as by count."""
    svc = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts)).encode()))
    texts = ["\u6f22" * 1400] * 256
    out = RemoteScorer(svc.url, timeout_s=20).score_batch(texts)
    assert len(out) == 256 and len(svc.requests) >= 2
    assert all(len(json.dumps({"texts": t}, ensure_ascii=False).encode()) < 1_048_576 for _, _, t in svc.requests)


def test_an_answer_over_the_size_limit_is_refused(stand_ins, monkeypatch):
    """A 400 MB answer was read whole (804 MB of memory) past the deadline; answers over MAX_ANSWER_BYTES are
    refused."""
    monkeypatch.setattr(remote_mod, "MAX_ANSWER_BYTES", 1000)
    svc = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts, pad="x" * 5000)).encode()))
    with pytest.raises(ScorerError, match="over"):
        RemoteScorer(svc.url, timeout_s=2).score_batch(["hi"])


async def test_a_message_the_service_cannot_score_in_time_fails_only_itself(stand_ins, tmp_path):
    """Two 39,000-character messages and an insult in one batch: the service timed out on the batch and all three
    messages got on_scorer_error (with ``allow``, the insult passed). After a failed batch the bot scores each
    message alone, lightest first, so the insult is judged on its own scores."""
    import asyncio
    from datetime import UTC, datetime

    from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
    from bot.runtime import Runtime
    from bot.settings import Settings

    def reply(h: BaseHTTPRequestHandler, texts: list[str]) -> None:
        if sum(map(len, texts)) > 20_000:  # a long message's windows and chunks (each text is at most 4,000)
            time.sleep(2.5)  # past the bot's 1.5 s deadline
        try:
            send(h, 200, json.dumps(_answer(texts)).encode())
        except OSError:
            pass

    svc = stand_ins(reply)
    rt = await Runtime.open(Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers",
                                     scorer_url=svc.url, scorer_timeout_s=1.5), enforce=False)
    try:
        def msg(i: int, text: str) -> Message:
            return Message(server=ServerRef("discord", "1", "g"), channel=ChannelRef("2", "chat"),
                           author=MemberRef(f"u{i}", "member"), id=f"m{i}", text=text, created_at=datetime.now(UTC))

        long = "lorem ipsum dolor sit amet " * 1450
        outs = await asyncio.gather(rt.service.submit(msg(1, long)), rt.service.submit(msg(2, long + "x")),
                                    rt.service.submit(msg(3, "you are an idiot")))
    finally:
        await rt.close()
    batched = [texts for path, _, texts in svc.requests if path.endswith(":score") and len(texts) > 1
               and any("idiot" in t for t in texts) and sum(map(len, texts)) > 20_000]
    assert batched, "the three messages were never scored in one batch: this test checks nothing"
    assert [o.verdict.score_status for o in outs[:2]] == ["scorer_error", "scorer_error"]
    assert outs[2].verdict.score_status == "ok" and outs[2].verdict.flagged


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/my api", "http://127.0.0.1:9/mod\u00e9rateur"])
def test_a_url_with_a_space_or_non_ascii_path_is_a_load_error(url):
    """Such a URL was accepted, then every call burnt its whole timeout (InvalidURL) or raised UnicodeEncodeError."""
    with pytest.raises(ScorerLoadError, match="space, control or non-ASCII"):
        RemoteScorer(url, timeout_s=2)


def test_an_answer_cut_in_its_headers_is_retried(stand_ins):
    """A 200 whose headers were cut by a dying replica was read as "not a JSON answer" and not retried."""
    calls = []

    def reply(h: BaseHTTPRequestHandler, texts: list[str]) -> None:
        calls.append(1)
        if len(calls) == 1:
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Ty")
            h.wfile.flush()
            h.close_connection = True
        else:
            send(h, 200, json.dumps(_answer(texts)).encode())

    svc = stand_ins(reply)
    [s] = RemoteScorer(svc.url, timeout_s=5).score_batch(["you idiot"])
    assert s.values["insult"] == 0.9 and len(calls) == 2


async def test_a_service_that_is_down_costs_one_timeout_not_two(tmp_path):
    """When the batch failed because the service was never reached, scoring each message alone (after the batch)
    doubled the time every batch held the scoring thread in an outage; it is not tried then."""
    import asyncio
    import socket
    from datetime import UTC, datetime

    from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
    from bot.runtime import Runtime
    from bot.settings import Settings

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    rt = await Runtime.open(Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers",
                                     scorer_url=url, scorer_timeout_s=1.0), enforce=False)
    try:
        started = time.monotonic()
        outs = await asyncio.gather(*(rt.service.submit(Message(
            server=ServerRef("discord", "1", "g"), channel=ChannelRef("2", "chat"), author=MemberRef(f"u{i}", "m"),
            id=f"m{i}", text=f"message number {i}", created_at=datetime.now(UTC))) for i in range(5)))
        took = time.monotonic() - started
    finally:
        await rt.close()
    assert all(o.verdict.score_status == "scorer_error" for o in outs)
    assert took < 1.8


def test_language_codes_from_the_service_are_strings_only(stand_ins):
    """``"languages": ["en", {"x": 1}, null]`` in the service's answer became the languages "en", "{'x': 1}" and
    "None"; only string codes are kept."""
    svc = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts, languages=["en", {"x": 1}, None, ""]))
                                          .encode()))
    scorer = RemoteScorer(svc.url, timeout_s=2)
    scorer.score_batch(["hi"])
    assert scorer.languages == ("en",)


def test_a_name_lookup_that_hangs_is_cut_at_the_deadline(stand_ins, monkeypatch):
    """The system resolver has no timeout of its own: with a DNS server that does not answer, each call held the
    bot's scoring thread for the resolver's retries (10-30 s) whatever the deadline. The lookup is now bounded by
    the call's deadline and the call fails as unreachable (so the core does not retry each message alone)."""
    import socket

    svc = stand_ins(lambda h, texts: send(h, 200, json.dumps(_answer(texts)).encode()))
    port = int(svc.url.rsplit(":", 1)[1])
    real = socket.getaddrinfo
    hang = threading.Event()

    def resolver(host, *args, **kwargs):  # the name resolves to the stand-in, slowly once `hang` is set
        if host == "scorer.internal":
            if hang.is_set():
                time.sleep(4.0)
            return real("127.0.0.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    scorer = RemoteScorer(f"http://scorer.internal:{port}", timeout_s=1.0)
    assert scorer.score_batch(["you idiot"])[0].values["insult"] == pytest.approx(0.9)
    hang.set()
    started = time.monotonic()
    with pytest.raises(ScorerError) as caught:
        scorer.score_batch(["hello there"])
    assert time.monotonic() - started < 2.0
    assert caught.value.unreachable


@pytest.mark.parametrize("url", ["http://a..b:8080", "http://.:8080", f"http://{'x' * 64}.example:8080"])
def test_a_host_name_no_resolver_accepts_is_a_load_error(url):
    """A name IDNA refuses (an empty or over-long label) made every call's lookup thread die with a traceback on
    stderr and the call report a lookup that "took longer than the deadline"; it is refused at start instead."""
    with pytest.raises(ScorerLoadError, match="not a valid host name"):
        RemoteScorer(url, timeout_s=1.0)
