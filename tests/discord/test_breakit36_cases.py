"""Break-it: /case list pages turned with the Next / Previous buttons while new cases arrive, through the real
discord.py client against the fake Discord."""

from __future__ import annotations

from typing import Any

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, mod_on, text_opt

pytestmark = pytest.mark.discord


def buttons(msg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{label: button}`` of a message's buttons."""
    return {c["label"]: c for row in msg.get("components") or [] for c in row["components"]}


def numbers(text: str) -> list[int]:
    """The case numbers listed in a page's lines (``#12 2026-...``)."""
    return [int(line.split()[0][1:]) for line in text.splitlines()[1:] if line.startswith("#")]


async def test_next_page_neither_repeats_nor_skips_cases_opened_after_the_list(env):
    """12 notes make two pages: page 1 lists #12..#3. Three new cases are opened while the moderator reads it
    (a busy server). Next then lists #2 and #1, the rest of what the list showed when it was opened; it once
    re-counted from the newest case, so page 2 repeated #5..#3 and said "page 2 of 2" of a list of 15. The
    header says how many newer cases there are, and Previous goes back to the same #12..#3."""
    for i in range(12):
        await mod_on(env, "note", env.alice, text_opt("text", f"watch {i}"))
    first = ephemeral_text(await mod_cmd(env, "list", group="case"))
    assert first.startswith("12 cases, page 1 of 2:") and numbers(first) == list(range(12, 2, -1))
    msg = next(m for m in env.fake.messages.values() if m["flags"] & 64 and m["content"].startswith("12 cases"))
    for i in range(3):
        await mod_on(env, "note", env.bob, text_opt("text", f"rude {i}"))
    turned = await env.fake.click(env.guild, env.mod, msg, buttons(msg)["Next"]["custom_id"])
    page2 = turned.body["data"]["content"]
    assert numbers(page2) == [2, 1], page2
    assert page2.startswith("12 cases, page 2 of 2 (3 newer cases since this list was opened: ask again to see "
                            "them):"), page2
    msg = env.fake.messages[msg["id"]]
    assert buttons(msg)["Next"].get("disabled") is True
    back = await env.fake.click(env.guild, env.mod, msg, buttons(msg)["Previous"]["custom_id"])
    assert numbers(back.body["data"]["content"]) == list(range(12, 2, -1))
    again = ephemeral_text(await mod_cmd(env, "list", group="case"))
    assert again.startswith("15 cases, page 1 of 2:") and numbers(again) == list(range(15, 5, -1))


async def test_page_buttons_shown_before_a_restart_say_they_stopped_and_how_to_go_on(env):
    """The bot restarts while a /case list page with Previous / Next is on the moderator's screen (an ephemeral
    message cannot be taken back). Next then answers that the buttons stopped with the restart and how to reach
    the page (``page:``), and nothing else is sent; it was "This interaction failed" with no answer at all."""
    for i in range(12):
        await mod_on(env, "note", env.alice, text_opt("text", f"watch {i}"))
    ephemeral_text(await mod_cmd(env, "list", group="case"))
    msg = next(m for m in env.fake.messages.values() if m["flags"] & 64 and m["content"].startswith("12 cases"))
    await env.stop()
    await env.start()
    late = await env.fake.click(env.guild, env.mod, msg, buttons(msg)["Next"]["custom_id"])
    assert ephemeral_text(late) == ("These page buttons have expired (the bot restarted, or the list was left 10 "
                                    "minutes): run `/case list` or `/case search` again (`page:` goes straight to a "
                                    "page).")
    assert env.fake.messages[msg["id"]]["content"].startswith("12 cases, page 1 of 2:")
