"""Peak memory of ``scan`` for N and 4N messages, side by side in one run (issue 25 item 9).

Usage: ``python -m bench.scan_memory [--n 20000]``. Each size is scanned in a fresh child process (the real
``run_scan`` job, the real moderation service and a real SQLite file in a temporary folder; the scorer is the test
suite's keyword FakeScorer, so the figures are the pipeline's and the readers', not the model's). Prints the peak
RSS of each child (``ru_maxrss``), and the slope (bytes per extra message) between the two sizes: flat memory per
message means a small slope. Input: JSON lines of ~200 characters, 40 authors, one message per second.

The fake is built with ``record_calls=False``: a recording fake keeps every scored text, about 256 bytes a message,
which was most of the slope measured before (367 -> 99 bytes per extra message at ``--n 40000``). What still grows
is fixed-size memories filling (the service's 65,536 judged keys at 245 bytes each, the normaliser's caches); use
``--n 70000`` or more to measure past them. Figures, the tracemalloc breakdown and the design are in
docs/scaling.md, "Scanning large exports".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHILD = """
import asyncio, resource, sys
from argparse import Namespace
from pathlib import Path
from bot.jobs.scan import run_scan
from bot.settings import Settings
from tests.fakes import FakeScorer
args = Namespace(paths=[Path(sys.argv[1])], policy=[], out=None, report=None, format="auto", on_error="skip",
                 batch_size=64, no_progress=True)
scorer = FakeScorer(record_calls=False)  # a recording fake keeps every scored text (about 260 bytes a message)
rc = asyncio.run(run_scan(args, Settings(db_path=Path(sys.argv[2])), scorer=scorer))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(rc)
"""


def _export(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"m{i}", "text": f"message {i}: " + "ordinary words of chat " * 8,
                                 "author": f"u{i % 40}", "created_at": f"2024-01-{1 + i // 86400:02d}T"
                                 f"{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"}) + "\n")


def peak_rss_kib(n: int) -> int:
    """Peak RSS in KiB of one scan of ``n`` messages in a child process."""
    with tempfile.TemporaryDirectory(prefix="modbot-bench-") as tmp:
        src = Path(tmp) / "chat.jsonl"
        _export(src, n)
        proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(Path(tmp) / "mod.db")], cwd=REPO,
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"scan of {n} messages failed: {proc.stderr.strip().splitlines()[-1:]}")
        return int(proc.stdout.strip().splitlines()[-1])


def _cpu() -> str:
    """The CPU model (``/proc/cpuinfo``), cores, and the machine."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    except OSError:
        model = ""
    return f"{model or platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20_000, help="the smaller size (the larger is 4x)")
    args = ap.parse_args(argv)
    print(f"cpu: {_cpu()}, python {platform.python_version()}")
    small, large = peak_rss_kib(args.n), peak_rss_kib(4 * args.n)
    slope = (large - small) * 1024 / (3 * args.n)
    print(f"{'messages':>10} {'peak RSS MiB':>13}")
    print(f"{args.n:>10,} {small / 1024:>13.1f}")
    print(f"{4 * args.n:>10,} {large / 1024:>13.1f}")
    print(f"slope: {slope:,.0f} bytes per extra message")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
