"""Counter-speech by quote for the fast loop's own hateful rows (issue 26, item 3; candidate Q's data).

Why: every fast-loop candidate since the nineteenth session lost HateCheck's counter-speech by quote (`counter_quote_nh`,
-1.6 to -5.5 points; significant for R-s1 and H-s1, docs/model-card.md). The new families teach many new hateful
lines (hateful twins of the counterfactual, stance-twins and scene families); the recipe's own counter-quotes
(:func:`bot.training.handwritten._counter_quotes`) quote only the recipe's hateful lines, so nothing tells the
candidate that *its* new hateful lines, quoted to condemn or report them, are not hate. This family quotes them in
the recipe's frames (:data:`bot.training.handwritten.COUNTER_QUOTE_T`), labelled benign on every label, as the
recipe labels its counter-quotes.

Written for this project (the frames are the recipe's own); never from HateCheck, Multilingual HateCheck or any
bias-template file in ``../shared``.
"""

from __future__ import annotations

import random

from bot.core.models import LABELS
from bot.training.data import ZERO, Example
from bot.training.handwritten import COUNTER_QUOTE_T

#: How many of the new hateful lines are quoted (a sample drawn with the seed: 1,500 of the 2,467 distinct ones, seed 13).
QUOTED = 1500


def counter_quote_rows(seed: int, hateful: list[str], n: int = QUOTED) -> list[Example]:
    """Up to ``n`` of ``hateful`` (distinct texts, in a seeded order) each quoted once in a frame of
    :data:`COUNTER_QUOTE_T` drawn with ``seed``; deterministic for (``seed``, ``hateful``).

    Returns:
        Examples (source ``"hand_cquote"``), every label 0.
    """
    rng = random.Random(seed * 7907 + 4111)
    lines = sorted(set(hateful))
    rng.shuffle(lines)
    return [Example(rng.choice(COUNTER_QUOTE_T).format(H=h), ZERO, "hand_cquote") for h in lines[:n]]


def quoted_hate_rows(seed: int) -> list[Example]:
    """Counter-quotes of the hateful rows (``identity_attack`` = 1) of the counterfactual, stance-twins and scene
    families, without their character-noise copies (a quote is of what was written, not of an evasion)."""
    from bot.training.counterfactual import counterfactual_rows
    from bot.training.handwritten import scene_families
    from bot.training.stance_twins import stance_twin_rows

    ia = LABELS.index("identity_attack")
    hateful = [ex.text for fam in (counterfactual_rows, stance_twin_rows, scene_families) for ex in fam(seed)
               if ex.target[ia] == 1.0 and ex.source != "hand_noisy" and '"' not in ex.text and "\n" not in ex.text]
    return counter_quote_rows(seed, hateful)
