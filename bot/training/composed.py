"""Composed messages (issue 26, item 3; twenty-seventh session): several sentences in one message, benign when every
sentence is, hateful twins with one supportive sentence swapped for a hateful one.

Why: the founding scene's angry supporters are reviewed on ``identity_attack`` by the *whole* text while none of
their sentences scores high alone (docs/model-card.md, "Twenty-seventh session": 0.94 whole against 0.006 / 0.188 /
0.184 for its three sentences). The model has learnt that shouting and words like "vile" or "disgusting" next to
identity words make a message hateful; the bot's verdict reads the highest score of the whole text and its sentence
pieces (:func:`bot.core.pieces.combine`), so a message should score high only when one of its parts is hateful.
Each row here joins an opener (anger or disgust aimed at the comments, not at a group), one or two supportive
sentences and a closer; its twin keeps the same opener and closer and swaps one supportive sentence for a hateful
one, so the only difference between the two is the sentence that carries the stance.

The openers and closers are written here; the supportive and hateful sentences are the scene families' own
(:mod:`bot.training.handwritten`), never the probe set's (``tests/test_composed.py`` checks that no row is, or
contains a sentence of, a held-apart evaluation text).
"""

from __future__ import annotations

import random

from bot.training.counterfactual import BAD, KIND, TERMS, _article
from bot.training.data import ZERO, Example
from bot.training.handwritten import (
    ANGRY_HATE,
    ANGRY_SUPPORT,
    COSTUME_H,
    EXIST_H,
    EXIST_NH,
    HATE,
    NAMES,
    NICKNAME_H,
    PATHOLOGISE_H,
)

#: Anger or disgust aimed at the thread, the comments or the abusers, never at a group.
OPENERS = (
    "I'm so mad right now", "I can't believe what I'm reading", "Wow", "Unbelievable", "This thread is a disgrace",
    "These replies are vile", "What is wrong with people", "Honestly I'm furious", "I'm shaking reading this",
    "This comment section makes me sick", "SERIOUSLY", "I AM LIVID", "Absolutely disgusting behaviour in here",
    "The hate in this thread is out of control", "I'm done being polite", "Every reply here is worse than the last",
    "HOW IS THIS ALLOWED", "Mods, where are you", "Reading these comments made me cry", "The bigots are out in force today",
)
#: Endings aimed at the commenters or the mods: strong, not hateful.
CLOSERS = (
    "Get over yourselves", "Deal with it", "If you can't handle that, log off", "Grow up", "Mods, please clean this up",
    "Reported, all of you", "Do better", "Congratulations {N}, you earned it", "Leave her alone", "Shame on every one of you",
    "She won fair and square", "Go touch grass", "Blocking every one of you", "Nobody asked for your opinion",
    "Love you {N}", "SHE DESERVES THIS", "Keep your hate to yourselves", "This is why we need better moderation",
)
#: Supportive sentences (the scene's angry support and "for existing" defences, without the profane ones, whose
#: labels are obscene rather than zero).
SUPPORT = tuple(t for t in ANGRY_SUPPORT + EXIST_NH if "fuck" not in t and "screw" not in t)
#: Hateful sentences aimed at trans women (the scene's hateful families, without profanity).
HATEFUL = tuple(t for t in ANGRY_HATE + EXIST_H + PATHOLOGISE_H + COSTUME_H + NICKNAME_H if "fuck" not in t)


def _sentence(t: str, rng: random.Random) -> str:
    """``t`` with ``{N}`` filled and end punctuation (kept when it has some)."""
    t = t.replace("{N}", rng.choice(NAMES)).strip()
    return t if t[-1] in ".!?" else t + rng.choice((".", ".", "!", "!!"))


def _join(parts: list[str]) -> str:
    """The sentences as one message, each starting with a capital (the model is uncased; this keeps rows readable)."""
    return " ".join(p[0].upper() + p[1:] for p in parts)


def composed_rows(seed: int, n: int = 1000) -> list[Example]:
    """``n`` benign composed messages and their ``n`` hateful twins (deterministic for ``seed``).

    Each benign row: an opener (3 in 5), one or two :data:`SUPPORT` sentences, a closer (3 in 5), all labels 0. Its
    twin: the same parts with one supportive sentence (chosen at random) replaced by a :data:`HATEFUL` one,
    labelled :data:`bot.training.handwritten.HATE` (toxicity and identity_attack 1, insult unknown).

    Returns:
        ``2 * n`` examples, benign and hateful alternating, source ``"hand_composed"``.
    """
    rng = random.Random(seed * 6151 + 2027)
    out: list[Example] = []
    for _ in range(n):
        support = [_sentence(t, rng) for t in rng.sample(SUPPORT, rng.choice((1, 1, 2)))]
        head = [_sentence(rng.choice(OPENERS), rng)] if rng.random() < 0.6 else []
        tail = [_sentence(rng.choice(CLOSERS), rng)] if rng.random() < 0.6 else []
        swap = rng.randrange(len(support))
        hateful = support[:swap] + [_sentence(rng.choice(HATEFUL), rng)] + support[swap + 1:]
        out.append(Example(_join(head + support + tail), ZERO, "hand_composed"))
        out.append(Example(_join(head + hateful + tail), HATE, "hand_composed"))
    return out


#: Stance pairs about any identity (twenty-eighth session, recipe QD: measured worse, not shipped; docs/model-card.md
#: "Twenty-eighth session"): the same frame benign (``[0]``) and hateful (``[1]``),
#: the stance carried by one word or phrase. Why: recipe QC (``composed`` alone) met the scene's 90% but lost
#: HateCheck's hateful cases where an identity sits next to a hostile predicate: negated praise (-6 to -10 points),
#: questions (-5 to -8) and threats. Its hateful twins all spoke of trans women; its benign rows taught that anger
#: and words like "vile" next to an identity are benign. These twins put every :data:`TERMS` entry in those registers,
#: inside the same openers and closers. ``{X}`` the term, ``{K}`` a kind adjective, ``{B}`` a derogatory one,
#: ``{aK}`` / ``{aB}`` their articles. Written from the names of the registers; never from HateCheck or a template file.
STANCE_PAIRS: tuple[tuple[str, str], ...] = (
    # negation: a negated insult is benign, negated praise hateful
    ("{X} people are never {B}, stop saying they are", "{X} people are never {K}, stop saying they are"),
    ("not one {X} person I have met was {B}", "not one {X} person I have met was {K}"),
    ("I refuse to believe {X} people are {B}", "I refuse to believe {X} people can be {K}"),
    ("no {X} person deserves to be called {B}", "no {X} person deserves to be called {K}"),
    # questions: asking about the hate is benign, asking why the group is bad is hateful
    ("why are people so cruel to {X} people?", "why are {X} people so {B}?"),
    ("can someone explain why {X} people get so much hate?", "can someone explain why {X} people are all so {B}?"),
    ("how is it ok to treat {X} people like this?", "how is it ok to let {X} people live here?"),
    ("who decided {X} people are not welcome here?", "who decided {X} people are welcome here? get them out"),
    # threats and wishes aimed at the group, against protection of it
    ("{X} people should feel safe in this server", "{X} people should feel scared in this server"),
    ("someone should stand up for {X} people", "someone should hurt {X} people until they leave"),
    ("I hope every {X} person here has a great day", "I hope every {X} person here gets what's coming to them"),
    # predicates: human and welcome against vermin and unwanted
    ("{X} people make this community better", "{X} people make this community worse"),
    ("{X} people are human beings like the rest of us", "{X} people are animals, not like the rest of us"),
    ("{X} people belong here as much as anyone", "{X} people do not belong anywhere near us"),
)


def composed_stance_rows(seed: int, n: int = 700) -> list[Example]:
    """``n`` benign rows and their ``n`` hateful twins from :data:`STANCE_PAIRS`, each about one random
    :data:`TERMS` entry, inside an opener (3 in 5) and a closer (3 in 5) as in :func:`composed_rows`; the twins share
    the term, the adjectives' draw, the opener and the closer (deterministic for ``seed``).

    Returns:
        ``2 * n`` examples, benign (all zeros) and hateful (:data:`bot.training.handwritten.HATE`) alternating,
        source ``"hand_composed_stance"``.
    """
    rng = random.Random(seed * 7121 + 2028)
    out: list[Example] = []
    for _ in range(n):
        benign_t, hateful_t = rng.choice(STANCE_PAIRS)
        term, k, b = rng.choice(TERMS), rng.choice(KIND), rng.choice(BAD)
        fill = dict(X=term, K=k, B=b, aK=_article(k), aB=_article(b))
        head = [_sentence(rng.choice(OPENERS), rng)] if rng.random() < 0.6 else []
        tail = [_sentence(rng.choice(CLOSERS), rng)] if rng.random() < 0.6 else []
        end = rng.choice((".", "!"))
        pair = [t.format(**fill) for t in (benign_t, hateful_t)]
        pair = [t if t[-1] in ".!?" else t + end for t in pair]
        out.append(Example(_join(head + [pair[0]] + tail), ZERO, "hand_composed_stance"))
        out.append(Example(_join(head + [pair[1]] + tail), HATE, "hand_composed_stance"))
    return out
