"""Run ``python -m bot serve`` in a subprocess on port 0 for the service's tests (real HTTP, real signals)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Served:
    """A running service: its base URL, process and working folder (where nothing may be written)."""

    url: str
    proc: subprocess.Popen[str]
    cwd: Path

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> tuple[int, str, str]:
        """Send ``sig`` and wait; ``(exit code, stdout, stderr)``."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait(timeout)

    def wait(self, timeout: float = 20.0) -> tuple[int, str, str]:
        """Wait for a process already told to stop; ``(exit code, stdout, stderr)``. A second signal here could
        arrive after the service's loop closed, during the interpreter's exit, where SIGTERM kills (-15): the
        flaky exit code of the drain tests."""
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err


def start_service(cwd: Path, *args: str, scorer: str = "tests.serve_scorers:fake", keys: str | None = None,
                  env: dict[str, str] | None = None, timeout: float = 20.0) -> Served:
    """Start the service in ``cwd`` with ``--scorer scorer`` (``""``: the real model; and a keys file holding ``keys``, one per line);
    return once it has written its port."""
    port_file = cwd / "port"
    cmd = [sys.executable, "-m", "bot", "serve", "--port", "0", "--port-file", str(port_file),
           *(["--scorer", scorer] if scorer else []), *args]
    if keys is not None:
        (cwd / "keys.txt").write_text(keys, encoding="utf-8")
        cmd += ["--keys-file", str(cwd / "keys.txt")]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MODBOT_")}
    full_env.update({"PYTHONPATH": str(ROOT), "MODBOT_CACHE": str(cwd / "no-cache"), **(env or {})})
    full_env.pop("MODBOT_SCORER_URL", None)
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)
    deadline = time.monotonic() + timeout
    while not port_file.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise RuntimeError(f"service exited {proc.returncode}: {out}{err}")
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("service did not start")
        time.sleep(0.02)
    return Served(f"http://127.0.0.1:{port_file.read_text(encoding='utf-8')}", proc, cwd)


def read_http_answer(sock: socket.socket) -> bytes:
    """Read one HTTP/1.1 answer off ``sock``: its head and a ``Content-Length`` body (none without the header);
    whatever arrived if the peer closes first. Returns head + blank line + body, raw bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length and (chunk := sock.recv(65536)):
        body += chunk
    return head + b"\r\n\r\n" + body
