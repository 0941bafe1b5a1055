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
