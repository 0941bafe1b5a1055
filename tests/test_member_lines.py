"""A member's strike lines (``/mystatus``, Slack's Home tab): every strike keeps its line inside the platform's
room, reasons share what is left, and an escaped reason is never cut inside an entity."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.adapters.slack.blocks import escape
from bot.core.models import Strike
from bot.workflow.cases import strike_lines
from bot.workflow.fit import fit_escaped

AT = datetime(2027, 1, 1, tzinfo=UTC)


def strike(reason: str, case: int | None = None, points: int = 1) -> Strike:
    return Strike("s1", "m1", points, AT, AT, reason, None, case)


def day(at: datetime) -> str:
    return f"{at:%Y-%m-%d}"


def test_short_reasons_are_kept_whole():
    lines = strike_lines([strike("spam", 1), strike("", None, 2)], room=1024, when=day)
    assert lines == ["1 point: spam (case #1), expires 2027-01-01", "2 points: no reason, expires 2027-01-01"]


def test_a_long_reason_gives_way_and_a_short_one_keeps_its_words():
    lines = strike_lines([strike("y" * 990, 1), strike("second warning", 2)], room=200, when=day)
    assert len("\n".join(lines)) <= 200 and len(lines) == 2
    assert lines[0].endswith("y… (case #1), expires 2027-01-01")
    assert lines[1] == "1 point: second warning (case #2), expires 2027-01-01"


def test_when_even_bare_lines_do_not_fit_the_rest_are_counted():
    lines = strike_lines([strike("r", n) for n in range(1, 11)], room=150, when=day)
    assert len("\n".join(lines)) <= 150 and lines[-1].startswith("…and ")
    shown = len(lines) - 1
    assert lines[-1] == f"…and {10 - shown} more" and shown >= 1


def test_an_escaped_reason_is_cut_between_entities():
    assert fit_escaped("a&b&c", 9, escape) == "a&amp;b…"
    assert fit_escaped("<<<<", 8, escape) == "&lt;…"
    assert fit_escaped("fine", 10, escape) == "fine"
    assert fit_escaped("", 3, escape) == "no…"


async def test_case_lists_shorten_reasons_until_every_line_fits_the_room(tmp_path):
    """/case list and /member info on a real SQLite mod log: ten cases with 300-character reasons. Without a room
    each line shows 80 characters of its reason; with a platform's room too small for that, the reasons are
    shortened further, and every one of the ten lines is still there, within the room."""
    from bot.core.models import ActionKind, CaseStatus
    from bot.store.sqlite import SqliteStore
    from bot.workflow.authz import Actor, Permission
    from bot.workflow.cases import member_info, search_cases

    mod = Actor("111111111111111111", permissions=frozenset({Permission.MANAGE_MESSAGES}))
    member = "222222222222222222"
    async with await SqliteStore.open(tmp_path / "mod.db") as store:
        for n in range(12):
            await store.open_case("discord", "1", member, ActionKind.WARN, f"case {n} " + "r" * 300,
                                  moderator_id=mod.id, status=CaseStatus.APPLIED)
        wide = await search_cases(store, "discord", mod, "1")
        assert len(wide.lines) == 10 and all(line.endswith("r\u2026") and len(line.split(": ", 1)[1]) == 80
                                             for line in wide.lines)
        narrow = await search_cases(store, "discord", mod, "1", room=1000)
        assert len(narrow.lines) == 10 and len(narrow.text()) <= 1000 < len(wide.text())
        assert [line.split()[0] for line in narrow.lines] == [line.split()[0] for line in wide.lines]
        info = await member_info(store, "discord", mod, "1", member, room=1200)
        assert len("\n".join(info)) <= 1200 and info[3] == "Newest cases:" and len(info[4:]) == 10
        assert info[4].startswith("#12 ") and info[-1].startswith("#3 ")
