"""Wire tests of issue 25's Slack items: the real slack-bolt app against the local fake Slack (127.0.0.1, port 0),
a real SQLite mod log and a fake scorer."""

from __future__ import annotations

import asyncio
import html
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.slack.test_app_wire import SlackEnv, buttons, click, senv  # noqa: F401  (senv: the fixture)

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


async def _long_record(senv: SlackEnv) -> dict:  # noqa: F811
    """The member posts 15 long flagged messages (a record far past one Slack message); returns export_member's."""
    for i in range(15):
        await senv.say(senv.fake.member.id, f"identityhate number {i}: " + "a long rant about nothing " * 8)
    assert senv.bot is not None
    record = await senv.bot.workflow.export_member(senv.fake.team_id, senv.fake.member.id)
    assert len(json.dumps(record, default=str)) > 6_000
    return json.loads(json.dumps(record, default=str))


async def test_mydata_export_sends_a_long_record_whole_as_a_json_file(senv: SlackEnv):  # noqa: F811
    """/mydata export of a record longer than a message uploads it whole as a JSON file in the member's DM (the
    file parses and equals the stored record); the answer says where it went and holds no cut JSON."""
    await senv.start()
    record = await _long_record(senv)
    fields = senv.fake.command_payload("/mydata", "export", user=senv.fake.member.id, channel=senv.fake.general.id)
    assert (await senv.fake.deliver_command(senv.url, fields)).status == 200
    (hook,) = await senv.fake.wait_for_hook()
    assert "direct messages" in hook.body["text"] and "```" not in hook.body["text"]
    (upload,) = [f for f in senv.fake.files.values() if f["data"] is not None]
    assert upload["name"] == f"mydata-{senv.fake.team_id}.json"
    assert json.loads(senv.fake.file_text(upload["id"])) == record
    dm = senv.fake.channels["D" + senv.fake.member.id[1:]]
    assert upload["channels"] == [dm.id]


async def test_mydata_export_without_file_scope_sends_pages_that_join_into_the_record(senv: SlackEnv):  # noqa: F811
    """Without files:write the record goes to the DM in numbered pages whose code blocks join into the JSON."""
    senv.fake.bot_scopes.discard("files:write")
    await senv.start()
    record = await _long_record(senv)
    fields = senv.fake.command_payload("/mydata", "export", user=senv.fake.member.id, channel=senv.fake.general.id)
    assert (await senv.fake.deliver_command(senv.url, fields)).status == 200
    (hook,) = await senv.fake.wait_for_hook()
    assert "parts" in hook.body["text"]
    dm = senv.fake.channels["D" + senv.fake.member.id[1:]]
    pages = sorted((m for m in dm.messages.values() if "Your record, part" in m["text"]), key=lambda m: m["ts"])
    assert len(pages) >= 2 and all(len(p["text"]) < 4_000 for p in pages)
    joined = "".join(html.unescape(p["text"].split("```")[1]) for p in pages)  # pages are escaped for Slack
    assert json.loads(joined) == record


async def test_fake_file_upload_is_as_strict_as_slack(fake_slack):
    """The fake's files.uploadV2 flow: the real slack_sdk uploads and shares; a wrong byte count is refused,
    sharing in a channel the bot is not in fails, and the retired files.upload answers method_deprecated."""
    from slack_sdk.errors import SlackApiError, SlackRequestError
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(base_url=fake_slack.api_url, token=fake_slack.bot_token)
    done = await client.files_upload_v2(channel=fake_slack.general.id, content="{\"a\": 1}", filename="a.json")
    assert json.loads(fake_slack.file_text(done["file"]["id"])) == {"a": 1}
    lonely = fake_slack.add_channel("lonely", members=[fake_slack.admin.id], bot_member=False)
    with pytest.raises(SlackApiError) as info:
        await client.files_upload_v2(channel=lonely.id, content="x", filename="x.txt")
    assert info.value.response["error"] == "not_in_channel"
    url = await client.files_getUploadURLExternal(filename="b.txt", length=10)
    with pytest.raises(SlackRequestError):
        result = await client._upload_file(url=url["upload_url"], data=b"short", logger=client._logger,
                                           timeout=5, proxy=None, ssl=None)
        if result.status != 200:
            raise SlackRequestError(f"upload refused: {result.status}")
    with pytest.raises(SlackApiError) as info:
        await client.api_call("files.upload", data={"content": "x", "channels": fake_slack.general.id})
    assert info.value.response["error"] == "method_deprecated"


async def test_slack_connect_member_is_not_treated_as_gone_and_warn_reaches_them(senv: SlackEnv):  # noqa: F811
    """A member of another workspace in a shared channel (users.info: another team_id) is judged; Warn on their
    card DMs them the case (not "no longer in this server") and the case is applied."""
    await senv.start()
    guest = senv.fake.add_user("partner", home_team="T0PARTNER01")
    senv.fake.general.members.add(guest.id)
    await senv.say(guest.id, "borderline take")
    (card,) = senv.cards()
    assert "mod:review:1:warn" in buttons(card)
    await click(senv, senv.mods.id, card, "mod:review:1:warn")
    await senv.fake.wait_until(lambda: senv.rows("SELECT status FROM cases WHERE action = 'warn'") == [("applied",)])
    dm = next(c for c in senv.fake.channels.values() if c.is_im and guest.id in c.members)
    assert any("case #" in m["text"] for m in dm.messages.values())
    assert not [e for e in senv.fake.ephemerals if "no longer" in str(e)]


async def test_slack_connect_members_card_says_what_cannot_be_done_for_them(senv: SlackEnv):  # noqa: F811
    """The review card of a member of another workspace names that workspace and says what cannot be done for them
    here (their account is managed at home: no deactivation, no removal from their workspace) next to what can;
    a member of this workspace's card says nothing of the kind. (In #random: Slack removes nobody from #general.)"""
    await senv.start()
    guest = senv.fake.add_user("partner", home_team="T0PARTNER01")
    senv.fake.random.members.add(guest.id)
    await senv.say(guest.id, "borderline take", channel=senv.fake.random.id)
    (card,) = senv.cards()
    text = json.dumps(card["blocks"])
    assert "Member of another workspace" in text and "T0PARTNER01" in text
    assert "Not possible here:* deactivating their account" in text
    assert {"mod:review:1:warn", "mod:review:1:kick"} <= set(buttons(card))
    local = senv.fake.add_user("local")
    senv.fake.general.members.add(local.id)
    await senv.say(local.id, "borderline take")
    local_card = next(c for c in senv.cards() if "mod:review:2:warn" in buttons(c))
    assert "Member of another workspace" not in json.dumps(local_card["blocks"])
