"""A scan of two servers where one member offends in both: the terminal summary's and the report's members by
strike points keep each server's points apart (strikes and the escalation ladder count per server), never their
sum. The real ``run_scan`` job on real JSON lines files and a real SQLite mod log; the scorer is the suite's
keyword FakeScorer."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

from bot.settings import Settings
from tests.fakes import FakeScorer
from tests.test_scan_stream import _args

#: "idiot" scores past insult's act tier of the default policy (0.98): each insult is deleted and earns a strike.
SCORES = {"idiot": {"insult": 0.99, "toxicity": 0.9}}
INSULTS = ("you idiot", "what an idiot", "idiot again", "such an idiot move", "idiot idiot")


def _export(path: Path, server: str, name: str, insults: int, member: str = "Mallory") -> Path:
    """A JSON lines export of one Discord server: member u1 insults ``insults`` times (a minute apart), u2 chats."""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(insults):
            for author, text in (("u1", INSULTS[i]), ("u2", f"hello there number {i}")):
                fh.write(json.dumps({
                    "id": f"{server}-{author}-{i}", "text": text, "channel": "general",
                    "author": {"id": author, "name": member if author == "u1" else "Bob"},
                    "server": {"platform": "discord", "id": server, "name": name},
                    "created_at": f"2026-03-01T10:{i:02d}:{0 if author == 'u1' else 30:02d}Z"}) + "\n")
    return path


def test_two_servers_scan_keeps_each_servers_strike_points(tmp_path, capsys):
    """u1 earns strikes in both servers of one scan: the terminal table has one row per server with that server's
    points (as recorded in its strikes), and so has the report; neither shows the two servers' sum."""
    from bot.jobs.scan import run_scan

    one = _export(tmp_path / "one.jsonl", "111", "Alpha", 3)
    two = _export(tmp_path / "two.jsonl", "222", "Beta", 2)
    db, report = tmp_path / "m.db", tmp_path / "report.html"
    rc = asyncio.run(run_scan(_args([one, two], report=report), Settings(db_path=db), scorer=FakeScorer(SCORES)))
    out = capsys.readouterr().out
    assert rc == 0
    with sqlite3.connect(db) as con:
        points = dict(con.execute("SELECT server_id, SUM(points) FROM strikes WHERE member_id = 'u1' "
                                  "AND pardoned_at IS NULL GROUP BY server_id").fetchall())
        # an imported history stays in the offline namespace, whatever its server.platform says
        assert {p for (p,) in con.execute("SELECT DISTINCT platform FROM strikes")} == {"export"}
    assert set(points) == {"111", "222"} and all(p > 0 for p in points.values()), points
    table = out.split("members with most strike points")[1]
    for server, p in points.items():
        assert re.search(rf"export/{server}\s+│\s+Mallory\s+│\s+u1\s+│\s+{p}\s+│", table), table
    assert not re.search(rf"│\s+u1\s+│\s+{sum(points.values())}\s+│", table), table
    page = report.read_text(encoding="utf-8").split("<h2>Members by strike points</h2>")[1].split("</table>")[0]
    for server, name in (("111", "Alpha"), ("222", "Beta")):
        assert (f'<tr><td>export</td><td><span title="server id {server}">{name}</span></td><td>Mallory</td>'
                f'<td class="id">u1</td><td class="num">{points[server]}</td></tr>') in page, page


def test_piped_scan_summary_keeps_each_table_row_on_one_line(tmp_path, capsys):
    """Printed to a pipe or a file (not a terminal), the summary's tables take the width their rows need: a member
    with a 70-character display name is one line of the strike-points table, not wrapped at 80 columns."""
    from bot.jobs.scan import run_scan

    long_name = "Mallory " + "x" * 62
    one = _export(tmp_path / "one.jsonl", "111", "Alpha", 3, member=long_name)
    rc = asyncio.run(run_scan(_args([one], report=None), Settings(db_path=tmp_path / "m.db"),
                              scorer=FakeScorer(SCORES)))
    out = capsys.readouterr().out
    assert rc == 0
    table = out.split("members with most strike points")[1]
    assert re.search(rf"export/111\s+│\s+{long_name}\s+│\s+u1\s+│\s+3\s+│", table), table
