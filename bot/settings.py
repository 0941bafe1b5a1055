"""Process settings read from the environment (tokens, paths, model choice). Never logged in full.

Layer: composition root helpers (read by :mod:`bot.runtime`). Server policy lives in policy files, not here: the
default policy ships inside the package (``bot/config/default.toml``), per-server files in ``config/servers/``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.config import DEFAULT_POLICY_PATH

REPO_ROOT = Path(__file__).resolve().parents[1]

#: Default bound on messages the moderation service holds at once (``MODBOT_QUEUE_MAX``); see docs/live-path.md.
QUEUE_MAX = 1024
#: Catch-up after a restart, per channel: at most this many messages (``MODBOT_CATCHUP_MESSAGES``) ...
CATCHUP_MESSAGES = 200
#: ... posted at most this many hours ago (``MODBOT_CATCHUP_HOURS``).
CATCHUP_HOURS = 24.0


class SettingsError(ValueError):
    """An environment variable has a value the bot cannot use; the message names the variable and the reason."""


def _int_env(e: dict[str, str], name: str, default: int, minimum: int) -> int:
    raw = e.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, not {raw!r}") from None
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {value}")
    return value


def _float_env(e: dict[str, str], name: str, default: float, minimum: float) -> float:
    raw = e.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, not {raw!r}") from None
    if not value >= minimum:
        raise SettingsError(f"{name} must be at least {minimum:g}, not {raw}")
    return value


#: Most shards ``MODBOT_SHARD_COUNT`` may name (Discord's largest bots run a few thousand).
MAX_SHARDS = 65_536


def _shards(e: dict[str, str]) -> tuple[tuple[int, ...] | None, int | None]:
    """``MODBOT_SHARD_IDS`` (``0,1`` or a range ``0-3``) and ``MODBOT_SHARD_COUNT`` (at most :data:`MAX_SHARDS`);
    ids need a count. Each range is checked against the count before it is expanded (a typo such as
    ``0-999999999`` is an error, not a billion shard numbers)."""
    count = _int_env(e, "MODBOT_SHARD_COUNT", 0, 1) or None
    if count is not None and count > MAX_SHARDS:
        raise SettingsError(f"MODBOT_SHARD_COUNT must be at most {MAX_SHARDS}, not {count}")
    raw = e.get("MODBOT_SHARD_IDS", "").strip()
    if not raw:
        return None, count
    ranges: list[tuple[int, int]] = []
    try:
        for part in raw.split(","):
            lo, _, hi = part.strip().partition("-")
            ranges.append((int(lo), int(hi or lo)))
    except ValueError:
        raise SettingsError(f"MODBOT_SHARD_IDS must be shard numbers like 0,1 or 0-3, not {raw!r}") from None
    if count is None:
        raise SettingsError("MODBOT_SHARD_IDS needs MODBOT_SHARD_COUNT (the total number of shards of the bot)")
    if any(not 0 <= lo <= hi < count for lo, hi in ranges):
        raise SettingsError(f"MODBOT_SHARD_IDS {raw!r}: each shard must be in 0..{count - 1} "
                            f"(MODBOT_SHARD_COUNT={count})")
    return tuple(sorted({i for lo, hi in ranges for i in range(lo, hi + 1)})), count


def default_servers_dir() -> Path:
    """``config/servers`` of the repository checkout this package runs from, else ``config/servers`` under the
    current folder (an installed package has no checkout; the folder may not exist: then no server has a file)."""
    checkout = REPO_ROOT / "config" / "servers"
    return checkout if (REPO_ROOT / "pyproject.toml").exists() else Path("config") / "servers"


def default_db_path(env: dict[str, str] | None = None) -> Path:
    """Where the mod log lives when neither ``--db`` nor ``MODBOT_DB`` says: ``$XDG_DATA_HOME/modbot/modlog.db``,
    else ``~/.local/share/modbot/modlog.db`` (the XDG base directory default), an absolute path that does not
    depend on the folder the bot is started from (a relative default silently began an empty mod log whenever the
    bot was started elsewhere; issue 28). A service sets ``MODBOT_DB`` (``deploy/*.service``:
    ``/var/lib/modbot/modlog.db``). The folder may not exist yet: :func:`ensure_db_folder` creates it."""
    e = os.environ if env is None else env
    data_home = e.get("XDG_DATA_HOME") or ""
    base = Path(data_home) if Path(data_home).is_absolute() else Path.home() / ".local" / "share"
    return base / "modbot" / "modlog.db"


def ensure_db_folder(db_path: Path | str) -> None:
    """Create the default database's folder (owner-only, 0700) when it is missing; any other path, and a
    database URL (``str``), is left as given (a typo in ``--db`` should fail, not create folders). Raises
    ``OSError`` when it cannot be created."""
    if isinstance(db_path, Path) and db_path == default_db_path() and not db_path.parent.exists():
        db_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)


@dataclass(frozen=True)
class Settings:
    """Settings of one bot or CLI process.

    Attributes:
        db_path: The mod log (``MODBOT_DB`` / ``--db``): a file path means SQLite (a :class:`Path`), a
            ``postgresql://`` URL means PostgreSQL (kept as ``str``: see :func:`database`); default
            :func:`default_db_path`: ``$XDG_DATA_HOME/modbot/modlog.db`` or ``~/.local/share/modbot/modlog.db``.
        model: ``embedded`` (default), a detoxify model name (``original``, ``unbiased``, ``multilingual``,
            ``original-small``, ``unbiased-small``; downloaded by detoxify, needs internet) or ``local``
            (``MODBOT_MODEL``).
        checkpoint: Local detoxify checkpoint for ``model=local`` (``MODBOT_CHECKPOINT``).
        config_dir: Local huggingface config + tokenizer folder for ``model=local`` (``MODBOT_CONFIG_DIR``).
        bf16: Score under bfloat16 autocast (``MODBOT_BF16=1``); fast only on CPUs with AMX; see
            docs/performance.md.
        int8: Quantise the model's Linear layers to int8 (``MODBOT_INT8=1``); see docs/performance.md.
        route_model: A second model for messages the main model does not read (``MODBOT_ROUTE_MODEL``): a detoxify
            name (``multilingual``: needs internet the first time) or ``local`` with ``route_checkpoint`` /
            ``route_config_dir`` / ``route_languages``; ``None`` (default): no routing
            (:class:`bot.scoring.routing.LanguageRoutedScorer`).
        route_checkpoint / route_config_dir: The second model's local checkpoint and config folder
            (``MODBOT_ROUTE_CHECKPOINT``, ``MODBOT_ROUTE_CONFIG_DIR``).
        route_languages: ISO 639-1 codes the local second model reads (``MODBOT_ROUTE_LANGUAGES=fr,es,it``);
            a named model declares its own.
        default_policy: The default policy file (``MODBOT_POLICY``, any file name; default the packaged
            ``bot/config/default.toml``).
        servers_dir: Folder of per-server override files ``<platform>-<server id>.toml`` (``MODBOT_SERVERS_DIR``,
            default :func:`default_servers_dir`).
        discord_token: ``DISCORD_TOKEN``; never logged or stored.
        slack_bot_token / slack_app_token / slack_signing_secret: Slack credentials; never logged or stored.
        queue_max: Most messages the moderation service holds at once before the adapters wait for a slot
            (``MODBOT_QUEUE_MAX``, default :data:`QUEUE_MAX`).
        catchup_messages / catchup_hours: After a restart, each channel's history since its last recorded message
            is judged, at most this many messages and hours back (``MODBOT_CATCHUP_MESSAGES``, default 200;
            ``MODBOT_CATCHUP_HOURS``, default 24; 0 messages turns catch-up off).
        shard_ids / shard_count: The Discord shards this process owns (``MODBOT_SHARD_IDS=0,1`` or ``0-1``) out
            of how many (``MODBOT_SHARD_COUNT``); ``None``: one process, Discord's recommended count.
        scorer_url: Score through a running ``python -m bot serve`` at this base URL instead of loading a model
            (``MODBOT_SCORER_URL``, e.g. ``http://127.0.0.1:8080``; :class:`bot.scoring.remote.RemoteScorer`).
        scorer_key: API key sent to that service (``MODBOT_SCORER_KEY``); never logged or stored.
        scorer_timeout_s: Longest one remote scoring call may take, retries included (``MODBOT_SCORER_TIMEOUT_S``,
            default 10 s); then the policy's ``on_scorer_error`` applies.
        runtime: Model runtime of the embedded model (``MODBOT_RUNTIME``): ``auto`` (default: ONNX Runtime when its
            cached export passed its check, else torch), ``onnx`` or ``torch`` (detoxify itself).
        precision: Precision of the embedded model on ONNX Runtime (``MODBOT_PRECISION``): ``auto`` (default: int8
            where the CPU has VNNI and a recorded paired check showed no verdict changed, else fp32; see
            :mod:`bot.scoring.precision`), ``fp32`` or ``int8``.
        serve_keys_file: API keys file of ``python -m bot serve`` (``MODBOT_SERVE_KEYS_FILE``; see
            :mod:`bot.serve.keys`).
        announce_store: Print ``mod log: <absolute path or URL, password hidden>`` on stderr once the store is
            open (set by the CLI for ``scan``, ``discord`` and ``slack``; not read from the environment).
    """

    db_path: Path | str = field(default_factory=default_db_path)
    model: str = "embedded"
    checkpoint: Path | None = None
    config_dir: Path | None = None
    bf16: bool = False
    int8: bool = False
    route_model: str | None = None
    route_checkpoint: Path | None = None
    route_config_dir: Path | None = None
    route_languages: tuple[str, ...] = ()
    default_policy: Path = DEFAULT_POLICY_PATH
    servers_dir: Path = field(default_factory=default_servers_dir)
    discord_token: str | None = field(default=None, repr=False)
    slack_bot_token: str | None = field(default=None, repr=False)
    slack_app_token: str | None = field(default=None, repr=False)
    slack_signing_secret: str | None = field(default=None, repr=False)
    queue_max: int = QUEUE_MAX
    catchup_messages: int = CATCHUP_MESSAGES
    catchup_hours: float = CATCHUP_HOURS
    shard_ids: tuple[int, ...] | None = None
    shard_count: int | None = None
    scorer_url: str | None = None
    scorer_key: str | None = field(default=None, repr=False)
    scorer_timeout_s: float = 10.0
    runtime: str = "auto"
    precision: str = "auto"
    serve_keys_file: Path | None = None
    announce_store: bool = False

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Read settings from ``env`` (default ``os.environ``).

        Raises:
            SettingsError: a number, shard, switch, runtime or scorer setting is malformed, or
                ``MODBOT_SERVERS_DIR`` names something that is not a folder (the message names the variable).
        """
        e = dict(os.environ if env is None else env)
        shard_ids, shard_count = _shards(e)

        def path(name: str) -> Path | None:
            return Path(e[name]) if e.get(name) else None

        servers = path("MODBOT_SERVERS_DIR")
        if servers is not None and servers.exists() and not servers.is_dir():  # no server file would ever be found
            raise SettingsError(f"MODBOT_SERVERS_DIR={str(servers)!r} is not a folder: name the folder that holds the "
                                "servers' own files (<platform>-<server id>.toml)")

        return cls(
            db_path=database(e["MODBOT_DB"], "MODBOT_DB") if e.get("MODBOT_DB") else default_db_path(e),
            model=e.get("MODBOT_MODEL", "embedded"),
            checkpoint=path("MODBOT_CHECKPOINT"),
            config_dir=path("MODBOT_CONFIG_DIR"),
            bf16=_switch(e, "MODBOT_BF16"),
            int8=_switch(e, "MODBOT_INT8"),
            route_model=e.get("MODBOT_ROUTE_MODEL") or None,
            route_checkpoint=path("MODBOT_ROUTE_CHECKPOINT"),
            route_config_dir=path("MODBOT_ROUTE_CONFIG_DIR"),
            route_languages=tuple(x.strip().lower() for x in e.get("MODBOT_ROUTE_LANGUAGES", "").split(",") if x.strip()),
            default_policy=path("MODBOT_POLICY") or DEFAULT_POLICY_PATH,
            servers_dir=servers or default_servers_dir(),
            discord_token=e.get("DISCORD_TOKEN") or None,
            slack_bot_token=e.get("SLACK_BOT_TOKEN") or None,
            slack_app_token=e.get("SLACK_APP_TOKEN") or None,
            slack_signing_secret=e.get("SLACK_SIGNING_SECRET") or None,
            queue_max=_int_env(e, "MODBOT_QUEUE_MAX", QUEUE_MAX, 1),
            catchup_messages=_int_env(e, "MODBOT_CATCHUP_MESSAGES", CATCHUP_MESSAGES, 0),
            catchup_hours=_float_env(e, "MODBOT_CATCHUP_HOURS", CATCHUP_HOURS, 0.0),
            shard_ids=shard_ids,
            shard_count=shard_count,
            scorer_url=e.get("MODBOT_SCORER_URL") or None,
            scorer_key=e.get("MODBOT_SCORER_KEY") or None,
            scorer_timeout_s=_seconds(e, "MODBOT_SCORER_TIMEOUT_S", 10.0),
            runtime=_choice(e, "MODBOT_RUNTIME", ("auto", "onnx", "torch"), "auto"),
            precision=_choice(e, "MODBOT_PRECISION", ("auto", "fp32", "int8"), "auto"),
            serve_keys_file=path("MODBOT_SERVE_KEYS_FILE"),
        )


def _seconds(env: dict[str, str], name: str, default: float, maximum: float = 86_400.0) -> float:
    """A positive number of seconds from ``env[name]``, at most ``maximum`` (a day: ``inf`` or ``1e300`` would
    reach a socket timeout that overflows the platform's ``time_t``).

    Raises:
        SettingsError: not a positive number up to ``maximum`` (the message names the variable).
    """
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= maximum:  # NaN fails too
        raise SettingsError(f"{name}={raw!r}: expected a positive number of seconds, at most {maximum:g}")
    return value


#: Spellings of on and off for a switch variable (compared lower-cased, spaces stripped; empty is off).
SWITCH_ON = ("1", "true", "yes", "on")
SWITCH_OFF = ("0", "false", "no", "off")


def _switch(env: dict[str, str], name: str) -> bool:
    """``env[name]`` as on or off (:data:`SWITCH_ON`, :data:`SWITCH_OFF`, any case; unset or empty: off).

    Raises:
        SettingsError: another value (``MODBOT_INT8=maybe``; it was read as on): the message names the variable.
    """
    raw = env.get(name, "").strip().lower()
    if raw in SWITCH_ON:
        return True
    if not raw or raw in SWITCH_OFF:
        return False
    raise SettingsError(f"{name}={env[name]!r}: expected on ({', '.join(SWITCH_ON)}) or off "
                        f"({', '.join(SWITCH_OFF)})")


def _choice(env: dict[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    """``env[name]`` (lower-cased) when it is one of ``choices``.

    Raises:
        SettingsError: another value (the message names the variable and the choices).
    """
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in choices:
        raise SettingsError(f"{name}={raw!r}: expected one of {', '.join(choices)}")
    return raw


#: URL schemes that name a PostgreSQL server (everything else is a SQLite file path).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


#: A URL's scheme (``mysql://``): a ``--db`` value that starts so names a server, never a SQLite file.
URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def database(value: str | os.PathLike[str], name: str = "--db") -> Path | str:
    """The ``--db`` / ``MODBOT_DB`` value as the store expects it: a ``postgresql://`` (or ``postgres://``) URL
    stays a ``str`` (a :class:`Path` would fold its ``//``); anything else is a SQLite file :class:`Path`.

    Raises:
        SettingsError: an empty value, or another URL scheme (``mysql://``, ``sqlite://``...): the message names ``name`` (the option
            or variable), the scheme (never the rest of the URL, which may hold a password) and the supported forms.
    """
    text = os.fspath(value)
    if not text.strip():
        raise SettingsError(f"{name} is empty: give a SQLite file path or a postgresql:// URL")
    if text.startswith(POSTGRES_SCHEMES):
        return text
    scheme = URL_SCHEME.match(text)
    if scheme:
        raise SettingsError(f"{name}: {scheme.group(1)}:// databases are not supported; use a SQLite file path "
                            f"or a postgresql:// URL")
    return Path(text)


def with_paths(settings: Settings | None = None, db_path: str | os.PathLike[str] | None = None,
                 policy_dir: str | os.PathLike[str] | None = None) -> Settings:
    """The bot's :class:`Settings`: ``settings`` (default ``Settings.from_env()``), with ``db_path`` and the older
    ``policy_dir`` form applied: ``policy_dir/servers`` as the per-server folder and ``policy_dir/default.toml`` as
    the default policy when that file exists."""
    s = settings if settings is not None else Settings.from_env()
    changes: dict[str, Any] = {}
    if db_path is not None:
        changes["db_path"] = database(db_path)
    if policy_dir is not None:
        changes["servers_dir"] = Path(policy_dir) / "servers"
        if (Path(policy_dir) / "default.toml").exists():
            changes["default_policy"] = Path(policy_dir) / "default.toml"
    return replace(s, **changes) if changes else s
