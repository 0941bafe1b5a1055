"""The bot's remote scorer against a real ``python -m bot serve`` that routes languages between two models
(thirtieth session's break-it pass): over real HTTP to the service in a subprocess (:mod:`tests.serve_proc`)."""

from __future__ import annotations

import asyncio

import aiohttp

from bot.core.pieces import score_plans, scoring_pieces
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


def test_a_message_is_routed_whole_through_a_routing_service(tmp_path):
    """In process a routing scorer sends a message's whole plan (whole text, then its sentences) to one model. The
    bot sent the service the plan's texts one by one, and the service routed each alone: the English sentence of a
    French message went to the English model, and the verdict, labelled with the French model, held the English
    model's insult score (0.88 where the French model gives 0.2): the bot through the service judged otherwise than
    in process. The service says it routes (``routes``), and the bot then sends whole plans."""
    mixed = ("You are such an idiot and everyone here knows it. Bonjour à tous, je suis très content de vous voir "
             "aujourd'hui mes amis.")
    plans = [scoring_pieces(mixed), scoring_pieces(ENGLISH + " You idiot, you absolute clown of a person.")]
    assert len(plans[0]) == 3
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        remote = RemoteScorer.connect(svc.url)
        through = score_plans(remote, plans)
    finally:
        svc.stop()
    in_process = score_plans(routed(), plans)
    assert {p: (s.model, s.values) for p, s in through.items()} == {
        p: (s.model, s.values) for p, s in in_process.items()}
    assert (through[plans[0]].model, through[plans[0]].values["insult"]) == ("fake-served-fr", 0.2)
    assert (through[plans[1]].model, through[plans[1]].values["insult"]) == ("fake-served", 0.88)
    assert remote.routes


def test_malformed_plans_are_a_400(tmp_path):
    """``/v1/model:score``'s ``plans`` must be lists of indices into ``texts``: anything else is a 400 in the error
    shape, never a 500."""
    svc = start_service(tmp_path)

    async def call(plans: object) -> tuple[int, dict]:
        async with aiohttp.ClientSession() as s, s.post(svc.url + "/v1/model:score",
                                                        json={"texts": ["hi"], "plans": plans}) as r:
            return r.status, await r.json()

    try:
        asyncio.run(_ready(svc.url))
        wrong: list[object] = ["x", [], [[]], [[1]], [[True]], [[0, -1]], [0], [[0.0]]]
        for plans in wrong:
            status, doc = asyncio.run(call(plans))
            assert status == 400 and doc["error"]["details"][0]["errorType"] == "INVALID_REQUEST", (plans, doc)
        assert asyncio.run(call([[0], [0, 0]]))[0] == 200
    finally:
        svc.stop()
