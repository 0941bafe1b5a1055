"""Scoring as a service, side by side in one run: ONNX Runtime against torch (detoxify), in process and through
``python -m bot serve``. Prints figures only (targets: issue 27 and docs/perspective-migration.md, never tests).

Run: ``MODBOT_SHARED=/work/shared python bench/serve.py [--messages 2000] [--seconds 15]``.

Figures, on real chat (JuliaLang Slack, then Komodo Discord: :func:`bot.jobs.bench.load_chat`):

1. equality: largest score difference ONNX vs torch over the model inputs of ``--messages`` messages (the bot's
   plans: whole text, sentence pieces, token windows), and flags that change at the default policy's review and
   act tiers;
2. in-process throughput (messages/s through :func:`bot.core.pieces.score_texts`, chunks of 128 messages) per
   runtime, and its CPU time per message (all threads of the process);
3. start-up: seconds from spawning ``python -m bot serve`` to its first ``comments:analyze`` answer, and from
   spawning ``python -m bot score`` to its first output line, per runtime (warm cache: the export exists);
4. peak RSS (VmHWM) of the serving process after the load test, per runtime;
5. throughput through the service with 16 concurrent clients (one ``comments:analyze`` per message) against the
   in-process figure of the same runtime, and the CPU time per message of the service process and of the
   load-generating clients (this process: they share the machine's cores with the service), and of the service's
   main thread alone (its event loop: HTTP, JSON, the language check; the model runs in other threads); on a machine shared
   with other jobs the CPU times move much less with the load than the rates do;
6. latency p50/p99 at 50% of that throughput (open loop, fixed arrival interval);
7. peak RSS (VmHWM; ``ru_maxrss`` would keep the forking parent's high-water mark across ``exec``) of a bot
   process (``bot.runtime.Runtime`` with ``MODBOT_SCORER_URL``) judging 500 messages through the service.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

ANALYZE = "/v1alpha1/comments:analyze"


def cpu_name() -> str:
    """The CPU's model name and its vector extensions that matter here."""
    name, flags = platform.processor() or "?", ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                have = set(line.split(":", 1)[1].split())
                flags = " ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16") if f in have)
                break
    except OSError:
        pass
    return f"{name} ({os.cpu_count()} cores; {flags})"


def equality(texts: list[str]) -> None:
    from bot.core.pieces import scoring_pieces
    from bot.core.policy import load_policy
    from bot.runtime import load_scorer
    from bot.settings import Settings

    torch_s = load_scorer(Settings(runtime="torch"))
    onnx_s = load_scorer(Settings(runtime="onnx"))
    pieces = list(dict.fromkeys(p for t in texts for p in scoring_pieces(t) if p.strip()))
    inputs = sum(len(onnx_s.windows(p)) for p in pieces)
    a, b = torch_s.score_batch(pieces), onnx_s.score_batch(pieces)
    diff = max(abs(x.values[k] - y.values[k]) for x, y in zip(a, b, strict=True) for k in x.values)
    from bot.core.pieces import score_texts

    ta, tb = score_texts(torch_s, texts), score_texts(onnx_s, texts)
    policy = load_policy(Path(REPO / "bot" / "config" / "default.toml"))
    changed = {"review": 0, "act": 0}
    flagged = {"review": 0, "act": 0}
    for x, y in zip(ta, tb, strict=True):
        if x is None or y is None:
            continue
        for label, tier in policy.thresholds.items():
            for kind in ("review", "act"):
                t = getattr(tier, kind)
                if t is None or label not in x.values:
                    continue
                fx, fy = x.values[label] >= t, y.values[label] >= t
                flagged[kind] += fx
                changed[kind] += fx != fy
    print(f"equality: {len(texts)} messages, {len(pieces)} distinct pieces, {inputs} model inputs: max |onnx - torch|"
          f" = {diff:.2g}; (message, label) flags at the review tier {flagged['review']}, changed "
          f"{changed['review']}; at the act tier {flagged['act']}, changed {changed['act']}")


def in_process(texts: list[str], runtime: str) -> float:
    from bot.core.pieces import score_texts
    from bot.runtime import load_scorer
    from bot.settings import Settings

    scorer = load_scorer(Settings(runtime=runtime, precision=Settings.from_env().precision))  # as the service's
    score_texts(scorer, texts[:64])  # warm
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), 128):
        score_texts(scorer, texts[i : i + 128])
    rate = len(texts) / (time.perf_counter() - started)
    cpu_ms = (time.process_time() - cpu) / len(texts) * 1000
    print(f"in-process {runtime} ({getattr(scorer, 'precision', 'fp32')}): {rate:.0f} messages/s over {len(texts)} "
          f"messages, CPU {cpu_ms:.1f} ms per message")
    return rate


def process_cpu_s(pid: int, thread: int | None = None) -> float:
    """User + system CPU seconds of process ``pid`` so far, all its threads (``/proc/PID/stat``), or of its thread
    ``thread`` alone (``/proc/PID/task/TID/stat``; the main thread's id is ``pid``)."""
    path = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SERVE_ARGS: list[str] = []
WORST = [0]
SERVE_ENV: dict[str, str] = {}


def _spawn_service(runtime: str, port_file: Path, tree: Path = REPO) -> tuple[subprocess.Popen[str], float]:
    env = {**os.environ, "MODBOT_RUNTIME": runtime, "PYTHONPATH": str(tree), **(SERVE_ENV if tree == REPO else {})}
    env.pop("MODBOT_SCORER_URL", None)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--port", "0", "--port-file", str(port_file),
                             "--rate", "100000", "--burst", "100000", *(SERVE_ARGS if tree == REPO else [])],
                            cwd=tree, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, started


async def _first_answer(port_file: Path, started: float) -> tuple[str, float]:
    import aiohttp

    while not port_file.exists():
        await asyncio.sleep(0.005)
    url = f"http://127.0.0.1:{port_file.read_text()}"
    body = {"comment": {"text": "you are an idiot"}, "requestedAttributes": {"TOXICITY": {}}}
    async with aiohttp.ClientSession() as s:
        while True:
            try:
                async with s.post(url + ANALYZE, json=body) as r:
                    if r.status == 200:
                        return url, time.perf_counter() - started
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.005)


def score_startup(runtime: str) -> float:
    env = {**os.environ, "MODBOT_RUNTIME": runtime, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "bot", "score"], cwd=REPO, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write('{"id": 1, "text": "you are an idiot"}\n')
    proc.stdin.close()
    proc.stdout.readline()
    elapsed = time.perf_counter() - started
    proc.wait()
    return elapsed


async def _precision(url: str) -> str:
    """The precision the service reports running in, and why (``/v1/model``)."""
    import aiohttp

    async with aiohttp.ClientSession() as s, s.get(url + "/v1/model") as r:
        info = await r.json()
    return f"precision {info.get('precision')} ({info.get('precision_reason')})"


async def load_test(url: str, texts: list[str], clients: int) -> float:
    import aiohttp

    queue = list(texts)

    async def client(s: aiohttp.ClientSession) -> None:
        while queue:
            text = queue.pop()
            body = {"comment": {"text": text[:4000] or "."}, "requestedAttributes": {"TOXICITY": {}},
                    "allowUnsupportedLanguages": True}
            async with s.post(url + ANALYZE, json=body) as r:
                await r.read()

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as s:
        started = time.perf_counter()
        await asyncio.gather(*(client(s) for _ in range(clients)))
        return len(texts) / (time.perf_counter() - started)


#: ``(latency s, request number, characters sent)`` of the last :func:`latency_at` run (``--worst`` prints some).
LAST_LATENCIES: list[tuple[float, int, int]] = []


async def latency_at(url: str, texts: list[str], rate: float, seconds: float) -> tuple[float, float, int]:
    """Open-loop arrivals at ``rate`` per second for ``seconds`` (at least 20 requests), the chat in order: p50 and
    p99 latency in milliseconds, and the number of requests. Each request's latency is kept in
    :data:`LAST_LATENCIES`."""
    import aiohttp

    n = max(20, int(rate * seconds))
    lat: list[float] = []
    LAST_LATENCIES.clear()

    async def one(s: aiohttp.ClientSession, text: str, k: int) -> None:
        t0 = time.perf_counter()
        body = {"comment": {"text": text[:4000] or "."}, "requestedAttributes": {"TOXICITY": {}},
                "allowUnsupportedLanguages": True}
        async with s.post(url + ANALYZE, json=body) as r:
            await r.read()
        lat.append(time.perf_counter() - t0)
        LAST_LATENCIES.append((lat[-1], k, len(text[:4000] or ".")))

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
        tasks = []
        start = time.perf_counter()
        for i in range(n):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(s, texts[i % len(texts)], i)))
        await asyncio.gather(*tasks)
    lat.sort()
    return statistics.median(lat) * 1000, lat[int(0.99 * (len(lat) - 1))] * 1000, n


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bot_process_rss(url: str, n: int) -> tuple[float, float]:
    code = (
        "import asyncio, json, sys, tempfile, time\n"
        "from pathlib import Path\n"
        "from bot.jobs.bench import load_chat\n"
        "from bot.runtime import Runtime\n"
        "from bot.settings import Settings\n"
        f"async def main():\n"
        f"    msgs = load_chat({n})\n"
        "    with tempfile.TemporaryDirectory() as d:\n"
        f"        rt = await Runtime.open(Settings(db_path=Path(d) / 'm.db', scorer_url={url!r}), enforce=False)\n"
        "        t = time.perf_counter()\n"
        "        outs = await asyncio.gather(*(rt.service.submit(m) for m in msgs))\n"
        "        rate = len(outs) / (time.perf_counter() - t)\n"
        "        await rt.close()\n"
        "    hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0].split()[1]\n"
        "    print(json.dumps({'rss': int(hwm) / 1024, 'rate': rate,\n"
        "                      'torch': 'torch' in sys.modules}))\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["torch"] is False, "the bot process imported torch"
    return doc["rss"], doc["rate"]


def service_figures(runtime: str, texts: list[str], rate_in_process: float, seconds: float, bot: bool,
                    tree: Path = REPO) -> None:
    label = runtime if tree == REPO else f"{runtime} [{tree}]"
    with tempfile.TemporaryDirectory() as d:
        port_file = Path(d) / "port"
        proc, started = _spawn_service(runtime, port_file, tree)
        try:
            url, first = asyncio.run(_first_answer(port_file, started))
            print(f"serve {label}: first answer {first:.2f} s after spawn; {asyncio.run(_precision(url))}")
            asyncio.run(load_test(url, texts[:200], 16))  # warm
            server_cpu, client_cpu = process_cpu_s(proc.pid), time.process_time()
            loop_cpu = process_cpu_s(proc.pid, proc.pid)
            rate = asyncio.run(load_test(url, texts, 16))
            server_ms = (process_cpu_s(proc.pid) - server_cpu) / len(texts) * 1000
            loop_ms = (process_cpu_s(proc.pid, proc.pid) - loop_cpu) / len(texts) * 1000
            client_ms = (time.process_time() - client_cpu) / len(texts) * 1000
            print(f"serve {label}: 16 clients {rate:.0f} messages/s = {rate / rate_in_process:.0%} of in-process "
                  f"({rate_in_process:.0f}); CPU per message: service {server_ms:.1f} ms (its event loop's thread "
                  f"{loop_ms:.2f} ms), the 16 clients {client_ms:.2f} ms")
            p50, p99, n = asyncio.run(latency_at(url, texts, rate / 2, seconds))
            print(f"serve {label}: at 50% load ({rate / 2:.0f}/s, {n} requests) latency p50 {p50:.0f} ms, "
                  f"p99 {p99:.0f} ms")
            if WORST[0]:
                worst = sorted(LAST_LATENCIES, reverse=True)[: WORST[0]]
                print(f"serve {label}: slowest requests (number: characters, ms): "
                      + ", ".join(f"{k}: {c}, {t * 1000:.0f}" for t, k, c in worst))
            print(f"serve {label}: peak RSS {vm_hwm_mb(proc.pid):.0f} MiB")
            if bot:
                rss, bot_rate = bot_process_rss(url, 500)
                print(f"bot process with MODBOT_SCORER_URL: peak RSS {rss:.0f} MiB, {bot_rate:.0f} messages/s "
                      "(500 messages, no torch import)")
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=2000)
    p.add_argument("--seconds", type=float, default=15.0, help="duration of the 50%% load latency run")
    p.add_argument("--runtimes", default="onnx,torch")
    p.add_argument("--also-tree", type=Path, default=None,
                   help="another checkout (e.g. an older commit: git archive REV | tar -x -C DIR) whose service is "
                        "measured too, alternating with this one, in the same run")
    p.add_argument("--rounds", type=int, default=1, help="service measurements per tree (alternating)")
    p.add_argument("--skip-score-startup", action="store_true")
    p.add_argument("--in-process-each", action="store_true",
                   help="measure the in-process figure again right before each service measurement, so each share "
                        "of in-process throughput compares figures taken minutes apart at most (a shared machine's "
                        "load moves within a run)")
    p.add_argument("--serve-args", default="", help="more options for this checkout's service, e.g. "
                   "'--batch-wait-ms 2'")
    p.add_argument("--serve-env", action="append", default=[], metavar="NAME=VALUE",
                   help="an environment variable for this checkout's service only (repeatable)")
    p.add_argument("--worst", type=int, default=0,
                   help="print this many of the latency run's slowest requests (number, characters, ms)")
    args = p.parse_args(argv)
    WORST[0] = args.worst
    SERVE_ARGS[:] = args.serve_args.split()
    SERVE_ENV.update(item.split("=", 1) for item in args.serve_env)
    from bot.jobs.bench import load_chat

    texts = [m.text for m in load_chat(args.messages)]
    print(f"CPU: {cpu_name()}; python {platform.python_version()}")
    runtimes = [r for r in args.runtimes.split(",") if r]
    if {"onnx", "torch"} <= set(runtimes):
        equality(texts)
    rates = {r: in_process(texts, r) for r in runtimes}
    if not args.skip_score_startup:
        for r in runtimes:
            print(f"score {r}: first output line {score_startup(r):.2f} s after spawn")
    measured: dict[str, bool] = {}
    for n in range(args.rounds):
        for r in runtimes:
            for tree in ([args.also_tree] if args.also_tree else []) + [REPO]:
                if args.in_process_each and measured.get(r):  # the first one follows the figure above
                    rates[r] = in_process(texts, r)
                measured[r] = True
                service_figures(r, texts, rates[r], args.seconds, bot=r == runtimes[0] and n == 0 and tree == REPO,
                                tree=tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
