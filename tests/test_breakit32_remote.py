"""The bot's remote scorer against a real ``python -m bot serve`` that routes languages between two models
(thirty-second session's break-it pass): the bot in process and the bot through the service must judge alike."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.ports import Scorer
from bot.core.service import ModerationService
from bot.scoring.remote import RemoteScorer
from bot.store.sqlite import SqliteStore
from tests.serve_proc import start_service
from tests.serve_scorers import routed
from tests.test_serve import _ready

ENGLISH = "thanks everyone for coming to the meetup today, it was great to see you all"
FRENCH_LINE = "Merci beaucoup à tous, c'était vraiment génial de vous voir aujourd'hui"


async def _verdicts(scorer: Scorer, folder: Path, texts: list[str],
                    policy: Path | None = None) -> list[tuple[str, str | None, str | None]]:
    """``(score_status, language, model)`` of each text judged by a moderation service with ``scorer`` under the
    default policy, with ``policy`` layered on it (a ``--policy`` file) when given."""
    folder.mkdir()
    store = await SqliteStore.open(folder / "mod.db")
    registry = PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(policy,) if policy else ())
    service = ModerationService(scorer=scorer, store=store, policies=registry, max_delay_s=0.001)
    await service.start()
    out = []
    try:
        server, chan = ServerRef("discord", "g1", "guild"), ChannelRef(id="c1", name="general")
        author = MemberRef(id="u1", name="u1", joined_at=datetime(2025, 1, 1, tzinfo=UTC))
        for n, text in enumerate(texts):
            v = (await service.handle(Message(server=server, channel=chan, author=author, id=f"m{n}", text=text,
                                              created_at=datetime(2026, 6, 1, tzinfo=UTC)))).verdict
            out.append((v.score_status, v.language, v.scores.model if v.scores else None))
    finally:
        await service.close()
        await store.close()
    return out


def test_the_language_check_through_a_routing_service_is_the_one_in_process(tmp_path):
    """In process, a message routed to the English model (its French line is quoted, after a colon, or too short to
    be a sentence piece, so the routing does not see it) is checked against the English model's languages: the
    French line was not read by the model that scored it, ``unsupported_language``. Through a routing service the
    bot checked every message against both models' languages together and recorded it ``ok``."""
    texts = [f"{ENGLISH}\n> {FRENCH_LINE}", f"he posted this in the other channel yesterday:\n{FRENCH_LINE}\n{ENGLISH}",
             f"{ENGLISH}\nMesdames, messieurs, bienvenue!", f"{ENGLISH}\n{FRENCH_LINE}"]
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        through = asyncio.run(_verdicts(RemoteScorer.connect(svc.url), tmp_path / "remote", texts))
    finally:
        svc.stop()
    in_process = asyncio.run(_verdicts(routed(), tmp_path / "local", texts))
    assert in_process[:3] == [("unsupported_language", "fr", "fake-served")] * 3
    assert in_process[3] == ("ok", None, "fake-served-fr")
    assert through == in_process


def test_a_bot_started_before_a_routing_service_routes_its_first_messages_whole(tmp_path):
    """A bot may start before the service (``RemoteScorer.connect`` then learns nothing, and scoring retries). It
    took the service for one that does not route until an answer said otherwise, so its first batch went out text
    by text and the service routed each alone: the English sentence of a French message scored by the English model
    (insult 0.88 in a verdict named after the French model, 0.2 in process). Until the service has said whether it
    routes, whole plans are sent (a service that does not read them answers per text, combined by the bot)."""
    from bot.core.pieces import score_plans, scoring_pieces

    mixed = ("You are such an idiot and everyone here knows it. Bonjour à tous, je suis très content de vous voir "
             "aujourd'hui mes amis.")
    plans = [scoring_pieces(mixed), scoring_pieces(ENGLISH)]
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        remote = RemoteScorer(svc.url)  # what connect() leaves when the service was not answering yet
        first = score_plans(remote, plans)
    finally:
        svc.stop()
    in_process = score_plans(routed(), plans)
    assert (in_process[plans[0]].model, in_process[plans[0]].values["insult"]) == ("fake-served-fr", 0.2)
    assert {p: (s.model, s.values) for p, s in first.items()} == {
        p: (s.model, s.values) for p, s in in_process.items()}


def test_whole_plans_to_a_service_that_does_not_read_them_are_scored_as_texts(tmp_path):
    """The same plans sent whole to a service that predates ``plans`` (it answers ``scores`` per text, without
    ``routes``): the bot combines each plan's texts itself, as it does with per-text requests."""
    from bot.core.pieces import score_plans, scoring_pieces
    from tests.test_breakit27_remote import LABELS, StandIn, send

    def reply(h, texts):  # an old service: one score per text, no "routes", "models" or "plan_scores"
        body = {"model": "old", "version": "1", "labels": LABELS, "missing": [],
                "scores": [dict.fromkeys(LABELS, 0.9 if "idiot" in t else 0.01) for t in texts]}
        send(h, 200, json.dumps(body).encode())

    old = StandIn(reply)
    try:
        remote = RemoteScorer(old.url)
        plans = [scoring_pieces("Nice weather today for a long walk in the park. You are a total idiot, really."),
                 scoring_pieces(ENGLISH)]
        out = score_plans(remote, plans)
        out2 = score_plans(remote, plans)
    finally:
        old.close()
    assert [out[p].values["toxicity"] for p in plans] == [0.9, 0.01]
    assert out == out2 and {s.model for s in out.values()} == {"old"}


def test_a_plan_over_the_request_limit_is_scored_by_a_routing_service(tmp_path):
    """A long message of a server whose policy reads up to 1,000,000 characters (``[scoring] max_chars``) has a plan
    of 1.3 MB of texts: in process and through a service that does not route it is scored (the texts go in
    requests under the service's 1 MiB body limit), but to a routing service it went whole in one request, a 413,
    a scorer error for that message (and a scan stops at it). It is sent in parts now, each beginning with the
    texts the routing decides by (the whole text, and the first part in another language), so every part goes to
    the model the whole plan goes to, and the parts' scores are combined as the plan's."""
    import random

    from bot.core.pieces import score_plans, scoring_pieces

    rng = random.Random(1)
    text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) + ("。 " if i % 20 == 19 else "") for i in range(380_000))
    french = "".join(f"{FRENCH_LINE} {i}. " for i in range(14_000))
    plans = [scoring_pieces(t, max_chars=1_000_000) for t in (text, french)]
    assert all(sum(len(t.encode()) for t in set(p)) > 1_050_000 for p in plans)
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        through = score_plans(RemoteScorer.connect(svc.url, timeout_s=30), plans)
    finally:
        svc.stop()
    in_process = score_plans(routed(), plans)
    assert [in_process[p].model for p in plans] == ["fake-served", "fake-served-fr"]
    assert {p: (s.model, s.values) for p, s in through.items()} == {
        p: (s.model, s.values) for p, s in in_process.items()}
