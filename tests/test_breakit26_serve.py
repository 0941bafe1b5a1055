"""Hostile and careless use of ``python -m bot serve`` (twenty-sixth session's break-it pass): one small request
with the same attribute under 3,000 spellings held the event loop for 30 s; a run of dots did the same through a
quadratic sentence regex; an English comment with one French line was refused whole; a keyless service answered
any web page the operator visited (cross-site POST, DNS rebinding); SIGTERM waited for the whole queue past
``--drain-s``; a client that hung up kept its request in the model's queue. The service runs in a subprocess on
port 0 and is called over real HTTP (:mod:`tests.serve_proc`, the keyword scorer of :mod:`tests.serve_scorers`)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from tests.serve_proc import ROOT, start_service
from tests.test_serve import ANALYZE, KEY, _post, _ready, _until_inflight


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    svc = start_service(tmp_path_factory.mktemp("serve26"), "--rate", "1000", "--burst", "1000", keys=f"red:{KEY}\n")
    asyncio.run(_ready(svc.url))
    yield svc
    svc.stop()


async def test_an_attribute_requested_twice_in_any_case_is_refused(keyed):
    """"toxicity" and "TOXICITY" in one request is a 400 naming the attribute (which threshold would hold?), so a
    request can no longer ask for one attribute thousands of times and have its spans built for each."""
    body = {"comment": {"text": "you idiot. " * 50}, "spanAnnotations": True,
            "requestedAttributes": {"toxicity": {}, "TOXICITY": {"scoreThreshold": 0.9}}}
    status, doc, _ = await _post(keyed.url + ANALYZE, body, params={"key": KEY})
    assert status == 400 and doc["error"]["details"][0]["errorType"] == "INVALID_REQUEST"
    assert "TOXICITY is requested more than once" in doc["error"]["message"]
    ok, good, _ = await _post(keyed.url + ANALYZE, {**body, "requestedAttributes": {"toxicity": {}, "Insult": {}}},
                              params={"key": KEY})
    assert ok == 200 and sorted(good["attributeScores"]) == ["INSULT", "TOXICITY"]


async def test_null_fields_are_their_defaults_and_a_false_type_is_refused(keyed):
    """proto3 JSON reads null as the field's default: null doNotStore, spanAnnotations, languages,
    allowUnsupportedLanguages, comment.type and scoreType are accepted; ``"type": false`` or ``[]`` is not a type."""
    body = {"comment": {"text": "you idiot", "type": None}, "doNotStore": None, "spanAnnotations": None,
            "languages": None, "allowUnsupportedLanguages": None, "requestedAttributes": {"TOXICITY": {"scoreType": None}}}
    status, doc, _ = await _post(keyed.url + ANALYZE, body, params={"key": KEY})
    assert status == 200 and doc["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.86
    assert "spanScores" not in doc["attributeScores"]["TOXICITY"]
    bad: object
    for bad in (False, [], ""):
        status, doc, _ = await _post(keyed.url + ANALYZE, {**body, "comment": {"text": "hi", "type": bad}},
                                     params={"key": KEY})
        assert status == 400 and "comment.type" in doc["error"]["message"], bad


async def test_an_english_comment_with_one_foreign_line_is_scored_and_names_both_languages(keyed):
    """Perspective decides by the whole comment's language: an English insult with one French line is scored (it
    was refused whole, and a client reads an error as "no score", so the insult passed), and detectedLanguages lists
    English, then French; a comment that is French as a whole is still refused."""
    text = ("I completely disagree with the previous poster about the new city budget and the parks.\n"
            "Comme on dit en France: c'est la vie, mon ami, il faut continuer.\n"
            "Anyway, you are an absolute idiot for believing that nonsense about the budget.")
    status, doc, _ = await _post(keyed.url + ANALYZE, {"comment": {"text": text},
                                                       "requestedAttributes": {"TOXICITY": {}}}, params={"key": KEY})
    assert status == 200, doc
    assert doc["detectedLanguages"] == ["en", "fr"] and doc["languages"] == ["en"]
    assert doc["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.86
    french = "Je pense que tu es vraiment un imbécile et que personne ne veut de toi ici, va-t'en."
    status, doc, _ = await _post(keyed.url + ANALYZE, {"comment": {"text": french},
                                                       "requestedAttributes": {"TOXICITY": {}}}, params={"key": KEY})
    assert status == 400 and doc["error"]["details"][0]["errorType"] == "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE"


async def test_a_keyless_service_answers_no_other_host_and_no_other_sites_page(tmp_path):
    """Without keys the service is localhost only, for browsers too: a Host that is not a loopback name (DNS
    rebinding) and an Origin of another site (a cross-site form post) get 403; a page served from localhost, curl
    (no Origin) and a Host of 127.0.0.1 or [::1] with a port are answered."""
    svc = start_service(tmp_path)
    try:
        await _ready(svc.url)
        body = {"comment": {"text": "you idiot"}, "requestedAttributes": {"TOXICITY": {}}}
        for headers, want in [({}, 200), ({"Host": "attacker.example"}, 403),
                              ({"Origin": "http://attacker.example"}, 403), ({"Origin": "null"}, 403),
                              ({"Origin": "http://localhost:3000"}, 200), ({"Host": "localhost:8080"}, 200),
                              ({"Host": "[::1]:8080"}, 200), ({"Host": "127.0.0.1"}, 200)]:
            status, doc, _ = await _post(svc.url + ANALYZE, body, headers=headers)
            assert status == want, (headers, doc)
            if want == 403:
                assert doc["error"]["status"] == "PERMISSION_DENIED"
        async with aiohttp.ClientSession() as s, s.get(svc.url + "/healthz", headers={"Host": "evil.example"}) as r:
            assert r.status == 200  # probes stay open
    finally:
        svc.stop()


async def test_sigterm_answers_the_queue_503_at_the_drain_deadline_instead_of_scoring_it(tmp_path):
    """Eight requests of one pass each (1 s a pass, one worker) and SIGTERM with --drain-s 1: the request in the
    model is answered 200, the ones still queued at the deadline 503 (retry on another replica) at once, none 504,
    and the process exits long before the queue's 8 s of work (it waited for all of it, past --drain-s)."""
    svc = start_service(tmp_path, "--drain-s", "1", "--batch-chars", "1", "--batch-workers", "1",
                        env={"MODBOT_TEST_BATCH_DELAY_S": "1.0"})
    await _ready(svc.url)

    async def one(s: aiohttp.ClientSession, n: int) -> int:
        async with s.post(svc.url + ANALYZE, json={"comment": {"text": f"request number {n} you idiot"},
                                                   "requestedAttributes": {"TOXICITY": {}}}) as r:
            return r.status

    async with aiohttp.ClientSession() as s:
        tasks = [asyncio.create_task(one(s, n)) for n in range(8)]
        await _until_inflight(s, svc.url, 8)
        svc.proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        codes = await asyncio.gather(*tasks)
    code, out, _ = svc.wait(timeout=20)
    assert code == 0 and 504 not in codes, codes
    assert codes.count(200) >= 1 and codes.count(503) >= 4, codes
    assert time.monotonic() - started < 6, "the drain waited for the whole queue"
    assert "unfinished after 1 s" in out


async def test_a_request_whose_client_hung_up_is_never_scored(tmp_path):
    """A client that closes its connection while its request waits in the queue cancels it: the model scores the
    request ahead of it and the next one, never the abandoned one (one pass per request here)."""
    svc = start_service(tmp_path, "--batch-chars", "1", "--batch-workers", "1",
                        env={"MODBOT_TEST_BATCH_DELAY_S": "0.8"})
    try:
        await _ready(svc.url)
        body = {"comment": {"text": "first you idiot"}, "requestedAttributes": {"TOXICITY": {}}}
        async with aiohttp.ClientSession() as s:
            first = asyncio.create_task(s.post(svc.url + ANALYZE, json=body))
            await _until_inflight(s, svc.url, 1)
            async with aiohttp.ClientSession() as gone:
                abandoned = asyncio.create_task(gone.post(svc.url + ANALYZE, json={**body, "comment": {"text": "gone"}}))
                await _until_inflight(s, svc.url, 2)
                abandoned.cancel()
            (await first).close()
            status, _, _ = await _post(svc.url + ANALYZE, {**body, "comment": {"text": "third you idiot"}})
            assert status == 200
            async with s.get(svc.url + "/metrics") as r:
                page = await r.text()
        found = re.search(r"^modbot_serve_batch_requests_count (\S+)$", page, re.M)
        assert found is not None, page
        passes = float(found.group(1))
        assert passes == 2, page  # the first request and the third: the abandoned one never reached the model
    finally:
        svc.stop()


async def test_reading_a_large_batch_leaves_the_event_loop_answering(tmp_path):
    """A /v1/score of 450 texts of 1.9 KB (30 distinct sentences each) is normalised, planned and
    language-checked before scoring: about 2.7 s of one core here. It is read in a worker thread, so /healthz,
    probed back to back meanwhile, never goes unanswered for long (2.5 s when the texts were read on the event
    loop)."""
    svc = start_service(tmp_path, "--rate", "1000", "--burst", "1000", keys=f"red:{KEY}\n",
                        env={"MODBOT_TEST_BATCH_DELAY_S": "0"})
    try:
        await _ready(svc.url)
        rng = random.Random(7)  # distinct sentences: the plan keeps each distinct sentence, and checks its language
        words = ("the parser keeps whole line of each commit and reports it while reviewers read every branch "
                 "carefully before merging").split()
        texts = [" ".join(" ".join(rng.choice(words) for _ in range(10)).capitalize() + "." for _ in range(30))
                 for _ in range(450)]
        async with aiohttp.ClientSession() as s:
            big = asyncio.create_task(s.post(svc.url + "/v1/score", json={"texts": texts}, params={"key": KEY}))
            last, gaps = time.monotonic(), []
            while not big.done():
                async with s.get(svc.url + "/healthz") as r:
                    assert r.status == 200
                now = time.monotonic()
                gaps.append(now - last)
                last = now
            resp = await big
            assert resp.status == 200 and len((await resp.json())["results"]) == 450
        assert len(gaps) > 5 and max(gaps) < 1.5, f"/healthz waited {max(gaps):.2f} s while the batch was read"
    finally:
        svc.stop()


def test_onnx_runtime_writes_no_telemetry_files(tmp_path):
    """Importing ONNX Runtime through the project's scorer module writes nothing under the home folder (ORT's
    default telemetry keeps a device id and an event database under ~/.cache/Microsoft; the service promises to
    store nothing): ``ORT_DISABLE_TELEMETRY=1`` is set before ORT starts unless the operator set it."""
    pytest.importorskip("onnxruntime")
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    code = ("import bot.scoring.onnx_scorer, onnxruntime, os, json; "
            "print(json.dumps(os.environ.get('ORT_DISABLE_TELEMETRY')))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout) == "1"
    assert sorted(str(p.relative_to(tmp_path)) for p in Path(tmp_path).rglob("*")) == []


async def test_a_flood_of_unreadable_requests_logs_a_line_a_second_not_a_line_each(tmp_path):
    """200 requests aiohttp cannot parse, sent as fast as possible, are each answered 400, and the log holds about
    one line per second of them (it held one each: 1,000 lines in 0.6 s from one client), the next line counting
    those left out."""
    svc = start_service(tmp_path, keys=f"red:{KEY}\n")
    try:
        await _ready(svc.url)
        host, port = svc.url.removeprefix("http://").split(":")
        started = time.monotonic()
        for _ in range(200):
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(f"POST {ANALYZE}?key={KEY} HTTP/1.1 junk\r\nHost: 127.0.0.1\r\n\r\n".encode())
            await writer.drain()
            assert (await asyncio.wait_for(reader.read(), 10)).split(b" ")[1] == b"400"
            writer.close()
        seconds = time.monotonic() - started
        await asyncio.sleep(1.1)
        reader, writer = await asyncio.open_connection(host, int(port))  # one more after the quiet second
        writer.write(b"GET / HTTP/1.1 junk\r\n\r\n")
        await writer.drain()
        await asyncio.wait_for(reader.read(), 10)
        writer.close()
    finally:
        _, out, err = svc.stop()
    lines = [x for x in (out + err).splitlines() if "refused an unreadable HTTP request" in x]
    assert 2 <= len(lines) <= seconds + 3, lines
    assert re.search(r"; \d+ more since the last such line", lines[-1]), lines[-1]
    assert KEY not in out + err


async def test_a_request_that_would_outlast_its_deadline_is_refused_at_once_and_small_ones_are_answered(tmp_path):
    """Once the model's pace is known (passes at least half full timed), a request whose work, with what is queued,
    would be scored only after its 30 s limit is answered 503 with Retry-After at once, unscored (it was scored for
    30 s, both cores busy, then answered 504); a request of ordinary size is answered as before."""
    svc = start_service(tmp_path, "--rate", "1000", "--burst", "1000", "--batch-chars", "1000", keys=f"red:{KEY}\n",
                        env={"MODBOT_TEST_BATCH_DELAY_S": "0.2"})
    try:
        await _ready(svc.url)
        long_text = " ".join(f"Sentence {n} of a long comment about the parser and its tests." for n in range(25))
        ok, _, _ = await _post(svc.url + ANALYZE, {"comment": {"text": long_text},
                                                   "requestedAttributes": {"TOXICITY": {}}}, params={"key": KEY})
        assert ok == 200  # its slices (about 1,000 characters each) time the model's pace
        texts = [f"Text {n}: " + " ".join(f"line {k} of a long report about build {n}." for k in range(30))
                 for n in range(400)]
        started = time.monotonic()
        status, doc, headers = await _post(svc.url + "/v1/score", {"texts": texts}, params={"key": KEY})
        assert status == 503 and "longer than its 30 s limit" in doc["error"]["message"], doc
        assert time.monotonic() - started < 15 and 1 <= int(headers["Retry-After"]) <= 60
        ok, good, _ = await _post(svc.url + ANALYZE, {"comment": {"text": "you idiot"},
                                                      "requestedAttributes": {"TOXICITY": {}}}, params={"key": KEY})
        assert ok == 200 and good["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.86
    finally:
        svc.stop()
