"""Per-message content rules: blocklist / allowlist, regex, links and invites, mention spam, zalgo.

Layer: ``bot.core``. Stateless per message and deterministic: the same message, normalisation and settings give
the same hits, in the same order (blocklist, regex, invite, link, mention_spam, zalgo, hostile_emoji).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import re2

from bot.core.emoji_words import hostile_emoji_only
from bot.core.models import Message, RuleHit
from bot.core.normalize import Normalized, contains_term
from bot.core.rules._util import scaled_limit
from bot.core.rules.links import compile_domain_search, domain_matches, find_links, is_invite_host
from bot.core.rules.settings import RegexRuleSettings, RulesSettings, compile_pattern

log = logging.getLogger(__name__)

#: Longest matched text quoted in a hit's ``detail``, in characters.
DETAIL_CHARS = 80


def term_key(term: str) -> str:
    """Identity of a term for allowlist comparison: casefolded, whitespace collapsed."""
    return " ".join(term.casefold().split())


@dataclass(frozen=True, slots=True)
class _TermList:
    name: str
    terms: tuple[str, ...]
    label: str | None
    action: str | None


class ContentRules:
    """The content rules of one server, compiled once.

    Args:
        settings: The server's rule settings (regex patterns were validated when the settings were built).

    Raises:
        RuleConfigError: a regex pattern does not compile (only if ``settings`` bypassed validation).
    """

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings
        bl = settings.blocklist
        self._lists: list[_TermList] = []
        if bl.terms:
            self._lists.append(_TermList("blocklist", tuple(bl.terms), bl.label, bl.action))
        for group in bl.lists:
            self._lists.append(_TermList(group.name, tuple(group.terms), group.label, group.action))
        self._allow = frozenset(term_key(t) for t in bl.allow)
        self._regex: list[tuple[RegexRuleSettings, re2._Regexp]] = [
            (r, compile_pattern(r.pattern, name=r.name, case_sensitive=r.case_sensitive)) for r in settings.regex
        ]
        self._blocked_domains = compile_domain_search(settings.links.blocked_domains)
        self._allowed_invites = frozenset(settings.links.allowed_invites)

    def evaluate(
        self,
        message: Message,
        norm: Normalized,
        *,
        extra_terms: Sequence[str] = (),
        allow_terms: Sequence[str] = (),
        may_mention_everyone: bool = False,
        raid_mode: bool = False,
    ) -> list[RuleHit]:
        """Run every enabled content rule on one message.

        Args:
            message: The message (``text``, ``mentions``, ``mentions_everyone``, author roles are read).
            norm: ``normalize(message.text)``.
            extra_terms: Channel / category blocked terms; they use the default list's label and action.
            allow_terms: Channel / category allowed terms; with the server's ``allow`` they win over every list.
            may_mention_everyone: The platform says the author holds the mention-everyone permission.
            raid_mode: Raid mode is on here: ``max_mentions`` is multiplied by ``raid.threshold_factor``.

        Returns:
            Hits in rule order; empty for a clean message. ``action`` is the rule's configured action or
            ``None`` (signal); ``label`` is set where the rule supports a detoxify label.
        """
        hits: list[RuleHit] = []
        hits += self._blocklist(norm, extra_terms, allow_terms)
        hits += self._regex_hits(norm)
        hits += self._link_hits(encodable(message.text))
        hits += self._mention_hits(message, may_mention_everyone, raid_mode)
        if self.settings.zalgo.enabled and norm.zalgo:
            hits.append(RuleHit(rule="zalgo", detail="stacked combining marks", action=self.settings.zalgo.action))
        hits += self._hostile_emoji(message)
        return hits

    def _hostile_emoji(self, message: Message) -> list[RuleHit]:
        """``hostile_emoji``: the message is only hostile emoji and addresses another member (a reply, or a
        mention of someone who is not a bot and not the author)."""
        cfg = self.settings.hostile_emoji
        if not cfg.enabled:
            return []
        addressed = message.reply_to is not None or any(
            not m.is_bot and m.id != message.author.id for m in message.mentions)
        names = hostile_emoji_only(message.text) if addressed else None
        if not names:
            return []
        return [RuleHit(rule="hostile_emoji", detail=", ".join(dict.fromkeys(names)), label=cfg.label,
                        action=cfg.action)]

    def evaluate_terms(
        self, norm: Normalized, *, extra_terms: Sequence[str] = (), allow_terms: Sequence[str] = ()
    ) -> list[RuleHit]:
        """The text rules only (blocklist, regex) on one more part of a message: used for the parts of a long
        message past the normaliser's first 4,000 characters (:func:`bot.core.pieces.chunks`)."""
        return [*self._blocklist(norm, extra_terms, allow_terms), *self._regex_hits(norm)]

    # ------------------------------------------------------------------ blocklist

    def _blocklist(self, norm: Normalized, extra: Sequence[str], allow: Sequence[str]) -> list[RuleHit]:
        bl = self.settings.blocklist
        if not bl.enabled:
            return []
        allowed = self._allow | {term_key(t) for t in allow}
        lists = self._lists
        if extra:
            lists = [*lists, _TermList("channel", tuple(extra), bl.label, bl.action)]
        hits: list[RuleHit] = []
        seen: set[str] = set()
        for tl in lists:
            for term in tl.terms:
                key = term_key(term)
                if not key or key in allowed or key in seen:
                    continue
                if contains_term(norm, term):
                    seen.add(key)
                    detail = term if tl.name == "blocklist" else f"{tl.name}: {term}"
                    hits.append(RuleHit(rule="blocklist", detail=detail, label=tl.label, action=tl.action))
        return hits

    # ------------------------------------------------------------------ regex

    def _regex_hits(self, norm: Normalized) -> list[RuleHit]:
        hits: list[RuleHit] = []
        for rule, rx in self._regex:
            targets = {
                "original": (norm.original,),
                "normalized": (norm.matching,),
                "both": (norm.original, norm.matching),
            }[rule.target]
            for text in targets:
                m = rx.search(encodable(text))
                if m is not None:
                    found = m.group(0)[:DETAIL_CHARS]
                    hits.append(
                        RuleHit(rule="regex", detail=f"{rule.name}: {found}", label=rule.label, action=rule.action)
                    )
                    break
        return hits

    # ------------------------------------------------------------------ links

    def _link_hits(self, text: str) -> list[RuleHit]:
        ls = self.settings.links
        if not ls.enabled or not text:
            return []
        found = find_links(text)
        hits: list[RuleHit] = []
        if ls.block_invites:
            for code in found.invites:
                if code not in self._allowed_invites:
                    hits.append(RuleHit(rule="invite", detail=code, label=ls.label, action=ls.action))
        bad: list[str] = []
        if self._blocked_domains is not None:
            bad += ["".join(m.group(1).split()) for m in self._blocked_domains.finditer(found.collapsed)]
        for host in found.hosts:
            if ls.block_invites and is_invite_host(host):
                continue  # the invite rule owns invite hosts
            blocked = [d for d in ls.blocked_domains if domain_matches(host, d)]
            if blocked:
                bad.append(blocked[0])
            elif ls.allowed_domains and not any(domain_matches(host, d) for d in ls.allowed_domains):
                bad.append(host)
        for host in dict.fromkeys(bad):
            hits.append(RuleHit(rule="link", detail=host, label=ls.label, action=ls.action))
        return hits

    # ------------------------------------------------------------------ mentions

    def mention_count(self, message: Message, may_mention_everyone: bool = False) -> int:
        """Mentions that count toward mention spam.

        Every ping counts: a user mentioned six times in one message counts six (the occurrences of the user's
        mention token in the text: Discord ``<@id>`` / ``<@!id>``, Slack ``<@id>`` or ``<@id|name>``; at least one
        per mentioned user, for exports whose text spells mentions another way). Bots, reply pings and the author
        do not count. An ``@everyone`` / ``@here`` by an author who may not use it (no permission, none of
        ``everyone_roles``) adds ``everyone_weight``.
        """
        ms = self.settings.mention_spam
        users = {m.id for m in message.mentions if not m.is_bot and not m.is_reply_ping and m.id != message.author.id}
        count = sum(max(1, mention_occurrences(message.text, uid)) for uid in users)
        if message.mentions_everyone:
            allowed = may_mention_everyone or bool(set(message.author.roles) & set(ms.everyone_roles))
            if not allowed:
                count += ms.everyone_weight
        return count

    def _mention_hits(self, message: Message, may_mention_everyone: bool, raid_mode: bool) -> list[RuleHit]:
        ms = self.settings.mention_spam
        if not ms.enabled:
            return []
        limit = ms.max_mentions
        if raid_mode:
            limit = scaled_limit(limit, self.settings.raid.threshold_factor)
        count = self.mention_count(message, may_mention_everyone)
        if count <= limit:
            return []
        return [RuleHit(rule="mention_spam", detail=f"{count} mentions (limit {limit})", action=ms.action)]


def mention_occurrences(text: str, user_id: str) -> int:
    """How often ``text`` pings ``user_id``: Discord ``<@id>`` / ``<@!id>`` and Slack ``<@id>`` / ``<@id|name>``."""
    if not user_id or "<@" not in text:
        return 0
    return (
        text.count(f"<@{user_id}>")
        + text.count(f"<@!{user_id}>")
        + text.count(f"<@{user_id}|")
    )


def encodable(text: str) -> str:
    """``text`` with lone UTF-16 surrogates replaced by U+FFFD: RE2 needs valid UTF-8 (the original is kept)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text
