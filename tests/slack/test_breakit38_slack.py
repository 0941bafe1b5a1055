"""Breaking the Slack app's case pages as a moderator would, through the real slack-bolt app against the fake Slack
(a real SQLite mod log). Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.slack.test_app_wire import SlackEnv
from tests.slack.test_cases_slack import click, command, note, numbers, page_buttons

pytestmark = pytest.mark.slack


async def test_modcase_list_next_neither_repeats_nor_skips_cases_opened_after_the_list(env: SlackEnv) -> None:
    """12 notes make two pages: page 1 lists #12..#3. Three new cases are opened while the moderator reads it.
    Next then lists #2 and #1, the rest of the list as it was asked for, and says how many newer cases there are;
    Previous goes back to the same #12..#3. Before, the buttons paged from the newest case, so page 2 repeated
    #5..#3 and said "page 2 of 2" of a list of 15 (as Discord's pager did before its fix)."""
    await env.start()
    for i in range(12):
        await note(env, env.fake.member.id, f"watch {i}")
    first = await command(env, "/modcase", "list")
    assert first.startswith("12 cases, page 1 of 2:") and numbers(first) == [f"#{n}" for n in range(12, 2, -1)]
    (eph,) = [e for e in env.fake.ephemerals if (e.get("text") or "").startswith("12 cases")]
    for i in range(3):
        await note(env, env.fake.owner.id, f"rude {i}")
    await click(env, env.mods.id, eph, "Next")
    assert numbers(eph["text"]) == ["#2", "#1"], eph["text"]
    assert eph["text"].startswith("12 cases, page 2 of 2 (3 newer cases since this list was opened: ask again to "
                                  "see them):"), eph["text"]
    assert list(page_buttons(eph)) == ["Previous"]
    await click(env, env.mods.id, eph, "Previous")
    assert numbers(eph["text"]) == [f"#{n}" for n in range(12, 2, -1)], eph["text"]
    again = await command(env, "/modcase", "list")
    assert again.startswith("15 cases, page 1 of 2:") and numbers(again) == [f"#{n}" for n in range(15, 5, -1)]


async def test_a_refused_removal_from_a_channel_sends_a_correction_after_its_notice(env: SlackEnv) -> None:
    """"Remove from channel" confirmed on a card: the member is told "You were removed from a channel" first, then
    Slack refuses ``conversations.kick`` (``restricted_action``). The member gets a second DM saying the removal
    did not go through, with no Appeal button, and the failed case (#2; #1 is automod's) records both DMs. Before,
    the member kept the notice of a removal that never happened."""
    from tests.slack.test_breakit30_slack import dm_texts
    from tests.slack.test_confirm_slack import flagged_card, open_reason_modal, submit
    from tests.slack.test_sweep_slack import until

    card = await flagged_card(env)
    env.fake.fail("conversations.kick", "restricted_action")
    view = await open_reason_modal(env, env.mods.id, card, "mod:review:1:kick")
    assert (await submit(env, env.mods.id, view, "keeps baiting people")).status == 200
    await env.fake.wait_until(lambda: len(dm_texts(env, env.fake.member.id)) >= 2)
    await env.settle()
    notice, correction = dm_texts(env, env.fake.member.id)
    assert notice.startswith("You were removed from a channel in "), notice
    assert correction.endswith("(case #2): The removal from the channel of case #2 did not go through: please "
                               "disregard the message that said it was done."), correction
    assert correction.startswith("Correction in "), correction
    dm = env.fake.channels["D" + env.fake.member.id[1:]]
    assert [b["type"] for b in list(dm.messages.values())[-1].get("blocks") or []] == ["section"]
    # the case is marked failed once the correction's answer is known (its note says whether it was sent)
    settled = "SELECT status, failure FROM cases WHERE moderator_id = ? AND status != 'pending'"
    await until(lambda: env.rows(settled, (env.mods.id,)))  # a database write: the fake does not see it
    ((status, failure),) = env.rows(settled, (env.mods.id,))
    assert status == "failed" and failure.endswith("dm: sent before the removal from the channel, which failed; a "
                                                   "correction was sent"), failure
    assert env.fake.member.id in env.fake.random.members


async def test_a_warning_when_slack_gives_no_answer_about_the_member_is_refused_not_taken_as_gone(env: SlackEnv) -> None:
    """``users.info`` answering an error that says nothing about the user (``internal_error``; also a rate limit
    past the retries) made the member "not in this server": a warning was refused as if they had left,
    and the None was cached five minutes, so every action on them failed the same way. It is now "the platform did
    not answer: try again", nothing is recorded, and the next try asks Slack again and acts."""
    from bot.core.models import ActionKind
    from bot.workflow import Refused
    from bot.workflow.authz import Actor, Permission

    await env.start()
    assert env.bot is not None
    mod = Actor(env.mods.id, permissions=frozenset({Permission.MANAGE_MESSAGES, Permission.KICK_MEMBERS}), rank=2)
    env.fake.fail("users.info", "internal_error")
    with pytest.raises(Refused, match="did not answer .*internal_error.*try again"):
        await env.bot.workflow.sanction(mod, env.fake.team_id, env.fake.member.id, ActionKind.WARN, "be kind")
    result = await env.bot.workflow.sanction(mod, env.fake.team_id, env.fake.member.id, ActionKind.WARN, "be kind")
    assert result.ok and result.case_number == 1
