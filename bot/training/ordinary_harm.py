"""Ordinary talk with hard words (issue 26; candidate E's data): people next to words of harm (killed, shot,
wiped out, died, destroyed) in talk about prices, work, software, games, news and the future, with twins that aim
the same words at a person or a group.

Why: candidate D (counterfactual + scene + stance twins, 24,000 replay rows) met the ship rule's benchmark
conditions over three seeds but raised the Komodo (crypto Discord) flag rate from 0.77% to 1.13% (11 messages
flagged only by D, McNemar p 0.001): the new flags were ordinary talk about people with hard words, the register
the stance twins' threat frames (people + violent verbs = hateful) taught against. Here that register has both
sides:

* **benign** rows: a people phrase (:data:`PEOPLE`: "people", "holders", "devs", "my coworkers", ...) in frames of
  :data:`BENIGN_T` by domain (markets, work, software, games, news, the future), all labels 0;
* **twins** in the same words aimed at someone: at a group of :data:`bot.training.counterfactual.TERMS`
  (``HATE_THREAT``: toxicity, identity_attack, threat 1, severe 0.5) or at the reader (``INSULT_THREAT``:
  toxicity, threat 1, insult unknown).

Written for this project from the names of the registers only; no row is taken from any chat export, HateCheck,
Multilingual HateCheck or a bias-template file in ``../shared`` (the real-chat flag rates in
``bench/chat_flags.py`` stay a held-out measure).
"""

from __future__ import annotations

import random

from bot.training.counterfactual import TERMS
from bot.training.data import ZERO, Example
from bot.training.handwritten import HATE_THREAT, INSULT_THREAT

#: Who the ordinary sentences are about: people in general and the roles of the communities this bot serves.
PEOPLE: tuple[str, ...] = (
    "people", "holders", "users", "devs", "traders", "miners", "new players", "folks", "investors", "workers",
    "my coworkers", "small businesses", "students", "retail buyers", "node operators", "the maintainers",
    "a lot of people", "most people", "half the team", "older people", "families", "drivers", "tenants",
)

#: Benign frames by domain; ``{P}`` a people phrase. Hard words, no target of hostility.
BENIGN_T: dict[str, tuple[str, ...]] = {
    "markets": (
        "these fees are killing {P} right now", "{P} got wiped out in the crash last night",
        "this dump is going to hurt a lot of {P}", "{P} got absolutely slaughtered on leverage",
        "if the price keeps falling there won't be any {P} left", "{P} got burned badly on that rug pull",
        "the bear market destroyed {P} who bought the top", "inflation is crushing {P} on fixed incomes",
        "{P} are dying to know when the next release ships", "rent is murdering {P} in this city",
    ),
    "work": (
        "{P} are getting laid off everywhere this year", "the deadline is killing {P} on my team",
        "the reorg destroyed morale, {P} are quitting", "{P} are burning out and nobody notices",
        "overtime is slowly killing {P} at that company", "{P} got fired for asking about pay, it's insane",
    ),
    "software": (
        "kill the process before {P} restart the node", "that bug is killing {P} on the old version",
        "{P} keep shooting themselves in the foot with this config", "the update nuked the cache for {P}",
        "the migration will destroy the data of {P} who skip the backup", "the scheduler kills idle jobs after an hour",
        "{P} hit the same crash, the daemon dies on startup", "this race condition murders throughput for {P}",
    ),
    "games": (
        "{P} got annihilated in the last raid", "we massacred the other team in ranked",
        "{P} keep getting sniped at spawn", "the boss one-shots {P} who skip the armour",
        "my squad got executed in the final circle", "{P} die instantly to that trap, it needs a nerf",
    ),
    "news": (
        "{P} are getting shot around here more often, it's scary", "{P} got stabbed near the station last night",
        "the heatwave is killing {P} in the south", "so many {P} died in that flood, it's heartbreaking",
        "crime is up and {P} are afraid to go out at night", "my cousin saw {P} get robbed on the bus",
        "the war has killed thousands of {P} and it's still going", "{P} are being poisoned by the water there",
    ),
    "future": (
        "at this rate there might not be any {P} left next cycle", "AI will replace half of {P} within ten years",
        "{P} are going to starve if food prices keep rising", "climate change will kill millions of {P}",
        "the next crash could wipe out {P} for good", "in a few years {P} will be extinct in this market",
    ),
}

#: The same hard words aimed at someone: ``{X}`` an identity term (a group), ``you`` the reader.
GROUP_TWIN_T: tuple[str, ...] = (
    "{X} people should all get shot", "I hope every {X} person gets wiped out",
    "{X} people deserve to be slaughtered", "someone should kill off the {X} people in this town",
    "there shouldn't be any {X} people left, get rid of them", "{X} people should be poisoned like rats",
)
PERSON_TWIN_T: tuple[str, ...] = (
    "I'm going to shoot you when I find you", "you'll get stabbed if you show up at the station",
    "keep talking and I'll kill you myself", "I hope you die in that flood",
    "I will destroy you and your family", "watch your back, I know where you live and I'll hurt you",
)


def ordinary_harm_rows(seed: int) -> list[Example]:
    """Every benign frame with every people phrase, three of the group twins (seeded) with every term, every
    person twin once; deterministic for ``seed``. Benign rows outnumber twins about six to one, as ordinary talk
    outnumbers threats in chat.

    Returns:
        Examples (source ``"hand_ordinary"``): benign rows all labels 0; group twins ``HATE_THREAT``; person twins
        ``INSULT_THREAT``. About 990 benign and 170 twin rows.
    """
    rng = random.Random(seed * 6151 + 2611)
    out: list[Example] = []
    for frames in BENIGN_T.values():
        for t in frames:
            if "{P}" not in t:
                out.append(Example(t, ZERO, "hand_ordinary"))
                continue
            out += [Example(t.format(P=who), ZERO, "hand_ordinary") for who in PEOPLE]
    for term in TERMS:
        out += [Example(t.format(X=term), HATE_THREAT, "hand_ordinary") for t in rng.sample(GROUP_TWIN_T, 3)]
    out += [Example(t, INSULT_THREAT, "hand_ordinary") for t in PERSON_TWIN_T]
    return out
