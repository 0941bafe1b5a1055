"""Retention reaches the bot's own copies: a review card already posted in the review channel quotes the flagged
message's text, and once retention (or ``/mydata forget``) erased that text from the mod log the card is edited to
say "text erased after N days", everything else on it kept (real slack-bolt and discord.py clients against the
local fakes, a real SQLite mod log)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.workflow import words
from bot.workflow.retention import Retention
from bot.workflow.reviews import CARD_ERASE_TRIES
from tests.discord.conftest import Env, env  # noqa: F401 - the fixture
from tests.slack.test_app_wire import SlackEnv, senv  # noqa: F401 - the fixture

SAID = "identityhate in general, posted by hand"
LATER = timedelta(days=40)  # past the default policy's 30 days


def _retention(bot: Any) -> Retention:
    """The running bot's retention (its lifecycle's)."""
    assert bot.lifecycle is not None
    return bot.lifecycle.retention


def _card(world: SlackEnv) -> dict[str, Any]:
    (card,) = world.cards()
    return card


@pytest.mark.slack
async def test_slack_retention_edits_the_card_that_quotes_erased_text(senv: SlackEnv) -> None:  # noqa: F811
    """40 days on, the purge erases the message's text from the mod log and the bot's next retention step edits
    the card: its quote of the member's words is gone, it says "text erased after 30 days", and the member,
    reason and scores stay. Slack's first answer to the edit is a 429 (rate limited): the client waits it out and
    the edit goes through. A second run edits nothing again. The card kept the member's words in the review
    channel for ever."""
    bot = await senv.start()
    await senv.say(senv.fake.member.id, SAID)
    before = json.dumps(_card(senv)["blocks"])
    assert SAID in before
    assert await _retention(bot).purge(now=datetime.now(UTC) + LATER) == 1
    senv.fake.rate_limit("chat.update", retry_after=1)
    assert await _retention(bot).erase_cards() == 1
    after = json.dumps(_card(senv)["blocks"])
    assert SAID not in after and "identityhate" not in after
    assert "text erased after 30 days" in after
    assert f"<@{senv.fake.member.id}>" in after and "identity_attack" in after
    updates = [c for c in senv.fake.calls_of("chat.update") if c.response.get("ok")]
    assert len(updates) == 1
    assert await _retention(bot).erase_cards() == 0
    assert len(senv.fake.calls_of("chat.update")) == len(updates) + 1  # the 429 and the edit, nothing more
    assert senv.rows("SELECT card_erased_at IS NOT NULL, card_erase_tries FROM review_items") == [(1, 0)]


@pytest.mark.slack
async def test_a_card_slack_refuses_to_edit_is_tried_a_few_times_then_left(senv: SlackEnv,  # noqa: F811
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    """A card a moderator deleted (``message_not_found``) cannot be edited: each run tries once and logs it; after
    :data:`CARD_ERASE_TRIES` refusals it is noted and not tried again (no request at every purge for ever)."""
    bot = await senv.start()
    await senv.say(senv.fake.member.id, SAID)
    del senv.review.messages[_card(senv)["ts"]]
    await _retention(bot).purge(now=datetime.now(UTC) + LATER)
    for _ in range(CARD_ERASE_TRIES + 2):
        assert await _retention(bot).erase_cards() == 0
    refused = senv.fake.calls_of("chat.update")
    assert len(refused) == CARD_ERASE_TRIES and all(c.response["error"] == "message_not_found" for c in refused)
    assert senv.rows("SELECT card_erased_at IS NOT NULL, card_erase_tries FROM review_items") == [
        (1, CARD_ERASE_TRIES)]
    assert "not tried again" in caplog.text


@pytest.mark.slack
async def test_forget_edits_the_members_cards_too(senv: SlackEnv) -> None:  # noqa: F811
    """``/mydata forget``: the cards quoting the member's messages stop quoting them at once (the mod log's copy
    was erased, the card in the review channel kept it)."""
    bot = await senv.start()
    await senv.say(senv.fake.member.id, SAID)
    assert SAID in json.dumps(_card(senv)["blocks"])
    result = await bot.workflow.forget_member(senv.fake.team_id, senv.fake.member.id)
    assert result.ok
    after = json.dumps(_card(senv)["blocks"])
    assert SAID not in after and words.TEXT_ERASED in after


@pytest.mark.discord
async def test_discord_retention_edits_the_card_through_a_rate_limit(env: Env) -> None:  # noqa: F811
    """The same on Discord: the card's Text field says "text erased after 30 days", its other fields stay; the
    first edit is answered 429 and discord.py waits it out."""
    msg, outcome = await env.post(env.alice, SAID)
    assert outcome.review_id is not None
    await env.fake.wait_until(lambda: any(m["channel_id"] == env.review for m in env.fake.messages.values()
                                          if m["embeds"]))
    card = next(m for m in env.fake.messages.values() if m["channel_id"] == env.review and m["embeds"])
    assert SAID in json.dumps(card["embeds"])
    retention = env.bot.lifecycle.retention
    assert await retention.purge(now=datetime.now(UTC) + LATER) == 1
    env.fake.rate_limit("PATCH", rf"/channels/{env.review}/messages/{card['id']}", retry_after=0.2)
    assert await retention.erase_cards() == 1
    fields = {f["name"]: f["value"] for f in env.fake.messages[card["id"]]["embeds"][0]["fields"]}
    assert fields["Text"] == "*(text erased after 30 days: the server's retention period)*"
    assert SAID not in json.dumps(env.fake.messages[card["id"]]["embeds"])
    assert env.alice["id"] in json.dumps(env.fake.messages[card["id"]]["embeds"])
    assert len(env.fake.find("PATCH", rf"/channels/{env.review}/messages/{card['id']}")) == 2  # the 429, the edit


async def test_the_mod_log_lists_each_card_owed_an_erasure_until_it_is_settled(store: Any) -> None:
    """On both backends: a posted card whose message's text was erased is listed (an appeal's card, a card whose
    text is kept and an item without a card are not); an edit settles it at once, refusals after
    ``max_tries``; a member's cards alone with ``member_id``."""
    from tests.store_factories import T0, make_record

    await store.record_batch([make_record("m1", author="u1"), make_record("m2", author="u2"),
                              make_record("m3", author="u1", created=T0 + timedelta(days=20))])
    ids = {}
    for mid, who, source in (("m1", "u1", "automod"), ("m2", "u2", "report"), ("m3", "u1", "automod"),
                             ("m1", "u1", "appeal")):
        item = await store.open_review("discord", "g1", who, source, "why", message_id=mid, channel_id="c1")
        await store.set_review_card(item.id, f"card-{mid}-{source}")
        ids[(mid, source)] = item.id
    await store.open_review("discord", "g1", "u1", "automod", "no card", message_id="m1", channel_id="c1")
    assert await store.purge_expired_text(T0 + timedelta(days=10), T0 + timedelta(days=40),
                                          platform="discord", server_id="g1") == 2
    owed = [(ids[("m1", "automod")], "card-m1-automod"), (ids[("m2", "report")], "card-m2-report")]
    assert await store.cards_of_erased_text("discord", "g1") == owed
    assert await store.cards_of_erased_text("discord", "g1", member_id="u2") == owed[1:]
    assert await store.cards_of_erased_text("discord", "other") == []
    assert await store.card_erasure_tried(owed[0][0], edited=True, max_tries=3) is True
    for n in range(1, 4):
        assert await store.card_erasure_tried(owed[1][0], edited=False, max_tries=3) is (n == 3)
        assert await store.cards_of_erased_text("discord", "g1") == ([] if n == 3 else owed[1:])


async def test_a_decided_card_keeps_its_decision_in_words_when_its_text_is_erased(world: Any) -> None:
    """A card a moderator decided ("dismissed (false positive)") is edited by retention with its decision in the
    words the decision stamped, its moderator kept; a card rebuilt from the mod log read the stored value
    ("dismissed") instead."""
    from tests.test_workflow import MOD, SERVER

    outcome = await world.judge(world.message("alice", "threatword now"))
    await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "dismiss")
    await world.store.purge_expired_text(datetime.now(UTC) + LATER, datetime.now(UTC) + LATER)
    assert await world.workflow.erase_card_texts(SERVER, 30) == 1
    (_, card), = world.desk.review_updates[-1:]
    assert card.decision == "dismissed (false positive)" and card.decided_by == "mod"
    assert card.evidence.erased and card.evidence.erased_after_days == 30 and card.evidence.text == ""
