"""Wire tests: on Slack, a card's "Remove from channel" (kick) and a raid card's bulk sanctions ask first with a
reason modal (``views.open`` with the click's ``trigger_id``, then a ``view_submission``), against the real
slack-bolt app and the local fake Slack: carried out once on submit with the typed reason on the case; a cancelled,
expired, too long or non-moderator's submit changes nothing and says why."""

# ruff: noqa: F811  (the tests take the ``senv`` fixture imported from test_app_wire as their argument)
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.slack.test_app_wire import SlackEnv, card_text, click, senv  # noqa: F401  (senv: the fixture)

pytestmark = pytest.mark.slack


async def open_reason_modal(senv: SlackEnv, user: str, card: dict[str, Any], action_id: str) -> dict[str, Any]:
    """Click a button that asks first; wait for the modal it opened; return the view as the fake stored it."""
    before = len(senv.fake.calls_of("views.open"))
    assert (await click(senv, user, card, action_id)).status == 200
    call = (await senv.fake.wait_for("views.open", count=before + 1))[before]
    assert call.status == 200 and call.response["ok"], call.response
    return senv.fake.views[call.response["view"]["id"]]


async def submit(senv: SlackEnv, user: str, view: dict[str, Any], reason: str, *, metadata: str | None = None,
                 checked: bool = True) -> Any:
    """Submit the reason modal ``view`` with ``reason``; returns the app's HTTP answer."""
    payload = senv.fake.view_submission_payload(
        user=user, callback_id="mod_confirm", view_id=view["id"], checked=checked,
        values={"reason": {"value": {"type": "plain_text_input", "value": reason}}},
        private_metadata=view["private_metadata"] if metadata is None else metadata)
    return await senv.fake.deliver_interaction(senv.url, payload)


def told(senv: SlackEnv, user: str) -> list[str]:
    """The ephemeral messages ``user`` was shown."""
    return [e["text"] for e in senv.fake.ephemerals if e["user"] == user]


async def flagged_card(senv: SlackEnv) -> dict[str, Any]:
    """A review card about a message in #random (Slack refuses removing anyone from #general)."""
    await senv.start()
    await senv.say(senv.fake.member.id, "borderline take", channel=senv.fake.random.id)
    (card,) = senv.cards()
    return card


async def test_remove_from_channel_asks_for_a_reason_and_acts_once_on_submit(senv):
    """"Remove from channel" opens a modal (nothing done yet) with a required reason prefilled from the card and
    Slack's limits kept; the submit removes the member once and the case's reason is what was typed; a second
    submit of the same modal changes nothing."""
    card = await flagged_card(senv)
    view = await open_reason_modal(senv, senv.mods.id, card, "mod:review:1:kick")
    assert view["callback_id"] == "mod_confirm" and len(view["title"]["text"]) <= 24
    assert "Remove member from channel (review #1)" in json.dumps(view["blocks"])
    element = view["blocks"][1]["element"]
    assert element["max_length"] == 500 and element["min_length"] == 3
    assert element["initial_value"].startswith("review #1: ")
    assert senv.fake.calls_of("conversations.kick") == []
    assert senv.rows("SELECT decision FROM review_items") == [("open",)]
    resp = await submit(senv, senv.mods.id, view, "keeps baiting people")
    assert resp.status == 200 and resp.body in ("", "{}")  # closes the modal
    await senv.fake.wait_for("chat.update")
    await senv.settle()
    assert len(senv.fake.calls_of("conversations.kick")) == 1
    assert senv.rows("SELECT action, reason, status FROM cases WHERE moderator_id = ?", (senv.mods.id,)) == [
        ("kick", "keeps baiting people", "applied")]
    assert senv.rows("SELECT decision FROM review_items") == [("kicked",)]
    assert any("Reason: keeps baiting people" in json.dumps(c.params.get("blocks")) for c in senv.posted(senv.modlog))
    again = await submit(senv, senv.mods.id, view, "keeps baiting people")
    assert again.status == 200
    await senv.fake.wait_until(lambda: any("already decided" in t for t in told(senv, senv.mods.id)))
    assert len(senv.fake.calls_of("conversations.kick")) == 1


async def test_a_reason_too_long_is_answered_in_the_modal_and_changes_nothing(senv):
    """A reason over 500 characters (from a client that ignores max_length) is refused inside the modal
    (``response_action: errors`` on the reason block); nothing is done."""
    card = await flagged_card(senv)
    view = await open_reason_modal(senv, senv.mods.id, card, "mod:review:1:kick")
    with pytest.raises(ValueError):  # Slack's own client does not send it
        await submit(senv, senv.mods.id, view, "x" * 600)
    resp = await submit(senv, senv.mods.id, view, "x" * 600, checked=False)
    answer = resp.json()
    assert answer["response_action"] == "errors" and "at most 500 fit" in answer["errors"]["reason"]
    await senv.settle()
    assert senv.fake.calls_of("conversations.kick") == []
    assert senv.rows("SELECT decision FROM review_items") == [("open",)]


async def test_an_expired_confirmation_or_trigger_changes_nothing(senv):
    """A modal submitted more than 10 minutes after it opened is told it expired; a click whose trigger_id is older
    than Slack's 3 seconds opens no modal and is told to try again; an abandoned modal does nothing."""
    card = await flagged_card(senv)
    view = await open_reason_modal(senv, senv.mods.id, card, "mod:review:1:kick")
    meta = json.loads(view["private_metadata"])
    meta["at"] = (datetime.now(UTC) - timedelta(minutes=11)).isoformat()
    assert (await submit(senv, senv.mods.id, view, "too late", metadata=json.dumps(meta))).status == 200
    await senv.fake.wait_until(lambda: any("This confirmation expired" in t for t in told(senv, senv.mods.id)))
    payload = senv.fake.block_actions_payload(user=senv.mods.id, channel=senv.review.id, message_ts=card["ts"],
                                              action_id="mod:review:1:kick")
    senv.fake.advance(4)
    assert (await senv.fake.deliver_interaction(senv.url, payload)).status == 200
    (hook,) = await senv.fake.wait_for_hook()
    assert "try again" in hook.body["text"]
    await senv.settle()
    assert senv.fake.calls_of("conversations.kick") == []
    assert senv.rows("SELECT decision FROM review_items") == [("open",)]
    assert senv.rows("SELECT COUNT(*) FROM cases WHERE moderator_id IS NOT NULL") == [(0,)]


async def test_a_non_moderator_gets_no_modal_and_a_forged_submit_is_refused(senv):
    """A member who is not a moderator clicking "Remove from channel" is refused without a modal; submitting the
    moderator's modal as that member (the checks run again at submit, from Slack's roles) is refused too."""
    card = await flagged_card(senv)
    bystander = senv.fake.add_user("bystander")
    senv.review.members.add(bystander.id)
    assert (await click(senv, bystander.id, card, "mod:review:1:kick")).status == 200
    (hook,) = await senv.fake.wait_for_hook()
    assert "You need Kick Members" in hook.body["text"] and senv.fake.calls_of("views.open") == []
    view = await open_reason_modal(senv, senv.mods.id, card, "mod:review:1:kick")
    assert (await submit(senv, bystander.id, view, "not my call")).status == 200
    await senv.fake.wait_until(lambda: any("You need Kick Members" in t for t in told(senv, bystander.id)))
    assert senv.fake.calls_of("conversations.kick") == []
    assert senv.rows("SELECT decision FROM review_items") == [("open",)]


async def test_remove_all_on_a_raid_card_asks_first_and_puts_the_reason_on_every_case(senv):
    """A join burst's raid card: "Remove all from channel" opens the reason modal; its submit removes every raider
    from the channel the raid is in (#random: Slack removes nobody from #general), each case with the typed
    reason."""
    await senv.start()
    raiders = [senv.fake.add_user(f"raider{i}") for i in range(10)]
    for user in raiders:
        senv.fake.random.members.add(user.id)
        assert (await senv.fake.deliver_event(senv.url, senv.fake.team_join_event(user))).status == 200
    await senv.fake.wait_until(lambda: senv.rows("SELECT COUNT(*) FROM raids")[0][0] >= 1)
    for user in raiders[:6]:
        await senv.say(user.id, f"identityhate from {user.name}", channel=senv.fake.random.id)
    await senv.fake.wait_until(lambda: any("Remove all from channel" in card_text(c) for c in senv.cards()))
    card = next(c for c in senv.cards() if "Raid #" in card_text(c))
    view = await open_reason_modal(senv, senv.fake.admin.id, card, f"mod:raid:{senv.fake.team_id}:1:kick")
    assert "Remove all 10 from channel (raid #1)" in json.dumps(view["blocks"])
    assert senv.fake.calls_of("conversations.kick") == []
    assert (await submit(senv, senv.fake.admin.id, view, "join raid, all accounts one day old")).status == 200
    await senv.fake.wait_until(lambda: any(t.startswith("kick:") for t in told(senv, senv.fake.admin.id)))
    kicked = {c.params["user"] for c in senv.fake.calls_of("conversations.kick")}
    assert kicked == {u.id for u in raiders}
    reasons = senv.rows("SELECT reason FROM cases WHERE action = 'kick' AND status = 'applied'")
    assert reasons == [("join raid, all accounts one day old",)] * 10
