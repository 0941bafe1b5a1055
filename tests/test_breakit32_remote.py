"""The bot's remote scorer against a real ``python -m bot serve`` that routes languages between two models
(thirty-second session's break-it pass): the bot in process and the bot through the service must judge alike."""

from __future__ import annotations

import asyncio
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


async def _verdicts(scorer: Scorer, folder: Path, texts: list[str]) -> list[tuple[str, str | None, str | None]]:
    """``(score_status, language, model)`` of each text judged by a moderation service with ``scorer``."""
    folder.mkdir()
    store = await SqliteStore.open(folder / "mod.db")
    service = ModerationService(scorer=scorer, store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                                max_delay_s=0.001)
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
