"""``python -m bot``: the command line (scan, score, policy check, eval, bench, purge, discord, slack).

Layer: composition root. See ``bot/cli.py`` for the commands.

Run by a Python that lacks the bot's dependencies (the system ``python`` in a checkout whose ``.venv`` was made by
``scripts/setup.sh`` but not activated), the command ends with one ``error: ...`` line naming the missing module
and the interpreter, and exit code 2, instead of a traceback.
"""

from __future__ import annotations

import sys

from bot.cli import main  # standard library and the project only; the console script `modbot` calls it


def missing_dependency(exc: ModuleNotFoundError) -> str | None:
    """The one-line error for ``exc`` when it is a third-party module that is not installed; ``None`` when the
    missing module is part of the project itself (a bug, which keeps its traceback)."""
    name = exc.name or ""
    if not name or name.split(".")[0] in ("bot", "cogs"):
        return None
    return (f"error: module {name!r} is not installed for {sys.executable}: run `bash scripts/setup.sh`, then "
            "`.venv/bin/python -m bot ...` (or activate it first: `. .venv/bin/activate`)")


def run() -> int:
    """``main()`` with a missing dependency reported in one line (exit 2)."""
    try:
        return main()
    except ModuleNotFoundError as exc:
        line = missing_dependency(exc)
        if line is None:
            raise
        print(line, file=sys.stderr)  # noqa: T201
        return 2


if __name__ == "__main__":
    sys.exit(run())
