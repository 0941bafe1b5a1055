"""Slack adapter: the bolt app (``app``), translation, enforcement within Slack's limits, Block Kit cards, and the
process (``run``: Socket Mode or the HTTP Events API).

Layer: ``bot.adapters.slack`` (imports slack_bolt / slack_sdk, ``bot.core`` and ``bot.workflow``). The moderation
logic is the workflow's (``bot.workflow``); this package only translates and renders.
"""
