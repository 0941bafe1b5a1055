"""Adversarial checks of the Slack app against the local fake Slack (each test states what should happen)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.slack.fake_slack import SlackUser
from tests.slack.test_app_wire import click, senv  # noqa: F401 - fixture

pytestmark = pytest.mark.slack

#: Slack's documented limit of a view's ``private_metadata`` (characters).
PRIVATE_METADATA_MAX = 3000


@dataclass
class ExternalUser(SlackUser):
    """A Slack Connect guest: a member of another organisation's workspace (admin THERE), seen in a shared
    channel; ``users.info`` names their own workspace in ``team_id``."""

    home_team: str = "TEXTERNAL1"

    def to_json(self, team_id: str) -> dict[str, Any]:
        return {**super().to_json(team_id), "team_id": self.home_team}


async def test_breakit_report_of_a_long_non_ascii_message_is_recorded(senv):  # noqa: F811
    """Reporting a long message written in Cyrillic through the "Report message" shortcut records the report:
    the modal's ``private_metadata`` must stay valid within Slack's 3000 characters (json.dumps escapes each
    character to six, and the modal cuts the JSON at 3000, so the submission cannot be parsed and is lost)."""
    await senv.start()
    text = "привет всем " * 120  # 1440 characters, a normal long message
    msg = senv.fake.add_message(senv.fake.general.id, senv.fake.member.id, text)
    short = senv.fake.message_action_payload(user=senv.fake.admin.id, channel=senv.fake.general.id,
                                             message_ts=msg["ts"], callback_id="report_message")
    assert (await senv.fake.deliver_interaction(senv.url, short)).status == 200
    (opened,) = await senv.fake.wait_for("views.open")
    view = opened.params["view"] if isinstance(opened.params["view"], dict) else json.loads(opened.params["view"])
    assert len(view["private_metadata"]) <= PRIVATE_METADATA_MAX
    sub = senv.fake.view_submission_payload(user=senv.fake.admin.id, callback_id="mod_report",
                                            values={"text": {"value": {"type": "plain_text_input",
                                                                       "value": "slurs"}}},
                                            private_metadata=view["private_metadata"])
    assert (await senv.fake.deliver_interaction(senv.url, sub)).status == 200
    await senv.fake.wait_until(lambda: len(senv.cards()) == 1)
    assert senv.rows("SELECT source, member_id FROM review_items") == [("report", senv.fake.member.id)]


async def test_breakit_another_workspaces_admin_cannot_decide_a_card(senv):  # noqa: F811
    """An admin of ANOTHER workspace (a Slack Connect guest in a shared review channel) is not a moderator here:
    their click on a card is refused and the item stays open."""
    guest = ExternalUser("UEXTERNAL01", "guest", is_admin=True)
    senv.fake.users[guest.id] = guest
    senv.review.members.add(guest.id)
    await senv.start()
    await senv.say(senv.fake.member.id, "borderline take")
    (card,) = senv.cards()
    assert (await click(senv, guest.id, card, "mod:review:1:warn")).status == 200
    await senv.fake.wait_until(lambda: senv.fake.hook_posts or senv.fake.calls_of("chat.update"))
    await senv.settle()
    assert [h.body["text"] for h in senv.fake.hook_posts if "You need" in h.body.get("text", "")]
    assert senv.rows("SELECT decision FROM review_items") == [("open",)]
