"""Configuration, server policy files and chat-export importers (thirty-sixth session's break-it pass, area
"config"): what an admin gets wrong in a file, and a spreadsheet does to an export, is said with the file, the key
or row and the reason, never read as something else. Real files in ``tmp_path`` read by the real readers and
loaders."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError
from bot.core.policy_registry import PolicyRegistry
from bot.ingest.discord_csv import iter_discord_csv
from bot.jobs.scan import run_scan
from bot.settings import Settings
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
    for other in ("README.md", f"discord-{GUILD}.toml~", f"discord-{GUILD}.toml.bak", ".discord.toml.swp"):
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
