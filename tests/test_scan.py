"""The scan and score commands end to end with the real embedded model, loaded through detoxify, offline; the two
crash-and-resume scans score through the session's fake scoring service (``fake_scorer_url``), since what they check
is the mod log, not the model."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.slow



def _env(scorer_url: str | None = None) -> dict[str, str]:
    """The test's environment for ``python -m bot``; with ``scorer_url`` it scores through that service
    (``MODBOT_SCORER_URL``, the ``fake_scorer_url`` fixture) instead of loading the real model."""
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env.pop("MODBOT_DB", None)
    env.pop("MODBOT_SCORER_URL", None)
    if scorer_url:
        env["MODBOT_SCORER_URL"] = scorer_url
    return env


def _run(*args: str, stdin: str | None = None, timeout: int = 600,
         scorer_url: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=REPO, env=_env(scorer_url), input=stdin,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def example_scan(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scan")
    out, report, db = tmp / "verdicts.jsonl", tmp / "report.html", tmp / "mod.db"
    proc = _run("scan", str(EXAMPLES / "discord"), str(EXAMPLES / "slack"), "--db", str(db), "--out", str(out),
                "--report", str(report), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    return proc, rows, report, db


@pytest.mark.parametrize("platform", ["discord", "slack"])
def test_example_abuse_is_flagged(example_scan, platform):
    """Every identity attack in the bundled examples is flagged."""
    _, rows, _, _ = example_scan
    missed = [i for i in EXPECTED[platform]["abuse"] if not rows[i]["flagged"]]
    assert not missed, f"abuse not flagged: {missed}"
    assert len(EXPECTED[platform]["abuse"]) >= 10


@pytest.mark.parametrize("platform", ["discord", "slack"])
@pytest.mark.parametrize("group", ["support", "counter", "celebration"])
def test_example_supportive_replies_pass(example_scan, platform, group):
    """Supportive replies, counter-speech quoting the abuse, and the celebration post are not flagged: also
    "trans women are women. full stop." (identity_attack 0.64 with model 6be930fdb033), posted during the raid by a
    regular with earlier messages, whom raid mode's stricter tiers (0.60) no longer apply to."""
    _, rows, _, _ = example_scan
    wrongly = [(i, rows[i]["labels"], rows[i]["rule_hits"]) for i in EXPECTED[platform].get(group, [])
               if rows[i]["flagged"]]
    assert not wrongly, f"{group} flagged: {wrongly}"


def test_example_raid_is_detected_once_per_export(example_scan):
    """The wave of new accounts raises exactly one raid alert per export (two exports, two servers)."""
    _, _, _, db = example_scan
    with sqlite3.connect(db) as con:
        raids = con.execute("SELECT server_id, channel_id FROM raids").fetchall()
    assert len(raids) == 2
    assert {r[0] for r in raids} == {"880000000000000001", "T0HARBOR01"}


def test_example_out_rows_follow_the_contract(example_scan):
    """--out has one row per message with exactly the contract's keys and the seven labels."""
    _, rows, _, _ = example_scan
    n = sum(len(ids) for p in ("discord", "slack") for ids in EXPECTED[p].values())
    assert len(rows) == n
    for r in rows.values():
        assert set(r) == {"id", "channel", "author", "scores", "rule_hits", "flagged", "labels", "action",
                          "source", "server_id", "channel_id", "author_id", "time", "text", "score_status",
                          "language"}
        assert r["source"] in ("Discord", "Slack") and r["server_id"] in ("880000000000000001", "T0HARBOR01")
        assert r["score_status"] in ("ok", "not_scored") and (r["score_status"] == "ok") == \
            any(v is not None for v in r["scores"].values())
        assert len(r["scores"]) == 7
        assert all(v is None or 0.0 <= v <= 1.0 for v in r["scores"].values())


def test_example_report_is_written(example_scan):
    """The HTML report names the labels, shows a raid and embeds the flags-over-time plot."""
    _, _, report, _ = example_scan
    html = report.read_text(encoding="utf-8")
    assert "identity_attack" in html and "<svg" in html and "<span>2 raids</span>" in html


def test_rescan_skips_recorded_messages(example_scan):
    """Re-running the same scan records nothing new, keeps one verdict per message, and its report still shows the
    two recorded raids (read from the mod log, not only from alerts raised in this run)."""
    _, rows, report, db = example_scan
    again = report.with_name("again.html")
    proc = _run("scan", str(EXAMPLES / "discord"), str(EXAMPLES / "slack"), "--db", str(db), "--no-progress",
                "--report", str(again))
    assert proc.returncode == 0, proc.stderr
    assert "0 judged now" in proc.stdout
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == len(rows)
        assert con.execute("SELECT COUNT(*) FROM raids").fetchone()[0] == 2
    assert "<span>2 raids</span>" in again.read_text(encoding="utf-8")


def test_replay_of_the_examples_under_a_stricter_policy(example_scan, tmp_path):
    """Scanning the recorded examples under a stricter policy re-judges all 59 from their stored scores without
    loading the model, keeps the recorded verdicts, and the report shows what changed."""
    _, rows, _, db = example_scan
    strict = tmp_path / "strict.toml"
    strict.write_text("[thresholds]\ninsult = { review = 0.5, act = 0.9 }\n", encoding="utf-8")
    report = tmp_path / "replay.html"
    proc = _run("scan", str(EXAMPLES / "discord"), str(EXAMPLES / "slack"), "--db", str(db), "--no-progress",
                "--policy", str(strict), "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    assert f"{len(rows)} recorded messages re-judged" in proc.stdout
    assert "Loading weights" not in proc.stderr and "loading it" not in proc.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM replay_verdicts").fetchone()[0] == len(rows)
        assert con.execute("SELECT COUNT(DISTINCT policy_version) FROM verdicts").fetchone()[0] == 1
    assert "What the policy change does" in report.read_text(encoding="utf-8")


def test_scan_of_nothing_readable_exits_2(tmp_path):
    """A scan whose input does not exist exits 2 naming it and records nothing."""
    proc = _run("scan", str(tmp_path / "missing"), "--db", str(tmp_path / "mod.db"), "--no-progress")
    assert proc.returncode == 2
    assert f"no such file or folder: {tmp_path / 'missing'}" in proc.stderr
    assert not (tmp_path / "mod.db").exists()


def test_score_contract():
    """score reads {"id","text"} lines and writes the stable contract; a bad line gets an error row and the exit
    code 1 says that some lines were not judged."""
    lines = [
        {"id": "a", "text": "trans women are women"},
        {"id": "b", "text": "trans people are disgusting freaks and should not exist"},
        {"id": 3, "text": ""},
        {"id": "s", "text": "lone \udc80 surrogate"},
        {"id": 9},
        {"id": "fr", "text": "T'es vraiment un pauvre con, ferme ta gueule."},
    ]
    stdin = "\n".join(json.dumps(x) for x in lines) + "\nnot json\n"
    proc = _run("score", stdin=stdin)
    assert proc.returncode == 1, proc.stderr
    assert "error: 2 input line(s) could not be judged" in proc.stderr
    out = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [o["id"] for o in out] == ["a", "b", 3, "s", 9, "fr", "line:7"]
    assert (out[0]["score_status"], out[0]["language"]) == ("ok", None)
    assert out[2]["score_status"] == "not_scored"
    assert (out[5]["score_status"], out[5]["language"]) == ("unsupported_language", "fr")
    assert set(out[0]) == {"id", "scores", "rule_hits", "flagged", "labels", "action", "score_status", "language"}
    assert not out[0]["flagged"] and out[1]["flagged"] and "identity_attack" in out[1]["labels"]
    assert not out[3]["flagged"] and out[3]["scores"]["toxicity"] is not None
    assert "error" in out[4] and "error" in out[6]


def test_scan_killed_midway_resumes_with_each_message_once(tmp_path, fake_scorer_url):
    """A scan killed with SIGKILL mid-run leaves a consistent log; the re-run records each message exactly once.
    Scored by the session's fake scoring service (what is checked is the mod log, not the model's scores)."""
    n = 4000
    src = tmp_path / "chat.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"m{i}", "text": f"message number {i} about build {i % 97} and tests",
                                 "author": f"u{i % 50}", "channel": "general",
                                 "created_at": f"2026-01-01T00:{(i // 60) % 60:02d}:{i % 60:02d}+00:00"}) + "\n")
    db = tmp_path / "mod.db"
    proc = subprocess.Popen([sys.executable, "-m", "bot", "scan", str(src), "--db", str(db), "--no-progress",
                             "--batch-size", "64"], cwd=REPO, env=_env(fake_scorer_url), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    recorded = 0
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=1) as con:
                    recorded = con.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
            except sqlite3.Error:
                continue
            if recorded >= 200:
                break
    assert proc.poll() is None, "scan finished before it could be killed; raise n"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < recorded < n
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    again = _run("scan", str(src), "--db", str(db), "--no-progress", scorer_url=fake_scorer_url)
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(db) as con:
        total, distinct = con.execute("SELECT COUNT(*), COUNT(DISTINCT message_id) FROM verdicts").fetchone()
    assert total == distinct == n


def test_a_raid_that_spans_a_resumed_scan_is_alerted_once(tmp_path, fake_scorer_url):
    """Five members post invite links within 20 s; the scan is stopped after three and re-run on the whole export.
    The re-run replays the three recorded messages into the raid window, so the fifth completes the burst: one
    alert naming all five (an empty window would see two flagged members and none). The invite-link rule flags
    them, so the session's fake scoring service scores them."""
    rows = [{"id": f"r{i}", "text": f"free nitro, join discord.gg/freenitro{i} now", "author": f"raider{i}",
             "channel": "general", "created_at": f"2026-01-01T00:00:{5 * i:02d}+00:00"} for i in range(5)]
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    # the same export file name both times: a JSONL file's name is its server
    part, whole, db = tmp_path / "first" / "chat.jsonl", tmp_path / "second" / "chat.jsonl", tmp_path / "mod.db"
    part.write_text("".join(json.dumps(r) + "\n" for r in rows[:3]), encoding="utf-8")
    whole.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for src in (part, whole):
        proc = _run("scan", str(src), "--db", str(db), "--no-progress", scorer_url=fake_scorer_url)
        assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(db) as con:
        raids = con.execute("SELECT members, count, reason FROM raids").fetchall()
        flagged = con.execute("SELECT COUNT(*) FROM verdicts WHERE flagged = 1").fetchone()[0]
    assert flagged == 5
    assert [(json.loads(m), c, r) for m, c, r in raids] == [([f"raider{i}" for i in range(5)], 5, "flagged_burst")]
