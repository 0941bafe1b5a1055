"""Routing messages the main model does not read to a second model (detoxify ``multilingual``): the real offline
language detector, fake scorers, the real moderation service and SQLite; and loading a routed scorer."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.pieces import score_plans, scoring_pieces
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.scoring.routing import LanguageRoutedScorer
from bot.store.sqlite import SqliteStore
from tests.fakes import FakeScorer

FRENCH_ABUSE = "T'es vraiment un pauvre con, ferme ta gueule, personne ne veut de toi ici."
GERMAN = "Ich glaube, das Spiel heute Abend wird wirklich spannend, wir werden sehen."
ENGLISH = "I think the match tonight will be really close, we will see how it goes."


def _pair():
    main = FakeScorer({"con": {"insult": 0.2}}, languages=("en",))
    second = FakeScorer({"con": {"insult": 0.95}}, languages=("en", "fr", "es", "it", "pt", "tr", "ru"))
    main.name, second.name = "english", "multi"
    return main, second, LanguageRoutedScorer(main, second)


def test_routed_scorer_declares_both_models_languages_and_refuses_a_useless_second_model():
    """languages = main's then the second's others; a second model with no extra language is refused."""
    main, second, routed = _pair()
    assert routed.languages == ("en", "fr", "es", "it", "pt", "tr", "ru")
    assert routed.name == "english+multi"
    with pytest.raises(ValueError, match="reads no language"):
        LanguageRoutedScorer(main, FakeScorer(languages=("en",)))
    with pytest.raises(ValueError, match="declare"):
        LanguageRoutedScorer(main, FakeScorer(languages=None))


def test_a_french_message_is_scored_whole_by_the_second_model():
    """score_plans sends every piece of the French message to the second model and the English one to the main
    model; German (read by neither) stays with the main model."""
    main, second, routed = _pair()
    plans = [scoring_pieces(t) for t in (FRENCH_ABUSE, ENGLISH, GERMAN)]
    out = score_plans(routed, plans)
    assert out[plans[0]].model == "multi" and out[plans[0]].get("insult") == 0.95
    assert out[plans[1]].model == "english" and out[plans[2]].model == "english"
    assert all(t in plans[0] for call in second.calls for t in call)
    assert not any(t in plans[0] for call in main.calls for t in call)


def test_score_batch_routes_each_text_alone():
    """Without plans, each text goes to the model that reads it; order is kept."""
    _, _, routed = _pair()
    out = routed.score_batch([ENGLISH, FRENCH_ABUSE, ENGLISH])
    assert [s.model for s in out] == ["english", "multi", "english"]


async def test_service_routes_french_abuse_and_records_the_model_that_read_it(tmp_path: Path):
    """End to end: the French insult is read by the second model (scored 0.95, acted on), its verdict is not
    marked unsupported_language and names the second model; German is still unsupported_language."""
    _, _, routed = _pair()
    store = await SqliteStore.open(tmp_path / "mod.db")
    service = ModerationService(scorer=routed, store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                                max_delay_s=0.001)
    await service.start()
    try:
        server, chan = ServerRef("discord", "g1", "guild"), ChannelRef(id="c1", name="general")
        author = MemberRef(id="u1", name="u1", joined_at=datetime(2025, 1, 1, tzinfo=UTC))
        now = datetime(2026, 6, 1, tzinfo=UTC)
        fr = await service.handle(Message(server=server, channel=chan, author=author, id="m1", text=FRENCH_ABUSE,
                                          created_at=now))
        de = await service.handle(Message(server=server, channel=chan, author=author, id="m2", text=GERMAN,
                                          created_at=now))
    finally:
        await service.close()
    assert fr.verdict.score_status == "ok" and fr.verdict.flagged and "insult" in fr.verdict.labels
    assert fr.verdict.scores is not None and fr.verdict.scores.model == "multi"
    assert (de.verdict.score_status, de.verdict.language) == ("unsupported_language", "de")
    stored = await store.get_verdict("discord", "g1", "m1")
    await store.close()
    assert stored is not None and stored.score_status == "ok"


def test_load_scorer_routes_to_a_local_second_model(tmp_path: Path):
    """MODBOT_ROUTE_MODEL=local with a checkpoint and its languages loads a routed scorer through detoxify (the
    embedded model's assembled checkpoint stands in for a multilingual one); without languages it is refused."""
    from bot.model.artifact import assemble
    from bot.runtime import load_scorer
    from bot.scoring import ScorerLoadError
    from bot.settings import Settings

    built = assemble()
    env = {"MODBOT_ROUTE_MODEL": "local", "MODBOT_ROUTE_CHECKPOINT": str(built.checkpoint),
           "MODBOT_ROUTE_CONFIG_DIR": str(built.config_dir), "MODBOT_ROUTE_LANGUAGES": "fr, ES"}
    scorer = load_scorer(Settings.from_env(env))
    assert isinstance(scorer, LanguageRoutedScorer)
    assert scorer.languages == ("en", "fr", "es") and scorer.second.name.startswith("checkpoint:")
    with pytest.raises(ScorerLoadError, match="MODBOT_ROUTE_LANGUAGES"):
        load_scorer(Settings.from_env({"MODBOT_ROUTE_MODEL": "local", "MODBOT_ROUTE_CHECKPOINT": "x.ckpt"}))


def test_route_settings_without_a_route_model_are_refused_before_loading():
    """MODBOT_ROUTE_LANGUAGES (or a route checkpoint) without MODBOT_ROUTE_MODEL would be silently ignored: it is
    refused naming the variables, before any model loads."""
    from bot.runtime import load_scorer
    from bot.scoring import ScorerLoadError
    from bot.settings import Settings

    with pytest.raises(ScorerLoadError, match="MODBOT_ROUTE_LANGUAGES set without MODBOT_ROUTE_MODEL"):
        load_scorer(Settings.from_env({"MODBOT_ROUTE_LANGUAGES": "fr"}))


def test_a_local_checkpoint_that_is_not_one_gets_no_internet_hint(tmp_path: Path):
    """A local file that is not a checkpoint fails naming the file, without the named-model internet hint."""
    from bot.scoring import ScorerLoadError
    from bot.scoring.detoxify_scorer import DetoxifyScorer

    bad = tmp_path / "not.ckpt"
    bad.write_text("hello", encoding="utf-8")
    with pytest.raises(ScorerLoadError) as info:
        DetoxifyScorer.load("local", checkpoint=bad)
    assert str(bad) in str(info.value) and "internet" not in str(info.value) and ".." not in str(info.value)
