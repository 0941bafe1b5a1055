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
