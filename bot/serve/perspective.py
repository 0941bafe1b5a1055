"""Perspective API compatibility: ``AnalyzeCommentRequest`` parsing, ``AnalyzeCommentResponse`` building and the
Google API error shape, so a client written for ``commentanalyzer.googleapis.com/v1alpha1/comments:analyze``
(Red-DiscordBot's Defender cog, forum plugins, research scripts) works against ``python -m bot serve`` unchanged.

Shapes (from Perspective's public API reference)::

    request:  {"comment": {"text": str, "type": "PLAIN_TEXT"}, "requestedAttributes": {"TOXICITY": {}, ...},
               "languages": ["en"], "spanAnnotations": bool, "doNotStore": bool, "clientToken": str,
               "sessionId": str, "communityId": str, "context": {...}}
    response: {"attributeScores": {"TOXICITY": {"summaryScore": {"value": float, "type": "PROBABILITY"},
                                                "spanScores": [{"begin": int, "end": int,
                                                                "score": {"value": float, "type": "PROBABILITY"}}]}},
               "languages": ["en"], "detectedLanguages": ["en"], "clientToken": str}
    error:    {"error": {"code": 400, "message": str, "status": "INVALID_ARGUMENT",
               "details": [{"@type": "type.googleapis.com/google.commentanalyzer.v1alpha1.Error",
                            "errorType": "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE", ...}]}}

Differences (docs/perspective-migration.md): only the seven attributes the model has; ``scoreThreshold`` and
``scoreType`` ``PROBABILITY`` are honoured, no other score type; the non-standard request field
``allowUnsupportedLanguages: true`` scores a text in a language the model does not read (its scores are then
unreliable) instead of answering ``LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE``. Span offsets count UTF-16 code units, as
Perspective's do (its reference: "the UTF-16 codepoint range"; what a JavaScript, Java or .NET client slices by).

Layer: composition root helper (pure functions, standard library only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Perspective attribute -> the model's label (``bot.core.models.LABELS``).
ATTRIBUTES: dict[str, str] = {
    "TOXICITY": "toxicity",
    "SEVERE_TOXICITY": "severe_toxicity",
    "IDENTITY_ATTACK": "identity_attack",
    "INSULT": "insult",
    "PROFANITY": "obscene",
    "THREAT": "threat",
    "SEXUALLY_EXPLICIT": "sexual_explicit",
}
#: Perspective's per-comment limit: 20 KB of UTF-8 (the compatibility default of ``--max-comment-bytes``).
MAX_COMMENT_BYTES = 20_480
ERROR_TYPE_URL = "type.googleapis.com/google.commentanalyzer.v1alpha1.Error"
#: HTTP status -> Google API ``status`` string.
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          405: "INVALID_ARGUMENT", 408: "DEADLINE_EXCEEDED", 413: "INVALID_ARGUMENT", 417: "FAILED_PRECONDITION", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
          503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


class ApiError(Exception):
    """An error answered in Google's error shape (:meth:`body`).

    Args:
        code: HTTP status (400, 403, 413, 429, 503...).
        message: Human-readable reason; never contains the comment text or a key.
        error_type: Perspective's ``details[0].errorType`` (``COMMENT_EMPTY``, ``LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE``
            ...), or ``None`` for errors Perspective reports without details (bad key, quota).
        extra: More fields of that detail object (e.g. ``languageNotSupportedByAttributeError``).
        headers: HTTP headers to send with it (``Retry-After``).
    """

    def __init__(self, code: int, message: str, error_type: str | None = None, *,
                 extra: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.error_type = error_type
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """``{"error": {"code", "message", "status", "details"?}}``."""
        err: dict[str, Any] = {"code": self.code, "message": self.message,
                               "status": STATUS.get(self.code, "UNKNOWN")}
        if self.error_type is not None:
            err["details"] = [{"@type": ERROR_TYPE_URL, "errorType": self.error_type, **self.extra}]
        return {"error": err}


@dataclass(frozen=True, slots=True)
class AnalyzeRequest:
    """A validated ``AnalyzeCommentRequest``.

    Attributes:
        text: ``comment.text`` (non-empty, at most ``max_comment_bytes`` of UTF-8).
        attributes: Requested attribute names, in request order, each with its ``scoreThreshold`` (or ``None``).
        languages: The caller's ``languages`` (ISO 639-1, lower-cased), empty to detect.
        span_annotations: Score each sentence too (``spanScores``).
        do_not_store: The caller's ``doNotStore`` (nothing is ever stored by this service either way).
        client_token: Echoed back as ``clientToken``.
        allow_unsupported_languages: Non-standard opt-in: score text the model does not read instead of 400.
    """

    text: str
    attributes: tuple[tuple[str, float | None], ...]
    languages: tuple[str, ...] = ()
    span_annotations: bool = False
    do_not_store: bool = False
    client_token: str | None = None
    allow_unsupported_languages: bool = False


def _bool(obj: Mapping[str, Any], key: str) -> bool:
    value = obj.get(key)
    if value is None:  # absent or null: the default, as proto3 JSON reads it
        return False
    if not isinstance(value, bool):
        raise ApiError(400, f"Invalid value at '{key}': expected a boolean.", "INVALID_REQUEST")
    return value


def parse_analyze(obj: Any, model_labels: Sequence[str], *, max_comment_bytes: int = MAX_COMMENT_BYTES,
                  ) -> AnalyzeRequest:
    """Validate a decoded JSON request body.

    Args:
        obj: The decoded JSON body.
        model_labels: Labels the serving model produces: an attribute whose label is not among them is refused.
        max_comment_bytes: Longest ``comment.text`` in UTF-8 bytes (Perspective: 20,480).

    Raises:
        ApiError: 400 with ``errorType`` ``COMMENT_EMPTY`` (missing or empty text), ``COMMENT_TOO_LONG``,
            ``INVALID_REQUEST`` (wrong types, no attributes), ``ATTRIBUTE_NOT_SUPPORTED`` (an attribute unknown to
            Perspective or one the model lacks: never answered with a made-up 0).
    """
    if not isinstance(obj, dict):
        raise ApiError(400, "Invalid JSON payload: expected an AnalyzeCommentRequest object.", "INVALID_REQUEST")
    comment = obj.get("comment")
    if comment is None:
        raise ApiError(400, "Comment must be specified: 'comment.text' is required.", "COMMENT_EMPTY")
    if not isinstance(comment, dict):
        raise ApiError(400, "Invalid value at 'comment': expected an object, {\"text\": ...}.", "INVALID_REQUEST")
    text = comment.get("text")
    if text is None or text == "":
        raise ApiError(400, "Comment text was too short: 'comment.text' is missing or empty.", "COMMENT_EMPTY")
    if not isinstance(text, str):
        raise ApiError(400, "Invalid value at 'comment.text': expected a string.", "INVALID_REQUEST")
    ctype = comment.get("type")
    if ctype is None:  # absent or null, as proto3 JSON reads it: the default
        ctype = "PLAIN_TEXT"
    if ctype not in ("PLAIN_TEXT", "TEXT_TYPE_UNSPECIFIED"):
        shown = json.dumps(ctype, ensure_ascii=False)[:40]  # as the client wrote it: false, not Python's False
        raise ApiError(400, f"Invalid value at 'comment.type': {shown} is not supported (PLAIN_TEXT).",
                       "INVALID_REQUEST")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_comment_bytes:
        raise ApiError(400, f"Comment text too long: {size} bytes, the limit is {max_comment_bytes}.",
                       "COMMENT_TOO_LONG")
    requested = obj.get("requestedAttributes")
    if requested is not None and not isinstance(requested, dict):  # a list of names, as some clients write it
        raise ApiError(400, "Invalid value at 'requestedAttributes': expected an object of attribute names, e.g. "
                            "{\"TOXICITY\": {}}.", "INVALID_REQUEST")
    if not requested:
        raise ApiError(400, "'requestedAttributes' must name at least one attribute, e.g. {\"TOXICITY\": {}}.",
                       "INVALID_REQUEST")
    attributes: list[tuple[str, float | None]] = []
    for name, cfg in requested.items():
        # ASCII case only: str.upper maps dotless i, long s... onto ASCII letters ("TOXICıTY" -> "TOXICITY")
        upper = name.upper() if name.isascii() else name
        label = ATTRIBUTES.get(upper)
        if label is None:
            raise ApiError(400, f"Unknown attribute: {str(name)[:60]}. Supported: {', '.join(ATTRIBUTES)}.",
                           "ATTRIBUTE_NOT_SUPPORTED", extra={"requestedAttribute": str(name)[:60]})
        if any(upper == seen for seen, _ in attributes):  # "toxicity" and "TOXICITY": which threshold would hold?
            raise ApiError(400, f"Attribute {upper} is requested more than once (names are matched ignoring case).",
                           "INVALID_REQUEST")
        if label not in model_labels:
            raise ApiError(400, f"Attribute {name} is not produced by the serving model.",
                           "ATTRIBUTE_NOT_SUPPORTED", extra={"requestedAttribute": str(name)})
        cfg = cfg if cfg is not None else {}
        if not isinstance(cfg, dict):
            raise ApiError(400, f"Invalid value at 'requestedAttributes.{name}': expected an object.",
                           "INVALID_REQUEST")
        stype = cfg.get("scoreType")
        stype = "PROBABILITY" if stype is None else stype
        if stype not in ("PROBABILITY", "SCORE_TYPE_UNSPECIFIED"):
            raise ApiError(400, f"Unsupported scoreType {str(stype)[:30]!r} for {name}: only PROBABILITY.",
                           "INVALID_REQUEST")
        threshold = cfg.get("scoreThreshold")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)
                                      or not 0 <= threshold <= 1):
            raise ApiError(400, f"Invalid scoreThreshold for {name}: a number in [0, 1].", "INVALID_REQUEST")
        attributes.append((upper, None if threshold is None else float(threshold)))
    langs = obj.get("languages")
    langs = [] if langs is None else langs
    if not isinstance(langs, list) or not all(isinstance(x, str) for x in langs):
        raise ApiError(400, "Invalid value at 'languages': expected a list of ISO 639-1 codes.", "INVALID_REQUEST")
    codes: list[str] = []
    for n, raw in enumerate(langs):
        if not raw.strip():
            continue
        code = raw.strip().lower().replace("_", "-").split("-")[0]  # "en-US", "zh_Hant": the language subtag
        if not (code.isascii() and code.isalpha() and 2 <= len(code) <= 3):
            raise ApiError(400, f"Invalid value at 'languages[{n}]': {raw[:20]!r} is not a language code "
                           "(ISO 639-1, e.g. \"en\" or \"en-US\").", "INVALID_REQUEST")
        codes.append(code)
    token = obj.get("clientToken")
    for key, kind, name in (("clientToken", str, "a string"), ("sessionId", str, "a string"),
                            ("communityId", str, "a string"), ("context", dict, "an object")):
        value = obj.get(key)  # sessionId, communityId and context are accepted and ignored, but typed
        if value is not None and not isinstance(value, kind):
            raise ApiError(400, f"Invalid value at '{key}': expected {name}.", "INVALID_REQUEST")
    return AnalyzeRequest(
        text=text,
        attributes=tuple(attributes),
        languages=tuple(dict.fromkeys(codes)),  # "en", "en-US" and "EN" are one language: echoed once
        span_annotations=_bool(obj, "spanAnnotations"),
        do_not_store=_bool(obj, "doNotStore"),
        client_token=token,
        allow_unsupported_languages=_bool(obj, "allowUnsupportedLanguages"),
    )


def language_error(attribute: str, languages: Sequence[str], detected: bool) -> ApiError:
    """Perspective's answer for text in a language the attribute does not support (400,
    ``LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE``); ``detected``: the language was detected rather than requested."""
    key = "detectedLanguages" if detected else "requestedLanguages"
    return ApiError(
        400,
        f"Attribute {attribute} does not support request languages: {','.join(languages)}",
        "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE",
        extra={"languageNotSupportedByAttributeError": {key: list(languages), "attribute": attribute}},
    )


def utf16_spans(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (code-point ``(begin, end)`` offsets into ``text``, in order) as UTF-16 code-unit offsets, which
    Perspective's ``SpanScore.begin``/``end`` count ("the UTF-16 codepoint range"): a character past U+FFFF (an
    emoji) is two units, a lone surrogate one."""
    out: list[tuple[int, int]] = []
    pos = extra = 0  # code points counted so far, and the astral characters among them
    for begin, end in spans:
        extra += sum(1 for c in text[pos:begin] if ord(c) > 0xFFFF)
        inner = sum(1 for c in text[begin:end] if ord(c) > 0xFFFF)
        out.append((begin + extra, end + extra + inner))
        extra += inner
        pos = end
    return out


def _score(value: float) -> dict[str, Any]:
    return {"value": round(float(value), 6), "type": "PROBABILITY"}


def analyze_response(req: AnalyzeRequest, summary: Mapping[str, float],
                     spans: Sequence[tuple[int, int, Mapping[str, float]]], languages: Sequence[str],
                     detected: Sequence[str]) -> dict[str, Any]:
    """The ``AnalyzeCommentResponse`` for ``req``.

    Args:
        req: The parsed request.
        summary: Label -> score in [0, 1] of the whole comment (every requested attribute's label present).
        spans: ``(begin, end, {label: score})`` per sentence (UTF-16 code-unit offsets in ``comment.text``, as
            Perspective counts them: :func:`utf16_spans`); used when ``req.span_annotations``.
        languages: The languages the text was scored as (``languages`` in the answer).
        detected: The detected languages (``detectedLanguages``), possibly empty.

    An attribute whose summary score is below its ``scoreThreshold`` is left out of ``attributeScores``, as
    Perspective does.
    """
    scores: dict[str, Any] = {}
    for name, threshold in req.attributes:
        label = ATTRIBUTES[name]
        value = float(summary[label])
        if threshold is not None and value < threshold:
            continue
        entry: dict[str, Any] = {"summaryScore": _score(value)}
        if req.span_annotations:
            entry["spanScores"] = [{"begin": b, "end": e, "score": _score(s[label])} for b, e, s in spans]
        scores[name] = entry
    out: dict[str, Any] = {"attributeScores": scores, "languages": list(languages),
                           "detectedLanguages": list(detected)}
    if req.client_token is not None:
        out["clientToken"] = req.client_token
    return out


def discovery_document(root_url: str) -> dict[str, Any]:
    """Perspective's API discovery document (Google's discovery format, ``discovery#restDescription``) for this
    service at ``root_url`` (``"http://127.0.0.1:8080/"``, ending in ``/``).

    Clients built on ``google-api-python-client`` (Perspective's own Python sample: ``discovery.build(
    "commentanalyzer", "v1alpha1", developerKey=KEY, discoveryServiceUrl=...)``) fetch it before their first
    request and build ``comments().analyze(body=...)`` from it; with it such a client needs only a new
    ``discoveryServiceUrl``. It describes the one method served (AnalyzeComment; SuggestCommentScore is not
    offered) and its request and response fields as this service reads and writes them.
    """
    def obj(ref: str, properties: dict[str, Any]) -> dict[str, Any]:
        return {"id": ref, "type": "object", "properties": properties}

    any_map = {"type": "object", "additionalProperties": {"type": "any"}}
    return {
        "kind": "discovery#restDescription",
        "discoveryVersion": "v1",
        "id": "commentanalyzer:v1alpha1",
        "name": "commentanalyzer",
        "version": "v1alpha1",
        "title": "Perspective Comment Analyzer API (served by modbot)",
        "description": "Perspective-compatible scoring served by python -m bot serve.",
        "protocol": "rest",
        "rootUrl": root_url,
        "servicePath": "",
        "baseUrl": root_url,
        "batchPath": "batch",
        "parameters": {
            "key": {"type": "string", "location": "query", "description": "API key."},
            "alt": {"type": "string", "location": "query", "default": "json", "enum": ["json"],
                    "enumDescriptions": ["JSON answers"], "description": "Answer format (JSON only)."},
            "prettyPrint": {"type": "boolean", "location": "query", "default": "true",
                            "description": "Ignored."},
        },
        "schemas": {
            "AnalyzeCommentRequest": obj("AnalyzeCommentRequest", {
                "comment": {"$ref": "TextEntry"},
                "requestedAttributes": {"type": "object", "additionalProperties": {"$ref": "AttributeParameters"}},
                "languages": {"type": "array", "items": {"type": "string"}},
                "spanAnnotations": {"type": "boolean"},
                "doNotStore": {"type": "boolean"},
                "clientToken": {"type": "string"},
                "allowUnsupportedLanguages": {"type": "boolean"},
                "context": any_map,
                "sessionId": {"type": "string"},
                "communityId": {"type": "string"},
            }),
            "TextEntry": obj("TextEntry", {"text": {"type": "string"}, "type": {"type": "string"}}),
            "AttributeParameters": obj("AttributeParameters", {"scoreType": {"type": "string"},
                                                               "scoreThreshold": {"type": "number",
                                                                                  "format": "float"}}),
            "AnalyzeCommentResponse": obj("AnalyzeCommentResponse", {
                "attributeScores": {"type": "object", "additionalProperties": {"$ref": "AttributeScores"}},
                "languages": {"type": "array", "items": {"type": "string"}},
                "detectedLanguages": {"type": "array", "items": {"type": "string"}},
                "clientToken": {"type": "string"},
            }),
            "AttributeScores": obj("AttributeScores", {"summaryScore": {"$ref": "Score"},
                                                       "spanScores": {"type": "array", "items": {"$ref": "SpanScore"}}}),
            "Score": obj("Score", {"value": {"type": "number", "format": "float"}, "type": {"type": "string"}}),
            "SpanScore": obj("SpanScore", {"begin": {"type": "integer", "format": "int32"},
                                           "end": {"type": "integer", "format": "int32"},
                                           "score": {"$ref": "Score"}}),
        },
        "resources": {"comments": {"methods": {"analyze": {
            "id": "commentanalyzer.comments.analyze",
            "path": "v1alpha1/comments:analyze",
            "flatPath": "v1alpha1/comments:analyze",
            "httpMethod": "POST",
            "parameters": {},
            "parameterOrder": [],
            "request": {"$ref": "AnalyzeCommentRequest"},
            "response": {"$ref": "AnalyzeCommentResponse"},
            "description": "Analyzes the provided text and returns scores for the requested attributes.",
        }}}},
    }
