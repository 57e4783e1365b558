"""Web benchmarks (issue #5): live updates to a table full of phones.

``run()`` returns ``[(name, value, unit), ...]``:

* ``sse_latency_ms_p95``: from the moment the server publishes a race verdict
  (the ``pub_ns`` stamp of its SSE message, on the machine's monotonic clock)
  until the last of 50 connected SSE clients has received it; the 95th
  percentile over ``RACES`` Chope! races (the host logs a Table card, a
  virtual buzzer press wins it, the server decides and publishes). Goal: at
  most 50 ms.
* ``serve_rss_mb``: the resident memory (``VmRSS``) of the server process
  with the 50 clients connected, the largest value seen during the run.
  Goal: at most 120 MB (room on a 512 MB Pi Zero 2 W).

The server is the real one (``python -m companion.web.server``, what
``companion serve`` runs: waitress, the ticker, mock buzzers) in a
subprocess on 127.0.0.1; the clients are plain sockets in one thread with a
selector. Loopback only; every loop has a deadline; the server is stopped
with SIGTERM at the end.

Run it alone with ``python -m bench.bench_web``.
"""

from __future__ import annotations

import http.client
import json
import os
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = 50
RACES = 40
PIN = "246810"
PLAYERS = ["Ana", "Bo", "Cy", "Dee"]
TABLES = ["red", "orange", "yellow", "green", "blue", "purple"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class Api:
    """The host console's JSON API over one keep-alive connection."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.cookie = ""
        self.csrf = self.call("GET", "/api/csrf")["csrf"]
        self.csrf = self.call("POST", "/api/host/login", {"pin": PIN})["csrf"]

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        headers = {"Cookie": self.cookie} if self.cookie else {}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers.update({"Content-Type": "application/json", "X-CSRF-Token": self.csrf})
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        cookie = resp.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        out = json.loads(raw)
        if resp.status >= 400:
            raise RuntimeError(f"{method} {path}: {resp.status} {out}")
        return out

    def close(self) -> None:
        self.conn.close()


class Clients:
    """``n`` SSE clients on raw sockets, read by one selector thread, which
    notes when each client received each verdict (by its ``pub_ns``)."""

    def __init__(self, port: int, n: int):
        self.sel = selectors.DefaultSelector()
        self.socks: list[socket.socket] = []
        self.bufs: dict[int, bytes] = {}
        self.got: dict[int, dict[int, int]] = {}     # pub_ns -> {client: recv_ns}
        self.snapshots = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            s.setblocking(False)
            self.socks.append(s)
            self.bufs[i] = b""
            self.sel.register(s, selectors.EVENT_READ, i)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            for key, _ in self.sel.select(timeout=0.2):
                now = time.monotonic_ns()
                try:
                    data = key.fileobj.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(key.fileobj)
                    continue
                self._parse(key.data, data, now)

    def _parse(self, i: int, data: bytes, now: int) -> None:
        buf = self.bufs[i] + data
        while b"\n\n" in buf:
            raw, buf = buf.split(b"\n\n", 1)
            if b"event: snapshot" in raw:
                with self.lock:
                    self.snapshots += 1
            if b"event: race" not in raw or b'"phase":"decided"' not in raw:
                continue
            line = next(ln for ln in raw.split(b"\n") if ln.startswith(b"data: "))
            msg = json.loads(line[6:])
            if msg["data"] and msg["data"].get("verdict"):
                with self.lock:
                    self.got.setdefault(msg["pub_ns"], {}).setdefault(i, now)
        self.bufs[i] = buf

    def wait_snapshots(self, n: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.snapshots >= n:
                    return
            time.sleep(0.02)
        raise RuntimeError(f"only {self.snapshots} of {n} clients got their snapshot")

    def wait_verdict(self, seen: set, n: int, timeout: float) -> tuple[int, int] | None:
        """Wait for a new verdict that all ``n`` clients have; (pub_ns, last recv_ns)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for pub, per in self.got.items():
                    if pub not in seen and len(per) >= n:
                        seen.add(pub)
                        return pub, max(per.values())
            time.sleep(0.002)
        return None

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        for s in self.socks:
            s.close()
        self.sel.close()


def _start_server(port: int, db: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion.web.server", "--host", "127.0.0.1",
         "--port", str(port), "--db", db, "--pin", PIN, "--source", "mock", "--demo",
         "--players", ",".join(PLAYERS), "--threads", "64"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start in 30 s")


def _stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    proc.stderr.close()


def _one_race(api: Api, clients: Clients, seen: set, table_no: int) -> float | None:
    """Flip a Table card, let a non-flipper's virtual buzzer take it; the
    latency (ms) until all clients had the verdict, or None if no table left."""
    state = api.call("GET", "/api/host/state")
    flips = [e for e in state["legal_events"] if e["type"] == "flip"
             and e["card"].startswith("table:")]
    if not flips:
        return None
    flip = flips[table_no % len(flips)]
    api.call("POST", "/api/host/event", {"event": flip, "expected_version": state["version"]})
    race = api.call("GET", "/api/host/state")["race"]
    presser = race["eligible"][0]
    api.call("POST", "/api/host/press", {"player": presser, "pressed": True})
    api.call("POST", "/api/host/press", {"player": presser, "pressed": False})
    got = clients.wait_verdict(seen, CLIENTS, timeout=10)
    if got is None:
        raise RuntimeError("a verdict did not reach every client within 10 s")
    pub, last = got
    return (last - pub) / 1e6


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        port = _free_port()
        proc = _start_server(port, str(Path(tmp) / "bench.db"))
        api = clients = None
        try:
            api = Api(port)
            api.call("POST", "/api/host/new-game", {"game": "chope", "players": [
                {"name": n, "buzzer": n} for n in PLAYERS]})
            clients = Clients(port, CLIENTS)
            clients.wait_snapshots(CLIENTS, timeout=20)
            rss = [_rss_mb(proc.pid)]
            seen: set = set()
            latencies: list[float] = []
            n = 0
            while len(latencies) < RACES and n < RACES * 3:
                n += 1
                ms = _one_race(api, clients, seen, n)
                if ms is None:                     # no Table card left: a new game
                    api.call("POST", "/api/host/new-game", {"game": "chope", "players": [
                        {"name": p, "buzzer": p} for p in PLAYERS]})
                    continue
                latencies.append(ms)
                rss.append(_rss_mb(proc.pid))
                time.sleep(0.05)
            rss.append(_rss_mb(proc.pid))
        finally:
            if clients is not None:
                clients.close()
            if api is not None:
                api.close()
            _stop_server(proc)
    p95 = statistics.quantiles(latencies, n=20, method="inclusive")[18]
    return [("sse_latency_ms_p95", p95, "ms"), ("serve_rss_mb", max(rss), "MB")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
