"""The bot's remote scorer against a real ``python -m bot serve`` that routes languages between two models
(thirtieth session's break-it pass): over real HTTP to the service in a subprocess (:mod:`tests.serve_proc`)."""

from __future__ import annotations

import asyncio

from bot.core.pieces import score_plans
from bot.scoring.remote import RemoteScorer
from tests.serve_proc import start_service
from tests.serve_scorers import routed
from tests.test_serve import _ready

ENGLISH = "thanks everyone for coming to the meetup today"
FRENCH = "Bonjour à tous, je suis très content de vous voir aujourd'hui mes amis"


def test_each_text_names_the_model_that_scored_it_through_a_routing_service(tmp_path):
    """A service routing French to a second model answered ``/v1/model:score`` with one ``model``, the first
    text's, and the bot labelled every score of the request with it: a French message batched after an English one
    was recorded as scored by the English model (with the French model's scores), and the scorer's own name became
    whichever model the last request started with. Each text's model is answered now (``models``), and each
    message's verdict names the model that scored it, as with the routed models in process."""
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        remote = RemoteScorer.connect(svc.url)
        assert remote.name == "fake-served+fake-served-fr"
        plans = [(ENGLISH,), (FRENCH,)]
        through = score_plans(remote, plans)
        in_process = score_plans(routed(), plans)
        for first, second in ((ENGLISH, FRENCH), (FRENCH, ENGLISH)):
            assert remote.score_batch([first, second])[1].model == in_process[(second,)].model
    finally:
        svc.stop()
    assert {p: (s.model, s.values["toxicity"]) for p, s in through.items()} == {
        (ENGLISH,): ("fake-served", 0.01), (FRENCH,): ("fake-served-fr", 0.2)}
    assert {p: s.model for p, s in in_process.items()} == {p: s.model for p, s in through.items()}
    assert remote.name == "fake-served+fake-served-fr"  # the service's model, as GET /v1/model names it
