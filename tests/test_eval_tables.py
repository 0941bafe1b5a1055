"""The quality harness's tables when stdout is not a terminal (``python -m bot eval scene | less``, a log file):
one table row per line, not rows wrapped at rich's default 80 columns; and the policy each model was judged under."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import DEFAULT_POLICY_PATH
from bot.eval.common import PIPED_WIDTH, table_console

HEADER = "case_id,kind,gold,expect_label,text\n"
#: The model the session's scoring service reports (tests/serve_scorers.py), as the harness names it.
SERVED = "model fake-served, version served-1"
#: Benign words (no keyword of the fake scorer) in a case that should be flagged: it is a wrong case, and its
#: row in the "wrong cases" table (text shown up to 90 characters) is far wider than 80 columns.
MISSED = ("those people keep turning up at the community garden meeting every single Tuesday evening without "
          "fail")


def test_eval_scene_piped_prints_each_table_row_on_one_line(tmp_path: Path, monkeypatch, capsys, fake_scorer_url):
    """``python -m bot eval scene FILE`` with stdout captured (not a terminal) prints the wrong case's row whole
    on one line (id, family, expected, action and the first 90 characters of its text), every per-family row on
    one line too, and the first table's heading on one line; COLUMNS=80 in the environment does not narrow it."""
    path = tmp_path / "scene.csv"
    path.write_text(HEADER + f"w1,pathologise_long_family_name,flag,identity_attack,{MISSED}\n"
                    "ok1,angry_support,allow,,good morning everyone, the garden looks lovely today\n",
                    encoding="utf-8")
    monkeypatch.setenv("MODBOT_SCORER_URL", fake_scorer_url)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["eval", "scene", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    (row,) = [ln for ln in lines if "w1" in ln]
    assert "pathologise_long_family_name" in row and "flag" in row and MISSED[:90] in row
    assert len(row) > 80  # the row would have been wrapped before
    family_rows = [ln for ln in lines if "pathologise_long_family_name" in ln or "angry_support" in ln]
    assert len(family_rows) == 3  # the wrong case's row and the two per-family rows, each on a line of its own
    assert all(ln.count("│") >= 4 for ln in family_rows if "w1" not in ln)  # whole rows: every column's border
    assert "Founding scene (n=2, judged under the policy: flagged = review or act)" in [ln.strip() for ln in lines]
    assert "\x1b[" not in out  # no colour codes in a pipe


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_table_console_keeps_the_terminal_width_on_a_terminal(monkeypatch):
    """On a terminal the console is rich's own (the terminal's width, here COLUMNS=100); elsewhere it is
    PIPED_WIDTH wide."""
    monkeypatch.setenv("COLUMNS", "100")
    assert table_console(_Terminal()).width == 100
    assert table_console(io.StringIO()).width == PIPED_WIDTH


def _scene_file(tmp_path: Path) -> Path:
    path = tmp_path / "scene.csv"
    path.write_text(HEADER + "ok1,angry_support,allow,,good morning everyone, the garden looks lovely today\n",
                    encoding="utf-8")
    return path


def test_eval_scene_names_the_policy_it_judged_under(tmp_path: Path, monkeypatch, capsys, fake_scorer_url):
    """``python -m bot eval scene`` says above its tables which model (as the scorer reports it, here the scoring
    service's) and which policy judged the cases, each with its version: "the default policy" alone, or the default
    plus each --policy file by its path (another version)."""
    from bot.core.policy import load_policy

    path = _scene_file(tmp_path)
    strict = tmp_path / "strict.toml"
    strict.write_text("[thresholds]\nidentity_attack = { review = 0.92, act = 0.97 }\n", encoding="utf-8")
    monkeypatch.setenv("MODBOT_SCORER_URL", fake_scorer_url)
    assert main(["eval", "scene", str(path)]) == 0
    lines = [ln.strip() for ln in capsys.readouterr().out.splitlines()]
    default_version = load_policy().version
    assert lines[0] == (f"Founding scene: {SERVED}; judged under the default policy, policy version "
                        f"{default_version}")
    assert main(["eval", "scene", str(path), "--policy", str(strict)]) == 0
    lines = [ln.strip() for ln in capsys.readouterr().out.splitlines()]
    strict_version = load_policy(DEFAULT_POLICY_PATH, strict).version
    assert strict_version != default_version
    assert lines[0] == (f"Founding scene: {SERVED}; judged under the default policy + {strict}, policy version "
                        f"{strict_version}")


@pytest.mark.slow
def test_eval_scene_names_the_candidates_and_the_baselines_policy(tmp_path: Path, capsys):
    """With ``--baseline`` and ``--baseline-policy``, each model's tables are headed by its model and its own
    policy: the artifact manifest's ``name`` and the first 12 hex digits of its ``delta_sha256``, the candidate's
    --policy file and version, the baseline's --baseline-policy file and version (the shipped model as both, loaded
    from its artifact directory)."""
    from bot.core.policy import load_policy
    from bot.model.artifact import read_manifest

    path = _scene_file(tmp_path)
    cand, base = tmp_path / "cand.toml", tmp_path / "base.toml"
    cand.write_text("[thresholds]\nidentity_attack = { review = 0.92, act = 0.97 }\n", encoding="utf-8")
    base.write_text("[thresholds]\nidentity_attack = { review = 0.6, act = 0.9 }\n", encoding="utf-8")
    artifact = str(Path(__file__).resolve().parents[1] / "bot" / "model" / "artifact")
    assert main(["eval", "scene", str(path), "--artifact", artifact, "--baseline", artifact, "--policy", str(cand),
                 "--baseline-policy", str(base)]) == 0
    lines = [ln.strip() for ln in capsys.readouterr().out.splitlines()]
    default = DEFAULT_POLICY_PATH
    manifest = read_manifest(Path(artifact))
    model = f"model {manifest['name']}, version {manifest['delta_sha256'][:12]}"
    said = [ln for ln in lines if "judged under the default policy +" in ln]
    assert said == [
        f"Founding scene: {model}; judged under the default policy + {cand}, policy version "
        f"{load_policy(default, cand).version}",
        f"Founding scene, baseline: {model}; judged under the default policy + {base}, policy version "
        f"{load_policy(default, base).version}",
    ]
    assert f"A = baseline: {model}; B = candidate: {model}" in lines
