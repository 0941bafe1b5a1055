"""The ``score`` job: JSON lines ``{"id", "text"}`` on stdin, one JSON line per non-blank input line on
stdout (blank lines are skipped).

Layer: composition root. Output contract (stable; evaluation tools depend on it)::

    {"id": <input id>, "scores": {label: float | null}, "rule_hits": [{"rule", "detail", "label"}],
     "flagged": bool, "labels": [str], "action": str, "score_status": str, "language": str | null}

``score_status`` says how far the model read the text (``"ok"``, ``"not_scored"`` for an empty text,
``"scorer_error"``, ``"unsupported_language"`` with ``language`` the ISO 639-1 code found, ``"truncated"`` past
the policy's ``[scoring] max_chars``); see :class:`bot.core.models.Verdict`.

Every input is judged on its own (no spam or raid windows across lines, no strikes) under the default policy or
``--policy``. One output line per non-blank input line, in input order. ``id`` is the input's own ``id`` (any JSON
value but ``null``, echoed as given); a line without one (or with ``"id": null``) is answered with the string
``"line:N"`` (:func:`line_id`; ``N`` its 1-based line number in the input, blank lines counted), so it never takes
the id of another line that carries a number (``3`` and ``"line:3"`` differ); only an input id written in that very
form could look like it. A line that is not valid JSON, or lacks a string ``text``, gets
``{"id": <its id, else "line:N">, "error": "..."}``, and the exit code is then 1 (stderr says how many lines failed);
the lines after it are still judged. A line that is not JSON is said in words with its line number
(:func:`bot.ingest.common.json_line_problem`: ``"line 3: not valid JSON (the line ends inside a string; was it cut
short?)"``).
Lines end at ``\\n`` only (a CRLF ending is one ending; a ``\\r`` inside a line stays in it, so a line is never
split in two: :func:`input_lines`). A byte order mark at the start of the input names its encoding: UTF-8 (also
without one), UTF-16 or UTF-32 in either byte order (Windows PowerShell 5.1's ``>`` writes UTF-16LE); it is not part
of the first line. UTF-16 / UTF-32 input that ends with a byte that is not a whole code unit is judged up to it (its
last line whole) and said in one stderr line, ``"error: stdin: byte 123: the UTF-16LE text ends with 1 stray byte,
not a whole 2-byte code unit (cut short?); not read"``, with the exit code 1. A line holding a byte that is not UTF-8 gets an error line naming the byte and its column
(``"line 2: not valid UTF-8 (column 25: the byte 0xE9)"``); the lines after it are still judged. Lone UTF-16
surrogates in ``text`` are replaced by U+FFFD (they cannot be encoded as UTF-8). A line whose id cannot be echoed as
valid UTF-8 JSON (an id holding a lone surrogate or a number beyond a 64-bit float such as ``1e400``, or
``NaN``/``Infinity`` anywhere on the line, which are not JSON)
or that is nested too deeply for the parser (:exc:`RecursionError`) gets an error line with the id ``"line:N"``.
The output is UTF-8 whatever the locale (the CLI sets standard output so), with U+2028 / U+2029 escaped so that each
record is one line for every reader (:func:`bot.jobs.jsonlines.json_line`).
Nothing is kept: verdicts go to a temporary SQLite file deleted at exit.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import IO, Any, cast

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.ports import Scorer
from bot.ingest.common import clean_text, json_line_problem
from bot.ingest.encoding import DecodedBytes, StrayBytes
from bot.jobs.jsonlines import Underflow, holds_underflow, json_line
from bot.settings import Settings

SERVER = ServerRef(platform="cli", id="score", name="score")
CHANNEL = ChannelRef(id="stdin", name="stdin")


async def run_score(args: argparse.Namespace, settings: Settings, stdin: IO[str] | IO[bytes], stdout: IO[str],
                    stderr: IO[str] | None = None, *, scorer: Scorer | None = None) -> int:
    """Run ``score``. ``stdin``: the input, text or bytes, read as :func:`input_lines` says; ``scorer``: an already
    loaded scorer (default: the model ``settings`` names).

    Returns:
        The exit code: 0 when every line was judged and scored; 1 when some lines were not judged (each still
        has its ``{"id", "error"}`` line on ``stdout``, and ``stderr`` says how many failed) or the scorer failed
        on some (``score_status`` ``"scorer_error"``: a scoring service that is away; their lines are written, with
        null scores, and ``stderr`` says how many), so a script never takes nulls for a run of scores. A policy or model that cannot
        load raises (the CLI exits 2); the policy is checked before the model loads. ``stdout`` that cannot be
        written raises :exc:`OutputError` (the CLI says so in one line and exits 1), a reader that went away
        :exc:`BrokenPipeError`.
    """
    from bot.runtime import open_runtime

    stderr = sys.stderr if stderr is None else stderr
    interactive = _isatty(stdin)
    now = datetime.now(UTC)
    failed = unscored = 0
    with tempfile.TemporaryDirectory(prefix="modbot-score-") as tmp:
        async with open_runtime(settings, enforce=False, stateful_rules=False, extra_policy_files=tuple(args.policy),
                                server_files=False, overrides=False, db_path=Path(tmp) / "score.db",
                                batch_size=args.batch_size, scorer=scorer) as rt:
            service = rt.service
            pending: list[tuple[Any, Any]] = []
            stray: list[StrayBytes] = []  # what UTF-16 / UTF-32 input ends with, said after every line
            for n, line in enumerate(_lines_before_stray(stdin, stray), start=1):
                if not line.strip():
                    continue
                obj: Any = None
                bad_byte = _not_utf8(line)
                if bad_byte:
                    pending.append((line_id(n), f"line {n}: {bad_byte}"))
                    failed += 1
                    continue
                try:
                    obj = json.loads(line, parse_constant=_refuse_constant, parse_float=_marked_float)
                    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                        raise ValueError('expected an object with a string "text"')
                    _check_id(obj.get("id"))
                except _BadId as exc:
                    pending.append((line_id(n), f"line {n}: {exc}"))
                    failed += 1
                    continue
                except RecursionError:
                    pending.append((line_id(n), f"line {n}: JSON nested too deeply to read"))
                    failed += 1
                    continue
                except json.JSONDecodeError as exc:  # said in words: "the line ends inside a string; ..."
                    pending.append((line_id(n), f"line {n}: {json_line_problem(exc)}"))
                    failed += 1
                    continue
                except ValueError as exc:
                    ident = _ident(obj, n) if isinstance(obj, dict) else line_id(n)
                    pending.append((ident, f"line {n}: {exc}"))
                    failed += 1
                    continue
                msg = Message(server=SERVER, channel=CHANNEL, author=MemberRef(id=f"line-{n}", name=f"line-{n}"),
                              id=f"line-{n}", text=clean_text(obj["text"]), created_at=now)
                pending.append((_ident(obj, n), service.submit(msg)))
                if len(pending) >= 4 * args.batch_size or interactive:  # a person typing waits for each answer
                    unscored += await _flush(pending, stdout)
            unscored += await _flush(pending, stdout)
    for cut in stray:  # "error: stdin: byte 123: the UTF-16LE text ends with 1 stray byte, ..."
        print(f"error: stdin: {cut}", file=stderr)  # noqa: T201
    if failed:
        print(f"error: {failed} input line(s) could not be judged (see their \"error\" lines)", file=stderr)  # noqa: T201
    if unscored:  # a scoring service that is away: the lines carry the policy's on_scorer_error verdict, no score
        print(f"error: {unscored} input line(s) were judged without model scores (score_status \"scorer_error\": "  # noqa: T201
              "the scorer failed; see the log)", file=stderr)
    return 1 if failed or stray or unscored else 0


def _isatty(stream: IO[str] | IO[bytes]) -> bool:
    """True when ``stream`` is a terminal (each line is then answered as it is entered, not per batch)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


#: Bytes read from the input at a time (a pipe gives what it holds, up to this many: lines are not held back).
CHUNK = 1 << 16


def input_lines(stream: IO[str] | IO[bytes]) -> Iterator[str]:
    """The lines of ``score``'s input, in order, each without its line ending.

    A line ends at ``"\\n"`` only, and one ``"\\r"`` just before it (a CRLF ending) is dropped with it; any other
    ``"\\r"`` stays in its line (JSON whitespace between tokens; inside a string an error of that one line, never a
    line break that would shift the numbers of the lines after it). The last line needs no ending.

    ``stream`` may be binary, or text: an :class:`io.TextIOWrapper` (standard input) is read through its binary
    buffer, so neither its newline translation (universal newlines split at a lone ``"\\r"``) nor its locale's
    encoding changes the lines; another text stream (:class:`io.StringIO`) is taken as already decoded, a leading
    U+FEFF dropped. Bytes are UTF-8, or UTF-16 / UTF-32 (either byte order) behind that encoding's byte order mark
    (:func:`bot.ingest.encoding.input_encoding`; the mark is not part of the first line).

    Raises:
        StrayBytes: UTF-16 / UTF-32 input that ends with bytes that are not a whole code unit, once every line has
            been given (the last one without them).
    """
    if isinstance(stream, io.TextIOWrapper):
        stream = stream.buffer
    read: Callable[[int], str | bytes] = getattr(stream, "read1", stream.read)  # read1: what a pipe holds now
    first = read(CHUNK)
    if isinstance(first, str):
        text = cast(Callable[[int], str], read)
        yield from _split(itertools.chain([first.removeprefix("\ufeff")], iter(partial(text, CHUNK), "")))
        return
    decoded = DecodedBytes(cast(Callable[[int], bytes], read), first=first, chunk=CHUNK)
    yield from _split(iter(decoded))
    if decoded.stray is not None:
        raise decoded.stray


def _lines_before_stray(stream: IO[str] | IO[bytes], stray: list[StrayBytes]) -> Iterator[str]:
    """:func:`input_lines` of ``stream``, its :class:`StrayBytes` (once every line is given) appended to ``stray``."""
    try:
        yield from input_lines(stream)
    except StrayBytes as exc:
        stray.append(exc)


def _split(pieces: Iterator[str]) -> Iterator[str]:
    """The lines of the text ``pieces`` make up, split at ``"\\n"`` only; one ``"\\r"`` before it is dropped."""
    held: list[str] = []  # the start of a line longer than a piece (joined once, not re-scanned piece by piece)
    for piece in pieces:
        *ended, rest = piece.split("\n")
        for part in ended:
            line = "".join([*held, part]) if held else part
            held.clear()
            yield line.removesuffix("\r")
        if rest:
            held.append(rest)
    if held:
        yield "".join(held)


def _not_utf8(line: str) -> str | None:
    """Why input ``line`` is not UTF-8, or ``None`` when it is: read with ``errors="surrogateescape"`` (as the CLI
    reads standard input), each byte that is not UTF-8 is a character U+DC80..U+DCFF, which a UTF-8 decoding never
    gives otherwise. Returns ``"not valid UTF-8 (column 25: the byte 0xE9)"`` (1-based column of the first one)."""
    for col, ch in enumerate(line, start=1):
        if "\udc80" <= ch <= "\udcff":
            return f"not valid UTF-8 (column {col}: the byte 0x{ord(ch) - 0xDC00:02X})"
    return None


def line_id(n: int) -> str:
    """The id ``score`` answers input line ``n`` (1-based) by when the line has no usable id of its own:
    ``"line:3"``, a string, so never equal to a numeric id given on another line."""
    return f"line:{n}"


def _ident(obj: dict[str, Any], n: int) -> Any:
    """The id to answer input line ``n`` by: its own ``id``, or :func:`line_id` when it has none (or ``null``)."""
    ident = obj.get("id")
    return line_id(n) if ident is None else ident


class _BadId(ValueError):
    """An input line whose id cannot be echoed as valid UTF-8 JSON (the line is answered as ``"line:N"``)."""


def _refuse_constant(name: str) -> Any:
    """``json.loads`` hook for ``NaN``, ``Infinity`` and ``-Infinity``: Python accepts them, JSON does not."""
    raise _BadId(f"{name} is not valid JSON")


def _marked_float(literal: str) -> float:
    """``parse_float`` of the input lines: a float, or an :class:`~bot.jobs.jsonlines.Underflow` for a number that
    underflows to zero (an infinity stays a float: only an id that holds one is refused, by :func:`_check_id`)."""
    value = float(literal)
    if value == 0.0 and any(c in "123456789" for c in literal.lower().split("e")[0]):
        return Underflow(value)
    return value


def _check_id(ident: Any) -> None:
    """Raise :class:`_BadId` when ``ident`` cannot be written as UTF-8 JSON (a lone UTF-16 surrogate in it), or
    holds a number beyond a 64-bit float (``1e400``: valid JSON, but read as ``inf``, written as ``Infinity``;
    ``1e-400``: read as zero, written as ``0.0``). Numbers elsewhere in the line are not echoed and not checked."""
    if holds_underflow(ident):
        raise _BadId("the id holds a number beyond the range of a 64-bit float (such as 1e-400), which would be "
                     "echoed as 0.0, another id")
    try:
        json.dumps(ident, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _BadId("the id holds a lone UTF-16 surrogate, which cannot be written as UTF-8") from exc
    except ValueError as exc:  # "Out of range float values are not JSON compliant"
        raise _BadId("the id holds a number beyond the range of a 64-bit float (such as 1e400), which cannot be "
                     "echoed as JSON") from exc


class OutputError(Exception):
    """Standard output could not be written (a full disk, an I/O error; not a reader that went away, which is
    :exc:`BrokenPipeError`): the output is incomplete. ``cause``: the :exc:`OSError`."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.strerror or str(cause))
        self.cause = cause


async def _flush(pending: list[tuple[Any, Any]], stdout: IO[str]) -> int:
    """Write the answers of ``pending`` (waiting for each verdict in turn) to ``stdout``, then empty it. Returns
    how many of them the model could not score (``score_status`` ``"scorer_error"``).

    Raises:
        OutputError: ``stdout`` could not be written (:exc:`BrokenPipeError` is raised as it is).
    """
    try:
        return await _write(pending, stdout)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc) from exc


async def _write(pending: list[tuple[Any, Any]], stdout: IO[str]) -> int:
    unscored = 0
    for ident, fut in pending:
        if isinstance(fut, str):
            out: dict[str, Any] = {"id": ident, "error": fut}
        else:
            outcome = await fut
            v = outcome.verdict.to_json()
            out = {"id": ident, **{k: v[k] for k in ("scores", "rule_hits", "flagged", "labels", "action")},
                   "score_status": outcome.verdict.score_status, "language": outcome.verdict.language}
            unscored += outcome.verdict.score_status == "scorer_error"
        stdout.write(json_line(out) + "\n")
    stdout.flush()
    pending.clear()
    return unscored
