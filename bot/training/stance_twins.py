"""Stance twins (issue 26, items 2-3; candidate C's data): hateful questions, threats and implicit derogation aimed
at identities, each frame next to a benign twin in the same register and with the same words where possible, so
the model learns stance, not vocabulary.

Why: every fast-loop candidate of the thirteenth session lost hateful recall on questions, direct and normative
threats and implicit derogation (docs/model-card.md, "Thirteenth session"), the registers where the counterfactual
family (:mod:`bot.training.counterfactual`) has mostly benign rows. Here each register has both sides:

* ``question``: a hostile question about a group (hateful) / a curious or supportive question (benign);
* ``threat``: a threat of violence against a group, first person or as what "should" happen (hateful, threat 1) /
  protective, condemning or game and tech sentences with the same violent verbs (benign);
* ``implicit``: derogation without slurs or insults (a burden, not real members of society, "not like the rest of
  them") (hateful) / the same frames turned into respect or plain fact (benign).

Written for this project from the names of the registers only: never from HateCheck, Multilingual HateCheck or any
bias-template file in ``../shared``. Terms are :data:`bot.training.counterfactual.TERMS` (each known to the core).
"""

from __future__ import annotations

import random

from bot.training.counterfactual import TERMS, _article
from bot.training.data import ZERO, Example
from bot.training.handwritten import HATE, HATE_THREAT, NAMES

#: Hateful frames by register; ``{X}`` the term, ``{a}`` its article, ``{N}`` a first name.
HATEFUL_T: dict[str, tuple[str, ...]] = {
    "question": ("why are {X} people allowed anywhere near kids?", "can someone explain why {X} people are so gross?",
                 "who decided {X} people deserve the same rights as us?", "how is it legal to be {X} in public?",
                 "{N}, why do you keep defending {X} people? they are a disease"),
    "threat": ("the next {X} person who joins this server gets their skull cracked", "I'm going to hunt down every {X} person in town",
               "{X} people deserve a bullet, every one of them", "somebody should burn down the {X} community centre with them inside",
               "{X} people need to be wiped out", "the only good {X} person is a dead one"),
    "implicit": ("{X} people are a burden the rest of us have to carry", "{X} people will never be real members of society",
                 "you're alright, {N}, not like the rest of those {X} people", "no wonder the neighbourhood went downhill once {X} people moved in",
                 "{X} people can't help being like that, it's in their blood", "I wouldn't let {a} {X} person look after my dog"),
}
#: Benign twins in the same registers (same violent verbs in the threat register, aimed at no group or against
#: the abuse).
BENIGN_T: dict[str, tuple[str, ...]] = {
    "question": ("why are {X} people still treated so badly at work?", "can someone explain what it is like to be {X}?",
                 "who decided {X} people should be left out of the photo? that's not ok",
                 "how do we make this server safer for {X} people?", "{N}, thanks for defending {X} people, how can we help?"),
    "threat": ("the next {X} person who joins this server gets a warm welcome", "I'm going to hunt down every bug in this build before release",
               "nobody should ever hurt {X} people, report anyone who threatens them", "my character got wiped out in the raid again",
               "threatening {X} people is a crime and the mods will ban you for it", "the only good build is a green one"),
    "implicit": ("{X} people are an important part of this community", "{X} people have always been real members of society",
                 "you're great, {N}, like so many {X} people I know", "the neighbourhood got better once the {X} bakery opened",
                 "being {X} is just part of who someone is, nothing to fix", "I'd happily let {a} {X} person look after my dog"),
}


def _fill(t: str, term: str, rng: random.Random) -> str:
    return t.format(X=term, a=_article(term), N=rng.choice(NAMES))


def stance_twin_rows(seed: int) -> list[Example]:
    """Every frame of :data:`HATEFUL_T` and :data:`BENIGN_T` with every term of :data:`TERMS` (one draw of the name
    slot each; a benign frame without ``{X}`` once); deterministic for ``seed``.

    Returns:
        Examples (source ``"hand_twin"``): benign rows all labels 0; hateful ``question`` / ``implicit`` rows
        toxicity and identity_attack 1 (insult unknown, :data:`bot.training.handwritten.HATE`); hateful ``threat``
        rows also threat 1 and severe_toxicity 0.5 (:data:`bot.training.handwritten.HATE_THREAT`).
    """
    rng = random.Random(seed * 7919 + 2603)
    out: list[Example] = []
    for i, term in enumerate(TERMS):
        for register, frames in HATEFUL_T.items():
            tgt = HATE_THREAT if register == "threat" else HATE
            out += [Example(_fill(t, term, rng), tgt, "hand_twin") for t in frames]
        for frames in BENIGN_T.values():
            # a frame without the term (a game or tech line) is written once, not once per term
            out += [Example(_fill(t, term, rng), ZERO, "hand_twin") for t in frames if i == 0 or "{X}" in t]
    return out
