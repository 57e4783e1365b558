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
* ``serve_idle_cpu_pct``: the CPU time of an idle server (10 live pages
  connected, no race), in percent of one core, from ``/proc/<pid>/stat``
  over ``IDLE_S`` seconds. Goal: at most 0.3 (the table's clock thread
  sleeps until something is due).
* ``press_to_page_ms_p95``: from a mock buzzer pin press in the server
  process to the verdict arriving at the last of 50 live pages, decision
  hold included (the hold is printed in a ``#`` comment line), over
  ``RACES`` Chope! Table races. The server is ``companion.app.TableServer`` with a
  reader on its standard input that presses the mock pins
  (``python -m bench.bench_web --pressable-server``).

The server is the real one (``python -m companion serve``, what
``companion serve`` runs: waitress, the buzzer pipeline, mock buzzers) in a
subprocess on 127.0.0.1; the clients are plain sockets in one thread with a
selector. Loopback only; every loop has a deadline; the server is stopped
with SIGTERM at the end. ``serve_idle_cpu(root)`` measures the server of
another checkout (``python -m bench.bench_web --idle-only ROOT``).

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
IDLE_CLIENTS = 10
IDLE_S = 10.0
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


def _start_server(port: int, db: str, root: Path = ROOT,
                  pressable: bool = False) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("COMPANION_SOURCE", None)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    args = ["--host", "127.0.0.1", "--port", str(port), "--db", db, "--pin", PIN,
            "--source", "mock", "--demo", "--players", ",".join(PLAYERS), "--threads", "64"]
    module = ["-m", "bench.bench_web", "--pressable-server"] if pressable else \
        ["-m", "companion", "serve"]
    proc = subprocess.Popen(
        [sys.executable, *module, *args], cwd=root, env=env,
        stdin=subprocess.PIPE if pressable else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    proc.stderr.close()


def _shut(proc: subprocess.Popen, api: "Api | None", clients: "Clients | None") -> None:
    """Close the pages and the host's connection, then stop the server."""
    if clients is not None:
        clients.close()
    if api is not None:
        api.close()
    _stop_server(proc)


def _new_chope(api: Api) -> None:
    """A new Chope! game, each player at the mock buzzer of their name."""
    api.call("POST", "/api/host/new-game", {"game": "chope", "players": [
        {"name": n, "buzzer": n} for n in PLAYERS]})


def _table_flips(state: dict) -> list[dict]:
    """The Table cards the host may flip now (each starts a race)."""
    return [e for e in state["legal_events"] if e["type"] == "flip"
            and e["card"].startswith("table:")]


def _one_race(api: Api, clients: Clients, seen: set, table_no: int) -> float | None:
    """Flip a Table card, let a non-flipper's virtual buzzer take it; the
    latency (ms) until all clients had the verdict, or None if no table left."""
    state = api.call("GET", "/api/host/state")
    flips = _table_flips(state)
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


def _cpu_s(pid: int) -> float:
    """User plus system CPU time of every thread of ``pid``, in seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _threads_cpu_ns(pid: int) -> int:
    """CPU time of the live threads of ``pid`` in nanoseconds (their
    ``schedstat``): finer than ``stat``'s clock ticks, blind to threads that
    end in between (an idle server starts and ends none)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def serve_idle_cpu(root: Path = ROOT, seconds: float = IDLE_S,
                   clients: int = IDLE_CLIENTS) -> float:
    """Percent of one core an idle server uses with ``clients`` live pages
    open and no race (the server of the checkout at ``root``), from
    ``/proc/<pid>/stat``, whose clock ticks resolve 100/(seconds*CLK_TCK) %;
    a ``#`` line gives the finer figure from the threads' ``schedstat``."""
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as tmp:
        port = _free_port()
        proc = _start_server(port, str(Path(tmp) / "idle.db"), root=root)
        pages = None
        try:
            pages = Clients(port, clients)
            pages.wait_snapshots(clients, timeout=20)
            time.sleep(2.0)                       # start-up work done
            cpu0, ns0, t0 = _cpu_s(proc.pid), _threads_cpu_ns(proc.pid), time.monotonic()
            time.sleep(seconds)
            cpu1, ns1, t1 = _cpu_s(proc.pid), _threads_cpu_ns(proc.pid), time.monotonic()
            if proc.poll() is not None:
                raise RuntimeError("the server exited while idle")
        finally:
            if pages is not None:
                pages.close()
            _stop_server(proc)
    print(f"# serve_idle_cpu_pct: {clients} idle pages, {t1 - t0:.1f} s; by the threads' "
          f"schedstat {100.0 * (ns1 - ns0) / 1e9 / (t1 - t0):.3f} % (stat ticks resolve "
          f"{100.0 / (t1 - t0) / os.sysconf('SC_CLK_TCK'):.2f} %)", flush=True)
    return 100.0 * (cpu1 - cpu0) / (t1 - t0)


def _hold_ms(api: Api) -> object:
    """The decision hold the server's session uses (its race settings)."""
    state = api.call("GET", "/api/host/state")
    for where in (state.get("settings"), (state.get("session") or {}).get("settings")):
        if isinstance(where, dict) and "hold_ms" in where:
            return where["hold_ms"]
    from companion.table.session import DEFAULT_SETTINGS
    return DEFAULT_SETTINGS["hold_ms"]


def press_to_page() -> tuple[list[float], object]:
    """Mock pin presses in the server to verdicts at all 50 pages (ms each),
    and the decision hold in force."""
    with tempfile.TemporaryDirectory(prefix="bench-press-") as tmp:
        port = _free_port()
        proc = _start_server(port, str(Path(tmp) / "press.db"), pressable=True)
        api = clients = None
        latencies: list[float] = []
        try:
            api = Api(port)
            _new_chope(api)
            hold = _hold_ms(api)
            clients = Clients(port, CLIENTS)
            clients.wait_snapshots(CLIENTS, timeout=20)
            seen: set = set()
            n = 0
            while len(latencies) < RACES and n < RACES * 3:
                n += 1
                state = api.call("GET", "/api/host/state")
                flips = _table_flips(state)
                if not flips:
                    _new_chope(api)
                    continue
                api.call("POST", "/api/host/event", {"event": flips[n % len(flips)],
                                                     "expected_version": state["version"]})
                presser = api.call("GET", "/api/host/state")["race"]["eligible"][0]
                time.sleep(0.01)
                t0 = time.monotonic_ns()           # the press (the pipe's delay counts too)
                proc.stdin.write(f"press {presser}\n".encode())
                proc.stdin.flush()
                got = clients.wait_verdict(seen, CLIENTS, timeout=10)
                if got is None:
                    raise RuntimeError("a verdict did not reach every page within 10 s")
                latencies.append((got[1] - t0) / 1e6)
                proc.stdin.write(f"release {presser}\n".encode())
                proc.stdin.flush()
                time.sleep(0.05)
        finally:
            _shut(proc, api, clients)
    return latencies, hold


def pressable_server(argv: list[str]) -> int:
    """``companion serve`` (:class:`companion.app.TableServer`) whose mock pins
    are pressed by lines on standard input: ``press NAME``, ``release NAME``."""
    import argparse
    import signal as _signal

    from companion.app import TableServer

    p = argparse.ArgumentParser()
    for flag in ("--host", "--db", "--pin", "--players", "--source"):
        p.add_argument(flag)
    p.add_argument("--port", type=int)
    p.add_argument("--threads", type=int, default=64)
    p.add_argument("--demo", action="store_true")
    a = p.parse_args(argv)
    table = TableServer(host=a.host, port=a.port, db_path=a.db, pin=a.pin,
                  players=a.players.split(","), source=a.source, demo=a.demo,
                  threads=a.threads).open()

    def presses() -> None:
        for line in sys.stdin:
            what, _, who = line.strip().partition(" ")
            if what == "press":
                table.source.press(who)
            elif what == "release":
                table.source.release(who)

    threading.Thread(target=presses, daemon=True).start()
    _signal.signal(_signal.SIGTERM, lambda *_: threading.Thread(target=table.stop).start())
    try:
        table.run()
    finally:
        table.close()
    return 0


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        port = _free_port()
        proc = _start_server(port, str(Path(tmp) / "bench.db"))
        api = clients = None
        try:
            api = Api(port)
            _new_chope(api)
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
                    _new_chope(api)
                    continue
                latencies.append(ms)
                rss.append(_rss_mb(proc.pid))
                time.sleep(0.05)
            rss.append(_rss_mb(proc.pid))
        finally:
            _shut(proc, api, clients)
    p95 = statistics.quantiles(latencies, n=20, method="inclusive")[18]
    idle = serve_idle_cpu()
    presses, hold = press_to_page()
    print(f"# press_to_page_ms_p95: decision hold hold_ms={hold} ms (included), "
          f"{CLIENTS} pages, {len(presses)} races", flush=True)
    p2p = statistics.quantiles(presses, n=20, method="inclusive")[18]
    return [("sse_latency_ms_p95", p95, "ms"), ("serve_rss_mb", max(rss), "MB"),
            ("serve_idle_cpu_pct", idle, "%"), ("press_to_page_ms_p95", p2p, "ms")]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--pressable-server"]:
        sys.exit(pressable_server(sys.argv[2:]))
    if sys.argv[1:2] == ["--idle-only"]:
        root = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else ROOT
        print(f"serve_idle_cpu_pct {serve_idle_cpu(root):.6g} %  # {root}")
        sys.exit(0)
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
