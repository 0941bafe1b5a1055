"""Wire tests: the Slack app's ready line and ``/modstatus`` (the twin of Discord's ``/modbot status``)."""

from __future__ import annotations

import logging

import pytest

from bot.logs import READY_LOGGER
from tests.slack.test_app_wire import SlackEnv

pytestmark = pytest.mark.slack


async def modstatus(env: SlackEnv, user: str) -> str:
    fields = env.fake.command_payload("/modstatus", "", user=user, channel=env.fake.general.id)
    count = len(env.fake.hook_posts) + 1
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    hook = (await env.fake.wait_for_hook(count=count))[-1]
    assert hook.body["response_type"] == "ephemeral"
    return hook.body["text"]


async def test_ready_line_names_the_workspace_database_model_and_unset_channels(env, caplog):
    """On start the app logs one line with the workspace, the mode, the absolute database path, the model and its
    version, the channels not set yet and the workspace's policy file."""
    (env.policy_dir / "servers" / f"slack-{env.fake.team_id}.toml").write_text(
        f'[server]\nreview_channel = "{env.review.id}"\n')
    with caplog.at_level(logging.INFO, logger=READY_LOGGER):
        await env.start()
    (line,) = [r.getMessage() for r in caplog.records if r.name == READY_LOGGER]
    team = env.fake.team_id
    assert line.startswith("slack bot ready (http mode) in 1 workspace: ")
    assert f"in 1 workspace: {env.fake.team_name} ({team});" in line
    assert f"database {env.db.resolve()};" in line and "model fake version " in line
    assert f"not set yet: {env.fake.team_name} ({team}) mod_log_channel (" in line
    assert line.endswith(f"its policy file is {env.policy_dir / 'servers' / f'slack-{team}.toml'}")


async def test_modstatus_answers_a_moderator(env):
    """/modstatus by a member of the moderators' user group shows the model, the database, both channels and the
    open review items, ephemerally."""
    await env.start()
    await env.say(env.fake.member.id, "identityhate in general")
    text = await modstatus(env, env.mods.id)
    assert "Model: fake version " in text and f"Database: {env.db.resolve()}." in text
    assert f"review_channel (review cards): <#{env.review.id}>." in text
    assert f"mod_log_channel (the mod log): <#{env.modlog.id}>." in text
    assert "Open review items: 1." in text and "Messages judged since then: 1." in text


async def test_modstatus_is_refused_for_members(env):
    """/modstatus by an ordinary member is refused and shows nothing about the bot."""
    await env.start()
    text = await modstatus(env, env.fake.member.id)
    assert "You need Manage Messages" in text and "Database" not in text
