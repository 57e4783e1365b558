"""A hostile guest and a full table at once (issue 9's closing figures).

On loopback only, for a bounded time: the real ``companion serve`` table
(waitress, 64 threads, mock buzzers, a Chope! game) with

* 56 live pages, each from its own address (127.0.1.x: 56 phones),
* one guest (127.0.0.77) holding 300 slow sockets, each having sent half a
  request head and then nothing, topped up as the server cuts them off,

while the host, on the Pi (127.0.0.1), opens the console and logs events.

Figures:

* ``hostile_host_console_ms_p50`` / ``_max``: ``GET /host`` from the Pi;
* ``hostile_host_event_ms_p50`` / ``_max``: ``POST /api/host/event`` round trip;
* ``hostile_events_delivered_pct``: of the events logged, times 56 pages,
  the share every page received on its live stream;
* ``hostile_pages_live``: pages whose stream was open at the end;
* ``hostile_guest_sockets_held`` (at most the per-address cap) and
  ``hostile_guest_sockets_refused``.

    python -m bench hostile
"""

from __future__ import annotations

import http.client
import json
import selectors
import socket
import statistics
import tempfile
import threading
import time

PAGES = 56
SLOW = 300
EVENTS = 40
GUEST = "127.0.0.77"
PIN = "246810"


class Pages:
    """``n`` live pages read by one thread: counts the ``state`` events each got."""

    def __init__(self, port: int, n: int):
        self.sel = selectors.DefaultSelector()
        self.counts = [0] * n
        self.open = [False] * n
        self._tails = [b""] * n
        for i in range(n):
            s = socket.socket()
            s.bind((f"127.0.1.{i + 1}", 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
            s.setblocking(False)
            self.open[i] = True
            self.sel.register(s, selectors.EVENT_READ, i)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            for key, _ in self.sel.select(0.2):
                i = key.data
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.open[i] = False
                    self.sel.unregister(key.fileobj)
                    key.fileobj.close()
                    continue
                buf = self._tails[i] + data
                self.counts[i] += buf.count(b"event: state\n")
                self._tails[i] = buf[-16:].replace(b"event: state\n", b"")

    def close(self) -> None:
        self._stop.set()
        self.thread.join(2)
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()
        self.sel.close()


class SlowGuest:
    """``n`` half-sent requests from one address, topped up every second."""

    def __init__(self, port: int, n: int):
        self.port, self.n = port, n
        self.socks: list[socket.socket] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open_one(self) -> None:
        s = socket.socket()
        s.bind((GUEST, 0))
        s.settimeout(1)
        try:
            s.connect(("127.0.0.1", self.port))
            s.sendall(b"GET /host HTTP/1.1\r\nHost: bench\r\n")
        except OSError:
            pass
        self.socks.append(s)

    def _run(self) -> None:
        while not self._stop.is_set():
            alive = []
            for s in self.socks:
                s.setblocking(False)
                try:
                    gone = s.recv(1, socket.MSG_PEEK) == b""
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    s.close()
                else:
                    alive.append(s)
            self.socks = alive
            while len(self.socks) < self.n and not self._stop.is_set():
                self._open_one()
            self._stop.wait(1.0)

    def close(self) -> None:
        self._stop.set()
        self.thread.join(3)
        for s in self.socks:
            s.close()


def _request(port, method, path, body=None, headers=None):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, (time.perf_counter() - t0) * 1000, data, r
    finally:
        c.close()


def _login(port):
    status, _, data, r = _request(port, "GET", "/api/csrf")
    cookie = r.getheader("Set-Cookie").split(";")[0]
    csrf = json.loads(data)["csrf"]
    status, _, data, r = _request(port, "POST", "/api/host/login", json.dumps({"pin": PIN}), {
        "Cookie": cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json"})
    assert status == 200, data
    return r.getheader("Set-Cookie").split(";")[0], json.loads(data)["csrf"]


def run() -> list[tuple[str, float, str]]:
    from companion.app import TableServer

    with tempfile.TemporaryDirectory() as tmp:
        table = TableServer(host="127.0.0.1", port=0, db_path=f"{tmp}/hostile.db", pin=PIN,
                      source="mock", demo=True, threads=64).open().start()
        pages = guest = None
        try:
            port = table.port
            cookie, csrf = _login(port)
            pages = Pages(port, PAGES)
            guest = SlowGuest(port, SLOW)
            time.sleep(3.0)                       # the guest's sockets are all in
            console, logged = [], []
            for i in range(EVENTS):
                status, ms, _, _ = _request(port, "GET", "/host", headers={"Cookie": cookie})
                assert status == 200
                console.append(ms)
                state = json.loads(_request(port, "GET", "/api/host/state",
                                            headers={"Cookie": cookie})[2])
                event = state["legal_events"][-1]
                status, ms, data, _ = _request(
                    port, "POST", "/api/host/event", json.dumps({"event": event}),
                    {"Cookie": cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json"})
                assert status == 200, data
                logged.append(ms)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and min(pages.counts) < EVENTS:
                time.sleep(0.05)
            delivered = sum(min(c, EVENTS) for c in pages.counts)
            held = table.gate.open_count(GUEST)
            refused = table.gate.refused["per_address"] + table.gate.refused["guests"]
            live = sum(pages.open)
        finally:
            if guest is not None:
                guest.close()
            if pages is not None:
                pages.close()
            table.close()
    return [
        ("hostile_host_console_ms_p50", statistics.median(console), "ms"),
        ("hostile_host_console_ms_max", max(console), "ms"),
        ("hostile_host_event_ms_p50", statistics.median(logged), "ms"),
        ("hostile_host_event_ms_max", max(logged), "ms"),
        ("hostile_events_delivered_pct", 100.0 * delivered / (EVENTS * PAGES), "%"),
        ("hostile_pages_live", float(live), "pages"),
        ("hostile_guest_sockets_held", float(held), "sockets"),
        ("hostile_guest_sockets_refused", float(refused), "sockets"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
