"""The fake Slack driven by the real slack_sdk ``AsyncWebClient``, slack-bolt ``AsyncApp`` and Socket Mode client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.slack.conftest import bolt_app, serve_http
from tests.slack.fake_slack import FakeSlack

pytestmark = pytest.mark.slack


def client(fake: FakeSlack, token: str | None = None, **kw: Any) -> AsyncWebClient:
    """An SDK client pointed at the fake."""
    return AsyncWebClient(base_url=fake.api_url, token=token or fake.bot_token, **kw)


async def api_error(coro: Any) -> dict[str, Any]:
    """Await a Web API call that must fail; return Slack's answer body."""
    with pytest.raises(SlackApiError) as info:
        await coro
    return dict(info.value.response.data)


# --------------------------------------------------------------------------- Web API


async def test_auth_test_answers_bot_and_user_tokens(fake_slack: FakeSlack) -> None:
    """auth.test returns the bot's user and bot id for the bot token, and the user for a user token."""
    bot = await client(fake_slack).auth_test()
    assert (bot["user_id"], bot["bot_id"], bot["team_id"]) == (fake_slack.bot_user_id, fake_slack.bot_id,
                                                               fake_slack.team_id)
    assert bot["url"] == f"https://{fake_slack.domain}.slack.com/"
    admin = await client(fake_slack, fake_slack.admin.token).auth_test()
    assert admin["user_id"] == fake_slack.admin.id and "bot_id" not in admin.data
    assert fake_slack.calls[-1].token == fake_slack.admin.token
    assert (await api_error(client(fake_slack, "xoxb-wrong").auth_test()))["error"] == "invalid_auth"
    anonymous = AsyncWebClient(base_url=fake_slack.api_url)
    assert (await api_error(anonymous.auth_test()))["error"] == "not_authed"


async def test_bot_token_cannot_delete_a_members_message_but_an_admin_token_can(fake_slack: FakeSlack) -> None:
    """chat.delete: bot token on a member's message → cant_delete_message; admin user token deletes it."""
    msg = fake_slack.add_message(fake_slack.random.id, fake_slack.member.id, "abuse")
    body = await api_error(client(fake_slack).chat_delete(channel=fake_slack.random.id, ts=msg["ts"]))
    assert body["error"] == "cant_delete_message"
    assert fake_slack.message(fake_slack.random.id, msg["ts"]) is not None
    call = fake_slack.calls_of("chat.delete")[0]
    assert call.params == {"channel": fake_slack.random.id, "ts": msg["ts"]}
    assert call.content_type == "application/x-www-form-urlencoded"
    ok = await client(fake_slack, fake_slack.admin.token).chat_delete(channel=fake_slack.random.id, ts=msg["ts"])
    assert ok["ts"] == msg["ts"]
    assert fake_slack.message(fake_slack.random.id, msg["ts"]) is None
    assert fake_slack.deleted[0]["by"] == fake_slack.admin.id
    again = await api_error(client(fake_slack, fake_slack.admin.token).chat_delete(channel=fake_slack.random.id,
                                                                                 ts=msg["ts"]))
    assert again["error"] == "message_not_found"


async def test_bot_deletes_and_updates_its_own_messages_only(fake_slack: FakeSlack) -> None:
    """The bot may update and delete what it posted; a member's message → cant_update_message."""
    web = client(fake_slack)
    posted = await web.chat_postMessage(channel=fake_slack.random.id, text="card",
                                        blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "card"}}])
    assert posted["message"]["bot_id"] == fake_slack.bot_id
    updated = await web.chat_update(channel=fake_slack.random.id, ts=posted["ts"], text="decided")
    assert updated["text"] == "decided"
    assert fake_slack.message(fake_slack.random.id, posted["ts"])["text"] == "decided"  # type: ignore[index]
    other = fake_slack.add_message(fake_slack.random.id, fake_slack.member.id, "hi")
    body = await api_error(web.chat_update(channel=fake_slack.random.id, ts=other["ts"], text="x"))
    assert body["error"] == "cant_update_message"
    await web.chat_delete(channel=fake_slack.random.id, ts=posted["ts"])
    assert fake_slack.message(fake_slack.random.id, posted["ts"]) is None


async def test_post_ephemeral_needs_the_user_in_the_channel(fake_slack: FakeSlack) -> None:
    """chat.postEphemeral (sent as JSON) reaches a member; a user outside the channel → user_not_in_channel."""
    outsider = fake_slack.add_user("outsider")
    web = client(fake_slack)
    ok = await web.chat_postEphemeral(channel=fake_slack.random.id, user=fake_slack.member.id, text="notice")
    assert fake_slack.ephemerals == [{"channel": fake_slack.random.id, "user": fake_slack.member.id,
                                      "text": "notice", "blocks": None, "message_ts": ok["message_ts"],
                                      "thread_ts": None}]
    assert fake_slack.calls_of("chat.postEphemeral")[0].content_type == "application/json"
    body = await api_error(web.chat_postEphemeral(channel=fake_slack.random.id, user=outsider.id, text="x"))
    assert body["error"] == "user_not_in_channel"
    body = await api_error(web.chat_postEphemeral(channel="C404", user=outsider.id, text="x"))
    assert body["error"] == "channel_not_found"


async def test_conversations_kick_rules(fake_slack: FakeSlack) -> None:
    """conversations.kick: bot outside → not_in_channel; #general → cant_kick_from_general; unknown user; ok."""
    web = client(fake_slack)
    lonely = fake_slack.add_channel("lonely", members=[fake_slack.member.id], bot_member=False)
    assert (await api_error(web.conversations_kick(channel=lonely.id, user=fake_slack.member.id)))["error"] \
        == "not_in_channel"
    assert (await api_error(web.conversations_kick(channel=fake_slack.general.id, user=fake_slack.member.id))
            )["error"] == "cant_kick_from_general"
    assert (await api_error(web.conversations_kick(channel=fake_slack.random.id, user="U404")))["error"] \
        == "user_not_found"
    await web.conversations_kick(channel=fake_slack.random.id, user=fake_slack.member.id)
    members = await web.conversations_members(channel=fake_slack.random.id)
    assert fake_slack.member.id not in members["members"]
    assert fake_slack.bot_user_id in members["members"]


async def test_missing_scope_names_needed_and_provided(fake_slack: FakeSlack) -> None:
    """Removing a bot scope makes its methods answer missing_scope with needed/provided."""
    fake_slack.bot_scopes.discard("channels:manage")
    body = await api_error(client(fake_slack).conversations_kick(channel=fake_slack.random.id,
                                                                 user=fake_slack.member.id))
    assert body["error"] == "missing_scope" and body["needed"] == "channels:manage"
    assert "chat:write" in body["provided"].split(",") and "channels:manage" not in body["provided"]
    assert fake_slack.member.id in fake_slack.random.members


async def test_users_info_and_usergroups(fake_slack: FakeSlack) -> None:
    """users.info gives admin/owner/bot/deleted flags, tz and profile; usergroups.users.list its members."""
    gone = fake_slack.add_user("gone", deleted=True, tz="Asia/Kolkata")
    web = client(fake_slack)
    owner = (await web.users_info(user=fake_slack.owner.id))["user"]
    assert (owner["is_owner"], owner["is_admin"], owner["is_bot"], owner["deleted"]) == (True, True, False, False)
    info = (await web.users_info(user=gone.id))["user"]
    assert info["deleted"] is True and info["profile"]["display_name"] == "gone"
    assert (info["tz"], info["tz_offset"]) == ("Asia/Kolkata", 19800)
    assert (await web.users_info(user=fake_slack.bot_user_id))["user"]["is_bot"] is True
    assert (await api_error(web.users_info(user="U404")))["error"] == "user_not_found"
    group = fake_slack.add_usergroup("mods", [fake_slack.member.id])
    assert (await web.usergroups_users_list(usergroup=group))["users"] == [fake_slack.member.id]
    assert (await api_error(web.usergroups_users_list(usergroup="S404")))["error"] == "no_such_subteam"


async def test_world_methods(fake_slack: FakeSlack) -> None:
    """conversations.open/info/join, chat.getPermalink and team.info answer in Slack's shapes."""
    web = client(fake_slack)
    dm = (await web.conversations_open(users=fake_slack.member.id))["channel"]["id"]
    assert dm.startswith("D")
    posted = await web.chat_postMessage(channel=dm, text="warning, case 3")
    assert fake_slack.channels[dm].messages[posted["ts"]]["text"] == "warning, case 3"
    link = await web.chat_getPermalink(channel=dm, message_ts=posted["ts"])
    assert link["permalink"] == f"https://{fake_slack.domain}.slack.com/archives/{dm}/p{posted['ts'].replace('.', '')}"
    secret = fake_slack.add_channel("secret", private=True)
    info = (await web.conversations_info(channel=secret.id))["channel"]
    assert info["id"].startswith("G") and info["is_private"] is True
    outside = fake_slack.add_channel("outside", bot_member=False)
    body = await api_error(web.chat_postMessage(channel=outside.id, text="x"))
    assert body["error"] == "not_in_channel"
    await web.conversations_join(channel=outside.id)
    assert fake_slack.bot_user_id in outside.members
    assert (await web.team_info())["team"]["domain"] == fake_slack.domain
    assert (await api_error(web.api_call("nosuch.method")))["error"] == "unknown_method"


async def test_history_replies_reactions_and_home_tab(fake_slack: FakeSlack) -> None:
    """conversations.history lists top-level messages newest first, replies a thread; reactions and home tab."""
    web = client(fake_slack)
    chan = fake_slack.random.id
    parent = fake_slack.add_message(chan, fake_slack.member.id, "topic")
    reply = fake_slack.add_message(chan, fake_slack.admin.id, "reply", thread_ts=parent["ts"])
    later = fake_slack.add_message(chan, fake_slack.member.id, "later")
    history = await web.conversations_history(channel=chan)
    assert [m["ts"] for m in history["messages"]] == [later["ts"], parent["ts"]]
    replies = await web.conversations_replies(channel=chan, ts=parent["ts"])
    assert [(m["text"], m["ts"]) for m in replies["messages"]] == [("topic", parent["ts"]), ("reply", reply["ts"])]
    assert (await api_error(web.conversations_replies(channel=chan, ts="1.000001")))["error"] == "thread_not_found"
    await web.reactions_add(channel=chan, timestamp=parent["ts"], name="white_check_mark")
    assert (await api_error(web.reactions_add(channel=chan, timestamp=parent["ts"], name="white_check_mark"))
            )["error"] == "already_reacted"
    assert fake_slack.message(chan, parent["ts"])["reactions"] == [  # type: ignore[index]
        {"name": "white_check_mark", "users": [fake_slack.bot_user_id], "count": 1}]
    home = {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "No strikes"}}]}
    await web.views_publish(user_id=fake_slack.member.id, view=home)
    assert fake_slack.home_tabs[fake_slack.member.id]["blocks"] == home["blocks"]


async def test_private_channels_need_group_scopes_and_public_posting_needs_chat_write_public(
        fake_slack: FakeSlack) -> None:
    """Kicking from a G… channel needs groups:write; posting where the bot is not a member needs chat:write.public."""
    web = client(fake_slack)
    private = fake_slack.add_channel("mods", private=True, members=[fake_slack.member.id])
    fake_slack.bot_scopes.discard("groups:write")
    body = await api_error(web.conversations_kick(channel=private.id, user=fake_slack.member.id))
    assert (body["error"], body["needed"]) == ("missing_scope", "groups:write")
    await web.conversations_kick(channel=fake_slack.random.id, user=fake_slack.member.id)
    outside = fake_slack.add_channel("outside", bot_member=False)
    assert (await api_error(web.chat_postMessage(channel=outside.id, text="x")))["error"] == "not_in_channel"
    fake_slack.bot_scopes.add("chat:write.public")
    posted = await web.chat_postMessage(channel=outside.id, text="x")
    assert fake_slack.message(outside.id, posted["ts"]) is not None


@pytest.mark.parametrize("change,pointer", [
    ({"title": {"type": "plain_text", "text": "A title longer than 24 chars"}}, "/view/title/text"),
    ({"submit": {"type": "plain_text", "text": "Submit with too many words"}}, "/view/submit/text"),
    ({"private_metadata": "m" * 3001}, "/view/private_metadata"),
    ({"element": {"max_length": 3001}}, "/view/blocks/0/element/max_length"),
    ({"element": {"min_length": 40, "max_length": 20}}, "/view/blocks/0/element/min_length"),
    ({"element": {"initial_value": "x" * 21, "max_length": 20}}, "/view/blocks/0/element/initial_value"),
])
async def test_views_open_refuses_a_modal_over_slacks_limits(fake_slack: FakeSlack, change, pointer) -> None:
    """views.open answers invalid_arguments, naming the field, for a modal over Slack's limits (title, submit 24;
    private_metadata 3,000; plain_text_input max_length 1-3,000, min_length not above it, initial value within)."""
    web = client(fake_slack)
    element = {"type": "plain_text_input", "action_id": "value", **change.pop("element", {})}
    view = {"type": "modal", "callback_id": "c", "title": {"type": "plain_text", "text": "Reason"},
            "blocks": [{"type": "input", "block_id": "reason", "label": {"type": "plain_text", "text": "Why"},
                        "element": element}], **change}
    body = await api_error(web.views_open(trigger_id=fake_slack.new_trigger_id(), view=view))
    assert body["error"] == "invalid_arguments"
    assert any(pointer in m for m in body["response_metadata"]["messages"]), body


async def test_views_open_needs_a_fresh_known_trigger(fake_slack: FakeSlack) -> None:
    """views.open: fresh trigger → view; reused → exchanged; >3 s old → expired; unknown → invalid."""
    web = client(fake_slack)
    view = {"type": "modal", "callback_id": "report", "title": {"type": "plain_text", "text": "Report"},
            "blocks": [], "private_metadata": "C1:1.2"}
    trigger = fake_slack.new_trigger_id()
    opened = (await web.views_open(trigger_id=trigger, view=view))["view"]
    assert opened["id"].startswith("V") and opened["private_metadata"] == "C1:1.2"
    assert (await api_error(web.views_open(trigger_id=trigger, view=view)))["error"] == "exchanged_trigger_id"
    old = fake_slack.new_trigger_id()
    fake_slack.advance(3.1)
    assert (await api_error(web.views_open(trigger_id=old, view=view)))["error"] == "expired_trigger_id"
    assert (await api_error(web.views_open(trigger_id="1.2.nope", view=view)))["error"] == "invalid_trigger_id"
    updated = (await web.views_update(view_id=opened["id"], view={**view, "private_metadata": "x"}))["view"]
    assert updated["id"] == opened["id"] and updated["private_metadata"] == "x"
    assert (await api_error(web.views_update(view_id="V404", view=view)))["error"] == "not_found"


async def test_apps_connections_open_takes_only_the_app_token(fake_slack: FakeSlack) -> None:
    """apps.connections.open: app-level token → ws URL on the fake; bot token → not_allowed_token_type."""
    web = client(fake_slack)
    url = (await web.apps_connections_open(app_token=fake_slack.app_token))["url"]
    assert url.startswith(f"ws://127.0.0.1:{fake_slack.port}/socket")
    assert (await api_error(web.apps_connections_open(app_token=fake_slack.bot_token)))["error"] \
        == "not_allowed_token_type"
    assert (await api_error(client(fake_slack, fake_slack.app_token).auth_test()))["error"] \
        == "not_allowed_token_type"


async def test_fail_injects_an_error_once(fake_slack: FakeSlack) -> None:
    """fake.fail makes the next call answer the error (with extra fields), then the method works again."""
    fake_slack.fail("chat.postMessage", "channel_not_found")
    web = client(fake_slack)
    assert (await api_error(web.chat_postMessage(channel=fake_slack.random.id, text="a")))["error"] \
        == "channel_not_found"
    assert (await web.chat_postMessage(channel=fake_slack.random.id, text="b"))["ok"] is True
    assert [c.ok for c in fake_slack.calls_of("chat.postMessage")] == [False, True]


async def test_rate_limit_without_retry_handler_raises_429(fake_slack: FakeSlack) -> None:
    """A rate-limited call answers HTTP 429, Retry-After and error ratelimited."""
    fake_slack.rate_limit("chat.postMessage", retry_after=7)
    with pytest.raises(SlackApiError) as info:
        await client(fake_slack).chat_postMessage(channel=fake_slack.random.id, text="x")
    assert info.value.response.status_code == 429
    assert info.value.response.headers["Retry-After"] == "7"
    assert info.value.response["error"] == "ratelimited"


async def test_rate_limit_is_retried_by_the_sdk_handler_after_retry_after(fake_slack: FakeSlack) -> None:
    """AsyncRateLimitErrorRetryHandler waits Retry-After (1 s) and the retry succeeds."""
    fake_slack.rate_limit("chat.postMessage", retry_after=1)
    web = client(fake_slack, retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])
    posted = await web.chat_postMessage(channel=fake_slack.random.id, text="after the limit")
    assert posted["ok"] is True
    first, second = fake_slack.calls_of("chat.postMessage")
    assert (first.status, second.status) == (429, 200)
    assert second.at - first.at >= 1.0


async def test_response_url_expires_after_5_uses_or_30_minutes(fake_slack: FakeSlack) -> None:
    """A response_url takes 5 posts, then 404 expired_url; one older than 30 minutes is expired too."""
    url = fake_slack.new_response_url()
    hook = AsyncWebhookClient(url)
    statuses = [(await hook.send(text=f"answer {i}")).status_code for i in range(6)]
    assert statuses == [200] * 5 + [404]
    assert fake_slack.hook_posts[0].body == {"text": "answer 0"}
    old = AsyncWebhookClient(fake_slack.new_response_url())
    fake_slack.advance(30 * 60 + 1)
    reply = await old.send(text="late")
    assert (reply.status_code, reply.body) == (404, "expired_url")


async def test_response_url_replaces_deletes_or_posts_like_slack(fake_slack: FakeSlack) -> None:
    """A button's response_url: replace_original edits the card, delete_original removes it; a command's
    in_channel answer becomes a channel message and a plain answer an ephemeral one."""
    card = fake_slack.add_message(fake_slack.random.id, fake_slack.bot_user_id, "card", bot_id=fake_slack.bot_id)
    click = fake_slack.block_actions_payload(user=fake_slack.admin.id, channel=fake_slack.random.id,
                                             message_ts=card["ts"], action_id="dismiss")
    hook = AsyncWebhookClient(click["response_url"])
    await hook.send(text="Dismissed by admin", replace_original=True)
    assert fake_slack.message(fake_slack.random.id, card["ts"])["text"] == "Dismissed by admin"  # type: ignore[index]
    await hook.send(text="", delete_original=True)
    assert fake_slack.message(fake_slack.random.id, card["ts"]) is None
    fields = fake_slack.command_payload("/modstats", "", user=fake_slack.admin.id, channel=fake_slack.random.id)
    command_hook = AsyncWebhookClient(fields["response_url"])
    await command_hook.send(text="only you", response_type="ephemeral")
    await command_hook.send(text="for all", response_type="in_channel")
    assert [(e["user"], e["text"]) for e in fake_slack.ephemerals] == [(fake_slack.admin.id, "only you")]
    assert [m["text"] for m in fake_slack.random.messages.values()] == ["for all"]


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


@pytest.mark.parametrize("blocks,pointer", [
    ([_section("x" * 3001)], "/blocks/0/text"),
    ([_section("x")] * 51, "/blocks"),
    ([{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}], "/blocks/0/text"),
    ([{"type": "actions", "elements": [{"type": "button", "action_id": "a",
                                        "text": {"type": "plain_text", "text": "b" * 76}}]}], "/blocks/0/elements/0/text"),
    ([{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}], "/blocks/0/fields"),
    ([{"type": "context", "elements": [{"type": "mrkdwn", "text": "c" * 3001}]}], "/blocks/0/elements/0"),
])
async def test_messages_over_block_kits_limits_are_refused(fake_slack: FakeSlack, blocks, pointer) -> None:
    """chat.postMessage, chat.update and chat.postEphemeral refuse blocks over Block Kit's limits with
    invalid_blocks (naming the json-pointer) and post nothing; a response_url answers 400 invalid_blocks and leaves
    the message as it was; exactly at the limits is accepted."""
    web = client(fake_slack)
    chan = fake_slack.random.id
    body = await api_error(web.chat_postMessage(channel=chan, text="t", blocks=blocks))
    assert body["error"] == "invalid_blocks" and any(f"[json-pointer:{pointer}" in m for m in body["errors"])
    assert fake_slack.random.messages == {}
    ok = await web.chat_postMessage(channel=chan, text="t", blocks=[_section("x" * 3000)] * 50)
    body = await api_error(web.chat_update(channel=chan, ts=ok["ts"], text="t", blocks=blocks))
    assert body["error"] == "invalid_blocks"
    body = await api_error(web.chat_postEphemeral(channel=chan, user=fake_slack.member.id, text="t", blocks=blocks))
    assert body["error"] == "invalid_blocks" and fake_slack.ephemerals == []
    click = fake_slack.block_actions_payload(user=fake_slack.admin.id, channel=chan, message_ts=ok["ts"],
                                             action_id="x")
    reply = await AsyncWebhookClient(click["response_url"]).send(text="new", blocks=blocks, replace_original=True)
    assert (reply.status_code, reply.body) == (400, "invalid_blocks")
    assert fake_slack.message(chan, ok["ts"])["text"] == "t"  # type: ignore[index]


# --------------------------------------------------------------------------- HTTP Events API with bolt


async def test_signed_message_event_reaches_a_bolt_listener(fake_slack: FakeSlack) -> None:
    """A signed thread reply posted to bolt's HTTP endpoint is acked 200 and its listener runs."""
    app = bolt_app(fake_slack)
    seen: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    @app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        await seen.put(event)

    parent = fake_slack.add_message(fake_slack.random.id, fake_slack.admin.id, "topic")
    event = fake_slack.message_event(fake_slack.random.id, fake_slack.member.id, "reply", thread_ts=parent["ts"])
    async with serve_http(app) as url:
        resp = await fake_slack.deliver_event(url, event)
        got = await asyncio.wait_for(seen.get(), 5)
    assert resp.status == 200
    assert (got["text"], got["thread_ts"], got["ts"]) == ("reply", parent["ts"], event["ts"])
    assert fake_slack.calls_of("auth.test")[0].token == fake_slack.bot_token


async def test_url_verification_is_answered_with_the_challenge(fake_slack: FakeSlack) -> None:
    """A signed url_verification request gets the challenge back from bolt."""
    app = bolt_app(fake_slack)
    async with serve_http(app) as url:
        resp = await fake_slack.deliver_event(url, {"token": "t", "challenge": "abc123", "type": "url_verification"})
    assert (resp.status, resp.json()) == (200, {"challenge": "abc123"})


async def test_bad_signature_and_old_timestamp_get_401(fake_slack: FakeSlack) -> None:
    """A wrong signing secret and a 301-second-old timestamp are refused with 401; the listener never runs."""
    app = bolt_app(fake_slack)
    ran: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    @app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        await ran.put(event)

    event = fake_slack.message_event(fake_slack.random.id, fake_slack.member.id, "hi")
    async with serve_http(app) as url:
        wrong = await fake_slack.deliver_event(url, event, secret="not-the-secret")
        old = await fake_slack.deliver_event(url, event, age_s=301)
        fresh = await fake_slack.deliver_event(url, event, age_s=290)
        got = await asyncio.wait_for(ran.get(), 5)
    assert (wrong.status, old.status, fresh.status) == (401, 401, 200)
    assert wrong.json() == {"error": "invalid request"}
    assert got["ts"] == event["ts"] and ran.empty()


async def test_bots_own_message_is_dropped_and_retry_headers_reach_the_listener(fake_slack: FakeSlack) -> None:
    """Bolt drops the bot's own message (learned from auth.test) and sees X-Slack-Retry-Num on a redelivery."""
    app = bolt_app(fake_slack)
    seen: asyncio.Queue[tuple[str, list[str] | None]] = asyncio.Queue()

    @app.event("message")
    async def on_message(event: dict[str, Any], request: Any) -> None:
        await seen.put((event.get("text", ""), request.headers.get("x-slack-retry-num")))

    own = fake_slack.message_event(fake_slack.random.id, fake_slack.bot_user_id, "my own card")
    own["bot_id"] = fake_slack.bot_id
    other = fake_slack.message_event(fake_slack.random.id, fake_slack.member.id, "again")
    async with serve_http(app) as url:
        assert (await fake_slack.deliver_event(url, own)).status == 200
        resp = await fake_slack.deliver_event(url, other, retry_num=1, retry_reason="http_timeout")
        got = await asyncio.wait_for(seen.get(), 5)
    assert resp.status == 200
    assert got == ("again", ["1"])
    assert seen.empty()


async def test_edit_delete_file_share_join_events_reach_listeners(fake_slack: FakeSlack) -> None:
    """message_changed, message_deleted, file_share, bot_message, team_join, member_joined_channel arrive."""
    app = bolt_app(fake_slack)
    seen: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    @app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        await seen.put(("message", event.get("subtype", "")))

    @app.event("team_join")
    async def on_join(event: dict[str, Any]) -> None:
        await seen.put(("team_join", event["user"]["id"]))

    @app.event("member_joined_channel")
    async def on_member(event: dict[str, Any]) -> None:
        await seen.put(("member_joined_channel", event["channel"]))

    msg = fake_slack.add_message(fake_slack.random.id, fake_slack.member.id, "fine")
    newbie = fake_slack.add_user("newbie")
    events = [
        fake_slack.message_changed_event(fake_slack.random.id, msg["ts"], "now abusive"),
        fake_slack.message_deleted_event(fake_slack.random.id, msg["ts"]),
        fake_slack.message_event(fake_slack.random.id, fake_slack.member.id, "see file",
                                 files=[{"id": "F1", "name": "a.png"}]),
        fake_slack.bot_message_event(fake_slack.random.id, "B999", "from another bot"),
        fake_slack.team_join_event(newbie),
        fake_slack.member_joined_channel_event(newbie.id, fake_slack.random.id),
    ]
    assert events[0]["message"]["text"] == "now abusive" and events[0]["previous_message"]["text"] == "fine"
    async with serve_http(app) as url:
        for event in events:
            assert (await fake_slack.deliver_event(url, event)).status == 200
        got = {await asyncio.wait_for(seen.get(), 5) for _ in events}
    assert got == {("message", "message_changed"), ("message", "message_deleted"), ("message", "file_share"),
                   ("message", "bot_message"), ("team_join", newbie.id),
                   ("member_joined_channel", fake_slack.random.id)}
    assert fake_slack.message(fake_slack.random.id, msg["ts"]) is None
    assert newbie.id in fake_slack.random.members


async def test_slash_command_ack_text_and_respond(fake_slack: FakeSlack) -> None:
    """A slash command over HTTP: ack("text") is the plain 200 body; respond() posts to the fake's response_url."""
    app = bolt_app(fake_slack)

    @app.command("/mystatus")
    async def mystatus(ack: Any, respond: Any, command: dict[str, Any]) -> None:
        await ack(f"checking {command['user_id']}")
        await respond(text="no strikes")

    fields = fake_slack.command_payload("/mystatus", "", user=fake_slack.member.id, channel=fake_slack.random.id)
    async with serve_http(app) as url:
        resp = await fake_slack.deliver_command(url, fields)
        posts = await fake_slack.wait_for_hook(1)
    assert resp.status == 200
    assert resp.body == f"checking {fake_slack.member.id}"
    assert posts[0].status == 200 and posts[0].body["text"] == "no strikes"


async def test_interactivity_payloads_reach_bolt(fake_slack: FakeSlack) -> None:
    """block_actions, view_submission and a message shortcut (which opens a modal with its trigger) reach bolt."""
    app = bolt_app(fake_slack)
    seen: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    @app.action("dismiss")
    async def dismiss(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        await seen.put(("dismiss", (body["actions"][0]["value"], body["container"]["message_ts"])))

    @app.view("report_modal")
    async def submitted(ack: Any, view: dict[str, Any]) -> None:
        await ack()
        await seen.put(("view", (view["state"]["values"]["reason"]["input"]["value"], view["private_metadata"])))

    @app.shortcut("report_message")
    async def report(ack: Any, shortcut: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        await client.views_open(trigger_id=shortcut["trigger_id"],
                                view={"type": "modal", "callback_id": "report_modal",
                                      "title": {"type": "plain_text", "text": "Report"}, "blocks": [],
                                      "private_metadata": shortcut["message"]["ts"]})
        await seen.put(("shortcut", shortcut["message"]["text"]))

    card = fake_slack.add_message(fake_slack.random.id, fake_slack.bot_user_id, "card", bot_id=fake_slack.bot_id)
    target = fake_slack.add_message(fake_slack.random.id, fake_slack.member.id, "rude")
    values = {"reason": {"input": {"type": "plain_text_input", "value": "insults"}}}
    async with serve_http(app) as url:
        r1 = await fake_slack.deliver_interaction(url, fake_slack.block_actions_payload(
            user=fake_slack.admin.id, channel=fake_slack.random.id, message_ts=card["ts"], action_id="dismiss",
            value="case-7"))
        r2 = await fake_slack.deliver_interaction(url, fake_slack.view_submission_payload(
            user=fake_slack.member.id, callback_id="report_modal", values=values, private_metadata=target["ts"]))
        r3 = await fake_slack.deliver_interaction(url, fake_slack.message_action_payload(
            user=fake_slack.member.id, channel=fake_slack.random.id, message_ts=target["ts"],
            callback_id="report_message"))
        got = dict([await asyncio.wait_for(seen.get(), 5) for _ in range(3)])
    assert (r1.status, r2.status, r3.status) == (200, 200, 200)
    assert got == {"dismiss": ("case-7", card["ts"]), "view": ("insults", target["ts"]), "shortcut": "rude"}
    assert fake_slack.calls_of("views.open")[0].ok


# --------------------------------------------------------------------------- Socket Mode


async def test_socket_mode_envelopes_are_acked_and_handled(fake_slack: FakeSlack) -> None:
    """Bolt's AsyncSocketModeHandler connects via apps.connections.open, acks events_api and interactive
    envelopes with their envelope_id within 3 s, and runs the listeners."""
    app = bolt_app(fake_slack)
    seen: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    @app.event("message")
    async def on_message(event: dict[str, Any], request: Any) -> None:
        await seen.put((event["text"], request.headers.get("x-slack-retry-num")))

    @app.action("warn")
    async def warn(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        await seen.put(("warn", body["actions"][0]["value"]))

    handler = AsyncSocketModeHandler(app, app_token=fake_slack.app_token)
    await handler.connect_async()
    try:
        await fake_slack.wait_for_connections(1)
        open_call = fake_slack.calls_of("apps.connections.open")[0]
        assert open_call.token == fake_slack.app_token
        event = fake_slack.message_event(fake_slack.random.id, fake_slack.member.id, "over the socket")
        env = await fake_slack.send_envelope("events_api", fake_slack.event_callback(event), retry_attempt=2,
                                             retry_reason="timeout")
        acked = await fake_slack.wait_for_ack(env.envelope_id)
        got = await asyncio.wait_for(seen.get(), 5)
        card = fake_slack.add_message(fake_slack.random.id, fake_slack.bot_user_id, "card",
                                      bot_id=fake_slack.bot_id)
        click = fake_slack.block_actions_payload(user=fake_slack.admin.id, channel=fake_slack.random.id,
                                                 message_ts=card["ts"], action_id="warn", value="case-9")
        env2 = await fake_slack.send_envelope("interactive", click)
        acked2 = await fake_slack.wait_for_ack(env2.envelope_id)
        clicked = await asyncio.wait_for(seen.get(), 5)
    finally:
        await handler.close_async()
    assert acked.acked and acked.ack_latency_s is not None and acked.ack_latency_s < 3.0
    assert got == ("over the socket", ["2"])
    assert acked2.acked and clicked == ("warn", "case-9")


async def test_socket_mode_slash_command_ack_payload_and_reconnect(fake_slack: FakeSlack) -> None:
    """A slash_commands envelope's ack carries ack() text; after a disconnect message or a dropped socket the
    client reconnects through apps.connections.open and acks again."""
    app = bolt_app(fake_slack)

    @app.command("/modstats")
    async def modstats(ack: Any) -> None:
        await ack("3 open cases")

    handler = AsyncSocketModeHandler(app, app_token=fake_slack.app_token)
    await handler.connect_async()
    try:
        await fake_slack.wait_for_connections(1)
        fields = fake_slack.command_payload("/modstats", "", user=fake_slack.admin.id, channel=fake_slack.random.id)
        env = await fake_slack.send_envelope("slash_commands", fields, accepts_response_payload=True)
        first = await fake_slack.wait_for_ack(env.envelope_id)
        await fake_slack.send_disconnect("refresh_requested")
        await fake_slack.wait_for_connections(2)
        env2 = await fake_slack.send_envelope("slash_commands", fields, accepts_response_payload=True)
        second = await fake_slack.wait_for_ack(env2.envelope_id)
        await fake_slack.drop_connection()
        await fake_slack.wait_for_connections(3)
        env3 = await fake_slack.send_envelope("slash_commands", fields, accepts_response_payload=True)
        third = await fake_slack.wait_for_ack(env3.envelope_id)
    finally:
        await handler.close_async()
    assert first.ack_payload == second.ack_payload == third.ack_payload == {"text": "3 open cases"}
    assert len(fake_slack.calls_of("apps.connections.open")) == 3


async def test_membership_user_groups_and_ephemeral_replacement(fake_slack: FakeSlack) -> None:
    """conversations.info says whether the caller is in a channel (is_member; a private channel it is not in is
    channel_not_found); usergroups.list lists the groups with their handles; a response_url of a click on an
    ephemeral message replaces that ephemeral message (and only it)."""
    web = client(fake_slack)
    inside = fake_slack.add_channel("inside")
    outside = fake_slack.add_channel("outside", bot_member=False)
    hidden = fake_slack.add_channel("hidden", private=True, bot_member=False)
    assert (await web.conversations_info(channel=inside.id))["channel"]["is_member"] is True
    assert (await web.conversations_info(channel=outside.id))["channel"]["is_member"] is False
    assert (await api_error(web.conversations_info(channel=hidden.id)))["error"] == "channel_not_found"
    group = fake_slack.add_usergroup("mods", [fake_slack.member.id])
    groups = (await web.usergroups_list())["usergroups"]
    assert [(g["id"], g["handle"], g["user_count"]) for g in groups] == [(group, "mods", 1)]
    await web.chat_postEphemeral(channel=fake_slack.general.id, user=fake_slack.member.id, text="page 1")
    await web.chat_postEphemeral(channel=fake_slack.general.id, user=fake_slack.admin.id, text="other")
    eph = fake_slack.ephemerals[0]
    payload = fake_slack.ephemeral_actions_payload(user=fake_slack.member.id, ephemeral=eph, action_id="next")
    assert payload["container"]["is_ephemeral"] is True and "message" not in payload
    resp = await AsyncWebhookClient(payload["response_url"]).send(text="page 2", replace_original=True)
    assert resp.status_code == 200
    assert [e["text"] for e in fake_slack.ephemerals] == ["page 2", "other"]
