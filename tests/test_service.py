"""The moderation service end to end with a fake scorer and a real SQLite mod log."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.models import ActionKind, ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService, Outcome
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SERVER = ServerRef("discord", "g1", "guild")
GENERAL = ChannelRef(id="c1", name="general")
OLD = T0 - timedelta(days=400)


def member(mid: str, *, joined: datetime = OLD, roles: tuple[str, ...] = ()) -> MemberRef:
    return MemberRef(id=mid, name=mid, joined_at=joined, created_at=joined, roles=roles)


def msg(mid: str, text: str, author: MemberRef, at: datetime = T0, *, edited: datetime | None = None,
        channel: ChannelRef = GENERAL) -> Message:
    return Message(server=SERVER, channel=channel, author=author, id=mid, text=text, created_at=at, edited_at=edited)


@pytest.fixture
async def env(tmp_path: Path):
    policy_file = tmp_path / "p.toml"
    policy_file.write_text('[exempt]\nroles = ["mods"]\n', encoding="utf-8")
    store = await SqliteStore.open(tmp_path / "mod.db")
    scorer = FakeScorer(ABUSE, fail_on="BOOM")
    reg = PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(policy_file,))
    service = ModerationService(scorer=scorer, store=store, policies=reg, max_delay_s=0.001)
    await service.start()
    yield service, store, scorer, tmp_path
    await service.close()
    await store.close()


async def test_identity_attack_is_deleted_with_case_review_and_strike(env):
    """An identity attack above the act tier gets delete, a case, a review item and one strike."""
    service, store, _, _ = env
    out = await service.handle(msg("m1", "you people are freaks", member("u1")))
    v = out.verdict
    assert v.flagged and "identity_attack" in v.labels
    assert v.action == ActionKind.DELETE
    assert out.case_number == 1 and out.review_id is not None and out.strike_added
    stored = await store.get_verdict("discord", "g1", "m1")
    assert stored is not None and stored.flagged and stored.action == ActionKind.DELETE
    case = await store.get_case("discord", "g1", 1)
    assert case is not None and case.member_id == "u1"


async def test_supportive_message_passes(env):
    """A clean message is recorded unflagged with no case."""
    service, store, _, _ = env
    out = await service.handle(msg("m1", "trans women are women", member("u1")))
    assert not out.verdict.flagged and out.verdict.action == ActionKind.NONE and out.case_number is None
    assert (await store.get_verdict("discord", "g1", "m1")) is not None


async def test_same_message_twice_gives_one_verdict(env):
    """A redelivered message (gateway resume) is a duplicate: one verdict, one case, one strike."""
    service, store, _, _ = env
    m = msg("m1", "freak", member("u1"))
    first = await service.handle(m)
    second = await service.handle(m)
    assert not first.duplicate and second.duplicate
    assert second.verdict.actions == ()
    assert len(await store.list_cases("discord", "g1")) == 1


async def test_concurrent_duplicates_in_one_batch_are_deduped(env):
    """Two deliveries of the same message submitted together yield one judged outcome and one duplicate."""
    service, store, _, _ = env
    m = msg("m1", "freak", member("u1"))
    a, b = service.submit(m), service.submit(m)
    outs = [await a, await b]
    assert sorted(o.duplicate for o in outs) == [False, True]


async def test_edit_into_abuse_is_caught_and_second_edit_adds_no_strike(env):
    """A clean message edited into abuse is caught; editing it again re-judges without a second strike."""
    service, store, _, _ = env
    u = member("u1")
    clean = await service.handle(msg("m1", "hello all", u))
    assert not clean.verdict.flagged
    e1 = await service.handle(msg("m1", "you gays are freaks", u, edited=T0 + timedelta(seconds=30)))
    assert e1.verdict.flagged and e1.strike_added
    e2 = await service.handle(msg("m1", "you gays are absolute freaks", u, edited=T0 + timedelta(seconds=60)))
    assert e2.verdict.flagged and not e2.strike_added
    strikes = await store.active_strikes("discord", "g1", "u1", T0 + timedelta(minutes=5))
    assert len(strikes) == 1
    assert (await store.get_verdict("discord", "g1", "m1")).revision == 3


async def test_exempt_role_is_not_judged(env):
    """A message from an exempt role is recorded as exempt and never scored."""
    service, _, scorer, _ = env
    out = await service.handle(msg("m1", "freak", member("mod", roles=("mods",))))
    assert out.verdict.exempt == "role" and not out.verdict.flagged
    assert all("freak" not in t for call in scorer.calls for t in call)


async def test_strikes_escalate_on_the_ladder(env):
    """Three deletions (1 point each) cross the 3-point ladder step: the third brings a 1-hour timeout."""
    service, _, _, _ = env
    u = member("u1")
    outs = [await service.handle(msg(f"m{i}", f"you people are freaks, number {i}", u, T0 + timedelta(minutes=10 * i)))
            for i in range(3)]
    assert [o.verdict.action for o in outs] == [ActionKind.DELETE, ActionKind.DELETE, ActionKind.TIMEOUT]
    timeout = next(a for a in outs[2].verdict.actions if a.kind == ActionKind.TIMEOUT)
    assert timeout.duration_s == 3600 and timeout.source == "escalation"


async def test_scorer_failure_sends_to_review(env):
    """When the model fails on a message, on_scorer_error=review sends it to the review queue."""
    service, _, _, _ = env
    out = await service.handle(msg("m1", "BOOM", member("u1")))
    assert out.verdict.action == ActionKind.REVIEW
    assert any(a.source == "scorer_error" for a in out.verdict.actions)


async def test_repeated_texts_are_scored_once(env):
    """A flood of identical texts costs one model call per distinct text."""
    service, _, scorer, _ = env
    futs = [service.submit(msg(f"m{i}", "buy cheap coins now", member(f"u{i}"), T0 + timedelta(seconds=i)))
            for i in range(20)]
    for f in futs:
        await f
    scored = [t for call in scorer.calls for t in call]
    assert scored.count("buy cheap coins now") == 1


async def test_raid_of_new_members_raises_one_alert_and_raid_mode(env):
    """Ten new members posting abuse within seconds raise exactly one raid alert and switch raid mode on."""
    service, _, _, _ = env
    outs = []
    for i in range(10):
        newbie = member(f"new{i}", joined=T0 - timedelta(minutes=5))
        outs.append(service.submit(msg(f"r{i}", f"freak {i}", newbie, T0 + timedelta(seconds=3 * i))))
    results = [await f for f in outs]
    alerts = [o for o in results if o.verdict.raid is not None]
    assert len(alerts) == 1 and alerts[0].raid_id is not None
    assert service.raid_mode("discord", "g1", "c1", T0 + timedelta(seconds=40))


async def test_shadow_mode_records_but_adds_no_strikes(tmp_path):
    """In shadow mode verdicts are marked shadow and no strike is recorded."""
    pf = tmp_path / "shadow.toml"
    pf.write_text("shadow_mode = true\n", encoding="utf-8")
    async with await SqliteStore.open(tmp_path / "s.db") as store:
        service = ModerationService(scorer=FakeScorer(ABUSE), store=store,
                                    policies=PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(pf,)))
        async with service:
            out = await service.handle(msg("m1", "you people are freaks", member("u1")))
        assert out.verdict.shadow and out.verdict.action == ActionKind.DELETE
        assert not out.strike_added
        assert await store.active_strikes("discord", "g1", "u1", T0) == []


async def test_identity_attack_without_a_named_identity_is_held_to_the_untargeted_tier(env):
    """identity_attack 0.97 on a message naming no identity neither deletes nor counts as that label.

    The default untargeted tier is review 0.98 (bot/config/default.toml ``[identity_target]``); the message is still
    flagged by its other labels (toxicity 0.95, insult 0.90 reach their review tiers), and the verdict records an
    ``identity_target`` signal that says why.
    """
    service, store, _, _ = env
    out = await service.handle(msg("m1", "what a freak", member("u1")))
    v = out.verdict
    assert "identity_attack" not in v.labels
    assert v.action == ActionKind.REVIEW and set(v.labels) == {"toxicity", "insult"}
    hit = next(h for h in v.rule_hits if h.rule == "identity_target")
    assert hit.action is None and "0.97" in hit.detail and "0.98" in hit.detail
    named = await service.handle(msg("m2", "what a freak, typical muslim", member("u2")))
    assert "identity_attack" in named.verdict.labels and named.verdict.action == ActionKind.DELETE
    assert not any(h.rule == "identity_target" for h in named.verdict.rule_hits)


async def test_a_misspelt_identity_word_counts_as_named(tmp_path: Path):
    """identity_attack 0.97 on "typical mslim" (a dropped letter) is judged on the label's own tiers (delete) with
    the default fuzzy check, and held to the untargeted tier with ``identity_target.fuzzy = false``."""
    out = {}
    for fuzzy in (True, False):
        policy_file = tmp_path / f"p{fuzzy}.toml"
        policy_file.write_text(f"[identity_target]\nfuzzy = {str(fuzzy).lower()}\n", encoding="utf-8")
        store = await SqliteStore.open(tmp_path / f"mod{fuzzy}.db")
        reg = PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(policy_file,))
        async with ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=reg, max_delay_s=0.001) as svc:
            out[fuzzy] = (await svc.handle(msg("m1", "what a freak, typical mslim", member("u1")))).verdict
        await store.close()
    assert "identity_attack" in out[True].labels and out[True].action == ActionKind.DELETE
    assert not any(h.rule == "identity_target" for h in out[True].rule_hits)
    assert "identity_attack" not in out[False].labels
    assert any(h.rule == "identity_target" for h in out[False].rule_hits)


async def test_identity_target_check_can_be_switched_off(tmp_path: Path):
    """With identity_target.required = false the identity_attack score alone decides (0.97 >= act 0.95)."""
    policy_file = tmp_path / "p.toml"
    policy_file.write_text("[identity_target]\nrequired = false\n", encoding="utf-8")
    store = await SqliteStore.open(tmp_path / "mod.db")
    reg = PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(policy_file,))
    async with ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=reg, max_delay_s=0.001) as service:
        out = await service.handle(msg("m1", "what a freak", member("u1")))
    await store.close()
    assert "identity_attack" in out.verdict.labels and out.verdict.action == ActionKind.DELETE
    assert not any(h.rule == "identity_target" for h in out.verdict.rule_hits)


TWO_SENTENCES = "I spent the weekend fixing the build server. It finally works again today."


async def test_each_sentence_is_scored_besides_the_whole_text_by_default(env):
    """The default policy ([scoring] pieces = "sentences") sends the whole text and each sentence to the model."""
    service, _, scorer, _ = env
    await service.handle(msg("m1", TWO_SENTENCES, member("u1")))
    scored = [t for call in scorer.calls for t in call]
    assert scored == [TWO_SENTENCES, "I spent the weekend fixing the build server.", "It finally works again today."]


async def test_pieces_whole_scores_the_whole_text_only(tmp_path: Path):
    """With [scoring] pieces = "whole" a multi-sentence message costs one text for the model, not three."""
    policy_file = tmp_path / "p.toml"
    policy_file.write_text('[scoring]\npieces = "whole"\n', encoding="utf-8")
    store = await SqliteStore.open(tmp_path / "mod.db")
    scorer = FakeScorer(ABUSE)
    reg = PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(policy_file,))
    async with ModerationService(scorer=scorer, store=store, policies=reg, max_delay_s=0.001) as service:
        out = await service.handle(msg("m1", TWO_SENTENCES + " You people are freaks.", member("u1")))
    await store.close()
    assert [t for call in scorer.calls for t in call] == [TWO_SENTENCES + " You people are freaks."]
    assert "identity_attack" in out.verdict.labels


async def _run(db: Path, messages: list[Message]) -> list[Outcome]:
    """One service process over ``messages`` (in order) on the SQLite file ``db``, as one run of ``scan`` does."""
    async with await SqliteStore.open(db) as store:
        reg = PolicyRegistry(DEFAULT_POLICY_PATH)
        async with ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=reg, enforce=False,
                                     max_delay_s=0.001) as service:
            futures = [service.submit(m) for m in messages]
            return [await f for f in futures]


def _brigade(n: int) -> list[Message]:
    """``n`` long-standing members each posting one flagged insult, 5 s apart, in one channel."""
    return [msg(f"b{i}", f"you idiot {i}", member(f"m{i}"), T0 + timedelta(seconds=5 * i)) for i in range(n)]


async def test_a_resumed_run_replays_judged_messages_into_the_raid_window(tmp_path: Path):
    """A scan killed after 3 of 5 brigade messages and run again raises the raid alert once the 5th member posts:
    the 3 messages recorded by the first run are replayed into the raid window (not judged or recorded again)."""
    db = tmp_path / "mod.db"
    first = await _run(db, _brigade(3))
    assert all(o.verdict.flagged and o.verdict.raid is None for o in first)
    second = await _run(db, _brigade(5))
    assert [o.duplicate for o in second] == [True, True, True, False, False]
    assert second[3].verdict.raid is None
    raid = second[4].verdict.raid
    assert raid is not None and raid.reason == "flagged_burst" and raid.members == tuple(f"m{i}" for i in range(5))
    async with await SqliteStore.open(db) as store:
        assert len(await store.list_cases("discord", "g1")) == 5  # one case per message, none twice


async def test_a_resumed_run_replays_judged_messages_into_the_spam_window(tmp_path: Path):
    """The same text three times in 30 s is duplicate spam even when a restart falls between the 2nd and 3rd."""
    db = tmp_path / "mod.db"
    spam = [msg(f"s{i}", "join my server for free nitro today", member("u1"), T0 + timedelta(seconds=4 * i))
            for i in range(3)]
    await _run(db, spam[:2])
    third = (await _run(db, spam))[2]
    assert not third.duplicate
    assert any(h.rule == "duplicate_spam" for h in third.verdict.rule_hits), third.verdict.rule_hits


async def test_a_redelivery_in_the_same_process_is_not_counted_twice(env):
    """A message this process already judged (a gateway resume) is a plain duplicate, not a replay: the raid alert
    that the fifth member completes counts five messages, not six, and the redelivery records nothing."""
    service, store, _, _ = env
    brigade = _brigade(5)
    for m in brigade[:4]:
        await service.handle(m)
    again = await service.handle(brigade[0])
    assert again.duplicate and again.verdict.raid is None
    raid = (await service.handle(brigade[4])).verdict.raid
    assert raid is not None and raid.count == 5 and len(raid.members) == 5
    assert len(await store.list_cases("discord", "g1")) == 5


class _FlakyFlagLookup(SqliteStore):
    """A real SqliteStore whose first ``flagged_messages`` call fails (a locked or unreadable database)."""

    failures = 1

    async def flagged_messages(self, keys):
        if self.failures:
            self.failures -= 1
            raise RuntimeError("database is locked")
        return await super().flagged_messages(keys)


async def test_a_failed_replay_lookup_loses_no_message(tmp_path: Path):
    """When the replay lookup fails (a locked database), it is retried: the recorded message resolves as a
    duplicate, the new one in that batch is judged and recorded once, and a redelivery of it is a duplicate."""
    db = tmp_path / "mod.db"
    await _run(db, [msg("m0", "hello there friend", member("u0"))])
    async with await _FlakyFlagLookup.open(db) as store:
        reg = PolicyRegistry(DEFAULT_POLICY_PATH)
        async with ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=reg, enforce=False,
                                     max_delay_s=0.01) as service:
            batch = [service.submit(msg("m0", "hello there friend", member("u0"))),
                     service.submit(msg("m1", "you idiot", member("u1")))]
            old, new = await asyncio.gather(*batch)
            again = await service.handle(msg("m1", "you idiot", member("u1")))
        assert store.failures == 0 and service.stats["write_retries"] == 1
        assert old.duplicate and not new.duplicate and new.verdict.flagged and again.duplicate
        assert await store.get_verdict("discord", "g1", "m1") is not None


async def test_a_resumed_run_counts_exempt_messages_as_a_continuous_run_does(tmp_path: Path):
    """Messages in an exempt channel still make their authors known (as in _judge), so after a restart between
    them and the members' first messages in #general, no new-member raid appears that one continuous run lacks."""
    pol = tmp_path / "p.toml"
    pol.write_text('[exempt]\nchannels = ["cx"]\n[rules.raid]\nnew_member_burst = 2\nnew_member_age_s = 0\n',
                   encoding="utf-8")
    a = MemberRef(id="ua", name="ua")
    b = MemberRef(id="ub", name="ub")
    bots = ChannelRef(id="cx", name="bot-commands")
    msgs = [msg("x1", "!help", a, T0, channel=bots), msg("x2", "!rank", b, T0 + timedelta(seconds=1), channel=bots),
            msg("g1", "hello everyone", a, T0 + timedelta(seconds=2)),
            msg("g2", "hi all good morning", b, T0 + timedelta(seconds=3))]

    async def run(db: Path, part: list[Message]) -> list[Outcome]:
        async with await SqliteStore.open(db) as store:
            reg = PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(pol,))
            async with ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=reg, enforce=False,
                                         max_delay_s=0.001) as service:
                return [await f for f in [service.submit(m) for m in part]]

    continuous = await run(tmp_path / "one.db", msgs)
    await run(tmp_path / "two.db", msgs[:2])
    resumed = await run(tmp_path / "two.db", msgs)
    assert [o.verdict.raid for o in resumed] == [o.verdict.raid for o in continuous] == [None] * 4


async def test_sanction_plan_strikes_escalates_and_opens_review_outside_the_pipeline(tmp_path):
    """bot.core.judge.sanction decides the strike and a crossed ladder step from a decision alone (no pipeline):
    a third delete crosses the 3-point step and adds the step's one-hour timeout; shadow mode earns nothing."""
    from datetime import UTC, datetime

    from bot.core.escalation import StrikeLedger
    from bot.core.judge import Decision, sanction
    from bot.core.models import Action, ActionKind, ChannelRef, MemberRef, Message, ServerRef
    from bot.core.policy import DEFAULT_POLICY_PATH, load_policy

    policy = load_policy(DEFAULT_POLICY_PATH)
    ledger = StrikeLedger()
    decision = Decision(("insult",), True, (Action(ActionKind.DELETE, "insult 0.99 >= 0.98"),), ActionKind.DELETE)
    plans = []
    for i in range(3):
        msg = Message(ServerRef("discord", "g"), ChannelRef("c"), MemberRef("u"), f"m{i}", "x",
                      datetime(2026, 1, 1, 12, i, tzinfo=UTC))
        plans.append(await sanction(policy, decision, ledger, msg))
    assert [p.points for p in plans] == [1, 1, 1]
    assert plans[2].strongest is ActionKind.TIMEOUT and plans[2].actions[0].duration_s == 3600
    assert all(p.open_case and p.open_review for p in plans)
    fresh = Message(ServerRef("discord", "g"), ChannelRef("c"), MemberRef("u"), "m9", "x",
                    datetime(2026, 1, 1, 13, tzinfo=UTC))
    shadow = await sanction(policy.model_copy(update={"shadow_mode": True}), decision, ledger, fresh)
    assert shadow.strike is None and shadow.points == 0 and shadow.strongest is ActionKind.DELETE
    assert (await sanction(policy, decision, ledger, fresh)).points == 1  # the same message outside shadow mode


def test_identity_target_hit_names_the_tier_raid_mode_applied():
    """In raid mode the verdict's identity_target hit said "judged against the untargeted tier 0.98" while the
    tier applied (and shown by the report) was raid mode's stricter 0.78: the hit now names the tier applied."""
    from bot.core.judge import effective_tiers
    from bot.core.models import Scores
    from bot.core.normalize import normalize
    from bot.core.policy import load_policy
    from bot.core.rules.base import RuleContext
    from bot.core.rules.identity import IdentityTargetRule

    policy = load_policy()
    m = msg("m1", "freaks like him should disappear", member("u1"))
    norm = normalize(m.text)
    scores = Scores(values={"identity_attack": 0.99})
    details = {}
    for raid in (False, True):
        tiers = effective_tiers(policy, dict(policy.thresholds), raid)
        ctx = RuleContext(message=m, norm=norm, raid_mode=raid, policy=policy, parts=(norm,), scores=scores,
                          tiers=tiers)
        [hit] = IdentityTargetRule(policy.rules).check(ctx)
        details[raid] = hit.detail
    bar = policy.identity_target.untargeted.review
    assert bar is not None
    strict = round(bar * policy.rules.raid.threshold_factor, 4)
    assert details[False].endswith(f"untargeted tier {bar:.2f}")
    assert details[True].endswith(f"untargeted tier {strict:.2f} (raid mode's; {bar:.2f} outside raid mode)")
