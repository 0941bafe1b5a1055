"""The Slack app manifest asks for exactly what the app listens to: its slash commands, bot events and shortcut."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.adapters.slack.app import COMMANDS
from bot.adapters.slack.cases import CASE_COMMANDS
from bot.adapters.slack.policy import POLICY_COMMANDS
from bot.adapters.slack.status import STATUS_COMMANDS

MANIFEST = Path(__file__).resolve().parents[2] / "config" / "slack-app-manifest.yml"


def load() -> dict:
    return yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))


def test_manifest_commands_are_the_apps_commands():
    """Every slash command in the manifest has a listener, and every listener's command is in the manifest."""
    manifest = {c["command"] for c in load()["features"]["slash_commands"]}
    assert manifest == set(COMMANDS) | set(STATUS_COMMANDS) | set(CASE_COMMANDS) | set(POLICY_COMMANDS)


def test_manifest_events_shortcut_and_socket_mode():
    """Bot events are the message and join events the app handles; the message shortcut's callback id matches."""
    m = load()
    assert set(m["settings"]["event_subscriptions"]["bot_events"]) == {
        "message.channels", "message.groups", "team_join", "user_change", "member_joined_channel", "channel_shared",
        "channel_unshared", "app_home_opened"}
    assert m["features"]["app_home"]["home_tab_enabled"] is True
    assert [(s["type"], s["callback_id"]) for s in m["features"]["shortcuts"]] == [("message", "report_message")]
    assert m["settings"]["socket_mode_enabled"] is True and m["settings"]["interactivity"]["is_enabled"] is True


def test_manifest_scopes_cover_every_web_api_method_the_app_calls():
    """Each Web API method the Slack adapter calls needs a bot scope the manifest asks for."""
    needed = {"chat_postMessage": "chat:write", "chat_update": "chat:write", "chat_postEphemeral": "chat:write",
              "conversations_open": "im:write", "conversations_kick": "channels:manage",
              "users_info": "users:read", "usergroups_users_list": "usergroups:read",
              "files_upload_v2": "files:write", "usergroups_list": "usergroups:read",
              "conversations_info": "channels:read"}
    source = "".join(p.read_text() for p in (MANIFEST.parents[1] / "bot" / "adapters" / "slack").glob("*.py"))
    called = {method for method in needed if f".{method}(" in source}
    assert called == set(needed)  # the table above is complete for what the adapter calls
    scopes = set(load()["oauth_config"]["scopes"]["bot"])
    assert {needed[m] for m in called} <= scopes
    assert load()["oauth_config"]["scopes"]["user"] == ["chat:write"]  # the optional admin token deletes
