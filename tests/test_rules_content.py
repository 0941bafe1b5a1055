"""Tests of the per-message content rules: blocklist / allowlist, regex, links and invites, mentions, zalgo."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.models import ChannelRef, MemberRef, Mention, Message, RuleHit, ServerRef
from bot.core.normalize import normalize
from bot.core.rules import ContentRules, RuleConfigError, RulesSettings, compile_pattern, find_links

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def msg(
    text: str = "",
    *,
    author: str = "u1",
    mentions: tuple[Mention, ...] = (),
    everyone: bool = False,
    roles: tuple[str, ...] = (),
) -> Message:
    return Message(
        server=ServerRef("discord", "s1"),
        channel=ChannelRef("c1", "general"),
        author=MemberRef(author, roles=roles),
        id="m1",
        text=text,
        created_at=T0,
        mentions=mentions,
        mentions_everyone=everyone,
    )


def run(settings: dict, text: str, **kw) -> list[RuleHit]:
    rules = ContentRules(RulesSettings.model_validate(settings))
    return rules.evaluate(msg(text), normalize(text), **kw)


def rules_of(hits: list[RuleHit]) -> list[str]:
    return [h.rule for h in hits]


PROFANITY = {"blocklist": {"terms": ["cunt", "ass", "cock", "shit", "kys", "wibble"]}}


@pytest.mark.parametrize(
    "text",
    [
        "Scunthorpe United won again",
        "thanks for the assistance",
        "a cocktail party on friday",
        "the assassin's creed games",
        "say hi to Shital for me",
        "Sky sources say it will rain",
        "we rented kayaks at the lake",
        "I passed the class",
        "Dickens wrote about shitake? no, shiitake mushrooms",
    ],
)
def test_blocklist_no_scunthorpe_hits(text: str) -> None:
    """Blocked terms never hit inside longer words or across word joins."""
    assert run(PROFANITY, text) == []


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("this is wibble", "wibble"),
        ("WIBBLE!!", "wibble"),
        ("w1bbl3 again", "wibble"),
        ("w i b b l e", "wibble"),
        ("w\u0456bble", "wibble"),  # Cyrillic i
        ("wib\u200bble", "wibble"),  # zero-width space
        ("you piece of shit", "shit"),
        ("sh1t happens", "shit"),
        ("$hit", "shit"),
        ("kys", "kys"),
        ("kiss my ass", "ass"),
    ],
)
def test_blocklist_hits_obfuscated_terms(text: str, term: str) -> None:
    """Blocked terms hit in leet, homoglyph, spaced and invisible-character forms."""
    hits = run(PROFANITY, text)
    assert [(h.rule, h.detail) for h in hits] == [("blocklist", term)]


def test_blocklist_group_label_and_action() -> None:
    """A named list's hit carries the list's label, action and name."""
    settings = {
        "blocklist": {"lists": [{"name": "slurs", "terms": ["wibble"], "label": "identity_attack", "action": "delete"}]}
    }
    assert run(settings, "total wibble") == [
        RuleHit(rule="blocklist", detail="slurs: wibble", label="identity_attack", action="delete")
    ]


@pytest.mark.parametrize(
    ("settings", "kw", "expected"),
    [
        ({"blocklist": {"terms": ["wibble", "frob"], "allow": ["Wibble"]}}, {}, ["frob"]),
        ({"blocklist": {"terms": ["wibble", "frob"]}}, {"allow_terms": ["frob"]}, ["wibble"]),
        (
            {"blocklist": {"terms": ["wibble"], "lists": [{"name": "x", "terms": ["frob"]}], "allow": ["frob"]}},
            {},
            ["wibble"],
        ),
        ({"blocklist": {"terms": []}}, {"extra_terms": ["frob"]}, ["channel: frob"]),
        ({"blocklist": {"terms": []}}, {"extra_terms": ["frob"], "allow_terms": ["frob"]}, []),
        ({"blocklist": {"terms": ["wibble"], "enabled": False}}, {}, []),
    ],
)
def test_allowlist_and_channel_terms(settings: dict, kw: dict, expected: list[str]) -> None:
    """Allowed terms win over every list; channel extra terms add to the server's."""
    hits = run(settings, "wibble and frob", **kw)
    assert [h.detail for h in hits] == expected


def test_same_term_in_two_lists_hits_once() -> None:
    """A term listed twice yields one hit, from the first list."""
    settings = {"blocklist": {"terms": ["wibble"], "lists": [{"name": "x", "terms": ["wibble"]}]}}
    assert [h.detail for h in run(settings, "wibble")] == ["wibble"]


@pytest.mark.parametrize(
    ("pattern", "text", "hit"),
    [
        ("(a+)+$", "a" * 50000 + "!", False),  # catastrophic for backtracking engines; linear in RE2
        ("(a+)+$", "xaaa", True),
        ("(x+x+)+y", "x" * 30000, False),
        (r"free\s+nitro", "FREE   Nitro here", True),
        (r"free\s+nitro", "freedom", False),
    ],
)
def test_regex_rules_are_linear_time(pattern: str, text: str, hit: bool) -> None:
    """Regex rules run on RE2: pathological patterns complete and match correctly."""
    hits = run({"regex": [{"name": "r", "pattern": pattern, "action": "delete", "target": "original"}]}, text)
    assert rules_of(hits) == (["regex"] if hit else [])
    assert all(h.action == "delete" and h.detail.startswith("r: ") for h in hits)


@pytest.mark.parametrize("pattern", ["(abc", "(a)\\1", "(?=look)ahead", "[z-a]"])
def test_invalid_regex_error_names_pattern(pattern: str) -> None:
    """An invalid or non-RE2 pattern fails at compile time with the rule name and pattern in the message."""
    with pytest.raises(RuleConfigError) as err:
        compile_pattern(pattern, name="bad_rule")
    assert "bad_rule" in str(err.value) and repr(pattern) in str(err.value)


@pytest.mark.parametrize(
    ("target", "case_sensitive", "text", "hit"),
    [
        ("original", True, "FOO bar", False),
        ("original", False, "FOO bar", True),
        ("original", True, "foo bar", True),
        ("normalized", False, "f0o bar", True),
        ("original", False, "f0o bar", False),
    ],
)
def test_regex_target_and_case(target: str, case_sensitive: bool, text: str, hit: bool) -> None:
    """Regex rules match the original or the normalised text, case-insensitively unless asked."""
    rule = {"name": "r", "pattern": "foo", "target": target, "case_sensitive": case_sensitive}
    assert rules_of(run({"regex": [rule]}, text)) == (["regex"] if hit else [])


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("join discord.gg/abc123", "abc123"),
        ("https://discord.gg/abc123", "abc123"),
        ("discord . gg / abc", "abc"),
        ("discord%2Egg%2Fabc", "abc"),
        ("discord%252Egg%252Fabc", "abc"),
        ("discord dot gg slash abc", "abc"),
        ("discord[.]gg/abc", "abc"),
        ("d i s c o r d . g g / abc", "abc"),
        ("ｄｉｓｃｏｒｄ．ｇｇ／ａｂｃ", "abc"),
        ("disc\u200bord.gg/abc", "abc"),
        ("discord&#46;gg/abc", "abc"),
        ("discord.gg\\abc", "abc"),
        ("dsc.gg/coolserver", "coolserver"),
        ("discord.com/invite/x", "x"),
        ("https://ptb.discord.com/invite/xyz", "xyz"),
        ("discordapp.com/invite/qwe", "qwe"),
        ("[click](<https://discordapp.com/invite/qwe>)", "qwe"),
        ("discord.io/server", "server"),
    ],
)
def test_invites_in_evasion_forms(text: str, code: str) -> None:
    """Invites are caught through spacing, encoding, homoglyphs and every invite host."""
    hits = run({}, text)
    assert [(h.rule, h.detail, h.action) for h in hits] == [("invite", code, "delete")]


@pytest.mark.parametrize(
    ("settings", "text"),
    [
        ({}, "I love discord, gg everyone"),
        ({}, "see you on discord.gg"),
        ({}, "notdiscord.gg/abc"),
        ({"links": {"allowed_invites": ["OurServer"]}}, "discord.gg/ourserver"),
        ({"links": {"block_invites": False}}, "discord.gg/abc"),
        ({"links": {"enabled": False}}, "discord.gg/abc"),
    ],
)
def test_non_invites_and_allowed_invites_pass(settings: dict, text: str) -> None:
    """Prose mentioning discord, allowed invite codes and switched-off rules give no hit."""
    assert run(settings, text) == []


ALLOWED = {"links": {"allowed_domains": ["example.com", "https://www.youtube.com/"]}}


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("docs at https://docs.example.com/x", []),
        ("watch www.youtube.com/watch?v=1", []),
        ("https://youtube.com", []),
        ("go to https://evil.test/x", ["evil.test"]),
        ("grab it at freestuff.ru now", ["freestuff.ru"]),
        ("http://user@phish.xyz:8080/login", ["phish.xyz"]),
        ("https://example.com.evil.io/x", ["example.com.evil.io"]),
        ("see file.txt and node.js, e.g. this", []),
        ("mail me at someone@gmail.com", []),
        ("the end. Com on", []),
    ],
)
def test_allowed_domains(text: str, hosts: list[str]) -> None:
    """With allowed domains, links elsewhere hit; subdomains of allowed ones and non-links pass."""
    hits = run(ALLOWED, text)
    assert [(h.rule, h.detail) for h in hits] == [("link", h) for h in hosts]


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("https://evil.com/x", True),
        ("cdn.evil.com/payload", True),
        ("evil . com", True),
        ("evil%2Ecom", True),
        ("e v i l . c o m", True),
        ("notevil.com is fine", False),
        ("evil.community is a word", False),
        ("https://good.org", False),
    ],
)
def test_blocked_domains(text: str, hit: bool) -> None:
    """Blocked domains hit with subdomains and spaced / encoded forms, never inside longer names."""
    hits = run({"links": {"blocked_domains": ["evil.com"]}}, text)
    assert [(h.rule, h.detail) for h in hits] == ([("link", "evil.com")] if hit else [])


def test_find_links_reports_invites_and_hosts() -> None:
    """find_links returns invite codes and link hosts, de-duplicated, in order."""
    found = find_links("https://WWW.Example.com/a discord.gg/abc example.com discord.gg/abc")
    assert (found.invites, found.hosts) == (("abc",), ("example.com", "discord.gg"))


def users(*ids: str, bot: bool = False, reply: bool = False) -> tuple[Mention, ...]:
    return tuple(Mention(i, is_bot=bot, is_reply_ping=reply) for i in ids)


@pytest.mark.parametrize(
    ("mentions", "everyone", "kw", "roles", "expected"),
    [
        (users("a", "b", "c", "d", "e"), False, {}, (), None),
        (users("a", "b", "c", "d", "e", "f"), False, {}, (), "6 mentions (limit 5)"),
        (users("a", "b", "c", "d") + users("x", "y", bot=True), False, {}, (), None),
        (users("a", "b", "c", "d", "e") + users("r", reply=True), False, {}, (), None),
        (users("a") * 20, False, {}, (), None),
        (users("a", "b", "c", "d", "e", "u1"), False, {}, (), None),  # self-mention does not count
        (users("a", "b", "c", "d", "e"), True, {}, (), "6 mentions (limit 5)"),
        (users("a", "b", "c", "d", "e"), True, {"may_mention_everyone": True}, (), None),
        (users("a", "b", "c", "d", "e"), True, {}, ("announcer",), None),
        (users("a", "b", "c", "d", "e"), False, {"raid_mode": True}, (), "5 mentions (limit 4)"),
    ],
)
def test_mention_spam_counting(mentions, everyone, kw, roles, expected) -> None:
    """Distinct non-bot, non-reply users count; an unallowed @everyone adds one; raid mode lowers the limit."""
    rules = ContentRules(RulesSettings.model_validate({"mention_spam": {"everyone_roles": ["announcer"]}}))
    m = msg("hey", mentions=mentions, everyone=everyone, roles=roles)
    hits = rules.evaluate(m, normalize(m.text), **kw)
    assert [h.detail for h in hits] == ([expected] if expected else [])
    assert all(h.rule == "mention_spam" and h.action == "delete" for h in hits)


@pytest.mark.parametrize(
    ("text", "settings", "expected"),
    [
        (
            "z\u0336\u0321\u031b\u0316\u0317a\u0338\u0322\u0327\u0330l\u0334\u0339\u033a\u033bg\u0335\u0324o\u0336\u0325",
            {},
            [RuleHit(rule="zalgo", detail="stacked combining marks")],
        ),
        (
            "z\u0336\u0321\u031b\u0316\u0317a\u0338\u0322\u0327\u0330l\u0334\u0339\u033a\u033bg\u0335\u0324o\u0336\u0325",
            {"zalgo": {"action": "delete"}},
            [RuleHit(rule="zalgo", detail="stacked combining marks", action="delete")],
        ),
        ("café déjà vu", {}, []),
    ],
)
def test_zalgo_signal(text: str, settings: dict, expected: list[RuleHit]) -> None:
    """Zalgo text gives a zalgo hit (a signal unless an action is set); accents alone do not."""
    assert run(settings, text) == expected


def test_evaluate_orders_hits_by_rule() -> None:
    """Several rules on one message report in rule order: blocklist, regex, invite, link."""
    settings = {
        "blocklist": {"terms": ["wibble"]},
        "regex": [{"name": "r", "pattern": "nitro"}],
        "links": {"blocked_domains": ["evil.com"]},
    }
    assert rules_of(run(settings, "wibble free nitro discord.gg/abc evil.com")) == [
        "blocklist",
        "regex",
        "invite",
        "link",
    ]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("discord.gg/ abc%2E\u200b．()[]dotslash\\&#46;@:x1")), max_size=80))
def test_content_rules_never_raise_and_codes_are_clean(text: str) -> None:
    """Any text evaluates without error; invite codes are lower-case alphanumerics and dashes."""
    rules = ContentRules(RulesSettings.model_validate({"links": {"allowed_domains": ["example.com"]}}))
    hits = rules.evaluate(msg(text), normalize(text))
    codes = [h.detail for h in hits if h.rule == "invite"]
    assert all(c and all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in c) and c == c.lower() for c in codes)
