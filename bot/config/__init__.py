"""Data package: the default policy ``default.toml`` (every key with its meaning and default).

Shipped as package data so an installed copy finds it (``importlib.resources``); per-server override files live
outside the package, in ``config/servers/`` (``MODBOT_SERVERS_DIR``). Imports nothing of the project, so every
layer (the core included) may use it.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

#: The packaged default policy file (inside the installed ``bot`` package, or the checkout's ``bot/config``).
DEFAULT_POLICY_PATH = Path(str(importlib.resources.files(__name__).joinpath("default.toml")))
