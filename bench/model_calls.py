"""The embedded model on ONNX Runtime in one process, no HTTP: messages per second and CPU per message for model
threads x concurrent calls x messages per call, on real chat (:func:`bot.jobs.bench.load_chat`). Prints figures
only. What it answers: whether two one-thread calls at once (the service's default on two cores,
``bot.serve.options.serve_workers``) score small passes as fast as one two-thread call scores large ones.

Run: ``MODBOT_SHARED=/work/shared python bench/model_calls.py [--messages 1000] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: (intra-op threads, concurrent callers, messages per call) measured by default.
CASES = ((2, 1, 128), (2, 1, 16), (1, 2, 16), (1, 2, 8))


def main(argv: list[str] | None = None) -> int:
    from bot.core.pieces import score_texts
    from bot.jobs.bench import load_chat
    from bot.scoring.onnx_scorer import load_embedded

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--precision", default="fp32", choices=("fp32", "int8"))
    args = p.parse_args(argv)
    msgs = [m.text for m in load_chat(args.messages)]
    print(f"{len(msgs)} chat messages, {os.cpu_count()} CPUs, precision {args.precision}")
    for _ in range(args.rounds):
        for threads, callers, per_call in CASES:
            os.environ["MODBOT_ONNX_THREADS"] = str(threads)
            scorer = load_embedded(precision=args.precision)
            score_texts(scorer, msgs[:64])  # warm
            chunks = [msgs[i : i + per_call] for i in range(0, len(msgs), per_call)]

            def run(part: list[list[str]], scorer: object = scorer) -> None:
                for chunk in part:
                    score_texts(scorer, chunk)  # type: ignore[arg-type]

            workers = [threading.Thread(target=run, args=(chunks[k::callers],)) for k in range(callers)]
            started, cpu = time.perf_counter(), time.process_time()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            wall, used = time.perf_counter() - started, time.process_time() - cpu
            print(f"threads {threads} x {callers} calls at once, {per_call:>3} messages per call: "
                  f"{len(msgs) / wall:6.1f} msg/s, CPU {used / len(msgs) * 1000:.2f} ms per message")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
