"""Hostile requests found by breaking ``python -m bot serve``: each must get a 400 in Google's error shape, never a 500."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import aiohttp
import pytest

from tests.serve_proc import Served, start_service

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
    cwd = tmp_path_factory.mktemp("breakit-serve")
    svc = start_service(cwd, "--rate", "1000", "--burst", "1000")
    asyncio.run(_ready(svc.url))
    yield svc
    svc.stop()


async def _post(url: str, raw: bytes) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as s:
        async with s.post(url, data=raw, headers={"Content-Type": "application/json"}) as r:
            return r.status, await r.json(content_type=None)


@pytest.mark.parametrize(
    ("path", "raw"),
    [
        (ANALYZE, b'{"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {"scoreThreshold": 1'
         + b"0" * 400 + b"}}}"),
        (ANALYZE, b'{"a":' * 100_000),
        ("/v1/score", json.dumps({"texts": ["hi"], "policy": []}).encode()),
        ("/v1/score", json.dumps({"texts": ["hi"], "policy": {}}).encode()),
    ],
    ids=["huge-score-threshold", "deeply-nested-json", "policy-as-list", "policy-as-object"],
)
async def test_hostile_request_gets_400_not_internal_error(served, path, raw):
    code, doc = await _post(served.url + path, raw)
    assert code == 400, doc
    assert doc["error"]["status"] == "INVALID_ARGUMENT"
    assert doc["error"]["details"][0]["errorType"] == "INVALID_REQUEST"


def _cli(cwd, *args: str):
    import os
    import subprocess
    import sys

    from tests.serve_proc import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith("MODBOT_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("url", ["postgresql://u:s3cr3t@/db", "mysql://u:s3cr3t@h/db",
                                 "postgres+psycopg://u:s3cr3t@h/db"])
@pytest.mark.parametrize("command", ["report", "purge", "backup"])
def test_db_url_password_never_printed_and_nothing_created(tmp_path, command, url):
    """``report --db postgresql://...`` took the URL as a file path and printed its password; a mistyped scheme did
    so for every command."""
    done = _cli(tmp_path, command, "--db", url)
    assert done.returncode == 2
    assert "s3cr3t" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert len((done.stdout + done.stderr).strip().splitlines()) == 1
    assert not any(p.name != "port" for p in tmp_path.iterdir())


async def test_overlong_url_never_writes_its_api_key_to_the_log(tmp_path):
    """A request line over aiohttp's 8 KB limit was logged with a traceback quoting ``?key=<a valid key>``."""
    key = "k" * 8 + "0123456789abcdef"
    svc = start_service(tmp_path, keys=f"red:{key}\n")
    try:
        await _ready(svc.url)
        async with aiohttp.ClientSession() as s:
            async with s.post(svc.url + ANALYZE + f"?key={key}&pad=" + "x" * 9000, data=b"{}") as r:
                assert r.status == 400
    finally:
        _, out, err = svc.stop()
    assert key not in out + err
    assert "Traceback" not in err


@pytest.mark.parametrize("option", [("--port", "99999"), ("--port", "-1"), ("--rate", "nan"), ("--rate", "inf"),
                                    ("--max-body-bytes", "0"), ("--max-comment-bytes", "-1"), ("--drain-s", "-1")])
def test_serve_refuses_an_impossible_option_in_one_line(tmp_path, option):
    """``--port 99999`` ended in a traceback; ``--rate nan`` or ``--max-body-bytes 0`` started a service that could
    never answer."""
    done = _cli(tmp_path, "serve", "--port-file", str(tmp_path / "p"), "--scorer", "tests.serve_scorers:fake",
                *option)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: serve: {option[0]} ") and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "p").exists()
