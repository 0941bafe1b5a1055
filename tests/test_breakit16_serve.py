"""Hostile requests to ``python -m bot serve`` (sixteenth session's break-it pass): the connection cap and the
wrong-key limit per client, where an IPv6 client owns a whole /64 (one host picks any of its 2**64 addresses, so
counting per address capped nothing); real :class:`bot.serve.app.ConnectionCap` and the service over real HTTP."""

from __future__ import annotations

import pytest

from bot.serve.app import ConnectionCap, client_key


@pytest.mark.parametrize(("a", "b"), [
    ("2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe"),
    ("2001:db8:1:2::1", "2001:DB8:1:2:0:0:0:2"),
    ("fe80::1%eth0", "fe80::2%eth1"),
    ("::ffff:192.0.2.7", "192.0.2.7"),
])
def test_addresses_of_one_ipv6_slash_64_are_one_client(a: str, b: str):
    assert client_key(a) == client_key(b)


@pytest.mark.parametrize(("a", "b"), [
    ("2001:db8:1:2::1", "2001:db8:1:3::1"),
    ("192.0.2.7", "192.0.2.8"),
    ("::1", "2001:db8::1"),
])
def test_other_prefixes_and_every_ipv4_address_are_other_clients(a: str, b: str):
    assert client_key(a) != client_key(b)


def test_client_key_of_something_not_an_address_is_that_text():
    assert client_key("unix-socket") == "unix-socket"


def test_connection_cap_counts_an_ipv6_slash_64_as_one_address():
    refused: list[int] = []
    cap = ConnectionCap(2, lambda: refused.append(1))
    assert cap.admit("2001:db8:1:2::1") and cap.admit("2001:db8:1:2::2")
    assert not cap.admit("2001:db8:1:2:dead:beef:0:1")  # a third address of the same /64
    assert cap.admit("2001:db8:1:3::1")  # another /64
    assert refused == [1]
    cap.release("2001:db8:1:2::2")
    assert cap.admit("2001:db8:1:2::99")
    assert cap.open == {"2001:db8:1:2::/64": 2, "2001:db8:1:3::/64": 1}
