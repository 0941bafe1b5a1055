"""How long ``python -m bot report`` takes on a large mod log: reading it through the store and rendering the page.

Builds a mod log of N cases (default 20,000) over 2,000 members in a scratch SQLite file with the store's own
``open_case`` / ``add_strike``, then times :func:`bot.report_live.read_modlog` and :func:`render_modlog` and prints
the figures and the page size. Run: ``python -m bench.modlog_report [--cases N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.models import ActionKind, CaseStatus
from bot.report_live import read_modlog, render_modlog
from bot.store.sqlite import SqliteStore


def _cpu() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


async def main(cases: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        t0 = time.perf_counter()
        now = datetime.now(UTC)
        async with await SqliteStore.open(db) as store:
            kinds = (ActionKind.WARN, ActionKind.DELETE, ActionKind.TIMEOUT, ActionKind.LOG)
            for i in range(cases):
                member = f"{100000000000000000 + i % 2000}"
                await store.open_case("discord", "1", member, kinds[i % 4], f"reason {i}", moderator_id="9",
                                      status=CaseStatus.APPLIED, now=now - timedelta(minutes=i))
                if i % 4 == 0:
                    await store.add_strike("discord", "1", member, 1, now + timedelta(days=30), reason="warned")
        built = time.perf_counter() - t0
        async with await SqliteStore.open(db) as store:
            t1 = time.perf_counter()
            logs = await read_modlog(store)
            read = time.perf_counter() - t1
        t2 = time.perf_counter()
        page = render_modlog(logs)
        rendered = time.perf_counter() - t2
    print(f"cpu: {_cpu()}, {os.cpu_count()} cores")
    print(f"{cases:,} cases, {cases // 4:,} strikes, 2,000 members (built in {built:.1f} s)")
    print(f"read through the store: {read:.2f} s; rendered: {rendered:.2f} s; page {len(page) / 1e6:.1f} MB")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20_000)
    asyncio.run(main(ap.parse_args().cases))
