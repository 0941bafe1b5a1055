"""Data package: the default policy ``default.toml`` (every key with its meaning and default).

Shipped as package data so an installed copy finds it (``importlib.resources.files("bot.config")``); per-server
override files live outside the package, in ``config/servers/`` (``MODBOT_SERVERS_DIR``).
"""
