"""One end-to-end run of ``python -m bot serve`` with the real embedded model (runtime chosen by default), called
as a Perspective client would: ``slow`` (loads the model; exports it to ONNX first on a fresh cache)."""

from __future__ import annotations

import os

import aiohttp
import pytest

from tests.serve_proc import start_service

pytestmark = pytest.mark.slow


async def test_real_model_answers_perspective_requests(tmp_path):
    """The real model served: an insult scores TOXICITY/INSULT above 0.5, a friendly line below; /v1/model names it."""
    cache = os.environ.get("MODBOT_CACHE") or str(os.path.expanduser("~/.cache/modbot/model"))
    svc = start_service(tmp_path, scorer="", env={"MODBOT_CACHE": cache}, timeout=600)
    try:
        async with aiohttp.ClientSession() as s:
            for _ in range(6000):
                async with s.get(svc.url + "/readyz") as r:
                    if r.status == 200:
                        info = await r.json()
                        break
                await __import__("asyncio").sleep(0.1)
            else:
                raise AssertionError("the model never loaded")
            values = []
            for text in ("you are a worthless idiot", "thanks for the help with the build, see you tomorrow!"):
                body = {"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {}, "INSULT": {}}}
                async with s.post(svc.url + "/v1alpha1/comments:analyze", json=body) as r:
                    assert r.status == 200
                    doc = await r.json()
                values.append([doc["attributeScores"][a]["summaryScore"]["value"] for a in ("TOXICITY", "INSULT")])
    finally:
        code, out, _ = svc.stop()
    assert info["name"] == "embedded-minilm-v1" and info["runtime"] in ("onnx", "torch")
    assert min(values[0]) > 0.5 > max(values[1])
    assert code == 0 and f"runtime {info['runtime']}" in out
