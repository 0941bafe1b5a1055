"""Link and Discord-invite detection, robust to the usual evasions.

Layer: ``bot.core``. Standard library and ``re2`` only. All patterns run on RE2 (linear time), because they see
untrusted text of any length.

Two views of a message are used:

* the *plain* view (:func:`plain_text`): NFKC, invisible characters and combining marks removed, HTML entities
  and percent-encoding decoded (up to three rounds, for ``%252E``), lower-cased, ideographic full stops and
  backslashes read as ``.`` and ``/`` the way browsers read them. Ordinary links are extracted from it.
* the *collapsed* view (:func:`collapsed_text`): the plain view with ``dot`` / ``(dot)`` / ``[.]`` / ``slash``
  spelled out and whitespace around ``.`` and ``/`` removed (``discord . gg / abc`` -> ``discord.gg/abc``).
  Invites and blocked domains are searched in it; ordinary links are not, because ``end. Com`` in prose would
  turn into a false link.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

import re2

#: Invite hosts: Discord's own, and redirectors commonly used to hide invites (from python-discord's filters).
INVITE_HOSTS: tuple[str, ...] = (
    "discord.com/invite",
    "discordapp.com/invite",
    "discord.gg",
    "dsc.gg",
    "discord.io",
    "discord.me",
    "discord.li",
    "invite.gg",
)

#: Top-level domains accepted for links written without a scheme (``example.com/x``); with a scheme any TLD is.
#: Kept short on purpose: bare ``file.txt`` or ``node.js`` must not read as links.
BARE_TLDS: frozenset[str] = frozenset(
    "com net org io gg co me ly xyz ru info biz tk ml ga cf gq top site online live app dev shop store club "
    "link click pw cc to uk de fr nl eu us ca au in cn jp br tv gl be it es pl cz su ws vip icu buzz".split()
)

_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0]
    + list(range(0x200B, 0x2010))
    + list(range(0x202A, 0x202F))
    + list(range(0x2060, 0x2070))
)


#: Characters of a message examined for links (Discord's limit is 4000; longer Slack texts are cut here so that a
#: pathological message cannot cost more than a few milliseconds).
MAX_CHARS = 8000

_WS_RUN = re.compile(r"(\s+)")  # stdlib re is safe here: one greedy class, linear


def _opts() -> re2.Options:
    opts = re2.Options()
    opts.log_errors = False
    return opts


_DOT_WORD = re2.compile(r"\s*(?:[(\[{<]\s*(?:dot|\.)\s*[)\]}>]|\bdot\b)\s*", _opts())
_SLASH_WORD = re2.compile(r"\s*(?:[(\[{<]\s*slash\s*[)\]}>]|\bslash\b)\s*", _opts())
_SCHEME_URL = re2.compile(r"(?:https?|ftp)://([^\s/?#<>\"'|\\()\[\]{},;]+)", _opts())
_BARE_HOST = re2.compile(
    r"(?:^|[^a-z0-9@._/-])((?:www\.)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+([a-z]{2,24}))\b", _opts()
)


def _spaced(literal: str) -> str:
    """RE2 source matching ``literal`` with optional whitespace between its characters (``d i s c o r d``)."""
    return r"\s*".join(re2.escape(ch) for ch in literal)


_INVITE = re2.compile(
    r"(?:^|[^a-z0-9-])(?:" + "|".join(_spaced(h) for h in INVITE_HOSTS) + r")/+\s*([a-z0-9-]{1,64})",
    _opts(),
)


@dataclass(frozen=True, slots=True)
class FoundLinks:
    """What :func:`find_links` saw in a text.

    Attributes:
        invites: Invite codes, lower-case, in order of appearance, de-duplicated.
        hosts: Link hosts (lower-case, ``www.`` removed), in order, de-duplicated.
        collapsed: The collapsed view, for blocked-domain search.
    """

    invites: tuple[str, ...]
    hosts: tuple[str, ...]
    collapsed: str


def plain_text(text: str) -> str:
    """The plain view of the first :data:`MAX_CHARS` characters of ``text`` (see module docstring)."""
    s = unicodedata.normalize("NFKC", text[:MAX_CHARS]).translate(_INVISIBLE)
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    for _ in range(3):
        decoded = unquote(html.unescape(s))
        if decoded == s:
            break
        s = decoded
    return s.lower().replace("\u3002", ".").replace("\uff61", ".").replace("\\", "/")


def collapsed_text(plain: str) -> str:
    """The collapsed view of an already plain text (see module docstring)."""
    s = _DOT_WORD.sub(".", plain)
    s = _SLASH_WORD.sub("/", s)
    parts = _WS_RUN.split(s)  # even indices: text, odd indices: whitespace runs
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 2 and (
            parts[i - 1].endswith((".", "/")) or (i + 1 < len(parts) and parts[i + 1].startswith((".", "/")))
        ):
            continue  # whitespace touching a separator
        out.append(part)
    return "".join(out)


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _strip_host(host: str) -> str:
    host = host.rsplit("@", 1)[-1].split(":", 1)[0].rstrip(".")
    return host.removeprefix("www.")


def find_links(text: str) -> FoundLinks:
    """Find invite codes and link hosts in ``text``.

    Returns:
        :class:`FoundLinks`. Links need a scheme (``https://x.y``), a ``www.`` prefix or a TLD in
        :data:`BARE_TLDS`; e-mail addresses are not links.
    """
    plain = plain_text(text)
    collapsed = collapsed_text(plain)
    invites = _dedupe(m.group(1) for m in _INVITE.finditer(collapsed))
    hosts: list[str] = [_strip_host(m.group(1)) for m in _SCHEME_URL.finditer(plain)]
    for m in _BARE_HOST.finditer(plain):
        host = m.group(1)
        if host.startswith("www.") or m.group(2) in BARE_TLDS:
            hosts.append(_strip_host(host))
    return FoundLinks(invites=invites, hosts=_dedupe(h for h in hosts if "." in h), collapsed=collapsed)


def domain_matches(host: str, domain: str) -> bool:
    """True when ``host`` is ``domain`` or one of its subdomains (``cdn.example.com`` matches ``example.com``)."""
    return host == domain or host.endswith("." + domain)


def is_invite_host(host: str) -> bool:
    """True for a host that serves invites (discord.gg, dsc.gg, discord.com...)."""
    return any(domain_matches(host, h.split("/", 1)[0]) for h in INVITE_HOSTS)


def compile_domain_search(domains: Iterable[str]) -> re2._Regexp | None:
    """An RE2 program finding any of ``domains`` (or a subdomain) in a collapsed text; ``None`` for no domains.

    Letters may be spaced out (``e v i l.com``); the match must not continue a longer name (``notevil.com`` does
    not match ``evil.com``).
    """
    alts = [_spaced(d) for d in domains]
    if not alts:
        return None
    return re2.compile(r"(?:^|[^a-z0-9-])(" + "|".join(alts) + r")(?:$|[^a-z0-9-])", _opts())
