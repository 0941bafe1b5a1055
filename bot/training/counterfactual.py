"""Counterfactual identity data (issue 26), written for this project: the same sentence with every identity term,
benign and hateful in the same registers, so the model learns stance, not vocabulary.

Measured on the shipped student: "You are a <kind adjective> <identity> man/woman" was flagged about one time in
seven under the default policy, most for "homosexual", then "heterosexual" and "straight"; identity words next to
personal or emotional words scored high whatever the stance. Three kinds of rows:

* **benign** sentences with each term of :data:`TERMS` in seven registers (praise, neutral description, personal
  statements, questions, support with strong emotion or capitals, "for existing" defences, counter-speech by
  reference, which run KS lost): all labels 0;
* **hateful twins** in the same registers (the same frame with a derogatory adjective, a dehumanising claim, a
  wish that the group not exist): ``toxicity`` and ``identity_attack`` 1, ``insult`` unknown;
* **identity swaps** of the benign hand-written rows (:func:`bot.training.handwritten.generate`, seed 13) that
  name a group: the group phrase replaced by another term's ("trans people" -> "heterosexual people"), labels kept.

Never written from HateCheck, Multilingual HateCheck or any bias-template file (``conversationai`` sentence
templates included). The held-apart benign identity sentences (``bot/eval/data/identity_benign.csv``, other
templates, never trained on) measure the result; a test checks that no row here is one of them.
"""

from __future__ import annotations

import random

from bot.training.data import ZERO, Example
from bot.training.handwritten import GROUPS, HATE, NAMES, generate

#: Identity terms used as adjectives before man / woman / person / people; each is a term of
#: :mod:`bot.core.identity_terms` (a test checks that the core finds every one), incl. the words of sexual
#: orientation and gender identity the measurements single out (homosexual, heterosexual, straight, trans, cis).
TERMS: tuple[str, ...] = (
    "trans", "transgender", "cis", "cisgender", "nonbinary", "genderqueer", "genderfluid", "intersex",
    "gay", "lesbian", "bisexual", "pansexual", "asexual", "queer", "homosexual", "heterosexual", "straight",
    "black", "white", "brown", "asian", "african", "arab", "latino", "hispanic", "mexican", "chinese", "japanese",
    "korean", "indian", "native american", "indigenous", "jewish", "muslim", "christian", "catholic", "hindu",
    "sikh", "buddhist", "atheist", "mormon", "disabled", "autistic", "deaf", "blind", "immigrant", "refugee",
    "elderly", "feminist", "romani", "pakistani", "nigerian", "somali", "syrian", "turkish", "polish",
)
#: Nouns after the term; "lesbian" only with woman / person.
NOUNS = ("man", "woman", "person")
KIND = ("kind", "lovely", "brilliant", "wonderful", "talented", "beautiful", "sweet", "smart", "generous", "brave",
        "strong", "funny", "caring", "amazing")
BAD = ("disgusting", "filthy", "worthless", "subhuman", "vile", "repulsive", "pathetic", "degenerate")

#: Benign frames by register; ``{a}`` the article, ``{X}`` the term, ``{n}`` a noun, ``{K}`` a kind adjective,
#: ``{N}`` a first name, ``{XU}`` the term in capitals.
BENIGN_T: dict[str, tuple[str, ...]] = {
    "praise": ("You are {aK} {K} {X} {n}", "what {aK} {K} {X} {n} you are", "you're {aK} {K} {X} {n} and I'm glad we met",
               "{N} is {aK} {K} {X} {n} and we are lucky to have her here"),
    "neutral": ("{N} is {a} {X} {n} who works in IT", "my neighbour is {a} {X} {n}", "there are many {X} people in my city",
                "the new moderator is {a} {X} {n}"),
    "personal": ("I am {a} {X} {n}", "as {a} {X} {n}, I love this game", "I'm {X} and proud of it",
                 "I'm {a} {X} {n} and I've been on this server for years"),
    "question": ("is anyone else here {X}?", "are there other {X} people on this server?",
                 "what is it like being {a} {X} {n}?", "any {X} folks here who want to team up?"),
    "emotional": ("{XU} PEOPLE DESERVE RESPECT", "I LOVE MY {XU} FRIENDS SO MUCH", "leave {X} people alone, they are just living their lives!!!",
                  "I am SO angry that {X} people get harassed online. STOP IT."),
    "existing": ("why would anyone attack {a} {X} {n} for existing?", "{X} people have every right to exist and be happy",
                 "being {X} is not a crime, let people live", "if you have nothing kind to say about {X} people, keep quiet"),
    # counter-speech by reference (run KS lost it): hate named and rejected without being quoted
    "counter_ref": ("I'm so tired of people spreading lies about {X} people", "reported. nobody should talk about {X} people like that",
                    "the hate {X} people get on this server is disgusting", "calling {X} people names is not ok, mods please act"),
}
#: Hateful twins in the same registers.
HATE_T: dict[str, tuple[str, ...]] = {
    "praise": ("You are {aB} {B} {X} {n}", "what {aB} {B} {X} {n} you are", "you're {aB} {B} {X} {n} and nobody wants you here"),
    "neutral": ("{N} is {a} {X} {n}, and {X} people are vermin", "my neighbour is {a} {X} {n}, I wish they would all disappear",
                "there are too many {X} people in my city, they are a plague"),
    "personal": ("I hate {X} people", "as a normal person, I think {X} people are disgusting", "I'm sick of {X} people, all of them"),
    "question": ("why do we even let {X} people exist?", "are there other {X} people on this server? they should be banned for being {X}",
                 "what is it like being {a} {X} {n}? must be awful to be that disgusting"),
    "emotional": ("{XU} PEOPLE ARE SUBHUMAN", "I HATE {XU} PEOPLE SO MUCH", "{X} people should not be allowed to exist!!!"),
    "existing": ("{X} people should not exist", "the world would be better without {X} people",
                 "if you are {X}, keep quiet, nobody wants to hear from your kind"),
    "counter_ref": ("I'm so tired of {X} people spreading their lies", "nobody should have to talk to {X} people like that",
                    "{X} people on this server are disgusting", "{X} people are not ok, mods please ban them"),
}


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _fill(t: str, term: str, rng: random.Random) -> str:
    noun = rng.choice(("woman", "person") if term == "lesbian" else NOUNS)
    k, b = rng.choice(KIND), rng.choice(BAD)
    return t.format(X=term, XU=term.upper(), n=noun, K=k, B=b, N=rng.choice(NAMES), a=_article(term), aK=_article(k),
                    aB=_article(b))


def identity_swaps(seed: int, n: int = 1200) -> list[Example]:
    """Up to ``n`` benign hand-written rows (seed 13 set, all labels 0) that name a group, with the group's plural
    phrase swapped for ``"<term> people"`` of a random :data:`TERMS` entry; deterministic for ``seed``."""
    rng = random.Random(seed * 31 + 26)
    phrases = sorted({p for g in GROUPS for p in g.plural}, key=len, reverse=True)
    out = []
    for ex in generate(13):
        if ex.source != "hand" or ex.target != ZERO:
            continue
        low = ex.text.lower()
        hit = next((p for p in phrases if p.lower() in low), None)
        if hit is None:
            continue
        i = low.index(hit.lower())
        out.append(Example(ex.text[:i] + f"{rng.choice(TERMS)} people" + ex.text[i + len(hit):], ZERO, "hand_swap"))
    rng.shuffle(out)
    return out[:n]


def counterfactual_rows(seed: int, per_frame: int = 1) -> list[Example]:
    """Benign rows and hateful twins for every term of :data:`TERMS` in every register (``per_frame`` draws of each
    frame), then :func:`identity_swaps`; deterministic for ``seed``.

    Returns:
        Examples with every label known but ``insult`` on hateful rows (source ``"hand_cf"``, ``"hand_swap"``).
    """
    rng = random.Random(seed * 7919 + 26)
    out: list[Example] = []
    for term in TERMS:
        for _ in range(per_frame):
            for frames in BENIGN_T.values():
                for t in frames:
                    out.append(Example(_fill(t, term, rng), ZERO, "hand_cf"))
            for frames in HATE_T.values():
                for t in frames:
                    out.append(Example(_fill(t, term, rng), HATE, "hand_cf"))
    return out + identity_swaps(seed)
