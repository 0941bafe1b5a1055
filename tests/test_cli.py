"""Command-line behaviour that needs no model: policy check, bad input, retention purge."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from bot.cli import main
from bot.core.models import ChannelRef, MemberRef, Message, ServerRef, Verdict
from bot.core.ports import VerdictRecord
from bot.store.sqlite import SqliteStore


def test_policy_check_prints_effective_policy(capsys, tmp_path):
    """policy check FILE prints the merged policy (the file's value wins) and its version."""
    f = tmp_path / "srv.toml"
    f.write_text("[thresholds]\nthreat = { review = 0.4 }\n", encoding="utf-8")
    assert main(["policy", "check", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["policy"]["thresholds"]["threat"]["review"] == 0.4
    assert doc["policy"]["thresholds"]["toxicity"]["review"] is not None
    assert len(doc["version"]) == 12


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[label_actions]\nthreat = { action = \"timeout\", duration_s = 3456000 }\n", "label_actions.threat.duration_s"),
        ("[thresholds]\ninsult = { review = 1.5 }\n", "thresholds.insult.review"),
        ("[sever]\nreview_channel = \"1\"\n", "sever: unknown key"),
    ],
)
def test_policy_check_refuses_bad_file_naming_key(capsys, tmp_path, text, needle):
    """A bad policy exits 2 with a message naming the file and the key."""
    f = tmp_path / "bad.toml"
    f.write_text(text, encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and needle in err


def test_policy_check_of_a_server_file_refuses_what_the_bot_refuses_at_start(capsys, tmp_path):
    """docs/operations.md has the admin check a server's file with ``policy check
    /etc/modbot/servers/discord-<guild id>.toml`` before starting the unit. A file whose moderator_roles holds the
    guild's own id (@everyone: every member a moderator) stops the bot at start (exit 2, not restarted), and
    policy check now refuses it the same way, naming the file and the key; it said "OK: valid policy"."""
    from bot.config import DEFAULT_POLICY_PATH
    from bot.core.policy import PolicyError
    from bot.core.policy_registry import PolicyRegistry

    guild = "880000000000000001"
    f = tmp_path / f"discord-{guild}.toml"
    f.write_text(f'[server]\nmoderator_roles = ["{guild}"]\n', encoding="utf-8")
    with pytest.raises(PolicyError):  # what the bot does with the servers folder at start
        PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=tmp_path).validate_servers("discord")
    assert main(["policy", "check", str(f)]) == 2
    out, err = capsys.readouterr()
    assert "OK" not in out and str(f) in err and "server.moderator_roles" in err and "@everyone" in err
    f.write_text('[server]\nmoderator_roles = ["880000000000000002"]\n', encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 0
    assert "OK: valid policy" in capsys.readouterr().out


def test_scan_with_bad_policy_fails_before_loading_anything(capsys, tmp_path):
    """scan refuses an invalid --policy with exit code 2 and records nothing."""
    f = tmp_path / "bad.toml"
    f.write_text("shadow_mode = \"sometimes\"\n", encoding="utf-8")
    db = tmp_path / "mod.db"
    assert main(["scan", str(tmp_path), "--policy", str(f), "--db", str(db), "--no-progress"]) == 2
    assert "shadow_mode" in capsys.readouterr().err
    assert not db.exists()


def test_purge_erases_old_text_but_keeps_verdicts(tmp_path, capsys):
    """purge --days N erases message text older than N days; the verdict stays."""
    db = tmp_path / "mod.db"
    old = datetime.now(UTC) - timedelta(days=40)
    new = datetime.now(UTC) - timedelta(days=1)

    async def seed() -> None:
        async with await SqliteStore.open(db) as store:
            recs = []
            for mid, at in (("old", old), ("new", new)):
                m = Message(server=ServerRef("discord", "g"), channel=ChannelRef(id="c"), author=MemberRef(id="u"),
                            id=mid, text=f"{mid} text", created_at=at)
                recs.append(VerdictRecord(verdict=Verdict(message=m, scores=None), excerpt=m.text))
            await store.record_batch(recs)

    async def check() -> tuple[object, object]:
        async with await SqliteStore.open(db) as store:
            return (await store.get_verdict("discord", "g", "old"), await store.member_record("discord", "g", "u"))

    asyncio.run(seed())
    assert main(["purge", "--db", str(db), "--days", "30"]) == 0
    assert "purged the text of 1 message older than 30 days" in capsys.readouterr().out
    verdict, record = asyncio.run(check())
    assert verdict is not None
    texts = json.dumps(record)
    assert "old text" not in texts and "new text" in texts


def test_purge_message_uses_singular_and_plural_forms(tmp_path, capsys):
    """purge says "1 message older than 1 day" and "2 messages older than 2 days", never "1 days"."""
    db = tmp_path / "mod.db"
    old = datetime.now(UTC) - timedelta(days=5)

    async def seed(ids: tuple[str, ...]) -> None:
        async with await SqliteStore.open(db) as store:
            recs = []
            for mid in ids:
                m = Message(server=ServerRef("discord", "g"), channel=ChannelRef(id="c"), author=MemberRef(id="u"),
                            id=mid, text=f"{mid} text", created_at=old)
                recs.append(VerdictRecord(verdict=Verdict(message=m, scores=None), excerpt=m.text))
            await store.record_batch(recs)

    asyncio.run(seed(("a",)))
    assert main(["purge", "--db", str(db), "--days", "1"]) == 0
    assert "purged the text of 1 message older than 1 day from" in capsys.readouterr().out
    asyncio.run(seed(("b", "c")))
    assert main(["purge", "--db", str(db), "--days", "2"]) == 0
    assert "purged the text of 2 messages older than 2 days from" in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["not a database", "a folder"])
def test_unusable_db_is_a_clear_error_not_a_traceback(tmp_path, capsys, kind):
    """--db pointing at a non-SQLite file or at a folder exits with status 2 and names the path; the file is left
    as it was."""
    if kind == "a folder":
        db = tmp_path / "dbdir"
        db.mkdir()
    else:
        db = tmp_path / "notes.db"
        db.write_text("these are my notes, not a database\n" * 20, encoding="utf-8")
    before = db.read_bytes() if db.is_file() else None
    assert main(["purge", "--db", str(db), "--days", "30"]) == 2
    err = capsys.readouterr().err
    assert str(db) in err and "cannot be used as the mod-log database" in err
    if before is not None:
        assert db.read_bytes() == before


def test_purge_without_days_keeps_each_servers_own_retention(tmp_path, capsys, monkeypatch):
    """purge without --days erases each server's text after that server's own server.retention_days, as the
    running bot does: its file in MODBOT_SERVERS_DIR (discord-g90: 90 days), a /policy set override in the mod log
    (discord-g7: 7 days), else the default policy (discord-g30: 30 days), and a scanned export judged by its guild's
    file (export-880000000000000001 by discord-880000000000000001.toml: 90 days). It used the default policy's 30
    days for every server, so 40-day-old text a 90-day server keeps was erased, and 10-day-old text of a 7-day
    server stayed."""
    from tests.store_factories import make_record

    db = tmp_path / "mod.db"
    servers = tmp_path / "servers"
    servers.mkdir()
    (servers / "discord-g90.toml").write_text("[server]\nretention_days = 90\n", encoding="utf-8")
    (servers / "discord-880000000000000001.toml").write_text("[server]\nretention_days = 90\n", encoding="utf-8")
    monkeypatch.setenv("MODBOT_SERVERS_DIR", str(servers))
    now = datetime.now(UTC)
    seeded = {("discord", "g90"): 40, ("discord", "g7"): 10, ("discord", "g30"): 40,
              ("export", "880000000000000001"): 40}

    async def seed() -> None:
        async with await SqliteStore.open(db) as store:
            await store.record_batch([make_record(f"m-{sid}", platform=plat, server=sid, text=f"text of {sid}",
                                                  created=now - timedelta(days=age))
                                      for (plat, sid), age in seeded.items()])
            await store.set_policy_override("discord", "g7", "server", "server.retention_days", 7, "mod")

    async def texts() -> dict[str, str]:
        async with await SqliteStore.open(db) as store:
            out = {}
            for plat, sid in seeded:
                found = await store.message_excerpt(plat, sid, f"m-{sid}")
                assert found is not None
                out[sid] = found[1]
            return out

    asyncio.run(seed())
    assert main(["purge", "--db", str(db)]) == 0
    assert "purged the text of 2 messages" in capsys.readouterr().out
    assert asyncio.run(texts()) == {"g90": "text of g90", "g7": "", "g30": "",
                                    "880000000000000001": "text of 880000000000000001"}


def test_purge_without_days_purges_the_other_servers_when_one_file_is_invalid(tmp_path, capsys, monkeypatch):
    """One server's file in MODBOT_SERVERS_DIR is invalid: purge erases the other server's expired text, names the
    file on stderr and exits 1 (it stopped at the bad file with exit 2, leaving every server after it unpurged)."""
    from tests.store_factories import make_record

    db = tmp_path / "mod.db"
    servers = tmp_path / "servers"
    servers.mkdir()
    bad = servers / "discord-a-bad.toml"
    bad.write_text("[server]\nretention_days = 0\n", encoding="utf-8")
    monkeypatch.setenv("MODBOT_SERVERS_DIR", str(servers))
    old = datetime.now(UTC) - timedelta(days=40)

    async def seed() -> None:
        async with await SqliteStore.open(db) as store:
            await store.record_batch([make_record("m1", server="a-bad", created=old),
                                      make_record("m2", server="b-ok", created=old)])

    async def texts() -> tuple[object, object]:
        async with await SqliteStore.open(db) as store:
            return (await store.message_excerpt("discord", "a-bad", "m1"),
                    await store.message_excerpt("discord", "b-ok", "m2"))

    asyncio.run(seed())
    assert main(["purge", "--db", str(db)]) == 1
    out, err = capsys.readouterr()
    assert "purged the text of 1 message" in out
    assert str(bad) in err and "1 server was not purged" in err
    assert asyncio.run(texts()) == (("c1", "some text"), ("c1", ""))


@pytest.mark.parametrize("days", ["0", "99999999999"])
def test_purge_refuses_days_out_of_range(tmp_path, capsys, days):
    """purge --days outside 1..3650 (the policy's retention range) exits 2 with a reason, not an OverflowError."""
    assert main(["purge", "--db", str(tmp_path / "mod.db"), "--days", days]) == 2
    assert "between 1 and 3650" in capsys.readouterr().err


# ---------------------------------------------------------------- no silent wrong answers (issue 20, item 5)

import io  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from argparse import Namespace  # noqa: E402
from pathlib import Path  # noqa: E402

from bot.settings import Settings  # noqa: E402
from tests.fakes import FakeScorer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: Model options that pass the settings check (a file and a folder that exist) but cannot load: reaching the model
#: fails, so a test using them shows the model was never loaded.
NO_MODEL = ["--model", "local", "--checkpoint", str(Path(__file__)), "--config-dir", str(ROOT / "tests" / "fixtures")]


def _err_lines(capsys) -> list[str]:
    """stderr lines, without the ``mod log: <where>`` line printed once the store is open."""
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip() and not ln.startswith("mod log: ")]


@pytest.mark.parametrize("kind", ["empty file", "empty folder"])
def test_scan_of_empty_input_fails_before_the_model(tmp_path, capsys, kind):
    """scan of an empty file or an empty folder exits 2 with one error line, before the model loads; no database
    is created."""
    path = tmp_path / ("empty.jsonl" if kind == "empty file" else "exports")
    if kind == "empty file":
        path.write_text("", encoding="utf-8")
    else:
        path.mkdir()
    db = tmp_path / "mod.db"
    assert main([*NO_MODEL, "scan", str(path), "--db", str(db), "--no-progress"]) == 2
    lines = _err_lines(capsys)
    assert [ln for ln in lines if ln.startswith("error:")] == [f"error: no messages found in {path}"]
    assert not any("model" in ln for ln in lines) and not db.exists()


def test_scan_names_a_missing_path_among_several(tmp_path, capsys):
    """A missing path among existing ones exits 2 naming it, before anything is read or the model loads."""
    good = tmp_path / "chat.jsonl"
    good.write_text('{"id": "1", "text": "hello", "author": "a", "created_at": "2024-01-01T00:00:00Z"}\n')
    missing = tmp_path / "typo.jsonl"
    assert main([*NO_MODEL, "scan", str(good), str(missing), "--db", str(tmp_path / "m.db"), "--no-progress"]) == 2
    assert _err_lines(capsys) == [f"error: no such file or folder: {missing}"]


def test_scan_prints_each_skipped_input_once_and_names_format_option(tmp_path, capsys):
    """A file of unknown format is reported once (not again by logging), and the hint names --format."""
    good = tmp_path / "chat.jsonl"
    good.write_text('{"id": "1", "text": "hello", "author": "a", "created_at": "2024-01-01T00:00:00Z"}\n')
    odd = tmp_path / "notes.txt"
    odd.write_text("just some notes\n", encoding="utf-8")
    assert main([*NO_MODEL, "scan", str(good), str(odd), "--db", str(tmp_path / "m.db"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count(str(odd)) == 1
    assert "give --format" in err and "fmt=" not in err
    assert "could not be loaded" in err  # got as far as the model: the input itself was fine


def _jsonl(tmp_path: Path, with_identity: bool) -> Path:
    rows = []
    for i in range(12):
        row: dict = {"id": str(i), "text": "buy cheap followers at example dot com now"}
        if with_identity:
            row |= {"author": "spammer", "created_at": f"2024-01-01T00:00:{i:02d}Z"}
        rows.append(json.dumps(row))
    p = tmp_path / ("timed.jsonl" if with_identity else "bare.jsonl")
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("with_identity", [True, False])
def test_jsonl_without_authors_or_times_turns_rate_rules_off(tmp_path, capsys, with_identity):
    """Twelve identical lines from one author in twelve seconds trip the spam rules; the same lines without author
    and time do not (one warning says the rate-based rules are off), and nobody collects strikes."""
    from bot.jobs.scan import run_scan

    src = _jsonl(tmp_path, with_identity)
    out = tmp_path / "out.jsonl"
    args = Namespace(paths=[src], policy=[], out=out, report=None, format="auto", on_error="skip", batch_size=16,
                     no_progress=True)
    assert asyncio.run(run_scan(args, Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer())) == 0
    rows = [json.loads(ln) for ln in out.read_text(encoding="utf-8").splitlines()]
    rule_hits = [h["rule"] for r in rows for h in r["rule_hits"]]
    err = capsys.readouterr().err
    if with_identity:
        assert rule_hits and "rate-based rules" not in err
    else:
        assert rule_hits == [] and all(r["action"] == "none" for r in rows)
        assert err.count("rate-based rules") == 1 and "12 of 12 messages have no author or no time" in err


def test_score_exits_nonzero_when_lines_fail_but_keeps_the_contract(tmp_path):
    """A non-JSON line still gets its {"id", "error"} line in order, the good lines are judged, and the exit code
    is 1 with a count of the failed lines on stderr."""
    from bot.jobs.score import run_score

    stdin = io.StringIO('{"id": "a", "text": "hello"}\nnot json\n{"id": "c"}\n{"id": "d", "text": "bye"}\n')
    stdout, stderr = io.StringIO(), io.StringIO()
    args = Namespace(policy=[], batch_size=8)
    rc = asyncio.run(run_score(args, Settings(db_path=tmp_path / "unused.db"), stdin, stdout, stderr,
                               scorer=FakeScorer()))
    out = [json.loads(ln) for ln in stdout.getvalue().splitlines()]
    assert rc == 1
    assert [o["id"] for o in out] == ["a", "line:2", "c", "d"]
    assert "error" in out[1] and "error" in out[2] and "scores" in out[0] and "scores" in out[3]
    assert stderr.getvalue().strip() == 'error: 2 input line(s) could not be judged (see their "error" lines)'


def test_score_exits_zero_when_every_line_is_judged(tmp_path):
    """All-good input exits 0 with nothing on stderr."""
    from bot.jobs.score import run_score

    stdout, stderr = io.StringIO(), io.StringIO()
    rc = asyncio.run(run_score(Namespace(policy=[], batch_size=8), Settings(db_path=tmp_path / "u.db"),
                               io.StringIO('{"id": 1, "text": "hi"}\n'), stdout, stderr, scorer=FakeScorer()))
    assert rc == 0 and stderr.getvalue() == "" and len(stdout.getvalue().splitlines()) == 1


def test_purge_refuses_a_database_that_does_not_exist(tmp_path, capsys):
    """purge --db typo.db exits 2 naming the file and does not create it."""
    db = tmp_path / "typo.db"
    assert main(["purge", "--db", str(db), "--days", "30"]) == 2
    assert _err_lines(capsys) == [f"error: {db}: no such database; nothing to purge"]
    assert not db.exists()


def test_policy_check_reports_every_error_of_a_file(tmp_path, capsys):
    """A file with four mistakes reports all four in one run, each naming file and key."""
    f = tmp_path / "bad.toml"
    f.write_text('shadow_mode = "sometimes"\n[thresholds]\ninsult = { review = 1.5 }\n'
                 '[server]\nretention_days = 0\ncolour = "blue"\n', encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 2
    err = capsys.readouterr().err
    assert "4 problems" in err
    for key in ("shadow_mode", "thresholds.insult.review", "server.retention_days", "server.colour: unknown key"):
        assert f"{f}: {key}" in err


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ('[server]\nreview_channel = "#mod-review"\n', "server.review_channel", "#mod-review"),
        ('[server]\nmod_log_channel = "mod-log"\n', "server.mod_log_channel", "mod-log"),
        ('[server]\nmoderator_roles = ["Moderators"]\n', "server.moderator_roles", "Moderators"),
    ],
)
def test_policy_check_refuses_names_where_ids_are_needed(tmp_path, capsys, text, key, value):
    """A channel or role name where an id is required is refused with the key and a reason naming ids."""
    f = tmp_path / "srv.toml"
    f.write_text(text, encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{key}" in err and f"'{value}' is a name" in err and "17-20 digits" in err


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[server]\nreview_channel = 123456789012345678\n", "server.review_channel"),
        ("[server]\nmoderator_roles = [123456789012345680]\n", "server.moderator_roles.0"),
        ("[exempt]\nchannels = [123456789012345678]\n", "exempt.channels.0"),
    ],
)
def test_policy_check_says_to_quote_an_id_written_as_a_number(tmp_path, capsys, text, key):
    """An id written without quotes (TOML reads it as a number) is refused with the key and what to write, not
    pydantic's 'Input should be a valid string', which a newcomer copying an id from Discord cannot act on."""
    f = tmp_path / "srv.toml"
    f.write_text(text, encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 2
    value = text.split("= ")[1].strip().strip("[]")
    assert f'{f}: {key}: {value} is a number: write it in quotes ("{value}")' in capsys.readouterr().err


def test_policy_check_accepts_discord_and_slack_ids(tmp_path, capsys):
    """Discord snowflakes, Slack channel ids (C.../G...), user group and user ids (S..., U...) are accepted."""
    f = tmp_path / "srv.toml"
    f.write_text('[server]\nreview_channel = "123456789012345678"\nmod_log_channel = "G0123ABCD"\n'
                 'moderator_roles = ["234567890123456789", "S0123ABCD", "U0123ABCD"]\n', encoding="utf-8")
    assert main(["policy", "check", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["policy"]["server"]["mod_log_channel"] == "G0123ABCD"


def test_policy_check_into_a_closed_pipe_ends_quietly():
    """`policy check | head -1`: the closed pipe ends the command without a BrokenPipe traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "bot", "policy", "check", "--json"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_discord_without_network_is_one_line_error(tmp_path, capsys, monkeypatch):
    """discord against an unreachable Discord exits 1 with one line naming the cause, no traceback, and never
    loads the model (the model setting here cannot load)."""
    import discord

    monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{_closed_port()}/api/v10")
    monkeypatch.setenv("DISCORD_TOKEN", "not-a-real-token")
    assert main([*NO_MODEL, "discord", "--db", str(tmp_path / "m.db")]) == 1
    lines = _err_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith("error: discord: cannot reach Discord (http://127.0.0.1:")
    assert "Traceback" not in lines[0]


def test_discord_with_a_bad_token_is_one_line_error(tmp_path, capsys, monkeypatch):
    """discord whose token Discord refuses (401 on GET /users/@me) exits 1 with one line naming the token."""
    import discord
    from aiohttp import web

    async def unauthorized(_request: web.Request) -> web.Response:
        return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", unauthorized)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    server = site._server  # noqa: SLF001
    assert isinstance(server, asyncio.Server)
    port = server.sockets[0].getsockname()[1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{port}/api/v10")
        monkeypatch.setenv("DISCORD_TOKEN", "refused-token")
        assert main([*NO_MODEL, "discord", "--db", str(tmp_path / "m.db")]) == 1
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.run_until_complete(runner.cleanup())
        loop.close()
    assert _err_lines(capsys) == ["error: discord: Discord refused the token (DISCORD_TOKEN)"]


def test_discord_without_token_fails_before_connecting(tmp_path, capsys, monkeypatch):
    """No DISCORD_TOKEN: exit 2 with one line, nothing connects."""
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert main(["discord", "--db", str(tmp_path / "m.db")]) == 2
    assert _err_lines(capsys) == ["error: discord: DISCORD_TOKEN is not set (the bot token: Developer Portal > "
                                  "your application > Bot > Reset Token; docs/discord-setup.md)"]
    assert not (tmp_path / "m.db").exists()


def test_bench_is_part_of_the_package_and_bench_script_delegates():
    """python -m bot bench runs bot.jobs.bench (not the repository's bench/); bench/run.py calls the same main."""
    script = (ROOT / "bench" / "run.py").read_text(encoding="utf-8")
    assert "from bot.jobs.bench import main" in script
    env = {**os.environ, "MODBOT_SHARED": "/nonexistent"}
    proc = subprocess.run([sys.executable, "-m", "bot", "bench"], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 2 and "bench needs the chat exports at /nonexistent/data/chats" in proc.stderr


def test_policy_check_ends_with_ok_and_warns_about_unset_channels(tmp_path, capsys):
    """A valid file ends with one OK line on stdout (no JSON); each unset channel gets a warning on stderr."""
    f = tmp_path / "srv.toml"
    f.write_text('[server]\nreview_channel = "123456789012345678"\n', encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [out.strip()] and out.startswith("OK: valid policy, version ")
    assert str(f) in out
    assert err.splitlines() == ["warning: server.mod_log_channel is not set: the mod log is not posted (set it in "
                                "the server's file or with /policy set)"]
    both = tmp_path / "both.toml"
    both.write_text('[server]\nreview_channel = "1234567890123456789"\nmod_log_channel = "1234567890123456780"\n',
                    encoding="utf-8")
    assert main(["policy", "check", str(both)]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("argv", "code", "stream", "needle"), [
    (["serve", "--help"], 0, "out", "usage: python -m bot serve"),
    (["serve", "--bogus"], 2, "err", "unrecognized arguments: --bogus"),
])
def test_serve_help_and_bad_options_are_printed_once(capsys, argv, code, stream, needle):
    """``serve --help`` and a bad ``serve`` option print the usage once (the model preload parses quietly)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == code
    captured = capsys.readouterr()
    text = captured.out if stream == "out" else captured.err
    assert text.count("usage: python -m bot serve") == 1
    assert text.count(needle) == 1


def test_python_without_the_dependencies_gets_one_line_naming_setup():
    """`python -m bot` run by a Python without the bot's dependencies (here: the venv's interpreter with its
    site-packages switched off, `-S`, as the system `python` in a checkout whose .venv is not activated) exits 2
    with one line naming the missing module and how to set up, not a traceback."""
    proc = subprocess.run([sys.executable, "-S", "-m", "bot", "policy", "check"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: module 'pydantic' is not installed for ")
    assert "bash scripts/setup.sh" in lines[0] and ".venv/bin/python -m bot" in lines[0]


def test_a_missing_project_module_keeps_its_traceback():
    """Only third-party modules are reported as not installed; a missing module of the project is a bug."""
    from bot.__main__ import missing_dependency

    assert missing_dependency(ModuleNotFoundError("x", name="bot.nope")) is None
    assert missing_dependency(ModuleNotFoundError("x", name="cogs")) is None
    assert "'emoji' is not installed" in (missing_dependency(ModuleNotFoundError("x", name="emoji")) or "")


def _subparsers(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += _subparsers(sub, f"{name} {sub_name}")
    return found


def test_every_command_line_option_says_what_it_does():
    """`python -m bot COMMAND --help` explains every option (a newcomer read `--batch-size BATCH_SIZE` and
    `--no-progress` with no word on what they do)."""
    from bot.cli import build_parser

    missing = [f"{cmd}: {'/'.join(a.option_strings) or a.dest}"
               for cmd, parser in _subparsers(build_parser(), "python -m bot")
               for a in parser._actions
               if not isinstance(a, argparse._SubParsersAction) and a.dest != "rest" and not a.help]
    assert missing == []


@pytest.mark.parametrize(("argv", "line"), [
    (["scan", "x.json", "--model", "embedded"],
     "error: --model is an option of python -m bot itself: put it before the command (python -m bot --model ... scan ...)"),
    (["report", "--db", "x.db", "-vv"],
     "error: -vv is an option of python -m bot itself: put it before the command (python -m bot -vv report ...)"),
    (["policy", "check", "--log-format=json"],
     "error: --log-format is an option of python -m bot itself: put it before the command "
     "(python -m bot --log-format ... policy ...)"),
])
def test_a_global_option_after_the_command_is_named_with_where_it_goes(capsys, tmp_path, monkeypatch, argv, line):
    """`scan ... --model embedded` (the README says model options go first): one line saying where the option
    goes, exit 2, instead of argparse's bare "unrecognized arguments"; no mod log is created."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [line]
    assert not (tmp_path / "x.db").exists()


def test_an_unknown_option_after_the_command_is_still_argparse_s_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--bogus"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


@pytest.mark.parametrize("model_args", [["--model", "nosuch"], ["--checkpoint", "missing.ckpt"]])
def test_an_unknown_model_is_refused_before_the_mod_log_or_its_folder_is_created(tmp_path, capsys, model_args):
    """``--model nosuch`` (or a checkpoint that does not exist) exits 2 naming the model, before anything is read
    or created: no mod-log file, no folder for it, no ``--out``."""
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "1", "text": "hello", "author": "u", "created_at": "2024-05-01T10:00:00Z"}\n',
                   encoding="utf-8")
    db = tmp_path / "logs" / "mod.db"
    out = tmp_path / "verdicts.jsonl"
    rc = main([*model_args, "scan", str(src), "--db", str(db), "--out", str(out), "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err
    assert ("unknown model 'nosuch'" in err) if "--model" in model_args else ("missing.ckpt does not exist" in err)
    assert not db.exists() and not db.parent.exists() and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_every_command_help_says_what_the_command_does(capsys):
    """`python -m bot COMMAND --help` prints a line on what the command does above its options (a newcomer found
    `score --help` and `backup --help` showing the usage and options only)."""
    from bot.cli import build_parser

    bare = [cmd for cmd, parser in _subparsers(build_parser(), "python -m bot") if not parser.description]
    assert bare == []
    with pytest.raises(SystemExit):
        main(["backup", "--help"])
    out = capsys.readouterr().out
    assert "\nWrite an online copy of the mod log (SQLite: sqlite3 backup API).\n" in out


def test_bench_help_lists_its_commands_in_the_usage_and_the_help(capsys, monkeypatch):
    """`python -m bot bench --help` shows `bench store` and `bench precision` in its usage (each with its own
    options, as `bench store --help` shows them) and lists both with what they measure (a newcomer found no
    command in the usage); an option written before a command is refused with exit 2 (its options would be lost)."""
    monkeypatch.setenv("COLUMNS", "400")  # one usage line per form
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    usage = [ln.strip() for ln in out.split("\n\n", 1)[0].splitlines()]
    with pytest.raises(SystemExit):
        main(["bench", "store", "--help"])
    store_usage = capsys.readouterr().out.splitlines()[0].removeprefix("usage: ")
    assert usage[0].startswith("usage: python -m bot bench [-h] [--messages MESSAGES]")
    assert usage[1] == store_usage and "--pg-url PG_URL" in store_usage
    assert usage[2].startswith("python -m bot bench precision [-h] [--recipe ")
    commands = out.split("\ncommands:\n", 1)[1]
    assert re.search(r"\n    store +the store's write path", commands)
    assert re.search(r"\n    precision +the embedded model's int8 variant", commands)
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "--messages", "5", "store"])
    assert stopped.value.code == 2
    assert "write the command first: python -m bot bench store" in capsys.readouterr().err


def test_bench_help_names_the_command_and_explains_every_option(capsys):
    """`python -m bot bench --help` (its own parser) starts with the full command, says what it measures, and
    gives every option a help text (a newcomer found `usage: bench` and six bare options)."""
    import re

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m bot bench ") and "detoxify 'original'" in out
    options = out.split("options:", 1)[1].strip("\n")
    entries = [e.strip() for e in re.split(r"\n  (?=-)", "\n" + options) if e.strip()]
    assert {"--baseline-messages", "--loads", "--no-scan", "--json"} <= {e.split()[0].rstrip(",") for e in entries}
    helpless = [e for e in entries if "\n" not in e and not re.search(r"\S\s{2,}\S", e)]
    assert helpless == []
