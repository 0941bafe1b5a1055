"""JSON lines as the jobs write them (``score``'s standard output, ``scan --out``): one record per line for every
reader."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any


def json_line(obj: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """``obj`` as one line of JSON, without its ``"\\n"``: text that is not ASCII written as it is (the file is
    UTF-8), but U+2028 and U+2029 (line and paragraph separator) escaped as ``\\u2028`` / ``\\u2029``, since
    JavaScript before ES2019, ``str.splitlines`` and many editors end a line there. ``json.loads`` reads the same
    value back. ``default``: as :func:`json.dumps`'s.

    Raises:
        TypeError, ValueError: as :func:`json.dumps` (a value it cannot write).
    """
    # json.dumps writes these characters only inside strings, where the escape means the same character
    return json.dumps(obj, ensure_ascii=False, default=default).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


class OutOfRange(ValueError):
    """A JSON number a 64-bit float cannot hold (:func:`exact_float`)."""


class Underflow(float):
    """A JSON number that a 64-bit float reads as zero though one of its digits is not (``1e-400``): its value is that
    zero (signed), the type marks that echoing it (``0.0``) would change it. See :func:`holds_underflow`."""


def exact_float(literal: str) -> float:
    """``json.loads``'s ``parse_float`` for input whose numbers may be echoed back: ``literal`` as a float; one
    that underflows to zero is returned as an :class:`Underflow` (refused where it would be echoed, an id, by
    :func:`holds_underflow`; an ordinary zero elsewhere).

    Raises:
        OutOfRange: the number overflows to an infinity (``1e400``), which would be written back as ``Infinity``,
            not JSON; the message names the literal (first 40 characters).
    """
    value = float(literal)
    if not math.isfinite(value):
        raise OutOfRange(f"Number out of range of a 64-bit float: {literal[:40]}")
    if value == 0.0 and any(c in "123456789" for c in literal.lower().split("e")[0]):
        return Underflow(value)
    return value


def holds_underflow(obj: Any) -> bool:
    """``obj`` (parsed with :func:`exact_float`) holds, at any depth, a number that underflowed to zero. Iterative:
    ``obj`` may be nested as deep as the JSON decoder allows (a recursive walk, two frames per level, raised
    ``RecursionError`` on an id of 350 nested lists that ``json.loads`` had read)."""
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, Underflow):
            return True
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False
