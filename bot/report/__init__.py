"""Self-contained HTML report of an offline ``scan``: what a moderator reads after scanning an export.

The page loads nothing from outside (a Content-Security-Policy forbids it): CSS, the charts (inline SVG) and one
tiny inline script (the "show all texts" button, allowed by its hash) are generated here. Without scripts every
text still opens with one click. Every value from the scan is HTML-escaped.

A server is its platform and id everywhere on the page (a Discord guild and an export or Slack workspace of the same
id are two servers, each shown with its platform and name, the id on hover; an export reads "Discord (export)").
What a moderator sees, in order: the servers scanned with the policy (files and version) that judged each; what
the policy would have done (scans never act, so actions read "would delete", "would time out"); incidents (a raid
with its messages, a thread with its flagged replies); flags per label; message volume and flags over time; members
by strike points; then every flagged message with platform, server, channel and member names (ids on hover), a
link to the message where the export has real ids, and why it was flagged, against the tier that actually applied
(raid mode included). Message tables fit a 1,400 px screen without scrolling and turn into one card per message
on a phone (600 px and less); other tables scroll inside their own box. Policy files are shown without the host's
folders (:func:`display_path`).

The package by job: :mod:`~bot.report.rows` (the scan row schema, policy provenance, paths as shown),
:mod:`~bot.report.ids` (platform and message links guessed from ids), :mod:`~bot.report.actions` ("would" / "did"
words), :mod:`~bot.report.schema` (the report's rows and incidents), :mod:`~bot.report.grouping` (raids, threads,
counts: :func:`build_report_data`), :mod:`~bot.report.charts` (SVG), :mod:`~bot.report.style` (CSS, script,
escaping) and :mod:`~bot.report.page` (the HTML page). Import from ``bot.report``.
"""

from __future__ import annotations

from bot.report.actions import DID, WOULD, action_words
from bot.report.charts import BINS, MAX_BINS, ZOOM_OVER_S, choose_bin, zoom_window
from bot.report.grouping import build_report_data
from bot.report.ids import discord_link, platform_name
from bot.report.page import explain, raiders, render_html, write_html_report
from bot.report.rows import (
    MAX_TEXT,
    ROW_TEXT,
    display_path,
    message_fields,
    policy_provenance,
    scan_row,
    verdict_fields,
)
from bot.report.schema import FlaggedRow, Raid, ReportData, Row, Thread, row_from_json

__all__ = [
    "BINS",
    "DID",
    "MAX_BINS",
    "MAX_TEXT",
    "ROW_TEXT",
    "WOULD",
    "ZOOM_OVER_S",
    "FlaggedRow",
    "Raid",
    "ReportData",
    "Row",
    "Thread",
    "action_words",
    "build_report_data",
    "choose_bin",
    "discord_link",
    "display_path",
    "explain",
    "message_fields",
    "platform_name",
    "policy_provenance",
    "raiders",
    "render_html",
    "row_from_json",
    "scan_row",
    "verdict_fields",
    "write_html_report",
    "zoom_window",
]
