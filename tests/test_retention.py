"""Retention of message text per server (bot.workflow.retention), the lifecycle step both bots run: each server's
text older than its own ``server.retention_days`` is erased, verdicts and cases stay; a Slack-only deployment
erases old text too (it never did before)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from bot.config import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.store import open_store
from bot.workflow.retention import Retention
from tests.slack.test_app_wire import SlackEnv, senv  # noqa: F401 - the fixture
from tests.store_factories import T0, make_record

DAY = timedelta(days=1)


async def test_each_server_keeps_text_for_its_own_retention_days(tmp_path: Path) -> None:
    """Server a (default 30 days) and server b (its file says 7 days), 10-day-old text in both at T0+10d: only b's
    is erased; another platform's server is left alone; verdicts stay."""
    servers = tmp_path / "servers"
    servers.mkdir()
    (servers / "slack-b.toml").write_text("[server]\nretention_days = 7\n")
    policies = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=servers)
    store = await open_store(tmp_path / "m.db")
    try:
        await store.record_batch([make_record("m1", server="a", platform="slack"),
                                  make_record("m2", server="b", platform="slack"),
                                  make_record("m3", server="b", platform="discord")])
        assert await Retention("slack", store, policies).purge(now=T0 + 10 * DAY) == 1
        assert (await store.message_excerpt("slack", "b", "m2")) == ("c1", "")
        assert (await store.message_excerpt("slack", "a", "m1")) == ("c1", "some text")
        assert (await store.message_excerpt("discord", "b", "m3")) == ("c1", "some text")
        assert await store.get_verdict("slack", "b", "m2") is not None
        assert await Retention("slack", store, policies).purge(now=T0 + 31 * DAY) == 1  # a's turn
    finally:
        await store.close()


@pytest.mark.slack
async def test_slack_bot_erases_text_older_than_retention_at_start(senv: SlackEnv) -> None:  # noqa: F811
    """A Slack-only deployment: text recorded 40 days ago is erased when the Slack app starts (30-day default)."""
    store = await open_store(senv.db)
    old = T0.replace(year=2020)
    try:
        await store.record_batch([make_record("C1:1.0", server=senv.fake.team_id, platform="slack", created=old)])
    finally:
        await store.close()
    await senv.start()
    await senv.stop()
    assert senv.rows("SELECT excerpt, purged_at IS NOT NULL FROM messages WHERE message_id = 'C1:1.0'") == [(None, 1)]


async def test_a_server_whose_policy_cannot_be_read_does_not_stop_the_others(tmp_path: Path,
                                                                             caplog: pytest.LogCaptureFixture) -> None:
    """Server g-bad's file was edited into an invalid one while the bot ran (its policy not loaded yet): the purge
    logs one error naming that server and the file, and still erases the other servers' expired text, and the
    next run purges g-bad once its file is fixed and read again (at the bot's next start). The policy error
    escaped the whole purge, so no server after it was purged, and the periodic purge's task ended for good
    (retention stopped until a restart, unseen)."""
    servers = tmp_path / "servers"
    servers.mkdir()
    bad = servers / "discord-g-bad.toml"
    bad.write_text("[server]\nretention_days = \"a week\"\n")
    policies = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=servers)
    store = await open_store(tmp_path / "m.db")
    try:
        await store.record_batch([make_record("m1", server="g-bad"), make_record("m2", server="g-ok")])
        retention = Retention("discord", store, policies)
        assert await retention.purge(now=T0 + 40 * DAY) == 1
        assert (await store.message_excerpt("discord", "g-ok", "m2")) == ("c1", "")
        assert (await store.message_excerpt("discord", "g-bad", "m1")) == ("c1", "some text")
        errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert len(errors) == 1 and "g-bad" in errors[0] and str(bad) in errors[0]
        assert retention.failed == [("discord", "g-bad")]
        bad.write_text("[server]\nretention_days = 7\n")
        policies.invalidate()  # a bot reads a server's file once; the fixed file is read at the next start
        assert await retention.purge(now=T0 + 40 * DAY) == 1
        assert (await store.message_excerpt("discord", "g-bad", "m1")) == ("c1", "")
        assert retention.failed == []
    finally:
        await store.close()


async def test_a_card_decided_after_retention_erased_its_text_says_the_text_was_erased(world) -> None:
    """A review item still open when retention erased its message's text (an item left open past the retention
    period) is decided: the card it is updated to says the text was erased, where it said the message had none
    (Discord "(no text)", Slack "(none)"); a message that keeps its text is not called erased."""
    from datetime import UTC, datetime

    from tests.test_workflow import MOD, SERVER

    old = await world.judge(world.message("alice", "borderline text", mid="m-old"))
    assert await world.store.purge_expired_text(datetime.now(UTC) + DAY, platform="discord", server_id=SERVER) == 1
    kept = await world.judge(world.message("bob", "borderline text too", mid="m-kept"))
    assert old.review_id is not None and kept.review_id is not None
    cards = {}
    for review_id in (old.review_id, kept.review_id):
        decided = await world.workflow.decide_review(MOD, SERVER, review_id, "dismiss")
        assert decided.ok and decided.card is not None  # the card the adapter edits the posted one into
        cards[review_id] = decided.card.evidence
    assert (cards[old.review_id].text, cards[old.review_id].erased) == ("", True)
    assert (cards[kept.review_id].text, cards[kept.review_id].erased) == ("borderline text too", False)


async def test_the_store_tells_an_erased_text_from_a_kept_one(store) -> None:
    """``message_text_erased`` (SQLite and PostgreSQL): true once retention erased a message's text, false for a
    message whose text is kept and for one never recorded."""
    await store.record_batch([make_record("m1", created=T0), make_record("m2", created=T0 + 20 * DAY)])
    assert await store.purge_expired_text(T0 + 10 * DAY, T0 + 10 * DAY) == 1
    assert [await store.message_text_erased("discord", "g1", m) for m in ("m1", "m2", "m3")] == [True, False, False]


async def test_retention_erases_the_quotes_an_earlier_version_left_beside_text_it_erased(database, tmp_path) -> None:
    """A mod log upgraded from a version whose retention erased only ``messages.excerpt`` (before rule-hit quotes
    were erased with it) holds messages whose text is gone but whose regex quote (a phone number) is still in the
    case, review item, strike and (replay) verdict. The next purge erases those quotes too, once; it looked only
    at messages whose text it was erasing then, so those quotes stayed for ever."""
    from tests.test_breakit29_store import _regex_hit

    async def old_purge_then_purge(store) -> None:
        async with store._tx():  # noqa: SLF001 - what the earlier version's purge left: the text gone, the quotes kept
            await store._db.execute("UPDATE messages SET excerpt = NULL, purged_at = ?",  # noqa: SLF001
                                    (T0.isoformat(timespec="microseconds"),))
        assert await store.purge_expired_text(T0 + DAY, now=T0 + 40 * DAY) == 0  # no text left to erase
    assert await _regex_hit(database, tmp_path, old_purge_then_purge) == []


async def test_a_bot_also_erases_the_expired_text_of_exports_scanned_into_its_mod_log(tmp_path: Path) -> None:
    """docs/operations.md covers an outage with a ``scan`` of the guild's export into the mod log; its messages are
    recorded under platform "export". The running bot's retention erases their text once expired, by the guild's
    own file (discord-<id>.toml: 7 days); it purged only its own platform's servers, so the scanned text stayed
    for ever unless someone ran ``purge`` by hand."""
    guild = "880000000000000001"
    servers = tmp_path / "servers"
    servers.mkdir()
    (servers / f"discord-{guild}.toml").write_text("[server]\nretention_days = 7\n")
    policies = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=servers)
    store = await open_store(tmp_path / "m.db")
    try:
        await store.record_batch([make_record("e1", server=guild, platform="export"),
                                  make_record("d1", server=guild, platform="discord", created=T0 + 9 * DAY)])
        assert await Retention("discord", store, policies).purge(now=T0 + 10 * DAY) == 1
        assert (await store.message_excerpt("export", guild, "e1")) == ("c1", "")
        assert (await store.message_excerpt("discord", guild, "d1")) == ("c1", "some text")
    finally:
        await store.close()
