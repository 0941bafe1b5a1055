"""Privacy: ``/mydata`` export, ``/mydata forget`` and text retention (mixin of
:class:`bot.store.sqlite.SqliteStore`).

Retention: message excerpts are kept only for the policy's retention period; :meth:`PrivacyMixin.purge_expired_text`
erases older ones while verdicts, cases and strikes stay (the mod log outlives the text).

Three rules quote the member's text in a hit's detail (:data:`QUOTING_RULES`): a ``[[rules.regex]]`` hit the text
it matched (``"<name>: <matched text>"``, :mod:`bot.core.rules.regex`), the ``invite`` rule the invite code and the
``link`` rule the link's host (:mod:`bot.core.rules.links_rule`). That detail is copied into the reasons of the
message's case, review item and strike (as :func:`bot.core.models.hit_reason` writes it, or as ``"<rule>
(<detail>)"`` in an agreement's reason). Wherever a message's text is erased (retention, forgetting) the quote goes
with it: in the message's ``verdicts`` and ``replay_verdicts`` rule hits a regex detail becomes ``"<name>: [text
erased]"`` and an invite or link detail ``"[text erased]"`` (:data:`ERASED_QUOTE`), and the reasons of the cases,
review items and strikes of that message read the same. Until then the moderators' cards show the quote.

Forgetting replaces the member id everywhere by a stable pseudonym ``forgotten-<16 hex>``: an HMAC-SHA256 of
``platform/server/member`` under a random per-database salt (``store_meta``), so forgetting the same member twice
gives the same pseudonym, while the pseudonym cannot be reversed by hashing guessed ids without the database.
The id in a raid's burst-window members (``raids.members``, a JSON list) is replaced too; the member's first-seen
and join times (``member_first_seen``, ``member_joins``: looked up by the real id only) are deleted. Text the member
wrote (excerpts, appeal texts, report reasons, and a report's text a moderator's decision copied into the reasons
of its case and strike: :func:`bot.core.models.review_reason`) is erased, and so is the shown name the name watch
flagged (its case's and review item's reasons read ``"<kind> [text erased]"``, a decision's copy ``"review #<id>:
[text erased]"``). Rows of the mod log proper are never
deleted, so case numbers and counts stay intact. Message keys stay known, so a replayed export does not re-insert the text.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime
from typing import Any

from bot.core.models import hit_reason, review_reason
from bot.store.base import Row, StoreBase
from bot.store.schema import dump_json, load_json, to_db_time, utcnow

#: Columns holding a member id, per table, rewritten by ``forget_member``.
_MEMBER_COLUMNS: dict[str, tuple[str, ...]] = {
    "messages": ("author_id",),
    "verdicts": ("member_id",),
    "replay_verdicts": ("member_id",),
    "cases": ("member_id", "moderator_id"),
    "strikes": ("member_id", "pardoned_by"),
    "review_items": ("member_id", "moderator_id"),
    "reports": ("reporter_id", "member_id"),
    "appeals": ("member_id", "moderator_id"),
    "policy_overrides": ("updated_by",),
    "policy_changes": ("moderator_id",),
}


#: What a rule hit's quote of a member's text reads once that text is erased.
ERASED_QUOTE = "[text erased]"

#: The reason of a flagged name's case and review item (``bot.workflow.names``: ``"<kind> '<name>': <why>"``, the
#: name as Python's ``repr`` quotes it); group 1 is the kind (``nickname``, ``display name``).
_NAME_REASON = re.compile(r"([a-z][a-z ]*) ['\"]")
#: Rules whose hit detail quotes the member's text: ``regex`` as ``"<name>: <quote>"`` (the quote erased, the
#: rule's name kept); ``invite`` the invite code and ``link`` the host of a link the member wrote (the whole detail
#: erased: in allowlist mode any host a member writes hits, and an invite code leads to their own server).
QUOTING_RULES = ("regex", "invite", "link")
#: ``store_meta`` key set once :meth:`PrivacyMixin.purge_expired_text` has erased the quotes an earlier version left
#: beside the text it erased (before quotes were erased with the text); its value is when.
_QUOTES_SWEPT = "erased_quotes_of_erased_text"
#: ``LIKE`` patterns of the rule-hit JSON (``dump_json``: compact) that may hold a hit of :data:`QUOTING_RULES`.
_QUOTING_HITS = tuple(f'%"{rule}"%' for rule in QUOTING_RULES)


def erased_hits(rule_hits: str) -> tuple[str, dict[tuple[str, str], str]]:
    """``rule_hits`` (JSON ``[{"rule", "detail", "label", "action"}]``) with each quote of a member's text erased
    (the hits of :data:`QUOTING_RULES`), and ``{(rule, old detail): new detail}`` for the details changed (``{}``:
    nothing to erase, the JSON returned as given). A regex detail ``"<name>: <quote>"`` becomes
    ``"<name>: [text erased]"`` (split at its first ``": "``); an invite or link detail becomes ``"[text erased]"``."""
    hits = load_json(rule_hits, [])
    changed: dict[tuple[str, str], str] = {}
    for hit in hits:
        rule = hit.get("rule") if isinstance(hit, dict) else None
        detail = hit.get("detail") if rule in QUOTING_RULES else None
        if not isinstance(detail, str) or not isinstance(rule, str):
            continue
        if rule == "regex":
            name, sep, quote = detail.partition(": ")
            if sep and quote and quote != ERASED_QUOTE:
                hit["detail"] = changed[(rule, detail)] = f"{name}: {ERASED_QUOTE}"
        elif detail and detail != ERASED_QUOTE:
            hit["detail"] = changed[(rule, detail)] = ERASED_QUOTE
    return (dump_json(hits), changed) if changed else (rule_hits, changed)


def pseudonym_of(salt_hex: str, platform: str, server_id: str, member_id: str) -> str:
    """The keyed pseudonym of a member: ``forgotten-`` + 16 hex digits of HMAC-SHA256(salt, platform/server/member).

    Stable per database, so strikes and cases of a forgotten member still count if they offend again (the store
    looks a member's strikes up under both their id and this pseudonym).
    """
    digest = hmac.new(bytes.fromhex(salt_hex), f"{platform}\x1f{server_id}\x1f{member_id}".encode(),
                      hashlib.sha256).hexdigest()
    return f"forgotten-{digest[:16]}"


def _rows(rows: list[Row], *columns: str, json_columns: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        item = {c: row[c] for c in columns}
        for c in json_columns:
            item[c] = load_json(row[c])
        out.append(item)
    return out


class PrivacyMixin(StoreBase):
    """Member data export, erasure and retention."""

    async def member_ids(self, platform: str, server_id: str, member_id: str) -> tuple[str, ...]:
        """``(member_id,)``, or ``(member_id, pseudonym)`` once the mod log holds a pseudonym salt (a member was
        forgotten): the ids a member's records may be stored under (:func:`pseudonym_of`)."""
        salt = await self._read_one("SELECT value FROM store_meta WHERE key = 'pseudonym_salt'")
        return (member_id,) if salt is None else (member_id, pseudonym_of(salt[0], platform, server_id, member_id))

    async def _erase_quotes(self, messages_sql: str, params: tuple[Any, ...]) -> None:
        """Inside a transaction: erase the quotes of member text in rule hits (:func:`erased_hits`) of the messages
        ``messages_sql`` selects (``SELECT m.platform, m.server_id, m.message_id FROM messages m WHERE ...``, with
        ``params``), and in the reasons of their cases, review items and strikes; only messages whose verdict or a
        replay verdict may hold such a hit are read."""
        likes = " OR ".join(["{alias}.rule_hits LIKE ?"] * len(_QUOTING_HITS))
        keys = await self._all(
            f"{messages_sql} AND (EXISTS (SELECT 1 FROM verdicts v WHERE v.platform = m.platform AND v.server_id = "
            f"m.server_id AND v.message_id = m.message_id AND ({likes.format(alias='v')})) OR EXISTS (SELECT 1 FROM "
            "replay_verdicts r WHERE r.platform = m.platform AND r.server_id = m.server_id AND r.message_id = "
            f"m.message_id AND ({likes.format(alias='r')})))", (*params, *_QUOTING_HITS, *_QUOTING_HITS))
        key_sql = "platform = ? AND server_id = ? AND message_id = ?"
        for row in keys:
            key = (row[0], row[1], row[2])
            details: dict[tuple[str, str], str] = {}
            for hits in await self._all(f"SELECT rule_hits FROM verdicts WHERE {key_sql}", key):
                erased, changed = erased_hits(hits[0])
                if changed:
                    details.update(changed)
                    await self._db.execute(f"UPDATE verdicts SET rule_hits = ? WHERE {key_sql}", (erased, *key))
            for hits in await self._all(f"SELECT policy_version, rule_hits FROM replay_verdicts WHERE {key_sql}", key):
                erased, changed = erased_hits(hits[1])
                if changed:
                    details.update(changed)
                    await self._db.execute(f"UPDATE replay_verdicts SET rule_hits = ? WHERE {key_sql} "
                                           "AND policy_version = ?", (erased, *key, hits[0]))
            # the longest first: "link: a.co" is the start of "link: a.co.uk", and replacing it first would leave
            # "[text erased].uk" behind
            for (rule, old), new in sorted(details.items(), key=lambda item: -len(item[0][1])):
                # the rule's own action reason is hit_reason() of the detail (its trailing spaces and colons cut,
                # so the detail itself may not occur in it); the agreement reason quotes it as "<rule> (<detail>)"
                # (bot.core.judge); only those two forms are replaced, so a short invite code elsewhere in a
                # moderator's reason is left alone
                for table in ("cases", "review_items", "strikes"):
                    await self._db.execute(
                        f"UPDATE {table} SET reason = REPLACE(REPLACE(reason, ?, ?), ?, ?) WHERE {key_sql}",
                        (hit_reason(rule, old), hit_reason(rule, new), f"{rule} ({old})", f"{rule} ({new})", *key))

    async def _erase_flagged_names(self, platform: str, server_id: str, member_ids: tuple[str, str]) -> None:
        """Inside a transaction: erase the shown names of the members ``member_ids`` (the id and its pseudonym) that
        the name watch flagged (``bot.workflow.names``: a ``review`` case with no message and no moderator, its
        reason ``"<kind> '<name>': <why>"``, and the review item of that case with the same reason): both read
        ``"<kind> [text erased]"`` (the reason's rule details may quote the name too), and a moderator's decision
        on that item copying it reads ``review #<id>: [text erased]`` (:meth:`_erase_review_copies`). A name a
        member chose is often their real one: pseudonymising the records kept it."""
        scope = "platform = ? AND server_id = ?"
        cases = await self._all(
            f"SELECT number, reason FROM cases WHERE {scope} AND member_id IN (?, ?) AND action = 'review' "
            "AND message_id IS NULL AND moderator_id IS NULL", (platform, server_id, *member_ids))
        for number, reason in cases:
            found = _NAME_REASON.match(str(reason))
            if found is None:
                continue
            erased = f"{found.group(1)} {ERASED_QUOTE}"
            for item in await self._all(f"SELECT id, reason FROM review_items WHERE {scope} AND case_number = ? "
                                        "AND message_id IS NULL", (platform, server_id, number)):
                if item[1] == reason:
                    await self._erase_review_copies(platform, server_id, item[0], item[1])
                    await self._db.execute("UPDATE review_items SET reason = ? WHERE id = ?", (erased, item[0]))
            await self._db.execute(f"UPDATE cases SET reason = ? WHERE {scope} AND number = ?",
                                   (erased, platform, server_id, number))

    async def _erase_review_copies(self, platform: str, server_id: str, review_id: int, text: str) -> None:
        """Inside a transaction: erase ``text`` (review item ``review_id``'s reason, about to be erased) where a
        moderator's decision on that item copied it: the reasons of the cases and strikes of this server reading
        :func:`~bot.core.models.review_reason` of it, whole, cut to their room, or as a kick's or ban's prefilled
        reason cut with "…". They read ``review #<id>: [text erased]``; a reason the moderator typed is left alone."""
        prefix = review_reason(review_id, "")
        copy = review_reason(review_id, text)
        for table in ("cases", "strikes"):
            for row in await self._all(f"SELECT id, reason FROM {table} WHERE platform = ? AND server_id = ? "
                                       "AND substr(reason, 1, ?) = ?", (platform, server_id, len(prefix), prefix)):
                shown = str(row[1]).removesuffix("\u2026").rstrip()
                if len(shown) > len(prefix) and copy.startswith(shown):
                    await self._db.execute(f"UPDATE {table} SET reason = ? WHERE id = ?",
                                           (review_reason(review_id, ERASED_QUOTE), row[0]))

    async def member_record(self, platform: str, server_id: str, member_id: str) -> dict[str, Any]:
        """Everything stored about a member in one server, JSON-serialisable, for ``/mydata``.

        Shape: ``{"platform", "server_id", "member_id", "first_seen", "messages", "verdicts", "cases", "strikes",
        "review_items", "reports_filed", "reports_against", "appeals"}``; lists of dicts, times as ISO-8601 UTC
        text. Ids of moderators and of other reporters are left out (they are other people's data).
        """
        key = (platform, server_id, member_id)
        scope = "platform = ? AND server_id = ?"
        async with self._guard():
            first = await self._one(
                f"SELECT first_message_at FROM member_first_seen WHERE {scope} AND member_id = ?", key
            )
            messages = await self._all(
                f"SELECT * FROM messages WHERE {scope} AND author_id = ? ORDER BY created_at", key
            )
            verdicts = await self._all(f"SELECT * FROM verdicts WHERE {scope} AND member_id = ? ORDER BY id", key)
            cases = await self._all(f"SELECT * FROM cases WHERE {scope} AND member_id = ? ORDER BY number", key)
            strikes = await self._all(f"SELECT * FROM strikes WHERE {scope} AND member_id = ? ORDER BY id", key)
            reviews = await self._all(f"SELECT * FROM review_items WHERE {scope} AND member_id = ? ORDER BY id", key)
            filed = await self._all(f"SELECT * FROM reports WHERE {scope} AND reporter_id = ? ORDER BY id", key)
            against = await self._all(f"SELECT * FROM reports WHERE {scope} AND member_id = ? ORDER BY id", key)
            appeals = await self._all(f"SELECT * FROM appeals WHERE {scope} AND member_id = ? ORDER BY id", key)
        return {
            "platform": platform,
            "server_id": server_id,
            "member_id": member_id,
            "first_seen": first[0] if first else None,
            "messages": _rows(messages, "message_id", "channel_id", "created_at", "edited_at", "excerpt", "purged_at"),
            "verdicts": _rows(
                verdicts,
                "message_id",
                "flagged",
                "action",
                "revision",
                "model_name",
                "judged_at",
                json_columns=("scores", "labels", "rule_hits"),
            ),
            "cases": _rows(cases, "number", "action", "reason", "status", "message_id", "created_at", "expires_at"),
            "strikes": _rows(
                strikes, "points", "reason", "message_id", "case_number", "created_at", "expires_at", "pardoned_at"
            ),
            "review_items": _rows(
                reviews,
                "id",
                "source",
                "reason",
                "decision",
                "case_number",
                "message_id",
                "created_at",
                "decided_at",
                json_columns=("scores",),
            ),
            "reports_filed": _rows(filed, "member_id", "message_id", "reason", "created_at"),
            "reports_against": _rows(against, "message_id", "reason", "created_at"),
            "appeals": _rows(appeals, "id", "case_number", "text", "status", "created_at", "decided_at"),
        }

    async def forget_member(self, platform: str, server_id: str, member_id: str, now: datetime | None = None) -> str:
        """Erase a member's text and replace their id by a stable pseudonym in every table (the columns of
        :data:`_MEMBER_COLUMNS` and the members of this server's raids); delete their first-seen and join times.
        Returns the pseudonym.

        Idempotent: forgetting again returns the same pseudonym and changes nothing more.
        """
        when = to_db_time(now or utcnow())
        scope = "platform = ? AND server_id = ?"
        async with self._tx():
            await self._db.execute(
                "INSERT INTO store_meta (key, value) VALUES ('pseudonym_salt', ?) ON CONFLICT DO NOTHING",
                (secrets.token_hex(32),),
            )
            salt = await self._one("SELECT value FROM store_meta WHERE key = 'pseudonym_salt'")
            assert salt is not None
            pseudonym = pseudonym_of(salt[0], platform, server_id, member_id)
            params = (platform, server_id, member_id)
            # Text the member wrote, before their id is replaced.
            await self._erase_quotes("SELECT m.platform, m.server_id, m.message_id FROM messages m "
                                     "WHERE m.platform = ? AND m.server_id = ? AND m.author_id = ?", params)
            await self._db.execute(
                f"UPDATE messages SET excerpt = NULL, purged_at = COALESCE(purged_at, ?) WHERE {scope} "
                "AND author_id = ? AND excerpt IS NOT NULL",
                (when, *params),
            )
            # an appeal of a case forgotten before is filed under the pseudonym (open_appeal): its text is the
            # member's too, erased by forgetting again
            await self._db.execute(f"UPDATE appeals SET text = '' WHERE {scope} AND member_id IN (?, ?)",
                                   (*params, pseudonym))
            # an appeal's item reads the appeal; a report's item, the report that opened it: a report that joined
            # another's item (automod's, an earlier reporter's) left that item's words, which stay
            their_items = (f"{scope} AND ((source = 'appeal' AND member_id IN (?, ?)) OR id IN (SELECT review_id "
                           "FROM reports WHERE platform = ? AND server_id = ? AND reporter_id = ? "
                           "AND reason = review_items.reason))")
            item_params = (*params, pseudonym, *params)
            for item in await self._all(f"SELECT id, reason FROM review_items WHERE {their_items} AND reason != ''",
                                        item_params):
                await self._erase_review_copies(platform, server_id, item[0], item[1])
            await self._erase_flagged_names(platform, server_id, (member_id, pseudonym))
            await self._db.execute(f"UPDATE review_items SET reason = '' WHERE {their_items}", item_params)
            await self._db.execute(f"UPDATE reports SET reason = '' WHERE {scope} AND reporter_id = ?", params)
            for table, columns in _MEMBER_COLUMNS.items():
                for column in columns:
                    await self._db.execute(
                        f"UPDATE {table} SET {column} = ? WHERE {scope} AND {column} = ?", (pseudonym, *params)
                    )
            for row in await self._all(f"SELECT id, members FROM raids WHERE {scope}", (platform, server_id)):
                members = load_json(row["members"], [])
                if member_id in members:
                    await self._db.execute("UPDATE raids SET members = ? WHERE id = ?", (
                        dump_json([pseudonym if m == member_id else m for m in members]), row["id"]))
            await self._db.execute(f"DELETE FROM member_first_seen WHERE {scope} AND member_id = ?", params)
            await self._db.execute(f"DELETE FROM member_joins WHERE {scope} AND member_id = ?", params)
            await self._db.execute(
                "INSERT INTO member_pseudonyms (platform, server_id, pseudonym, forgotten_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (platform, server_id, pseudonym, when),
            )
        return pseudonym

    async def purge_expired_text(self, older_than: datetime, now: datetime | None = None, *,
                                 platform: str | None = None, server_id: str | None = None) -> int:
        """Erase message excerpts whose text dates from before ``older_than``, of every server or, with ``platform``
        and ``server_id``, of that server only (each server's own ``server.retention_days``:
        :mod:`bot.workflow.retention`).

        A text's date is its message's time (the edit's time for an edited message), clamped to when the mod log
        stored that text (its verdict's ``judged_at``, renewed by an edit): a message dated in the future (a wrong
        clock, a doctored export) or with no time at all is erased ``older_than`` after it was stored, never kept
        for ever. Verdicts, cases and strikes are kept, the rule hits' quotes of the text in them erased (module doc);
        the first purge of a mod log also erases the quotes an earlier version left beside text it had erased.
        Returns the number of messages purged.
        """
        cutoff = to_db_time(older_than)
        scope = m_scope = ""
        params: tuple[str, ...] = ()
        if platform is not None and server_id is not None:
            scope, params = " AND platform = ? AND server_id = ?", (platform, server_id)
            m_scope = " AND m.platform = ? AND m.server_id = ?"
        async with self._tx():
            if await self._one(f"SELECT 1 FROM store_meta WHERE key = '{_QUOTES_SWEPT}'") is None:
                # once per mod log: the quotes an earlier version left beside text it erased (its retention and
                # forgetting erased messages.excerpt only), which the erasure below no longer visits
                await self._erase_quotes("SELECT m.platform, m.server_id, m.message_id FROM messages m "
                                         "WHERE m.excerpt IS NULL AND m.purged_at IS NOT NULL", ())
                await self._db.execute("INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                       (_QUOTES_SWEPT, to_db_time(now or utcnow())))
            await self._erase_quotes(
                "SELECT m.platform, m.server_id, m.message_id FROM messages m WHERE m.excerpt IS NOT NULL "
                "AND (COALESCE(m.edited_at, m.created_at) < ? OR EXISTS (SELECT 1 FROM verdicts v WHERE "
                "v.platform = m.platform AND v.server_id = m.server_id AND v.message_id = m.message_id "
                f"AND v.judged_at < ?)){m_scope}", (cutoff, cutoff, *params))
            cur = await self._db.execute(
                "UPDATE messages SET excerpt = NULL, purged_at = ? WHERE excerpt IS NOT NULL "
                "AND (COALESCE(edited_at, created_at) < ? OR EXISTS (SELECT 1 FROM verdicts v WHERE "
                "v.platform = messages.platform AND v.server_id = messages.server_id AND "
                f"v.message_id = messages.message_id AND v.judged_at < ?)){scope}",
                (to_db_time(now or utcnow()), cutoff, cutoff, *params),
            )
            count = cur.rowcount
            await cur.close()
        return count
