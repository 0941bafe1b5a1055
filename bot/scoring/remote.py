"""A :class:`bot.core.ports.Scorer` that scores through a running ``python -m bot serve`` (``MODBOT_SCORER_URL``).

Several bot processes (shards, the Slack app beside the Discord bot) then share one loaded model, and several
service replicas behind an HTTP load balancer scale it out (docs/scaling.md). The bot still plans and normalises
each message itself (:func:`bot.core.pieces.scoring_pieces`); the service scores the pieces as given
(``POST /v1/model:score``), so verdicts are the same as with the model in process.

Timeouts and retries: one :meth:`RemoteScorer.score_batch` call has ``timeout_s`` in all (``MODBOT_SCORER_TIMEOUT_S``,
default 10 s); a refused connection, a 429/502/503/504 or a timed-out attempt is retried with backoff (0.1 s,
doubling, or the service's ``Retry-After`` when it fits) while time is left; then :class:`bot.scoring.ScorerError`
is raised and the moderation service applies the policy's ``on_scorer_error``. Another 4xx is not retried.

The verdict names the model the service reports: ``name``/``version``/``labels``/``languages`` are read from
``GET /v1/model`` at start and refreshed from every answer. Standard library only (``urllib``), called from the
moderation service's worker thread (``score_batch`` is synchronous like every scorer's). No torch import.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from bot.core.models import LABELS, Scores
from bot.scoring import ScorerError, ScorerLoadError

log = logging.getLogger(__name__)

#: Texts per ``POST /v1/model:score`` request (the service accepts at most 512).
REQUEST_TEXTS = 256
#: Statuses worth another attempt (the service is busy, draining, or a load balancer found no replica).
RETRY_STATUSES = frozenset({429, 502, 503, 504})
FIRST_BACKOFF_S = 0.1


class RemoteScorer:
    """Scores through the scoring service at ``url``.

    Args:
        url: Base URL of the service (``http://127.0.0.1:8080``); a trailing ``/`` is ignored.
        key: API key, sent as the ``X-Goog-Api-Key`` header (never in the URL, never logged).
        timeout_s: Seconds one ``score_batch`` call may take, retries included (> 0).

    Attributes:
        name / version / labels / languages: As the service reports them (``"remote"``, ``"unknown"``, all
            labels and ``("en",)`` until it has answered once).
        runtime: ``"remote"``.
    """

    runtime = "remote"

    def __init__(self, url: str, *, key: str | None = None, timeout_s: float = 10.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise ScorerLoadError(f"MODBOT_SCORER_URL={url!r}: expected http://host:port or https://...")
        if not timeout_s > 0:
            raise ScorerLoadError("MODBOT_SCORER_TIMEOUT_S must be a positive number of seconds")
        self.url = url.rstrip("/")
        self._key = key
        self.timeout_s = float(timeout_s)
        self.name = "remote"
        self.version = "unknown"
        self.labels: tuple[str, ...] = LABELS
        self.languages: tuple[str, ...] = ("en",)

    def __repr__(self) -> str:
        return f"RemoteScorer({self.url!r}, model={self.name!r})"

    @classmethod
    def connect(cls, url: str, *, key: str | None = None, timeout_s: float = 10.0) -> RemoteScorer:
        """A scorer for ``url`` that has asked the service which model it serves (``GET /v1/model``).

        A service that is not up yet is not an error (bots and service may start in any order): a warning is
        logged and the model's name is learnt from the first answer.

        Raises:
            ScorerLoadError: the URL is malformed, or the service refused the key (400/401/403).
        """
        scorer = cls(url, key=key, timeout_s=timeout_s)
        try:
            scorer._learn(scorer._call("GET", "/v1/model", None, time.monotonic() + min(timeout_s, 5.0)))
        except _Refused as exc:
            raise ScorerLoadError(f"MODBOT_SCORER_URL={scorer.url}: {exc}") from exc
        except ScorerError as exc:
            log.warning("scoring service %s not answering yet (%s); scoring will retry", scorer.url, exc)
        return scorer

    def _learn(self, info: dict[str, Any]) -> None:
        name = info.get("name") or info.get("model")
        if isinstance(name, str) and name:
            self.name = name
        if isinstance(info.get("version"), str):
            self.version = info["version"]
        labels = info.get("labels")
        if isinstance(labels, list) and labels:
            self.labels = tuple(label for label in LABELS if label in labels)
        languages = info.get("languages")
        if isinstance(languages, list):
            self.languages = tuple(str(x) for x in languages)

    def _call(self, method: str, path: str, body: dict[str, Any] | None, deadline: float) -> dict[str, Any]:
        """One request with retries until ``deadline`` (monotonic seconds); the decoded JSON answer.

        Raises:
            _Refused: a 4xx other than 429 (not retried).
            ScorerError: no answer before the deadline (the last reason is named).
        """
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["X-Goog-Api-Key"] = self._key
        backoff = FIRST_BACKOFF_S
        attempt = 0
        while True:
            attempt += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise ScorerError(f"scoring service {self.url}: no answer within {self.timeout_s:g} s")
            wait = backoff
            try:
                req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
                with urllib.request.urlopen(req, timeout=left) as resp:  # noqa: S310 - URL checked in __init__
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                detail = _message(exc)
                if exc.code not in RETRY_STATUSES:
                    raise _Refused(f"HTTP {exc.code}: {detail}") from None
                reason = f"HTTP {exc.code}: {detail}"
                after = exc.headers.get("Retry-After") if exc.headers else None
                if after and after.isdigit():
                    wait = max(wait, float(after))
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                reason = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
            except ValueError as exc:
                raise ScorerError(f"scoring service {self.url}: not a JSON answer ({exc})") from None
            if time.monotonic() + wait >= deadline:
                raise ScorerError(f"scoring service {self.url}: {reason} (after {attempt} attempt(s) in "
                                  f"{self.timeout_s:g} s)")
            time.sleep(wait)
            backoff *= 2

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        """Score normalised ``texts`` on the service; one :class:`Scores` per text, same order, named after the
        model the service reports.

        Raises:
            ScorerError: the service did not answer within ``timeout_s`` (retries included), refused the request,
                or answered something malformed (the wrong number of scores, a score that is not a number in
                [0, 1]: ``NaN``, an infinity, a boolean); labels the bot does not know are left out.
        """
        if not texts:
            return []
        deadline = time.monotonic() + self.timeout_s
        out: list[Scores] = []
        for start in range(0, len(texts), REQUEST_TEXTS):
            chunk = [str(t) for t in texts[start : start + REQUEST_TEXTS]]
            try:
                answer = self._call("POST", "/v1/model:score", {"texts": chunk}, deadline)
            except _Refused as exc:
                raise ScorerError(f"scoring service {self.url} refused {len(chunk)} texts: {exc}") from None
            scores = answer.get("scores")
            if not isinstance(scores, list) or len(scores) != len(chunk):
                raise ScorerError(f"scoring service {self.url}: {len(scores) if isinstance(scores, list) else 'no'} "
                                  f"scores for {len(chunk)} texts")
            self._learn(answer)
            missing = tuple(answer.get("missing") or ())
            for values in scores:
                # a probability in [0, 1] per known label: NaN is under every threshold (a clean verdict made
                # up), and a boolean, an infinity or 1.5 is no score either
                if not isinstance(values, dict) or not all(
                        isinstance(v, int | float) and not isinstance(v, bool) and 0.0 <= v <= 1.0
                        for v in values.values()):
                    raise ScorerError(f"scoring service {self.url}: malformed scores (each must be a number in "
                                      "[0, 1])")
                out.append(Scores(values={k: float(v) for k, v in values.items() if k in LABELS}, missing=missing,
                                  model=self.name))
        return out

    def score(self, text: str) -> Scores:
        """Score one text (convenience wrapper over :meth:`score_batch`)."""
        return self.score_batch([text])[0]


class _Refused(ScorerError):
    """The service answered a 4xx that another attempt would not change (bad key, malformed request)."""


def _message(exc: urllib.error.HTTPError) -> str:
    """The ``error.message`` of a Google-shaped error body, else the HTTP reason."""
    try:
        return str(json.loads(exc.read().decode("utf-8"))["error"]["message"])[:200]
    except Exception:  # noqa: BLE001 - any unreadable body
        return str(exc.reason)
