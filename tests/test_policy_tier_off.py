"""A server's policy switching off a tier the default sets (``act = false``): loading, merging, judging, errors
and how ``policy check`` and ``/policy show`` say it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.models import ActionKind, ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError, load_policy
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from bot.workflow.authz import Actor, Permission
from bot.workflow.policy_admin import show_policy
from bot.workflow.policy_text import switched_off_tiers
from tests.fakes import FakeScorer

REVIEW_ONLY = "[thresholds]\ninsult = { act = false }\n"


def _write(tmp_path: Path, text: str, name: str = "server.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_act_false_loads_as_a_switched_off_tier_with_the_same_version_as_leaving_it_out(tmp_path):
    """``act = false`` over the default's insult act 0.98 leaves insult's review tier (0.85) and no act tier; the
    policy equals (same version) the default with the act key removed, and no other label changes."""
    base = load_policy(DEFAULT_POLICY_PATH)
    assert base.thresholds["insult"].act == 0.98  # the tier the server switches off
    policy = load_policy(DEFAULT_POLICY_PATH, _write(tmp_path, REVIEW_ONLY))
    assert policy.thresholds["insult"].review == 0.85 and policy.thresholds["insult"].act is None
    assert {lb: t for lb, t in policy.thresholds.items() if lb != "insult"} == \
        {lb: t for lb, t in base.thresholds.items() if lb != "insult"}
    removed = load_policy(DEFAULT_POLICY_PATH, overrides={"thresholds.insult.act": None})
    assert removed.thresholds["insult"].act is None and removed.version == policy.version != base.version
    both_off = load_policy(DEFAULT_POLICY_PATH, _write(tmp_path, "[thresholds]\ninsult = { review = false, "
                                                                  "act = false }\n", "both.toml"))
    assert both_off.thresholds["insult"].review is None and both_off.thresholds["insult"].act is None


def test_a_switched_off_tier_merges_through_every_layer(tmp_path):
    """A later file or a runtime override switches the tier back on; a channel's ``act = false`` switches it off
    in that channel (and its threads) only; ``untargeted = { review = false }`` stops the untargeted tier."""
    off = _write(tmp_path, REVIEW_ONLY)
    on_again = _write(tmp_path, "[thresholds]\ninsult = { act = 0.99 }\n", "later.toml")
    assert load_policy(DEFAULT_POLICY_PATH, off, on_again).thresholds["insult"].act == 0.99
    assert load_policy(DEFAULT_POLICY_PATH, off, overrides={"thresholds.insult.act": 0.97}).thresholds["insult"].act \
        == 0.97
    assert load_policy(DEFAULT_POLICY_PATH, overrides={"thresholds.insult.act": False}).thresholds["insult"].act \
        is None  # /policy set thresholds.insult.act false
    chan = _write(tmp_path, '[channels."debate"]\nthresholds.insult = { act = false }\n', "chan.toml")
    policy = load_policy(DEFAULT_POLICY_PATH, chan)
    debate = policy.thresholds_for(ChannelRef(id="debate"))["insult"]
    thread = policy.thresholds_for(ChannelRef(id="t1", parent_id="debate", is_thread=True))["insult"]
    general = policy.thresholds_for(ChannelRef(id="general"))["insult"]
    assert (debate.review, debate.act) == (thread.review, thread.act) == (0.85, None)
    assert (general.review, general.act) == (0.85, 0.98)
    untargeted = _write(tmp_path, "[identity_target]\nuntargeted = { review = false }\n", "untargeted.toml")
    assert load_policy(DEFAULT_POLICY_PATH, untargeted).identity_target.untargeted.review is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[thresholds]\ninsult = { act = "off" }\n', "'off' is not a valid number"),
        ("[thresholds]\ninsult = { act = true }\n", "true is not a valid number"),
        ('[thresholds]\ninsult = { act = "0.9" }\n', "without quotes"),
        ("[thresholds]\ninsult = { act = [] }\n", "valid number"),
        ('[channels."c1"]\nthresholds.insult = { act = "no" }\n', "or false to switch the tier off"),
    ],
)
def test_a_malformed_tier_still_names_file_key_and_reason(tmp_path, text, reason):
    """Only ``false`` switches a tier off: ``true``, a word or a quoted number is refused naming the file, the
    dotted key and why (with how to write it)."""
    path = _write(tmp_path, text)
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, path)
    err = info.value
    assert err.source == str(path)
    assert err.key.endswith("insult.act") and err.key.split(".")[0] in ("thresholds", "channels")
    assert reason in err.reason


T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
OLD = T0 - timedelta(days=400)


async def _judge(tmp_path: Path, server_file: str | None) -> tuple[ActionKind, tuple[str, ...], bool, bool]:
    """Judge one message scoring insult 0.99 (over the default act tier 0.98) in server g1, whose own file in the
    servers folder is ``server_file``; returns its action, labels, flagged and whether a strike was added."""
    servers = tmp_path / "servers"
    servers.mkdir(exist_ok=True)
    own = servers / "discord-g1.toml"
    own.unlink(missing_ok=True)
    if server_file is not None:
        own.write_text(server_file, encoding="utf-8")
    store = await SqliteStore.open(tmp_path / f"mod-{server_file is None}.db")
    reg = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=servers)
    author = MemberRef(id="u1", name="u1", joined_at=OLD, created_at=OLD)
    message = Message(server=ServerRef("discord", "g1", "guild"), channel=ChannelRef(id="c1", name="general"),
                      author=author, id="m1", text="you absolute moron", created_at=T0)
    scorer = FakeScorer({"moron": {"insult": 0.99, "toxicity": 0.6}})
    try:
        async with ModerationService(scorer=scorer, store=store, policies=reg, max_delay_s=0.001) as service:
            out = await service.handle(message)
    finally:
        await store.close()
    return out.verdict.action, out.verdict.labels, out.verdict.flagged, out.strike_added


async def test_a_message_over_the_old_act_tier_goes_to_review_only(tmp_path):
    """insult 0.99 is deleted (with a strike) under the default; with the server's ``act = false`` the same
    message is flagged and sent to review, with no deletion and no strike."""
    assert await _judge(tmp_path, None) == (ActionKind.DELETE, ("insult",), True, True)
    assert await _judge(tmp_path, REVIEW_ONLY) == (ActionKind.REVIEW, ("insult",), True, False)


def test_what_the_note_says_of_agreement_holds(tmp_path):
    """As ``policy check`` says: with insult's act tier off, a rule hit supporting insult plus insult over its review
    tier still takes label_actions.insult (delete) while ``[agreement] act`` is on; with that action set to review
    (or agreement off) the message only goes to review; without the hit, insult 0.99 only goes to review."""
    from bot.core.judge import decide
    from bot.core.models import RuleHit, Scores

    scores = Scores(values={"insult": 0.99, "toxicity": 0.5})
    hit = RuleHit(rule="hostile_emoji", detail="middle finger", label="insult", action="review")
    off = load_policy(DEFAULT_POLICY_PATH, _write(tmp_path, REVIEW_ONLY))
    assert decide(off, off.thresholds, scores, []).strongest == ActionKind.REVIEW
    assert decide(off, off.thresholds, scores, [hit]).strongest == ActionKind.DELETE
    quiet = load_policy(DEFAULT_POLICY_PATH, _write(tmp_path, REVIEW_ONLY + '[label_actions]\ninsult = { action = '
                                                              '"review" }\n', "quiet.toml"))
    assert decide(quiet, quiet.thresholds, scores, [hit]).strongest == ActionKind.REVIEW
    no_agreement = load_policy(DEFAULT_POLICY_PATH, _write(tmp_path, REVIEW_ONLY + "[agreement]\nact = false\n",
                                                           "alone.toml"))
    assert decide(no_agreement, no_agreement.thresholds, scores, [hit]).strongest == ActionKind.REVIEW


def test_policy_check_notes_each_tier_the_file_switches_off(tmp_path, capsys):
    """``policy check FILE`` says, before its OK line, which default tiers the file switches off and what an
    agreement can still do; the default alone or a file that switches nothing off gets no note."""
    f = _write(tmp_path, '[thresholds]\ninsult = { act = false }\nsevere_toxicity = { review = false }\n'
                         '[server]\nreview_channel = "123456789012345678"\nmod_log_channel = "123456789012345670"\n')
    assert main(["policy", "check", str(f)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[:2] == [
        "note: thresholds.severe_toxicity.review is off: severe_toxicity's score no longer sends a message to review",
        "note: thresholds.insult.act is off: insult never acts on its score alone (review from 0.85); with "
        "[agreement] act a rule hit supporting insult still takes label_actions.insult (delete); "
        'label_actions.insult = { action = "review" } stops that']
    assert lines[2].startswith("OK: valid policy") and len(lines) == 3 and err == ""
    assert main(["policy", "check", str(f), "--json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["policy"]["thresholds"]["insult"] == {"review": 0.85, "act": None}
    assert "note: thresholds.insult.act is off" in err
    plain = _write(tmp_path, '[label_actions]\ninsult = { action = "review" }\n[thresholds]\ninsult = { act = false '
                             '}\n', "plain.toml")
    assert main(["policy", "check", str(plain)]) == 0
    assert "(review from 0.85)\n" in capsys.readouterr().out  # its action is a review: no agreement clause


def test_policy_show_says_which_tiers_are_switched_off(tmp_path):
    """``/policy show`` with the registry's base policy adds the note after an inline thresholds key and in the
    whole policy's caption; a key elsewhere, or a policy that switches nothing off, gets none."""
    base = load_policy(DEFAULT_POLICY_PATH)
    policy = load_policy(DEFAULT_POLICY_PATH, _write(tmp_path, REVIEW_ONLY))
    (note,) = switched_off_tiers(base, policy)
    moderator = Actor("200", permissions=frozenset({Permission.MANAGE_MESSAGES}))
    shown = show_policy(moderator, policy, "1", "thresholds.insult", inline_max=1900, base=base)
    assert shown.inline is not None and shown.inline.endswith(f"```\n`{note}`")
    assert '"act": null' in shown.inline
    whole = show_policy(moderator, policy, "1", inline_max=1900, base=base)
    assert whole.inline is None and whole.caption.endswith("bytes):") and whole.notes == f"\n`{note}`"
    assert show_policy(moderator, policy, "1", "server", inline_max=1900, base=base).notes == ""
    untouched = show_policy(moderator, base, "1", "thresholds", inline_max=1900, base=base).inline
    assert untouched is not None and untouched.endswith("```")
