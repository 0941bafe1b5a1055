"""Start-up of ``python -m bot serve``, alternating between checkouts: seconds from spawn to the ``listening`` and
``ready`` lines and to the first 200 answer of ``comments:analyze`` (warm model cache). Prints figures only.

Run: ``python bench/serve_start.py [--runs 7] [TREE ...]`` (default: this checkout; give an older checkout, e.g.
``git archive REV | tar -x -C DIR``, to compare it in the same run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


async def _first_answer(url: str) -> float:
    import aiohttp

    body = {"comment": {"text": "you are an idiot"}, "requestedAttributes": {"TOXICITY": {}}}
    async with aiohttp.ClientSession() as s:
        while True:
            try:
                async with s.post(url + "/v1alpha1/comments:analyze", json=body) as r:
                    if r.status == 200:
                        return time.perf_counter()
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.005)


def one_start(tree: Path) -> tuple[float, list[tuple[float, str]]]:
    """Seconds from spawn to the first answer, and the service's stdout lines with their times."""
    with tempfile.TemporaryDirectory() as d:
        port_file = Path(d) / "port"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        env.pop("MODBOT_SCORER_URL", None)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--port", "0", "--port-file", str(port_file)],
                                cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines: list[tuple[float, str]] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append((time.perf_counter() - t0, line.strip()))

        threading.Thread(target=read, daemon=True).start()
        while not port_file.exists():
            time.sleep(0.002)
        t1 = asyncio.run(_first_answer(f"http://127.0.0.1:{port_file.read_text()}"))
        proc.terminate()
        proc.wait()
        return t1 - t0, lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trees", nargs="*", type=Path, default=[REPO])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args(argv)
    times: dict[Path, list[float]] = {t: [] for t in args.trees}
    for _ in range(args.runs):
        for tree in args.trees:
            first, lines = one_start(tree)
            times[tree].append(first)
            stages = "; ".join(f"{t:.2f} s {line.split(':')[1].strip()}" for t, line in lines
                               if line.startswith("serve: ") and ":" in line)
            print(f"{tree}: first answer {first:.2f} s ({stages})")
    for tree, values in times.items():
        print(f"{tree}: first answer median {statistics.median(values):.2f} s, min {min(values):.2f}, "
              f"max {max(values):.2f} over {len(values)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
