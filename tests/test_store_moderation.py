"""SqliteStore: review queue decisions, reports, appeals and policy overrides with audit."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.core.errors import (
    AppealAlreadyDecided,
    AppealAlreadyOpen,
    AppealError,
    CaseNotFound,
    NotCaseMember,
    ReviewAlreadyDecided,
    ReviewNotFound,
    StoreBusy,
)
from bot.core.models import ActionKind, CaseStatus, ReviewDecision
from bot.store.sqlite import SqliteStore
from tests.store_factories import T0, make_record

D = ReviewDecision


@pytest.fixture
async def store(tmp_path):
    s = await SqliteStore.open(tmp_path / "modlog.db")
    yield s
    await s.close()


async def _flagged(store: SqliteStore, action: ActionKind = ActionKind.DELETE) -> tuple[int, int]:
    [res] = await store.record_batch(
        [make_record("m1", action=action, open_case=True, open_review=True, strike_points=1)]
    )
    assert res.case_number is not None and res.review_id is not None
    return res.case_number, res.review_id


@pytest.mark.parametrize(
    ("first", "second", "refused"),
    [
        (D.DISMISSED, D.DELETED, True),
        (D.WARNED, D.INVESTIGATING, True),
        (D.INVESTIGATING, D.BANNED, False),
        (D.INVESTIGATING, D.INVESTIGATING, False),
    ],
)
async def test_second_review_decision(store, first, second, refused):
    """Only an investigating item can be decided again; otherwise ReviewAlreadyDecided names the first decision."""
    _, review_id = await _flagged(store)
    item = await store.decide_review(review_id, first, "mod1", T0)
    assert (item.decision, item.moderator_id, item.decided_at) == (first, "mod1", T0)
    if refused:
        with pytest.raises(ReviewAlreadyDecided) as info:
            await store.decide_review(review_id, second, "mod2", T0)
        assert (info.value.decision, info.value.moderator_id) == (first.value, "mod1")
        assert (await store.get_review(review_id)).decision is first
    else:
        assert (await store.decide_review(review_id, second, "mod2", T0)).decision is second


async def test_decide_review_errors(store):
    """Unknown items, items of another server and the OPEN pseudo-decision are refused."""
    _, review_id = await _flagged(store)
    with pytest.raises(ReviewNotFound):
        await store.decide_review(review_id + 1, D.DISMISSED, "mod")
    with pytest.raises(ReviewNotFound):
        await store.decide_review(review_id, D.DISMISSED, "mod", platform="discord", server_id="g2")
    with pytest.raises(ValueError, match="not a decision"):
        await store.decide_review(review_id, D.OPEN, "mod")
    assert (await store.get_review(review_id)).decision is D.OPEN


async def test_dismiss_review_overturns_its_case_in_one_transaction(store):
    """dismiss_review claims the item, pardons the case's strike, marks the case overturned and owes the removal of
    its applied timeout; it returns the case as it was before. A second dismissal (or a decision) is refused and
    another server's item is not found."""
    number, review_id = await _flagged(store, ActionKind.TIMEOUT)
    await store.set_case_status("discord", "g1", number, CaseStatus.APPLIED)
    with pytest.raises(ReviewNotFound):
        await store.dismiss_review(review_id, "mod", T0, platform="discord", server_id="g2")
    item, before = await store.dismiss_review(review_id, "mod", T0, platform="discord", server_id="g1")
    assert (item.decision, item.moderator_id) == (D.DISMISSED, "mod")
    assert before is not None and (before.number, before.status) == (number, CaseStatus.APPLIED)
    assert (await store.get_case("discord", "g1", number)).status is CaseStatus.OVERTURNED
    assert await store.active_strikes("discord", "g1", "u1", T0) == []
    assert [c.number for c in await store.owed_timeout_lifts("discord")] == [number]
    with pytest.raises(ReviewAlreadyDecided):
        await store.dismiss_review(review_id, "mod2", T0, platform="discord", server_id="g1")
    await store.end_lift_try("discord", "g1", number, lifted=True)  # the platform removed it
    assert await store.owed_timeout_lifts("discord") == []


async def test_dismiss_review_failing_after_its_claim_writes_nothing(store):
    """A write failing inside dismiss_review after the item's claim (the pardon) rolls the claim back with it: the
    item is open (Dismiss can be clicked again), the case applied, its strike active, no lift owed."""
    number, review_id = await _flagged(store, ActionKind.TIMEOUT)
    await store.set_case_status("discord", "g1", number, CaseStatus.APPLIED)

    async def busy(*args, **kwargs):
        raise StoreBusy(store.location, "locked (test)")

    store._pardon_case = busy
    with pytest.raises(StoreBusy):
        await store.dismiss_review(review_id, "mod", T0, platform="discord", server_id="g1")
    del store._pardon_case
    assert (await store.get_review(review_id)).decision is D.OPEN
    assert (await store.get_case("discord", "g1", number)).status is CaseStatus.APPLIED
    assert len(await store.active_strikes("discord", "g1", "u1", T0)) == 1
    assert await store.owed_timeout_lifts("discord") == []
    item, _ = await store.dismiss_review(review_id, "mod", T0, platform="discord", server_id="g1")
    assert item.decision is D.DISMISSED


async def test_overturn_case_owes_the_lift_and_pardons(store):
    """overturn_case (a ladder step overturned with its cause) pardons, marks overturned and owes an applied ban's
    unban, in one write; an unknown case is refused."""
    number, _ = await _flagged(store, ActionKind.BAN)
    await store.set_case_status("discord", "g1", number, CaseStatus.APPLIED)
    assert await store.overturn_case("discord", "g1", number, moderator_id="mod", now=T0) == 1
    assert (await store.get_case("discord", "g1", number)).status is CaseStatus.OVERTURNED
    assert [c.number for c in await store.owed_lifts("discord", 3)] == [number]
    with pytest.raises(CaseNotFound):
        await store.overturn_case("discord", "g1", number + 1)


async def test_review_card_lookup(store):
    """The posted card id finds its review item; review_for_case and open_reviews find it too."""
    case_number, review_id = await _flagged(store)
    await store.set_review_card(review_id, "card-42")
    assert (await store.review_by_card("discord", "g1", "card-42")).id == review_id
    assert await store.review_by_card("discord", "g2", "card-42") is None
    assert (await store.review_for_case("discord", "g1", case_number)).id == review_id
    assert [r.id for r in await store.open_reviews("discord", "g1")] == [review_id]
    assert await store.get_review(review_id, "discord", "g2") is None
    with pytest.raises(ReviewNotFound):
        await store.set_review_card(review_id + 5, "card-1")


async def test_reports_queue_once_per_reporter(store):
    """A report opens a report review item; the same reporter reporting again gets the same item back; another
    reporter of the same message shares the message's open item (no second card), and both reports are kept."""
    first = await store.add_report("discord", "g1", "r1", "u1", "rude", message_id="m9", channel_id="c1")
    again = await store.add_report("discord", "g1", "r1", "u1", "rude!!", message_id="m9")
    other = await store.add_report("discord", "g1", "r2", "u1", "also rude", message_id="m9")
    assert (first.source, first.member_id, first.message_id, first.reason) == ("report", "u1", "m9", "rude")
    assert again.id == first.id and other.id == first.id
    record = await store.member_record("discord", "g1", "u1")
    assert [r["reason"] for r in record["reports_against"]] == ["rude", "also rude"]


async def test_appeal_overturned_pardons_strike(store):
    """Overturning an appeal marks the case overturned, pardons its strike and closes the appeal's review item."""
    case_number, _ = await _flagged(store)
    appeal_id = await store.open_appeal("discord", "g1", case_number, "u1", "it was a joke")
    appeal = await store.get_appeal(appeal_id)
    assert [a.id for a in await store.open_appeals("discord", "g1", "u1")] == [appeal_id]
    decided = await store.decide_appeal(appeal_id, upheld=False, moderator_id="mod1", now=T0)
    assert (decided.status, decided.moderator_id, decided.decided_at) == ("overturned", "mod1", T0)
    assert (await store.get_case("discord", "g1", case_number)).status is CaseStatus.OVERTURNED
    assert await store.active_strikes("discord", "g1", "u1", T0) == []
    assert (await store.get_review(appeal.review_id)).decision is D.DISMISSED
    assert await store.open_appeals("discord", "g1") == []
    with pytest.raises(AppealAlreadyDecided):
        await store.decide_appeal(appeal_id, upheld=True, moderator_id="mod2")
    with pytest.raises(AppealError, match="already overturned"):
        await store.open_appeal("discord", "g1", case_number, "u1", "again")


@pytest.mark.parametrize(
    ("action", "decision"),
    [(ActionKind.TIMEOUT, D.TIMED_OUT), (ActionKind.BAN, D.BANNED), (ActionKind.LOG, D.WARNED)],
)
async def test_appeal_upheld_keeps_case(store, action, decision):
    """Upholding keeps the case and strike; the appeal's review item records the sanction that stands."""
    case_number, _ = await _flagged(store, action)
    appeal_id = await store.open_appeal("discord", "g1", case_number, "u1", "please")
    decided = await store.decide_appeal(appeal_id, upheld=True, moderator_id="mod1")
    assert decided.status == "upheld"
    # a review-only (log) case is applied when recorded; a sanction's stays pending until carried out
    kept = CaseStatus.APPLIED if action <= ActionKind.REVIEW else CaseStatus.PENDING
    assert (await store.get_case("discord", "g1", case_number)).status is kept
    assert len(await store.active_strikes("discord", "g1", "u1", T0)) == 1
    assert (await store.get_review(decided.review_id)).decision is decision


@pytest.mark.parametrize(
    ("server", "member", "error"),
    [("g1", "u2", NotCaseMember), ("g2", "u1", CaseNotFound), ("g1", "u1", AppealAlreadyOpen)],
)
async def test_appeal_refusals(store, server, member, error):
    """Only the case's member may appeal, only cases of that server, and only one open appeal per case."""
    case_number, _ = await _flagged(store)
    await store.open_appeal("discord", "g1", case_number, "u1", "first")
    with pytest.raises(error):
        await store.open_appeal("discord", server, case_number, member, "second")


async def test_policy_override_audit(store):
    """Set, change and reset of an override are audited newest first with old and new values."""
    when = [T0 + timedelta(minutes=i) for i in range(3)]
    await store.set_policy_override("discord", "g1", "server", "labels.insult.review", 0.7, "mod1", when[0])
    change = await store.set_policy_override("discord", "g1", "server", "labels.insult.review", 0.8, "mod2", when[1])
    assert (change.old, change.new, change.action) == (0.7, 0.8, "set")
    assert await store.get_policy_override("discord", "g1", "server", "labels.insult.review") == 0.8
    assert await store.get_policy_override("discord", "g2", "server", "labels.insult.review") is None
    reset = await store.reset_policy_override("discord", "g1", "server", "labels.insult.review", "mod1", when[2])
    assert (reset.old, reset.new, reset.action) == (0.8, None, "reset")
    assert await store.reset_policy_override("discord", "g1", "server", "labels.insult.review", "mod1") is None
    history = await store.policy_changes("discord", "g1")
    assert [(c.action, c.old, c.new, c.moderator_id, c.changed_at) for c in history] == [
        ("reset", 0.8, None, "mod1", when[2]),
        ("set", 0.7, 0.8, "mod2", when[1]),
        ("set", None, 0.7, "mod1", when[0]),
    ]
    assert await store.policy_changes("discord", "g2") == []


async def test_list_policy_overrides_by_scope(store):
    """Overrides are listed by scope then key; JSON values round-trip."""
    await store.set_policy_override("discord", "g1", "channel:c9", "shadow", True, "mod")
    await store.set_policy_override("discord", "g1", "server", "actions.threat", {"kind": "timeout", "s": 600}, "mod")
    listed = await store.list_policy_overrides("discord", "g1")
    assert [(o.scope, o.key, o.value) for o in listed] == [
        ("channel:c9", "shadow", True),
        ("server", "actions.threat", {"kind": "timeout", "s": 600}),
    ]
    assert [o.key for o in await store.list_policy_overrides("discord", "g1", scope="server")] == ["actions.threat"]


@pytest.mark.parametrize("scope", ["", "global", "channel:", "channel: x", "user:1"])
async def test_invalid_scope_refused(store, scope):
    """Scopes other than server / channel:<id> / category:<id> / role:<id> are refused."""
    with pytest.raises(ValueError, match="invalid policy scope"):
        await store.set_policy_override("discord", "g1", scope, "k", 1, "mod")


async def test_case_channel_is_the_channel_of_the_cases_message(store):
    """case_channel names the channel of the message a case is about: the recorded message's, else (a message
    never recorded, reported from another channel) its report's review item's; ``None`` for a case about a
    member (no message), an unknown case or another server's number."""
    number, _ = await _flagged(store)  # message m1, recorded in channel c1
    assert await store.case_channel("discord", "g1", number) == "c1"
    reported = await store.add_report("discord", "g1", "u9", "u2", "spam", message_id="mx", channel_id="c7")
    case = await store.open_case("discord", "g1", "u2", ActionKind.WARN, "spam", moderator_id="mod1",
                                 message_id=reported.message_id)
    assert await store.case_channel("discord", "g1", case.number) == "c7"
    manual = await store.open_case("discord", "g1", "u2", ActionKind.WARN, "rude", moderator_id="mod1")
    assert await store.case_channel("discord", "g1", manual.number) is None
    assert await store.case_channel("discord", "g1", 99) is None
    assert await store.case_channel("discord", "g2", number) is None
