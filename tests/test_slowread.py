"""Issue 31, item 1: output the server cannot deliver never holds a worker.

Slow readers (a 1 KB receive buffer, never reading) that pipeline GETs of
the biggest page used to leave every worker thread waiting in waitress's
write for a reader that never came: the Pi's own page and a logged-in host
timed out. Each test waits for a condition; the latency figures are
``python -m bench slowread``.

A guest is a loopback alias (127.0.0.2...): only 127.0.0.1 is the Pi."""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading

import pytest

from tests.kit.helpers import wait_for
from tests.kit.web import http_host_login

PIN = "246810"
BIG = "/static/js/render.js"          # the biggest page (about 50 KB)
PHONE = "127.0.1.1"                   # the host, logged in on a phone


def pipelined(path: str, n: int) -> bytes:
    return b"".join(b"GET %s HTTP/1.1\r\nHost: t\r\n\r\n" % path.encode() for _ in range(n))


def reader_socket(port: int, source: str, rcvbuf: int = 1024) -> socket.socket:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((source, 0))
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    return s


class Flood:
    """``per_address`` connections from each of ``addresses`` sending
    ``first`` and never reading; each the server closes is opened again."""

    def __init__(self, port: int, addresses: list[str], per_address: int, first: bytes):
        self.port, self.first = port, first
        self.slots = [a for a in addresses for _ in range(per_address)]
        self.ep = select.epoll()
        self.socks: dict[int, tuple[socket.socket, str]] = {}
        self.opened = self.closed = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self, source: str) -> None:
        try:
            s = reader_socket(self.port, source)
            s.sendall(self.first)
        except OSError:
            return
        s.setblocking(False)
        self.socks[s.fileno()] = (s, source)
        self.ep.register(s.fileno(), select.EPOLLRDHUP | select.EPOLLHUP | select.EPOLLERR)
        self.opened += 1

    def _run(self) -> None:
        for source in self.slots:
            self._open(source)
        while not self._stop.is_set():
            for fd, _ in self.ep.poll(0.05):
                s, source = self.socks.pop(fd)
                self.ep.unregister(fd)
                s.close()
                self.closed += 1
                if not self._stop.is_set():
                    self._open(source)

    def close(self) -> None:
        self._stop.set()
        self.thread.join(10)
        for s, _ in list(self.socks.values()):
            s.close()
        self.ep.close()


def get(port: int, path: str, source: str = "127.0.0.1", headers=None, timeout: float = 30):
    """(status, body) of one GET on a new connection from ``source``."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                   source_address=(source, 0))
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def login(port: int, source: str) -> str:
    return http_host_login(port, PIN, source, timeout=30)[0]


def closed_by_server(s: socket.socket) -> bool:
    """The server closed ``s`` (read what it sent, up to the end or a reset)."""
    s.settimeout(30)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


@pytest.fixture
def table(tmp_path):
    from companion.app import TableServer

    made = []

    def build(**kw):
        t = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin=PIN,
                        source="mock", demo=True, **kw).open().start()
        made.append(t)
        return t

    yield build
    for t in made:
        t.close()


def workers_idle(t) -> bool:
    d = t.server.task_dispatcher
    with d.lock:
        return d.active_count == 0 and not d.queue


def test_pipelining_slow_readers_leave_the_pi_and_the_host_served(table):
    """The issue's attack, shrunk to 4 worker threads: 2 addresses x 4
    connections each pipelining 200 GETs of the biggest page (10 MB each)
    and never reading, opened again as soon as they are cut. Before: the
    four workers waited in their writes for good and nothing was answered."""
    t = table(threads=4)
    pi, phone = login(t.port, "127.0.0.1"), login(t.port, PHONE)
    flood = Flood(t.port, ["127.0.0.2", "127.0.0.3"], 4, pipelined(BIG, 200))
    try:
        # every attacking connection was cut (and opened again) at least once
        assert wait_for(lambda: flood.closed >= 16, 20), (flood.closed, t.gate.refused)
        for _ in range(5):                          # while the flood holds
            status, body = get(t.port, "/api/host/state", headers={"Cookie": pi})
            assert status == 200 and json.loads(body)["game"]
            status, body = get(t.port, "/api/host/state", PHONE, {"Cookie": phone})
            assert status == 200 and json.loads(body)["game"]
            assert get(t.port, "/host")[0] == 200
        assert flood.thread.is_alive() and flood.opened > 8     # it kept coming back
        assert t.gate.refused["pipelined"] >= 16
    finally:
        flood.close()
    assert wait_for(lambda: t.gate.open_count() == 0 and workers_idle(t), 10)


def test_a_connection_with_the_output_cap_waiting_is_cut_and_its_worker_freed(table):
    """Pipelining allowed here: 2 threads, one slow reader asking for 60
    copies of the biggest page. The write that finds 64 KB waiting cuts the
    connection (a reset) and the worker thread goes back to the pool."""
    from companion.web.limits import Limits

    t = table(threads=2, limits=Limits(pipelined=1000, outbuf_cap=64 * 1024,
                                       send_buffer=8 * 1024))
    s = reader_socket(t.port, "127.0.0.2")
    try:
        s.sendall(pipelined(BIG, 60))
        assert wait_for(lambda: t.gate.refused["slow_reader"] == 1, 20), t.gate.refused
        assert wait_for(lambda: workers_idle(t) and t.gate.in_flight("127.0.0.2") == 0, 10)
        assert wait_for(lambda: t.gate.open_count("127.0.0.2") == 0, 10)
        # both workers serve: two slow requests at once would need both
        assert get(t.port, "/api/state", "127.0.0.3")[0] == 200
        assert get(t.port, "/host")[0] == 200
        assert closed_by_server(s)
    finally:
        s.close()


def test_output_that_does_not_move_is_cut_and_output_that_moves_is_not(table):
    """A reader that takes nothing for ``drain_timeout_s`` is cut; one
    that reads slowly, a bit at a time, gets the whole page."""
    from companion.web.limits import Limits

    t = table(threads=4, limits=Limits(drain_timeout_s=0.5, send_buffer=4096))
    stuck = reader_socket(t.port, "127.0.0.2")
    slow = reader_socket(t.port, "127.0.0.3")
    try:
        stuck.sendall(pipelined(BIG, 1))
        slow.sendall(pipelined(BIG, 1))
        got = b""
        while b"\r\n\r\n" not in got or len(got.split(b"\r\n\r\n", 1)[1]) < 50_000:
            chunk = slow.recv(4096)
            assert chunk, (len(got), t.gate.refused)
            got += chunk
            threading.Event().wait(0.05)              # a slow phone: 4 KB at a time
        assert wait_for(lambda: t.gate.refused["stalled"] == 1, 10), t.gate.refused
        assert closed_by_server(stuck)
        assert wait_for(lambda: t.gate.open_count("127.0.0.2") == 0, 10)
        assert t.gate.open_count("127.0.0.3") == 1      # the slow reader is still there
    finally:
        stuck.close()
        slow.close()


def test_past_the_pipelining_cap_the_connection_is_cut_within_it_all_is_answered(table):
    from companion.serving import Limits

    t = table(threads=4)
    cap = Limits().pipelined
    ok = reader_socket(t.port, "127.0.0.2", rcvbuf=1 << 20)
    flood = reader_socket(t.port, "127.0.0.3")
    try:
        ok.sendall(pipelined("/api/state", cap))
        got = b""
        while got.count(b"HTTP/1.1 200 OK") < cap:
            chunk = ok.recv(65536)
            assert chunk, got[-300:]
            got += chunk
        flood.sendall(pipelined("/api/state", 100))
        assert closed_by_server(flood)
        assert t.gate.refused["pipelined"] == 1
        assert wait_for(lambda: t.gate.open_count("127.0.0.3") == 0, 10)
    finally:
        ok.close()
        flood.close()


def test_the_queue_serves_the_pi_and_the_reserve_first_then_one_task_per_address():
    from companion.serving import FairQueue

    class Task:
        def __init__(self, addr, band="guest"):
            self.addr, self.band = (addr, 1), band

        def __repr__(self):
            return self.addr[0]

    q = FairQueue()
    for _ in range(100):
        q.append(Task("10.0.0.66"))               # a flood's hundred requests
    q.append(Task("10.0.0.9"))                    # the host on a phone
    q.append(Task("10.0.0.66"))
    q.append(Task("127.0.0.1", "trusted"))        # the Pi
    q.append(Task("10.0.0.7", "reserve"))         # a reserve connection
    assert len(q) == 104
    order = [q.popleft().addr[0] for _ in range(5)]
    assert order == ["127.0.0.1", "10.0.0.7", "10.0.0.66", "10.0.0.9", "10.0.0.66"]
    assert len(q) == 99 and all(task.addr[0] == "10.0.0.66" for task in q)
    while q:
        q.popleft()
    with pytest.raises(IndexError):
        q.popleft()
