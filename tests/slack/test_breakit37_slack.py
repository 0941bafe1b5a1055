"""Breaking the Slack app as a workspace admin, a moderator and a member would, through the real slack-bolt app and
slack_sdk client against the fake Slack (a real SQLite mod log). Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.slack.test_app_wire import SlackEnv, buttons, card_text, click

pytestmark = pytest.mark.slack


async def test_a_card_about_a_message_in_general_offers_no_remove_from_channel(env: SlackEnv) -> None:
    """Slack removes nobody from the workspace's #general (``conversations.kick`` answers
    ``cant_kick_from_general``): a card about a message there, or in one of its threads, offers Warn but no
    "Remove from channel", and a click on it anyway (a card posted before) is refused with nothing done; a card
    about a message in #random offers it. Before, every card offered it, and confirming it on a #general message
    recorded a failed removal."""
    await env.start()
    await env.say(env.fake.member.id, "borderline take")
    parent = env.fake.add_message(env.fake.general.id, env.fake.owner.id, "welcome, everyone")
    await env.say(env.fake.member.id, "borderline take in a thread", thread_ts=parent["ts"])
    await env.say(env.fake.member.id, "borderline take elsewhere", channel=env.fake.random.id)
    general, thread, random = sorted(env.cards(), key=lambda c: float(c["ts"]))
    for card, review in ((general, 1), (thread, 2)):
        assert f"mod:review:{review}:warn" in buttons(card)
        assert f"mod:review:{review}:kick" not in buttons(card) and "Remove from channel" not in card_text(card)
    assert "mod:review:3:kick" in buttons(random) and "Remove from channel" in card_text(random)
    before = len(env.fake.ephemerals)
    assert (await click(env, env.mods.id, general, "mod:review:1:kick")).status == 200
    refusal = await env.fake.wait_until(lambda: env.fake.ephemerals[before:])
    assert "cannot kick members in that channel" in refusal[0]["text"], refusal
    await env.settle()
    assert env.fake.calls_of("views.open") == [] and env.fake.calls_of("conversations.kick") == []
    assert env.rows("SELECT decision FROM review_items ORDER BY id") == [("open",), ("open",), ("open",)]


async def test_a_raid_in_general_offers_no_remove_all_from_channel(env: SlackEnv) -> None:
    """A join burst whose attacks land in #general: its raid card offers no "Remove all from channel" (Slack
    removes nobody from #general), only what can be done there. Before, it offered it, and every removal failed."""
    await env.start()
    raiders = [env.fake.add_user(f"raider{i}") for i in range(10)]
    for user in raiders:
        env.fake.general.members.add(user.id)
        assert (await env.fake.deliver_event(env.url, env.fake.team_join_event(user))).status == 200
    await env.fake.wait_until(lambda: env.rows("SELECT COUNT(*) FROM raids")[0][0] >= 1)
    for user in raiders[:6]:
        await env.say(user.id, f"identityhate from {user.name}")
    where = f"<#{env.fake.general.id}>"
    card = await env.fake.wait_until(lambda: next((c for c in env.cards() if "Raid #" in card_text(c)
                                                   and where in card_text(c)), None))
    assert not any(b.endswith(":kick") for b in buttons(card)) and "Remove all from channel" not in card_text(card)
    assert any(b.endswith(":end") for b in buttons(card))


@pytest.mark.parametrize(("text", "file", "judged"), [
    ("", {"name": "identityhate.png", "title": "identityhate.png"}, "identityhate.png"),
    ("look at this", {"name": "identityhate.txt", "title": "identityhate.txt"}, "look at this\nidentityhate.txt"),
    ("", {"name": "IMG_0001.png", "title": "identityhate, all of you"},
     "identityhate, all of you\nIMG_0001.png"),
])
async def test_a_shared_files_name_and_title_are_judged(env: SlackEnv, text: str, file: dict[str, str],
                                                        judged: str) -> None:
    """A file share is judged on the message text, the title the member typed and the file's name: an abusive
    file name reaches review with the words it was judged on. Before, a file whose title was its name (Slack's
    default when the member types none) was judged on the message text alone, so ``identityhate.png`` shared
    without a word was judged empty and passed."""
    await env.start()
    ev = env.fake.message_event(env.fake.random.id, env.fake.member.id, text,
                                files=[{"id": "F0000000001", **file, "url_private": "https://files.example/f"}])
    await env.say(env.fake.member.id, "", event=ev)
    assert env.rows("SELECT excerpt FROM messages") == [(judged,)]
    (card,) = env.cards()
    assert "identityhate" in card_text(card)


async def test_a_removal_whose_connection_keeps_resetting_is_recorded_as_failed(env: SlackEnv) -> None:
    """"Remove from channel" confirmed while every connection to ``conversations.kick`` is reset (slack_sdk tries
    once more, then gives up): the case records the removal as failed with the network's reason, the card says so,
    the member stays in the channel and nothing is tried again. Before, the aiohttp error escaped the enforcer: the
    review item said "kicked" while its case stayed ``pending`` with nothing recorded."""
    from tests.slack.test_confirm_slack import flagged_card, open_reason_modal, submit

    card = await flagged_card(env)
    env.fake.reset_connection("conversations.kick", times=2)
    view = await open_reason_modal(env, env.mods.id, card, "mod:review:1:kick")
    assert (await submit(env, env.mods.id, view, "keeps baiting people")).status == 200
    await env.fake.wait_until(lambda: "FAILED" in card_text(env.cards()[0]))
    await env.settle()
    assert "network error: could not reach Slack" in card_text(env.cards()[0])
    assert [c.status for c in env.fake.calls_of("conversations.kick")] == [0, 0]
    ((status, failure),) = env.rows("SELECT status, failure FROM cases WHERE moderator_id = ?", (env.mods.id,))
    assert status == "failed" and failure.startswith("network error: could not reach Slack"), failure
    assert env.fake.member.id in env.fake.random.members


#: Another organisation's workspace, which a Slack Connect channel is shared with.
OTHER_ORG = "T0OTHERORG"


def problems(env: SlackEnv) -> list[str]:
    """The mod log's "Channel problem" posts, as text."""
    return [card_text(c.params) for c in env.posted(env.modlog) if "Channel problem" in str(c.params.get("text"))]


async def test_a_review_channel_shared_after_setup_gets_no_more_cards(env: SlackEnv) -> None:
    """The review channel is shared with another organisation (Slack Connect) after setup: from the
    ``channel_shared`` event on, no card is posted there (the other organisation's people would read members'
    flagged words); the mod log says why, once, and that the card could not be posted. Unshared again
    (``channel_unshared``), cards land there again. Before, every card went on to the shared channel."""
    await env.start()
    await env.say(env.fake.member.id, "borderline take", channel=env.fake.random.id)
    assert len(env.cards()) == 1
    shared = env.fake.channel_shared_event(env.review.id, OTHER_ORG)
    assert (await env.fake.deliver_event(env.url, shared)).status == 200
    await env.say(env.fake.member.id, "borderline again", channel=env.fake.random.id)
    await env.say(env.fake.member.id, "borderline thrice", channel=env.fake.random.id)
    assert len(env.cards()) == 1
    (problem,) = problems(env)
    assert "shared with another organisation (Slack Connect)" in problem and env.review.id in problem
    assert any("Review #2 could not be posted" in str(c.params.get("text")) for c in env.posted(env.modlog))
    unshared = env.fake.channel_unshared_event(env.review.id, OTHER_ORG)
    assert (await env.fake.deliver_event(env.url, unshared)).status == 200
    await env.say(env.fake.member.id, "borderline once more", channel=env.fake.random.id)
    assert len(env.cards()) == 2


async def test_a_review_channel_shared_while_the_event_was_missed_is_seen_within_the_check_interval(
        env: SlackEnv) -> None:
    """The bot missed the ``channel_shared`` event (it was stopped): the channel's sharing is read from Slack
    again once the last answer is :data:`~bot.adapters.slack.desk.SHARE_CHECK_S` seconds old (the desk's clock), so
    the next card after that is not posted there and the mod log says why."""
    from bot.adapters.slack.desk import SHARE_CHECK_S

    await env.start()
    assert env.bot is not None
    now = [1000.0]
    env.bot.desk.clock = lambda: now[0]
    await env.say(env.fake.member.id, "borderline take", channel=env.fake.random.id)
    env.review.shared_with.append(OTHER_ORG)  # shared behind the bot's back: no event
    await env.say(env.fake.member.id, "borderline again", channel=env.fake.random.id)
    assert len(env.cards()) == 2 and problems(env) == []  # the answer of a moment ago is reused
    now[0] += SHARE_CHECK_S
    await env.say(env.fake.member.id, "borderline thrice", channel=env.fake.random.id)
    assert len(env.cards()) == 2
    (problem,) = problems(env)
    assert "shared with another organisation (Slack Connect)" in problem
