"""Which model each table of the quality harness measures: ``eval scene``, ``eval hatecheck``, ``eval olid`` and
``eval mhc`` name the candidate's model and version above its tables, and the paired comparison names the
baseline's (A) and the candidate's (B)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from bot.cli import main
from bot.core.models import LABELS, Scores
from bot.eval import run_eval


class VersionedScorer:
    """A scorer with a name and a version of its own: identity_attack and toxicity 0.9 on a text holding one of
    ``words``, else 0.05."""

    labels = LABELS

    def __init__(self, name: str, version: str, words: tuple[str, ...]) -> None:
        self.name, self.version, self.words = name, version, words

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        return [Scores({label: 0.9 if label in ("identity_attack", "toxicity") and any(w in t.lower()
                                                                                       for w in self.words)
                        else 0.05 for label in LABELS}, model=self.name) for t in texts]


CAND = ("model cand-minilm, version c0ffee123456", ("hate", "vermin"))
BASE = ("model base-minilm, version ba5e00000001", ("hate",))


def _scorers() -> tuple[VersionedScorer, VersionedScorer]:
    return (VersionedScorer("cand-minilm", "c0ffee123456", CAND[1]),
            VersionedScorer("base-minilm", "ba5e00000001", BASE[1]))


def _run(kind: str, path: Path, **kw) -> list[str]:
    cand, base = _scorers()
    out = io.StringIO()
    run_eval(kind, path, threshold=0.5 if kind != "scene" else None, console=Console(file=out, width=300),
             scorer=cand, baseline=base, **kw)
    return [ln.strip() for ln in out.getvalue().splitlines()]


def _hatecheck(path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["functionality", "test_case", "label_gold", "target_ident"])
        w.writeheader()
        for text, gold in (("I hate trans people", "hateful"), ("trans people are vermin", "hateful"),
                           ("I love trans people", "non-hateful")):
            w.writerow({"functionality": "derog_h", "test_case": text, "label_gold": gold,
                        "target_ident": "trans people"})
    return path


PAIRED = f"A = baseline: {BASE[0]}; B = candidate: {CAND[0]}"


def test_eval_scene_names_the_candidates_and_the_baselines_model_and_version(tmp_path):
    """Above each model's scene tables, its line names the model and its version beside the policy; above the
    paired comparison, which model is A and which is B."""
    path = tmp_path / "s.csv"
    path.write_text("case_id,kind,gold,expect_label,text\n"
                    "a,denial,flag,identity_attack,those people are vermin\n"
                    "c,support,allow,,congratulations Rachel\n", encoding="utf-8")
    lines = _run("scene", path)
    (cand_line,) = [ln for ln in lines if ln.startswith("Founding scene: model")]
    (base_line,) = [ln for ln in lines if ln.startswith("Founding scene, baseline: model")]
    assert cand_line.startswith(f"Founding scene: {CAND[0]}; judged under the default policy, policy version ")
    assert base_line.startswith(f"Founding scene, baseline: {BASE[0]}; judged under the default policy, ")
    assert lines.index(cand_line) < lines.index(base_line) < lines.index(PAIRED)


def test_eval_hatecheck_and_mhc_name_the_model_and_version(tmp_path):
    """``eval hatecheck`` prints the candidate's model and version above its first table, and the paired
    comparisons name the baseline and the candidate; each MHC language's table set does the same."""
    lines = _run("hatecheck", _hatecheck(tmp_path / "hc.csv"))
    assert lines[0] == f"HateCheck: {CAND[0]}"
    assert PAIRED in lines
    mhc = tmp_path / "mhc"
    mhc.mkdir()
    _hatecheck(mhc / "mhc_de_test.csv")
    lines = _run("mhc", mhc)
    assert lines[0] == f"Multilingual HateCheck: de: {CAND[0]}" and PAIRED in lines


def test_eval_olid_names_the_model_and_version(tmp_path):
    """``eval olid`` prints the candidate's model and version above its table, and the paired comparison names
    the baseline and the candidate."""
    olid = tmp_path / "olid.tsv"
    olid.write_text("id\ttweet\tsubtask_a\tsubtask_b\tsubtask_c\n"
                    + "".join(f"{i}\t@USER tweet {i} {'I hate you' if i % 2 else 'is nice'}\t"
                              f"{'OFF' if i % 2 else 'NOT'}\tNULL\tNULL\n" for i in range(1, 41)), encoding="utf-8")
    lines = _run("olid", olid)
    assert lines[0] == f"OLID hold-out: {CAND[0]}"
    assert PAIRED in lines


def test_eval_scene_cli_names_the_served_model(tmp_path, monkeypatch, capsys, fake_scorer_url):
    """``python -m bot eval scene`` names the model the scorer reports (here the scoring service's)."""
    path = tmp_path / "s.csv"
    path.write_text("case_id,kind,gold,expect_label,text\nc,support,allow,,congratulations Rachel\n",
                    encoding="utf-8")
    monkeypatch.setenv("MODBOT_SCORER_URL", fake_scorer_url)
    assert main(["eval", "scene", str(path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Founding scene: model fake-served, version served-1; judged under the default policy")


def test_eval_with_a_baseline_names_the_model_a_scoring_service_reports_once_it_has_answered(tmp_path,
                                                                                            fake_scorer_url):
    """A scoring service that had not answered yet when the eval began (the scorer still says ``remote``, version
    ``unknown``) is named as it reports itself once it has scored the cases, also with a baseline (whose paired
    comparison keeps the candidate's scores): not as ``model remote, version unknown``."""
    from bot.scoring.remote import RemoteScorer

    served = RemoteScorer(fake_scorer_url)  # not yet asked which model it serves (as when it was not up yet)
    assert (served.name, served.version) == ("remote", "unknown")
    _, base = _scorers()
    out = io.StringIO()
    run_eval("hatecheck", _hatecheck(tmp_path / "hc.csv"), threshold=0.5, console=Console(file=out, width=300),
             scorer=served, baseline=base)
    lines = [ln.strip() for ln in out.getvalue().splitlines()]
    assert lines[0] == "HateCheck: model fake-served, version served-1"
    assert f"A = baseline: {BASE[0]}; B = candidate: model fake-served, version served-1" in lines
