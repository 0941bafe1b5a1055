"""Slack live events whose ``ts`` is not a time (sixteenth session's break-it pass): ``"inf"`` or ``"1e20"`` made
``datetime.fromtimestamp`` raise ``OverflowError`` out of the translation, so the event handler failed with a
traceback instead of refusing the event. Real translation code; the wire test drives the real bolt app of
``SlackBot`` over HTTP with a real SQLite mod log and the fake Slack."""

from __future__ import annotations

import pytest

from bot.adapters.slack.translate import member_ref, message_fields, to_core, ts_time
from tests.slack.test_app_wire import SlackEnv

pytestmark = pytest.mark.slack

BAD_TS = ["inf", "-inf", "1e20", "-1e20", "nan", "1e400", "99999999999999999999.0", "0x10", " 1700000000.1 "]


@pytest.mark.parametrize("ts", BAD_TS)
def test_a_message_whose_ts_is_not_a_slack_time_is_refused_with_a_value_error(ts: str):
    event = {"type": "message", "channel": "C1", "user": "U1", "text": "hello", "ts": ts}
    fields = message_fields(event)
    assert fields is not None
    with pytest.raises(ValueError, match="ts"):
        to_core("T1", event, fields, author=member_ref("U1", None, None))


@pytest.mark.parametrize("ts", ["inf", "-inf", "1e20", "-1e20", "nan", "1e400", "99999999999999999999.0"])
def test_ts_time_of_an_out_of_range_ts_is_now_not_an_overflow(ts: str):
    before = ts_time("1700000000.000100")
    assert ts_time(ts) > before  # "now when missing or malformed", never OverflowError


def test_an_edit_whose_edited_ts_is_out_of_range_keeps_its_message():
    event = {"type": "message", "channel": "C1", "subtype": "message_changed", "event_ts": "1700000001.000001",
             "message": {"user": "U1", "text": "new", "ts": "1700000000.000100", "edited": {"ts": "1e20"}},
             "previous_message": {"user": "U1", "text": "old", "ts": "1700000000.000100"}}
    fields = message_fields(event)
    assert fields is not None
    msg = to_core("T1", event, fields, author=member_ref("U1", None, None))
    assert msg.id == "C1:1700000000.000100" and msg.edited_at is not None


@pytest.mark.parametrize("ts", ["inf", "1e20"])
async def test_a_live_event_with_an_overflowing_ts_is_refused_and_the_next_is_judged(env: SlackEnv, ts: str):
    senv = env
    await senv.start()
    fake = senv.fake
    ev = fake.message_event(fake.general.id, senv.mods.id, "hello there", store=False)
    ev["ts"] = ev["event_ts"] = ts
    resp = await fake.deliver_event(senv.url, ev)
    assert resp.status == 200
    await senv.settle()
    await senv.say(senv.mods.id, "see you all at the meetup tomorrow")
    ids = [r[0] for r in senv.rows("SELECT message_id FROM verdicts")]
    assert f"{fake.general.id}:{ts}" not in ids and len(ids) == 1
