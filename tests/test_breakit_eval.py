"""Edge cases of the paired comparison, the founding-scene probe set, the eval command and language routing: each
test pins a defect found by trying to break them (bad probe files, one-sided probe sets, bootstrap bounds, routing
settings, the service's language check with a routed scorer)."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.eval import EvalInputError, check_input, run_eval
from bot.eval.paired import paired_bootstrap
from bot.scoring.routing import LanguageRoutedScorer
from bot.store.sqlite import SqliteStore
from tests.fakes import FakeScorer
from tests.test_eval_paired import WordScorer

HEADER = "case_id,kind,gold,expect_label,text\n"


def _scene(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "scene.csv"
    path.write_text(HEADER + body, encoding="utf-8")
    return path


# ---------------------------------------------------------------- scene probe files checked before the model loads


def test_check_input_refuses_a_scene_case_with_an_unknown_gold_value(tmp_path):
    """check_input (run before any model loads) refuses gold 'maybe', naming the file and the case."""
    path = _scene(tmp_path, "q1,x,flag,threat,you will regret it\nq2,x,maybe,,hello there\n")
    with pytest.raises(EvalInputError, match=r"scene\.csv.*q2.*gold"):
        check_input("scene", path)


def test_check_input_refuses_a_scene_case_without_text_or_with_a_repeated_id(tmp_path):
    """An empty text (never scored, so never flagged) and a case id used twice are refused, naming the case."""
    with pytest.raises(EvalInputError, match=r"case q2.*no text"):
        check_input("scene", _scene(tmp_path, "q1,x,allow,,hello there\nq2,x,flag,threat,   \n"))
    with pytest.raises(EvalInputError, match=r"case q1.*more than once"):
        check_input("scene", _scene(tmp_path, "q1,x,allow,,hello there\nq1,x,allow,,good morning\n"))


def test_eval_command_refuses_a_bad_scene_file_with_exit_2_before_the_model(tmp_path, monkeypatch, capsys):
    """python -m bot eval scene FILE with a bad gold value exits 2 naming the file and the case, before loading
    the model (the configured model is unloadable here, so reaching it would report the model instead)."""
    from bot.cli import main

    monkeypatch.setenv("MODBOT_MODEL", "no-such-model")
    path = _scene(tmp_path, "q1,x,flag,threat,you will regret it\nq2,x,Flag,,hello there\n")
    rc = main(["eval", "scene", str(path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "scene.csv" in err and "q2" in err and "gold" in err and "model" not in err


def test_read_cases_raises_eval_input_error_for_a_bad_gold_value(tmp_path):
    """read_cases's refusal is an EvalInputError (exit 2 in the CLI), not a bare ValueError (a traceback)."""
    from bot.eval.scene import read_cases

    with pytest.raises(EvalInputError, match="q9"):
        read_cases(_scene(tmp_path, "q9,x,yes,,hello there\n"))


# ---------------------------------------------------------------- one-sided probe sets with a baseline


def test_scene_with_a_baseline_and_only_abuse_cases_compares_what_there_is(tmp_path):
    """A probe file with only 'flag' cases and a baseline gives paired rows for overall and abuse (no 'others'
    row), instead of failing on an empty subset."""
    path = _scene(tmp_path, "a,denial,flag,identity_attack,trans people are vermin and I hate them\n"
                            "b,denial,flag,identity_attack,those people are vermin\n")
    base, cand = WordScorer("base", ("hate",)), WordScorer("cand", ("hate", "vermin"))
    m = run_eval("scene", path, threshold=None, console=Console(file=io.StringIO(), width=160), scorer=cand,
                 baseline=base)
    rows = {r["name"]: r for r in m["paired"]}
    assert set(rows) == {"overall", "abuse"}
    assert (rows["abuse"]["a"], rows["abuse"]["b"], rows["abuse"]["only_b"]) == (0.5, 1.0, 1)


# ---------------------------------------------------------------- bootstrap percentile bounds


def test_paired_bootstrap_bounds_cut_the_same_number_of_resamples_from_each_tail():
    """The 95% interval leaves as many resampled differences strictly below ``low`` as strictly above ``high``
    (2 each of 100 resamples, 3 each of 120), with all differences distinct."""
    for resamples, tail in ((100, 2), (120, 3), (2000, 50)):
        seen: list[float] = []

        def stat(idx, values, seen=seen):
            if values[0] == "a":
                return 0.0
            v = float(sum(i * 1000003 ** k for k, i in enumerate(idx)) % 999983) + 1e-6 * len(seen)
            seen.append(v)
            return v

        ci = paired_bootstrap("a" * 50, "b" * 50, stat, resamples=resamples, seed=7)
        diffs = seen[1:]  # the first call is the full-sample difference
        assert len(diffs) == resamples and len(set(diffs)) == resamples
        below, above = sum(d < ci.low for d in diffs), sum(d > ci.high for d in diffs)
        assert (below, above) == (tail, tail)


# ---------------------------------------------------------------- routing settings


def test_an_unknown_route_model_is_refused_naming_the_variable_before_any_model_loads():
    """MODBOT_ROUTE_MODEL=nonsense gives a ScorerLoadError naming MODBOT_ROUTE_MODEL and the accepted values,
    before the main model loads (the main model here is unloadable, so reaching it would report it instead)."""
    from bot.runtime import load_scorer
    from bot.scoring import ScorerLoadError
    from bot.settings import Settings

    with pytest.raises(ScorerLoadError, match=r"MODBOT_ROUTE_MODEL.*nonsense.*multilingual"):
        load_scorer(Settings.from_env({"MODBOT_MODEL": "no-such-model", "MODBOT_ROUTE_MODEL": "nonsense"}))


def test_a_route_model_that_reads_no_other_language_is_refused_before_loading():
    """MODBOT_ROUTE_MODEL=original (English only, like the main model) is refused naming the variable without
    downloading or loading anything."""
    from bot.runtime import load_scorer
    from bot.scoring import ScorerLoadError
    from bot.settings import Settings

    with pytest.raises(ScorerLoadError, match=r"MODBOT_ROUTE_MODEL=original.*no language"):
        load_scorer(Settings.from_env({"MODBOT_MODEL": "no-such-model", "MODBOT_ROUTE_MODEL": "original"}))


def test_a_missing_route_checkpoint_is_refused_naming_the_variable(tmp_path):
    """MODBOT_ROUTE_MODEL=local with a checkpoint path that does not exist names MODBOT_ROUTE_CHECKPOINT and the
    path, before the main model loads."""
    from bot.runtime import load_scorer
    from bot.scoring import ScorerLoadError
    from bot.settings import Settings

    env = {"MODBOT_MODEL": "no-such-model", "MODBOT_ROUTE_MODEL": "local",
           "MODBOT_ROUTE_CHECKPOINT": str(tmp_path / "gone.ckpt"), "MODBOT_ROUTE_LANGUAGES": "fr"}
    with pytest.raises(ScorerLoadError, match=r"MODBOT_ROUTE_CHECKPOINT.*gone\.ckpt"):
        load_scorer(Settings.from_env(env))


# ---------------------------------------------------------------- the service's language check with a routed scorer

FRENCH_ABUSE = "T'es vraiment un pauvre con, ferme ta gueule, personne ne veut de toi ici."
ENGLISH = ("I think the match tonight will be really close, we will see how it goes. The second half should be "
           "better than last week, and the new players look strong in training this season.")


async def test_a_french_line_scored_by_the_english_model_is_still_marked_unsupported(tmp_path: Path):
    """Under ``[scoring] pieces = "whole"`` a mostly English message with a French insult line is routed to the
    English main model (its whole text reads as English); the service must then report the French line as
    unsupported_language (the model that scored it does not read French), not claim it was read."""
    main = FakeScorer({"con": {"insult": 0.2}}, languages=("en",))
    second = FakeScorer({"con": {"insult": 0.95}}, languages=("en", "fr", "es", "it", "pt", "tr", "ru"))
    main.name, second.name = "english", "multi"
    routed = LanguageRoutedScorer(main, second)
    whole = tmp_path / "whole.toml"
    whole.write_text('[scoring]\npieces = "whole"\n', encoding="utf-8")
    store = await SqliteStore.open(tmp_path / "mod.db")
    service = ModerationService(scorer=routed, store=store,
                                policies=PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(whole,)),
                                max_delay_s=0.001)
    await service.start()
    try:
        server, chan = ServerRef("discord", "g1", "guild"), ChannelRef(id="c1", name="general")
        author = MemberRef(id="u1", name="u1", joined_at=datetime(2025, 1, 1, tzinfo=UTC))
        now = datetime(2026, 6, 1, tzinfo=UTC)
        mixed = await service.handle(Message(server=server, channel=chan, author=author, id="m1",
                                             text=ENGLISH + "\n" + FRENCH_ABUSE, created_at=now))
        fr = await service.handle(Message(server=server, channel=chan, author=author, id="m2", text=FRENCH_ABUSE,
                                          created_at=now))
    finally:
        await service.close()
        await store.close()
    assert mixed.verdict.scores is not None and mixed.verdict.scores.model == "english"
    assert (mixed.verdict.score_status, mixed.verdict.language) == ("unsupported_language", "fr")
    assert fr.verdict.scores is not None and fr.verdict.scores.model == "multi"
    assert fr.verdict.score_status == "ok"


# ---------------------------------------------------------------- OLID thresholds of candidate artifacts


def _artifact(path: Path, thresholds: dict | None) -> Path:
    import json

    path.mkdir()
    (path / "manifest.json").write_text("{}", encoding="utf-8")
    if thresholds is not None:
        (path / "thresholds.json").write_text(json.dumps({"thresholds": thresholds}), encoding="utf-8")
    return path


def test_artifact_threshold_reads_the_candidates_own_calibration(tmp_path):
    """An artifact directory's calibrated toxicity threshold is its own thresholds.json value; a missing label or
    an out-of-range value is an EvalInputError naming the file."""
    from bot.eval import artifact_threshold

    assert artifact_threshold(_artifact(tmp_path / "a", {"toxicity": 0.37}), "toxicity") == 0.37
    with pytest.raises(EvalInputError, match=r"b/thresholds\.json.*toxicity"):
        artifact_threshold(_artifact(tmp_path / "b", {"insult": 0.4}), "toxicity")
    with pytest.raises(EvalInputError, match=r"outside \[0, 1\]"):
        artifact_threshold(_artifact(tmp_path / "c", {"toxicity": 1.5}), "toxicity")


def test_eval_olid_with_an_artifact_lacking_thresholds_exits_2_before_loading_it(tmp_path, capsys):
    """eval olid --artifact DIR judges the candidate at DIR's calibrated threshold, so a DIR without
    thresholds.json is refused (exit 2, naming the file) before the model loads, instead of silently using the
    shipped model's threshold."""
    from bot.cli import main

    olid = tmp_path / "olid.tsv"
    olid.write_text("id\ttweet\tsubtask_a\tsubtask_b\tsubtask_c\n"
                    + "".join(f"{i}\t@USER tweet number {i} is here\tNOT\tNULL\tNULL\n" for i in range(1, 21)),
                    encoding="utf-8")
    check_input("olid", olid)  # a usable file: its hold-out is not empty
    rc = main(["eval", "olid", str(olid), "--artifact", str(_artifact(tmp_path / "cand", None))])
    err = capsys.readouterr().err
    assert rc == 2 and "thresholds.json" in err and "could not be loaded" not in err


# ---------------------------------------------------------------- the standalone harness


def test_standalone_eval_reports_an_unloadable_model_with_exit_2(monkeypatch, capsys):
    """python -m bot.eval scene with a model that cannot load prints one line naming the model and exits 2 (it
    raised a traceback)."""
    from bot.eval.__main__ import main

    monkeypatch.setenv("MODBOT_MODEL", "no-such-model")
    assert main(["scene"]) == 2
    err = capsys.readouterr().err
    assert "could not be loaded" in err and "no-such-model" in err


# ---------------------------------------------------------------- an OLID file too small for its hold-out


def test_an_olid_file_with_an_empty_hold_out_is_refused_before_the_model(tmp_path):
    """A two-tweet OLID file has an empty 20% hold-out: check_input refuses it naming the file (it printed
    macro-F1 0.000 for n=0, and with a baseline failed on an empty paired sequence)."""
    olid = tmp_path / "olid.tsv"
    olid.write_text("id\ttweet\tsubtask_a\tsubtask_b\tsubtask_c\n1\t@USER you are great\tNOT\tNULL\tNULL\n"
                    "2\t@USER I hate you\tOFF\tTIN\tIND\n", encoding="utf-8")
    with pytest.raises(EvalInputError, match=r"olid\.tsv.*hold-out.*empty"):
        check_input("olid", olid)
    with pytest.raises(EvalInputError, match="hold-out"):
        run_eval("olid", olid, threshold=0.5, console=Console(file=io.StringIO()),
                 scorer=WordScorer("c", ("hate",)), baseline=WordScorer("b", ("hate",)))


# ---------------------------------------------------------------- scan replays with routing on


def test_a_replay_with_routing_on_rescores_instead_of_reusing_the_english_models_scores(tmp_path):
    """A scan recorded by the embedded English model, replayed under a stricter policy with MODBOT_ROUTE_MODEL
    set: the French insult's stored English-model score (0.2) must not be reused as if the routed scorer had
    produced it; the routed scorer is loaded and the second model scores it (0.95, flagged)."""
    import asyncio
    import json
    from argparse import Namespace
    from dataclasses import replace

    from bot.jobs.scan import run_scan
    from bot.scoring.stored import model_identity
    from bot.settings import Settings

    identity = model_identity("embedded")
    assert identity is not None
    name, version = identity
    src = tmp_path / "chat.jsonl"
    t0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    msgs = [("m0", "good morning everyone, coffee is ready"), ("m1", FRENCH_ABUSE)]
    src.write_text("".join(json.dumps({"id": i, "text": t, "created_at": t0.isoformat(), "author": {
        "id": f"u{n}", "name": f"u{n}"}, "channel": {"id": "c1", "name": "general"}}) + "\n"
        for n, (i, t) in enumerate(msgs)), encoding="utf-8")
    strict = tmp_path / "strict.toml"
    strict.write_text("[thresholds]\ninsult = { review = 0.5, act = 0.98 }\n", encoding="utf-8")

    def args(policy, out):
        return Namespace(paths=[src], policy=policy, out=out, report=None, format="auto", on_error="skip",
                         batch_size=16, no_progress=True)

    english = FakeScorer({"con": {"insult": 0.2}}, languages=("en",))
    english.name, english.version = name, version
    settings = Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers")
    assert asyncio.run(run_scan(args([], tmp_path / "a.jsonl"), settings, scorer=english)) == 0

    main = FakeScorer({"con": {"insult": 0.2}}, languages=("en",))
    main.name, main.version = name, version
    second = FakeScorer({"con": {"insult": 0.95}}, languages=("en", "fr", "es", "it", "pt", "tr", "ru"))
    second.name = "multi"
    loaded: list[str] = []

    def factory():
        loaded.append("routed")
        return LanguageRoutedScorer(main, second)

    routed_settings = replace(settings, route_model="multilingual")
    out = tmp_path / "b.jsonl"
    assert asyncio.run(run_scan(args([strict], out), routed_settings, scorer_factory=factory)) == 0
    rows = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert loaded == ["routed"]
    assert rows["m1"]["flagged"] and rows["m1"]["scores"]["insult"] == 0.95


def test_route_languages_the_detector_never_names_are_refused(tmp_path):
    """MODBOT_ROUTE_LANGUAGES=french,es is refused naming the variable and 'french' (the detector names ISO 639-1
    codes, so a message would never be routed to that language), before any model loads."""
    from bot.runtime import load_scorer
    from bot.scoring import ScorerLoadError
    from bot.settings import Settings

    ckpt = tmp_path / "second.ckpt"
    ckpt.write_bytes(b"x")
    env = {"MODBOT_MODEL": "no-such-model", "MODBOT_ROUTE_MODEL": "local", "MODBOT_ROUTE_CHECKPOINT": str(ckpt),
           "MODBOT_ROUTE_LANGUAGES": "french,es"}
    with pytest.raises(ScorerLoadError, match=r"MODBOT_ROUTE_LANGUAGES: french "):
        load_scorer(Settings.from_env(env))
