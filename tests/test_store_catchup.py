"""Catch-up support of the store: the latest recorded message per channel (``ModStore.latest_messages``).

The ``store`` fixture here is SQLite; tests/test_store_postgres.py runs these same tests on PostgreSQL.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from bot.core.models import ChannelRef
from bot.core.ports import VerdictRecord
from bot.store.sqlite import SqliteStore
from tests.store_factories import T0, make_record


@pytest.fixture
async def store(tmp_path):
    s = await SqliteStore.open(tmp_path / "modlog.db")
    yield s
    await s.close()


def in_channel(record: VerdictRecord, channel_id: str) -> VerdictRecord:
    """The record with its message moved to ``channel_id``."""
    msg = dataclasses.replace(record.verdict.message, channel=ChannelRef(channel_id, name=channel_id))
    return dataclasses.replace(record, verdict=dataclasses.replace(record.verdict, message=msg))


async def test_latest_messages_empty_server(store):
    """A server with nothing recorded has no latest message in any channel."""
    assert await store.latest_messages("discord", "g1") == {}


async def test_latest_messages_per_channel_by_time(store):
    """Per channel the message with the latest created_at wins, whatever order the batches came in."""
    await store.record_batch([
        in_channel(make_record("105", created=T0 + timedelta(seconds=5)), "c1"),
        in_channel(make_record("101", created=T0 + timedelta(seconds=1)), "c1"),
        in_channel(make_record("201", created=T0 + timedelta(seconds=9)), "c2"),
    ])
    await store.record_batch([in_channel(make_record("103", created=T0 + timedelta(seconds=3)), "c1")])
    latest = await store.latest_messages("discord", "g1")
    assert latest == {"c1": ("105", T0 + timedelta(seconds=5)), "c2": ("201", T0 + timedelta(seconds=9))}


async def test_latest_messages_equal_times_take_the_larger_snowflake(store):
    """Among messages of one instant the numerically larger snowflake is latest (99 < 100 despite text order)."""
    await store.record_batch([in_channel(make_record("99"), "c1"), in_channel(make_record("100"), "c1")])
    assert await store.latest_messages("discord", "g1") == {"c1": ("100", T0)}


async def test_latest_messages_only_that_server_and_platform(store):
    """Another server's or platform's messages never count as this server's history."""
    await store.record_batch([
        in_channel(make_record("1", server="g2", created=T0 + timedelta(hours=1)), "c1"),
        in_channel(make_record("2", platform="slack", created=T0 + timedelta(hours=2)), "c1"),
        in_channel(make_record("3"), "c1"),
    ])
    assert await store.latest_messages("discord", "g1") == {"c1": ("3", T0)}
