"""Hostile and careless use of ``python -m bot serve`` (eighteenth session's break-it pass): ``--host ::`` listened
on IPv6 only, so every IPv4 client of an admin who asked for "every address" was refused. The service runs in a
subprocess on port 0 and is called over real HTTP on both address families."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import aiohttp
import pytest

from bot.serve.app import listen_socket
from tests.serve_proc import start_service
from tests.test_serve import KEY, _ready

needs_dual_stack = pytest.mark.skipif(not (socket.has_ipv6 and socket.has_dualstack_ipv6()),
                                      reason="this system cannot take IPv4 on an IPv6 socket")


async def _health(url: str) -> int:
    async with aiohttp.ClientSession() as s, s.get(url + "/healthz", timeout=aiohttp.ClientTimeout(total=5)) as r:
        return r.status


@needs_dual_stack
@pytest.mark.parametrize("host", ["::", "0:0:0:0:0:0:0:0"])
def test_host_unspecified_ipv6_listens_on_ipv4_and_ipv6(tmp_path: Path, host: str):
    """``--host ::`` answers a client on 127.0.0.1 as well as one on ::1 (it refused the IPv4 one: asyncio binds an
    IPv6 socket with ``IPV6_V6ONLY`` set), and the listening line says it takes both."""
    svc = start_service(tmp_path, "--host", host, keys=f"red:{KEY}\n")
    try:
        port = svc.url.rsplit(":", 1)[1]
        asyncio.run(_ready(f"http://127.0.0.1:{port}"))
        assert asyncio.run(_health(f"http://127.0.0.1:{port}")) == 200
        assert asyncio.run(_health(f"http://[::1]:{port}")) == 200
    finally:
        _, out, _ = svc.stop()
    assert f"serve: listening on http://[{host}]:{port} (every IPv4 and IPv6 address)" in out, out


def test_other_hosts_are_left_to_aiohttp():
    """Only the unspecified IPv6 address gets a socket of its own; a named host, IPv4 and other IPv6 literals are
    bound as before."""
    for host in ("127.0.0.1", "0.0.0.0", "::1", "localhost", "2001:db8::1"):
        assert listen_socket(host, 0) == (None, False), host


@needs_dual_stack
def test_the_dual_stack_socket_is_one_socket_on_both_families():
    """The socket built for ``::`` has ``IPV6_V6ONLY`` cleared and accepts an IPv4 connection."""
    sock, dual = listen_socket("::", 0)
    assert sock is not None and dual
    try:
        assert sock.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) == 0
        sock.setblocking(True)
        sock.listen()
        with socket.create_connection(("127.0.0.1", sock.getsockname()[1]), timeout=5):
            peer, addr = sock.accept()
            peer.close()
        assert addr[0] == "::ffff:127.0.0.1"
    finally:
        sock.close()


def test_a_taken_port_on_host_unspecified_ipv6_is_one_line_exit_2(tmp_path: Path):
    """A port another process holds is ``error: serve: cannot listen on [::]:PORT: ...`` (the address in brackets,
    not ``:::PORT``), exit 2, no traceback."""
    import subprocess
    import sys

    holder = socket.create_server(("::", 0), family=socket.AF_INET6,
                                  dualstack_ipv6=socket.has_dualstack_ipv6())
    try:
        port = holder.getsockname()[1]
        (tmp_path / "keys.txt").write_text(f"red:{KEY}\n", encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "bot", "serve", "--host", "::", "--port", str(port),
                               "--keys-file", str(tmp_path / "keys.txt"), "--scorer", "tests.serve_scorers:fake"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60,
                              env={**_env(), "MODBOT_CACHE": str(tmp_path / "cache")})
    finally:
        holder.close()
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: serve: cannot listen on [::]:{port}: "), done.stderr
    assert "Traceback" not in done.stderr


def _env() -> dict[str, str]:
    import os

    from tests.serve_proc import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith("MODBOT_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.parametrize(("policy", "kind"), [(1, "a number (1)"), (1.5, "a number (1.5)"), (True, "a boolean (true)"),
                                              (["default"], "a list"), ({"name": "default"}, "an object")])
def test_a_policy_that_is_not_a_string_is_named_as_such(tmp_path: Path, policy: object, kind: str):
    """``"policy": 1`` in a ``/v1/score`` request (a client's YAML ``policy: 1``) was "Unknown policy '1'", as if a
    policy named "1" were missing; it is a 400 INVALID_REQUEST that names the key, says a policy name is a string and
    what was sent. ``True`` was shown as Python's ``'True'``; it is JSON's ``true``."""
    from tests.test_serve import _post

    svc = start_service(tmp_path, keys=f"red:{KEY}\n")
    try:
        asyncio.run(_ready(svc.url))
        status, doc, _ = asyncio.run(_post(svc.url + "/v1/score", {"texts": ["hello"], "policy": policy},
                                           params={"key": KEY}))
        named = asyncio.run(_post(svc.url + "/v1/score", {"texts": ["hello"], "policy": "1"}, params={"key": KEY}))
    finally:
        svc.stop()
    assert status == 400 and doc["error"]["status"] == "INVALID_ARGUMENT", doc
    assert doc["error"]["message"] == (f"Invalid value at 'policy': expected a policy name (a string), got {kind}; "
                                       "the service has default."), doc
    assert named[0] == 400 and named[1]["error"]["message"] == "Unknown policy '1': the service has default."
