"""The links rule: Discord invites not on the allowed list, blocked domains, and links outside the allowed domains
(``[rules.links]``). The detection itself (evasions, plain and collapsed views) is :mod:`bot.core.rules.links`.

Layer: ``bot.core``. Stateless and deterministic.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from bot.core.models import RuleHit
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.links import compile_domain_search, domain_matches, find_links, is_invite_host
from bot.core.rules.regex import encodable
from bot.core.rules.settings import LinkSettings, RulesSettings


class LinksRule:
    """``invite`` hits (one per invite code not allowed), then ``link`` hits (one per blocked or not-allowed host,
    de-duplicated, in order of appearance), with ``[rules.links]``'s label and action."""

    name: ClassVar[str] = "links"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.CONTENT})
    settings_model: ClassVar[type[BaseModel]] = LinkSettings
    hit_names: ClassVar[tuple[str, ...]] = ("invite", "link")

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings.links
        self._blocked_domains = compile_domain_search(settings.links.blocked_domains)
        self._allowed_invites = frozenset(settings.links.allowed_invites)

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        ls = self.settings
        text = encodable(ctx.message.text)
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
