"""Small helpers shared by the rules: message time and raid-mode limits.

Layer: ``bot.core``. Standard library only.
"""

from __future__ import annotations

import math
from datetime import datetime


def epoch_s(when: datetime) -> float:
    """Seconds since the Unix epoch of a timezone-aware datetime.

    Raises:
        ValueError: ``when`` is naive (the core only accepts timezone-aware UTC datetimes).
    """
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"naive datetime {when.isoformat()}: the core needs timezone-aware UTC datetimes")
    return when.timestamp()


def scaled_limit(limit: int, factor: float, minimum: int = 1) -> int:
    """``limit`` made stricter by raid mode's ``factor`` (in (0, 1]): ``max(minimum, floor(limit * factor))``.

    Example: a mention limit of 5 with factor 0.8 becomes 4.
    """
    return max(minimum, math.floor(limit * factor + 1e-9))
