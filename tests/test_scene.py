"""Judging that matches the founding scene (issue 19): raid tiers and established members, agreeing signals,
short repeated replies, repeated pings, languages the model cannot read and long messages.

Fake scorer (tests/fakes.py), real policy files and a real SQLite mod log; the language detector is the real one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.judge import decide
from bot.core.language import detect, message_parts, unsupported
from bot.core.models import ActionKind, ChannelRef, MemberRef, Mention, Message, RuleHit, Scores, ServerRef
from bot.core.normalize import normalize
from bot.core.pieces import chunks, scoring_pieces
from bot.core.policy import DEFAULT_POLICY_PATH, load_policy
from bot.core.policy_registry import PolicyRegistry
from bot.core.rules import ContentRules, SpamTracker
from bot.core.rules.settings import SpamSettings
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer
from tests.policy_defaults import IA_ACT, IA_REVIEW, raid

T0 = datetime(2026, 6, 1, 18, 0, tzinfo=UTC)
SERVER = ServerRef("discord", "g1", "guild")
GENERAL = ChannelRef(id="c1", name="general")
OLD = T0 - timedelta(days=400)
#: identity_attack between raid mode's stricter review tier and the default's normal one, under raid mode's act
#: tier (0.675 between 0.60 and 0.75 for the shipped model's tiers): sent to review for a member held to raid
#: mode's tiers only.
BETWEEN_TIERS = round((raid(IA_REVIEW) + min(IA_REVIEW, raid(IA_ACT))) / 2, 4)
#: identity_attack past the default's review tier but under its act tier (0.85 between 0.75 and 0.95): the model
#: alone only reviews; with a slur-list hit the two agree.
PAST_REVIEW = round((IA_REVIEW + IA_ACT) / 2, 2)
SCENE = {**ABUSE, "full stop": {"identity_attack": BETWEEN_TIERS}, "slurword": {"identity_attack": PAST_REVIEW},
         "quoted": {"identity_attack": 0.1}, "con": {"insult": 0.6}}
FRENCH_MILD = "Je pense que le match de ce soir sera vraiment serré, on verra bien."
FRENCH_ABUSE = "T'es vraiment un pauvre con, ferme ta gueule."


def member(mid: str, *, joined: datetime | None = OLD) -> MemberRef:
    return MemberRef(id=mid, name=mid, joined_at=joined, created_at=joined)


def msg(mid: str, text: str, author: MemberRef, at: datetime = T0, **kw) -> Message:
    return Message(server=SERVER, channel=GENERAL, author=author, id=mid, text=text, created_at=at, **kw)


async def _service(tmp_path: Path, policy: str = "", languages: tuple[str, ...] | None = ("en",)):
    pf = tmp_path / "p.toml"
    pf.write_text(policy, encoding="utf-8")
    store = await SqliteStore.open(tmp_path / "mod.db")
    service = ModerationService(scorer=FakeScorer(SCENE, languages=languages), store=store,
                                policies=PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(pf,)), max_delay_s=0.001)
    await service.start()
    return service, store


@pytest.fixture
async def env(tmp_path: Path):
    service, store = await _service(tmp_path)
    yield service, store
    await service.close()
    await store.close()


# ---------------------------------------------------------------- raid mode and established members


async def test_raid_tiers_skip_an_established_member(env):
    """In raid mode a regular with history answering the raid is judged on the normal tiers and passes."""
    service, _ = env
    service.set_raid_mode("discord", "g1", None, True, T0)
    priya = member("priya")
    for i in range(2):
        await service.handle(msg(f"h{i}", "anyone watching the match tonight?", priya, T0 + timedelta(seconds=i)))
    out = await service.handle(msg("m1", "trans women are women. full stop.", priya, T0 + timedelta(seconds=5)))
    assert not out.verdict.flagged and not out.verdict.raid_mode
    assert out.verdict.tiers["identity_attack"] == (IA_REVIEW, IA_ACT)


async def test_raid_tiers_apply_to_a_member_without_history(env):
    """A long-standing member with no earlier message seen gets raid mode's stricter tiers (BETWEEN_TIERS passes
    raid mode's review tier)."""
    service, _ = env
    service.set_raid_mode("discord", "g1", None, True, T0)
    out = await service.handle(msg("m1", "trans women are women. full stop.", member("sleeper")))
    assert out.verdict.flagged and out.verdict.raid_mode and out.verdict.action == ActionKind.REVIEW
    assert out.verdict.tiers["identity_attack"] == (raid(IA_REVIEW), raid(IA_ACT))


async def test_raid_tiers_apply_to_a_new_member_with_history(env):
    """A member who joined within new_member_age_s is never established, however many messages they posted."""
    service, _ = env
    service.set_raid_mode("discord", "g1", None, True, T0)
    raider = member("raider", joined=T0 - timedelta(minutes=5))
    for i in range(3):
        await service.handle(msg(f"h{i}", "hello there everyone", raider, T0 + timedelta(seconds=i)))
    out = await service.handle(msg("m1", "trans women are women. full stop.", raider, T0 + timedelta(seconds=5)))
    assert out.verdict.flagged and out.verdict.raid_mode


async def test_strict_for_established_restores_raid_tiers_for_everyone(tmp_path: Path):
    """With rules.raid.strict_for_established = true an established member is held to the raid tiers too."""
    service, store = await _service(tmp_path, "[rules.raid]\nstrict_for_established = true\n")
    try:
        service.set_raid_mode("discord", "g1", None, True, T0)
        priya = member("priya")
        for i in range(2):
            await service.handle(msg(f"h{i}", "anyone watching the match?", priya, T0 + timedelta(seconds=i)))
        out = await service.handle(msg("m1", "trans women are women. full stop.", priya, T0 + timedelta(seconds=5)))
        assert out.verdict.flagged and out.verdict.raid_mode
    finally:
        await service.close()
        await store.close()


# ---------------------------------------------------------------- agreeing signals

SLUR_HIT = RuleHit(rule="blocklist", detail="slurs: slurword", label="identity_attack", action="review")


def _scores(ia: float) -> Scores:
    return Scores(values={"identity_attack": ia, "toxicity": 0.2})


def test_slur_hit_and_model_review_tier_agree_to_act():
    """A slur-list hit plus identity_attack at its review tier asks for identity_attack's action (delete)."""
    policy = load_policy()
    d = decide(policy, policy.thresholds, _scores(PAST_REVIEW), [SLUR_HIT])
    assert d.strongest == ActionKind.DELETE
    act = next(a for a in d.actions if a.kind == ActionKind.DELETE)
    assert act.source == "identity_attack" and "blocklist" in act.reason
    assert f"{PAST_REVIEW:.2f} >= {IA_REVIEW:.2f} agree" in act.reason


@pytest.mark.parametrize(("ia", "hits"), [(PAST_REVIEW, []), (0.1, [SLUR_HIT])])
def test_one_signal_alone_only_reviews(ia, hits):
    """The model's review tier alone, or the slur list alone with a low score, only sends the message to review."""
    policy = load_policy()
    assert decide(policy, policy.thresholds, _scores(ia), hits).strongest == ActionKind.REVIEW


def test_agreement_can_be_switched_off():
    """With agreement.act = false the two signals together still only review."""
    policy = load_policy(overrides={"agreement.act": False})
    assert decide(policy, policy.thresholds, _scores(PAST_REVIEW), [SLUR_HIT]).strongest == ActionKind.REVIEW


async def test_slur_and_model_agree_end_to_end(env):
    """Through the service, a slur from the default list plus the model's identity_attack deletes with a strike."""
    service, _ = env
    out = await service.handle(msg("m1", "go back in the closet, tranny slurword", member("u1")))
    assert out.verdict.action == ActionKind.DELETE and out.strike_added


async def test_a_veiled_doxxing_threat_goes_to_review_as_a_threat(env):
    """'It would be a real shame if someone found out where she lives' has no violent word (the model scores it
    low): the default veiled_threats list sends it to review labelled threat; the same words between friends
    ('I know where you live lol, see you at the party') are also only reviewed, never acted on."""
    service, _ = env
    out = await service.handle(msg("m1", "It would be a real shame if someone found out where she lives.", member("u1")))
    v = out.verdict
    assert v.action == ActionKind.REVIEW and not out.strike_added
    hit = next(h for h in v.rule_hits if h.rule == "blocklist")
    assert "veiled_threats" in hit.detail and hit.label == "threat"
    friendly = await service.handle(msg("m2", "I know where you live lol, see you at the party", member("u2")))
    assert friendly.verdict.action == ActionKind.REVIEW and not friendly.strike_added


@pytest.mark.parametrize("text", ["people like you should be put down", "Trans freaks need to be put down."])
async def test_put_down_like_an_animal_goes_to_review_as_a_threat(env, text):
    """'people like you should be put down' scored threat 0.06 on the shipped model (flagged, if at all, only as
    toxicity or identity_attack): the veiled_threats list names it a threat and sends it to review."""
    service, _ = env
    out = await service.handle(msg("m1", text, member("u1")))
    v = out.verdict
    assert v.action >= ActionKind.REVIEW
    hit = next(h for h in v.rule_hits if h.rule == "blocklist")
    assert "veiled_threats" in hit.detail and hit.label == "threat"


@pytest.mark.parametrize("text", ["Here come the troon defenders lol", "another tr00n in the comments",
                                  "TROONS out of our sports"])
async def test_the_trans_slur_troon_goes_to_review_as_an_identity_attack(env, text):
    """'troon' (a slur for trans women) scored identity_attack under the review tier in "Here come the troon
    defenders lol" (the founding scene's compound nickname, s12), so it passed: the default slurs list sends it, in
    its leetspeak and capitalised spellings too, to review labelled identity_attack; the town of Troon is the
    documented exception a server allows."""
    service, _ = env
    out = await service.handle(msg("m1", text, member("u1")))
    v = out.verdict
    assert v.action >= ActionKind.REVIEW
    hit = next(h for h in v.rule_hits if h.rule == "blocklist")
    assert "slurs" in hit.detail and hit.label == "identity_attack"
    fine = await service.handle(msg("m2", "the trooper waved at the baboon", member("u2")))
    assert not [h for h in fine.verdict.rule_hits if h.rule == "blocklist"]


@pytest.mark.parametrize("text", ["kys", "go kys", "k y s", "\U0001f1f0\U0001f1fe\U0001f1f8", "just k.y.s already"])
async def test_telling_someone_to_kill_themselves_goes_to_review_as_a_threat(env, text):
    """'kys' (kill yourself) scored threat 0.01 and toxicity 0.68-0.77 on the shipped model, under every tier, so the
    default policy let it and its spaced and emoji-letter spellings (🇰🇾🇸) pass (a newcomer's finding): the default
    self_harm list sends each to review labelled threat, without a strike."""
    service, _ = env
    out = await service.handle(msg("m1", text, member("u1")))
    v = out.verdict
    assert v.action == ActionKind.REVIEW and not out.strike_added
    hit = next(h for h in v.rule_hits if h.rule == "blocklist")
    assert "self_harm" in hit.detail and hit.label == "threat"
    fine = await service.handle(msg("m2", "the keys are on the table, sky is clear", member("u2")))
    assert not [h for h in fine.verdict.rule_hits if h.rule == "blocklist"]


# ---------------------------------------------------------------- short repeated replies and repeated pings


def _agreed(n: int, tracker: SpamTracker, *, established: bool) -> list[list[RuleHit]]:
    a = member("sam")
    return [tracker.observe(msg(f"a{i}", "agreed", a, T0 + timedelta(seconds=1.5 * i)), normalize("agreed"),
                            established=established) for i in range(n)]


def test_short_repeats_of_an_established_member_are_a_signal_only():
    """'agreed' six times in nine seconds from an established member: duplicate_spam hits carry no action."""
    hits = [h for hs in _agreed(6, SpamTracker(SpamSettings()), established=True) for h in hs]
    dups = [h for h in hits if h.rule == "duplicate_spam"]
    assert len(dups) == 4 and all(h.action is None for h in dups) and "signal only" in dups[0].detail


def test_short_repeats_of_a_member_without_history_still_act():
    """The same repeats from a member who is not established still ask for the spam action (delete)."""
    hits = [h for hs in _agreed(6, SpamTracker(SpamSettings()), established=False) for h in hs]
    assert {h.action for h in hits if h.rule == "duplicate_spam"} == {"delete"}


def test_long_repeats_of_an_established_member_still_act():
    """A repeated long text is spam whoever posts it."""
    t = SpamTracker(SpamSettings())
    text = "buy cheap followers now at my shop"
    hits = [t.observe(msg(f"a{i}", text, member("sam"), T0 + timedelta(seconds=i)), normalize(text),
                      established=True) for i in range(3)]
    assert hits[2][0].rule == "duplicate_spam" and hits[2][0].action == "delete"


def test_extreme_flood_of_an_established_member_acts():
    """An established member's flood is a signal from flood_count and acts from established_flood_count."""
    t = SpamTracker(SpamSettings())
    out = [t.observe(msg(f"f{i}", f"line {i} of my paste", member("sam"), T0 + timedelta(seconds=0.5 * i)),
                     normalize(f"line {i}"), established=True) for i in range(14)]
    floods = [next(h for h in hs if h.rule == "flood") for hs in out[6:]]
    assert [h.action for h in floods] == [None] * 7 + ["delete"]


async def test_agreed_six_times_earns_no_strike_end_to_end(env):
    """The issue's case through the service: six 'agreed' in nine seconds by a regular: no delete, no strike."""
    service, store = env
    sam = member("sam")
    for i in range(3):
        await service.handle(msg(f"h{i}", "what a match this is tonight", sam, T0 - timedelta(minutes=5 - i)))
    outs = [await service.handle(msg(f"a{i}", "agreed", sam, T0 + timedelta(seconds=1.5 * i))) for i in range(6)]
    assert all(o.verdict.action == ActionKind.NONE and not o.strike_added for o in outs)
    assert any(h.rule == "duplicate_spam" for h in outs[-1].verdict.rule_hits)
    assert await store.active_strikes("discord", "g1", "sam", T0 + timedelta(minutes=1)) == []


def test_six_pings_of_one_member_count_six():
    """Six pings of the same member in one message count as six mentions, over the limit of five."""
    rules = ContentRules(load_policy().rules)
    text = " ".join(["<@42>"] * 6) + " look at this"
    m = msg("p1", text, member("u1"), mentions=(Mention("42"),))
    assert rules.mention_count(m) == 6
    hits = rules.evaluate(m, normalize(text))
    assert [(h.rule, h.detail) for h in hits] == [("mention_spam", "6 mentions (limit 5)")]


def test_slack_and_nickname_pings_are_counted_each_time():
    """Slack's <@U1|name> and Discord's <@!id> forms count; a mentioned user with no token in the text counts once."""
    rules = ContentRules(load_policy().rules)
    m = msg("p1", "<@U1|maya> <@U1> <@!7> hi", member("u1"), mentions=(Mention("U1"), Mention("7"), Mention("9")))
    assert rules.mention_count(m) == 4


# ---------------------------------------------------------------- languages


@pytest.mark.parametrize("text", ["🏳️‍⚧️💖🏳️‍⚧️💖", "agreed", "lol ok", "```py\nimport os\nprint(os.getcwd())\n```",
                                  "https://example.com/some/long/path?with=query", "<@123> <@456> :wave:", "",
                                  "a" * 99 + " " + "a" * 99, "hahahahahahahahahahahaha hahahahahahaha"])
def test_short_or_ambiguous_text_is_never_called_foreign(text):
    """Emoji, code, links, mentions and a few words get no language and are not reported as unsupported."""
    assert detect(text).language is None
    assert unsupported(message_parts(text), ("en",)) is None


@pytest.mark.parametrize(("text", "lang"), [(FRENCH_ABUSE, "fr"), ("las personas trans son enfermos mentales", "es"),
                                            ("Ich hasse alle Trans-Menschen, sie sind krank.", "de"),
                                            ("我恨跨性别者。", "zh")])
def test_other_languages_are_reported(text, lang):
    """Abuse in French, Spanish, German and Mandarin is confidently outside the embedded model's English."""
    found = unsupported(message_parts(text), ("en",))
    assert found is not None and found.language == lang and found.confidence >= 0.9


def test_english_is_supported_and_multilingual_languages_are_too():
    """English chat is readable by an English model; French is readable by a model that declares it."""
    assert unsupported(message_parts("I know where you live and I am going to hurt you"), ("en",)) is None
    assert unsupported(message_parts(FRENCH_ABUSE), ("en", "fr", "es")) is None


def test_a_foreign_sentence_inside_an_english_message_is_found():
    """Mixed-language message: the whole reads as English, but its French sentence is reported."""
    text = f"ok so here is the thing about the build. {FRENCH_ABUSE} anyway see you tomorrow at the meeting"
    assert unsupported([text], ("en",)) is None
    found = unsupported(message_parts(text), ("en",))
    assert found is not None and found.language == "fr"


async def test_unsupported_language_is_recorded_and_low_scores_pass(env):
    """French small talk scoring low: status unsupported_language, language fr, a signal hit, no review."""
    service, store = env
    out = await service.handle(msg("m1", FRENCH_MILD, member("u1")))
    v = out.verdict
    assert (v.score_status, v.language, v.flagged) == ("unsupported_language", "fr", False)
    assert [h.rule for h in v.rule_hits] == ["language"] and v.rule_hits[0].action is None
    stored = await store.get_verdict("discord", "g1", "m1")
    assert stored is not None and (stored.score_status, stored.language) == ("unsupported_language", "fr")
    assert [h["rule"] for h in stored.rule_hits] == ["language"]


async def test_unsupported_language_with_a_suspect_score_goes_to_review(env):
    """French abuse the English model scores only 0.6 on insult (under its 0.85 tier) goes to review."""
    service, _ = env
    out = await service.handle(msg("m1", FRENCH_ABUSE, member("u1")))
    v = out.verdict
    assert v.score_status == "unsupported_language" and v.action == ActionKind.REVIEW and out.review_id is not None
    assert "does not read" in v.actions[0].reason


async def test_unsupported_review_sends_every_foreign_message_to_review(tmp_path: Path):
    """languages.unsupported = "review": even low-scoring French goes to review."""
    service, store = await _service(tmp_path, '[languages]\nunsupported = "review"\n')
    try:
        out = await service.handle(msg("m1", FRENCH_MILD, member("u1")))
        assert out.verdict.action == ActionKind.REVIEW
    finally:
        await service.close()
        await store.close()


async def test_a_scorer_that_reads_the_language_gives_status_ok(tmp_path: Path):
    """A scorer declaring French (like detoxify's multilingual model) reads French: status ok, no language hit."""
    service, store = await _service(tmp_path, languages=("en", "fr"))
    try:
        out = await service.handle(msg("m1", FRENCH_MILD, member("u1")))
        assert (out.verdict.score_status, out.verdict.language, out.verdict.rule_hits) == ("ok", None, ())
    finally:
        await service.close()
        await store.close()


# ---------------------------------------------------------------- long and odd messages


def test_long_text_is_read_in_chunks_up_to_max_chars():
    """Text past 4,000 characters is scored in overlapping chunks up to max_chars; nothing past it."""
    text = "x " * 2000 + "you are vermin " + "y " * 20000
    plan = scoring_pieces(text, max_chars=40_000)
    assert any("vermin" in p for p in plan[1:]) and "vermin" not in plan[0]
    assert len(chunks("a" * 100_000, 40_000)) == 10 and chunks("a" * 4000) == []
    far = "z " * 30_000 + "you are vermin"
    assert not any("vermin" in p for p in scoring_pieces(far, max_chars=40_000))


async def test_an_attack_deep_in_a_long_message_is_caught(env):
    """A 35,000-character message with an attack after 30,000 characters is flagged, status ok (read whole)."""
    service, _ = env
    text = "the build log says nothing new. " * 940 + "you people are freaks"
    out = await service.handle(msg("m1", text, member("u1")))
    assert out.verdict.score_status == "ok" and out.verdict.flagged and "identity_attack" in out.verdict.labels


async def test_a_slur_deep_in_a_long_message_hits_the_blocklist(env):
    """The blocklist reads a long message whole too: a slur after 10,000 characters hits the slur list."""
    service, _ = env
    text = "the build log says nothing new. " * 320 + "go back in the closet, tranny"
    out = await service.handle(msg("m1", text, member("u1")))
    assert [h.detail for h in out.verdict.rule_hits if h.rule == "blocklist"] == ["slurs: tranny"]
    assert out.verdict.flagged


async def test_a_100000_character_message_says_how_much_was_read(env):
    """A 100,000-character message: status truncated, a long_text hit saying 40,000 of 100,000, sent to review."""
    service, store = env
    text = ("the build log says nothing new today. " * 2 + "nothing to report here.\n") * 1000
    assert len(text) == 100_000
    out = await service.handle(msg("m1", text, member("u1")))
    v = out.verdict
    assert v.score_status == "truncated" and v.action == ActionKind.REVIEW
    assert ("long_text", "read 40,000 of 100,000 characters") in [(h.rule, h.detail) for h in v.rule_hits]
    stored = await store.get_verdict("discord", "g1", "m1")
    assert stored is not None and (stored.score_status, stored.language) == ("truncated", None)


async def test_truncated_can_be_allowed(tmp_path: Path):
    """scoring.on_truncated = "allow": the status is recorded, the part read is judged as usual (clean: no review)."""
    service, store = await _service(tmp_path, '[scoring]\non_truncated = "allow"\n')
    try:
        out = await service.handle(msg("m1", ("a" * 99 + " ") * 1000, member("u1")))
        assert out.verdict.score_status == "truncated" and not out.verdict.flagged
    finally:
        await service.close()
        await store.close()


@pytest.mark.parametrize(("text", "status"), [("", "not_scored"), ("   ", "not_scored"), ("🏳️‍⚧️💖🏳️‍⚧️💖", "ok"),
                                              ("```py\nfor i in range(10):\n    print(i)\n```", "ok")])
async def test_odd_input_gets_an_honest_status(env, text, status):
    """Empty text is not scored (and says so); emoji-only and code are read by the model (status ok)."""
    service, _ = env
    out = await service.handle(msg("m1", text, member("u1")))
    assert out.verdict.score_status == status
    assert (out.verdict.scores is None) == (status == "not_scored")
