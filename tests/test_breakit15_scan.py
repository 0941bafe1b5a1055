"""Damaged gzipped exports (fifteenth session's break-it pass): real gzip files on ``tmp_path`` read by the real
readers and the real ``run_scan`` job with real SQLite; the scorer is the suite's keyword FakeScorer."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest

from bot.ingest import iter_messages
from bot.ingest.errors import ErrorSink, IngestError
from bot.settings import Settings
from tests.fakes import ABUSE, FakeScorer
from tests.test_scan_stream import _args, _dce_export


def _jsonl(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"m{i}", "text": f"line {i} about the weekend plans and the build",
                                 "author": f"u{i % 7}", "created_at": f"2024-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z"})
                     + "\n")
    return path


def _damaged(plain: Path, how: str) -> Path:
    """``plain`` gzipped and then damaged: ``truncated`` (the last 10% of the compressed bytes cut), ``crc`` (a
    flipped bit in the trailer's CRC: every byte of data is intact) or ``corrupt`` (bytes flipped in the first
    deflate block: zlib refuses the stream, "invalid distance too far back")."""
    data = bytearray(gzip.compress(plain.read_bytes(), compresslevel=1))
    if how == "truncated":
        data = data[: len(data) * 9 // 10]
    elif how == "crc":
        data[-8] ^= 1
    else:
        for i in range(100, 164):
            data[i] ^= 0x5A
    out = plain.with_name(f"{how}-{plain.name}.gz")
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "discord-json"])
@pytest.mark.parametrize("how", ["truncated", "crc", "corrupt"])
def test_damaged_gz_export_keeps_the_messages_before_the_damage_and_reports_the_file(tmp_path, fmt, how):
    """A damaged ``.gz`` export is reported once, naming the file and the damage, and the messages inflated before
    it are read, as a truncated plain file is read up to where it ends. A ``.gz`` cut before its end lost every
    message of its first MiB (all of a chat file of a few thousand messages) and one with a bad CRC lost them all
    although every byte of data was there; one with corrupt deflate data stopped the scan with a zlib traceback."""
    n = 3000
    plain = _jsonl(tmp_path / "chat.jsonl", n) if fmt == "jsonl" else _dce_export(tmp_path / "chat.json", n)
    damaged = _damaged(plain, how)
    errors: list[IngestError] = []
    got = [m.id for m in iter_messages(damaged, sink=ErrorSink("skip", errors))]
    # the damage, named once; a JSON line cut by it is reported too
    assert 1 <= len(errors) <= (2 if fmt == "jsonl" and how == "truncated" else 1), errors
    assert all(e.path == damaged for e in errors) and "unreadable" in errors[-1].reason
    want = [m.id for m in iter_messages(plain)]
    assert got == want[: len(got)]  # in order, none invented
    if how == "crc":
        assert len(got) == n
    elif how == "truncated":
        assert len(got) >= n * 8 // 10


def test_scan_of_a_corrupt_gz_reports_it_and_records_the_other_input(tmp_path, capsys):
    """``scan`` of a corrupt ``.gz`` and a truncated one next to a good export: exit 0, ``skipped:`` lines naming
    each damaged file and its damage, and every message read before the damage recorded (the corrupt file stopped the scan
    with a zlib traceback, exit 1)."""
    from bot.jobs.scan import run_scan
    from bot.store.sqlite import SqliteStore

    corrupt = _damaged(_dce_export(tmp_path / "chat.json", 50), "corrupt")
    truncated = _damaged(_jsonl(tmp_path / "chat.jsonl", 3000), "truncated")
    other = _dce_export(tmp_path / "other.json", 5)
    read_before = sum(1 for _ in iter_messages(truncated, sink=ErrorSink()))
    rc = asyncio.run(run_scan(_args([corrupt, truncated, other]), Settings(db_path=tmp_path / "m.db"),
                              scorer=FakeScorer()))
    err = capsys.readouterr().err
    assert rc == 0
    assert "Traceback" not in err
    skipped = [ln for ln in err.splitlines() if ln.startswith("skipped:")]
    assert len(skipped) == 3, skipped  # the corrupt file; the truncated one's cut last line, then its damage
    assert corrupt.name in skipped[0] and "damaged compressed data" in skipped[0]
    assert truncated.name in skipped[2] and "ends before its end-of-stream marker" in skipped[2]

    async def recorded() -> int:
        store = await SqliteStore.open(tmp_path / "m.db")
        try:
            keys = [("export", "truncated-chat", f"m{i}") for i in range(3000)] + [
                ("export", "111", str(10_000 + i)) for i in range(5)]
            return len(await store.recorded_verdicts(keys))
        finally:
            await store.close()

    assert read_before >= 2400
    assert asyncio.run(recorded()) == read_before + 5


def _slack_zip(tmp: Path, damage: str) -> tuple[Path, str]:
    """The bundled Slack example export zipped, with ``general/2026-06-01.json`` damaged: ``corrupt`` (deflate
    bytes flipped) or ``crc`` (one bit of its last compressed byte flipped); ``(zip, damaged member)``."""
    import zipfile

    src = Path(__file__).resolve().parents[1] / "examples" / "slack"
    out = tmp / f"{damage}-slack.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(src.rglob("*.json")):
            zf.write(f, f.relative_to(src).as_posix())
    member = "general/2026-06-01.json"
    with zipfile.ZipFile(out) as zf:
        info = zf.getinfo(member)
    data = bytearray(out.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    if damage == "corrupt":
        for i in range(start + 5, start + 25):
            data[i] ^= 0x5A
    else:
        data[start + info.compress_size - 3] ^= 1
    out.write_bytes(bytes(data))
    return out, member


@pytest.mark.parametrize("damage", ["corrupt", "crc"])
def test_slack_zip_with_a_damaged_day_file_reports_it_and_reads_the_other_days(tmp_path, damage, capsys):
    """A Slack export zip whose day file is damaged (corrupt deflate data, a bad CRC-32) stopped the scan with a
    zlib / BadZipFile traceback (exit 1); the day file is reported with the damage, the other days are scanned and
    recorded (exit 0)."""
    from bot.jobs.scan import run_scan

    export, member = _slack_zip(tmp_path, damage)
    errors: list[IngestError] = []
    got = list(iter_messages(export, sink=ErrorSink("skip", errors)))
    assert [e.path for e in errors] == [export / member]
    assert "damaged" in errors[0].reason
    plain = list(iter_messages(Path(__file__).resolve().parents[1] / "examples" / "slack"))
    others = [m for m in plain if not (m.channel.name == "general" and m.created_at is not None
                                   and m.created_at.date().isoformat() == "2026-06-01")]
    assert {m.id for m in got} == {m.id for m in others} and others
    rc = asyncio.run(run_scan(_args([export]), Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer()))
    err = capsys.readouterr().err
    assert rc == 0 and "Traceback" not in err and member in err


def test_times_out_of_datetime_range_are_reported_per_message_not_a_traceback(tmp_path):
    """A time that parses but cannot be converted to UTC (``0001-01-01T00:00:00+01:00``, .NET's DateTime.MinValue
    with an offset), Unix seconds past year 9999 (Slack ``ts``), or a Discord snowflake of 30 digits raised
    OverflowError out of the reader and stopped the scan with a traceback. Each such message is reported with its
    position and skipped (a member id that is not a real snowflake just has no account age); the others are read."""
    lines = [{"id": "1", "text": "a", "author": "u1", "created_at": "0001-01-01T00:00:00+01:00"},
             {"id": "2", "text": "b", "author": "u1", "created_at": "9999-12-31T23:59:59-05:00"},
             {"id": "3", "text": "c", "author": "u1", "created_at": "2024-01-01T00:00:00Z",
              "edited_at": "0001-01-01T00:00:00+01:00"},
             {"id": "4", "text": "d", "author": {"id": "u2", "joined_at": "0001-01-01T00:00:00+01:00"},
              "created_at": "2024-01-01T00:00:01Z"},
             {"id": "5", "text": "e", "author": "u1", "created_at": "2024-01-01T00:00:02Z"}]
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    errors: list[IngestError] = []
    got = [m.id for m in iter_messages(jsonl, sink=ErrorSink("skip", errors))]
    assert got == ["5"]
    assert [e.position for e in errors] == ["line 1", "line 2", "line 3", "line 4"]
    assert all("out of range" in e.reason for e in errors)

    dce = tmp_path / "dce.json"
    dce.write_text(json.dumps({"guild": {"id": "1", "name": "g"}, "channel": {"id": "2", "name": "c"}, "messages": [
        {"id": "10", "type": "Default", "timestamp": "0001-01-01T00:00:00+01:00", "content": "x",
         "author": {"id": "900", "name": "m"}},
        {"id": "11", "type": "Default", "timestamp": "2024-01-01T00:00:00Z", "content": "y",
         "author": {"id": "9" * 30, "name": "n"}},
        {"id": "12", "type": "Default", "timestamp": "2024-01-01T00:00:01Z", "content": "z",
         "timestampEdited": "0001-01-01T00:00:00+01:00", "author": {"id": "901", "name": "o"}}]}), encoding="utf-8")
    errors = []
    got_dce = list(iter_messages(dce, sink=ErrorSink("skip", errors)))
    assert [m.id for m in got_dce] == ["11"] and got_dce[0].author.created_at is None
    assert [e.position for e in errors] == ["message 0", "message 2"]

    slack = tmp_path / "slack"
    (slack / "general").mkdir(parents=True)
    (slack / "users.json").write_text('[{"id": "U1", "name": "a"}]', encoding="utf-8")
    (slack / "channels.json").write_text('[{"id": "C1", "name": "general"}]', encoding="utf-8")
    (slack / "general" / "2024-01-01.json").write_text(json.dumps([
        {"type": "message", "user": "U1", "text": "far", "ts": "99999999999999999.000100"},
        {"type": "message", "user": "U1", "text": "fine", "ts": "1704067200.000100"}]), encoding="utf-8")
    errors = []
    got_slack = [m.text for m in iter_messages(slack, sink=ErrorSink("skip", errors))]
    assert got_slack == ["fine"] and len(errors) == 1


def test_scan_report_renders_with_messages_dated_year_1_and_year_9999(tmp_path, capsys):
    """A DCE CSV row dated ``9999-12-31 23:59`` (.NET's DateTime.MaxValue) or ``0001-01-01`` (MinValue), flagged,
    crashed the HTML report with OverflowError after the scan (the last timeline bin ends past year 9999, the
    close-up starts before year 1), so no report was written; it is written, with every message in it."""
    from bot.jobs.scan import run_scan

    csv_file = tmp_path / "general [121212121212121212].csv"
    csv_file.write_text(
        "AuthorID,Author,Date,Content,Attachments,Reactions\r\n"
        "10001,user1#0001,2024-03-01T10:00:00,hello,,\r\n"
        "10001,user1#0001,9999-12-31T23:59:00,you freak,,\r\n"
        "10002,user2#0001,0001-01-01T00:00:00,you freak,,\r\n"
        "10002,user2#0001,0001-01-01T00:10:00,you idiot,,\r\n", encoding="utf-8")
    report = tmp_path / "report.html"
    rc = asyncio.run(run_scan(_args([csv_file], report=report), Settings(db_path=tmp_path / "m.db"),
                              scorer=FakeScorer(ABUSE)))
    capsys.readouterr()
    assert rc == 0
    html = report.read_text(encoding="utf-8")
    assert "Messages and flags over time" in html and "9999-12-31" in html
    assert "<h2>Flagged messages (3)</h2>" in html


def test_csv_row_with_a_field_over_128_kib_is_read_and_the_rows_after_it_too(tmp_path):
    """A DCE CSV row whose Content is 300,000 characters hit Python's csv field limit (131,072): the row *and every
    row after it* were skipped, with a message that did not say the rest of the file was lost. The row is read
    (its text judged as a long text, like a long message anywhere) and so are the rows after it; a row whose
    quoting breaks is skipped alone, naming its line, and the rows after it are read."""
    head = "AuthorID,Author,Date,Content,Attachments,Reactions\r\n"
    rows = [f"1000{i},user{i}#0001,2024-03-01T10:0{i}:00,hello {i},," for i in range(5)]
    long_row = '10009,user9#0001,2024-03-01T10:30:00,"' + "x" * 300_000 + '",,'
    csv_file = tmp_path / "general [121212121212121212].csv"
    csv_file.write_text(head + "\r\n".join([rows[0], long_row, *rows[1:]]) + "\r\n", encoding="utf-8")
    errors: list[IngestError] = []
    got = list(iter_messages(csv_file, sink=ErrorSink("skip", errors)))
    assert errors == []
    assert [m.text[:7] for m in got] == ["hello 0", "xxxxxxx", "hello 1", "hello 2", "hello 3", "hello 4"]
    assert len(got[1].text) == 300_000

    broken = tmp_path / "random [131313131313131313].csv"
    broken.write_text(head + rows[0] + '\r\n10001,user1#0001,2024-03-01T10:31:00,"open quote\r\n' + rows[1] + "\r\n",
                      encoding="utf-8")
    errors = []
    assert [m.text for m in iter_messages(broken, sink=ErrorSink("skip", errors))] == ["hello 0", "hello 1"]
    assert len(errors) == 1 and errors[0].position == "row 2 (line 3)"
    assert "this row is skipped and reading goes on at line 4" in errors[0].reason


@pytest.mark.parametrize("flag", ["out", "report"])
@pytest.mark.parametrize("where", ["the-input", "inside-an-input-folder", "the-other-output"])
def test_scan_output_that_is_an_input_is_refused_before_anything_is_written(tmp_path, capsys, flag, where):
    """``scan chat.jsonl --out chat.jsonl`` truncated the export after the survey had read it, then judged the
    empty file ("0 messages in input"): the export was lost. ``--report chat.jsonl`` replaced it with the HTML
    report. An output in an input folder was read back as input by the judging pass. Each is refused with exit 2
    and one line naming the option, before anything is written; the input is unchanged."""
    from bot.jobs.scan import run_scan

    folder = tmp_path / "exports"
    folder.mkdir()
    src = _jsonl(folder / "chat.jsonl", 20)
    before = src.read_bytes()
    target = {"the-input": src, "inside-an-input-folder": folder / "verdicts.out",
              "the-other-output": tmp_path / "same.file"}[where]
    other = {"out": "report", "report": "out"}[flag]
    kw = {flag: target, **({other: tmp_path / "same.file"} if where == "the-other-output" else {})}
    rc = asyncio.run(run_scan(_args([folder if where == "inside-an-input-folder" else src], **kw),
                              Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer()))
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("error: ") and f"--{flag}" in err and len(err.strip().splitlines()) == 1
    assert src.read_bytes() == before
    assert not (tmp_path / "m.db").exists()
    assert where == "the-input" or not target.exists()


def _recorded_count(db: Path) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM verdicts").fetchone()[0])


@pytest.mark.parametrize("flag", ["out", "report"])
def test_scan_output_on_the_mod_log_is_refused_and_the_mod_log_is_kept(tmp_path, capsys, flag):
    """``scan ... --db modlog.db --out modlog.db`` (or ``--report``) truncated the mod log and the scan stopped
    with "database disk image is malformed", saying "what was recorded is kept": it was not. Refused with exit 2
    before anything is written; every recorded verdict is still there."""
    from bot.jobs.scan import run_scan

    src = _jsonl(tmp_path / "chat.jsonl", 20)
    db = tmp_path / "modlog.db"
    assert asyncio.run(run_scan(_args([src]), Settings(db_path=db), scorer=FakeScorer())) == 0
    capsys.readouterr()
    for target in (db, db.with_name(db.name + "-wal")):
        rc = asyncio.run(run_scan(_args([src], **{flag: target}), Settings(db_path=db), scorer=FakeScorer()))
        err = capsys.readouterr().err
        assert rc == 2 and err.startswith("error: ") and f"--{flag}" in err and "mod log" in err
    assert _recorded_count(db) == 20


def test_report_out_on_its_own_database_is_refused_and_the_mod_log_is_kept(tmp_path):
    """``python -m bot report --db modlog.db --out modlog.db`` replaced the SQLite mod log with the HTML page (every
    verdict, case and strike gone). Refused with exit 2 and one line; the mod log is unchanged."""
    import subprocess
    import sys

    from bot.jobs.scan import run_scan

    db = tmp_path / "modlog.db"
    assert asyncio.run(run_scan(_args([_jsonl(tmp_path / "chat.jsonl", 20)]), Settings(db_path=db),
                                scorer=FakeScorer())) == 0
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "bot", "report", "--db", str(db), "--out", str(db)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(root), "PATH": ""})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and "--out" in done.stderr and len(done.stderr.splitlines()) == 1
    assert _recorded_count(db) == 20


@pytest.mark.parametrize("flag", ["out", "report"])
@pytest.mark.parametrize("where", ["a-folder", "under-a-file"])
def test_scan_output_that_cannot_be_written_is_an_error_before_the_scan(tmp_path, capsys, flag, where):
    """``--out`` or ``--report`` naming a folder, or a path under a regular file, stopped the scan with an
    IsADirectoryError / NotADirectoryError traceback (``--report`` only after the whole scan had run). Exit 2 with
    one line naming the option, before anything is read or recorded."""
    from bot.jobs.scan import run_scan

    src = _jsonl(tmp_path / "chat.jsonl", 20)
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    target = tmp_path / "a-folder" if where == "a-folder" else tmp_path / "a-file" / "sub" / "out.html"
    rc = asyncio.run(run_scan(_args([src], **{flag: target}), Settings(db_path=tmp_path / "m.db"),
                              scorer=FakeScorer()))
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert err.startswith("error: ") and f"--{flag}" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.db").exists()


_DCE_MESSAGE = {"id": "10", "type": "Default", "timestamp": "2024-01-01T00:00:00Z", "content": "x",
                "author": {"id": "900", "name": "m", "roles": [{"id": "1"}]}, "mentions": [], "attachments": []}


@pytest.mark.parametrize(("field", "value"), [("type", []), ("type", {}), ("author.roles", 5), ("mentions", 5),
                                              ("attachments", True), ("channel.type", ["GuildTextChat"])])
def test_dce_field_of_the_wrong_type_is_reported_and_the_other_messages_read(tmp_path, field, value):
    """A DCE JSON message whose ``type`` is a list, whose ``author.roles``, ``mentions`` or ``attachments`` is a
    number, or a channel ``type`` that is a list, raised TypeError ("unhashable type", "not iterable") out of the
    reader: the scan stopped with a traceback. The message is reported with its position and skipped (a
    header field of the wrong type is ignored), and every other message is read."""
    bad = json.loads(json.dumps(_DCE_MESSAGE))
    channel: dict[str, object] = {"id": "2", "name": "c"}
    if field == "channel.type":
        channel["type"] = value
    elif "." in field:
        bad["author"]["roles"] = value
    else:
        bad[field] = value
    path = tmp_path / "dce.json"
    path.write_text(json.dumps({"guild": {"id": "1", "name": "g"}, "channel": channel,
                                "messages": [bad, {**_DCE_MESSAGE, "id": "11"}]}), encoding="utf-8")
    errors: list[IngestError] = []
    got = [m.id for m in iter_messages(path, sink=ErrorSink("skip", errors))]
    if field == "channel.type":
        assert got == ["10", "11"] and errors == []
    else:
        assert got == ["11"]
        assert [e.position for e in errors] == ["message 0"] and "malformed message" in errors[0].reason


@pytest.mark.parametrize(("field", "value"), [("files", 5), ("subtype", []), ("subtype", {"a": 1})])
def test_slack_field_of_the_wrong_type_is_reported_and_the_other_messages_read(tmp_path, field, value):
    """A Slack day file's message whose ``files`` is a number or whose ``subtype`` is a list or an object raised
    TypeError out of the reader (the join-time pass or the conversion): the scan stopped with a traceback. The
    message is reported with its position and skipped; the day's other messages are read."""
    root = tmp_path / "slack"
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text('[{"id": "U1", "name": "a"}]', encoding="utf-8")
    (root / "channels.json").write_text('[{"id": "C1", "name": "general"}]', encoding="utf-8")
    first = {"type": "message", "user": "U1", "text": "first", "ts": "1704067200.000100", field: value}
    second = {"type": "message", "user": "U1", "text": "second", "ts": "1704067201.000200"}
    (root / "general" / "2024-01-01.json").write_text(json.dumps([first, second]), encoding="utf-8")
    errors: list[IngestError] = []
    got = [m.text for m in iter_messages(root, sink=ErrorSink("skip", errors))]
    assert got == ["second"]
    assert [e.position for e in errors] == ["message 0"] and "malformed message" in errors[0].reason


def test_report_of_a_raid_replying_to_a_message_outside_the_export_is_written(tmp_path, capsys):
    """Six new accounts post abuse within seconds, each a reply to a post that is not in the export (deleted, or
    before the export's range): a raid whose every flagged reply is shown under the raid, in a reply chain whose
    root is unknown. Sorting the threads took ``t.replies[0]`` of that empty chain: IndexError after the scan,
    and no report. The report is written with the raid."""
    from bot.jobs.scan import run_scan

    messages = [{"id": str(1511039875153920000 + i), "type": "Default", "timestamp": f"2024-01-01T00:00:0{i}Z",
                 "content": f"you freak number {i}", "author": {"id": str(1511039875153920100 + i), "name": f"new{i}"},
                 "reference": {"messageId": "1511039875153919999"}} for i in range(6)]
    path = tmp_path / "raid.json"
    path.write_text(json.dumps({"guild": {"id": "1511039875153920999", "name": "g"},
                                "channel": {"id": "1511039875153920998", "name": "celebration"},
                                "messages": messages}), encoding="utf-8")
    report = tmp_path / "report.html"
    rc = asyncio.run(run_scan(_args([path], report=report), Settings(db_path=tmp_path / "m.db"),
                              scorer=FakeScorer(ABUSE)))
    capsys.readouterr()
    assert rc == 0
    html = report.read_text(encoding="utf-8")
    assert "<h2>Incidents (1 raids" in html and "you freak number 5" in html
