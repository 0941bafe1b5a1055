"""Hostile requests to ``python -m bot serve`` (issue 27's "Bad input"), over real HTTP to the service in a
subprocess with the fake scorer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest

from tests.serve_proc import start_service
from tests.test_serve import _ready


@pytest.mark.parametrize("ident", ["NaN", "Infinity", "-Infinity"])
def test_batch_score_with_a_nan_id_answers_json_or_a_400(tmp_path: Path, ident: str):
    """``POST /v1/score`` with ``{"id": NaN}`` (Python's json accepts the literal) gets either a 400 in the error
    shape or an answer that strict JSON parsers read; it answered 200 with ``"id": NaN``, which broke the
    caller's parser (the same defect issue 25 found in ``score``)."""
    svc = start_service(tmp_path)

    async def call() -> tuple[int, str]:
        await _ready(svc.url)
        async with aiohttp.ClientSession() as s, s.post(
                svc.url + "/v1/score", data=b'{"texts": [{"id": ' + ident.encode() + b', "text": "hi"}]}',
                headers={"Content-Type": "application/json"}) as r:
            return r.status, await r.text()

    try:
        status, text = asyncio.run(call())
    finally:
        svc.stop()

    def strict(value: str) -> None:
        raise ValueError(f"not JSON: {value}")

    doc = json.loads(text, parse_constant=strict)
    assert status == 400 and doc["error"]["code"] == 400 or status == 200 and "results" in doc
