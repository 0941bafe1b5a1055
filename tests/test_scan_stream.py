"""``scan`` streams its input (issue 25 item 9): memory does not grow with the export, every decompression is
bounded, and the streamed order is the order a sort of everything would give.

Real parts: the real ``run_scan`` job, the real moderation service, real SQLite files on ``tmp_path``, real gzip
and zip files; the scorer is the suite's keyword FakeScorer (the figures are the pipeline's, not the model's).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import tracemalloc
from argparse import Namespace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.ingest import IngestError, iter_messages, read_messages
from bot.ingest.stream import BEFORE_ALL, MessageStream
from bot.settings import Settings
from tests.fakes import FakeScorer

T0 = datetime(2024, 3, 1, tzinfo=UTC)
#: A small pool of chat lines: real chat repeats itself, and the service's text caches stay small and full.
TEXTS = [f"line {i} of ordinary chat about the weekend plans and the build" for i in range(64)]


def _stamp(i: int) -> str:
    return (T0 + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")


def _dce_export(path: Path, n: int) -> Path:
    """A DiscordChatExporter JSON file of ``n`` messages by 40 members, one a second, every 7th a reply."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write('{"guild": {"id": "111", "name": "g"}, "channel": {"id": "222", "name": "general", "type": '
                 '"GuildTextChat"}, "messages": [\n')
        for i in range(n):
            m = {"id": str(10_000 + i), "type": "Default", "timestamp": _stamp(i), "content": TEXTS[i % len(TEXTS)],
                 "author": {"id": str(900 + i % 40), "name": f"member{i % 40}", "isBot": False}}
            if i % 7 == 6:
                m["reference"] = {"messageId": str(10_000 + i - 1)}
            fh.write(("," if i else "") + json.dumps(m) + "\n")
        fh.write(f'], "messageCount": {n}}}\n')
    return path


def _args(paths: list[Path], **kw: object) -> Namespace:
    base: dict[str, object] = {"paths": paths, "policy": [], "out": None, "report": None, "format": "auto", "on_error": "skip",
            "batch_size": 32, "no_progress": True}
    base.update(kw)
    return Namespace(**base)


def _scan_peak(tmp: Path, n: int, *, traced: bool = True) -> tuple[int, int]:
    """(exit code, peak traced bytes) of a scan of a generated export of ``n`` messages, ``--out`` on."""
    from bot.jobs.scan import run_scan

    src = _dce_export(tmp / f"chat-{n}.json", n)
    settings = Settings(db_path=tmp / f"m-{n}.db")
    if not traced:
        return asyncio.run(run_scan(_args([src], out=tmp / f"out-{n}.jsonl"), settings, scorer=FakeScorer())), 0
    tracemalloc.start()
    try:
        rc = asyncio.run(run_scan(_args([src], out=tmp / f"out-{n}.jsonl"), settings, scorer=FakeScorer()))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(1 for _ in (tmp / f"out-{n}.jsonl").open(encoding="utf-8")) == n
    return rc, peak


def test_scan_peak_traced_memory_does_not_grow_with_the_export(tmp_path, monkeypatch):
    """A scan of 2,000 messages peaks at about the traced memory of a scan of 500: nothing is held per message.

    Two fixed-size memories are set to 256 entries here so that they are full at both sizes (each is a constant
    bound, not a per-message cost): the service's judged keys (65,536 by default) and the DCE reader's reply window
    (5,000). Every other bound is the shipped one (the chat lines repeat, so the text caches are full too)."""
    import bot.core.service as service
    import bot.ingest.discord_json as discord_json

    monkeypatch.setattr(service, "OBSERVED_KEYS", 256)
    monkeypatch.setattr(discord_json, "REPLY_WINDOW", 256)
    assert _scan_peak(tmp_path, 100, traced=False)[0] == 0  # warm up: lazy imports and one-time tables
    rc_small, small = _scan_peak(tmp_path, 500)
    rc_large, large = _scan_peak(tmp_path, 2_000)
    print(f"peak traced: 500 messages {small / 2**20:.2f} MiB, 2,000 messages {large / 2**20:.2f} MiB")
    assert (rc_small, rc_large) == (0, 0)
    # 4x the messages: a list of them (about 6 KB each before streaming) would be 9 MB more (5x or so); what
    # still grows a little are time windows (spam, progress rate) filling, each bounded
    assert large / small < 1.5, f"peak {small / 2**20:.1f} MiB -> {large / 2**20:.1f} MiB"


def test_message_stream_is_the_stable_time_sort_of_all_inputs(tmp_path):
    """The stream merges files (one out of time order) into exactly the order a stable sort of everything gives,
    drops a file given twice, and marks each author's first message."""
    a = tmp_path / "a.jsonl"
    a.write_text("".join(json.dumps({"id": f"a{i}", "text": "x", "author": "u1", "created_at": _stamp(t)}) + "\n"
                         for i, t in enumerate([0, 5, 5, 9])), encoding="utf-8")
    b = tmp_path / "b.jsonl"  # out of order: sorted on its own
    b.write_text("".join(json.dumps({"id": f"b{i}", "text": "y", "author": "u2", "created_at": _stamp(t)}) + "\n"
                         for i, t in enumerate([7, 1, 5, 12])), encoding="utf-8")
    c = _dce_export(tmp_path / "c.json", 12)
    paths = [a, b, c, a]
    everything = [m for p in paths for m in iter_messages(p)]
    expected: list[tuple[str, str, str]] = []
    for m in sorted(everything, key=lambda m: m.created_at or BEFORE_ALL):
        if m.key not in expected:
            expected.append(m.key)
    with MessageStream(paths) as stream:
        survey = stream.survey()
        got = list(stream)
    assert [m.key for m in got] == expected
    assert survey.messages == len(everything) and len(got) == len(everything) - 4
    firsts = [(m.author.id, m.id) for m in got if m.is_first_message]
    assert sorted(firsts) == sorted([("u1", "a0"), ("u2", "b1")] + [(str(900 + i), str(10_000 + i)) for i in range(12)])


def test_a_message_id_repeated_at_another_time_is_judged_and_written_once_with_a_warning(tmp_path, capsys):
    """Two exports of one channel whose times for the same messages differ (a minute-resolution export beside an
    exact one): each id is one message, judged, recorded and written to ``--out`` once (the earlier copy, in time
    order), and scan warns once with the number of copies dropped."""
    from bot.jobs.scan import run_scan

    exact = tmp_path / "exact.jsonl"
    exact.write_text("".join(json.dumps({"id": f"m{i}", "text": f"hello {i}", "author": "u1", "server": "s",
                                         "created_at": _stamp(60 + 10 * i)}) + "\n" for i in range(5)),
                     encoding="utf-8")
    minutes = tmp_path / "minutes.jsonl"  # the same five messages, each 30 s later; one more of its own
    minutes.write_text("".join(json.dumps({"id": f"m{i}", "text": f"hello {i}", "author": "u1", "server": "s",
                                           "created_at": _stamp(90 + 10 * i)}) + "\n" for i in range(6)),
                       encoding="utf-8")
    with MessageStream([exact, minutes]) as stream:
        survey = stream.survey()
        got = list(stream)
    assert (survey.messages, survey.duplicates) == (11, 5)
    assert [(m.id, m.created_at) for m in got] == [(f"m{i}", T0 + timedelta(seconds=60 + 10 * i)) for i in range(5)] \
        + [("m5", T0 + timedelta(seconds=140))]
    out = tmp_path / "out.jsonl"
    rc = asyncio.run(run_scan(_args([exact, minutes], out=out), Settings(db_path=tmp_path / "m.db"),
                              scorer=FakeScorer()))
    assert rc == 0
    rows = [json.loads(line) for line in out.open(encoding="utf-8")]
    assert sorted(r["id"] for r in rows) == [f"m{i}" for i in range(6)]
    err = capsys.readouterr().err
    assert err.count("5 of 11 messages repeat a message id read before") == 1, err


def _gz_bomb(path: Path, good_lines: int) -> Path:
    """``good_lines`` JSON lines, then 64 MiB of spaces, gzipped into about 64 KiB (1,000x)."""
    with gzip.open(path, "wb", compresslevel=9) as fh:
        for i in range(good_lines):
            fh.write((json.dumps({"id": f"g{i}", "text": "hello", "author": "u1", "created_at": _stamp(i)}) + "\n")
                     .encode())
        block = b" " * (1 << 20)
        for _ in range(64):
            fh.write(block)
    return path


def test_gz_bomb_is_refused_naming_the_file_and_nothing_is_lost(tmp_path, capsys):
    """A .jsonl.gz that inflates 1,000x is refused while inflating, with its name and sizes, after the lines before
    the bomb are read; the other input is scanned and recorded, and the scan exits 0, inflating only a few MiB."""
    from bot.jobs.scan import run_scan
    from bot.store.sqlite import SqliteStore

    bomb = _gz_bomb(tmp_path / "bomb.jsonl.gz", 3)
    other = _dce_export(tmp_path / "other.json", 5)
    tracemalloc.start()
    try:
        rc = asyncio.run(run_scan(_args([bomb, other]), Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer()))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert rc == 0
    assert "skipped:" in err and "bomb.jsonl.gz" in err and "inflates past 100x" in err
    assert peak < 48 << 20, f"{peak / 2**20:.1f} MiB traced for a 64 MiB bomb"

    async def recorded() -> int:
        store = await SqliteStore.open(tmp_path / "m.db")
        try:
            keys = [("export", "bomb", f"g{i}") for i in range(3)] + [("export", "111", str(10_000 + i))
                                                                      for i in range(5)]
            return len(await store.recorded_verdicts(keys))
        finally:
            await store.close()
    assert asyncio.run(recorded()) == 8


def test_gz_export_reads_like_the_plain_file(tmp_path):
    """A gzipped DCE JSON export gives the same messages as the file itself (format found from the inner name)."""
    plain = _dce_export(tmp_path / "chat.json", 30)
    packed = tmp_path / "packed" / "chat.json.gz"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_messages([packed]) == read_messages([plain])


def test_gz_bomb_with_stop_is_one_ingest_error(tmp_path):
    """With on_error='stop' the bomb is an IngestError naming the file (not a MemoryError or a traceback)."""
    bomb = _gz_bomb(tmp_path / "bomb.jsonl.gz", 0)
    with pytest.raises(IngestError) as info:
        read_messages([bomb], on_error="stop")
    assert info.value.path == bomb and "zip bomb" in info.value.reason
