"""A :class:`bot.core.ports.Scorer` that scores through a running ``python -m bot serve`` (``MODBOT_SCORER_URL``).

Several bot processes (shards, the Slack app beside the Discord bot) then share one loaded model, and several
service replicas behind an HTTP load balancer scale it out (docs/scaling.md). The bot still plans and normalises
each message itself (:func:`bot.core.pieces.scoring_pieces`); the service scores the pieces as given
(``POST /v1/model:score``), so verdicts are the same as with the model in process; a service that routes languages
between two models (its ``routes``) is sent each message's plan whole (``plans``), as
:func:`bot.core.pieces.score_plans` routes it in process.

Timeouts and retries: one :meth:`RemoteScorer.score_batch` call has ``timeout_s`` in all (``MODBOT_SCORER_TIMEOUT_S``,
default 10 s); a refused connection, a 429/502/503/504 (busy, draining, no replica) or a timed-out attempt is
retried with backoff (0.1 s, doubling, or the service's ``Retry-After`` when it fits) while time is left; then
:class:`bot.scoring.ScorerError` is raised and the moderation service applies the policy's ``on_scorer_error``.
Another 4xx, and a 500 (the service's model failed on these texts: another try fails alike), are final: raised at
once. :meth:`RemoteScorer.within` shortens the deadline of the calls made inside it (the moderation service's lone
tries after a failed batch end by the batch's deadline).

The deadline holds against a service that answers slowly, a byte at a time: each attempt runs under a watchdog
that shuts the connection at the deadline (a socket timeout alone bounds each read, not the answer). Redirects are
never followed (the key would go to the other host), an answer over :data:`MAX_ANSWER_BYTES` is refused, and a
request holds at most :data:`REQUEST_TEXTS` texts and :data:`REQUEST_BYTES` bytes, under the service's default
1 MiB body limit.

The verdict names the model the service reports: ``name``/``version``/``labels``/``languages`` are read from
``GET /v1/model`` at start and refreshed from every answer, and each text's scores name the model that scored it
(the answer's ``models``: a service routing languages between two models names each text's); one ``score_batch`` never mixes two model versions (a
rolling upgrade behind a load balancer: the requests answered by the older one are sent again). Standard library
only (``http.client``), called from the moderation service's worker thread (``score_batch`` is synchronous like
every scorer's). No torch import.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import logging
import math
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from bot.core.language import unsupported
from bot.core.models import LABELS, Scores
from bot.core.pieces import combine
from bot.scoring import ScorerError, ScorerLoadError

log = logging.getLogger(__name__)
_C = TypeVar("_C")

#: Texts per ``POST /v1/model:score`` request (the service accepts at most 512).
REQUEST_TEXTS = 256
#: Bytes of JSON-encoded texts per request at most (a single longer text is sent alone): 256 texts of 1,400 CJK
#: characters are 1.1 MB, over the service's default ``--max-body-bytes`` of 1 MiB, which refused the whole batch.
REQUEST_BYTES = 768 * 1024
#: Largest answer read (bytes): the scores of 256 texts are about 60 KB; more is not a scoring service.
MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: Statuses worth another attempt (the service is busy, draining, or a load balancer found no replica). Any other
#: status is final: a 4xx (the request is refused) and a 500 (the service's model failed on these very texts, which
#: its batcher scored apart from other callers' texts: another try fails alike).
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
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise ScorerLoadError(f"MODBOT_SCORER_URL: not a URL ({exc})") from None
        if parts.username is not None or parts.password is not None:
            # never echoed: it holds a password; urllib took "user:pass@host" for a host name and sent it to DNS
            raise ScorerLoadError("MODBOT_SCORER_URL holds a user name or password (user:pass@host), which the "
                                  "service does not read; give the key in MODBOT_SCORER_KEY (the URL is not shown)")
        if not parts.hostname:
            raise ScorerLoadError(f"MODBOT_SCORER_URL={url!r}: no host name")
        if not url.isascii() or any(c.isspace() or not c.isprintable() for c in url):
            raise ScorerLoadError(f"MODBOT_SCORER_URL={url!r}: a space, control or non-ASCII character (percent-"
                                  "encode the path, use the host's ASCII name)")
        if parts.query or parts.fragment:
            raise ScorerLoadError(f"MODBOT_SCORER_URL={url!r}: give the service's base URL, without ?query or #fragment")
        try:
            ipaddress.ip_address(parts.hostname)
        except ValueError:
            try:  # what socket.getaddrinfo does with a name first: "a..b", "." or a 64-character label fail here
                parts.hostname.encode("idna")
            except UnicodeError:
                raise ScorerLoadError(f"MODBOT_SCORER_URL={url!r}: {parts.hostname!r} is not a valid host name (an "
                                      "empty or over-long label)") from None
        if not timeout_s > 0:
            raise ScorerLoadError("MODBOT_SCORER_TIMEOUT_S must be a positive number of seconds")
        if key is not None:
            key = key.strip()  # a .env file with CRLF line ends leaves a "\r" on the value
            if not key.isascii() or not key.isprintable() or " " in key:
                raise ScorerLoadError("MODBOT_SCORER_KEY holds a space, a control character or a non-ASCII "
                                      "character, which an HTTP header cannot carry (the key is not shown)")
        self.url = url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = port or (443 if parts.scheme == "https" else 80)  # http.client would read "[::1]" as host:port
        self._base_path = parts.path.rstrip("/")
        self._key = key or None
        self.timeout_s = float(timeout_s)
        self.name = "remote"
        self.version = "unknown"
        self.labels: tuple[str, ...] = LABELS
        self.languages: tuple[str, ...] = ("en",)
        #: The service routes each message to one of two models by language (its ``routes``; learnt from
        #: ``GET /v1/model`` and every answer): whole plans are sent then (:attr:`score_whole_plans`). ``None``
        #: until the service has answered once (a bot started before it): whole plans too, since a routing
        #: service would route the texts of a plan sent one by one apart; an answer without ``routes`` (a service
        #: that predates it) is ``False``.
        self.routes: bool | None = None
        #: How the service routes (its ``routing``: each model's languages, the detector's thresholds), or
        #: ``None``: the language check then reads :attr:`languages` (see :meth:`languages_for`).
        self._routing: tuple[tuple[str, ...], tuple[str, ...], int, float] | None = None
        self._local = threading.local()  # .until: the deadline set by within() for this thread's calls

    def __repr__(self) -> str:
        return f"RemoteScorer({self.url!r}, model={self.name!r})"

    @contextlib.contextmanager
    def within(self, deadline: float) -> Iterator[None]:
        """Every call this thread makes inside the block ends by ``deadline`` (``time.monotonic()`` seconds) when
        that comes before its own ``timeout_s``: the moderation service's lone tries after a failed batch share the
        batch's deadline instead of taking a whole timeout each. Nests (the earlier deadline holds)."""
        before = getattr(self._local, "until", None)
        self._local.until = deadline if before is None else min(before, deadline)
        try:
            yield
        finally:
            self._local.until = before

    def _deadline(self) -> float:
        """The deadline of a call starting now: ``timeout_s`` from now, or :meth:`within`'s when earlier."""
        own = time.monotonic() + self.timeout_s
        until = getattr(self._local, "until", None)
        return own if until is None else min(own, until)

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
            hint = ""
            if exc.status in (400, 401, 403):
                hint = (" (MODBOT_SCORER_KEY is not one of the service's keys)" if key
                        else " (set MODBOT_SCORER_KEY to one of the service's keys)")
            raise ScorerLoadError(f"MODBOT_SCORER_URL={scorer.url}: {exc}{hint}") from exc
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
        routes = info.get("routes")
        self.routes = routes if isinstance(routes, bool) else False
        if "routing" in info:
            self._routing = _routing(info["routing"])
        languages = info.get("languages")
        if isinstance(languages, list):  # codes only: a non-string item ({"x": 1}, null) is no language
            self.languages = tuple(x for x in languages if isinstance(x, str) and x)

    def _call(self, method: str, path: str, body: dict[str, Any] | None, deadline: float) -> dict[str, Any]:
        """One request with retries until ``deadline`` (monotonic seconds); the decoded JSON object answered.

        Raises:
            _Refused: a 4xx other than 429, or a redirect (not retried).
            ScorerError: no answer before the deadline (the last reason is named); a 5xx other than
                :data:`RETRY_STATUSES` (a 500: the model failed on these texts; not retried); or an answer that is
                not a JSON object or is over :data:`MAX_ANSWER_BYTES`.
        """
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["X-Goog-Api-Key"] = self._key
        backoff = FIRST_BACKOFF_S
        attempt = 0
        connected = False  # some attempt reached the service (so a failure may be this request's own)
        while True:
            attempt += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise ScorerError(f"scoring service {self.url}: no answer within {self.timeout_s:g} s",
                                  unreachable=not connected)
            wait = backoff
            try:
                status, answer_headers, raw = self._exchange(method, path, data, headers, deadline)
            except _Unreachable as exc:
                reason = f"{type(exc.__cause__).__name__}: {exc.__cause__}"
            except (OSError, http.client.HTTPException) as exc:  # reset, timed out, cut mid-answer
                connected = True
                reason = (f"no complete answer within {self.timeout_s:g} s" if time.monotonic() >= deadline
                          else f"{type(exc).__name__}: {exc}")
            else:
                connected = True
                if 200 <= status < 300 and not raw:  # cut in its headers, or at the deadline: try again
                    reason = (f"no complete answer within {self.timeout_s:g} s" if time.monotonic() >= deadline
                              else "an empty answer (cut short?)")
                elif 200 <= status < 300:
                    try:
                        answer = json.loads(raw.decode("utf-8"))
                    except (ValueError, RecursionError) as exc:
                        raise ScorerError(f"scoring service {self.url}: not a JSON answer ({exc})") from None
                    if not isinstance(answer, dict):
                        raise ScorerError(f"scoring service {self.url}: the answer is a JSON "
                                          f"{type(answer).__name__}, not an object")
                    return answer
                else:
                    detail = _message(raw, http.client.responses.get(status, "unknown status"))
                    if 300 <= status < 400:
                        raise _Refused(f"HTTP {status}: a redirect, which is not followed (the API key would go "
                                       "to another address); give the service's own URL", status)
                    if status >= 500 and status not in RETRY_STATUSES:  # the model failed on these texts
                        raise ScorerError(f"scoring service {self.url}: HTTP {status}: {detail} (not retried)")
                    if status not in RETRY_STATUSES:
                        raise _Refused(f"HTTP {status}: {detail}", status)
                    reason = f"HTTP {status}: {detail}"
                    wait = max(wait, _retry_after(answer_headers.get("Retry-After")))
            if time.monotonic() + wait >= deadline:
                raise ScorerError(f"scoring service {self.url}: {reason} (after {attempt} attempt(s) in "
                                  f"{self.timeout_s:g} s)", unreachable=not connected)
            time.sleep(wait)
            backoff *= 2

    def _exchange(self, method: str, path: str, data: bytes | None, headers: dict[str, str],
                  deadline: float) -> tuple[int, http.client.HTTPMessage, bytes]:
        """One HTTP exchange, cut at ``deadline``: ``(status, headers, body)``.

        A socket timeout bounds each read, so a service that sends its answer a byte at a time would hold the call
        for as long as it likes; a watchdog timer shuts the socket at the deadline, which ends any read in progress
        (``OSError``). The connection is closed after each exchange.

        Raises:
            OSError, http.client.HTTPException: no connection, a reset, the deadline, an answer cut short.
            ScorerError: an answer over :data:`MAX_ANSWER_BYTES`.
        """
        left = max(deadline - time.monotonic(), 0.001)
        conn: http.client.HTTPConnection
        if self._https:
            conn = http.client.HTTPSConnection(self._host, self._port, timeout=left,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=left)
        # each address tried within what is left of the deadline (socket.create_connection gives every address
        # the whole timeout); a failure to connect at all is _Unreachable
        conn._create_connection = lambda address, timeout=None, source=None: _connect(address, deadline)  # type: ignore[attr-defined]
        watchdog = threading.Timer(left, _cut, args=(conn,))
        watchdog.daemon = True
        watchdog.start()
        try:
            try:
                conn.connect()
            except OSError as exc:
                raise _Unreachable from exc
            conn.request(method, self._base_path + path, body=data, headers=headers)
            resp = conn.getresponse()
            if (resp.length or 0) > MAX_ANSWER_BYTES:
                raise ScorerError(f"scoring service {self.url}: an answer over {MAX_ANSWER_BYTES:,} bytes")
            raw = resp.read(MAX_ANSWER_BYTES + 1)
            if len(raw) > MAX_ANSWER_BYTES:
                raise ScorerError(f"scoring service {self.url}: an answer over {MAX_ANSWER_BYTES:,} bytes")
            if resp.length:  # read(amt) returns what came before the connection closed, without raising
                raise http.client.IncompleteRead(raw, resp.length)
            return resp.status, resp.headers, raw
        finally:
            watchdog.cancel()
            conn.close()

    def route_hint(self, text: str) -> str | None:
        """The language a message's raw ``text`` routes it by on a service that routes (its ``routing``), as
        :meth:`bot.scoring.routing.LanguageRoutedScorer.route_hint` in process: the one of the second model's extra
        languages the whole text is confidently in, else ``None`` (also when the service routes nothing or has not
        said how). Sent with the message's plan (``plan_languages``)."""
        if not self.routes or self._routing is None:
            return None
        main, second, min_letters, min_confidence = self._routing
        found = unsupported((text,), main, min_letters=min_letters, min_confidence=min_confidence)
        return found.language if found is not None and found.language in second else None

    def languages_for(self, plan: Sequence[str], hint: str | None = None) -> tuple[str, ...]:
        """The languages of the model the service scores ``plan`` with (a message's scoring plan, ``hint`` its
        :meth:`route_hint`): a service that routes (its ``routing``) sends a plan to its second model when its hint
        or a part is confidently in one of the second model's extra languages, as
        :meth:`bot.scoring.routing.LanguageRoutedScorer.route` does in process, and the language check reads that
        model's languages, not both models' (:meth:`bot.core.service.ModerationService._languages`); otherwise
        :attr:`languages`."""
        if not self.routes or self._routing is None:
            return self.languages
        main, second, min_letters, min_confidence = self._routing
        if hint is not None and hint in second and hint not in main:
            return second
        found = unsupported(plan, main, min_letters=min_letters, min_confidence=min_confidence)
        return second if found is not None and found.language in second and found.language not in main else main

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        """Score normalised ``texts`` on the service; one :class:`Scores` per text, same order, named after the
        model the service reports.

        Raises:
            ScorerError: the service did not answer within ``timeout_s`` (retries included), refused the request,
                or answered something malformed (the wrong number of scores, a score that is not a number in
                [0, 1]: ``NaN``, an infinity, a boolean; a score object without a label the service says it scores,
                or with none of the bot's labels); or its requests were answered by two model versions twice over.
                Labels the bot does not know are left out.
        """
        if not texts:
            return []
        chunks = _chunks([str(t) for t in texts])
        answers = self._consistent(chunks, self._score_chunk, self._deadline())
        return [s for _, scores in answers for s in scores]

    @property
    def score_whole_plans(self) -> Callable[..., dict[tuple[str, ...], Scores]] | None:
        """:meth:`_score_whole_plans` when the service routes each message to one of two models by language (its
        ``routes``) or has not said yet, else ``None``. :func:`bot.core.pieces.score_plans` then sends each plan whole instead of its
        texts one by one, which the service would route apart: a message's English sentence scored by the English
        model and its French ones by the other, one verdict mixing both models' scores, where in process the whole
        message goes to one model."""
        return None if self.routes is False else self._score_whole_plans

    def _score_whole_plans(self, plans: Sequence[tuple[str, ...]],
                           hints: Mapping[tuple[str, ...], str] | None = None) -> dict[tuple[str, ...], Scores]:
        """``{plan: Scores}`` of each distinct plan, each scored whole by the service (``/v1/model:score`` with
        ``plans``, and ``plan_languages``: each plan's language of ``hints``, its :meth:`route_hint`), as
        :func:`bot.core.pieces.score_plans`; raises as :meth:`score_batch`."""
        distinct = list(dict.fromkeys(plans))
        if not distinct:
            return {}
        parts = {plan: self._plan_parts(plan) for plan in distinct}
        part_hints: dict[tuple[str, ...], str | None] = {}
        for plan in distinct:
            for part in parts[plan]:
                part_hints.setdefault(part, hints.get(plan) if hints else None)
        sent = list(part_hints)
        chunks = _plan_chunks(sent)
        answers = self._consistent(chunks, lambda chunk, deadline: self._score_plan_chunk(chunk, deadline, part_hints),
                                   self._deadline())
        scored = {part: s for chunk, (_, scores) in zip(chunks, answers, strict=True)
                  for part, s in zip(chunk, scores, strict=True)}
        return {plan: combine([scored[part] for part in parts[plan]]) for plan in distinct}

    def _plan_parts(self, plan: tuple[str, ...]) -> list[tuple[str, ...]]:
        """``[plan]``, or for a plan whose texts do not fit one request (a message read up to a policy's
        ``max_chars`` of 1,000,000: over the service's 1 MiB body limit, a 413) sub-plans that do, each routed as
        the whole plan is: the routing picks the model by the first text confidently in a language the main model
        does not read (:meth:`bot.scoring.routing.LanguageRoutedScorer.route`, each text judged alone, the whole
        text by its own threshold), so each sub-plan begins with the whole text and that text, then a share of the
        rest; their scores :func:`bot.core.pieces.combine` to the plan's. Needs the service's ``routing``: without
        it the plan is sent whole."""
        texts = list(dict.fromkeys(plan))
        if (self._routing is None or len(texts) <= REQUEST_TEXTS
                and sum(_json_size(t) for t in texts) <= REQUEST_BYTES):
            return [plan]
        main, _, min_letters, min_confidence = self._routing
        anchor = [texts[0]]
        for n, text in enumerate(texts):  # "" first: a later text is judged by a part's threshold, as in the plan
            if unsupported((text,) if n == 0 else ("", text), main, min_letters=min_letters,
                           min_confidence=min_confidence) is not None:
                anchor += [text] if n else []
                break
        base = sum(_json_size(t) for t in anchor)
        out: list[tuple[str, ...]] = []
        run: list[str] = []
        size = base
        for text in texts:
            if text in anchor:
                continue
            if run and (len(anchor) + len(run) >= REQUEST_TEXTS or size + _json_size(text) > REQUEST_BYTES):
                out.append((*anchor, *run))
                run, size = [], base
            run.append(text)
            size += _json_size(text)
        out.append((*anchor, *run))
        return out

    def _consistent(self, chunks: list[_C], score: Callable[[_C, float], tuple[str | None, list[Scores]]],
                    deadline: float) -> list[tuple[str | None, list[Scores]]]:
        """``score(chunk, deadline)`` of each chunk, all from one model version (see :meth:`score_batch`)."""
        answers = [score(chunk, deadline) for chunk in chunks]
        if len({v for v, _ in answers}) > 1:
            # a rolling upgrade answered part of this call (or an answer named no version): ask again for all of
            # it, once; whichever replicas answer then must agree
            log.info("scoring service %s answered one call with several model versions; scoring it again",
                     self.url)
            answers = [score(chunk, deadline) for chunk in chunks]
            versions = {v for v, _ in answers}
            if len(versions) > 1:
                raise ScorerError(f"scoring service {self.url}: answered with several model versions "
                                  f"({', '.join(sorted(str(v) for v in versions))}) in one call")
        if answers[0][0] is not None:
            self.version = answers[0][0]
        return answers

    def _score_chunk(self, chunk: list[str], deadline: float) -> tuple[str | None, list[Scores]]:
        """``(model version, scores)`` of one request's texts (the version ``None`` when the answer names none;
        see :meth:`score_batch` for what is refused)."""
        try:
            answer = self._call("POST", "/v1/model:score", {"texts": chunk}, deadline)
        except _Refused as exc:
            raise ScorerError(f"scoring service {self.url} refused {len(chunk)} texts: {exc}") from None
        return self._read_scores(answer, "scores", "models", "text_missing", len(chunk))

    def _score_plan_chunk(self, chunk: list[tuple[str, ...]], deadline: float,
                          hints: Mapping[tuple[str, ...], str | None]) -> tuple[str | None, list[Scores]]:
        """``(model version, scores)`` of one request's plans, each scored whole (routed by its language in
        ``hints`` when it has one); from a service that does not read ``plans`` (per-text ``scores`` only), each
        plan's texts' scores combined here."""
        texts = list(dict.fromkeys(t for plan in chunk for t in plan))
        index = {t: n for n, t in enumerate(texts)}
        body: dict[str, Any] = {"texts": texts, "plans": [[index[t] for t in plan] for plan in chunk]}
        if any(hints.get(plan) for plan in chunk):
            body["plan_languages"] = [hints.get(plan) for plan in chunk]
        try:
            answer = self._call("POST", "/v1/model:score", body, deadline)
        except _Refused as exc:
            raise ScorerError(f"scoring service {self.url} refused {len(texts)} texts: {exc}") from None
        if "plan_scores" in answer:
            return self._read_scores(answer, "plan_scores", "plan_models", "plan_missing", len(chunk))
        version, scores = self._read_scores(answer, "scores", "models", "text_missing", len(texts))
        return version, [combine([scores[index[t]] for t in plan]) for plan in chunk]

    def _read_scores(self, answer: dict[str, Any], key: str, models_key: str, missing_key: str,
                     count: int) -> tuple[str | None, list[Scores]]:
        """``(model version, scores)`` of an answer's ``key`` (``count`` score objects), each named after its model
        in ``models_key`` (else the service's) and lacking the labels of its list in ``missing_key`` (a service
        routing between two models that lack different labels names them per text; one that predates it answers
        one ``missing`` for all); see :meth:`score_batch` for what is refused."""
        scores = answer.get(key)
        if not isinstance(scores, list) or len(scores) != count:
            raise ScorerError(f"scoring service {self.url}: {len(scores) if isinstance(scores, list) else 'no'} "
                              f"scores for {count} {'texts' if key == 'scores' else 'plans'}")
        missing_raw = answer.get("missing") or []
        labels_raw = answer.get("labels")
        if not isinstance(missing_raw, list) or not all(isinstance(x, str) for x in missing_raw) or (
                labels_raw is not None and (not isinstance(labels_raw, list)
                                            or not all(isinstance(x, str) for x in labels_raw))):
            raise ScorerError(f"scoring service {self.url}: malformed answer ('labels' and 'missing' must be lists "
                              "of label names)")
        each_raw = answer.get(missing_key)  # the labels each text's model lacks
        if each_raw is not None and (not isinstance(each_raw, list) or len(each_raw) != count or not all(
                isinstance(m, list) and all(isinstance(x, str) for x in m) for m in each_raw)):
            raise ScorerError(f"scoring service {self.url}: malformed answer ('{missing_key}' must list the labels "
                              "each score's model lacks)")
        models = answer.get(models_key)  # the model of each text (a service routing languages uses two)
        if models is not None and (not isinstance(models, list) or len(models) != count
                                   or not all(isinstance(m, str) and m for m in models)):
            raise ScorerError(f"scoring service {self.url}: malformed answer ('{models_key}' must name one model "
                              "per score)")
        self._learn(answer)
        served = labels_raw if labels_raw is not None else self.labels
        out: list[Scores] = []
        for n, values in enumerate(scores):
            missing = tuple(each_raw[n] if each_raw is not None else missing_raw)
            required = [label for label in LABELS if label in served and label not in missing]
            if not required:
                raise ScorerError(f"scoring service {self.url}: it scores none of the labels {', '.join(LABELS)}")
            # a probability in [0, 1] per known label: NaN is under every threshold (a clean verdict made
            # up), and a boolean, an infinity or 1.5 is no score either; a label the service says it scores but
            # left out would read as no score, i.e. clean, too
            if not isinstance(values, dict) or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) and 0.0 <= v <= 1.0
                    for v in values.values()):
                raise ScorerError(f"scoring service {self.url}: malformed scores (each must be a number in "
                                  "[0, 1])")
            absent = [label for label in required if label not in values]
            if absent:
                raise ScorerError(f"scoring service {self.url}: a score object without {', '.join(absent)}, "
                                  "which the service says it scores")
            out.append(Scores(values={k: float(v) for k, v in values.items() if k in LABELS}, missing=missing,
                              model=models[n] if models is not None else self.name))
        version = answer.get("version")
        return (version if isinstance(version, str) else None), out

    def score(self, text: str) -> Scores:
        """Score one text (convenience wrapper over :meth:`score_batch`)."""
        return self.score_batch([text])[0]


class _Unreachable(OSError):
    """No connection to the service (``__cause__`` is why): refused, unroutable, no address answered in time."""


def _resolve(host: str, port: int, deadline: float) -> list[tuple]:
    """``socket.getaddrinfo(host, port)`` for TCP, bounded by ``deadline`` (``time.monotonic()`` seconds).

    A literal IP address is converted at once. A name is looked up in a daemon thread: the system resolver has no
    timeout of its own (its retries can take 10-30 s), and a lookup still under way at the deadline is left to
    finish on its own without holding the bot's scoring thread or its exit.

    Raises:
        TimeoutError: the lookup did not finish before the deadline.
        OSError: the lookup failed (``socket.gaierror``).
    """
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    box: list[list[tuple] | OSError] = []

    def lookup() -> None:
        try:
            box.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except OSError as exc:
            box.append(exc)
        except Exception as exc:  # noqa: BLE001 - e.g. UnicodeError for a name IDNA refuses: an error, not a hang
            box.append(OSError(f"the service's name {host!r} cannot be looked up: {exc}"))

    worker = threading.Thread(target=lookup, name="modbot-scorer-lookup", daemon=True)
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0.0))
    if not box:
        raise TimeoutError(f"looking up the service's name {host!r} took longer than the deadline")
    if isinstance(box[0], OSError):
        raise box[0]
    return box[0]


def _connect(address: tuple[str, int], deadline: float) -> socket.socket:
    """A TCP connection to ``address``, its name looked up (:func:`_resolve`) and each of its addresses tried in turn
    within what is left until ``deadline``.

    Raises:
        OSError: the lookup failed or took too long, or no address accepted in time (the last address's error, or
            TimeoutError).
    """
    host, port = address
    error: OSError = TimeoutError("no address of the service answered before the deadline")
    for family, kind, proto, _, addr in _resolve(host, port, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(left)
            sock.connect(addr)
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            return sock
        except OSError as exc:
            error = exc
            sock.close()
    raise error


class _Refused(ScorerError):
    """The service answered a 4xx that another attempt would not change (bad key, malformed request), or a
    redirect; ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def _routing(value: Any) -> tuple[tuple[str, ...], tuple[str, ...], int, float] | None:
    """A service's ``routing`` (``{"main_languages", "second_languages", "min_letters", "min_confidence"}``), or
    ``None`` when it is absent or not of that shape."""
    if not isinstance(value, dict):
        return None
    main, second = value.get("main_languages"), value.get("second_languages")
    letters, confidence = value.get("min_letters"), value.get("min_confidence")
    if not (isinstance(main, list) and main and all(isinstance(x, str) and x for x in main)
            and isinstance(second, list) and second and all(isinstance(x, str) and x for x in second)
            and isinstance(letters, int) and not isinstance(letters, bool)
            and isinstance(confidence, int | float) and not isinstance(confidence, bool)):
        return None
    return tuple(main), tuple(second), letters, float(confidence)


def _message(raw: bytes, reason: str) -> str:
    """The ``error.message`` of a Google-shaped error body, else the HTTP reason."""
    try:
        return str(json.loads(raw.decode("utf-8"))["error"]["message"])[:200]
    except Exception:  # noqa: BLE001 - any unreadable body
        return reason


def _retry_after(value: str | None) -> float:
    """Seconds of a ``Retry-After`` header in seconds (0.0 when absent or not a finite number >= 0; an HTTP date
    is not read)."""
    try:
        seconds = float(value) if value else 0.0
    except ValueError:
        return 0.0
    return seconds if math.isfinite(seconds) and seconds >= 0 else 0.0


def _cut(conn: http.client.HTTPConnection) -> None:
    """The watchdog: shut ``conn``'s socket, which ends a read or write in progress on it."""
    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _chunks(texts: list[str]) -> list[list[str]]:
    """``texts`` in request-sized runs, in order: at most :data:`REQUEST_TEXTS` texts and :data:`REQUEST_BYTES`
    bytes of JSON each (a longer text alone)."""
    out: list[list[str]] = []
    run: list[str] = []
    size = 0
    for t in texts:
        n = len(json.dumps(t, ensure_ascii=False).encode("utf-8")) + 2
        if run and (len(run) == REQUEST_TEXTS or size + n > REQUEST_BYTES):
            out.append(run)
            run, size = [], 0
        run.append(t)
        size += n
    if run:
        out.append(run)
    return out


def _json_size(text: str) -> int:
    """Bytes ``text`` takes in a request's JSON (with its quotes' neighbours: ``, ``)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) + 2


def _plan_chunks(plans: list[tuple[str, ...]]) -> list[list[tuple[str, ...]]]:
    """``plans`` in request-sized runs, in order, each plan whole: at most :data:`REQUEST_TEXTS` distinct texts and
    :data:`REQUEST_BYTES` bytes of them per run (a larger plan alone)."""
    out: list[list[tuple[str, ...]]] = []
    run: list[tuple[str, ...]] = []
    seen: set[str] = set()
    size = 0
    for plan in plans:
        new = [t for t in dict.fromkeys(plan) if t not in seen]
        n = sum(len(json.dumps(t, ensure_ascii=False).encode("utf-8")) + 2 for t in new)
        if run and (len(seen) + len(new) > REQUEST_TEXTS or size + n > REQUEST_BYTES):
            out.append(run)
            run, seen, size = [], set(), 0
            new = list(dict.fromkeys(plan))
            n = sum(len(json.dumps(t, ensure_ascii=False).encode("utf-8")) + 2 for t in new)
        run.append(plan)
        seen.update(new)
        size += n
    if run:
        out.append(run)
    return out
