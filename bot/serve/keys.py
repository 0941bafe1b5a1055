"""API keys and per-key rate limits of the scoring service.

Keys come from ``MODBOT_SERVE_KEYS`` (comma-separated) and/or the file ``MODBOT_SERVE_KEYS_FILE`` (``--keys-file``):
one key per line, optionally ``name:key`` (the name is what metrics and logs show; default ``key-<line>``), ``#``
comments and blank lines ignored. A key is compared with every configured key in constant time
(:func:`hmac.compare_digest`); keys are never logged, echoed or stored. With no key configured the service binds to a
loopback address only (:func:`bot.serve.app.main` refuses another host).

Rate limits: a token bucket per key (``rate`` requests per second, ``burst`` at once), answered with 429 and
``Retry-After`` (whole seconds until a token is back) when empty.

Layer: composition root helper (standard library only).
"""

from __future__ import annotations

import hmac
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


class KeyConfigError(ValueError):
    """The keys file or variable is unusable; the message names the file (and line) and the reason, never a key."""


#: Shortest key accepted (a guessable key is refused at start).
MIN_KEY_CHARS = 16


@dataclass(frozen=True)
class KeyRing:
    """The configured API keys: ``{name: key}``; empty means no key is needed (loopback only)."""

    keys: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, path: Path | None = None, env: Mapping[str, str] | None = None) -> KeyRing:
        """Keys from ``path`` (the keys file) and ``env["MODBOT_SERVE_KEYS"]`` (default ``os.environ``).

        Raises:
            KeyConfigError: the file cannot be read, a line is malformed, a key is shorter than
                :data:`MIN_KEY_CHARS` or not printable ASCII, two keys share a name, or two names share a key (file
                and line named; the key itself never).
        """
        e = os.environ if env is None else env
        keys: dict[str, str] = {}

        def add(name: str, key: str, where: str) -> None:
            if len(key) < MIN_KEY_CHARS:
                raise KeyConfigError(f"{where}: key {name!r} is shorter than {MIN_KEY_CHARS} characters")
            if not (key.isascii() and key.isprintable()):
                raise KeyConfigError(f"{where}: key {name!r} is not printable ASCII (a key travels in URLs and "
                                     "HTTP headers)")
            if name in keys:
                raise KeyConfigError(f"{where}: key name {name!r} is used twice")
            same = next((other for other, k in keys.items() if hmac.compare_digest(k, key)), None)
            if same is not None:
                raise KeyConfigError(f"{where}: key {name!r} is the same as key {same!r} (give each client its own)")
            keys[name] = key

        for n, raw in enumerate(x.strip() for x in e.get("MODBOT_SERVE_KEYS", "").split(",")):
            if raw:
                name, _, key = raw.rpartition(":") if ":" in raw else ("", "", raw)
                add(name or f"env-{n + 1}", key, f"MODBOT_SERVE_KEYS item {n + 1}")
        if path is not None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                why = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else (exc.strerror or type(exc).__name__)
                raise KeyConfigError(f"{path}: cannot read the keys file: {why}") from exc
            for n, line in enumerate(text.splitlines(), start=1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                name, _, key = line.rpartition(":") if ":" in line else ("", "", line)
                if any(c.isspace() for c in key):
                    raise KeyConfigError(f"{path}, line {n}: a key has no spaces (write name:key)")
                add(name.strip() or f"key-{n}", key, f"{path}, line {n}")
        return cls(keys)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def identify(self, presented: str | None) -> str | None:
        """The name of the key ``presented`` matches, else ``None``. Every configured key is compared (constant
        time per key), so the time taken says nothing about which key, or how much of one, matched."""
        if presented is None:
            return None
        given = presented.encode("utf-8", "surrogatepass")
        found: str | None = None
        for name, key in self.keys.items():
            if hmac.compare_digest(given, key.encode("utf-8")) and found is None:
                found = name
        return found


class RateLimiter:
    """Token buckets per key name.

    Args:
        rate: Requests per second refilled (``> 0``).
        burst: Bucket size: requests allowed at once (``>= 1``).
        clock: Monotonic seconds (tests pass a fake clock).
        max_names: Past this many buckets, those that have refilled are forgotten (a full bucket is what a new
            name gets, so nothing changes for them): wrong-key requests are limited per client address, and
            without it one request from each of many addresses would keep a bucket each for ever. Memory is then
            bounded by the names seen within ``burst / rate`` seconds.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 max_names: int = 10_000) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.max_names = max_names
        self._prune_at = max_names
        self._buckets: dict[str, tuple[float, float]] = {}

    def __len__(self) -> int:
        return len(self._buckets)

    def _prune(self, now: float) -> None:
        """Forget the buckets that have refilled; prune again only once there are twice as many as are left (so a
        flood of active names costs amortised constant time per request)."""
        full = float(self.burst)
        self._buckets = {name: (tokens, at) for name, (tokens, at) in self._buckets.items()
                         if tokens + (now - at) * self.rate < full}
        self._prune_at = max(self.max_names, 2 * len(self._buckets))

    def take(self, name: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from ``name``'s bucket: ``0.0`` when allowed, else the seconds until it would be
        (nothing is taken then)."""
        now = self.clock()
        tokens, at = self._buckets.get(name, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens >= cost:
            self._buckets[name] = (tokens - cost, now)
            wait = 0.0
        else:
            self._buckets[name] = (tokens, now)
            wait = (cost - tokens) / self.rate
        if len(self._buckets) > self._prune_at:
            self._prune(now)
        return wait

    @staticmethod
    def retry_after(seconds: float) -> str:
        """The ``Retry-After`` header value: whole seconds, at least 1."""
        return str(max(1, math.ceil(seconds)))
