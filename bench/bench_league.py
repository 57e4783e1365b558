"""League benchmarks (issue 13): 50 tables, one Mosquitto, one league screen.

``run()`` returns ``[(name, value, unit), ...]``:

* ``league_events_per_s``: 50 simulated tables (a real store, session and
  :class:`~companion.league.publisher.LeaguePublisher` each) start
  publishing at once, each with 200 events already in its log (the catch-up
  after an outage, the heaviest moment); events per second until the
  league's own store holds all 10 000, through one local broker with the
  generated config (passwords, ACL, persistence).
* ``league_latency_ms_p95``: with the 50 tables connected, one table logs an
  event (``session.log``, a durable append) and the clock runs until the
  league page's live stream (``/api/live`` on waitress, read over HTTP)
  carries it: the 95th percentile of 200 events spread over the tables.
* ``league_busiest_load_pct``: what 50 tables at their busiest would use of
  ``league_events_per_s``, in percent. A table at its busiest logs about
  one event a second (a Chomp! round: a reveal and its race every couple
  of seconds; a Chope! flip and chope); the goal is under 10 %.

Everything runs on loopback; every wait is bounded. Needs Debian's
``mosquitto`` (``python3 tasks.py bench`` installs it).

Run it alone with ``python -m bench.bench_league``.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.league.app import LeagueServer  # noqa: E402
from companion.league.config import generate  # noqa: E402
from companion.league.publisher import LeaguePublisher  # noqa: E402
from companion.league.topics import Credentials  # noqa: E402
from companion.session import TableSession  # noqa: E402
from companion.store import Store  # noqa: E402

TABLES = 50
BACKLOG = 200
SAMPLES = 200
BUSIEST_EVENTS_PER_S = 1.0
DEADLINE_S = 180.0


def _mosquitto() -> str:
    path = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    if not Path(path).exists():
        raise RuntimeError("Debian's mosquitto is not installed (python3 tasks.py bench "
                           "installs it)")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _LiveReader(threading.Thread):
    """Reads the league page's live stream; notes when each event arrives."""

    def __init__(self, port: int):
        super().__init__(daemon=True, name="bench-live")
        self.port = port
        self.seen: dict[tuple[str, int], int] = {}
        self.cond = threading.Condition()
        self.ready = threading.Event()
        self.conn: http.client.HTTPConnection | None = None

    def run(self) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE_S)
        self.conn.request("GET", "/api/live")
        resp = self.conn.getresponse()
        kind = None
        try:
            while True:
                line = resp.readline()
                if not line:
                    return
                line = line.strip()
                if line.startswith(b"event: "):
                    kind = line[7:]
                    if kind == b"hello":
                        self.ready.set()
                elif line.startswith(b"data: ") and kind == b"event":
                    now = time.monotonic_ns()
                    d = json.loads(line[6:])
                    with self.cond:
                        self.seen.setdefault((d["table"], d["id"]), now)
                        self.cond.notify_all()
        except (OSError, ValueError, http.client.HTTPException):
            return

    def wait(self, key, timeout: float) -> int | None:
        end = time.monotonic() + timeout
        with self.cond:
            while key not in self.seen:
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.seen[key]

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
            except (OSError, AttributeError):
                pass
            self.conn.close()


def _backlog(path: Path, game_id: int, n: int) -> None:
    """``n`` card events appended to a table's log in one transaction (the
    log an outage leaves behind; the publisher reads it like any other)."""
    conn = sqlite3.connect(str(path))
    try:
        now = time.time_ns()
        rows = [(game_id, "flip" if i % 2 == 0 else "stop",
                 json.dumps({"type": "flip", "card": "food:laksa"} if i % 2 == 0
                            else {"type": "stop"}), now) for i in range(n)]
        with conn:
            conn.executemany("INSERT INTO events (game_id, kind, body, created) "
                             "VALUES (?, ?, ?, ?)", rows)
    finally:
        conn.close()


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def run() -> list[tuple[str, float, str]]:
    mosquitto = _mosquitto()
    ids = [f"t{i:02d}" for i in range(1, TABLES + 1)]
    with tempfile.TemporaryDirectory(prefix="bench-league-") as tmp:
        root = Path(tmp)
        port = _free_port()
        made = generate(root / "broker", ids, port=port, bind="127.0.0.1",
                        run_as="root" if os.geteuid() == 0 else None)
        proc = subprocess.Popen([mosquitto, "-c", str(made["conf"])],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        league = reader = None
        tables: list[tuple[Store, TableSession, LeaguePublisher | None]] = []
        try:
            end = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > end:
                        raise RuntimeError("mosquitto did not start") from None
                    time.sleep(0.02)
            url = f"mqtt://127.0.0.1:{port}"
            league = LeagueServer(url, root / "league.db",
                                  Credentials.from_file("league", made["secrets"]["league"]),
                                  host="127.0.0.1", port=0).open().start()
            reader = _LiveReader(league.port)
            reader.start()
            if not reader.ready.wait(10):
                raise RuntimeError("the league page's live stream did not open")
            end = time.monotonic() + 10
            while not league.subscriber.connected and time.monotonic() < end:
                time.sleep(0.01)

            # -- throughput: 50 tables catch up at once ------------------------------
            for tid in ids:
                store = Store(root / f"{tid}.db")
                session = TableSession(store)
                gid = session.new_game("chope", ["ana", "bo", "cy"])
                _backlog(store.path, gid, BACKLOG)
                tables.append((store, session, None))
            total = TABLES * BACKLOG
            t0 = time.monotonic()
            pubs = []
            for (store, session, _), tid in zip(tables, ids):
                pubs.append(LeaguePublisher(
                    session, store, url, tid,
                    Credentials.from_file(tid, made["secrets"][tid])).start())
            tables = [(s, se, p) for (s, se, _), p in zip(tables, pubs)]
            end = t0 + DEADLINE_S
            while league.subscriber.events < total:
                if time.monotonic() > end:
                    raise RuntimeError(f"the league got {league.subscriber.events} of "
                                       f"{total} events in {DEADLINE_S:.0f} s")
                time.sleep(0.01)
            have = league.store._rows("SELECT COUNT(*) FROM events")[0][0]
            elapsed = time.monotonic() - t0
            if have < total:
                raise RuntimeError(f"the league store holds {have} of {total} events")
            events_per_s = total / elapsed

            # -- latency: a table's log to the league page's live update -----------------
            for _, session, pub in tables:     # a fresh game: the backlog was filler
                session.new_game("chope", ["ana", "bo", "cy"])
                pub.flush(30)
            lat_ms = []
            for i in range(SAMPLES):
                store, session, pub = tables[i % TABLES]
                t1 = time.monotonic_ns()
                eid = _log_one(session)
                seen = reader.wait((ids[i % TABLES], eid), timeout=10)
                if seen is None:
                    raise RuntimeError(f"event {eid} of {ids[i % TABLES]} never reached the "
                                       f"league page")
                lat_ms.append((seen - t1) / 1e6)
                time.sleep(0.01)
            latency = _p95(lat_ms)
        finally:
            if reader is not None:
                reader.close()
            for store, session, pub in tables:
                if pub is not None:
                    pub.close(timeout_s=2)
                store.close()
            if league is not None:
                league.close()
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
    return [("league_events_per_s", events_per_s, "events/s"),
            ("league_latency_ms_p95", latency, "ms"),
            ("league_busiest_load_pct", 100.0 * TABLES * BUSIEST_EVENTS_PER_S / events_per_s,
             "%")]


def _log_one(session: TableSession) -> int:
    """Log one legal event of the table's game (a new game when it ends)."""
    if session.game is None or session.game.finished(session.state):
        session.new_game("chope", ["ana", "bo", "cy"])
    legal = [e for e in session.legal_events() if e.get("type") != "race"] or \
        session.legal_events()
    return session.log(legal[0])["id"]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
