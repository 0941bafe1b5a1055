"""``python -m bot``: the command line (scan, score, policy check, eval, bench, purge, discord, slack).

Layer: composition root. See ``bot/cli.py`` for the commands.
"""

from __future__ import annotations

import sys

from bot.cli import main

if __name__ == "__main__":
    sys.exit(main())
