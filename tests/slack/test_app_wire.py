"""Wire tests of the Slack app (``python -m bot slack``'s SlackBot) against the local fake Slack: the real slack-bolt
app and slack_sdk client, signed HTTP requests and Socket Mode envelopes, a real SQLite mod log, a fake scorer."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.slack.run import SlackBot, SlackSettings
from tests.fakes import FakeScorer
from tests.slack.fake_slack import FakeSlack

pytestmark = pytest.mark.slack

SCORES = {"identityhate": {"identity_attack": 0.97, "toxicity": 0.9},
          "borderline": {"insult": 0.9}}


class SlackEnv:
    """One test's world: the fake Slack, moderators, channels, the policy folder, the database and the bot."""

    def __init__(self, fake: FakeSlack, tmp: Path) -> None:
        self.fake = fake
        self.tmp = tmp
        self.mods = fake.add_user("mod")
        self.mod2 = fake.add_user("mod2")
        self.group = fake.add_usergroup("moderators", [self.mods.id, self.mod2.id])
        everyone = [u.id for u in fake.users.values()]
        self.review = fake.add_channel("mod-review", private=True, members=[fake.admin.id, self.mods.id,
                                                                            self.mod2.id])
        self.modlog = fake.add_channel("mod-log", private=True, members=[fake.admin.id])
        for chan in (fake.general, fake.random):
            chan.members.update(everyone)
        self.db = tmp / "modlog.db"
        self.policy_dir = tmp / "config"
        (self.policy_dir / "servers").mkdir(parents=True)
        (self.policy_dir / "servers" / f"slack-{fake.team_id}.toml").write_text(
            f'[server]\nreview_channel = "{self.review.id}"\nmod_log_channel = "{self.modlog.id}"\n'
            f'moderator_roles = ["{self.group}"]\n'
            '[identity_target]\nextra_terms = ["identityhate"]\n')
        self.bot: SlackBot | None = None
        self.url = ""

    async def start(self, *, mode: str = "http", admin: bool = False) -> SlackBot:
        settings = SlackSettings(bot_token=self.fake.bot_token, app_token=self.fake.app_token,
                                 signing_secret=self.fake.signing_secret,
                                 admin_token=self.fake.admin.token if admin else None, mode=mode, host="127.0.0.1",
                                 port=0, api_url=self.fake.api_url)
        self.bot = SlackBot(settings, db_path=self.db, policy_dir=self.policy_dir,
                            scorer_factory=lambda: FakeScorer(SCORES))
        await self.bot.start()
        if mode == "http":
            self.url = f"http://127.0.0.1:{self.bot.port}/slack/events"
        else:
            await self.fake.wait_for_connections(1)
        return self.bot

    async def stop(self) -> None:
        if self.bot is not None:
            await self.bot.close()
            self.bot = None

    async def settle(self) -> None:
        """Wait until every delivered event was judged and carried out (event-based)."""
        assert self.bot is not None
        for _ in range(3):
            await asyncio.sleep(0)
            await asyncio.wait_for(self.bot.service.drain(), 5)
            await asyncio.wait_for(self.bot.workflow.drain(), 5)

    async def say(self, user: str, text: str, *, channel: str | None = None, thread_ts: str | None = None,
                  retry: int | None = None, event: dict[str, Any] | None = None) -> dict[str, Any]:
        """Deliver a message event over HTTP; wait until it was judged; return the event."""
        ev = event or self.fake.message_event(channel or self.fake.general.id, user, text, thread_ts=thread_ts)
        done = self.outcome_of(ev)
        resp = await self.fake.deliver_event(self.url, ev, retry_num=retry)
        assert resp.status == 200
        await asyncio.wait_for(done, 5)
        await self.settle()
        return ev

    def outcome_of(self, event: dict[str, Any]) -> asyncio.Future[Any]:
        """A future resolved with the Outcome of the message an event carries (the bot's observers hook)."""
        msg = event.get("message") or event
        key = f"{event['channel']}:{msg['ts']}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        bot = self.bot
        assert bot is not None, "start the bot first"

        def observe(outcome: Any) -> None:
            if outcome.verdict.message.id == key and not fut.done():
                fut.set_result(outcome)
                bot.observers.remove(observe)

        bot.observers.append(observe)
        return fut

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(self.db)
        try:
            return [tuple(r) for r in con.execute(sql, params)]
        finally:
            con.close()

    def cards(self) -> list[dict[str, Any]]:
        """Messages the bot posted in the review channel (their blocks)."""
        return [m for m in self.review.messages.values() if m.get("user") == self.fake.bot_user_id]

    def posted(self, channel: Any) -> list[Any]:
        return [c for c in self.fake.calls_of("chat.postMessage") if c.params.get("channel") == channel.id]


@pytest.fixture
async def senv(tmp_path: Path) -> AsyncIterator[SlackEnv]:
    async with FakeSlack() as fake:
        env = SlackEnv(fake, tmp_path)
        try:
            yield env
        finally:
            await env.stop()


def card_text(card: dict[str, Any]) -> str:
    return json.dumps(card.get("blocks") or [])


def buttons(card: dict[str, Any]) -> list[str]:
    return [e["action_id"] for b in card.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]]


async def test_identity_attack_in_a_thread_goes_to_review_and_the_author_is_told_privately(senv):
    """Without an admin token: an attack in a thread (of #random: Slack removes nobody from #general) is not
    deleted; its card reaches review, says deletion needs an admin, offers no Delete but Remove from channel, and
    the author gets an ephemeral notice in the thread."""
    await senv.start()
    random = senv.fake.random.id
    parent = senv.fake.add_message(random, senv.fake.owner.id, "celebrating Alex today!")
    ev = await senv.say(senv.fake.member.id, "identityhate, all of you", channel=random, thread_ts=parent["ts"])
    (card,) = senv.cards()
    assert "Review #1 (automod)" in card_text(card) and "needs an admin" in card_text(card)
    assert "mod:review:1:delete" not in buttons(card) and "mod:review:1:kick" in buttons(card)
    assert senv.fake.calls_of("chat.delete") == []
    (eph,) = [e for e in senv.fake.ephemerals if e.get("user") == senv.fake.member.id]
    assert eph.get("thread_ts") == parent["ts"] and "case #1" in eph["text"]
    assert senv.rows("SELECT message_id, channel_id FROM verdicts") == [
        (f"{random}:{ev['ts']}", f"{random}:{parent['ts']}")]


async def test_with_an_admin_token_the_attack_is_deleted(senv):
    """With SLACK_ADMIN_USER_TOKEN the bot deletes the member's message with that token; the case is applied."""
    await senv.start(admin=True)
    ev = await senv.say(senv.fake.member.id, "identityhate go away")
    (delete,) = senv.fake.calls_of("chat.delete")
    assert delete.token == senv.fake.admin.token and delete.ok and delete.params["ts"] == ev["ts"]
    assert senv.fake.message(senv.fake.general.id, ev["ts"]) is None
    assert senv.rows("SELECT action, status FROM cases") == [("delete", "applied")]


async def test_deleting_a_message_twice_is_marked_gone(senv):
    """Slack answers a second chat.delete of one message ``message_not_found``: the enforcer marks that result
    ``extra[GONE]``, so the workflow counts the delete as done (a stop after the first delete, an author who deleted
    first) instead of recording a failure."""
    from bot.core.ports import GONE

    await senv.start(admin=True)
    ev = await senv.say(senv.fake.member.id, "hello there, nice weather")
    ref = f"{senv.fake.general.id}:{ev['ts']}"
    first = await senv.bot.enforcer.delete_message("T", senv.fake.general.id, ref)
    second = await senv.bot.enforcer.delete_message("T", senv.fake.general.id, ref)
    assert first.ok and not first.extra.get(GONE)
    assert not second.ok and second.extra.get(GONE) == "1" and "message_not_found" in second.reason


@pytest.mark.parametrize("how", ["bad_signature", "too_old"])
async def test_unsigned_or_stale_requests_get_401_and_nothing_is_recorded(senv, how):
    """A wrong signature, or a signed request older than 5 minutes, is refused with 401; nothing is judged."""
    await senv.start()
    ev = senv.fake.message_event(senv.fake.general.id, senv.fake.member.id, "identityhate")
    kw = {"secret": "not-the-secret"} if how == "bad_signature" else {"age_s": 301}
    resp = await senv.fake.deliver_event(senv.url, ev, **kw)
    assert resp.status == 401
    await senv.settle()
    assert senv.rows("SELECT COUNT(*) FROM verdicts") == [(0,)] and senv.cards() == []


async def test_a_retried_event_and_a_second_event_id_are_judged_once(senv):
    """Slack's redelivery (X-Slack-Retry-Num) and the same message under another event id: one verdict, one card."""
    await senv.start()
    ev = await senv.say(senv.fake.member.id, "borderline take")
    await senv.say(senv.fake.member.id, "", event=ev, retry=1)
    resp = await senv.fake.deliver_event(senv.url, senv.fake.event_callback(ev, event_id="EvOTHER"))
    assert resp.status == 200
    await senv.settle()
    assert senv.rows("SELECT COUNT(*) FROM verdicts") == [(1,)] and len(senv.cards()) == 1


async def test_an_edit_into_abuse_is_caught_and_editing_again_adds_no_strike(senv):
    """message_changed re-judges: an edit into abuse earns one strike; a further edit earns none."""
    await senv.start(admin=True)
    ev = await senv.say(senv.fake.member.id, "hello everyone")
    assert senv.rows("SELECT flagged FROM verdicts") == [(0,)]
    ch = senv.fake.general.id
    await senv.say("", "", event=senv.fake.message_changed_event(ch, ev["ts"], "identityhate edit"))
    assert senv.rows("SELECT COUNT(*), SUM(points) FROM strikes") == [(1, 1)]
    senv.fake.add_message(ch, senv.fake.member.id, "identityhate edit", ts=ev["ts"])  # deleted by the bot: put back
    await senv.say("", "", event=senv.fake.message_changed_event(ch, ev["ts"], "identityhate edited again"))
    assert senv.rows("SELECT COUNT(*), SUM(points) FROM strikes") == [(1, 1)]


async def click(senv, user: str, card: dict[str, Any], action_id: str):
    """A signed block_actions click on a review card; returns the HTTP answer."""
    payload = senv.fake.block_actions_payload(user=user, channel=senv.review.id, message_ts=card["ts"],
                                              action_id=action_id)
    return await senv.fake.deliver_interaction(senv.url, payload)


async def test_a_member_who_is_not_a_moderator_is_refused_on_the_card(senv):
    """A click by a plain member is acknowledged, refused ephemerally, and changes nothing."""
    await senv.start()
    await senv.say(senv.fake.member.id, "borderline take")
    (card,) = senv.cards()
    bystander = senv.fake.add_user("bystander")
    resp = await click(senv, bystander.id, card, "mod:review:1:warn")
    assert resp.status == 200
    (hook,) = await senv.fake.wait_for_hook()
    assert "You need Manage Messages" in hook.body["text"] and hook.body.get("response_type") == "ephemeral"
    assert senv.rows("SELECT decision FROM review_items") == [("open",)]


async def test_two_moderators_deciding_one_card_only_one_wins(senv):
    """Warn clicked and Remove from channel confirmed at once by two moderators: one is carried out, the other
    refused."""
    await senv.start()
    await senv.say(senv.fake.member.id, "borderline take", channel=senv.fake.random.id)
    (card,) = senv.cards()
    assert (await click(senv, senv.mod2.id, card, "mod:review:1:kick")).status == 200  # asks first: a modal
    (opened,) = await senv.fake.wait_for("views.open")
    view = senv.fake.views[opened.response["view"]["id"]]
    submit = senv.fake.view_submission_payload(
        user=senv.mod2.id, callback_id="mod_confirm", view_id=view["id"], private_metadata=view["private_metadata"],
        values={"reason": {"value": {"type": "plain_text_input", "value": "baiting again"}}})
    await asyncio.gather(click(senv, senv.mods.id, card, "mod:review:1:warn"),
                         senv.fake.deliver_interaction(senv.url, submit))
    await senv.fake.wait_for("chat.update")  # the winner's decided card...
    # ...and the refusal (an answer to the click's response_url or an ephemeral message: both land in ephemerals)
    await senv.fake.wait_until(lambda: any("already decided" in e["text"] for e in senv.fake.ephemerals))
    await senv.settle()
    refusals = [e for e in senv.fake.ephemerals if "already decided" in e["text"]]
    assert len(refusals) == 1
    assert len(senv.rows("SELECT 1 FROM cases WHERE moderator_id IS NOT NULL")) == 1
    done = senv.rows("SELECT decision FROM review_items")[0][0]
    assert done in ("warned", "kicked")
    kicks = senv.fake.calls_of("conversations.kick")
    assert len(kicks) == (1 if done == "kicked" else 0)


async def test_report_command_and_message_shortcut_create_review_items(senv):
    """/report @member and the "Report message" shortcut open modals; their submissions queue review items."""
    await senv.start()
    member = senv.fake.member
    fields = senv.fake.command_payload("/report", f"<@{member.id}|member>", user=senv.fake.owner.id,
                                       channel=senv.fake.general.id)
    resp = await senv.fake.deliver_command(senv.url, fields)
    assert resp.status == 200
    (opened,) = await senv.fake.wait_for("views.open")
    view = opened.params["view"] if isinstance(opened.params["view"], dict) else json.loads(opened.params["view"])
    sub = senv.fake.view_submission_payload(user=senv.fake.owner.id, callback_id="mod_report",
                                            values={"text": {"value": {"type": "plain_text_input",
                                                                       "value": "insults in DMs"}}},
                                            private_metadata=view["private_metadata"])
    assert (await senv.fake.deliver_interaction(senv.url, sub)).status == 200
    msg = senv.fake.add_message(senv.fake.general.id, member.id, "some rude text")
    short = senv.fake.message_action_payload(user=senv.admin_id if hasattr(senv, "admin_id") else
                                             senv.fake.admin.id, channel=senv.fake.general.id,
                                             message_ts=msg["ts"], callback_id="report_message")
    assert (await senv.fake.deliver_interaction(senv.url, short)).status == 200
    opened2 = (await senv.fake.wait_for("views.open", count=2))[1]
    view2 = opened2.params["view"] if isinstance(opened2.params["view"], dict) else json.loads(opened2.params["view"])
    sub2 = senv.fake.view_submission_payload(user=senv.fake.admin.id, callback_id="mod_report",
                                             values={"text": {"value": {"type": "plain_text_input",
                                                                        "value": "rude"}}},
                                             private_metadata=view2["private_metadata"])
    assert (await senv.fake.deliver_interaction(senv.url, sub2)).status == 200
    await senv.fake.wait_until(lambda: len(senv.cards()) == 2)
    rows = senv.rows("SELECT source, member_id, message_id, reason FROM review_items ORDER BY id")
    assert rows == [("report", member.id, None, "insults in DMs"),
                    ("report", member.id, f"{senv.fake.general.id}:{msg['ts']}", "rude")]


async def test_a_rate_limited_web_api_call_is_retried_after_retry_after(senv):
    """A 429 with Retry-After on chat.postMessage is waited out by slack_sdk's retry handler; the card lands."""
    await senv.start()
    senv.fake.rate_limit("chat.postMessage", retry_after=1, times=1)
    await senv.say(senv.fake.member.id, "borderline take")
    posts = senv.fake.calls_of("chat.postMessage")
    assert [p.status for p in posts[:2]] == [429, 200]
    assert posts[1].at - posts[0].at >= 0.9 and len(senv.cards()) == 1


async def test_a_join_burst_with_abuse_raises_one_raid_alert(senv):
    """Ten accounts join the workspace within seconds and post attacks (in #random: Slack removes nobody from
    #general): one raid alert, one raid card."""
    await senv.start()
    raiders = [senv.fake.add_user(f"raider{i}") for i in range(10)]
    for user in raiders:
        senv.fake.random.members.add(user.id)
        resp = await senv.fake.deliver_event(senv.url, senv.fake.team_join_event(user))
        assert resp.status == 200
    await senv.fake.wait_until(lambda: senv.rows("SELECT COUNT(*) FROM raids")[0][0] >= 1)
    for user in raiders[:6]:
        await senv.say(user.id, f"identityhate from {user.name}", channel=senv.fake.random.id)
    await senv.fake.wait_until(lambda: any("Remove all from channel" in card_text(c) for c in senv.cards()))
    # the burst of attacks is the same raid: still one open raid, one card, one alert in the mod log
    assert senv.rows("SELECT COUNT(*) FROM raids WHERE closed_at IS NULL") == [(1,)]
    raid_cards = [c for c in senv.cards() if "Raid #" in card_text(c)]
    assert len(raid_cards) == 1 and "join burst" in card_text(raid_cards[0])
    alerts = [c for c in senv.posted(senv.modlog) if "Raid alert" in str(c.params.get("text"))]
    assert len(alerts) == 1
    assert any(b.endswith(":kick") for b in buttons(raid_cards[0]))  # "Remove all from channel"


async def test_policy_changes_need_a_workspace_admin(senv):
    """/modpolicy set by a member or a moderator is refused; by a workspace admin it is stored and audited."""
    await senv.start()

    async def modpolicy(user):
        fields = senv.fake.command_payload("/modpolicy", "set thresholds.insult.review 0.95", user=user,
                                           channel=senv.fake.general.id)
        count = len(senv.fake.hook_posts) + 1
        resp = await senv.fake.deliver_command(senv.url, fields)
        assert resp.status == 200
        return (await senv.fake.wait_for_hook(count=count))[-1].body["text"]

    assert "You need Manage Server" in await modpolicy(senv.fake.member.id)
    assert "You need Manage Server" in await modpolicy(senv.mods.id)
    assert senv.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
    assert "Policy updated" in await modpolicy(senv.fake.admin.id)
    assert senv.rows("SELECT key, moderator_id FROM policy_changes") == [("thresholds.insult.review",
                                                                         senv.fake.admin.id)]


async def test_socket_mode_acknowledges_within_three_seconds_and_judges_once(senv):
    """Over Socket Mode an events_api envelope is acknowledged (same envelope_id) within 3 s, judged, and its
    redelivery (retry_attempt 1) is judged once."""
    bot = await senv.start(mode="socket")
    ev = senv.fake.message_event(senv.fake.general.id, senv.fake.member.id, "borderline over socket")
    first_done = senv.outcome_of(ev)
    env = await senv.fake.send_envelope("events_api", senv.fake.event_callback(ev))
    acked = await senv.fake.wait_for_ack(env.envelope_id)
    assert acked.ack_latency_s is not None and acked.ack_latency_s < 3
    assert not (await asyncio.wait_for(first_done, 5)).duplicate
    again_done = senv.outcome_of(ev)
    again = await senv.fake.send_envelope("events_api", senv.fake.event_callback(ev), retry_attempt=1,
                                          retry_reason="timeout")
    await senv.fake.wait_for_ack(again.envelope_id)
    assert (await asyncio.wait_for(again_done, 5)).duplicate
    await senv.settle()
    assert bot.service.stats["duplicates"] == 1
    assert senv.rows("SELECT COUNT(*) FROM verdicts") == [(1,)] and len(senv.cards()) == 1


async def test_socket_mode_slash_command_answers_ephemerally(senv):
    """A slash_commands envelope is acknowledged and answered through its response_url (/mystatus)."""
    await senv.start(mode="socket")
    fields = senv.fake.command_payload("/mystatus", "", user=senv.fake.member.id, channel=senv.fake.general.id)
    env = await senv.fake.send_envelope("slash_commands", fields)
    await senv.fake.wait_for_ack(env.envelope_id)
    (hook,) = await senv.fake.wait_for_hook()
    assert "Active strikes:* 0" in hook.body["text"] and hook.body["response_type"] == "ephemeral"


async def test_an_expired_trigger_id_gets_an_answer_not_a_crash(senv):
    """When Slack refuses the modal (expired_trigger_id), the member is told to try again; nothing is recorded."""
    await senv.start()
    senv.fake.fail("views.open", "expired_trigger_id")
    fields = senv.fake.command_payload("/appeal", "3", user=senv.fake.member.id, channel=senv.fake.general.id)
    assert (await senv.fake.deliver_command(senv.url, fields)).status == 200
    (hook,) = await senv.fake.wait_for_hook()
    assert "try again" in hook.body["text"]
    assert senv.rows("SELECT COUNT(*) FROM appeals") == [(0,)]


async def test_unknown_usage_gets_a_usage_line(senv):
    """A command with bad arguments answers how to use it, ephemerally."""
    await senv.start()
    fields = senv.fake.command_payload("/modcase", "explode", user=senv.mods.id, channel=senv.fake.general.id)
    assert (await senv.fake.deliver_command(senv.url, fields)).status == 200
    (hook,) = await senv.fake.wait_for_hook()
    assert hook.body["text"].startswith("Usage: /modcase") and hook.body["response_type"] == "ephemeral"


async def test_warn_on_a_card_dms_the_case_with_an_appeal_button_and_the_appeal_works(senv):
    """Warn on a card DMs the member the case number and an Appeal button; pressing it opens a modal whose
    submission files the appeal and posts an appeal card in the review channel."""
    dm, notice = await warn_from_card(senv)
    appeal_button = next(b for b in buttons(notice) if b.startswith("mod:appeal:"))
    case = int(appeal_button.rsplit(":", 1)[1])
    assert f"case #{case}" in notice["text"]
    await file_appeal(senv, dm, notice)
    assert senv.rows("SELECT case_number, status FROM appeals") == [(case, "open")]


@pytest.mark.parametrize("judge_bots", [False, True])
async def test_other_bots_are_judged_only_if_the_policy_says_so(senv, judge_bots):
    """Another integration's message is exempt by default (exempt.bots = true) and judged when the policy says so."""
    if judge_bots:
        path = senv.policy_dir / "servers" / f"slack-{senv.fake.team_id}.toml"
        path.write_text(path.read_text() + "[exempt]\nbots = false\n")
    await senv.start()
    await senv.say("", "", event=senv.fake.bot_message_event(senv.fake.general.id, "B0OTHER", "borderline bot text"))
    assert senv.rows("SELECT exempt, flagged FROM verdicts") == [(None, 1) if judge_bots else ("bot", 0)]


async def test_a_flagged_message_deleted_by_its_author_is_noted_on_its_open_card(senv):
    """message_deleted for a message under review updates its card ("deleted on the platform"); the item stays
    open for a moderator, and nothing new is judged."""
    await senv.start()
    ev = await senv.say(senv.fake.member.id, "borderline take")
    (card,) = senv.cards()
    resp = await senv.fake.deliver_event(senv.url, senv.fake.message_deleted_event(senv.fake.general.id, ev["ts"]))
    assert resp.status == 200
    await senv.fake.wait_for("chat.update")
    assert "deleted on the platform" in card_text(senv.cards()[0])
    assert senv.rows("SELECT decision FROM review_items") == [("open",)]
    assert senv.rows("SELECT COUNT(*) FROM verdicts") == [(1,)]


async def warn_from_card(senv: Any) -> tuple[Any, dict[str, Any]]:
    """Start the app, let the member post a borderline message and a moderator press Warn on its card (review #1);
    waits until the warning's case is applied. Returns the member's DM channel and the one case notice in it."""
    await senv.start()
    await senv.say(senv.fake.member.id, "borderline take")
    (card,) = senv.cards()
    await click(senv, senv.mods.id, card, "mod:review:1:warn")
    await senv.fake.wait_until(lambda: senv.rows("SELECT status FROM cases WHERE action = 'warn'") == [("applied",)])
    dm = next(c for c in senv.fake.channels.values() if c.is_im and senv.fake.member.id in c.members)
    (notice,) = list(dm.messages.values())
    return dm, notice


async def file_appeal(senv: Any, dm: Any, notice: dict[str, Any], reason: str = "I was quoting someone") -> None:
    """The member presses the Appeal button of ``notice`` (the case DM in ``dm``), submits the modal with ``reason``
    and waits until the appeal card (Appeal #1) is in the review channel; each interaction answered 200."""
    appeal_button = next(b for b in buttons(notice) if b.startswith("mod:appeal:"))
    press = senv.fake.block_actions_payload(user=senv.fake.member.id, channel=dm.id, message_ts=notice["ts"],
                                            action_id=appeal_button)
    assert (await senv.fake.deliver_interaction(senv.url, press)).status == 200
    (opened,) = await senv.fake.wait_for("views.open")
    view = opened.params["view"] if isinstance(opened.params["view"], dict) else json.loads(opened.params["view"])
    sub = senv.fake.view_submission_payload(user=senv.fake.member.id, callback_id="mod_appeal",
                                            values={"text": {"value": {"type": "plain_text_input", "value": reason}}},
                                            private_metadata=view["private_metadata"])
    assert (await senv.fake.deliver_interaction(senv.url, sub)).status == 200
    await senv.fake.wait_until(lambda: any("Appeal #1" in card_text(c) for c in senv.cards()))


async def test_a_card_dismissed_after_retention_erased_its_text_says_so(senv):
    """A card still open when retention erased its message's text is dismissed: the updated card says the text
    was erased from the mod log (it said "*Text:* (none)", as if the member had written nothing)."""
    from datetime import UTC, datetime, timedelta

    from bot.store import open_store

    await senv.start()
    await senv.say(senv.fake.member.id, "borderline take")
    (card,) = senv.cards()
    assert "borderline take" in card_text(card)
    store = await open_store(senv.db)
    try:
        assert await store.purge_expired_text(datetime.now(UTC) + timedelta(days=1)) == 1
    finally:
        await store.close()
    assert (await click(senv, senv.mods.id, card, "mod:review:1:dismiss")).status == 200
    (update,) = await senv.fake.wait_for("chat.update")
    text = json.dumps(update.params["blocks"])
    assert "(text erased from the mod log: its retention period ended, or the member asked)" in text
    assert "(none)" not in text
