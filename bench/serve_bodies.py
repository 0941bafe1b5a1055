"""Large JSON bodies against ``python -m bot serve``: how long ``/healthz`` waits while four keyed 1 MB bodies of
``{}`` values (in a field the service ignores) complete at once, on ``/v1alpha1/comments:analyze`` and
``/v1/score``. A body over 8 KB is decoded and checked in a worker thread (thirtieth session; before, each one
held the event loop about a second, /healthz included: 3.4-7.7 s worst gap for four on the 2-core AMD EPYC, 0.3-0.9
s after, both at load average 6-8). Uses the test suite's fake scorer (no model). Prints figures only.

Run: ``python bench/serve_bodies.py [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_proc import start_service  # noqa: E402

KEY = "bench-key-0123456789abcdef"
ANALYZE = "/v1alpha1/comments:analyze"


async def _ready(url: str) -> None:
    async with aiohttp.ClientSession() as s:
        for _ in range(400):
            try:
                async with s.get(url + "/readyz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError("service not ready")


async def _worst_gap(url: str, stop: asyncio.Event) -> float:
    worst = 0.0
    async with aiohttp.ClientSession() as s:
        while not stop.is_set():
            started = time.perf_counter()
            async with s.get(url + "/healthz") as r:
                r.raise_for_status()
            worst = max(worst, time.perf_counter() - started)
            await asyncio.sleep(0.01)
    return worst


async def one_round(url: str, path: str) -> float:
    """Four 1 MB bodies completing at once on ``path``; returns the worst /healthz answer time (s)."""
    values = ",".join(["{}"] * 330_000)
    body = ({"comment": {"text": "you idiot"}, "requestedAttributes": {"TOXICITY": {}}} if path == ANALYZE
            else {"texts": ["you idiot"]})
    raw = json.dumps(body)[:-1].encode() + b', "context": {"x": [' + values.encode() + b"]}}"
    head = (f"POST {path}?key={KEY} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(raw)}\r\n\r\n").encode()
    port = int(url.rsplit(":", 1)[1])
    conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(4)]
    for _, writer in conns:  # every body but its last byte, so that all four complete at once
        writer.write(head + raw[:-1])
        await writer.drain()
    stop = asyncio.Event()
    probe = asyncio.create_task(_worst_gap(url, stop))
    await asyncio.sleep(0.3)
    for _, writer in conns:
        writer.write(raw[-1:])
    statuses = [(await reader.readline()).split()[1].decode() for reader, _ in conns]
    await asyncio.sleep(0.2)
    stop.set()
    for _, writer in conns:
        writer.close()
    if statuses != ["200"] * 4:
        raise RuntimeError(f"statuses {statuses}")
    return await probe


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="serve-bodies-") as tmp:
        svc = start_service(Path(tmp), "--rate", "1000", "--burst", "1000", keys=f"bench:{KEY}\n")
        try:
            asyncio.run(_ready(svc.url))
            for path in (ANALYZE, "/v1/score"):
                gaps = [asyncio.run(one_round(svc.url, path)) for _ in range(args.rounds)]
                print(f"{path}: worst /healthz answer while four 1 MB bodies complete: "  # noqa: T201
                      + ", ".join(f"{g:.2f} s" for g in gaps))
        finally:
            svc.proc.kill()
            svc.proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
