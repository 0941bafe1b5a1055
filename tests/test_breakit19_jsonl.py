"""JSON lines with fields of the wrong JSON type (nineteenth session's break-it pass). ``"text": 5`` was scored as
the text ``"5"`` and ``"text": ["a"]`` as ``"['a']"``; ``"author": true`` became a member named ``"True"``;
``"author": {"name": "x"}`` (no id) and ``"channel": true`` fell back to "no author" / the default channel without a
word; ``"is_bot": "false"`` was read as true (``bool("false")``) and exempted the member as a bot. Each is now a
malformed line reported with file and line and skipped, like a bad time. Real files in ``tmp_path`` read by the
real reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.core.models import NO_AUTHOR_ID
from bot.ingest.errors import ErrorSink, IngestError
from bot.ingest.jsonl import iter_jsonl


def _read(tmp_path: Path, first: dict, on_error: str = "skip") -> tuple[Path, list[str], list[IngestError]]:
    """Write ``first`` then one good line; return the path, the ids read and the errors reported."""
    p = tmp_path / "chat.jsonl"
    rows = [{"id": "1", "text": "hi", "author": "a", **first},
            {"id": "2", "text": "ok", "author": "c", "created_at": "2024-01-01T00:00:01Z"}]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    errors: list[IngestError] = []
    ids = [m.id for m in iter_jsonl(p, sink=ErrorSink(on_error, errors))]
    return p, ids, errors


@pytest.mark.parametrize(("field", "reason"), [
    ({"text": 5}, "text: expected a string, got a number (5)"),
    ({"text": ["a"]}, "text: expected a string, got a list"),
    ({"text": {"body": "a"}}, "text: expected a string, got an object"),
    ({"text": True}, "text: expected a string, got a boolean (true)"),
    ({"author": True}, "author: expected a member id (a string or whole number) or an object, got a boolean (true)"),
    ({"author": 1.5}, "author: expected a member id (a string or whole number) or an object, got a number (1.5)"),
    ({"author": ["a"]}, "author: expected a member id (a string or whole number) or an object, got a list"),
    ({"author": {"name": "x"}}, "author.id: expected an id (a non-empty string or whole number), got none"),
    ({"author": {"id": True}}, "author.id: expected an id (a non-empty string or whole number), got a boolean (true)"),
    ({"author": {"id": "a", "is_bot": "false"}}, "author.is_bot: expected true or false, got a string (\"false\")"),
    ({"author": {"id": "a", "roles": "mod"}}, "author.roles: expected a list of role ids, got a string (\"mod\")"),
    ({"author": {"id": "a", "roles": [{"id": "123"}]}},
     "author.roles[0]: expected a role id (a string or whole number), got an object"),
    ({"author": {"id": "a", "roles": ["r", True]}},
     "author.roles[1]: expected a role id (a string or whole number), got a boolean (true)"),
    ({"channel": True}, "channel: expected a channel id (a string or whole number) or an object, got a boolean"),
    ({"channel": {"name": "general"}}, "channel.id: expected an id"),
    ({"channel": {"id": "c", "is_thread": "no"}}, "channel.is_thread: expected true or false"),
    ({"server": ["s"]}, "server: expected a server id (a string or whole number) or an object, got a list"),
    ({"server": {"id": "s", "platform": 3}}, "server.platform: expected a string, got a number (3)"),
    ({"mentions_everyone": "false"}, "mentions_everyone: expected true or false, got a string (\"false\")"),
])
def test_a_field_of_the_wrong_type_is_a_malformed_line_with_file_and_line(tmp_path: Path, field: dict, reason: str):
    p, ids, errors = _read(tmp_path, field)
    assert ids == ["2"]
    assert len(errors) == 1
    assert str(errors[0]).startswith(f"{p}:line 1: malformed line: {reason}"), errors[0]


def test_a_wrong_type_stops_the_read_with_on_error_stop(tmp_path: Path):
    with pytest.raises(IngestError, match=r"line 1: malformed line: author: expected a member id"):
        _read(tmp_path, {"author": True}, on_error="stop")


def test_ids_as_whole_numbers_and_nulls_are_still_read(tmp_path: Path):
    """A number is a documented id (as the message ``id`` may be); ``null`` text is an empty message (an
    attachment's), ``null`` author / channel / flags are absent."""
    p = tmp_path / "chat.jsonl"
    rows = [{"id": 1, "text": None, "author": 880000000000000001, "channel": 42, "server": 7},
            {"id": "2", "text": "x", "author": None, "channel": None, "mentions_everyone": None},
            {"id": "3", "text": "y", "author": {"id": 9, "is_bot": True, "roles": [1, "r", None]},
             "channel": {"id": 5, "is_thread": False}, "server": {"id": 7}}]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    errors: list[IngestError] = []
    msgs = list(iter_jsonl(p, sink=ErrorSink("skip", errors)))
    assert errors == []
    assert [(m.id, m.text, m.author.id, m.channel.id, m.server.id) for m in msgs] == [
        ("1", "", "880000000000000001", "42", "7"),
        ("2", "x", NO_AUTHOR_ID, "default", "chat"),
        ("3", "y", "9", "5", "7")]
    assert msgs[2].author.is_bot and msgs[2].author.roles == ("1", "r") and not msgs[2].channel.is_thread
