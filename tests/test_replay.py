"""``scan`` replays: re-judging recorded messages under another policy from their stored scores, both verdict sets
kept, the diff printed and reported; and per-server policy files applied in scans as in the bots.

Real parts: the real ``run_scan`` job, the real moderation service, real SQLite files on ``tmp_path``; the scorer is
the keyword fake of ``tests/fakes.py`` (so the tests know every score and can count model calls).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from argparse import Namespace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.settings import Settings
from tests.fakes import ABUSE, FakeScorer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
#: "moron" scores insult 0.6: under the default insult review tier (0.85), over a strict file's 0.5.
RULES = {**ABUSE, "moron": {"insult": 0.6, "toxicity": 0.5}}
STRICT = "[thresholds]\ninsult = { review = 0.5, act = 0.98 }\n"
LOOSE = "[thresholds]\ninsult = { review = 0.95, act = 0.99 }\n"


def _export(tmp_path: Path) -> Path:
    """A JSON lines export of one server: ordinary chat, one "idiot" insult (0.88) and one "moron" (0.6)."""
    lines = []
    texts = ["good morning", "anyone tried the new build?", "you are an idiot", "works for me",
             "what a moron", "see you tomorrow"]
    for i, text in enumerate(texts):
        lines.append({"id": f"m{i}", "text": text, "created_at": (T0 + timedelta(minutes=7 * i)).isoformat(),
                      "author": {"id": f"u{i % 3}", "name": f"member{i % 3}"},
                      "channel": {"id": "c1", "name": "general"}})
    p = tmp_path / "chat.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return p


def _args(paths: list[Path], *, policy: list[Path] | None = None, out: Path | None = None,
          report: Path | None = None) -> Namespace:
    return Namespace(paths=paths, policy=policy or [], out=out, report=report, format="auto", on_error="skip",
                     batch_size=16, no_progress=True)


def _scan(args: Namespace, settings: Settings, scorer: FakeScorer) -> int:
    from bot.jobs.scan import run_scan

    return asyncio.run(run_scan(args, settings, scorer=scorer))


def _rows(out: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}


def _policy(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers")


def test_replay_under_a_stricter_policy_rejudges_from_stored_scores(tmp_path, settings, capsys):
    """A stricter policy newly flags "what a moron" (insult 0.6 over 0.5) without one model call; the recorded
    verdicts stay and the new set is kept next to them."""
    src = _export(tmp_path)
    first = FakeScorer(RULES)
    assert _scan(_args([src], out=tmp_path / "a.jsonl"), settings, first) == 0
    assert first.calls  # the first scan scored with the model
    before = _rows(tmp_path / "a.jsonl")
    assert before["m2"]["flagged"] and not before["m4"]["flagged"]
    capsys.readouterr()

    replayer = FakeScorer(RULES)
    strict = _policy(tmp_path, "strict.toml", STRICT)
    assert _scan(_args([src], policy=[strict], out=tmp_path / "b.jsonl"), settings, replayer) == 0
    assert replayer.calls == []  # every score came from the store
    after = _rows(tmp_path / "b.jsonl")
    assert after["m4"]["flagged"] and after["m4"]["labels"] == ["insult"]
    assert after["m4"]["scores"]["insult"] == pytest.approx(0.6)
    assert [i for i in after if after[i]["flagged"] != before[i]["flagged"]] == ["m4"]
    err = capsys.readouterr().out
    assert "1 newly flagged, 0 no longer flagged" in err and "what a moron" in err

    with sqlite3.connect(settings.db_path) as db:
        versions = dict(db.execute("SELECT policy_version, COUNT(*) FROM verdicts GROUP BY 1").fetchall())
        replayed = dict(db.execute("SELECT policy_version, COUNT(*) FROM replay_verdicts GROUP BY 1").fetchall())
        m4 = db.execute("SELECT flagged FROM verdicts WHERE message_id = 'm4'").fetchone()[0]
    assert list(versions.values()) == [6] and list(replayed.values()) == [6]
    assert set(versions) != set(replayed)  # two versions, both kept
    assert m4 == 0  # the recorded (first) verdict is unchanged


def test_replay_under_a_looser_policy_unflags_and_a_replay_of_a_replay_is_idempotent(tmp_path, settings, capsys):
    """A looser policy un-flags "you are an idiot" (0.88 under 0.95); running the same replay again gives the same
    diff and leaves one row per message and version."""
    src = _export(tmp_path)
    assert _scan(_args([src]), settings, FakeScorer(RULES)) == 0
    loose = _policy(tmp_path, "loose.toml", LOOSE)
    outputs = []
    for _ in range(2):
        capsys.readouterr()
        scorer = FakeScorer(RULES)
        assert _scan(_args([src], policy=[loose], out=tmp_path / "c.jsonl"), settings, scorer) == 0
        assert scorer.calls == []
        err = capsys.readouterr().out
        outputs.append(err[err.index("policy change"):])
        rows = _rows(tmp_path / "c.jsonl")
        assert not rows["m2"]["flagged"] and not any(r["flagged"] for r in rows.values())
    assert "0 newly flagged, 1 no longer flagged" in outputs[0]
    assert outputs[0] == outputs[1]
    with sqlite3.connect(settings.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM replay_verdicts").fetchone()[0] == 6
        assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 6


def test_rescan_under_the_recorded_policy_is_not_a_replay(tmp_path, settings, capsys):
    """Scanning again under the policy that judged the recorded messages stays a plain resume: nothing re-judged,
    no replay rows."""
    src = _export(tmp_path)
    assert _scan(_args([src]), settings, FakeScorer(RULES)) == 0
    capsys.readouterr()
    assert _scan(_args([src]), settings, FakeScorer(RULES)) == 0
    err = capsys.readouterr().out
    assert "0 judged now (6 already recorded)" in err and "policy change" not in err
    with sqlite3.connect(settings.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM replay_verdicts").fetchone()[0] == 0


def test_replay_scores_only_what_has_no_stored_score(tmp_path, settings):
    """Messages added to the export since the first scan are scored by the model in the replay; the recorded ones
    are not."""
    src = _export(tmp_path)
    assert _scan(_args([src]), settings, FakeScorer(RULES)) == 0
    extra = {"id": "m9", "text": "another idiot here", "created_at": (T0 + timedelta(hours=2)).isoformat(),
             "author": {"id": "u7", "name": "late"}, "channel": {"id": "c1", "name": "general"}}
    with src.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(extra) + "\n")
    scorer = FakeScorer(RULES)
    strict = _policy(tmp_path, "strict.toml", STRICT)
    assert _scan(_args([src], policy=[strict], out=tmp_path / "d.jsonl"), settings, scorer) == 0
    assert [t for call in scorer.calls for t in call] == ["another idiot here"]
    assert _rows(tmp_path / "d.jsonl")["m9"]["flagged"]


def test_replay_report_shows_the_diff(tmp_path, settings):
    """The HTML report of a replay has the policy-change section with the counts and the changed message."""
    src = _export(tmp_path)
    assert _scan(_args([src]), settings, FakeScorer(RULES)) == 0
    strict = _policy(tmp_path, "strict.toml", STRICT)
    report = tmp_path / "r.html"
    assert _scan(_args([src], policy=[strict], report=report), settings, FakeScorer(RULES)) == 0
    page = report.read_text(encoding="utf-8")
    assert "What the policy change does" in page
    assert '<span id="n-newly-flagged">1 newly flagged</span>' in page
    assert '<span id="n-no-longer-flagged">0 no longer flagged</span>' in page
    diff_part = page[page.index('id="diff-messages"'):]
    diff_part = diff_part[: diff_part.index("</table>")]
    assert "what a moron" in diff_part and diff_part.count("<tr>") == 2  # header + the one changed message


def test_compute_diff_counts_actions_labels_channels_and_members():
    """The diff counts a changed action, a newly flagged and an un-flagged message once each, per channel/member."""
    from bot.core.models import ActionKind, ChannelRef, MemberRef, Message, ServerRef, Verdict
    from bot.core.records import SetVerdict
    from bot.jobs.replay import compute_diff

    srv = ServerRef("export", "s")
    msgs = [Message(srv, ChannelRef(f"c{i % 2}", f"chan{i % 2}"), MemberRef(f"u{i}", f"name{i}"), f"m{i}", f"t{i}",
                    T0 + timedelta(seconds=i)) for i in range(4)]

    def before(i: int, flagged: bool, action: str, labels: tuple[str, ...]) -> SetVerdict:
        return SetVerdict(msgs[i].key, "old", flagged, labels, action, (), None, "fake", "1")

    def after(i: int, flagged: bool, action: ActionKind, labels: tuple[str, ...]) -> Verdict:
        return Verdict(message=msgs[i], scores=None, flagged=flagged, action=action, labels=labels,
                       policy_version="new")

    b = {m.key: v for m, v in zip(msgs, [before(0, False, "none", ()), before(1, True, "review", ("insult",)),
                                         before(2, True, "review", ("toxicity",)), before(3, False, "none", ())], strict=True)}
    a = {m.key: v for m, v in zip(msgs, [after(0, True, ActionKind.REVIEW, ("insult",)),
                                         after(1, False, ActionKind.NONE, ()),
                                         after(2, True, ActionKind.DELETE, ("toxicity",)),
                                         after(3, False, ActionKind.NONE, ())], strict=True)}
    d = compute_diff(msgs, b, a)
    assert d["counts"] == {"newly flagged": 1, "no longer flagged": 1, "action changed": 1, "labels changed": 0}
    assert d["unchanged"] == 1 and d["compared"] == 4
    assert d["per_label"] == {"insult": {"gained": 1, "lost": 1}}
    assert d["actions_before"] == {"none": 2, "review": 2} and d["actions_after"] == {"delete": 1, "none": 2,
                                                                                       "review": 1}
    assert {r["id"]: r["newly flagged"] + r["action changed"] for r in d["per_channel"]} == {"c0": 2, "c1": 0}
    assert [m["id"] for m in d["messages"]] == ["m0", "m1", "m2"]
    assert d["before_versions"] == ["old"] and d["after_versions"] == ["new"]


def test_discord_export_is_judged_by_the_guilds_server_file(tmp_path, settings):
    """A Discord export (recorded under platform "export") is judged by discord-<guild id>.toml from the servers
    folder, the Slack export next to it is not, and the report names the file for that guild only."""
    settings.servers_dir.mkdir()
    own = settings.servers_dir / "discord-880000000000000001.toml"
    own.write_text("[thresholds]\ntoxicity = { review = 0.005 }\n", encoding="utf-8")  # flags every scored text
    out, report = tmp_path / "e.jsonl", tmp_path / "e.html"
    assert _scan(_args([EXAMPLES / "discord", EXAMPLES / "slack"], out=out, report=report), settings,
                 FakeScorer(ABUSE)) == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    discord_ids = {m["id"] for m in json.loads((EXAMPLES / "discord" / "celebration.json").read_text())["messages"]}
    discord = [r for r in rows if r["id"] in discord_ids]
    slack = [r for r in rows if r["id"] not in discord_ids]
    assert discord and all(r["flagged"] or r["action"] == "none" and not r["scores"]["toxicity"] for r in discord)
    assert sum(r["flagged"] for r in discord) > len(discord) // 2
    assert sum(r["flagged"] for r in slack) < len(slack) // 2
    page = report.read_text(encoding="utf-8")
    # the server's file is named in the report without the host's folders (bot.report.display_path)
    assert page.count(f"…/servers/{own.name}") == 1 and str(own.parent) not in page


def test_a_bad_server_file_stops_the_scan_before_the_model(tmp_path, settings):
    """A server file that is invalid for its server is a policy error before anything is judged."""
    from bot.core.policy import PolicyError

    settings.servers_dir.mkdir()
    (settings.servers_dir / "discord-880000000000000001.toml").write_text(
        "[thresholds]\ntoxicity = { review = 7 }\n", encoding="utf-8")
    scorer = FakeScorer(ABUSE)
    with pytest.raises(PolicyError):
        _scan(_args([EXAMPLES / "discord"]), settings, scorer)
    assert scorer.calls == []


def test_export_file_wins_over_the_discord_file(tmp_path):
    """``export-<id>.toml`` is the export's own file; ``discord-<id>.toml`` applies only to snowflake ids."""
    from bot.core.policy_registry import PolicyRegistry

    d = tmp_path / "servers"
    d.mkdir()
    for name in ("discord-880000000000000001", "export-880000000000000002", "discord-880000000000000002",
                 "discord-chat"):
        (d / f"{name}.toml").write_text("", encoding="utf-8")
    reg = PolicyRegistry(servers_dir=d)
    assert reg.server_file("export", "880000000000000001") == d / "discord-880000000000000001.toml"
    assert reg.server_file("export", "880000000000000002") == d / "export-880000000000000002.toml"
    assert reg.server_file("export", "chat") is None  # a JSON lines file stem is not a guild id
    assert reg.server_file("slack", "880000000000000001") is None


def test_replay_rows_follow_a_forgotten_member(tmp_path, settings):
    """forget_member rewrites the member id in the replayed verdict set too."""
    from bot.store.sqlite import SqliteStore

    src = _export(tmp_path)
    assert _scan(_args([src]), settings, FakeScorer(RULES)) == 0
    assert _scan(_args([src], policy=[_policy(tmp_path, "s.toml", STRICT)]), settings, FakeScorer(RULES)) == 0

    async def forget() -> None:
        async with await SqliteStore.open(settings.db_path) as store:
            await store.forget_member("export", "chat", "u1")

    asyncio.run(forget())
    with sqlite3.connect(settings.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM replay_verdicts WHERE member_id = 'u1'").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM verdicts WHERE member_id = 'u1'").fetchone()[0] == 0



def test_policy_version_is_computed_once_and_copies_get_their_own():
    """The policy version is cached per policy object; a copy with a change gets a new version, an exact copy
    the same."""
    from bot.core.policy import DEFAULT_POLICY_PATH, load_policy

    p = load_policy(DEFAULT_POLICY_PATH)
    v = p.version
    assert p.version is v  # cached, not recomputed
    changed = p.model_copy(update={"shadow_mode": not p.shadow_mode})
    assert changed.version != v and p.model_copy().version == v
    assert load_policy(DEFAULT_POLICY_PATH).version == v


def test_neither_a_replay_nor_a_finished_rerun_loads_the_model(tmp_path, capsys):
    """With the model named by the settings (not passed in), a replay from stored scores and a re-run over an
    export recorded under the same policy never call the model loader; the first scan does, once."""
    settings = Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers", model="original")
    loads: list[str] = []

    def load() -> FakeScorer:
        loads.append("load")
        fake = FakeScorer(RULES)
        fake.name, fake.version = "original", "detoxify-0.5.4"  # what the settings' model records
        return fake

    from bot.jobs.scan import run_scan

    src = _export(tmp_path)
    strict = _policy(tmp_path, "strict.toml", STRICT)
    assert asyncio.run(run_scan(_args([src]), settings, scorer_factory=load)) == 0
    assert loads == ["load"]
    assert asyncio.run(run_scan(_args([src]), settings, scorer_factory=load)) == 0  # finished re-run
    out = tmp_path / "f.jsonl"
    assert asyncio.run(run_scan(_args([src], policy=[strict], out=out), settings, scorer_factory=load)) == 0
    assert loads == ["load"]
    assert _rows(out)["m4"]["flagged"]
    assert "1 newly flagged" in capsys.readouterr().out


def test_a_slack_thread_reply_counts_in_its_channels_row_and_a_discord_thread_keeps_its_own():
    """A Slack thread reply lives in a virtual channel ``"<channel>:<thread ts>"`` that carries its channel's name:
    the per-channel table showed "general" twice, once for the channel and once per thread. It counts in its
    channel's row; a Discord thread (its own channel, its own name) keeps its own row."""
    from bot.core.models import ActionKind, ChannelRef, MemberRef, Message, ServerRef, Verdict
    from bot.core.records import SetVerdict
    from bot.jobs.replay import compute_diff

    general = ChannelRef("C1", "general")
    chans = [general, ChannelRef("C1:1700000000.000100", "general", parent_id="C1", is_thread=True),
             ChannelRef("T9", "match-thread", parent_id="C2", is_thread=True)]
    msgs = [Message(ServerRef("slack", "T1"), ch, MemberRef(f"u{i}", f"name{i}"), f"m{i}", f"t{i}",
                    T0 + timedelta(seconds=i)) for i, ch in enumerate(chans)]
    b = {m.key: SetVerdict(m.key, "old", False, (), "none", (), None, "fake", "1") for m in msgs}
    a = {m.key: Verdict(message=m, scores=None, flagged=True, action=ActionKind.REVIEW, labels=("insult",),
                        policy_version="new") for m in msgs}
    d = compute_diff(msgs, b, a)
    assert [(r["id"], r["name"], r["newly flagged"]) for r in d["per_channel"]] == [
        ("C1", "general", 2), ("T9", "match-thread", 1)]
    assert [m["channel_id"] for m in d["messages"]] == ["C1", "C1:1700000000.000100", "T9"]


def test_a_scan_whose_scorer_fails_records_nothing_of_that_batch_and_the_next_run_judges_it(tmp_path, settings,
                                                                                            caplog):
    """A scan whose scorer failed (a scoring service that was away) recorded the policy's ``on_scorer_error``
    verdict ("review", no scores) as the message's verdict and exited 0; every later run skipped the message as
    already recorded, so the shadow mod log never held what the model finds. The scan now stops (exit 2, one line
    saying so) with nothing of the failed batch recorded, and the next run judges it with the model."""
    src = _export(tmp_path)
    assert _scan(_args([src]), settings, FakeScorer(RULES, fail_on="idiot")) == 2
    assert "none of the batch is recorded" in caplog.text
    out = tmp_path / "v.jsonl"
    assert _scan(_args([src], out=out), settings, FakeScorer(RULES)) == 0
    rows = _rows(out)
    assert len(rows) == 6 and {r["score_status"] for r in rows.values()} == {"ok"}
    assert rows["m2"]["flagged"] and rows["m2"]["scores"]["insult"] == 0.88


def test_a_replay_of_a_long_message_under_a_servers_max_chars_reuses_its_stored_scores(tmp_path, settings):
    """A server whose policy sets ``[scoring] max_chars``: the replay's plan looked the stored scores up by a long
    message's texts read to the default 40,000 characters, the service by those read to the policy's, so a
    message over 4,000 characters had no known score, the stored-scores-only scorer refused it, and (as the scan
    now stops where the scorer fails) every replay of that server stopped with exit 2, for ever."""
    long = "hello there friends, see you at the match tonight. " * 250  # 12,750 characters
    lines = [{"id": f"m{i}", "text": text, "created_at": (T0 + timedelta(minutes=i)).isoformat(),
              "author": {"id": f"u{i}", "name": f"member{i}"}, "channel": {"id": "c1", "name": "general"}}
             for i, text in enumerate([long, "what a moron"])]
    src = tmp_path / "chat.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    reads = "[scoring]\nmax_chars = 8000\n"
    assert _scan(_args([src], policy=[_policy(tmp_path, "a.toml", reads)]), settings, FakeScorer(RULES)) == 0
    replayer = FakeScorer(RULES)
    strict = _policy(tmp_path, "strict.toml", reads + STRICT)
    assert _scan(_args([src], policy=[strict], out=tmp_path / "b.jsonl"), settings, replayer) == 0
    assert replayer.calls == []  # every score came from the store
    rows = _rows(tmp_path / "b.jsonl")
    assert rows["m1"]["flagged"] and rows["m0"]["score_status"] != "scorer_error"


def test_record_scorer_errors_gets_a_scan_past_a_message_the_scorer_always_fails_on(tmp_path, settings):
    """A message the scorer can never score (a service timing out on it every time) would stop every run; with
    ``--record-scorer-errors`` it is recorded with the policy's on_scorer_error verdict (score_status
    ``scorer_error``) and the rest of the export is judged."""
    src = _export(tmp_path)
    out = tmp_path / "v.jsonl"
    args = _args([src], out=out)
    args.record_scorer_errors = True
    assert _scan(args, settings, FakeScorer(RULES, fail_on="idiot")) == 0
    rows = _rows(out)
    assert len(rows) == 6 and rows["m2"]["score_status"] == "scorer_error"
    assert rows["m2"]["action"] == "review"  # the default policy's on_scorer_error
