"""The scan row schema: what ``scan`` keeps per message for ``--out`` and the report (:func:`message_fields`,
:func:`verdict_fields`, :func:`scan_row`), the policy provenance per server, and how paths are shown.

Layer: ``bot.report``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bot.core.models import Message, Verdict
from bot.report.ids import discord_link, platform_name

#: Longest message text shown in the report, in characters (the rest is cut with an ellipsis).
MAX_TEXT = 500
#: Longest text a scan row carries (``scan`` keeps this much of every message for the report).
ROW_TEXT = 1000


def display_path(path: str | Path) -> str:
    """A policy or input path as the report shows it, without the host's folders: the packaged default policy as
    ``bot/config/default.toml (packaged default)``, a path under the current folder relative to it, any other
    absolute path as ``…/<folder>/<file>`` (the host's home and user names stay out of a report that is shared)."""
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    package = Path(__file__).resolve().parents[1]  # bot/
    try:
        return f"bot/{p.resolve().relative_to(package).as_posix()} (packaged default)"
    except ValueError:
        pass
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return "…/" + "/".join(p.parts[-2:])


def message_fields(m: Message) -> dict[str, Any]:
    """The report's fields of one message: names and ids, platform, server, thread links, time, text and link.

    Keys: ``platform`` (raw ``ServerRef.platform``), ``source`` (``"Discord"``/``"Slack"``/...), ``server_id``,
    ``server_name``, ``channel`` (name, else id), ``channel_id``, ``parent_id``, ``is_thread``, ``author`` (name,
    else id), ``author_id``, ``reply_to``, ``time`` (ISO-8601 UTC; ``None`` for a message without a time), ``text`` (first :data:`ROW_TEXT` characters)
    and ``link`` (a URL or ``None``: only Discord messages with real ids have one; Slack exports carry none).
    """
    link = None
    if platform_name(m.server.platform, m.id) == "Discord":
        link = discord_link(m.server.id, m.channel.id, m.id, m.created_at)
    return {
        "platform": m.server.platform,
        "source": platform_name(m.server.platform, m.id),
        "server_id": m.server.id,
        "server_name": m.server.name,
        "channel": m.channel.name or m.channel.id,
        "channel_id": m.channel.id,
        "parent_id": m.channel.parent_id,
        "is_thread": m.channel.is_thread,
        "author": m.author.name or m.author.id,
        "author_id": m.author.id,
        "reply_to": m.reply_to,
        "time": m.created_at.isoformat() if m.created_at is not None else None,
        "text": m.text[:ROW_TEXT],
        "link": link,
    }


def verdict_fields(v: Verdict) -> dict[str, Any]:
    """The report's fields of one verdict beyond :meth:`Verdict.to_json`.

    Keys: ``shadow``, ``raid_mode``, ``tiers`` (``{label: [review, act]}``, scores in [0, 1] or ``None`` for an off
    tier: the tiers that actually applied), ``policy_version``, ``score_status``, ``strike_points`` and ``actions``
    (``[{"kind", "reason", "duration_s"}]``, strongest first).
    """
    return {
        "shadow": v.shadow,
        "raid_mode": v.raid_mode,
        "tiers": {k: list(t) for k, t in v.tiers.items()},
        "policy_version": v.policy_version,
        "score_status": v.score_status,
        "strike_points": v.strike_points,
        "actions": [{"kind": a.kind.label, "reason": a.reason, "duration_s": a.duration_s} for a in v.actions],
    }


def scan_row(v: Verdict) -> dict[str, Any]:
    """One report row for a verdict judged now: :meth:`Verdict.to_json` plus :func:`verdict_fields` and
    :func:`message_fields` (which replaces ``channel``/``author`` with the same name-or-id values)."""
    return {**v.to_json(), **verdict_fields(v), **message_fields(v.message)}


async def policy_provenance(registry: Any, servers: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Which policy files, in order, and which version judge each server (for the report's server table).

    Args:
        registry: A :class:`bot.core.policy_registry.PolicyRegistry`.
        servers: ``(platform, server id)`` pairs.

    Returns:
        ``{"<platform>/<server id>": {"files": [path str], "version": str}}``; ``files`` lists the default, every
        ``--policy`` file and the server's own file when one exists in the registry's servers folder
        (:meth:`~bot.core.policy_registry.PolicyRegistry.server_file`: a Discord export's guild uses
        ``discord-<guild id>.toml``).
    """
    out: dict[str, dict[str, Any]] = {}
    for platform, server_id in servers:
        files = [registry.default_path, *registry.extra_files]
        own = registry.server_file(platform, server_id)
        if own is not None:
            files.append(own)
        policy = await registry.get(platform, server_id)
        out[f"{platform}/{server_id}"] = {"files": [display_path(f) for f in files], "version": policy.version}
    return out
