"""The scoring service over real HTTP: ``python -m bot serve`` in a subprocess on port 0, called with aiohttp.

Requests are written from Perspective's public API reference (``comments:analyze``: ``comment.text``,
``requestedAttributes``, ``languages``, ``spanAnnotations``, ``doNotStore``, ``clientToken``; errors as
``error.code/message/status/details[].errorType``). The service scores with :mod:`tests.serve_scorers` (keyword
rules, 50 ms per batch) so each test takes well under a second; the real model is exercised in
``tests/test_serve_model.py`` (marked ``slow``).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.serve_proc import Served, start_service

KEY = "k" * 8 + "0123456789abcdef"
OTHER_KEY = "o" * 8 + "fedcba9876543210"
ANALYZE = "/v1alpha1/comments:analyze"


async def _ready(url: str) -> None:
    async with aiohttp.ClientSession() as s:
        for _ in range(200):
            async with s.get(url + "/readyz") as r:
                if r.status == 200:
                    return
            await asyncio.sleep(0.02)
    raise AssertionError("service never became ready")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    """One service with two API keys, shared by the tests of this module."""
    cwd = tmp_path_factory.mktemp("serve")
    svc = start_service(cwd, "--rate", "1000", "--burst", "1000", keys=f"red:{KEY}\nforum:{OTHER_KEY}\n")
    asyncio.run(_ready(svc.url))
    yield svc
    svc.stop()


async def _post(url: str, body: object, *, raw: bytes | None = None, params: dict | None = None,
                headers: dict | None = None) -> tuple[int, dict, dict]:
    async with aiohttp.ClientSession() as s:
        data = raw if raw is not None else json.dumps(body).encode("utf-8")
        async with s.post(url, data=data, params=params, headers={"Content-Type": "application/json",
                                                                   **(headers or {})}) as r:
            return r.status, await r.json(content_type=None), dict(r.headers)


async def test_documented_request_gets_perspective_response(served):
    """The reference request (TOXICITY, languages, clientToken) answers attributeScores.TOXICITY.summaryScore."""
    body = {"comment": {"text": "You are an idiot"}, "languages": ["en"], "requestedAttributes": {"TOXICITY": {}},
            "doNotStore": True, "clientToken": "req-42"}
    status, doc, _ = await _post(served.url + ANALYZE, body, params={"key": KEY})
    assert status == 200
    assert doc["attributeScores"]["TOXICITY"]["summaryScore"] == {"value": 0.86, "type": "PROBABILITY"}
    assert "spanScores" not in doc["attributeScores"]["TOXICITY"]
    assert doc["languages"] == ["en"]
    assert doc["clientToken"] == "req-42"


async def test_red_defender_style_client_reads_summary_scores(served):
    """A Red Defender / forum plugin request (?key=, several attributes) reads each attribute's value back."""
    body = {"comment": {"text": "I will kill you, freak."},
            "requestedAttributes": {"TOXICITY": {}, "THREAT": {}, "IDENTITY_ATTACK": {}, "PROFANITY": {}}}
    status, doc, _ = await _post(served.url + ANALYZE, body, params={"key": OTHER_KEY})
    assert status == 200
    values = {a: doc["attributeScores"][a]["summaryScore"]["value"] for a in doc["attributeScores"]}
    assert values == {"TOXICITY": 0.95, "THREAT": 0.96, "IDENTITY_ATTACK": 0.97, "PROFANITY": 0.01}
    assert doc["languages"] == ["en"] and doc["detectedLanguages"] == []  # too short to detect: read as English


async def test_span_scores_carry_offsets_into_the_original_text(served):
    """spanAnnotations: one spanScore per sentence, begin/end slicing the original comment text."""
    text = "Nice build log, thanks a lot.  You are an idiot though!\nSee you tomorrow at the meetup."
    body = {"comment": {"text": text}, "requestedAttributes": {"INSULT": {}}, "spanAnnotations": True}
    status, doc, _ = await _post(served.url + ANALYZE, body, headers={"X-Goog-Api-Key": KEY})
    assert status == 200
    spans = doc["attributeScores"]["INSULT"]["spanScores"]
    assert [text[s["begin"]:s["end"]] for s in spans] == [
        "Nice build log, thanks a lot.", "You are an idiot though!", "See you tomorrow at the meetup."]
    assert [s["score"]["value"] for s in spans] == [0.01, 0.88, 0.01]
    assert doc["attributeScores"]["INSULT"]["summaryScore"]["value"] == 0.88


async def test_score_threshold_leaves_low_attributes_out(served):
    """An attribute under its scoreThreshold is omitted from attributeScores, as Perspective does."""
    body = {"comment": {"text": "you idiot"}, "requestedAttributes": {"INSULT": {"scoreThreshold": 0.5},
                                                                      "THREAT": {"scoreThreshold": 0.5}}}
    status, doc, _ = await _post(served.url + ANALYZE, body, params={"key": KEY})
    assert status == 200
    assert list(doc["attributeScores"]) == ["INSULT"]


async def test_unsupported_language_answers_perspectives_error(served):
    """French text: 400 LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE naming the detected language; the opt-in scores it."""
    text = "Je pense que tu es vraiment un imbécile et que personne ne veut de toi ici, va-t'en."
    body = {"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {}}}
    status, doc, _ = await _post(served.url + ANALYZE, body, params={"key": KEY})
    assert status == 400
    err = doc["error"]
    assert err["status"] == "INVALID_ARGUMENT" and err["code"] == 400
    assert err["details"][0]["errorType"] == "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE"
    assert err["details"][0]["languageNotSupportedByAttributeError"]["detectedLanguages"] == ["fr"]
    status, doc, _ = await _post(served.url + ANALYZE, {**body, "allowUnsupportedLanguages": True},
                                 params={"key": KEY})
    assert status == 200 and doc["detectedLanguages"] == ["fr"]


async def test_requested_language_the_model_lacks_is_refused(served):
    """languages: ["ru"] with an English-only model answers LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE."""
    body = {"comment": {"text": "hello"}, "languages": ["ru"], "requestedAttributes": {"TOXICITY": {}}}
    status, doc, _ = await _post(served.url + ANALYZE, body, params={"key": KEY})
    assert status == 400
    assert doc["error"]["details"][0]["errorType"] == "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE"
    assert doc["error"]["details"][0]["languageNotSupportedByAttributeError"]["requestedLanguages"] == ["ru"]


@pytest.mark.parametrize(
    ("raw", "status", "error_type"),
    [
        (b'{"comment": {"text": "hi"', 400, "INVALID_REQUEST"),
        (b'{"requestedAttributes": {"TOXICITY": {}}}', 400, "COMMENT_EMPTY"),
        (b'{"comment": {"text": ""}, "requestedAttributes": {"TOXICITY": {}}}', 400, "COMMENT_EMPTY"),
        (b'{"comment": {"text": "hi"}, "requestedAttributes": {"FLIRTATION": {}}}', 400, "ATTRIBUTE_NOT_SUPPORTED"),
        (b'{"comment": {"text": "hi"}, "requestedAttributes": {}}', 400, "INVALID_REQUEST"),
        (b'{"comment": {"text": "caf\xe9 \xff"}, "requestedAttributes": {"TOXICITY": {}}}', 400, "INVALID_REQUEST"),
        (b'{"comment": {"text": "' + b"a" * 20_481 + b'"}, "requestedAttributes": {"TOXICITY": {}}}', 400,
         "COMMENT_TOO_LONG"),
        (b'{"comment": {"text": "' + b"a" * 5_000_000 + b'"}, "requestedAttributes": {"TOXICITY": {}}}', 413,
         "INVALID_REQUEST"),
    ],
    ids=["malformed-json", "no-comment", "empty-text", "unknown-attribute", "no-attributes", "invalid-utf8",
         "over-20kb", "5mb-body"],
)
async def test_bad_input_gets_perspective_shaped_error_and_service_keeps_serving(served, raw, status, error_type):
    """Each bad request gets its status and errorType in Google's error shape; the next good request is served."""
    code, doc, _ = await _post(served.url + ANALYZE, None, raw=raw, params={"key": KEY})
    assert code == status
    assert doc["error"]["code"] == status
    assert doc["error"]["details"][0]["errorType"] == error_type
    ok, good, _ = await _post(served.url + ANALYZE, {"comment": {"text": "you idiot"},
                                                     "requestedAttributes": {"TOXICITY": {}}}, params={"key": KEY})
    assert ok == 200 and good["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.86


async def test_keys_wrong_missing_and_open_endpoints(served):
    """A wrong key is 400 (API key not valid), none is 403; /healthz and /metrics need no key."""
    body = {"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {}}}
    status, doc, _ = await _post(served.url + ANALYZE, body, params={"key": KEY[:-1] + "X"})
    assert status == 400 and doc["error"]["message"] == "API key not valid. Please pass a valid API key."
    status, doc, _ = await _post(served.url + ANALYZE, body)
    assert status == 403 and doc["error"]["status"] == "PERMISSION_DENIED"
    status, _, _ = await _post(served.url + ANALYZE, body, headers={"Authorization": f"Bearer {OTHER_KEY}"})
    assert status == 200
    async with aiohttp.ClientSession() as s:
        async with s.get(served.url + "/healthz") as r:
            assert r.status == 200
        async with s.get(served.url + "/metrics") as r:
            assert r.status == 200 and "modbot_serve_requests_total" in await r.text()


async def test_concurrent_clients_share_one_forward_pass(tmp_path):
    """16 clients at once are served by fewer forward passes than requests (batch sizes in /metrics)."""
    svc = start_service(tmp_path, env={"MODBOT_TEST_BATCH_DELAY_S": "0.2"})
    try:
        await _ready(svc.url)
        texts = [f"message {i}: you idiot" if i % 2 else f"message {i}: hello friends" for i in range(16)]

        async def one(s: aiohttp.ClientSession, text: str) -> float:
            body = {"comment": {"text": text}, "requestedAttributes": {"INSULT": {}}}
            async with s.post(svc.url + ANALYZE, json=body) as r:
                assert r.status == 200
                return (await r.json())["attributeScores"]["INSULT"]["summaryScore"]["value"]

        async with aiohttp.ClientSession() as s:
            values = await asyncio.gather(*(one(s, t) for t in texts))
            async with s.get(svc.url + "/metrics") as r:
                metrics = await r.text()
        assert values == [0.88 if i % 2 else 0.01 for i in range(16)]
        counts = {ln.split()[0]: float(ln.split()[1]) for ln in metrics.splitlines()
                  if ln.startswith("modbot_serve_batch_requests_")}
        assert counts["modbot_serve_batch_requests_sum"] == 16
        assert counts["modbot_serve_batch_requests_count"] <= 4  # 16 requests in at most 4 forward passes
        assert counts['modbot_serve_batch_requests_bucket{le="1.0"}'] <= 1  # at most the first request alone
    finally:
        svc.stop()


async def test_rate_limit_answers_429_with_retry_after_per_key(tmp_path):
    """Past its burst a key gets 429 RESOURCE_EXHAUSTED with Retry-After; another key is still served."""
    svc = start_service(tmp_path, "--rate", "0.5", "--burst", "2", keys=f"{KEY}\n{OTHER_KEY}\n")
    try:
        await _ready(svc.url)
        body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
        codes = [(await _post(svc.url + ANALYZE, body, params={"key": KEY}))[0] for _ in range(2)]
        status, doc, headers = await _post(svc.url + ANALYZE, body, params={"key": KEY})
        assert codes == [200, 200]
        assert status == 429 and doc["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert 1 <= int(headers["Retry-After"]) <= 2
        assert (await _post(svc.url + ANALYZE, body, params={"key": OTHER_KEY}))[0] == 200
    finally:
        svc.stop()


async def test_attribute_the_model_lacks_is_an_error_not_zero(tmp_path):
    """THREAT on a model without a threat label is 400 ATTRIBUTE_NOT_SUPPORTED, never a made-up 0."""
    svc = start_service(tmp_path, scorer="tests.serve_scorers:no_threat")
    try:
        await _ready(svc.url)
        body = {"comment": {"text": "I will kill you"}, "requestedAttributes": {"TOXICITY": {}, "THREAT": {}}}
        status, doc, _ = await _post(svc.url + ANALYZE, body)
        assert status == 400
        assert doc["error"]["details"][0] == {"@type": "type.googleapis.com/google.commentanalyzer.v1alpha1.Error",
                                              "errorType": "ATTRIBUTE_NOT_SUPPORTED", "requestedAttribute": "THREAT"}
    finally:
        svc.stop()


async def test_native_batch_endpoint_returns_score_contract_with_policy_labels(served):
    """POST /v1/score: scores, score_status and language per text; labels and flagged under the named policy."""
    texts = ["hello there, how was the weekend?", {"id": "m2", "text": "you are an idiot"}, "   ",
             "Je pense que tu es vraiment un imbécile et que personne ne veut de toi ici, va-t'en."]
    status, doc, _ = await _post(served.url + "/v1/score", {"texts": texts, "policy": "default"},
                                 params={"key": KEY})
    assert status == 200 and doc["model"] == "fake-served"
    r = doc["results"]
    assert [x["id"] for x in r] == [0, "m2", 2, 3]
    assert r[1]["scores"]["insult"] == 0.88 and r[1]["labels"] == ["insult"] and r[1]["flagged"] is True
    assert r[0]["flagged"] is False and r[0]["score_status"] == "ok"
    assert r[2]["score_status"] == "not_scored" and r[2]["scores"]["toxicity"] is None
    assert r[3]["score_status"] == "unsupported_language" and r[3]["language"] == "fr"
    assert r[1]["action"] == "review" and r[1]["reasons"] and r[0]["action"] == "none" and r[0]["reasons"] == []
    status, doc, _ = await _post(served.url + "/v1/score", {"texts": ["x"], "policy": "nope"}, params={"key": KEY})
    assert status == 400 and "Unknown policy" in doc["error"]["message"]


async def test_native_batch_endpoint_holds_untargeted_identity_attack_to_the_untargeted_tier(served):
    """/v1/score judges identity_attack as the bots and ``python -m bot score`` do ([identity_target]): a text that
    names no identity is held to the untargeted tier (0.98), so "you are vermin" (identity_attack 0.88, over the
    0.75 review tier) is not flagged, while "trans people are vermin" (an identity named) is. It flagged both."""
    texts = [{"id": "untargeted", "text": "you are vermin"}, {"id": "targeted", "text": "trans people are vermin"}]
    status, doc, _ = await _post(served.url + "/v1/score", {"texts": texts, "policy": "default"},
                                 params={"key": KEY})
    assert status == 200
    r = {x["id"]: x for x in doc["results"]}
    assert r["untargeted"]["scores"]["identity_attack"] == 0.88
    assert r["untargeted"]["labels"] == [] and r["untargeted"]["flagged"] is False
    assert r["untargeted"]["action"] == "none"
    assert r["targeted"]["labels"] == ["identity_attack"] and r["targeted"]["flagged"] is True


def test_no_key_refuses_a_public_address(tmp_path):
    """Without any API key, --host 0.0.0.0 exits 2 with one line naming the reason and that it did not start (it
    said "so the service listens on localhost only", which reads as if it had started there)."""
    import subprocess
    import sys

    from tests.serve_proc import ROOT

    proc = subprocess.run([sys.executable, "-m", "bot", "serve", "--host", "0.0.0.0", "--scorer",
                           "tests.serve_scorers:fake"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: serve: --host 0.0.0.0: no API key is configured (MODBOT_SERVE_KEYS_FILE or MODBOT_SERVE_KEYS, or "
        "--keys-file); without one the service listens only on localhost (--host 127.0.0.1), so it did not start"]


async def _until_inflight(s: aiohttp.ClientSession, url: str, n: int, timeout_s: float = 10.0) -> None:
    """Wait until the service at ``url`` answers ``n`` requests besides this one (its ``/metrics`` gauge
    ``modbot_serve_inflight`` counts the metrics request too); fails after ``timeout_s`` seconds. A fixed sleep
    raced the requests reaching the service on a loaded machine."""
    deadline = time.monotonic() + timeout_s
    while True:
        async with s.get(url + "/metrics") as r:
            page = await r.text()
        gauge = next(float(line.split()[1]) for line in page.splitlines()
                     if line.startswith("modbot_serve_inflight "))
        if gauge >= n + 1:
            return
        assert time.monotonic() < deadline, f"{gauge - 1:.0f} of {n} requests in flight after {timeout_s} s"
        await asyncio.sleep(0.02)


async def test_sigterm_drains_in_flight_requests_and_stores_nothing(tmp_path):
    """SIGTERM mid-request: in-flight requests are answered, new ones refused, exit 0; no file and no log line
    holds a comment's text."""
    svc = start_service(tmp_path, env={"MODBOT_TEST_BATCH_DELAY_S": "0.6"})
    await _ready(svc.url)
    before = sorted(p.name for p in Path(tmp_path).rglob("*"))
    secret = "zanzibar-marker you idiot"

    async def one(s: aiohttp.ClientSession) -> int:
        async with s.post(svc.url + ANALYZE, json={"comment": {"text": secret},
                                                   "requestedAttributes": {"TOXICITY": {}}}) as r:
            return r.status

    async with aiohttp.ClientSession() as s:
        tasks = [asyncio.create_task(one(s)) for _ in range(4)]
        await _until_inflight(s, svc.url, 4)  # the requests are in the model now (each waits 0.6 s there)
        svc.proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        codes = await asyncio.gather(*tasks)
    code, out, err = svc.wait(timeout=20)
    assert codes == [200, 200, 200, 200]
    assert code == 0 and "serve: stopped" in out
    assert time.monotonic() - started < 10
    assert secret not in out + err
    assert sorted(p.name for p in Path(tmp_path).rglob("*")) == before


class _DetectorCalls:
    """Counts the texts py3langid scores (its public ``classify`` and ``rank``, each one pass over a text)."""

    def __init__(self, monkeypatch) -> None:
        from py3langid.langid import LanguageIdentifier

        self.texts: list[str] = []
        for name in ("classify", "rank"):
            original = getattr(LanguageIdentifier, name)

            def counted(ident, text, _original=original):
                self.texts.append(text)
                return _original(ident, text)

            monkeypatch.setattr(LanguageIdentifier, name, counted)


@pytest.mark.parametrize(("text", "examined", "detected", "status"), [
    ("Thanks for the review, I will update the pull request tomorrow morning", 1, ["en"], 200),
    ("Je pense que tu es vraiment un imbécile et que personne ne t'aime ici", 1, ["fr"], 400),
    ("Thanks for the review of the parser. I will update the pull request tomorrow morning.", 3, ["en"], 200),
])
async def test_language_is_detected_once_per_text_examined(monkeypatch, text, examined, detected, status):
    """comments:analyze runs the detector once per part of the message (whole text, then each sentence): the
    language check and detectedLanguages read the same pass (it ran twice per part before)."""
    from aiohttp.test_utils import TestClient, TestServer

    from bot.serve.app import ScoringService, ServeConfig
    from bot.serve.keys import KeyRing
    from bot.settings import Settings
    from tests.serve_scorers import SlowFakeScorer

    calls = _DetectorCalls(monkeypatch)
    svc = ScoringService(ServeConfig(), KeyRing(), Settings().default_policy)
    async with TestClient(TestServer(svc.app())) as client:
        svc.set_scorer(SlowFakeScorer(), "fake")
        body = {"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {}}}
        async with client.post(ANALYZE, json=body) as r:
            doc = await r.json()
        await svc.drain()
    assert r.status == status
    if status == 200:
        assert doc["detectedLanguages"] == detected
    else:
        assert doc["error"]["details"][0]["languageNotSupportedByAttributeError"]["detectedLanguages"] == detected
    assert len(calls.texts) == examined


MIXED = ("Thanks for the review of the parser, I will update the pull request with the new tests tomorrow morning and "
         "ping you when it is ready. Tu es vraiment un imbécile.")


@pytest.mark.parametrize(("text", "detected", "examined", "status"), [
    ("Thanks for the review of the parser. I will update the pull request tomorrow morning.", ["en"], 3, 200),
    ("Je pense que tu es vraiment un imbécile. Personne ne t'aime ici, va-t'en.", ["fr"], 1, 400),
    (MIXED, ["en"], 3, 200),  # English as a whole: scored, its French sentence named after English
])
async def test_allowing_unsupported_languages_reads_the_whole_text_only(monkeypatch, text, detected, examined,
                                                                       status):
    """With ``allowUnsupportedLanguages: true`` the language check's answer is not used, so the detector reads the
    whole text once (for detectedLanguages, the same answer as with the check) instead of once per sentence; the
    same request without it reads every sentence, and names a French sentence of an English message in
    detectedLanguages (Perspective decides by the whole comment: such a message is scored, not refused)."""
    from aiohttp.test_utils import TestClient, TestServer

    from bot.serve.app import ScoringService, ServeConfig
    from bot.serve.keys import KeyRing
    from bot.settings import Settings
    from tests.serve_scorers import SlowFakeScorer

    calls = _DetectorCalls(monkeypatch)
    svc = ScoringService(ServeConfig(), KeyRing(), Settings().default_policy)
    answers = {}
    async with TestClient(TestServer(svc.app())) as client:
        svc.set_scorer(SlowFakeScorer(), "fake")
        for allow in (False, True):
            calls.texts.clear()
            body: dict[str, object] = {"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {}},
                                       "allowUnsupportedLanguages": allow}
            async with client.post(ANALYZE, json=body) as r:
                answers[allow] = (r.status, await r.json(), len(calls.texts))
        await svc.drain()
    assert answers[True][0] == 200 and answers[True][1]["detectedLanguages"] == detected
    assert answers[True][2] == 1
    assert answers[False][0] == status and answers[False][2] == examined
    doc = answers[False][1]
    if status == 200:
        assert doc["detectedLanguages"] == (["en", "fr"] if text == MIXED else detected)
    else:
        assert doc["error"]["details"][0]["languageNotSupportedByAttributeError"]["detectedLanguages"] == ["fr"]


async def test_malformed_request_line_gets_a_perspective_error_that_echoes_nothing(tmp_path):
    """aiohttp's own 400 quoted the start of a request line it could not parse (its ``?key=`` an API key): the
    answer is Google's error shape and holds nothing of the request."""
    svc = start_service(tmp_path, keys=f"red:{KEY}\n")
    try:
        await _ready(svc.url)
        host, port = svc.url.removeprefix("http://").split(":")
        answers = []
        for line in (f"POST {ANALYZE}?key={KEY}&x=" + "y" * 9000 + " HTTP/1.1",   # over the 8 KB limit
                     f"POST {ANALYZE}?key={KEY} HTTP/1.1 junk"):                   # not a request line
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(f"{line}\r\nHost: x\r\nContent-Length: 2\r\n\r\n{{}}".encode())
            await writer.drain()
            answers.append(await asyncio.wait_for(reader.read(), 10))
            writer.close()
    finally:
        _, out, err = svc.stop()
    for raw in answers:
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.split(b"\r\n")[0].split(b" ")[1] == b"400" and b"application/json" in head
        assert json.loads(body)["error"] == {"code": 400, "message": "Malformed HTTP request.",
                                             "status": "INVALID_ARGUMENT"}
        assert KEY.encode() not in raw and b"key=" not in raw
    assert KEY not in out + err


async def test_a_flood_of_wrong_keys_is_rate_limited_per_client_address(tmp_path):
    """Wrong keys were answered 400 without limit; past the burst they get 429 with Retry-After too, and a valid
    key is still served."""
    svc = start_service(tmp_path, "--rate", "0.5", "--burst", "3", keys=f"{KEY}\n")
    try:
        await _ready(svc.url)
        body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
        codes = [(await _post(svc.url + ANALYZE, body, params={"key": f"wrong-key-{n:08d}"}))[0] for n in range(3)]
        status, doc, headers = await _post(svc.url + ANALYZE, body, params={"key": "wrong-key-again0"})
        missing, _, _ = await _post(svc.url + ANALYZE, body)
        assert codes == [400, 400, 400]
        assert status == 429 and doc["error"]["status"] == "RESOURCE_EXHAUSTED" and int(headers["Retry-After"]) >= 1
        assert missing == 429
        assert (await _post(svc.url + ANALYZE, body, params={"key": KEY}))[0] == 200
    finally:
        svc.stop()


def test_service_model_threads_use_both_cores_of_two_and_leave_one_core_from_three():
    """A 2-core host runs the model on both cores (measured twice as fast idle); from three CPUs one is left to the
    event loop."""
    from bot.serve.options import serve_threads

    assert [serve_threads(n) for n in (1, 2, 3, 16)] == [1, 2, 2, 15]


def test_loopback_is_recognised_however_it_is_written():
    """Without keys the service may listen on any loopback address (127.0.0.0/8, ::1 written out in full,
    localhost in any case); a public, unspecified or unresolved name is not loopback."""
    from bot.serve.options import is_loopback_host

    for host in ("127.0.0.1", "127.0.0.5", "::1", "0:0:0:0:0:0:0:1", "localhost", "LocalHost"):
        assert is_loopback_host(host), host
    for host in ("0.0.0.0", "::", "10.0.0.1", "example.org", "", "[::1]"):
        assert not is_loopback_host(host), host


async def test_a_request_whose_score_is_late_gets_504_and_the_next_one_is_answered():
    """A forward pass slower than ``request_timeout_s`` answers its request 504 naming the limit (the wait is
    given up, not the pass); a request sent once the model is fast again is answered 200."""
    from aiohttp.test_utils import TestClient, TestServer

    from bot.serve.app import ScoringService, ServeConfig
    from bot.serve.keys import KeyRing
    from bot.settings import Settings
    from tests.serve_scorers import SlowFakeScorer

    svc = ScoringService(ServeConfig(request_timeout_s=0.2), KeyRing(), Settings().default_policy)
    scorer = SlowFakeScorer()
    body = {"comment": {"text": "you are an idiot"}, "requestedAttributes": {"TOXICITY": {}}}
    async with TestClient(TestServer(svc.app())) as client:
        svc.set_scorer(scorer, "fake")
        scorer.delay_s = 1.0
        started = time.monotonic()
        async with client.post(ANALYZE, json=body) as r:
            late = (r.status, await r.json(), time.monotonic() - started)
        await asyncio.sleep(1.0)  # the slow pass ends
        scorer.delay_s = 0.0
        async with client.post(ANALYZE, json=body) as r:
            again = (r.status, await r.json())
        await svc.drain()
    assert late[0] == 504 and late[1]["error"]["message"] == "Scoring took longer than 0.2 s."
    assert 0.2 <= late[2] < 0.9
    assert again[0] == 200 and again[1]["attributeScores"]["TOXICITY"]["summaryScore"]["value"] > 0.5
