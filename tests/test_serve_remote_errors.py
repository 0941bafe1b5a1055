"""The bots' remote scorer (``MODBOT_SCORER_URL``) against a real ``python -m bot serve`` subprocess on port 0
(:mod:`tests.serve_proc`) whose model fails, and what the service answers then: which answers are worth another
try and which are final, counted from the service's own ``/metrics`` (no timed assertion)."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.runtime import Runtime
from bot.settings import Settings
from tests.serve_proc import start_service
from tests.test_serve import _ready


def _message(text: str, n: int) -> Message:
    return Message(server=ServerRef(platform="discord", id="1", name="guild"), channel=ChannelRef(id="2", name="chat"),
                   author=MemberRef(id=f"u{n}", name="member"), id=f"m{n}", text=text, created_at=datetime.now(UTC))


def _answered(url: str, endpoint: str) -> dict[str, int]:
    """``{HTTP status: requests}`` the service answered on ``endpoint``, from its ``/metrics``."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        page = resp.read().decode("utf-8")
    found = re.findall(r'^modbot_serve_requests_total\{([^}]*)\} ([0-9.e+]+)$', page, re.M)
    out: dict[str, int] = {}
    for labels, value in found:
        fields = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if fields.get("endpoint") == endpoint:
            out[fields["code"]] = out.get(fields["code"], 0) + int(float(value))
    return out


async def test_a_text_the_model_fails_on_is_not_retried_and_fails_only_its_message(tmp_path: Path):
    """The service answered a text its model fails on 503 "The model failed on this batch; retry" with
    ``Retry-After: 1``; the bot's remote scorer retried it for its whole timeout (every retry failing alike), then
    scored each message of the batch alone, giving the failing one a whole timeout again: one such message held the
    bot's batch about two timeouts (20 s by default), where the model in process fails at once. A model failure is
    final now: the batch's request and the failing message's own are each answered once, the other messages of the
    batch are scored alone, and the failing one gets the policy's ``on_scorer_error``."""
    svc = start_service(tmp_path, env={"MODBOT_TEST_FAIL_ON": "explode"})
    try:
        await _ready(svc.url)
        rt = await Runtime.open(Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers",
                                         scorer_url=svc.url, scorer_timeout_s=4.0), enforce=False)
        try:
            outs = await asyncio.gather(*(rt.service.submit(_message(text, n)) for n, text in enumerate(
                ["hello there", "you are an idiot", "this one will explode, the model cannot read it"])))
        finally:
            await rt.close()
        answered = _answered(svc.url, "/v1/model:score")
    finally:
        svc.stop()
    assert [o.verdict.score_status for o in outs] == ["ok", "ok", "scorer_error"]
    assert outs[1].verdict.flagged and "insult" in outs[1].verdict.labels
    # the batch once (failed), then each message alone: two scored, the failing one failed once more
    assert answered.pop("200") == 2
    assert sum(answered.values()) == 2, answered
