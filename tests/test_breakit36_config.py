"""Configuration, server policy files and chat-export importers (thirty-sixth session's break-it pass, area
"config"): what an admin gets wrong in a file, and a spreadsheet does to an export, is said with the file, the key
or row and the reason, never read as something else. Real files in ``tmp_path`` read by the real readers and
loaders."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError, load_policy
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.ingest.discord_csv import iter_discord_csv
from bot.jobs.scan import run_scan
from bot.runtime import OverrideBridge
from bot.settings import Settings
from bot.store.sqlite import SqliteStore
from tests.fakes import FakeScorer
from tests.ingest_sinks import CollectingSink
from tests.test_scan_stream import _args


def test_csv_author_ids_rounded_by_a_spreadsheet_are_reported_not_merged_into_one_member(tmp_path: Path):
    """A DCE CSV opened in Excel and saved again has its AuthorID column turned into numbers written as
    ``1.23457E+17`` (6 significant digits of 18): two members' rows read as one member's, so one member's flood and
    strikes took the other's messages. Each such row is now reported with its file, row and the reason, and the rows
    whose ids are intact are read as usual."""
    p = tmp_path / "general [123456789012345678].csv"
    p.write_bytes(b"\xef\xbb\xbfAuthorID;Author;Date;Content;Attachments;Reactions\r\n"
                  b"1.23457E+17;alice;01.02.2024 10:00;hello there;;\r\n"
                  b"1,23457E+17;bob;01.02.2024 10:01;you are an idiot;;\r\n"
                  b"123456789012345678;carol;01.02.2024 10:02;\"two\nlines\";;\r\n")
    sink = CollectingSink()
    msgs = [(m.author.id, m.author.name, m.text) for m in iter_discord_csv(p, sink=sink)]
    assert msgs == [("123456789012345678", "carol", "two\nlines")]
    assert [(e.position, e.reason.split(":")[0]) for e in sink.errors] == [
        ("row 1 (line 2)", "AuthorID '1.23457E+17' is a number in scientific notation"),
        ("row 2 (line 3)", "AuthorID '1,23457E+17' is a number in scientific notation"),
    ]
    assert "import the AuthorID column as text" in sink.errors[0].reason


GUILD = "123456789012345678"


def _dce_json(path: Path, guild: str = GUILD) -> Path:
    """A DiscordChatExporter JSON export of guild ``guild``: two members' messages, a second apart."""
    msgs = [{"id": str(500000000000000000 + i), "type": "Default", "timestamp": f"2026-01-01T10:00:0{i}Z",
             "content": text, "author": {"id": str(400000000000000000 + i), "name": f"m{i}", "isBot": False}}
            for i, text in enumerate(["good morning", "hello all"])]
    path.write_text(json.dumps({"guild": {"id": guild, "name": "g"}, "channel": {"id": "300000000000000000",
                    "name": "general", "type": "GuildTextChat"}, "messages": msgs}), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "why"), [
    (f"discord-{GUILD}.TOML", f"a server's file ends in .toml (lower case); rename it to discord-{GUILD}.toml"),
    (f"discord-{GUILD}.tml", f"a server's file ends in .toml (lower case); rename it to discord-{GUILD}.toml"),
    (f"discord-{GUILD}.toml.txt", f"a server's file ends in .toml (lower case); rename it to discord-{GUILD}.toml"),
    (f"Discord-{GUILD}.toml", "a server's file is named <platform>-<server id>.toml, the platform discord, slack or "
                              f"export; rename it to discord-{GUILD}.toml"),
    ("discord-my-server.toml", "'my-server' is not a Discord server id (17-20 digits: with Developer Mode on, "
                               "right-click the server > Copy Server ID)"),
    ("slack-t0123abcd.toml", "'t0123abcd' is not a Slack team id (T or E, then upper-case letters and digits: "
                             "T0123ABCD)"),
])
def test_a_server_file_no_server_reads_stops_the_bot_naming_the_file_and_the_name_it_needs(tmp_path: Path, name,
                                                                                            why):
    """A server's file whose name no server looks up (``.TOML``, ``.tml``, Notepad's ``.toml.txt``, a capital, the
    server's name instead of its id) was skipped without a word by the bots' start check, so the server ran on the
    default policy (its review channel, moderator roles and thresholds unset). The start check now refuses it with
    the file, ``(file name)`` and the reason; README.md, editor backups and hidden files are left alone."""
    servers = tmp_path / "servers"
    servers.mkdir()
    (servers / name).write_text("[thresholds]\nthreat = { review = 0.4 }\n", encoding="utf-8")
    for other in ("README.md", f"discord-{GUILD}.toml~", f"discord-{GUILD}.toml.bak", ".discord.toml.swp",
                  f"discord-{GUILD}.toml.example"):
        (servers / other).write_text("x = [\n", encoding="utf-8")
    registry = PolicyRegistry(DEFAULT_POLICY_PATH, servers)
    platform = "slack" if name.startswith("slack") else "discord"
    with pytest.raises(PolicyError) as info:
        registry.validate_servers(platform)
    assert str(info.value) == f"{servers / name}: (file name): no server reads this file: {why}"
    assert registry.unread_files() == [(servers / name, why)]


def test_a_well_named_server_file_beside_notes_and_backups_passes_the_start_check(tmp_path: Path):
    """The start check still reads a well-named file (and checks it), and leaves notes and backups alone."""
    servers = tmp_path / "servers"
    servers.mkdir()
    (servers / f"discord-{GUILD}.toml").write_text("[thresholds]\nthreat = { review = 0.4 }\n", encoding="utf-8")
    (servers / "slack-T0123ABCD.toml").write_text("", encoding="utf-8")
    (servers / "README.md").write_text("# notes\n", encoding="utf-8")
    (servers / f"discord-{GUILD}.toml~").write_text("broken = [\n", encoding="utf-8")
    registry = PolicyRegistry(DEFAULT_POLICY_PATH, servers)
    assert registry.validate_servers("discord") == 1 and registry.validate_servers() == 2
    assert registry.unread_files() == []


def test_scan_says_which_server_file_no_server_reads(tmp_path: Path, capsys):
    """A scan of a guild's export beside ``discord-<guild id>.TOML`` judged the guild by the default policy; the
    report's server table listed only the default file, and nothing on the terminal said why. The scan now warns,
    naming the file and the name it needs (it still scans: the file may be meant for another server)."""
    servers = tmp_path / "servers"
    servers.mkdir()
    wrong = servers / f"discord-{GUILD}.TOML"
    wrong.write_text("shadow_mode = true\n", encoding="utf-8")
    export = _dce_json(tmp_path / "export.json")
    settings = Settings(db_path=tmp_path / "m.db", servers_dir=servers)
    assert asyncio.run(run_scan(_args([export]), settings, scorer=FakeScorer())) == 0
    warnings = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning:")]
    assert warnings == [f"warning: {wrong}: no server reads this file: a server's file ends in .toml (lower case); "
                        f"rename it to discord-{GUILD}.toml"]


def test_policy_check_of_a_file_in_the_servers_folder_warns_when_no_server_reads_it(tmp_path: Path, monkeypatch,
                                                                                     capsys):
    """``policy check config/servers/discord-<id>.TOML`` said OK and nothing else, though no server reads the file.
    It now warns, naming the file and the name it needs (the file's own content is still checked: OK)."""
    servers = tmp_path / "servers"
    servers.mkdir()
    monkeypatch.setenv("MODBOT_SERVERS_DIR", str(servers))
    misnamed = servers / f"discord-{GUILD}.TOML"
    misnamed.write_text("", encoding="utf-8")
    assert main(["policy", "check", str(misnamed)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"warning: {misnamed}: no server reads this file: a server's file ends in .toml (lower case); rename it " \
           f"to discord-{GUILD}.toml" in err


def test_policy_check_of_a_server_file_refuses_what_the_bot_refuses_for_that_server(tmp_path: Path, monkeypatch,
                                                                                      capsys):
    """``policy check config/servers/discord-<id>.toml`` said OK for a file whose moderator_roles hold the server's
    own id (Discord's @everyone role: every member a moderator), which the bot then refused at start. It is now
    refused by the check too, with the file, the key and the reason (exit 2)."""
    servers = tmp_path / "servers"
    servers.mkdir()
    monkeypatch.setenv("MODBOT_SERVERS_DIR", str(servers))
    everyone = servers / f"discord-{GUILD}.toml"
    everyone.write_text(f'[server]\nmoderator_roles = ["{GUILD}"]\n', encoding="utf-8")
    assert main(["policy", "check", str(everyone)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: invalid policy: {everyone}: server.moderator_roles: contains the server id {GUILD}, "
                          "which is the @everyone role")
    with pytest.raises(PolicyError, match="@everyone"):
        PolicyRegistry(DEFAULT_POLICY_PATH, servers).validate_servers("discord")


@pytest.mark.parametrize(("toml", "key", "reason"), [
    ('[exempt]\nroles = ["@Moderators"]\n', "exempt.roles", "'@Moderators' is a name or mention, not an id; give "
     "the role's id (Discord: 17-20 digits, Developer Mode > right-click the role > Copy Role ID; Slack: a user group "
     "S0123ABCD, a user U0123ABCD, or admin / owner)"),
    ('[exempt]\nchannels = ["#staff-lounge"]\n', "exempt.channels", "'#staff-lounge' is a name or mention, not an "
     "id; give the channel's id (Discord: 17-20 digits, Developer Mode > right-click the channel > Copy Channel ID; "
     "Slack: C0123ABCD (private: G0123ABCD))"),
    ('[exempt]\nmembers = ["-123456789012345678"]\n', "exempt.members", "'-123456789012345678' is a negative "
     "number, not an id"),
    ('[exempt]\nchannels = ["<#123456789012345678>"]\n', "exempt.channels", "'<#123456789012345678>' is a name or "
     "mention, not an id"),
    ('[channels."bot commands"]\nexempt = true\n', "channels", "'bot commands' is a name or mention, not an id; "
     "give the channel's id"),
    ('[categories."#Staff"]\nexempt = true\n', "categories", "'#Staff' is a name or mention, not an id; give the "
     "category's id"),
])
def test_an_exemption_or_override_naming_a_name_instead_of_an_id_is_refused(tmp_path: Path, toml, key, reason):
    """Exempt roles, channels and members and the keys of channel and category overrides are matched against ids
    only, so ``roles = ["@Moderators"]`` or ``channels = ["#staff-lounge"]`` loaded and exempted nothing: the staff
    channel's banter was moderated as if no exemption were set. What no platform's or export's id can be (a name or
    mention, blank, a negative number) is now refused in any policy file, naming the file, the key and the reason."""
    path = tmp_path / "policy.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, path)
    assert (info.value.source, info.value.key) == (str(path), key)
    assert info.value.reason.startswith(reason)


def test_a_servers_file_naming_ids_of_another_kind_stops_the_start_and_the_scan(tmp_path: Path, monkeypatch, capsys):
    """A Discord server's own file exempting a role by its name, a Slack channel id and a shortened member id loaded
    without a word, and none of them exempted anything (Discord ids are snowflakes). The bots' start check and a
    scan of that guild's export now refuse the file with every such key and the reason; ``policy check`` too."""
    servers = tmp_path / "servers"
    servers.mkdir()
    own = servers / f"discord-{GUILD}.toml"
    own.write_text('[exempt]\nroles = ["Moderators"]\nchannels = ["C0123ABCD"]\nmembers = ["12345"]\n'
                   '[channels."300000000000000000"]\nexempt = true\n', encoding="utf-8")
    expected = (f"{own}: exempt.roles.0: 'Moderators' is not a Discord role id (17-20 digits, Developer Mode > "
                "right-click the role > Copy Role ID)\n"
                f"{own}: exempt.channels.0: 'C0123ABCD' is not a Discord channel id (17-20 digits, Developer Mode > "
                "right-click the channel > Copy Channel ID)\n"
                f"{own}: exempt.members.0: '12345' is not a Discord member id (17-20 digits, Developer Mode > "
                "right-click the member > Copy User ID)")
    with pytest.raises(PolicyError) as info:
        PolicyRegistry(DEFAULT_POLICY_PATH, servers).validate_servers("discord")
    assert str(info.value) == expected
    with pytest.raises(PolicyError) as info:
        asyncio.run(PolicyRegistry(DEFAULT_POLICY_PATH, servers).get("discord", GUILD))
    assert str(info.value) == expected
    settings = Settings(db_path=tmp_path / "m.db", servers_dir=servers)
    with pytest.raises(PolicyError):  # the CLI prints it as "error: invalid policy (3 problems): ..." (exit 2)
        asyncio.run(run_scan(_args([_dce_json(tmp_path / "export.json")]), settings, scorer=FakeScorer()))
    assert not (tmp_path / "m.db").exists()
    monkeypatch.setenv("MODBOT_SERVERS_DIR", str(servers))
    capsys.readouterr()
    assert main(["policy", "check", str(own)]) == 2
    assert capsys.readouterr().err == "error: invalid policy (3 problems):\n" + "".join(
        f"  {line}\n" for line in expected.splitlines())


def test_a_slack_workspace_file_takes_slack_ids_and_no_categories(tmp_path: Path):
    """A Slack workspace's own file takes Slack ids (user groups, users, admin / owner; C/G channels); a Discord
    snowflake or a category there matched nothing and is refused."""
    servers = tmp_path / "servers"
    servers.mkdir()
    own = servers / "slack-T0123ABCD.toml"
    own.write_text('[exempt]\nroles = ["admin", "S0123ABCDE"]\nchannels = ["C0123ABCDE"]\nmembers = ["U0123ABCDE"]\n',
                   encoding="utf-8")
    assert PolicyRegistry(DEFAULT_POLICY_PATH, servers).validate_servers("slack") == 1
    own.write_text('[exempt]\nroles = ["123456789012345678"]\n[categories."C0123ABCDE"]\nexempt = true\n',
                   encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        PolicyRegistry(DEFAULT_POLICY_PATH, servers).validate_servers("slack")
    assert info.value.problems == [
        ("exempt.roles.0", "'123456789012345678' is not a Slack role id (a user group S0123ABCD, a user U0123ABCD, "
                           "or admin / owner)"),
        ("categories.C0123ABCDE", "Slack has no channel categories: [categories] applies to Discord servers")]


async def test_a_runtime_override_naming_an_id_of_another_kind_is_refused_and_not_stored(tmp_path: Path):
    """``/policy set exempt.members ["vip"]`` (or a channel override keyed by a name) on a Discord server was stored
    and exempted nobody; it is refused naming the key, and nothing is stored."""
    store = await SqliteStore.open(tmp_path / "m.db")
    try:
        overrides = OverrideBridge(store)
        registry = PolicyRegistry(DEFAULT_POLICY_PATH, store=overrides)
        with pytest.raises(PolicyError) as info:
            await registry.set_override("discord", GUILD, "exempt.members", ["vip"], "mod")
        assert (info.value.source, info.value.key) == ("override exempt.members", "exempt.members.0")
        with pytest.raises(PolicyError, match="'general' is not a Discord channel id"):
            await registry.set_override("discord", GUILD, "channels.general.exempt", True, "mod")
        assert await overrides.list_policy_overrides("discord", GUILD) == {}
        await registry.set_override("discord", GUILD, "exempt.members", ["400000000000000001"], "mod")
        assert (await registry.get("discord", GUILD)).exempt.members == ["400000000000000001"]
    finally:
        await store.close()


@pytest.mark.parametrize("port", ["70000", "-1", "80.5", "https"])
def test_a_slack_port_that_is_no_port_stops_the_app_before_it_connects(tmp_path: Path, monkeypatch, capsys, port):
    """``MODBOT_SLACK_PORT=70000`` (or ``-1``) was taken: the app went on to check its token with Slack, open the mod
    log and load the model, and only then failed to bind (aiohttp: ``OverflowError: bind(): port must be
    0-65535.``), exit 1, which the systemd unit restarts every 15 s; a word for a port was refused as "must be a
    number" without the value. Now it stops first, in one line naming the variable and its value, with exit 2 (bad
    input: not restarted), before any connection (here: exit 1, as no Slack can be reached, without the fix)."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    monkeypatch.setenv("MODBOT_SLACK_MODE", "http")
    monkeypatch.setenv("MODBOT_SLACK_PORT", port)
    monkeypatch.setenv("MODBOT_DB", str(tmp_path / "m.db"))
    assert main(["slack"]) == 2
    assert capsys.readouterr().err == (f"error: slack: MODBOT_SLACK_PORT={port!r}: expected a port number from 1 to "
                                       "65535 (0: any free port)\n")
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize("raw", ["abc", "0", "-4", "2.5", "100000"])
def test_an_onnx_sub_batch_that_is_no_count_is_a_load_error_naming_the_variable(raw):
    """``MODBOT_ONNX_SUB_BATCH=abc`` raised ``ValueError: invalid literal for int()`` out of the ONNX scorer's
    constructor (a traceback at the model's load, e.g. under ``score``); ``0`` or ``-4`` were taken. Each is now a
    ScorerLoadError naming the variable and its value, as ``MODBOT_ONNX_THREADS`` is (the runtime then says so
    in one warning line and scores with torch)."""
    from bot.scoring import ScorerLoadError
    from bot.scoring.onnx_scorer import SUB_BATCH, onnx_sub_batch

    with pytest.raises(ScorerLoadError, match=rf"^MODBOT_ONNX_SUB_BATCH={raw!r}: expected a whole number"):
        onnx_sub_batch({"MODBOT_ONNX_SUB_BATCH": raw})
    assert onnx_sub_batch({"MODBOT_ONNX_SUB_BATCH": " 8 "}) == 8
    assert onnx_sub_batch({}) == SUB_BATCH


async def test_a_server_file_broken_while_the_bot_runs_leaves_the_checked_policy_in_force(tmp_path: Path):
    """The bot checks every server's file at start but read it again at the server's first message: a file broken
    after the start check (an admin's half-saved edit) made every message of that server fail to be judged at all
    ("pipeline batch failed", a traceback in the log), and a valid edit was taken in by the next ``/policy set``
    without a restart or a check. A file is now read once, at start: the policy checked then stays in force, and an
    edit takes effect at the next start, which checks it."""
    servers = tmp_path / "servers"
    servers.mkdir()
    own = servers / f"discord-{GUILD}.toml"
    own.write_text("[thresholds]\nthreat = { review = 0.4 }\n", encoding="utf-8")
    store = await SqliteStore.open(tmp_path / "m.db")
    try:
        registry = PolicyRegistry(DEFAULT_POLICY_PATH, servers, store=OverrideBridge(store))
        assert registry.validate_servers("discord") == 1
        own.write_text("shadow_mode = true\n[thresholds\nthreat = { review = 0.4 }\n", encoding="utf-8")
        message = Message(server=ServerRef("discord", GUILD, "g"), channel=ChannelRef("300000000000000000", "general"),
                          author=MemberRef("400000000000000000", "a"), id="500000000000000000",
                          text="i will find you", created_at=datetime(2026, 1, 1, tzinfo=UTC))
        scorer = FakeScorer({"find you": {"threat": 0.5}})
        async with ModerationService(scorer=scorer, store=store, policies=registry, max_delay_s=0.001) as service:
            out = await service.handle(message)
        assert out.verdict.flagged and out.verdict.labels == ("threat",)
        own.write_text("shadow_mode = true\n[thresholds]\nthreat = { review = 0.4 }\n", encoding="utf-8")
        changed = await registry.set_override("discord", GUILD, "thresholds.insult.review", 0.9, "mod")
        assert changed.thresholds["threat"].review == 0.4 and not changed.shadow_mode
        restarted = PolicyRegistry(DEFAULT_POLICY_PATH, servers, store=OverrideBridge(store))
        assert restarted.validate_servers("discord") == 1  # the next start checks the edit, then it is in force
        assert (await restarted.get("discord", GUILD)).shadow_mode
    finally:
        await store.close()


def _csv_times(tmp_path: Path, name: str, dates: list[str]) -> tuple[list[datetime], list[str]]:
    """The times of a comma-style DCE CSV of one row per date, and the errors reported."""
    p = tmp_path / f"{name} [300000000000000000].csv"
    p.write_text("AuthorID,Author,Date,Content,Attachments,Reactions\r\n" + "".join(
        f"123456789012345678,alice,{d},message {i},,\r\n" for i, d in enumerate(dates)), encoding="utf-8")
    sink = CollectingSink()
    return [m.created_at for m in iter_discord_csv(p, sink=sink) if m.created_at is not None], \
        [f"{e.position}: {e.reason}" for e in sink.errors]


def _utc(year: int, month: int, day: int, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def test_csv_dates_excel_wrote_month_first_are_read_month_first_throughout_the_file(tmp_path: Path):
    """A DCE CSV saved again by Excel (US) has its dates as ``12/4/2019 7:57`` (M/d/yyyy H:mm): the reader took
    every such date day-first (the .NET en-GB form), so 4 December read as 12 April, silently, while
    ``12/13/2019 7:57`` in the same file was refused as unrecognised. The order is now read from the file's own
    dates (a number over 12 tells it), the same for every row."""
    times, errors = _csv_times(tmp_path, "us", ["12/4/2019 7:57", "12/13/2019 7:57", "12/13/2019 18:02"])
    assert (times, errors) == ([_utc(2019, 12, 4, 7, 57), _utc(2019, 12, 13, 7, 57), _utc(2019, 12, 13, 18, 2)], [])
    times, errors = _csv_times(tmp_path, "gb", ["04/12/2019 07:57", "13/12/2019 07:57:30"])
    assert (times, errors) == ([_utc(2019, 12, 4, 7, 57), _utc(2019, 12, 13, 7, 57, 30)], [])


def test_csv_dates_that_read_both_ways_are_ordered_by_time_or_reported(tmp_path: Path):
    """With no number over 12, the order whose dates never go back in time is taken (a DCE file is written in time
    order); when both orders do (every row one day), each row is reported as ambiguous, never guessed."""
    times, errors = _csv_times(tmp_path, "order", ["1/2/2020 10:00", "1/9/2020 10:00", "2/1/2020 10:00"])
    assert (times, errors) == ([_utc(2020, 1, 2, 10), _utc(2020, 1, 9, 10), _utc(2020, 2, 1, 10)], [])
    times, errors = _csv_times(tmp_path, "oneday", ["3/4/2020 10:00", "3/4/2020 11:00", "5/5/2020 09:00"])
    assert times == [_utc(2020, 5, 5, 9)]
    assert [e.split(": ")[0] for e in errors] == ["row 1 (line 2)", "row 2 (line 3)"]
    assert errors[0].endswith("date '3/4/2020 10:00' reads as day/month and as month/day, and this file's dates do "
                              "not tell which (some put a number over 12 first, some second, or all are one day); "
                              "this row is skipped: use the file DiscordChatExporter wrote, or an ISO-8601 date")


def test_a_replacement_default_policy_of_a_few_keys_is_refused_naming_what_it_leaves_empty(tmp_path: Path,
                                                                                            monkeypatch, capsys):
    """``MODBOT_POLICY`` replaces the packaged default; a file of a few changed keys (written like a server's file)
    gave a policy with no thresholds, no label actions, no escalation ladder and no slur list: the model flagged
    nothing, and ``policy check`` said OK. Such a file is now refused, naming each key it would leave empty; a full
    copy of the packaged default with a change is still fine."""
    partial = tmp_path / "our-policy.toml"
    partial.write_text("[server]\nretention_days = 14\n", encoding="utf-8")
    monkeypatch.setenv("MODBOT_POLICY", str(partial))
    assert main(["policy", "check"]) == 2
    err = capsys.readouterr().err.splitlines()
    why = ("missing: a default policy file replaces bot/config/default.toml (it is not layered on it), so this would "
           "be empty; copy it from there (empty if none is meant), or put your changes in a server's file or a "
           "--policy file")
    assert err == ["error: invalid policy (4 problems):"] + [
        f"  {partial}: {key}: {why}" for key in ("thresholds", "label_actions", "strikes.ladder",
                                                 "rules.blocklist.lists")]
    with pytest.raises(PolicyError, match="thresholds: missing"):
        PolicyRegistry(partial)
    full = tmp_path / "full.toml"
    full.write_text(DEFAULT_POLICY_PATH.read_text(encoding="utf-8").replace("retention_days = 30",
                                                                             "retention_days = 14"), encoding="utf-8")
    assert PolicyRegistry(full).base.server.retention_days == 14
    monkeypatch.setenv("MODBOT_POLICY", str(full))
    assert main(["policy", "check"]) == 0


@pytest.mark.parametrize("value", ["true", '"3"'])
def test_strike_points_that_are_not_a_whole_number_are_refused(tmp_path: Path, value):
    """``[strikes] points = { ban = true }`` loaded as 1 point for a ban (a boolean read as a number), and
    ``"3"`` as 3; every other number of the policy is refused when it is not written as one. Refused, naming the
    key."""
    path = tmp_path / "policy.toml"
    path.write_text(f"[strikes]\npoints = {{ ban = {value} }}\n", encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, path)
    assert (info.value.source, info.value.key, info.value.reason) == (str(path), "strikes.points.ban",
                                                                      "Input should be a valid integer")


@pytest.mark.parametrize(("toml", "key"), [
    ('[channels."300000000000000000"]\nblock_terms = ["spoilerword", ""]\n', "channels.300000000000000000.block_terms"),
    ('[categories."300000000000000001"]\nallow_terms = ["  "]\n', "categories.300000000000000001.allow_terms"),
    ('[identity_target]\nextra_terms = [""]\n', "identity_target.extra_terms"),
])
def test_an_empty_term_in_a_channel_or_identity_list_is_refused_as_in_the_blocklist(tmp_path: Path, toml, key):
    """``[rules.blocklist] terms`` refuses an empty term, but a channel's ``block_terms`` / ``allow_terms`` and
    ``[identity_target] extra_terms`` loaded ``""`` (a stray comma's leftover, a term cut to nothing) and it matched
    nothing, without a word. Refused the same way, naming the key."""
    path = tmp_path / "policy.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, path)
    assert (info.value.source, info.value.key, info.value.reason) == (str(path), key, "empty term")


def test_scan_names_the_policy_files_that_judge_each_server_and_the_server_file_it_lacks(tmp_path: Path, capsys):
    """A DiscordChatExporter CSV export names no guild (its folder's name is its server id), so a guild's
    ``discord-<id>.toml`` never judged it, and the terminal said nothing of which policy judged what (only the
    report's server table did). Each server's files are now named on the terminal, with the server file a server
    lacks; a guild's JSON export shows its own file."""
    servers = tmp_path / "servers"
    servers.mkdir()
    own = servers / f"discord-{GUILD}.toml"
    own.write_text("[thresholds]\nthreat = { review = 0.4 }\n", encoding="utf-8")
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "g - general [300000000000000000].csv").write_text(
        "AuthorID,Author,Date,Content,Attachments,Reactions\n400000000000000000,a,2026-01-01 10:00,hello,,\n",
        encoding="utf-8")
    export = _dce_json(tmp_path / "export.json")
    settings = Settings(db_path=tmp_path / "m.db", servers_dir=servers)
    assert asyncio.run(run_scan(_args([export, folder]), settings, scorer=FakeScorer())) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("policy of ")]
    default = load_policy(DEFAULT_POLICY_PATH)
    assert lines == [
        f"policy of export/{GUILD}: {DEFAULT_POLICY_PATH} + {own} "
        f"(version {load_policy(DEFAULT_POLICY_PATH, own).version})",
        f"policy of export/exports: {DEFAULT_POLICY_PATH} (version {default.version}); no server file "
        f"{servers / 'export-exports.toml'}"]


def test_a_scan_that_stops_leaves_an_earlier_out_file_as_it_was(tmp_path: Path, capsys):
    """``--out`` was opened for writing (truncated) when judging began: a later scan into the same file that
    stopped (here its scorer fails on a new message; also a full disk or Ctrl-C) destroyed the earlier verdicts and
    left a file cut short that read like a whole one. The verdicts are now written beside it and put in its place
    when the scan finishes; a scan that stops leaves the earlier file as it was, and no partial file."""
    out = tmp_path / "verdicts.jsonl"
    settings = Settings(db_path=tmp_path / "m.db")
    first = _dce_json(tmp_path / "export.json")
    assert asyncio.run(run_scan(_args([first], out=out), settings, scorer=FakeScorer())) == 0
    before = out.read_text(encoding="utf-8")
    assert len(before.splitlines()) == 2
    more = tmp_path / "more.jsonl"
    more.write_text('{"id": "m1", "text": "BOOM", "author": "a", "created_at": "2026-01-02T10:00:00Z"}\n',
                    encoding="utf-8")
    assert asyncio.run(run_scan(_args([first, more], out=out), settings, scorer=FakeScorer(fail_on="BOOM"))) == 2
    assert "scan stopped after" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("verdicts")) == ["verdicts.jsonl"]
    assert asyncio.run(run_scan(_args([first, more], out=out), settings, scorer=FakeScorer())) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_a_broken_quote_before_a_row_with_a_month_first_date_is_still_found(tmp_path: Path):
    """The unterminated-quote check (a later line that reads as a row of its own) knew only day-first slash dates,
    so in a file Excel saved with ``12/13/2019 7:57`` dates a quote left open swallowed the next row into one
    message without a word. The row is found and read, the broken one reported."""
    p = tmp_path / "us [300000000000000000].csv"
    p.write_text("AuthorID,Author,Date,Content,Attachments,Reactions\n"
                 '400000000000000001,a,12/13/2019 7:57,"never closed,,\n'
                 '400000000000000002,b,12/13/2019 7:58,ends in a quote",,\n', encoding="utf-8")
    sink = CollectingSink()
    msgs = [(m.author.id, m.text, m.created_at) for m in iter_discord_csv(p, sink=sink)]
    assert msgs == [("400000000000000002", 'ends in a quote"', _utc(2019, 12, 13, 7, 58))]
    assert [e.position for e in sink.errors] == ["row 1 (line 2)"]
