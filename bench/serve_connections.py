"""Many idle connections to ``python -m bot serve`` from many loopback addresses (127.0.0.2, 127.0.0.3, ...): how
many are held, the service's open file descriptors and RSS, and whether a client on a fresh connection is still
answered, and how. Uses the test suite's fake scorer (no model), so it measures the connection handling only.
Linux only (reads ``/proc``; every 127/8 address is local there). Prints figures only.

Run: ``python bench/serve_connections.py [--addresses 40] [--per-address 60] [--service-nofile 1024]
[-- SERVE OPTIONS...]``, e.g.
``-- --max-connections 0`` for the service without its total cap.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Start the service, open the connections, print the figures; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--addresses", type=int, default=40)
    p.add_argument("--per-address", type=int, default=60)
    p.add_argument("--service-nofile", type=int, default=1024,
                   help="the service's open-file limit (default 1024, systemd's default soft limit)")
    p.add_argument("serve_args", nargs="*", help="options for python -m bot serve (after --)")
    args = p.parse_args()
    need = args.addresses * args.per_address + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, need), hard), hard))
    port_file = Path(f"/tmp/serve-connections-{os.getpid()}.port")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MODBOT_")}, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--port", "0", "--port-file", str(port_file),
                             "--scorer", "tests.serve_scorers:fake", *args.serve_args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                                  (args.service_nofile, args.service_nofile)))
    socks: list[socket.socket] = []
    try:
        while not port_file.exists():
            time.sleep(0.05)
        time.sleep(1.0)  # the fake model loads
        port = int(port_file.read_text(encoding="utf-8"))
        limit = int(next(line.split()[3] for line in Path(f"/proc/{proc.pid}/limits").read_text().splitlines()
                         if line.startswith("Max open files")))
        started = time.monotonic()
        failed = 0
        for a in range(2, 2 + args.addresses):
            for _ in range(args.per_address):
                s = socket.socket()
                try:
                    s.bind((f"127.0.0.{a}", 0))
                    s.connect(("127.0.0.1", port))
                    socks.append(s)
                except OSError:
                    failed += 1
                    s.close()
        opened = time.monotonic() - started
        time.sleep(0.5)
        fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        rss = int(Path(f"/proc/{proc.pid}/status").read_text().split("VmRSS:")[1].split()[0]) // 1024
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        t = time.monotonic()
        try:
            c.request("POST", "/v1alpha1/comments:analyze", body=json.dumps(
                {"comment": {"text": "you idiot"}, "requestedAttributes": {"TOXICITY": {}}}))
            r = c.getresponse()
            answer = f"{r.status} {json.loads(r.read()).get('error', {}).get('status', 'ok')}"
        except OSError as exc:
            answer = f"no answer ({type(exc).__name__})"
        print(f"serve {' '.join(args.serve_args) or '(defaults)'}; service open-file limit {limit}")  # noqa: T201
        print(f"connections opened {len(socks)} of {args.addresses * args.per_address} from {args.addresses} "  # noqa: T201
              f"addresses in {opened:.1f} s ({failed} failed); service fds {fds}, RSS {rss} MiB")
        print(f"a fresh client: {answer} in {time.monotonic() - t:.3f} s")  # noqa: T201
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait(20)
        port_file.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
