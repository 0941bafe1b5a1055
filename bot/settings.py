"""Process settings read from the environment (tokens, paths, model choice). Never logged in full.

Layer: composition root helpers (read by :mod:`bot.runtime`). Server policy lives in policy files, not here: the
default policy ships inside the package (``bot/config/default.toml``), per-server files in ``config/servers/``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.config import DEFAULT_POLICY_PATH

REPO_ROOT = Path(__file__).resolve().parents[1]


def default_servers_dir() -> Path:
    """``config/servers`` of the repository checkout this package runs from, else ``config/servers`` under the
    current folder (an installed package has no checkout; the folder may not exist: then no server has a file)."""
    checkout = REPO_ROOT / "config" / "servers"
    return checkout if (REPO_ROOT / "pyproject.toml").exists() else Path("config") / "servers"


@dataclass(frozen=True)
class Settings:
    """Settings of one bot or CLI process.

    Attributes:
        db_path: The mod log (``MODBOT_DB`` / ``--db``, default ``modbot.db``): a file path means SQLite (a
            :class:`Path`), a ``postgresql://`` URL means PostgreSQL (kept as ``str``: see :func:`database`).
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
        announce_store: Print ``mod log: <absolute path or URL, password hidden>`` on stderr once the store is
            open (set by the CLI for ``scan``, ``discord`` and ``slack``; not read from the environment).
    """

    db_path: Path | str = Path("modbot.db")
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
    announce_store: bool = False

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Read settings from ``env`` (default ``os.environ``)."""
        e = dict(os.environ if env is None else env)

        def path(name: str) -> Path | None:
            return Path(e[name]) if e.get(name) else None

        return cls(
            db_path=database(e["MODBOT_DB"]) if e.get("MODBOT_DB") else Path("modbot.db"),
            model=e.get("MODBOT_MODEL", "embedded"),
            checkpoint=path("MODBOT_CHECKPOINT"),
            config_dir=path("MODBOT_CONFIG_DIR"),
            bf16=e.get("MODBOT_BF16", "0") not in ("", "0", "false", "no"),
            int8=e.get("MODBOT_INT8", "0") not in ("", "0", "false", "no"),
            route_model=e.get("MODBOT_ROUTE_MODEL") or None,
            route_checkpoint=path("MODBOT_ROUTE_CHECKPOINT"),
            route_config_dir=path("MODBOT_ROUTE_CONFIG_DIR"),
            route_languages=tuple(x.strip().lower() for x in e.get("MODBOT_ROUTE_LANGUAGES", "").split(",") if x.strip()),
            default_policy=path("MODBOT_POLICY") or DEFAULT_POLICY_PATH,
            servers_dir=path("MODBOT_SERVERS_DIR") or default_servers_dir(),
            discord_token=e.get("DISCORD_TOKEN") or None,
            slack_bot_token=e.get("SLACK_BOT_TOKEN") or None,
            slack_app_token=e.get("SLACK_APP_TOKEN") or None,
            slack_signing_secret=e.get("SLACK_SIGNING_SECRET") or None,
        )


#: URL schemes that name a PostgreSQL server (everything else is a SQLite file path).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def database(value: str | os.PathLike[str]) -> Path | str:
    """The ``--db`` / ``MODBOT_DB`` value as the store expects it: a ``postgresql://`` (or ``postgres://``) URL
    stays a ``str`` (a :class:`Path` would fold its ``//``); anything else is a SQLite file :class:`Path`."""
    text = os.fspath(value)
    return text if text.startswith(POSTGRES_SCHEMES) else Path(text)


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
