"""Side-by-side benchmark: detoxify ``original``-architecture baseline vs our full pipeline, in one run.

Run: ``python -m bot bench [--messages N]`` (or the script ``bench/run.py``, which calls :func:`main`). Needs the
chat exports in ``$MODBOT_SHARED/data/chats`` (default ``../shared/data/chats`` next to the checkout). Prints
figures only; targets live in docs/performance.md, never in tests. Layer: composition root (a job): the pipeline
is built by :mod:`bot.runtime` and scores through :func:`bot.core.pieces.score_texts`, the bot's own scoring path.

Figures:
- baseline: ``detoxify.Detoxify.predict`` on batches of 64 with a BERT-base checkpoint (12 layers, hidden 768,
  12 heads, intermediate 3072, vocab 30522, 6 labels) built locally with random weights (speed does not depend on
  weight values; the embedded model's uncased tokenizer files are used);
- pipeline: normalise + rules + embedded model + policy + SQLite write at maximum throughput, and the ratio;
- latency arrival -> recorded verdict, p50 / p99, at offered loads of 50, 200 and 500 messages/s;
- the longest event-loop stall while scoring (a 1 ms ticker's worst lateness);
- peak resident memory of the pipeline process (measured before the baseline model is loaded);
- ``scan`` throughput on ``komodo-discord-dce-csv`` (a subprocess running the real CLI);
- a burst (``--burst``, default 2,000 messages offered at once, as a raid or a gateway resume delivers them) through
  the service with each message's handler awaiting a slot (``handle``), side by side with the bounded queue
  (``MODBOT_QUEUE_MAX``, default 1,024) and without a bound: event-loop latency of a 50 ms ping task standing in
  for interaction acks (p50 / p99 / max, and pings over Discord's 3 s), the largest number of messages held by the
  service and of handlers waiting for a slot, the process's resident memory at the start and its peak during the
  burst (``/proc/self/statm``), and the burst's duration. ``--only-burst`` runs just this section.

``python -m bot bench store [--pg-url URL]`` compares the store backends side by side in one run (no model, no
chat exports needed): ``record_batch`` throughput and p99 per batch / per message, SQLite vs PostgreSQL.
``python -m bot bench precision`` is the int8 paired check (:func:`precision_main`). ``bench --help`` lists both
commands in its usage and help (:func:`build_parser`).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHATS = Path(os.environ.get("MODBOT_SHARED", REPO.parent / "shared")) / "data" / "chats"


def load_chat(n: int) -> list:
    """``n`` real chat messages (JuliaLang Slack first, then Komodo Discord), in time order, non-empty text."""
    from bot.ingest import read_messages

    msgs = [m for m in read_messages([CHATS / "julialang-slack-export"]) if m.text.strip()]
    if len(msgs) < n:
        msgs += [m for m in read_messages([CHATS / "komodo-discord-dce-csv"]) if m.text.strip()][: n - len(msgs)]
    return msgs[:n]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class StallMonitor:
    """Measures the event loop's worst lateness with a 1 ms ticker (milliseconds)."""

    def __init__(self) -> None:
        self.worst_ms = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            self.worst_ms = max(self.worst_ms, (time.perf_counter() - t - 0.001) * 1000)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


def _fresh(messages: list, tag: str) -> list:
    """Copies with unique ids so each phase records new verdicts."""
    return [replace(m, id=f"{tag}-{i}") for i, m in enumerate(messages)]


async def bench_pipeline(messages: list, scorer, offered: list[int], seconds: float) -> dict:
    """Max throughput, stall, and latency at offered loads through the real service and a real SQLite file."""
    from bot.runtime import open_runtime
    from bot.settings import Settings

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        async with open_runtime(Settings.from_env(), scorer=scorer, enforce=False, server_files=False,
                                overrides=False, db_path=Path(tmp) / "bench.db", batch_size=256) as rt:
            service = rt.service
            # warm-up (model, caches, SQLite)
            warm = _fresh(messages[:256], "warm")
            await asyncio.gather(*(service.submit(m) for m in warm))
            service._cache.clear()  # noqa: SLF001 - measure scoring, not the text cache of the warm-up
            mon = StallMonitor()
            mon.start()
            batch = _fresh(messages, "max")
            t0 = time.perf_counter()
            futs = [service.submit(m) for m in batch]
            await asyncio.gather(*futs)
            dt = time.perf_counter() - t0
            await mon.stop()
            out["pipeline_msgs_per_s"] = len(batch) / dt
            out["stall_ms_max_throughput"] = mon.worst_ms
            out["distinct_texts_scored"] = service.stats["scored_texts"]
            for rate in offered:
                service._cache.clear()  # noqa: SLF001
                n = int(rate * seconds)
                src = _fresh((messages * (n // len(messages) + 1))[:n], f"load{rate}")
                base = datetime.now(UTC)
                mon = StallMonitor()
                mon.start()
                lat: list[float] = []
                start = time.perf_counter()

                def record(f: asyncio.Future, t_sub: float, lat: list[float] = lat) -> None:
                    lat.append((time.perf_counter() - t_sub) * 1000)

                futs = []
                for i, m in enumerate(src):
                    target = start + i / rate
                    delay = target - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    m = replace(m, created_at=base + timedelta(seconds=i / rate))
                    t_sub = time.perf_counter()
                    f = service.submit(m)
                    f.add_done_callback(functools.partial(record, t_sub=t_sub))
                    futs.append(f)
                await asyncio.gather(*futs)
                await mon.stop()
                lat.sort()
                out[f"latency_{rate}"] = {
                    "p50_ms": statistics.median(lat),
                    "p99_ms": lat[min(len(lat) - 1, int(0.99 * len(lat)))],
                    "achieved_msgs_per_s": len(src) / (time.perf_counter() - start),
                    "stall_ms": mon.worst_ms,
                }
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def rss_now_mb() -> float:
    """Resident set size of this process now, MiB (``/proc/self/statm``; 0 where it does not exist)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


#: Interval of the ping task that stands in for interaction acks (seconds).
PING_S = 0.05
#: Discord's deadline for the initial interaction response (seconds).
ACK_DEADLINE_S = 3.0


async def bench_burst(messages: list, scorer, n: int, bounds: list[int | None]) -> dict:
    """A burst of ``n`` messages through the service, once per queue bound in ``bounds`` (``None``: no bound), in
    one run; see the module docstring for the figures. Each message has its own handler task awaiting
    :meth:`ModerationService.handle`, as the adapters' listeners do."""
    from bot.runtime import open_runtime
    from bot.settings import Settings

    out: dict = {}
    src = (messages * (n // max(1, len(messages)) + 1))[:n]
    for bound in bounds:
        label = "unbounded" if bound is None else str(bound)
        with tempfile.TemporaryDirectory() as tmp:
            settings = replace(Settings.from_env(), queue_max=bound or 10**9)
            async with open_runtime(settings, scorer=scorer, enforce=False, server_files=False, overrides=False,
                                    db_path=Path(tmp) / "burst.db") as rt:
                warm = _fresh(messages[:64], f"warm{label}")
                await asyncio.gather(*(rt.service.handle(m) for m in warm))
                rt.service._cache.clear()  # noqa: SLF001 - measure scoring, not the text cache of the warm-up
                base = datetime.now(UTC)
                burst = [replace(m, id=f"burst{label}-{i}", created_at=base + timedelta(milliseconds=2 * i))
                         for i, m in enumerate(src)]
                out[f"burst_{label}"] = await _one_burst(rt.service, burst)
    return out


async def _one_burst(service, burst: list) -> dict:
    """Offer ``burst`` at once (one handler task per message) while a ping task samples the loop's lateness."""
    n = len(burst)
    rss0 = rss_now_mb()
    lateness: list[float] = []
    peak = {"held": 0, "waiting": 0, "rss": rss0}
    resolved = [0]

    async def ping() -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(PING_S)
            lateness.append(time.perf_counter() - t - PING_S)
            peak["held"] = max(peak["held"], service.pending)
            peak["waiting"] = max(peak["waiting"], n - resolved[0] - service.pending)
            peak["rss"] = max(peak["rss"], rss_now_mb())

    pinger = asyncio.create_task(ping())
    t0 = time.perf_counter()
    tasks = []
    for m in burst:
        task = asyncio.ensure_future(service.handle(m))
        task.add_done_callback(lambda _t: resolved.__setitem__(0, resolved[0] + 1))
        tasks.append(task)
    await asyncio.gather(*tasks)
    dt = time.perf_counter() - t0
    pinger.cancel()
    await asyncio.gather(pinger, return_exceptions=True)
    lateness.sort()

    def q(f: float) -> float:
        return lateness[min(len(lateness) - 1, int(f * len(lateness)))] * 1000 if lateness else 0.0

    return {
        "messages": n, "seconds": dt, "msgs_per_s": n / dt, "pings": len(lateness),
        "ping_p50_ms": q(0.5), "ping_p99_ms": q(0.99), "ping_max_ms": q(1.0),
        "pings_over_3s": sum(1 for x in lateness if x + PING_S > ACK_DEADLINE_S),
        "peak_held": peak["held"], "peak_waiting": peak["waiting"], "rss_start_mb": rss0,
        "rss_peak_mb": peak["rss"],
    }


def build_baseline(tmp: Path, config_src: Path) -> tuple[Path, Path]:
    """A detoxify checkpoint of the ``original`` architecture (BERT-base, 6 labels) with random weights."""
    import shutil

    import torch
    from transformers import BertConfig, BertForSequenceClassification

    labels = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    cfg_dir = tmp / "bert-base-random"
    cfg_dir.mkdir()
    cfg = BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, num_labels=6, id2label=dict(enumerate(labels)),
                     label2id={v: k for k, v in enumerate(labels)})
    cfg.save_pretrained(cfg_dir)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (config_src / name).exists():
            shutil.copy(config_src / name, cfg_dir / name)
    # detoxify's original model uses 512 tokens; keep the tokenizer's limit at 512 for the baseline
    tc = cfg_dir / "tokenizer_config.json"
    if tc.exists():
        d = json.loads(tc.read_text())
        d["model_max_length"] = 512
        tc.write_text(json.dumps(d))
    torch.manual_seed(0)
    model = BertForSequenceClassification(cfg)
    ckpt = tmp / "original-random.ckpt"
    torch.save({"config": {"arch": {"args": {"model_type": str(cfg_dir), "model_name": "BertForSequenceClassification",
                                             "tokenizer_name": "BertTokenizer", "num_classes": 6}},
                           "dataset": {"args": {"classes": labels}}},
                "state_dict": model.state_dict()}, ckpt)
    return ckpt, cfg_dir


def bench_baseline(messages: list, n: int) -> dict:
    """detoxify.Detoxify.predict on batches of 64, message order, as most detoxify users run it."""
    import torch
    from detoxify import Detoxify

    from bot.model import assemble

    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, cfg_dir = build_baseline(Path(tmp), assemble().config_dir)
        model = Detoxify(checkpoint=str(ckpt), huggingface_config_path=str(cfg_dir))
        texts = [m.text for m in messages[:n]]
        model.predict(texts[:8])
        t0 = time.perf_counter()
        for i in range(0, len(texts), 64):
            model.predict(texts[i : i + 64])
        dt = time.perf_counter() - t0
    return {"baseline_msgs_per_s": len(texts) / dt, "baseline_messages": len(texts)}


def bench_pieces(messages: list, scorer, n: int, chunk: int = 256) -> dict:
    """Scorer alone on the same ``n`` messages, side by side: whole text only vs the bot's whole text + sentences.

    Two rounds in alternating order; the faster time of each variant is kept (msg/s). Also the share of messages
    that have sentence pieces and how many pieces were scored besides the whole texts.
    """
    from bot.core.pieces import score_texts, scoring_pieces

    texts = [m.text for m in messages[:n]]
    best = {"whole": float("inf"), "pieces": float("inf")}
    for _ in range(2):
        for variant in ("whole", "pieces"):
            t0 = time.perf_counter()
            for s in range(0, len(texts), chunk):
                part = texts[s : s + chunk]
                score_texts(scorer, part, "whole" if variant == "whole" else "sentences")
            best[variant] = min(best[variant], time.perf_counter() - t0)
    plans = [scoring_pieces(t) for t in texts]
    return {
        "pieces_messages": len(texts),
        "whole_only_msgs_per_s": len(texts) / best["whole"],
        "with_pieces_msgs_per_s": len(texts) / best["pieces"],
        "share_with_pieces": sum(len(pl) > 1 for pl in plans) / max(1, len(plans)),
        "extra_pieces": sum(len(pl) - 1 for pl in plans),
    }


def bench_scan(db: Path) -> dict:
    """``python -m bot scan`` on the Komodo DCE CSV export (34,714 messages), as a subprocess."""
    src = CHATS / "komodo-discord-dce-csv"
    t0 = time.perf_counter()
    from bot.settings import Settings

    extra = ["--int8"] if Settings.from_env().int8 else []  # MODBOT_INT8=0 is off, as everywhere
    proc = subprocess.run([sys.executable, "-m", "bot", *extra, "scan", str(src), "--db", str(db), "--no-progress"],
                          cwd=REPO, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    from bot.ingest import read_messages

    n = len(read_messages([src]))
    return {"scan_seconds": dt, "scan_rc": proc.returncode, "scan_tail": proc.stderr[-1500:], "scan_messages": n}


def _store_records(n: int, tag: str) -> list:
    """``n`` verdict records shaped like a busy server's: every 10th flagged with a case, a review item and a
    strike, every 500th raising a raid; 50 members, 5 channels (no model: the store's write path only)."""
    from bot.core.models import (
        LABELS,
        Action,
        ActionKind,
        ChannelRef,
        MemberRef,
        Message,
        RaidAlert,
        Scores,
        ServerRef,
        Strike,
        Verdict,
    )
    from bot.core.ports import VerdictRecord

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        at = t0 + timedelta(seconds=i)
        msg = Message(server=ServerRef("discord", "bench"), channel=ChannelRef(f"c{i % 5}", name="general"),
                      author=MemberRef(f"u{i % 50}"), id=f"{tag}-{i}", text=f"message {i}", created_at=at)
        flagged = i % 10 == 0
        scores = Scores({lab: (0.9 if flagged and lab == "insult" else 0.01) for lab in LABELS}, model="bench")
        verdict = Verdict(message=msg, scores=scores, labels=("insult",) if flagged else (), flagged=flagged,
                          action=ActionKind.DELETE if flagged else ActionKind.NONE,
                          actions=(Action(ActionKind.DELETE, reason="insult"),) if flagged else (),
                          strike_points=1 if flagged else 0, policy_version="bench", latency_ms=1.0)
        strike = Strike("bench", msg.author.id, 1, at, at + timedelta(days=30), "auto") if flagged else None
        raid = (RaidAlert("bench", msg.channel.id, at, (msg.author.id,), 10, "flagged_burst")
                if i % 500 == 499 else None)
        out.append(VerdictRecord(verdict=verdict, excerpt=msg.text, open_case=flagged, open_review=flagged,
                                 strike=strike, raid=raid))
    return out


async def bench_store(database: str, n: int, batch: int) -> dict:
    """``record_batch`` of ``n`` records in batches of ``batch`` into ``database`` (a fresh SQLite file or an
    empty PostgreSQL database): messages/s, and p50/p99 milliseconds per batch and per message."""
    from bot.store import open_store

    records = _store_records(n, "store")
    store = await open_store(database)
    try:
        await store.record_batch(_store_records(batch, "warm"))
        times: list[float] = []
        t_all = time.perf_counter()
        for i in range(0, n, batch):
            t = time.perf_counter()
            await store.record_batch(records[i:i + batch])
            times.append(time.perf_counter() - t)
        total = time.perf_counter() - t_all
    finally:
        await store.close()
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return {"backend": store.backend, "location": store.location, "messages": n, "batch": batch,
            "msgs_per_s": n / total, "batch_p50_ms": statistics.median(times) * 1000, "batch_p99_ms": p99 * 1000,
            "per_message_p99_ms": p99 * 1000 / batch}


#: ``bench store`` in a line: the top of its ``--help`` and its row in ``bench --help``'s commands.
STORE_HELP = "the store's write path (record_batch throughput and p99), SQLite and PostgreSQL side by side; no model"


def _store_arguments(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``bench store``'s options to ``ap`` (its own parser, or its entry in ``bench --help``); returns ``ap``."""
    ap.add_argument("--messages", type=int, default=20000, help="records written (default 20000)")
    ap.add_argument("--batch", type=int, default=128, help="records per record_batch (the service's batch)")
    ap.add_argument("--pg-url", default=os.environ.get("MODBOT_BENCH_PG"),
                    help="an EMPTY PostgreSQL database (default $MODBOT_BENCH_PG); without it only SQLite runs")
    return ap


def store_main(argv: list[str]) -> int:
    """``python -m bot bench store [--pg-url URL]``: the store's write path, SQLite and PostgreSQL side by side."""
    ap = _store_arguments(argparse.ArgumentParser(prog="python -m bot bench store", description=_sentence(STORE_HELP)))
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(asyncio.run(bench_store(str(Path(tmp) / "bench.db"), args.messages, args.batch)))
    if args.pg_url:
        rows.append(asyncio.run(bench_store(args.pg_url, args.messages, args.batch)))
    print(f"\n== store write path: {args.messages} records, batches of {args.batch}, {os.cpu_count()} CPUs ==")
    print(f"{'backend':<11} {'msg/s':>9} {'batch p50 ms':>13} {'batch p99 ms':>13} {'per-msg p99 ms':>15}")
    for r in rows:
        print(f"{r['backend']:<11} {r['msgs_per_s']:9.0f} {r['batch_p50_ms']:13.1f} {r['batch_p99_ms']:13.1f} "
              f"{r['per_message_p99_ms']:15.3f}")
    if len(rows) == 2:
        print(f"postgresql / sqlite throughput: {rows[1]['msgs_per_s'] / rows[0]['msgs_per_s']:.2f}")
    else:
        print("postgresql: not run (give --pg-url or MODBOT_BENCH_PG: an empty database)")
    return 0


HATECHECK_DEV = CHATS.parent / "hatecheck" / "hatecheck_dev_70pct.csv"


#: ``bench precision`` in a line: the top of its ``--help`` and its row in ``bench --help``'s commands.
PRECISION_HELP = ("the embedded model's int8 variant against fp32 on ONNX Runtime: the paired verdict check on real "
                  "chat and HateCheck (recorded in ONNX.json for MODBOT_PRECISION=auto) and both throughputs")


def _precision_arguments(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``bench precision``'s options to ``ap`` (its own parser, or its entry in ``bench --help``); returns
    ``ap``."""
    from bot.scoring.precision import INT8_RECIPE, INT8_RECIPES  # the standard library only: no ONNX Runtime

    ap.add_argument("--recipe", choices=tuple(INT8_RECIPES), default=INT8_RECIPE,
                    help=f"which MatMuls get int8 weights (default {INT8_RECIPE}, the one int8 means; another "
                         "recipe is checked and timed but never recorded)")
    ap.add_argument("--messages", type=int, default=3000, help="real chat messages in the check (default 3000)")
    ap.add_argument("--hatecheck", type=Path, default=HATECHECK_DEV, help="HateCheck CSV (default the dev split)")
    ap.add_argument("--speed-messages", type=int, default=1000, help="chat messages for the throughput rows")
    ap.add_argument("--no-record", action="store_true", help="do not record the check in ONNX.json")
    return ap


#: The benchmark's commands (``python -m bot bench COMMAND ...``): their one-line help and their options.
COMMANDS = {"store": (STORE_HELP, _store_arguments), "precision": (PRECISION_HELP, _precision_arguments)}


def _sentence(text: str) -> str:
    """``text`` as a description: capitalised, with a full stop."""
    return text[:1].upper() + text[1:] + "."


def precision_main(argv: list[str]) -> int:
    """``python -m bot bench precision``: the embedded model's int8 variant against fp32 on ONNX Runtime, side by
    side: the paired verdict check (:func:`bot.scoring.precision.paired_check`) on real chat and HateCheck's dev
    split under the default policy, and in-process throughput of both; the check is recorded in the export's
    ``ONNX.json`` (``--no-record``: not), where ``MODBOT_PRECISION=auto`` reads it at start."""
    import csv

    from bot.core.pieces import score_texts
    from bot.core.policy import load_policy
    from bot.model.artifact import MODEL_NAME, assemble
    from bot.scoring.onnx_scorer import OnnxScorer, _identity, _sha256, load_embedded, onnx_dir
    from bot.scoring.precision import (
        INT8_RECIPE,
        cpu_flags,
        cpu_kind,
        int8_nodes,
        not_offered,
        paired_check,
        quantize_int8,
        record,
    )
    from bot.settings import Settings

    ap = _precision_arguments(argparse.ArgumentParser(prog="python -m bot bench precision",
                                                      description=_sentence(PRECISION_HELP)))
    args = ap.parse_args(argv)
    if not CHATS.exists() or not args.hatecheck.is_file():
        print(f"bench precision needs the chat exports at {CHATS} and {args.hatecheck}", file=sys.stderr)
        return 2
    flags = cpu_flags()
    print(f"CPU: {cpu_kind(flags) or 'no relevant flags'}; {os.cpu_count()} CPUs")
    why = not_offered("int8", flags)
    if why is not None:
        print(f"int8: not offered here ({why}); the check runs anyway, its record is for this CPU kind only")
    fp32 = load_embedded(precision="fp32")
    built = assemble()
    onnx_dir_ = onnx_dir(built.checkpoint)
    model = onnx_dir_ / "model.onnx"
    t0 = time.perf_counter()
    int8_path = quantize_int8(model, args.recipe)
    print(f"int8 model, recipe {args.recipe} ({len(int8_nodes(model, args.recipe))} MatMuls): {int8_path} "
          f"({int8_path.stat().st_size / 2**20:.0f} MiB, fp32 "
          f"{model.stat().st_size / 2**20:.0f} MiB; built or found in {time.perf_counter() - t0:.1f} s)")
    int8 = OnnxScorer(int8_path, built.config_dir, name=MODEL_NAME, version=f"{fp32.version}+int8",
                      labels=fp32._model_labels)  # noqa: SLF001
    chat = [m.text for m in load_chat(args.messages)]
    with args.hatecheck.open(encoding="utf-8", newline="") as f:
        hate = [row["test_case"] for row in csv.DictReader(f)]
    policy = load_policy(Settings.from_env().default_policy)
    rows = []
    for name, texts in (("real chat", chat), ("HateCheck dev", hate)):
        c = paired_check(fp32, int8, texts, policy, precision="int8")
        rows.append(c)
        print(f"{name:>13}: {c.summary()}; flags fp32 {c.flagged_reference}, int8 {c.flagged_candidate}")
    both = rows[0].merge(rows[1])
    sha = _sha256(int8_path)
    both = replace(both, candidate_sha256=sha, cpu=cpu_kind(flags))
    print(f"{'together':>13}: {both.summary()} -> {'PASSED' if both.passed else 'REFUSED (fp32 stays the default)'}")
    speed_texts = chat[: args.speed_messages]
    for per_call in (128, 16):  # 16: what 16 clients of the service give one pass at most
        best = {"fp32": float("inf"), "int8": float("inf")}
        for _ in range(2):
            for name, scorer in (("fp32", fp32), ("int8", int8)):
                t = time.perf_counter()
                for i in range(0, len(speed_texts), per_call):
                    score_texts(scorer, speed_texts[i : i + per_call])
                best[name] = min(best[name], time.perf_counter() - t)
        rate = {k: len(speed_texts) / v for k, v in best.items()}
        print(f"in-process throughput, {len(speed_texts)} chat messages, {per_call} per call (best of 2, "
              f"alternating): fp32 {rate['fp32']:.0f} msg/s, int8 {rate['int8']:.0f} msg/s "
              f"({rate['int8'] / rate['fp32']:.2f}x)")
    if args.recipe != INT8_RECIPE:
        print(f"not recorded: recipe {args.recipe} is not the one int8 means ({INT8_RECIPE})")
    elif not args.no_record:
        record(onnx_dir_ / "ONNX.json", both, candidate_identity=_identity(int8_path))
        print(f"recorded in {onnx_dir_ / 'ONNX.json'}: MODBOT_PRECISION=auto "
              f"{'uses int8 on this CPU kind' if both.passed and why is None else 'keeps fp32'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m bot bench``: the pipeline benchmark's options, and in its usage and help the
    commands of :data:`COMMANDS` (``bench store ...``, ``bench precision ...``), each usage line from the
    command's own parser. :func:`main` hands a command's arguments to that command's own parser."""
    ap = argparse.ArgumentParser(
        prog="python -m bot bench",
        description="Throughput and latency of the moderation pipeline on real chat ($MODBOT_SHARED/data/chats), side "
                    "by side with detoxify 'original' batching on its own; 'bench store' and 'bench precision' are "
                    "the store's write path and the int8 paired check.")
    ap.add_argument("--messages", type=int, default=3000, help="messages for the max-throughput run")
    ap.add_argument("--baseline-messages", type=int, default=640,
                    help="messages scored by the detoxify 'original' baseline (the ratio's denominator)")
    ap.add_argument("--seconds", type=float, default=8.0, help="seconds per offered-load run")
    ap.add_argument("--loads", default="50,200,500",
                    help="offered loads in messages per second, comma-separated (one latency run each)")
    ap.add_argument("--no-scan", action="store_true", help="skip the scan section (a replay into a temporary mod log)")
    ap.add_argument("--pieces-messages", type=int, default=1000,
                    help="messages for the whole-text vs sentence-pieces comparison (0: skip)")
    ap.add_argument("--bf16", action="store_true", help="embedded model under bf16 autocast")
    ap.add_argument("--int8", action="store_true", help="embedded model with int8 dynamic quantisation (torch)")
    ap.add_argument("--precision", choices=("auto", "fp32", "int8"), default=None,
                    help="precision on ONNX Runtime (default $MODBOT_PRECISION or auto; see bench precision)")
    ap.add_argument("--burst", type=int, default=2000, help="messages in the burst section (0: skip)")
    ap.add_argument("--burst-bounds", default="default,unbounded",
                    help="queue bounds compared in the burst section: numbers, 'default' (MODBOT_QUEUE_MAX), "
                    "'unbounded'")
    ap.add_argument("--only-burst", action="store_true", help="run only the burst section")
    ap.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    forms = [ap.format_usage()]
    sub = ap.add_subparsers(dest="bench_command", title="commands", metavar="COMMAND",
                            description="python -m bot bench COMMAND --help for a command's options; without one, "
                                        "the pipeline benchmark runs")
    for name, (text, add_arguments) in COMMANDS.items():
        parser = add_arguments(sub.add_parser(name, help=text, description=_sentence(text),
                                              prog=f"python -m bot bench {name}"))
        forms.append(parser.format_usage())
    # one usage line per form, each as its own parser writes it (continuation lines already indented to match)
    ap.usage = "\n       ".join(f.removeprefix("usage: ").rstrip("\n") for f in forms).replace("%", "%%")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run every figure and print a table (and ``--json`` for machines); ``bench store ...``: :func:`store_main`;
    ``bench precision ...``: :func:`precision_main`."""
    if argv and argv[0] == "store":
        return store_main(argv[1:])
    if argv and argv[0] == "precision":
        return precision_main(argv[1:])
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.bench_command is not None:  # ``bench --json x store``: the command's own options would be lost
        ap.error(f"write the command first: python -m bot bench {args.bench_command} [its options]")
    if not CHATS.exists():
        print(f"bench needs the chat exports at {CHATS} (set MODBOT_SHARED to the folder that holds data/chats)",
              file=sys.stderr)
        return 2
    from bot.runtime import load_scorer
    from bot.settings import Settings

    messages = load_chat(args.messages)
    print(f"{len(messages)} chat messages loaded; rss {peak_rss_mb():.0f} MiB")
    scorer = load_scorer(Settings(model="embedded", bf16=args.bf16, int8=args.int8,
                                  precision=args.precision or Settings.from_env().precision))
    res: dict = {"messages": len(messages), "bf16": args.bf16, "scorer": f"{scorer.name} {scorer.version}",
                 "runtime": str(getattr(scorer, "runtime", "torch")),
                 "precision": str(getattr(scorer, "precision", "fp32")),
                 "precision_reason": str(getattr(scorer, "precision_reason", ""))}
    if args.burst:
        bounds: list[int | None] = []
        for b in args.burst_bounds.split(","):
            b = b.strip()
            bounds.append(None if b == "unbounded" else Settings.from_env().queue_max if b == "default" else int(b))
        res.update(asyncio.run(bench_burst(messages, scorer, args.burst, bounds)))
    if args.only_burst:
        _print_burst(res)
        if args.json:
            args.json.write_text(json.dumps(res, indent=2))
        return 0
    res.update(asyncio.run(bench_pipeline(messages, scorer, [int(x) for x in args.loads.split(",")], args.seconds)))
    res.update(bench_baseline(messages, args.baseline_messages))
    if args.pieces_messages:
        res.update(bench_pieces(messages, scorer, args.pieces_messages))
    res["ratio_pipeline_over_baseline"] = res["pipeline_msgs_per_s"] / res["baseline_msgs_per_s"]
    if not args.no_scan:
        if args.int8:
            os.environ["MODBOT_INT8"] = "1"
        with tempfile.TemporaryDirectory() as tmp:
            res.update(bench_scan(Path(tmp) / "scan.db"))
        res["scan_msgs_per_s"] = res["scan_messages"] / res["scan_seconds"]
    _print(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


def _print(r: dict) -> None:
    print("\n== benchmark (2 cores) ==")
    print(f"scorer: {r['scorer']}  runtime {r.get('runtime')}  precision {r.get('precision')}  bf16={r['bf16']}"
          + (f"\n  precision: {r['precision_reason']}" if r.get("precision_reason") else ""))
    print(f"baseline detoxify original-arch, batch 64:  {r['baseline_msgs_per_s']:8.1f} msg/s")
    print(f"pipeline end to end (max throughput):       {r['pipeline_msgs_per_s']:8.1f} msg/s")
    print(f"ratio pipeline / baseline:                  {r['ratio_pipeline_over_baseline']:8.1f} x")
    print(f"event-loop stall at max throughput:         {r['stall_ms_max_throughput']:8.1f} ms")
    for k, v in r.items():
        if k.startswith("latency_"):
            print(f"offered {k[8:]:>4} msg/s: p50 {v['p50_ms']:7.1f} ms  p99 {v['p99_ms']:7.1f} ms  "
                  f"achieved {v['achieved_msgs_per_s']:6.1f} msg/s  stall {v['stall_ms']:5.1f} ms")
    if "pieces_messages" in r:
        print(f"scorer alone, whole text only:              {r['whole_only_msgs_per_s']:8.1f} msg/s")
        print(f"scorer alone, whole text + sentences:       {r['with_pieces_msgs_per_s']:8.1f} msg/s "
              f"({r['share_with_pieces'] * 100:.0f}% of {r['pieces_messages']} messages have sentences; "
              f"{r['extra_pieces']} extra pieces; ratio {r['with_pieces_msgs_per_s'] / r['whole_only_msgs_per_s']:.2f})")
    print(f"peak RSS of the pipeline process:           {r['peak_rss_mb']:8.0f} MiB")
    _print_burst(r)
    if "scan_seconds" in r:
        print(f"scan komodo-discord-dce-csv ({r['scan_messages']:,} msgs):  {r['scan_seconds']:8.1f} s = {r['scan_msgs_per_s']:.0f} "
              f"msg/s (rc {r['scan_rc']})")


def _print_burst(r: dict) -> None:
    for k, v in r.items():
        if k.startswith("burst_"):
            print(f"burst of {v['messages']:,}, queue bound {k[6:]:>9}: {v['seconds']:6.1f} s ({v['msgs_per_s']:5.1f} "
                  f"msg/s); ping p50 {v['ping_p50_ms']:6.1f} ms p99 {v['ping_p99_ms']:6.1f} ms max "
                  f"{v['ping_max_ms']:6.1f} ms, {v['pings_over_3s']} of {v['pings']} over 3 s; held <= "
                  f"{v['peak_held']:,}, waiting <= {v['peak_waiting']:,}; RSS {v['rss_start_mb']:.0f} -> "
                  f"{v['rss_peak_mb']:.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
