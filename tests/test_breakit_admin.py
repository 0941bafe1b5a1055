"""Hostile input an admin or moderator types (issue 28's "Bad input"): ``--db`` values the store cannot use, and
more. Each test failed on main before its fix."""

from __future__ import annotations

import asyncio

import pytest

from bot.cli import main
from bot.core.errors import StoreRefused
from bot.settings import Settings, SettingsError
from bot.store import open_store


@pytest.mark.parametrize("url", ["mysql://u:secret@db.example/modlog", "sqlite:///var/lib/modbot.db",
                                 "MYSQL://u:secret@h/db", "http://example.com/db"])
def test_db_url_with_an_unsupported_scheme_is_refused_naming_the_supported_ones(tmp_path, capsys, monkeypatch,
                                                                                url):
    """``--db mysql://...`` (any ``scheme://`` that is not PostgreSQL) is one line, exit 2, naming the supported
    forms, and nothing is created under the working directory; the password is never printed."""
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--db", url, "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "postgresql://" in err[0] and "SQLite file path" in err[0] and "secret" not in err[0]
    assert list(tmp_path.iterdir()) == []


def test_modbot_db_with_an_unsupported_scheme_is_a_settings_error():
    """``MODBOT_DB=mysql://...`` is refused as the other settings are (naming the variable), not taken as a file."""
    with pytest.raises(SettingsError, match="MODBOT_DB.*postgresql://"):
        Settings.from_env({"MODBOT_DB": "mysql://u:p@h/db"})


@pytest.mark.parametrize("port", ["99999x", "99999", "0", "-5"])
async def test_postgres_url_with_a_malformed_port_is_refused_naming_the_port(port):
    """A port that is not a number from 1 to 65535 is refused before any connection, with a sentence naming it
    (not ``invalid literal for int()``, and never a connection to port 99999 mod 65536)."""
    with pytest.raises(StoreRefused) as caught:
        await open_store(f"postgresql://u:secret@127.0.0.1:{port}/db")
    cause = caught.value.cause
    assert f"port {port!r}" in cause and "1 to 65535" in cause, cause
    assert "secret" not in str(caught.value) and "invalid literal" not in cause


async def test_open_store_refuses_an_unsupported_url_instead_of_making_a_file(tmp_path, monkeypatch):
    """The store itself (callers that pass a string, e.g. the runtime) refuses ``mysql://`` rather than opening a
    SQLite file named ``mysql:/...``; the password is not in the error."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreRefused, match="postgresql://") as caught:
        await open_store("mysql://u:secret@h/db")
    assert "secret" not in str(caught.value) and list(tmp_path.iterdir()) == []


def test_report_shows_a_long_reason_once_capped_in_the_member_section_with_the_full_text_reachable(tmp_path):
    """A case whose reason is 20,000 characters: the page holds the full text once (in the case table, behind a
    short summary that ends with an ellipsis) and the member section shows a capped line linking to the case row;
    before, the full text was written twice (case table and member section), so long reasons doubled the page."""
    from bot.core.models import ActionKind, CaseStatus
    from bot.store.sqlite import SqliteStore

    reason = " ".join(f"word{i}" for i in range(2600))[:20_000]
    db = tmp_path / "mod.db"

    async def build() -> None:
        async with await SqliteStore.open(db) as store:
            await store.open_case("discord", "123456789012345678", "222222222222222222", ActionKind.WARN, reason,
                                  moderator_id="111111111111111111", status=CaseStatus.APPLIED)

    asyncio.run(build())
    out = tmp_path / "mod-log.html"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count(reason) == 1
    assert "<details" in page and "word20 word21" in page.split("<details", 1)[1].split("</summary>", 1)[0]
    member = page.split('class="member"', 1)[1].split("</div>", 1)[0]
    assert "…" in member and 'href="#discord-123456789012345678-case-1"' in member and len(member) < 1_000
    assert len(page) < 60_000 + len(reason)


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_db_option_is_refused_not_replaced_by_the_default(tmp_path, capsys, monkeypatch, value):
    """``--db ""`` (a script's ``--db "$DB"`` with ``DB`` unset) is refused in one line; before, it silently fell
    back to ``MODBOT_DB`` or the default mod log, so ``purge --db "" --days 1`` erased text in another database."""
    other = tmp_path / "other.db"
    monkeypatch.setenv("MODBOT_DB", str(other))
    assert main(["purge", "--db", value, "--days", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--db" in err[0] and "empty" in err[0], err
    assert str(other) not in err[0] and not other.exists()


def test_db_help_names_the_real_default_location(capsys):
    """``--help`` says where the mod log goes without ``--db`` (``$MODBOT_DB``, else the XDG data folder); before,
    a second definition of the help text said ``modbot.db``, a file the bot has not used since the XDG default."""
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "postgresql://" in out and "XDG_DATA_HOME" in out and "or modbot.db" not in out
