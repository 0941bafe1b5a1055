"""Policy loading, validation errors, layering and channel overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.models import LABELS, ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError, load_policy, set_dotted
from bot.core.policy_registry import PolicyRegistry


def _write(tmp_path: Path, text: str, name: str = "server.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_default_policy_loads_with_every_label():
    """bot/config/default.toml is valid and lists every label; every label but obscene (profanity alone is allowed by
    default) has a review tier, and identity attacks go to review at the model's calibrated threshold."""
    from bot.model.artifact import read_thresholds

    policy = load_policy(DEFAULT_POLICY_PATH)
    assert set(policy.thresholds) == set(LABELS)
    assert [lb for lb, t in policy.thresholds.items() if t.review is None] == ["obscene"]
    assert policy.thresholds["identity_attack"].review == read_thresholds()["identity_attack"]
    assert policy.strikes.ladder[0].points == 3


def test_strike_points_default_to_the_documented_table_and_a_server_overrides_one(tmp_path):
    """Each action's strike points are delete 1, warn 1, timeout 2, kick 3, ban 5 (DEFAULT_STRIKE_POINTS, the one
    place they are set); default.toml documents exactly that table; a server file naming one action changes that
    one and keeps the others; an action set to 0 earns nothing."""
    import tomllib

    from bot.core.policy import DEFAULT_STRIKE_POINTS

    table = {"delete": 1, "warn": 1, "timeout": 2, "kick": 3, "ban": 5}
    assert dict(DEFAULT_STRIKE_POINTS) == table
    assert load_policy(DEFAULT_POLICY_PATH).strikes.points == table
    documented = [ln.removeprefix("# ") for ln in DEFAULT_POLICY_PATH.read_text(encoding="utf-8").splitlines()
                  if ln.startswith("# points = {")]
    assert [tomllib.loads(ln)["points"] for ln in documented] == [table]
    server = _write(tmp_path, "[strikes]\npoints = { ban = 10, warn = 0 }\n")
    assert load_policy(DEFAULT_POLICY_PATH, server).strikes.points == {**table, "ban": 10, "warn": 0}
    over = load_policy(DEFAULT_POLICY_PATH, overrides={"strikes.points.kick": 4})
    assert over.strikes.points == {**table, "kick": 4}


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        ("colour = 1\n", "colour", "unknown key"),
        ("[thresholds]\ntoxicity = { review = 1.5 }\n", "thresholds.toxicity.review", "less than or equal to 1"),
        ('[label_actions]\nthreat = { action = "timeout", duration_s = 3456000 }\n',
         "label_actions.threat.duration_s", "less than or equal to 2419200"),
        ('[label_actions]\nthreat = { action = "explode" }\n', "label_actions.threat.action", "unknown action"),
        ("[thresholds]\nrudeness = { review = 0.5 }\n", "thresholds", "unknown label"),
        ("[server]\nretention_days = \"ten\"\n", "server.retention_days", "valid integer"),
        ("[thresholds]\ntoxicity = { review = 0.9, act = 0.5 }\n", "thresholds.toxicity", "must not be below"),
        ("[strikes]\nexpire_after_s = -5\n", "strikes.expire_after_s", "greater than or equal"),
        ("shadow_mode = \n", "(syntax)", "Invalid value"),
        ("[identity_target]\nuntargeted = { review = 1.5 }\n", "identity_target.untargeted.review",
         "less than or equal to 1"),
        ("[identity_target]\nrequire = true\n", "identity_target.require", "unknown key"),
        # a close spelling of a key the bot knows at the same place is named
        ("shadow_mod = true\n", "shadow_mod", "unknown key; did you mean 'shadow_mode'?"),
        ("[server]\nretention_dayz = 3\n", "server.retention_dayz", "unknown key; did you mean 'retention_days'?"),
        ('[scoring]\npieces = "paragraphs"\n', "scoring.pieces", "must be one of 'sentences', 'whole'"),
        # wrong types are refused, not coerced ("yes" is not a boolean, "0.5" is not a number, true is not 1.0)
        ('[strikes]\nenabled = "yes"\n', "strikes.enabled", "valid boolean"),
        ('shadow_mode = "true"\n', "shadow_mode", "valid boolean"),
        ('[thresholds]\ntoxicity = { review = "0.5" }\n', "thresholds.toxicity.review", "valid number"),
        ("[thresholds]\ntoxicity = { review = true }\n", "thresholds.toxicity.review", "valid number"),
        ('[server]\nretention_days = "30"\n', "server.retention_days", "valid integer"),
    ],
)
def test_invalid_policy_is_refused_naming_file_key_and_reason(tmp_path, text, key, reason):
    """A bad policy file raises PolicyError whose message names the file, the key and the reason."""
    path = _write(tmp_path, text)
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, path)
    err = info.value
    assert err.source == str(path)
    assert err.key == key
    assert reason in err.reason
    assert str(path) in str(err) and key in str(err)


def test_missing_policy_file_is_a_clear_error(tmp_path):
    """A policy path that does not exist is refused with 'file not found'."""
    with pytest.raises(PolicyError, match="file not found"):
        load_policy(DEFAULT_POLICY_PATH, tmp_path / "nope.toml")


def test_unreadable_policy_files_are_clear_errors(tmp_path):
    """A folder or a non-UTF-8 file given as a policy is refused with the path and the reason, not a traceback."""
    with pytest.raises(PolicyError, match="is a folder") as info:
        load_policy(DEFAULT_POLICY_PATH, tmp_path)
    assert info.value.source == str(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe garbage")
    with pytest.raises(PolicyError, match="not UTF-8") as info:
        load_policy(DEFAULT_POLICY_PATH, binary)
    assert info.value.source == str(binary)


def test_server_file_overrides_only_what_it_sets(tmp_path):
    """A server file changing one tier keeps the default's other tier and every other label."""
    path = _write(tmp_path, "[thresholds]\ntoxicity = { review = 0.9, act = 0.99 }\n")
    base = load_policy(DEFAULT_POLICY_PATH)
    policy = load_policy(DEFAULT_POLICY_PATH, path)
    assert policy.thresholds["toxicity"].review == 0.9
    assert policy.thresholds["identity_attack"] == base.thresholds["identity_attack"]
    assert policy.version != base.version


def test_channel_and_category_overrides_apply_to_threads(tmp_path):
    """Thresholds layer category < parent channel < thread's own channel; an unset tier inherits."""
    path = _write(
        tmp_path,
        '[categories."cat"]\nthresholds.toxicity = { review = 0.9 }\n'
        '[channels."chan"]\nthresholds.insult = { act = 0.99 }\n',
    )
    policy = load_policy(DEFAULT_POLICY_PATH, path)
    base = load_policy(DEFAULT_POLICY_PATH)
    thread = ChannelRef(id="t1", parent_id="chan", category_id="cat", is_thread=True)
    tiers = policy.thresholds_for(thread)
    assert tiers["toxicity"].review == 0.9
    assert tiers["toxicity"].act == base.thresholds["toxicity"].act
    assert tiers["insult"].act == 0.99
    assert tiers["insult"].review == base.thresholds["insult"].review


@pytest.mark.parametrize(
    ("member", "channel", "expected"),
    [
        (MemberRef(id="u1", roles=("mods",)), ChannelRef(id="c1"), "role"),
        (MemberRef(id="vip"), ChannelRef(id="c1"), "member"),
        (MemberRef(id="u1"), ChannelRef(id="staff"), "channel"),
        (MemberRef(id="u1"), ChannelRef(id="th", parent_id="staff", is_thread=True), "channel"),
        (MemberRef(id="b", is_bot=True), ChannelRef(id="c1"), "bot"),
        (MemberRef(id="u1"), ChannelRef(id="c1"), None),
    ],
)
def test_exemptions(tmp_path, member, channel, expected):
    """Exempt roles, members, channels (threads inherit) and bots are reported with their reason."""
    path = _write(tmp_path, '[exempt]\nroles = ["mods"]\nmembers = ["vip"]\nchannels = ["staff"]\n')
    policy = load_policy(DEFAULT_POLICY_PATH, path)
    from datetime import UTC, datetime

    msg = Message(server=ServerRef("discord", "g"), channel=channel, author=member, id="m", text="x",
                  created_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert policy.exemption(msg) == expected


def test_dotted_override_sets_and_resets():
    """set_dotted creates nested keys and None removes the key (inherit)."""
    doc = set_dotted({}, "thresholds.toxicity.review", 0.7)
    assert doc == {"thresholds": {"toxicity": {"review": 0.7}}}
    assert set_dotted(doc, "thresholds.toxicity.review", None) == {"thresholds": {"toxicity": {}}}


def test_invalid_runtime_override_names_the_key():
    """A runtime override with an impossible value is refused naming the override key."""
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, overrides={"thresholds.threat.review": 2})
    assert info.value.key == "thresholds.threat.review"
    assert info.value.source == "override thresholds.threat.review"


class _MemoryOverrides:
    """An in-memory OverrideStore."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], dict[str, object]] = {}
        self.audit: list[tuple[str, object, str | None]] = []

    async def list_policy_overrides(self, platform, server_id):
        return dict(self.data.get((platform, server_id), {}))

    async def set_policy_override(self, platform, server_id, scope, key, value, moderator_id):
        d = self.data.setdefault((platform, server_id), {})
        if value is None:
            d.pop(key, None)
        else:
            d[key] = value
        self.audit.append((key, value, moderator_id))


async def test_registry_runtime_override_changes_one_server_only(tmp_path):
    """A runtime override applies to its server, is audited, and a bad value is refused with nothing stored."""
    store = _MemoryOverrides()
    reg = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=tmp_path, store=store)
    p = await reg.set_override("discord", "g1", "thresholds.toxicity.review", 0.95, "mod1")
    assert p.thresholds["toxicity"].review == 0.95
    assert (await reg.get("discord", "g1")).thresholds["toxicity"].review == 0.95
    assert (await reg.get("discord", "g2")).thresholds["toxicity"].review == reg.base.thresholds["toxicity"].review
    with pytest.raises(PolicyError):
        await reg.set_override("discord", "g1", "thresholds.toxicity.review", 7, "mod1")
    assert store.audit == [("thresholds.toxicity.review", 0.95, "mod1")]
    await reg.set_override("discord", "g1", "thresholds.toxicity.review", None, "mod1")
    assert (await reg.get("discord", "g1")).thresholds["toxicity"].review == reg.base.thresholds["toxicity"].review


async def test_registry_reads_server_file(tmp_path):
    """A file config/servers/<platform>-<id>.toml applies to that server."""
    _write(tmp_path, "shadow_mode = true\n", name="discord-123.toml")
    reg = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=tmp_path)
    assert (await reg.get("discord", "123")).shadow_mode is True
    assert (await reg.get("discord", "456")).shadow_mode is False


def test_an_unknown_label_is_reported_beside_a_bad_value_in_the_same_table(tmp_path):
    """policy check shows every mistake in one run: a label typo in [thresholds] is named even when another
    threshold in that table is out of range (pydantic checks the table's keys only after its values pass)."""
    bad = _write(tmp_path, "[thresholds]\ntoxicity = { review = 1.5 }\nidentity_atack = { review = 0.8 }\n")
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, bad)
    text = str(info.value)
    assert "thresholds.toxicity.review" in text and "unknown label 'identity_atack'" in text
