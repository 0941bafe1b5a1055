"""A scoring service that answers nonsense (fifteenth session's break-it pass): the bot's remote scorer over real
HTTP against a small stand-in service (``http.server`` in a thread), judged by a real runtime on real SQLite."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.runtime import Runtime
from bot.settings import Settings

MODEL = {"name": "odd-model", "version": "1", "labels": ["toxicity", "severe_toxicity", "obscene", "threat", "insult",
                                                         "identity_attack", "sexual_explicit"], "languages": ["en"]}


def _stand_in(score_body: bytes) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self._send(json.dumps(MODEL).encode())

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self._send(score_body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _scores(value: str) -> bytes:
    per = ", ".join(f'"{label}": {value if label == "insult" else "0.01"}' for label in MODEL["labels"])
    return ('{"model": "odd-model", "version": "1", "labels": ' + json.dumps(MODEL["labels"])
            + ', "missing": [], "scores": [{' + per + "}]}").encode()


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-0.5", "1.5", "true"])
async def test_scores_outside_0_1_from_the_service_are_a_scorer_error_not_a_clean_verdict(tmp_path, value):
    """A service (a broken replica, the wrong URL behind a load balancer) answering ``"insult": NaN`` for an insult
    gave a verdict with a NaN score, which is under every threshold: the message passed as clean and NaN was
    stored as its score. Infinity, negative scores, scores above 1 and booleans were taken as scores too. Such an
    answer is a scorer error: the policy's on_scorer_error applies (default: review, score_status
    scorer_error), and no made-up score is recorded."""
    server, url = _stand_in(_scores(value))
    try:
        rt = await Runtime.open(Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers", scorer_url=url,
                                         scorer_timeout_s=2.0), enforce=False)
        try:
            msg = Message(server=ServerRef("discord", "1", "g"), channel=ChannelRef("2", "chat"),
                          author=MemberRef("u1", "member"), id="m1", text="you are an idiot",
                          created_at=datetime.now(UTC))
            out = await rt.service.submit(msg)
        finally:
            await rt.close()
    finally:
        server.shutdown()
    assert out.verdict.score_status == "scorer_error"
    assert out.verdict.flagged and out.review_id is not None
    assert out.verdict.scores is None or all(0 <= v <= 1 for v in out.verdict.scores.values.values())
