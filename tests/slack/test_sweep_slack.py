"""Wire tests of issue 25's Slack items: the real slack-bolt app against the local fake Slack (127.0.0.1, port 0),
a real SQLite mod log and a fake scorer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from tests.slack.test_app_wire import SlackEnv, senv  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slack


async def until(predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
    """Poll ``predicate`` (a mod-log query: the fake Slack sees no database writes) until truthy."""
    async with asyncio.timeout(timeout):
        while not (value := predicate()):
            await asyncio.sleep(0.02)
    return value


async def test_member_joined_channel_is_not_a_workspace_join(senv: SlackEnv):  # noqa: F811
    """An admin adding ten long-standing members to a new channel raises no join-burst raid and records no join
    date for them; a real team_join right after is recorded."""
    await senv.start()
    regulars = [senv.fake.add_user(f"regular{i}") for i in range(10)]
    new_channel = senv.fake.add_channel("project-x", members=[senv.fake.admin.id])
    for user in regulars:
        ev = senv.fake.member_joined_channel_event(user.id, new_channel.id, inviter=senv.fake.admin.id)
        assert (await senv.fake.deliver_event(senv.url, ev)).status == 200
    newcomer = senv.fake.add_user("newcomer")
    assert (await senv.fake.deliver_event(senv.url, senv.fake.team_join_event(newcomer))).status == 200
    await until(lambda: senv.rows("SELECT member_id FROM member_joins WHERE member_id = ?",
                                                 (newcomer.id,)))
    await senv.settle()
    assert senv.rows("SELECT COUNT(*) FROM raids") == [(0,)]
    joined = {r[0] for r in senv.rows("SELECT member_id FROM member_joins")}
    assert joined == {newcomer.id}
