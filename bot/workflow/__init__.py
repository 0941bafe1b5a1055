"""The platform-neutral moderation workflow: carrying out verdicts, sanctions, review and appeal decisions, pardons
and the raid response, once for every platform.

Layer: ``bot.workflow``. May import ``bot.core`` and the standard library only (never discord, slack_*, aiosqlite,
torch). Platforms plug in through :mod:`bot.workflow.ports`.
"""

from bot.workflow.authz import Actor, Permission, Refused, authorize
from bot.workflow.ports import BulkResult, Capability, Enforcer, MemberInfo, MemberNotice, ModDesk
from bot.workflow.views import Evidence, LogEntry, RaidCard, ReviewCard
from bot.workflow.workflow import DECISIONS, ModerationWorkflow, Result

__all__ = [
    "DECISIONS",
    "Actor",
    "BulkResult",
    "Capability",
    "Enforcer",
    "Evidence",
    "LogEntry",
    "MemberInfo",
    "MemberNotice",
    "ModDesk",
    "ModerationWorkflow",
    "Permission",
    "RaidCard",
    "Refused",
    "Result",
    "ReviewCard",
    "authorize",
]
