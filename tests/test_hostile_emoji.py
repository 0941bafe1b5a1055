"""A lone hostile emoji aimed at another member is treated like the insult in words; supportive emoji stay clean."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.models import ChannelRef, MemberRef, Mention, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from tests.fakes import FakeScorer

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
OLD = T0 - timedelta(days=400)
#: What the embedded model gives these texts (measured: toxicity 0.91 for a lone middle finger, insult low).
SCORES = {"fuck you": {"toxicity": 0.91, "insult": 0.4, "obscene": 0.6}}


def _reply(text: str, *, reply: bool = True, mid: str = "m2") -> Message:
    return Message(server=ServerRef("discord", "g1", "g"), channel=ChannelRef("c1", "general"),
                   author=MemberRef("u1", "u1", joined_at=OLD, created_at=OLD), id=mid, text=text, created_at=T0,
                   reply_to="m1" if reply else None,
                   mentions=(Mention("u2", is_reply_ping=True),) if reply else ())


@pytest.fixture
async def service(tmp_path: Path):
    store = await SqliteStore.open(tmp_path / "mod.db")
    svc = ModerationService(scorer=FakeScorer(SCORES), store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                            max_delay_s=0.001)
    await svc.start()
    yield svc
    await svc.close()
    await store.close()


@pytest.mark.parametrize("text", ["🖕", "🖕🏿", " 🖕 🖕 ", "🤬🖕", "||🖕||", "**🖕**", "🖕\u200b\u200b\u200b"])
async def test_a_lone_middle_finger_reply_goes_to_review_as_an_insult(service, text):
    """A reply that is only hostile emoji gets a hostile_emoji hit labelled insult and goes to review."""
    v = (await service.handle(_reply(text))).verdict
    hits = [h for h in v.rule_hits if h.rule == "hostile_emoji"]
    assert hits and hits[0].label == "insult"
    assert v.flagged and v.action.label == "review"


@pytest.mark.parametrize("text", ["❤️", "🏳️‍🌈🏳️‍⚧️", "👍", "🎂🎉", "💪 proud of you", "lol he gave me the 🖕 in traffic"])
async def test_supportive_emoji_and_emoji_in_prose_stay_clean(service, text):
    """Hearts, flags, thumbs up, or a middle finger told about in a sentence raise no hostile_emoji hit."""
    v = (await service.handle(_reply(text, mid=f"m-{hash(text)}"))).verdict
    assert not [h for h in v.rule_hits if h.rule == "hostile_emoji"]
    assert not v.flagged


async def test_a_lone_middle_finger_posted_to_nobody_is_not_a_targeted_insult(service):
    """Not a reply and no mention: no hostile_emoji hit (nobody is addressed)."""
    v = (await service.handle(_reply("🖕", reply=False))).verdict
    assert not [h for h in v.rule_hits if h.rule == "hostile_emoji"]
