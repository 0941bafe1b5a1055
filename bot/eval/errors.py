"""The quality harness's input error, in its own module so that :mod:`bot.eval` and :mod:`bot.eval.scene` can both
raise it without importing each other."""

from __future__ import annotations


class EvalInputError(ValueError):
    """An evaluation input that cannot be used: a threshold outside [0, 1], or a file that is empty, unreadable or
    lacks the columns of its kind (HateCheck: ``test_case``, ``label_gold``, ``functionality``, ``target_ident``;
    scene: ``case_id``, ``kind``, ``gold``, ``text``, with gold ``flag``/``allow`` and unique case ids)."""


__all__ = ["EvalInputError"]
