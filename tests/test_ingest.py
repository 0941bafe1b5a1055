"""Tests of the chat-export readers on small hand-written fixtures (one per format)."""

from __future__ import annotations

import shutil
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.models import Attachment, Mention
from bot.ingest import detect_format, iter_discord_csv, iter_discord_json, parse_dce_date, read_messages

FIX = Path(__file__).parent / "fixtures"


def _by_id(messages):
    return {m.id: m for m in messages}


def test_dce_minimal_only_required_keys_sorted():
    """A DCE JSON file with only id/timestamp/content/author.id parses, sorted by UTC time."""
    msgs = read_messages([FIX / "dce_minimal.json"])
    assert [m.id for m in msgs] == ["1", "2"]
    assert msgs[0].created_at == datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    assert msgs[0].server.platform == "export" and msgs[0].server.id == "fixtures"
    assert msgs[0].channel.id == "dce_minimal"


def test_dce_full_thread_channel_and_server():
    """A thread export maps category to parent_id and guild to the export server."""
    m = read_messages([FIX / "dce_full.json"])[0]
    assert (m.server.platform, m.server.id, m.server.name) == ("export", "42", "Test Guild")
    assert (m.channel.id, m.channel.name, m.channel.parent_id, m.channel.is_thread) == ("600", "a-thread", "500", True)


@pytest.mark.parametrize(
    ("mid", "field", "expected"),
    [
        ("5002", "edited_at", datetime(2026, 1, 1, 10, 5, tzinfo=UTC)),
        ("5002", "mentions", (Mention("1000000000000000003", is_bot=True),)),
        ("5002", "created_at", datetime(2026, 1, 1, 10, 0, 0, 123456, tzinfo=UTC)),
        ("5003", "reply_to", "5002"),
        ("5003", "mentions", (Mention("1000000000000000001", is_reply_ping=True),)),
        ("5004", "mentions", (Mention("1000000000000000001", is_reply_ping=False),)),
        ("5005", "text", ""),
        ("5005", "attachments", (Attachment("https://cdn.example.invalid/a.png", "a.png"),)),
        ("5006", "text", "🏳️‍⚧️🎂"),
        ("5007", "text", "bad \ufffd surrogate and nul \ufffd @everyone"),  # NUL: as the mod log stores it
        ("5007", "mentions_everyone", True),
    ],
)
def test_dce_full_fields(mid, field, expected):
    """DCE JSON fields map onto Message: edits, mentions, reply pings, attachments, odd text."""
    assert getattr(_by_id(read_messages([FIX / "dce_full.json"]))[mid], field) == expected


@pytest.mark.parametrize(
    ("mid", "name", "roles", "is_bot", "joined"),
    [
        ("5002", "Alice", ("900",), False, None),
        ("5003", "bob", (), False, datetime(2026, 1, 1, 9, 59, tzinfo=UTC)),
        ("5005", "helper", (), True, None),
        ("5006", "carol", (), False, datetime(2026, 1, 1, 9, 58, tzinfo=UTC)),
    ],
)
def test_dce_full_authors(mid, name, roles, is_bot, joined):
    """Authors get nickname, role ids, isBot and join time from joinedAt or a GuildMemberJoin message."""
    a = _by_id(read_messages([FIX / "dce_full.json"]))[mid].author
    assert (a.name, a.roles, a.is_bot, a.joined_at) == (name, roles, is_bot, joined)


def test_dce_full_skips_system_messages_and_derives_creation():
    """GuildMemberJoin and pin notices are not messages; created_at comes from the snowflake."""
    msgs = _by_id(read_messages([FIX / "dce_full.json"]))
    assert sorted(msgs) == ["5002", "5003", "5004", "5005", "5006", "5007"]
    assert msgs["5002"].author.created_at == datetime(2022, 7, 22, 11, 22, 59, 101000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("05-Dec-19 04:27 AM", datetime(2019, 12, 5, 4, 27, tzinfo=UTC)),
        ("05-Dec-19 12:05 AM", datetime(2019, 12, 5, 0, 5, tzinfo=UTC)),
        ("05-Dec-19 12:05 PM", datetime(2019, 12, 5, 12, 5, tzinfo=UTC)),
        ("2026-01-01T10:00:00.000+02:00", datetime(2026, 1, 1, 8, 0, tzinfo=UTC)),
        ("01/02/2026 09:30 PM", datetime(2026, 1, 2, 21, 30, tzinfo=UTC)),
    ],
)
def test_parse_dce_date(raw, expected):
    """DCE CSV dates: 2019 format, ISO with offset and US short format, zone-less read as UTC."""
    assert parse_dce_date(raw) == expected


def test_csv_2019_semicolon_bom_multiline():
    """2019 ';' CSV with BOM and trailing ';' keeps multi-line content, attachments and row order."""
    msgs = list(iter_discord_csv(FIX / "dce_2019.csv"))
    assert [m.text for m in msgs] == ["hi all", 'line one\nline "two"; with semicolon', "hi all", ""]
    assert msgs[0].author.id == "100000000000000001" and msgs[0].author.name == "ann#1234"
    assert msgs[1].attachments == (
        Attachment("https://cdn.example.invalid/x.png", "x.png"),
        Attachment("https://cdn.example.invalid/y.txt", "y.txt"),
    )
    assert msgs[1].created_at == datetime(2019, 12, 5, 16, 27, tzinfo=UTC)
    assert len({m.id for m in msgs}) == 4  # the two identical "hi all" rows get distinct ids


def test_csv_embed_only_rows_are_marked_as_from_a_bot(tmp_path):
    """A row with no content and no attachments (an embed, which only bots can send) has an is_bot author.

    The same author's rows with text stay is_bot=False, and an attachment-only row is a member's upload.
    """
    f = tmp_path / "log.csv"
    f.write_text(
        "AuthorID,Author,Date,Content,Attachments,Reactions\n"
        '"9","YAGPDB.xyz#8760","2019-12-04T07:57:00+00:00","","",""\n'
        '"9","YAGPDB.xyz#8760","2019-12-04T07:58:00+00:00","Done!","",""\n'
        '"7","ann#1234","2019-12-04T07:59:00+00:00","","https://cdn.example.invalid/a.png",""\n',
        encoding="utf-8",
    )
    msgs = list(iter_discord_csv(f))
    assert [(m.author.id, m.author.is_bot) for m in msgs] == [("9", True), ("9", False), ("7", False)]


def test_csv_system_rows_are_skipped_and_joins_set_joined_at(tmp_path):
    """``Joined the server.`` and ``Pinned a message.`` rows are DCE renderings of system messages, not text."""
    f = tmp_path / "log.csv"
    f.write_text(
        "AuthorID,Author,Date,Content,Attachments,Reactions\n"
        '"7","ann#1234","2019-12-04T07:50:00+00:00","Joined the server.","",""\n'
        '"7","ann#1234","2019-12-04T07:51:00+00:00","hi all, new here","",""\n'
        '"8","ben#0001","2019-12-04T07:52:00+00:00","Pinned a message.","",""\n'
        '"8","ben#0001","2019-12-04T07:53:00+00:00","welcome ann","",""\n',
        encoding="utf-8",
    )
    msgs = list(iter_discord_csv(f))
    assert [m.text for m in msgs] == ["hi all, new here", "welcome ann"]
    assert msgs[0].author.joined_at == datetime(2019, 12, 4, 7, 50, tzinfo=UTC)
    assert msgs[1].author.joined_at is None


def test_csv_current_comma_style_sorted():
    """Current ',' CSV parses ISO and short dates; read_messages sorts by time."""
    msgs = read_messages([FIX / "dce_current.csv"])
    assert [m.text for m in msgs] == ["hello, world", "earlier, in US short format"]
    assert [m.created_at.hour if m.created_at else None for m in msgs] == [8, 9]


def test_csv_ids_stable_across_reads_and_locations(tmp_path):
    """CSV ids do not change between runs nor when the file is copied elsewhere."""
    first = [m.id for m in read_messages([FIX / "dce_2019.csv"])]
    again = [m.id for m in read_messages([FIX / "dce_2019.csv"])]
    (tmp_path / "fixtures").mkdir()
    shutil.copy(FIX / "dce_2019.csv", tmp_path / "fixtures" / "dce_2019.csv")
    moved = [m.id for m in read_messages([tmp_path / "fixtures" / "dce_2019.csv"])]
    assert first == again == moved


def test_csv_partitioned_layout_uses_channels_json(tmp_path):
    """<category>/<channel>/N.csv resolves channel and category ids via an archiver channels.json."""
    root = tmp_path / "myguild"
    (root / "csv" / "news-announcements" / "official").mkdir(parents=True)
    (root / "channels.json").write_text(
        '{"77": {"name": "News & Announcements", "channels": {"1234": "official📢"}}}', encoding="utf-8"
    )
    for n in (1, 2, 10):
        shutil.copy(FIX / "dce_current.csv", root / "csv" / "news-announcements" / "official" / f"{n}.csv")
    msgs = read_messages([root / "csv"])
    assert {(m.server.id, m.channel.id, m.channel.name, m.channel.category_id) for m in msgs} == {
        ("myguild", "1234", "official", "77")
    }
    assert len(msgs) == 6 and len({m.id for m in msgs}) == 6


def _slack_checks(msgs):
    ids = [m.id for m in msgs]
    assert ids == ["C1:1767225500.000000", "C1:1767261700.000200", "C1:1767261760.000300", "C1:1767261900.000500"]
    first, parent, reply, bot = msgs
    assert (parent.server.platform, parent.server.id) == ("export", "T9")
    assert parent.mentions == (Mention("U2"), Mention("U3", is_bot=True))
    assert parent.author.roles == ("admin", "owner") and parent.author.name == "Ann"
    assert parent.channel.is_thread is False and parent.channel.name == "general"
    assert reply.channel.id == "C1:1767261700.000200" and reply.channel.parent_id == "C1" and reply.channel.is_thread
    assert reply.reply_to == "C1:1767261700.000200"
    assert reply.edited_at == datetime(2026, 1, 1, 10, 3, 10, tzinfo=UTC)
    assert reply.text == "thanks &amp; hi" and reply.author.name == "Ben B"
    assert reply.author.joined_at == datetime(2026, 1, 1, 10, 0, 0, 100, tzinfo=UTC)
    assert bot.author.is_bot and bot.author.id == "B1" and bot.author.name == "deploybot" and bot.mentions_everyone
    assert bot.attachments == (Attachment("https://files.example.invalid/log.txt", "log.txt"),)


def test_slack_folder():
    """A Slack export folder: threads, edits, bots, mentions, roles; notices skipped."""
    _slack_checks(read_messages([FIX / "slack"]))


@pytest.mark.parametrize("prefix", ["", "export-2026/"])
def test_slack_zip(tmp_path, prefix):
    """The same export as a zip, with or without a top folder, reads identically."""
    zpath = tmp_path / "export.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for f in sorted((FIX / "slack").rglob("*.json")):
            zf.write(f, prefix + f.relative_to(FIX / "slack").as_posix())
    assert detect_format(zpath) == "slack-export"
    _slack_checks(read_messages([zpath]))


def test_jsonl_order_and_fields():
    """JSONL: a time-less line has no time (``None``) and keeps its place after the line before it; the stable
    sort keeps line order otherwise."""
    msgs = read_messages([FIX / "sample.jsonl"])
    assert [m.id for m in msgs] == ["j1", "j4", "j2", "j3"]
    j2, j3 = msgs[2], msgs[3]
    assert j2.created_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert msgs[0].created_at is None and j3.created_at is None
    assert (j2.server.id, j2.channel.id, j2.author.name) == ("s1", "c1", "A")
    assert j2.author.joined_at == datetime(2025, 12, 31, 23, 59, tzinfo=UTC)
    assert (j3.channel.id, j3.channel.is_thread, j3.channel.parent_id, j3.author.id) == ("c2", True, "c1", "a2")
    assert msgs[0].server.id == "sample"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("dce_minimal.json", "discord-json"),
        ("dce_2019.csv", "discord-csv"),
        ("sample.jsonl", "jsonl"),
        ("slack", "slack-export"),
    ],
)
def test_detect_format(name, fmt):
    """Auto-detection picks the right reader for each fixture."""
    assert detect_format(FIX / name) == fmt


def test_mixed_folder_sorted_and_first_messages():
    """A folder of mixed exports reads every file; first message per author per server is marked."""
    msgs = read_messages([FIX / "dce_full.json", FIX / "dce_minimal.json"])
    times = [m.created_at for m in msgs]
    assert None not in times and times == sorted(t for t in times if t is not None)
    bob = [m.is_first_message for m in msgs if m.author.id == "1000000000000000002"]
    assert bob == [True, False, False]


def test_same_file_twice_deduplicated():
    """Reading the same export twice yields each message once."""
    assert len(read_messages([FIX / "dce_full.json", FIX / "dce_full.json"])) == 6


def test_iter_discord_json_file_order():
    """The low-level iterator yields in file order, without sorting or first-message marks."""
    msgs = list(iter_discord_json(FIX / "dce_minimal.json"))
    assert [m.id for m in msgs] == ["2", "1"] and msgs[0].is_first_message is None
