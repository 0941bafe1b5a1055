"""Hostile requests found by breaking ``python -m bot serve``: each must get a 400 in Google's error shape, never a 500."""

from __future__ import annotations

import asyncio
import json

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
def served(tmp_path_factory) -> Served:
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
