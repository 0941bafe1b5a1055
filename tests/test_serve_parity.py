"""The scoring service and the bots judge alike: what ``python -m bot serve`` answers (its native endpoint, the bot's
remote scorer through it, a scan's replay through it) against the same bot scoring in process. Real HTTP to the
service in a subprocess on port 0 (:mod:`tests.serve_proc`), the keyword fakes of :mod:`tests.serve_scorers`."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from datetime import UTC, datetime

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.pieces import score_texts
from tests.serve_proc import start_service
from tests.serve_scorers import routed
from tests.test_breakit32_remote import ENGLISH, FRENCH_LINE, _verdicts
from tests.test_serve import _ready


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def test_native_score_checks_languages_against_the_routed_model_as_the_bot_does(tmp_path):
    """A service routing French to a second model checked every ``/v1/score`` text against both models' languages
    together: an English message whose French line the English model scored (the line quoted, after a colon, or too
    short for a sentence piece, so the routing does not see it) was ``ok``, where the bot in process, checking it
    against the languages of the model it is routed to, records ``unsupported_language`` (``fr``) and, under the
    default ``review_suspect``, sends it to review when a label reaches 0.5. The service answers as the bot judges
    now; a message routed to the French model stays ``ok``."""
    texts = [f"{ENGLISH}\n> {FRENCH_LINE}", f"he posted this in the other channel yesterday:\n{FRENCH_LINE}\n{ENGLISH}",
             f"{ENGLISH}\nMesdames, messieurs, bienvenue!", f"{ENGLISH}\n{FRENCH_LINE}"]
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        answer = _post(svc.url + "/v1/score", {"texts": texts, "policy": "default"})
    finally:
        svc.stop()
    in_process = asyncio.run(_verdicts(routed(), tmp_path / "local", texts))
    assert [(r["score_status"], r["language"]) for r in answer["results"]] == [
        ("unsupported_language", "fr")] * 3 + [("ok", None)]
    assert [(r["score_status"], r["language"]) for r in answer["results"]] == [(s, lang) for s, lang, _ in in_process]


def _scan_args(paths, *, policy=(), out=None, report=None):
    from argparse import Namespace

    return Namespace(paths=list(paths), policy=list(policy), out=out, report=report, format="auto", on_error="skip",
                     batch_size=16, no_progress=True)


def test_a_replay_through_a_scoring_service_judges_by_the_services_model(tmp_path):
    """A mod log first scanned in process by the embedded model, then scanned again under a stricter policy through a
    scoring service (``MODBOT_SCORER_URL``) that serves another model: the replay took the model the local settings
    name (the embedded one, ``MODBOT_MODEL``, which the bot does not load once a service is set) for the model that
    scores, reused its stored scores and recorded the replay as judged by it, without asking the service: "what a
    moron" (insult 0.6 from the in-process model) newly flagged, where the service's model scores it 0.01 and a scan
    through the service flags nothing. The replay asks the service which model it serves and reuses only that
    model's stored scores."""
    from bot.jobs.scan import run_scan
    from bot.scoring.stored import model_identity
    from bot.settings import Settings
    from tests.fakes import FakeScorer
    from tests.test_replay import RULES, STRICT, _export, _policy, _rows

    src = _export(tmp_path)
    embedded = model_identity("embedded")
    assert embedded is not None
    in_process = FakeScorer(RULES)  # recorded as the embedded model records its scans
    in_process.name, in_process.version = embedded
    settings = Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers")
    assert asyncio.run(run_scan(_scan_args([src]), settings, scorer=in_process)) == 0

    (tmp_path / "svc").mkdir()
    svc = start_service(tmp_path / "svc")
    try:
        asyncio.run(_ready(svc.url))
        remote = Settings(db_path=settings.db_path, servers_dir=settings.servers_dir, scorer_url=svc.url)
        strict = _policy(tmp_path, "strict.toml", STRICT)
        assert asyncio.run(run_scan(_scan_args([src], policy=[strict], out=tmp_path / "b.jsonl"), remote)) == 0
    finally:
        svc.stop()
    rows = _rows(tmp_path / "b.jsonl")
    assert rows["m4"]["scores"]["insult"] == 0.01 and not rows["m4"]["flagged"]
    import sqlite3

    with sqlite3.connect(settings.db_path) as db:
        models = set(db.execute("SELECT model_name, model_version FROM replay_verdicts").fetchall())
    assert models == {("fake-served", "served-1")}


def test_a_finished_scan_run_again_through_a_scoring_service_reports_the_services_model(tmp_path):
    """A scan through a scoring service, run again over the same export once every message is recorded (nothing to
    score): its report named the embedded model of the local settings ("embedded-minilm-v1 ..."), not the model the
    service served and that judged every message."""
    from bot.jobs.scan import run_scan
    from bot.settings import Settings
    from tests.test_replay import _export

    src = _export(tmp_path)
    (tmp_path / "svc").mkdir()
    svc = start_service(tmp_path / "svc")
    try:
        asyncio.run(_ready(svc.url))
        settings = Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers", scorer_url=svc.url)
        assert asyncio.run(run_scan(_scan_args([src], report=tmp_path / "a.html"), settings)) == 0
        assert asyncio.run(run_scan(_scan_args([src], report=tmp_path / "b.html"), settings)) == 0
    finally:
        svc.stop()
    first, again = ((tmp_path / name).read_text(encoding="utf-8") for name in ("a.html", "b.html"))
    assert "fake-served served-1" in first
    assert "fake-served served-1" in again and "embedded-minilm-v1" not in again


def test_a_bot_started_before_its_service_checks_languages_against_the_services_model(tmp_path):
    """A bot may start before its scoring service (``RemoteScorer.connect`` then learns nothing, and scoring retries
    until the service answers). Its language check ran before the first answer, against the English it assumes
    until then, so the first French messages scored by a service whose model reads French were recorded
    ``unsupported_language`` (and, under the default ``review_suspect``, sent to review when a label reached 0.5),
    where the same bot with that model in process, or once the service had answered, records them ``ok``."""
    from tests.serve_scorers import bilingual

    texts = [f"{FRENCH_LINE}. Tu es un idiot, vraiment un idiot, tout le monde le sait ici.", ENGLISH]
    svc = start_service(tmp_path, scorer="tests.serve_scorers:bilingual")
    try:
        asyncio.run(_ready(svc.url))
        from bot.scoring.remote import RemoteScorer

        first = asyncio.run(_verdicts(RemoteScorer(svc.url), tmp_path / "remote", texts))
    finally:
        svc.stop()
    in_process = asyncio.run(_verdicts(bilingual(), tmp_path / "local", texts))
    assert in_process == [("ok", None, "fake-served")] * 2
    assert first == in_process


def test_native_score_counts_visible_characters_toward_max_chars_as_the_bot_does(tmp_path):
    """Under a policy that reads 4,000 characters (``[scoring] max_chars``), a 3,000-character message padded with
    2,000 zero-width spaces was answered ``truncated`` by ``/v1/score``, which counted every character, where the bot
    counts visible ones (zero-width padding neither hides words nor makes a message "truncated") and records it
    ``ok``; a message of 5,000 visible characters is ``truncated`` both ways."""
    (tmp_path / "short.toml").write_text("[scoring]\nmax_chars = 4000\n", encoding="utf-8")
    padded = "\u200b".join("see you at the meetup tomorrow " * 100)[:5000]
    visible = padded.replace("\u200b", "")
    long = "see you at the meetup tomorrow " * 170
    assert len(padded) > 4000 > len(visible) and len(long) > 4000
    (tmp_path / "svc").mkdir()
    svc = start_service(tmp_path / "svc", "--policy", f"short={tmp_path / 'short.toml'}")
    try:
        asyncio.run(_ready(svc.url))
        answer = _post(svc.url + "/v1/score", {"texts": [padded, long], "policy": "short"})
    finally:
        svc.stop()
    from tests.serve_scorers import fake

    in_process = asyncio.run(_verdicts(fake(), tmp_path / "local", [padded, long], tmp_path / "short.toml"))
    assert [r["score_status"] for r in answer["results"]] == ["ok", "truncated"]
    assert [r["score_status"] for r in answer["results"]] == [s for s, _, _ in in_process]


def test_analyze_scores_a_comment_in_a_stated_language_with_the_model_that_reads_it(tmp_path):
    """A service routing French to a second model (``MODBOT_ROUTE_MODEL``) routes by the language detector, which
    does not call short text anything. A Perspective client that states the comment's language (``"languages":
    ["fr"]``, as a French forum's plugin does) got its short French comments scored by the English model, which does
    not read French (here: insult 0.88, the English model's keyword score), under an answer saying ``"languages":
    ["fr"]``. A stated language the main model does not read now sends the comment (and its spans) to the model
    that reads it, as Perspective scores a comment in the language it is given; without ``languages`` the detector
    decides as before."""
    def analyze(url: str, text: str, languages: list[str]) -> dict:
        return _post(url + "/v1alpha1/comments:analyze", {"comment": {"text": text}, "languages": languages,
                                                          "requestedAttributes": {"INSULT": {}},
                                                          "spanAnnotations": True})

    short = "t'es un idiot"
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        stated = analyze(svc.url, short, ["fr"])
        detected = analyze(svc.url, short, [])
        english = analyze(svc.url, short, ["en"])
    finally:
        svc.stop()
    french_model = routed().second.score_batch([short])[0].values["insult"]
    insult = stated["attributeScores"]["INSULT"]
    assert stated["languages"] == ["fr"]
    assert insult["summaryScore"]["value"] == french_model == 0.2
    assert [s["score"]["value"] for s in insult["spanScores"]] == [french_model]
    assert detected["attributeScores"]["INSULT"]["summaryScore"]["value"] == 0.88  # the detector calls it nothing
    assert english["attributeScores"]["INSULT"]["summaryScore"]["value"] == 0.88


def test_analyze_scores_the_spans_of_a_routed_comment_with_the_comments_model(tmp_path):
    """A French comment on a service routing French to a second model is scored by that model, but its sentences
    (``spanAnnotations``) were each routed alone: a short French sentence, which the detector calls nothing, went
    to the English model, so one answer mixed two models' scores (here the English model's keyword score 0.88 for a
    span of a comment whose summary the French model scored 0.2), where the bots score a message's sentences with
    the model its whole text is routed to. The spans of a comment are now scored by the comment's model."""
    text = f"{FRENCH_LINE}. T'es un idiot."
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        answer = _post(svc.url + "/v1alpha1/comments:analyze", {"comment": {"text": text}, "spanAnnotations": True,
                                                                "requestedAttributes": {"INSULT": {}}})
    finally:
        svc.stop()
    insult = answer["attributeScores"]["INSULT"]
    assert answer["detectedLanguages"] == ["fr"]
    assert insult["summaryScore"]["value"] == 0.2
    assert [s["score"]["value"] for s in insult["spanScores"]] == [0.2, 0.2]


def test_a_replay_from_stored_scores_still_checks_languages(tmp_path):
    """A replay under a looser policy re-judges every message from its stored scores, with a scorer that only
    carries the model's name: it declared no languages, so the language check was skipped and a French message
    the model cannot read (recorded ``unsupported_language`` and sent to review by the default ``review_suspect``,
    its insult 0.88 over 0.5) was replayed ``ok`` and "no longer flagged", where a scan under that policy keeps
    it in review. Through a scoring service the replay now reuses the service's stored scores (and so met this);
    the stored-scores scorer reads the languages of the model that produced them."""
    import sqlite3

    from bot.jobs.scan import run_scan
    from bot.settings import Settings
    from tests.test_replay import LOOSE, _policy, _rows

    lines = [{"id": "m0", "text": "good morning everyone, how are you all doing today?"},
             {"id": "m1", "text": f"{FRENCH_LINE}, espèce d'idiot"}]
    src = tmp_path / "chat.jsonl"
    src.write_text("".join(json.dumps({**x, "created_at": f"2026-03-01T12:0{n}:00+00:00", "author": {"id": f"u{n}"},
                                       "channel": {"id": "c1"}}) + "\n" for n, x in enumerate(lines)),
                   encoding="utf-8")
    loose = _policy(tmp_path, "loose.toml", LOOSE)
    (tmp_path / "svc").mkdir()
    svc = start_service(tmp_path / "svc")
    try:
        asyncio.run(_ready(svc.url))
        settings = Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers", scorer_url=svc.url)
        assert asyncio.run(run_scan(_scan_args([src], out=tmp_path / "a.jsonl"), settings)) == 0
        assert asyncio.run(run_scan(_scan_args([src], policy=[loose], out=tmp_path / "b.jsonl"), settings)) == 0
        fresh = Settings(db_path=tmp_path / "fresh.db", servers_dir=tmp_path / "servers", scorer_url=svc.url)
        assert asyncio.run(run_scan(_scan_args([src], policy=[loose], out=tmp_path / "c.jsonl"), fresh)) == 0
    finally:
        svc.stop()
    first, replayed, scanned = (_rows(tmp_path / f"{n}.jsonl")["m1"] for n in "abc")
    assert (first["score_status"], first["language"], first["flagged"]) == ("unsupported_language", "fr", True)
    assert (scanned["score_status"], scanned["flagged"], scanned["action"]) == ("unsupported_language", True, "review")
    assert {k: replayed[k] for k in ("score_status", "language", "flagged", "action")} == {
        k: scanned[k] for k in ("score_status", "language", "flagged", "action")}
    with sqlite3.connect(tmp_path / "mod.db") as db:
        assert db.execute("SELECT flagged FROM replay_verdicts WHERE message_id = 'm1'").fetchone() == (1,)


def test_analyze_scores_a_comment_detected_in_a_routed_language_with_the_model_that_reads_it(tmp_path):
    """The language detector calls a French chat line with emoji French (``detectedLanguages: ["fr"]``, and the
    answer's ``languages``), but the routing reads the normalised text, where each emoji is spelt out in English
    words ("fire fire fire fire ... hundred points ..."), and sent it to the English model: a French comment scored
    by a model that does not read French under an answer saying it was read as French (a service without the French
    model refuses it, ``LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE``). The language the answer names now picks the model,
    as a stated one does."""
    text = "Salut les amis 🔥🔥🔥🔥 trop bien 💯💯💯 ce soir 😂😂😂😂"
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        answer = _post(svc.url + "/v1alpha1/comments:analyze", {"comment": {"text": text},
                                                                "requestedAttributes": {"INSULT": {}}})
    finally:
        svc.stop()
    assert (answer["languages"], answer["detectedLanguages"]) == (["fr"], ["fr"])
    assert answer["attributeScores"]["INSULT"]["summaryScore"]["value"] == 0.2  # the French model's


def test_each_message_names_the_labels_its_own_model_lacks_through_a_routing_service(tmp_path):
    """A service routing French to a second model, whose two models lack different labels (the English one
    ``threat``, the French one ``sexual_explicit``): ``/v1/model:score`` answered one ``missing`` list for the whole
    request, the first text's, and the bot's remote scorer gave it to every message: a French message batched after
    an English one was said to lack ``threat`` (which its model scored) and not ``sexual_explicit`` (which it lacks).
    The answer now names the labels each text's (each plan's) model lacks, the remote scorer reads them per message,
    and every message's scores say what the bot scoring in process says."""
    from bot.runtime import Runtime
    from bot.settings import Settings
    from tests.serve_scorers import routed_apart_labels

    texts = ["you are an idiot, honestly", f"{FRENCH_LINE}, franchement", "see you all at the meetup tomorrow",
             f"{FRENCH_LINE}. Bonne soirée à tous"]
    svc = start_service(tmp_path, scorer="tests.serve_scorers:routed_apart_labels")
    try:
        asyncio.run(_ready(svc.url))
        plain = _post(svc.url + "/v1/model:score", {"texts": [texts[1], texts[0]]})

        async def remote() -> list[tuple[tuple[str, ...], str]]:
            rt = await Runtime.open(Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers",
                                             scorer_url=svc.url), enforce=False)
            try:
                server, chan = ServerRef("discord", "g1", "guild"), ChannelRef(id="c1", name="general")
                outs = await asyncio.gather(*(rt.service.submit(Message(
                    server=server, channel=chan, author=MemberRef(id=f"u{n}", name=f"u{n}"), id=f"m{n}", text=text,
                    created_at=datetime(2026, 6, 1, tzinfo=UTC))) for n, text in enumerate(texts)))
            finally:
                await rt.close()
            return [(o.verdict.scores.missing, o.verdict.scores.model) for o in outs if o.verdict.scores]

        through_service = asyncio.run(remote())
    finally:
        svc.stop()
    local = routed_apart_labels()
    in_process = [(s.missing, s.model) for s in
                  (score_texts(local, [t])[0] for t in texts) if s is not None]
    assert in_process == [(("threat",), "fake-served"), (("sexual_explicit",), "fake-served-fr"),
                          (("threat",), "fake-served"), (("sexual_explicit",), "fake-served-fr")]
    assert through_service == in_process
    assert plain["text_missing"] == [["sexual_explicit"], ["threat"]]
    assert plain["missing"] == ["threat", "sexual_explicit"]  # for older bots: what any text's model lacks


def test_a_french_message_full_of_emoji_is_scored_by_the_french_model_in_process_and_through_the_service(tmp_path):
    """The routing read the normalised plan, where each emoji is spelt out in English words, so a French chat line
    with emoji was not confidently French there, while the language check on the raw text calls it French (0.94):
    it was scored by the English model and recorded ``unsupported_language`` (``fr``), under the default
    ``review_suspect`` a review, although the French model was configured. A message whose raw text is confidently
    in one of the second model's languages is now routed to it, in process, through the bot's remote scorer and on
    ``/v1/score`` alike."""
    from bot.scoring.remote import RemoteScorer

    texts = ["Salut les amis 🔥🔥🔥🔥 trop bien 💯💯💯 ce soir 😂😂😂😂", "you are an idiot", ENGLISH,
             f"{ENGLISH}\n> {FRENCH_LINE}"]
    (tmp_path / "svc").mkdir()
    svc = start_service(tmp_path / "svc", scorer="tests.serve_scorers:routed")
    try:
        asyncio.run(_ready(svc.url))
        through_service = asyncio.run(_verdicts(RemoteScorer.connect(svc.url), tmp_path / "remote", texts))
        native = _post(svc.url + "/v1/score", {"texts": texts, "policy": "default"})
    finally:
        svc.stop()
    in_process = asyncio.run(_verdicts(routed(), tmp_path / "local", texts))
    assert in_process == [("ok", None, "fake-served-fr"), ("ok", None, "fake-served"), ("ok", None, "fake-served"),
                          ("unsupported_language", "fr", "fake-served")]
    assert through_service == in_process
    assert [(r["score_status"], r["language"]) for r in native["results"]] == [(s, lang) for s, lang, _ in in_process]
    assert native["results"][0]["scores"]["insult"] == 0.2  # the French model's
