"""Break-it: ``/mydata export`` for a member who has written a lot. Every message judged keeps a verdict (its scores)
for good, about 1.7 KB of the export each, so an active member's file passes Discord's attachment limit (10 MiB
without boosts: about 6,000 messages): Discord refused it (413, 40005 "Request entity too large") and the member
was told "Something went wrong" and could never get their data. Through the real discord.py client against the
fake Discord, with a small attachment limit standing for the real one (the interaction carries it)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from tests.discord.helpers import ephemeral_text

pytestmark = pytest.mark.discord


async def export(env):
    return await env.fake.slash(env.guild, env.alice, "mydata", [{"name": "export", "type": 1, "options": []}])


async def test_an_export_larger_than_the_attachment_limit_is_sent_compressed_and_whole(env):
    """40 messages make an export of about 68 KB; with a 32 KiB limit it goes as one zip holding the whole JSON
    (every message, verdict and case), within the limit, and the answer says it is zipped."""
    env.fake.attachment_size_limit = 32 * 1024
    for i in range(40):
        await env.post(env.alice, f"just chatting about the weather today, message number {i} with some words")
    cb = await export(env)
    text = ephemeral_text(cb)
    (name, blob), = cb.files.items()
    assert name == f"mydata-{env.guild['id']}.zip" and len(blob) <= 32 * 1024
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        assert z.namelist() == [f"mydata-{env.guild['id']}.json"]
        raw = z.read(z.namelist()[0])
    assert len(raw) > 32 * 1024
    record = json.loads(raw)
    assert record["member_id"] == env.alice["id"] and len(record["messages"]) == 40 and len(record["verdicts"]) == 40
    assert "zip" in text


async def test_an_export_too_large_even_compressed_says_so(env):
    """When even the zip passes the limit the member is told plainly (how large, what Discord takes, whom to
    ask) instead of "Something went wrong"."""
    env.fake.attachment_size_limit = 300
    for i in range(10):
        await env.post(env.alice, f"just chatting about the weather today, message number {i} with some words")
    cb = await export(env)
    text = ephemeral_text(cb)
    assert not cb.files
    assert text.startswith("Your data is too large to send here"), text
    assert "at most 300 bytes" in text and "server's admins" in text
