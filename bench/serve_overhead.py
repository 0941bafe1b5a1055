"""The service's own CPU per request, outside the model: ``python -m bot serve`` with the test suite's fake scorer
(keyword rules, no forward pass, no sleep), 16 concurrent clients posting one ``comments:analyze`` per real chat
message. Prints figures only (issue 27's 16-client share: the per-request work that the model's CPU hides).

Run: ``MODBOT_SHARED=/work/shared python bench/serve_overhead.py [--messages 3000] [--rounds 3]
[--variant NAME=VAR=VALUE ...] [--also-tree DIR ...]``. Each variant (an environment variable for the service, e.g.
``spin=MODBOT_ONNX_SPIN=1``; default: this checkout as it is) and each
tree is measured once per round, alternating. Per request, in milliseconds of CPU (user + system, ``/proc``):

- the service process, all threads;
- its main thread alone (the event loop: HTTP, JSON, the request's reading and language check, the answer);
- the load-generating clients (this process).

The fake scorer's own work (a few keyword checks per text) runs in the batcher's worker thread: the difference
between the process and its main thread. Requests per second are printed too, but on two shared cores they move
with other jobs much more than the CPU figures do.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.serve import ANALYZE, cpu_name, process_cpu_s  # noqa: E402 - after the path above


async def _ready(port_file: Path) -> str:
    import aiohttp

    while not port_file.exists():
        await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{port_file.read_text()}"
    async with aiohttp.ClientSession() as s:
        while True:
            try:
                async with s.get(url + "/readyz") as r:
                    if r.status == 200:
                        return url
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.01)


async def _load(url: str, texts: list[str], clients: int) -> float:
    """Closed loop: ``clients`` clients, one request each at a time, until ``texts`` are all sent; requests/s."""
    import aiohttp

    queue = list(texts)

    async def client(s: aiohttp.ClientSession) -> None:
        while queue:
            body = {"comment": {"text": queue.pop()[:4000] or "."}, "requestedAttributes": {"TOXICITY": {}},
                    "allowUnsupportedLanguages": True}
            async with s.post(url + ANALYZE, json=body) as r:
                await r.read()
                assert r.status in (200, 400), r.status  # 400: a message with nothing left to score

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as s:
        started = time.perf_counter()
        await asyncio.gather(*(client(s) for _ in range(clients)))
        return len(texts) / (time.perf_counter() - started)


def measure(tree: Path, env_extra: dict[str, str], texts: list[str], clients: int) -> tuple[float, float, float, float, str]:
    """``(service ms, main thread ms, clients ms)`` of CPU per request, requests/s, and the ready line."""
    with tempfile.TemporaryDirectory() as d:
        port_file = Path(d) / "port"
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("MODBOT_")}, "PYTHONPATH": str(tree),
               "MODBOT_CACHE": str(Path(d) / "no-cache"), "MODBOT_TEST_BATCH_DELAY_S": "0", **env_extra}
        proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--port", "0", "--port-file", str(port_file),
                                 "--rate", "1000000", "--burst", "1000000", "--scorer", "tests.serve_scorers:fake"],
                                cwd=tree, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            url = asyncio.run(_ready(port_file))
            asyncio.run(_load(url, texts[:300], clients))  # warm: the language detector, connections
            cpu, main_cpu, client_cpu = process_cpu_s(proc.pid), process_cpu_s(proc.pid, proc.pid), time.process_time()
            rate = asyncio.run(_load(url, texts, clients))
            n = len(texts)
            figures = ((process_cpu_s(proc.pid) - cpu) / n * 1000, (process_cpu_s(proc.pid, proc.pid) - main_cpu) / n
                       * 1000, (time.process_time() - client_cpu) / n * 1000, rate)
        finally:
            proc.terminate()
            out, _ = proc.communicate(timeout=60)
        ready = next((line for line in out.splitlines() if "ready" in line), "")
        return (*figures, ready)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=3000)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--variant", action="append", default=[], metavar="NAME=VAR=VALUE",
                   help="a service environment to measure (repeatable); default: as is")
    p.add_argument("--also-tree", type=Path, action="append", default=[],
                   help="another checkout, measured as is, alternating (repeatable)")
    args = p.parse_args(argv)
    from bot.jobs.bench import load_chat

    texts = [m.text for m in load_chat(args.messages)]
    variants: list[tuple[str, Path, dict[str, str]]] = []
    for tree in args.also_tree:
        variants.append((f"[{tree}]", tree, {}))
    for item in args.variant or ["as-is="]:
        name, _, assignment = item.partition("=")
        var, _, value = assignment.partition("=")
        variants.append((name, REPO, {var: value} if var else {}))
    print(f"CPU: {cpu_name()}; {len(texts)} messages, {args.clients} clients, {args.rounds} rounds")
    seen: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name, _, _ in variants}
    for r in range(args.rounds):
        for name, tree, env in variants:
            *fig, ready = measure(tree, env, texts, args.clients)
            seen[name].append((fig[0], fig[1], fig[2], fig[3]))
            loop = ready.split("event loop ", 1)[1].split(",")[0] if "event loop " in ready else "asyncio (not named)"
            print(f"round {r + 1} {name} ({loop}): CPU per request: service {fig[0]:.3f} ms, its main thread "
                  f"{fig[1]:.3f} ms, clients {fig[2]:.3f} ms; {fig[3]:.0f} requests/s", flush=True)
    for name, figs in seen.items():
        med = [statistics.median(f[i] for f in figs) for i in range(4)]
        print(f"median {name}: service {med[0]:.3f} ms, main thread {med[1]:.3f} ms, clients {med[2]:.3f} ms; "
              f"{med[3]:.0f} requests/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
