"""The scoring service and the bots judge alike: what ``python -m bot serve`` answers (its native endpoint, the bot's
remote scorer through it, a scan's replay through it) against the same bot scoring in process. Real HTTP to the
service in a subprocess on port 0 (:mod:`tests.serve_proc`), the keyword fakes of :mod:`tests.serve_scorers`."""

from __future__ import annotations

import asyncio
import json
import urllib.request

from tests.serve_proc import start_service
from tests.serve_scorers import routed
from tests.test_breakit32_remote import ENGLISH, FRENCH_LINE, _verdicts
from tests.test_serve import _ready


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def test_native_score_checks_languages_against_the_routed_model_as_the_bot_does(tmp_path):
    """A service routing French to a second model checked every ``/v1/score`` text against both models' languages
    together: an English message whose French line the English model scored (the line quoted, after a colon, or too
    short for a sentence piece, so the routing does not see it) was ``ok``, where the bot in process, checking it
    against the languages of the model it is routed to, records ``unsupported_language`` (``fr``) and, under the
    default ``review_suspect``, sends it to review when a label reaches 0.5. The service answers as the bot judges
    now; a message routed to the French model stays ``ok``."""
    texts = [f"{ENGLISH}\n> {FRENCH_LINE}", f"he posted this in the other channel yesterday:\n{FRENCH_LINE}\n{ENGLISH}",
             f"{ENGLISH}\nMesdames, messieurs, bienvenue!", f"{ENGLISH}\n{FRENCH_LINE}"]
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        answer = _post(svc.url + "/v1/score", {"texts": texts, "policy": "default"})
    finally:
        svc.stop()
    in_process = asyncio.run(_verdicts(routed(), tmp_path / "local", texts))
    assert [(r["score_status"], r["language"]) for r in answer["results"]] == [
        ("unsupported_language", "fr")] * 3 + [("ok", None)]
    assert [(r["score_status"], r["language"]) for r in answer["results"]] == [(s, lang) for s, lang, _ in in_process]
