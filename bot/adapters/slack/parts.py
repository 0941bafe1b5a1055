"""What the Slack listeners use of the running bot, by type.

Layer: ``bot.adapters.slack``. The listeners (:mod:`~bot.adapters.slack.app`, :mod:`~bot.adapters.slack.status`,
:mod:`~bot.adapters.slack.home`, :mod:`~bot.adapters.slack.names`) are imported by
:mod:`bot.adapters.slack.run`, which builds the bot (:class:`~bot.adapters.slack.run.SlackBot`) and the
:class:`~bot.adapters.slack.app.SlackHandlers` they are bound to; so they name those two by what they use
(:class:`SlackBotParts`, :class:`SlackListeners`) instead of importing them (no import cycle), and the type checker
holds ``SlackBot`` and ``SlackHandlers`` to these protocols where they are passed in.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.context.respond.async_respond import AsyncRespond

    from bot.adapters.slack.desk import SlackDesk
    from bot.adapters.slack.enforcer import SlackEnforcer
    from bot.core.models import Message
    from bot.core.policy_registry import PolicyRegistry
    from bot.core.service import ModerationService, Outcome
    from bot.core.store_port import ModStore
    from bot.settings import Settings
    from bot.workflow import ModerationWorkflow
    from bot.workflow.authz import Actor


class SlackTransport(Protocol):
    """The part of :class:`~bot.adapters.slack.run.SlackSettings` the listeners read."""

    @property
    def mode(self) -> str:
        """``"socket"`` or ``"http"``."""
        ...


class SlackBotParts(Protocol):
    """The running Slack bot (:class:`~bot.adapters.slack.run.SlackBot`) once :meth:`start` has built its parts.

    Attributes:
        slack: Its transport settings; settings: its process settings (database, policy folders).
        store, service, policies, workflow, enforcer, desk, app: The parts ``start`` builds.
        bot_user_id, bot_id, team_id: The bot's own ids and its workspace (``auth.test``).
        closing: Set once it stops taking events.
        ready_at: When it became ready (UTC), ``None`` before.
    """

    @property
    def slack(self) -> SlackTransport: ...

    settings: Settings
    store: ModStore
    service: ModerationService
    policies: PolicyRegistry
    workflow: ModerationWorkflow
    enforcer: SlackEnforcer
    desk: SlackDesk
    app: AsyncApp
    bot_user_id: str
    bot_id: str
    team_id: str
    closing: bool
    ready_at: datetime | None

    async def judge(self, msg: Message) -> Outcome | None:
        """Judge one message and carry out its outcome (``None``: judging failed, logged)."""
        ...

    async def author_roles(self, team_id: str, user_id: str) -> tuple[str, ...]:
        """The user groups (``S…``) and member ids the policy names as roles that stand for this author."""
        ...


class SlackListeners(Protocol):
    """The listeners bound to one bot (:class:`~bot.adapters.slack.app.SlackHandlers`), as the other listener
    modules use them."""

    bot: SlackBotParts

    async def actor(self, team_id: str, user_id: str) -> Actor:
        """The person behind a click or command, with their Slack rank and permissions."""
        ...

    async def tell(self, user_id: str, text: str, channel: str | None = None) -> None:
        """An answer only ``user_id`` sees: ephemeral in ``channel`` when given, else a DM."""
        ...

    async def _open_modal(self, body: dict[str, Any], view: dict[str, Any], respond: AsyncRespond | None) -> None:
        """Open a modal for the click or command in ``body`` (an expired trigger is answered through ``respond``)."""
        ...


__all__ = ["SlackBotParts", "SlackListeners", "SlackTransport"]
