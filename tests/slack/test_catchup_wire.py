"""Wire tests: Slack catch-up after a restart with the real slack_sdk client against the fake Slack
(``users.conversations``, then ``conversations.history?oldest=`` with cursor pagination), judged once."""

from __future__ import annotations

import pytest

from bot.adapters.slack import run
from tests.slack.test_app_wire import SlackEnv, senv  # noqa: F401 - the fixture

pytestmark = pytest.mark.slack


def verdicts(env: SlackEnv, message_id: str) -> int:
    return env.rows("SELECT COUNT(*) FROM verdicts WHERE message_id = ?", (message_id,))[0][0]


async def test_messages_posted_while_down_are_judged_once_after_restart(senv: SlackEnv) -> None:  # noqa: F811
    """Messages posted in #general while the bot was down are read after the last recorded ts and judged once
    (the attack gets its case); the bot's own messages are skipped; a second restart judges nothing again."""
    general = senv.fake.general.id
    await senv.start()
    seen = await senv.say(senv.mods.id, "good morning")
    await senv.stop()
    user = senv.fake.add_user("member")
    senv.fake.general.members.add(user.id)
    missed = [senv.fake.add_message(general, user.id, text) for text in ("anyone?", "identityhate all", "ok")]
    senv.fake.add_message(general, senv.fake.bot_user_id, "a notice the bot posted")
    await senv.start()
    await senv.settle()
    for m in missed:
        assert verdicts(senv, f"{general}:{m['ts']}") == 1, m["text"]
    assert verdicts(senv, f"{general}:{seen['ts']}") == 1
    assert senv.rows("SELECT COUNT(*) FROM cases WHERE message_id = ?", (f"{general}:{missed[1]['ts']}",)) == [(1,)]
    calls = [c for c in senv.fake.calls_of("conversations.history") if c.params.get("channel") == general]
    assert calls and calls[0].params["oldest"] == seen["ts"]
    assert senv.bot is not None and senv.bot.catchup_report is not None
    assert senv.bot.catchup_report.judged == 3
    await senv.stop()
    await senv.start()
    assert senv.bot.catchup_report.judged == 0
    assert senv.rows("SELECT COUNT(*) FROM verdicts")[0][0] == 4


async def test_catch_up_pages_with_the_cursor_and_keeps_the_newest_within_the_bound(
        senv: SlackEnv, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """With MODBOT_CATCHUP_MESSAGES=3 and 2 messages a page, the three newest missed messages are read over two
    pages (cursor) and judged; the two oldest are not; the channel is reported cut short."""
    general = senv.fake.general.id
    monkeypatch.setattr(run, "HISTORY_PAGE", 2)
    await senv.start()
    await senv.say(senv.mods.id, "good morning")
    await senv.stop()
    missed = [senv.fake.add_message(general, senv.mods.id, f"message {i}") for i in range(5)]
    monkeypatch.setenv("MODBOT_CATCHUP_MESSAGES", "3")
    await senv.start()
    await senv.settle()
    assert [verdicts(senv, f"{general}:{m['ts']}") for m in missed] == [0, 0, 1, 1, 1]
    calls = [c for c in senv.fake.calls_of("conversations.history") if c.params.get("channel") == general]
    assert [c.params.get("cursor") is not None for c in calls] == [False, True]
    assert senv.bot is not None and senv.bot.catchup_report is not None
    assert senv.bot.catchup_report.cut_short == [general]
