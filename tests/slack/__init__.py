"""Tests against a local fake Slack (Web API, signed HTTP Events API, Socket Mode)."""
