"""Breaking the Slack app as a workspace admin, a moderator and a member would, through the real slack-bolt app and
slack_sdk client against the fake Slack (a real SQLite mod log). Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.slack.test_app_wire import SlackEnv
from tests.slack.test_policy_slack import command, open_setup, picks, submit

pytestmark = pytest.mark.slack

#: Another organisation's workspace, which a Slack Connect channel is shared with.
OTHER_ORG = "T0OTHERORG"
SHARED = "this channel is shared with another organisation (Slack Connect)"


@pytest.mark.parametrize("key", ["server.review_channel", "server.mod_log_channel"])
async def test_modpolicy_set_refuses_a_channel_shared_with_another_organisation(env: SlackEnv, key: str) -> None:
    """``/modpolicy set`` of the review or mod-log channel naming a Slack Connect channel (``conversations.info``:
    ``is_ext_shared``), or one whose sharing invitation is pending, is refused with the reason and nothing is
    stored: the people of the other organisation in it would read every card (members' flagged words, scores,
    decisions) and mod-log entry. Before, it was stored and the cards went there."""
    await env.start()
    admin = env.fake.admin.id
    shared = env.fake.add_channel("partners", members=[admin], shared_with=[OTHER_ORG])
    pending = env.fake.add_channel("vendor", private=True, members=[admin], pending_share=True)
    for channel in (shared, pending):
        text = await command(env, "/modpolicy", f"set {key} <#{channel.id}|x>", admin)
        assert SHARED in text and text.endswith("Nothing was changed."), text
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
    own = env.fake.add_channel("cards", private=True, members=[admin])
    assert (await command(env, "/modpolicy", f"set {key} {own.id}", admin)).startswith("Policy updated")


async def test_modsetup_refuses_a_channel_shared_with_another_organisation(env: SlackEnv) -> None:
    """The setup modal's submission naming a Slack Connect channel stays open with the reason under the field and
    writes nothing (the picker's own filter is the client's; the channel is checked as the bot on submit)."""
    await env.start()
    admin = env.fake.admin.id
    view = await open_setup(env, admin)
    shared = env.fake.add_channel("partners", members=[admin], shared_with=[OTHER_ORG])
    resp = await submit(env, admin, view, picks(shared.id, env.modlog.id))
    answer = resp.json()
    assert answer["response_action"] == "errors" and list(answer["errors"]) == ["review"]
    assert SHARED in answer["errors"]["review"]
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
