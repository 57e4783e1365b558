"""Issue 31, item 5: one address cannot take the league screen from the hall.

500 live pages from one address were all accepted (the next address got
503), and 650 idle sockets from one address made ``GET /`` time out for
every spectator for about 2 minutes (waitress stopped accepting at its
connection limit). The league now serves through the same gate as the
table, with the hall's caps (:func:`companion.league.app.hall_limits`).

A spectator is a loopback alias (127.0.0.2...); 127.0.0.1 is the league
machine itself (its projector)."""

from __future__ import annotations

import dataclasses
import http.client
import socket

import pytest

from tests.kit.helpers import wait_for
from tests.kit.league import hall_server


def live_page(port: int, source: str) -> tuple[int, socket.socket]:
    """A live page (``/api/live``) opened from ``source``: (status, its socket)."""
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /api/live HTTP/1.1\r\nHost: hall\r\n\r\n")
    head = s.recv(64)
    return int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0, s


def get(port: int, path: str, source: str) -> int:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


def idle_sockets(port: int, source: str, n: int) -> list[socket.socket]:
    """``n`` connections from ``source`` that say nothing."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind((source, 0))
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            pass
        socks.append(s)
    return socks


@pytest.fixture
def league(tmp_path):
    made = []

    def build(**kw):
        made.append(hall_server(tmp_path, **kw))
        return made[-1]

    yield build
    for server in made:
        server.close()


PAGES_PER_ADDRESS = 16          # companion.league.app.PAGES_PER_ADDRESS


def test_one_address_holds_at_most_16_live_pages_and_the_next_address_gets_one(league):
    hall = league(max_pages=40)
    socks = []
    try:
        statuses = []
        for _ in range(PAGES_PER_ADDRESS + 4):
            status, s = live_page(hall.port, "127.0.0.2")
            statuses.append(status)
            socks.append(s)
        assert statuses == [200] * PAGES_PER_ADDRESS + [503] * 4
        status, s = live_page(hall.port, "127.0.0.3")        # another phone
        socks.append(s)
        assert status == 200 and hall.hub.count == PAGES_PER_ADDRESS + 1
        status, s = live_page(hall.port, "127.0.0.1")        # the projector: not capped
        socks.append(s)
        assert status == 200
        for s in socks[:PAGES_PER_ADDRESS]:                  # the first phone leaves
            s.close()
        assert wait_for(lambda: live_page_ok(hall, socks), 10)
    finally:
        for s in socks:
            s.close()


def live_page_ok(hall, socks) -> bool:
    """A page from the capped address is let in again (its pages closed)."""
    status, s = live_page(hall.port, "127.0.0.2")
    socks.append(s)
    return status == 200


def test_650_idle_sockets_from_one_address_leave_the_page_to_every_spectator(league):
    hall = league()
    socks = idle_sockets(hall.port, "127.0.0.2", 650)
    try:
        # new spectators, one each, behind the 650 (was: no answer for 2 minutes)
        for i in range(10):
            assert get(hall.port, "/", f"127.0.2.{i + 1}") == 200
        assert get(hall.port, "/api/league", "127.0.2.99") == 200
        status, page = live_page(hall.port, "127.0.2.98")
        socks.append(page)
        assert status == 200
        cap = hall.gate.limits.per_address                   # the flood: capped, refused
        assert wait_for(lambda: hall.gate.refused["per_address"] >= 650 - cap, 20), \
            hall.gate.refused
        assert hall.gate.open_count("127.0.0.2") == cap
    finally:
        for s in socks:
            s.close()


def test_idle_sockets_are_cut_quickly_and_a_full_hall_cuts_them_for_a_spectator(league):
    """Sockets that say nothing are closed after the hall's idle timeout;
    and with the guests' share full of them (many addresses, under the
    per-address cap) a new spectator's connection cuts an idle one."""
    from companion.league.app import hall_limits

    limits = dataclasses.replace(hall_limits(20), guests=30, reserve=2, idle_timeout_s=1.0)
    hall = league(max_pages=20, limits=limits)
    socks = []
    try:
        for i in range(8):
            socks += idle_sockets(hall.port, f"127.0.3.{i + 1}", 4)     # 32: the share and more
        assert wait_for(lambda: hall.gate.open_count() >= 30, 10), hall.gate.open_count()
        assert get(hall.port, "/", "127.0.2.1") == 200
        assert hall.gate.refused["idle_cut"] >= 1
        assert wait_for(lambda: hall.gate.open_count() == 0, 20), hall.gate.open_count()
    finally:
        for s in socks:
            s.close()
