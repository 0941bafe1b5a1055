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


def exact_float(literal: str) -> float:
    """``json.loads``'s ``parse_float`` for input whose numbers are echoed back (ids): ``literal`` as a float,
    refused when a 64-bit float cannot hold it: ``1e400`` reads as an infinity (written back as ``Infinity``, which
    is not JSON) and ``1e-400`` as zero (written back as ``0.0``, another value than the caller sent).

    Raises:
        OutOfRange: the number is out of a 64-bit float's range; the message names the literal (first 40 characters).
    """
    value = float(literal)
    if not math.isfinite(value) or (value == 0.0 and any(c in "123456789" for c in literal.lower().split("e")[0])):
        raise OutOfRange(f"Number out of range of a 64-bit float: {literal[:40]}")
    return value
