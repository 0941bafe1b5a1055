"""What both platform adapters do when the network to their platform fails: the failure is an action's result.

Layer: ``bot.adapters`` (shared by ``bot.adapters.discord`` and ``bot.adapters.slack``). Imports aiohttp (both
discord.py and slack_sdk talk to their platform through it), ``bot.core`` and ``bot.workflow``.

The workflow's :class:`~bot.workflow.ports.Enforcer` never raises for a platform's refusal: it returns
``ActionResult(ok=False, reason=...)`` and the workflow records it on the case. A network failure that outlasts
the client's own retries (connection refused or reset, no answer in time) is one more failed action, not an
exception: escaping, it left the case ``pending`` with nothing recorded (a moderator saw "Something went wrong";
automod's case was carried out again at the next start).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec

import aiohttp

from bot.core.models import Action, ActionKind
from bot.core.ports import ActionResult

log = logging.getLogger(__name__)

#: What aiohttp (under discord.py and slack_sdk) raises when the network fails: cannot connect, connection reset
#: or closed before the answer (``ClientError``), or no answer within the client's timeout (``TimeoutError``).
NETWORK_ERRORS: tuple[type[Exception], ...] = (aiohttp.ClientError, TimeoutError)

P = ParamSpec("P")


def network_reason(exc: BaseException, platform: str) -> str:
    """A moderator-readable reason for a network failure, e.g. ``"network error: could not reach Slack
    (ServerDisconnectedError: Server disconnected)"``. A timeout says the platform may have done it anyway (the
    request may have arrived; only its answer is missing)."""
    if isinstance(exc, TimeoutError):
        return f"network error: no answer from {platform} in time (it may or may not have been done)"
    detail = str(exc) or type(exc).__name__
    return f"network error: could not reach {platform} ({type(exc).__name__}: {detail})"


def network_failure(platform: str, kind: ActionKind = ActionKind.LOG
                    ) -> Callable[[Callable[P, Awaitable[ActionResult]]], Callable[P, Coroutine[Any, Any, ActionResult]]]:
    """Decorate an enforcer method returning an :class:`ActionResult` so that a network failure
    (:data:`NETWORK_ERRORS`) becomes ``ActionResult(Action(kind), ok=False, reason=network_reason(...))``
    (logged at WARNING) instead of an exception. ``platform``: its name in the reason ("Slack", "Discord")."""

    def wrap(method: Callable[P, Awaitable[ActionResult]]) -> Callable[P, Coroutine[Any, Any, ActionResult]]:
        @functools.wraps(method)
        async def run(*args: P.args, **kwargs: P.kwargs) -> ActionResult:
            try:
                return await method(*args, **kwargs)
            except NETWORK_ERRORS as exc:
                reason = network_reason(exc, platform)
                log.warning("%s: %s", method.__name__, reason)
                return ActionResult(Action(kind), False, reason)

        return run

    return wrap


__all__ = ["NETWORK_ERRORS", "network_failure", "network_reason"]
