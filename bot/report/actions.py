"""The report's words for an action: what a shadow verdict "would" have done, what an enforced one "did".

Layer: ``bot.report`` (durations are worded by :mod:`bot.workflow.words`, as on the bots' cards).
"""

from __future__ import annotations

from bot.workflow import words
from bot.workflow.sanction_kinds import ACTION_WORDS

#: What a shadow verdict would have done, per action (scans never act); from the sanction registry.
WOULD = {action: would for action, (would, _) in ACTION_WORDS.items()}
#: What an enforced verdict did, per action.
DID = {action: did for action, (_, did) in ACTION_WORDS.items()}


def action_words(action: str, shadow: bool = True, duration_s: int | None = None) -> str:
    """Moderator wording of an action: ``"would time out (1 h)"`` for a shadow verdict, ``"timed out"`` otherwise.

    Unknown action names are shown as ``"would <name>"`` / ``"<name>"``.
    """
    words = (WOULD if shadow else DID).get(action) or (f"would {action}" if shadow else action)
    if duration_s:
        words += f" ({_duration(duration_s)})"
    return words


def _duration(seconds: int) -> str:
    return words.duration(seconds)
