"""Hostile use of ``python -m bot serve`` (thirtieth session's break-it pass). The service runs in a subprocess on
port 0 and is called over real HTTP (:mod:`tests.serve_proc`, the keyword scorer of :mod:`tests.serve_scorers`)."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.serve_proc import start_service
from tests.test_serve import KEY, _ready


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
