"""Reproducible training of the embedded model: ``python -m bot.training`` rebuilds ``bot/model/artifact``."""

from __future__ import annotations
