"""The remote scorer (``MODBOT_SCORER_URL``): a bot runtime scoring through a running ``python -m bot serve``
subprocess over real HTTP, its deadline and retries, and ``on_scorer_error`` when the service is away."""

from __future__ import annotations

import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.models import ChannelRef, MemberRef, Message, Scores, ServerRef
from bot.runtime import Runtime
from bot.scoring import ScorerError, ScorerLoadError
from bot.scoring.remote import RemoteScorer
from bot.settings import Settings
from tests.serve_proc import start_service

KEY = "bot-key-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _message(text: str, n: int = 1) -> Message:
    return Message(server=ServerRef(platform="discord", id="1", name="guild"), channel=ChannelRef(id="2", name="chat"),
                   author=MemberRef(id=f"u{n}", name="member"), id=f"m{n}", text=text, created_at=datetime.now(UTC))


def _settings(tmp_path: Path, url: str, **kw) -> Settings:
    return Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers", scorer_url=url, **kw)


async def test_bot_runtime_judges_through_the_service_and_names_its_model(tmp_path):
    """A runtime with MODBOT_SCORER_URL loads no model, flags an insult and records the service's model."""
    svc = start_service(tmp_path, keys=KEY + "\n")
    try:
        rt = await Runtime.open(_settings(tmp_path, svc.url, scorer_key=KEY), enforce=False)
        try:
            assert isinstance(rt.scorer, RemoteScorer)
            assert (rt.scorer.name, rt.scorer.version, rt.scorer.languages) == ("fake-served", "served-1", ("en",))
            bad = await rt.service.submit(_message("you are an idiot", 1))
            fine = await rt.service.submit(_message("see you at the meetup tomorrow", 2))
        finally:
            await rt.close()
    finally:
        svc.stop()
    assert bad.verdict.flagged and "insult" in bad.verdict.labels
    assert bad.verdict.scores is not None and bad.verdict.scores.model == "fake-served"
    assert bad.verdict.scores.values["insult"] == 0.88
    assert not fine.verdict.flagged and fine.verdict.score_status == "ok"


async def test_service_away_applies_on_scorer_error(tmp_path):
    """With nothing listening the call fails within its timeout and the default policy sends the message to
    review (score_status scorer_error), losing nothing."""
    url = f"http://127.0.0.1:{_free_port()}"
    rt = await Runtime.open(_settings(tmp_path, url, scorer_timeout_s=0.5), enforce=False)
    try:
        started = time.monotonic()
        out = await rt.service.submit(_message("you are an idiot"))
        elapsed = time.monotonic() - started
    finally:
        await rt.close()
    assert out.verdict.score_status == "scorer_error"
    assert out.verdict.flagged and out.review_id is not None
    assert elapsed < 3.0


def test_retries_reach_a_service_that_starts_late(tmp_path):
    """A call made before the service listens succeeds once it is up, within the call's deadline."""
    port = _free_port()
    scorer = RemoteScorer(f"http://127.0.0.1:{port}", timeout_s=15.0)
    result: list[list[Scores]] = []
    worker = threading.Thread(target=lambda: result.append(scorer.score_batch(["you idiot", "hello"])))
    worker.start()
    time.sleep(0.3)
    svc = start_service(tmp_path, "--port", str(port))
    try:
        worker.join(timeout=20)
    finally:
        svc.stop()
    assert [s.values["insult"] for s in result[0]] == [0.88, 0.01]
    assert scorer.name == "fake-served"


def test_deadline_bounds_a_slow_service(tmp_path):
    """A service slower than timeout_s gives ScorerError after about timeout_s, not a hung bot."""
    svc = start_service(tmp_path, env={"MODBOT_TEST_BATCH_DELAY_S": "3"})
    try:
        scorer = RemoteScorer(svc.url, timeout_s=0.6)
        started = time.monotonic()
        with pytest.raises(ScorerError, match="scoring service"):
            scorer.score_batch(["hello"])
        assert time.monotonic() - started < 2.0
    finally:
        svc.stop(timeout=30)


def test_wrong_key_is_a_load_error_naming_the_url(tmp_path):
    """A key the service refuses stops the bot at start with the URL and the service's reason (not retried)."""
    svc = start_service(tmp_path, keys=KEY + "\n")
    try:
        with pytest.raises(ScorerLoadError, match=r"MODBOT_SCORER_URL=http://127\.0\.0\.1:\d+: HTTP 400: API key not"):
            RemoteScorer.connect(svc.url, key="wrong-key-000000000000", timeout_s=5)
    finally:
        svc.stop()


def test_settings_name_a_bad_timeout_and_url():
    """MODBOT_SCORER_TIMEOUT_S must be a positive number, MODBOT_SCORER_URL an http(s) URL: errors name them."""
    with pytest.raises(ValueError, match="MODBOT_SCORER_TIMEOUT_S='soon'"):
        Settings.from_env({"MODBOT_SCORER_TIMEOUT_S": "soon"})
    with pytest.raises(ScorerLoadError, match="MODBOT_SCORER_URL='127.0.0.1:8080'"):
        RemoteScorer("127.0.0.1:8080")
    assert Settings.from_env({"MODBOT_SCORER_URL": "http://h:1", "MODBOT_SCORER_TIMEOUT_S": "2.5"}).scorer_timeout_s \
        == 2.5


def test_cli_names_a_bad_runtime_variable_in_one_line():
    """MODBOT_RUNTIME=gpu makes python -m bot score / serve exit 2 with one line naming the variable."""
    import subprocess
    import sys

    from tests.serve_proc import ROOT

    for argv in (["score"], ["serve"]):
        proc = subprocess.run([sys.executable, "-m", "bot", *argv], cwd=ROOT, capture_output=True, text=True,
                              input="", timeout=120,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "MODBOT_RUNTIME": "gpu"})
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith("MODBOT_RUNTIME='gpu': expected one of auto, onnx, torch")
