"""Character-noise augmentation for hateful training texts (leet, spaced letters, missing or swapped characters).

Evaders spell slurs and insults as ``f4ggot``, ``t r a n n y``, ``muslms``; the model should still see the word.
Pure functions over ``random.Random`` so a fixed seed gives the same augmented set.
"""

from __future__ import annotations

import random
import re

_LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7", "l": "1", "g": "9"}
_LEET_ALT = {"a": "@", "s": "$", "i": "!", "o": "0", "e": "3"}
_WORD = re.compile(r"[A-Za-z]{4,}")


def leet(word: str, rng: random.Random) -> str:
    """Replace some letters of ``word`` with look-alike digits or symbols (at least one)."""
    spots = [i for i, c in enumerate(word) if c.lower() in _LEET]
    if not spots:
        return word
    chosen = set(rng.sample(spots, k=max(1, min(len(spots), rng.randint(1, 3)))))
    table = _LEET_ALT if rng.random() < 0.3 else _LEET
    return "".join(table.get(c.lower(), _LEET[c.lower()]) if i in chosen else c for i, c in enumerate(word))


def spaced(word: str, rng: random.Random) -> str:
    """Spell ``word`` with spaces (or dots) between letters: ``t r a n n y``."""
    sep = rng.choice([" ", " ", ".", "-", "_"])
    return sep.join(word)


def drop_char(word: str, rng: random.Random) -> str:
    """Delete one inner character: ``muslims`` -> ``muslms``."""
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + word[i + 1 :]


def swap_chars(word: str, rng: random.Random) -> str:
    """Swap two adjacent inner characters: ``women`` -> ``wmoen``."""
    if len(word) < 4:
        return word
    spots = [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]] or [1]
    i = rng.choice(spots)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def censor(word: str, rng: random.Random) -> str:
    """Star out one or two inner letters: ``f*ggot``."""
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + "*" * rng.randint(1, 2) + word[i + 1 :]


_OPS = (leet, leet, spaced, drop_char, swap_chars, censor)


def noise_word(word: str, rng: random.Random) -> str:
    """Apply one random noise operation to ``word``."""
    return rng.choice(_OPS)(word, rng)


def noisy(text: str, rng: random.Random, focus: str | None = None) -> str:
    """Return ``text`` with one word obfuscated, or two words joined (``killall muslims``).

    Args:
        text: The hateful text.
        rng: Random source.
        focus: A word or phrase to obfuscate if present (a slur or identity term); otherwise a random long word.
    """
    if rng.random() < 0.12:
        parts = text.split(" ")
        if len(parts) > 2:
            i = rng.randrange(len(parts) - 1)
            return " ".join(parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2 :])
    if focus and focus in text:
        words = focus.split(" ")
        target = max(words, key=len)
        return text.replace(focus, focus.replace(target, noise_word(target, rng)), 1)
    words = _WORD.findall(text)
    if not words:
        return text
    w = rng.choice(words)
    return text.replace(w, noise_word(w, rng), 1)
