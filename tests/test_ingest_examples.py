"""Tests that the bundled examples and (when present) the real shared chat sets parse as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.ingest import IngestError, read_messages

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CHATS = Path("/work/shared/data/chats")
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("platform", "path", "count"),
    [("discord", EXAMPLES / "discord" / "celebration.json", 28), ("slack", EXAMPLES / "slack", 31)],
)
def test_examples_parse_and_match_expected_ids(platform, path, count):
    """Each bundled example parses without errors; every id in expected.json is present exactly once."""
    msgs = read_messages([path], on_error="stop")
    ids = [m.id for m in msgs]
    listed = [i for group in EXPECTED[platform].values() for i in group]
    assert len(msgs) == count and sorted(ids) == sorted(listed)


@pytest.mark.parametrize("platform", ["discord", "slack"])
def test_examples_raiders_are_new_members(platform):
    """The abuse comes from 8 accounts that joined minutes before and post their first message in the wave."""
    path = EXAMPLES / "discord" / "celebration.json" if platform == "discord" else EXAMPLES / "slack"
    msgs = {m.id: m for m in read_messages([path])}
    abuse = [msgs[i] for i in EXPECTED[platform]["abuse"]]
    authors = {m.author.id for m in abuse}
    assert len(abuse) == 10 and len(authors) == 8
    for m in abuse:
        assert m.author.joined_at is not None
        assert m.created_at is not None and 0 < (m.created_at - m.author.joined_at).total_seconds() < 180
    assert sum(bool(m.is_first_message) for m in abuse) == 8
    joined = [msgs[i].author.joined_at for i in EXPECTED[platform]["support"] + EXPECTED[platform]["counter"]]
    assert all(at is None or at.year < 2026 for at in joined)


def _skip_without(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} not available (shared data is not part of a fresh clone)")


def test_komodo_csv_count():
    """The real Komodo DCE CSV set: README's 35,309 rows in 356 files minus 563 ``Joined the server.`` and 32
    ``Pinned a message.`` system rows = 34,714 messages, no errors, unique ids; YAGPDB's 1,508 embed-only posts
    come from a bot."""
    root = CHATS / "komodo-discord-dce-csv"
    _skip_without(root)
    errors: list[IngestError] = []
    msgs = read_messages([root], errors=errors)
    assert (len(msgs), errors) == (34_714, [])
    assert len({m.id for m in msgs}) == 34_714
    assert {m.channel.id for m in msgs if m.channel.name == "support"} == {"429676282196787200"}
    assert sum(m.author.is_bot for m in msgs if m.author.name == "YAGPDB.xyz#8760") == 1_508


def test_julialang_slack_count():
    """JuliaLang: README's 4,285 objects minus 29 notices (24 joins, 2 topics, archive, unarchive, tombstone) =
    4,256; thread members = README's 3,490 replies + 29 thread_broadcast copies (no parent_user_id) = 3,519."""
    root = CHATS / "julialang-slack-export"
    _skip_without(root)
    errors: list[IngestError] = []
    msgs = read_messages([root], errors=errors)
    assert (len(msgs), errors) == (4_256, [])
    assert sum(m.channel.is_thread for m in msgs) == 3_519
    assert {m.server.id for m in msgs} == {"T68168MUP"}
