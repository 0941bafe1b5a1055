"""break31: a ``.json`` file of JSON lines behind a UTF-16 / UTF-32 byte order mark is detected as ``jsonl``, as its
UTF-8 twin is (``scan`` reads such JSON lines since fix31; auto-detection still decoded the head as UTF-8)."""

from __future__ import annotations

import codecs

import pytest

from bot.ingest.jsonl import iter_jsonl
from bot.ingest.reader import detect_file_format
from tests.ingest_sinks import CollectingSink

TEXT = '{"id": "a", "text": "hi"}\r\n{"id": "b", "text": "bye"}\r\n'


@pytest.mark.parametrize(("bom", "codec"), [(b"", "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                                            (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF32_LE, "utf-32-le")])
def test_json_lines_in_a_dot_json_file_are_detected_in_every_encoding(tmp_path, bom, codec):
    path = tmp_path / "chat.json"
    path.write_bytes(bom + TEXT.encode(codec))
    assert detect_file_format(path) == "jsonl"
    sink = CollectingSink()
    assert [m.id for m in iter_jsonl(path, sink=sink)] == ["a", "b"]
    assert sink.errors == []


def test_a_utf16_discord_json_export_is_still_not_detected(tmp_path):
    """The DiscordChatExporter JSON reader reads UTF-8 only: a UTF-16 one stays "cannot detect" (not read as
    garbage)."""
    path = tmp_path / "export.json"
    path.write_bytes(codecs.BOM_UTF16_LE + '{"guild": {"id": "1"}, "messages": []}'.encode("utf-16-le"))
    assert detect_file_format(path) is None
