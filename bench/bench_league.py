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
* ``league_e2e_lost`` and ``league_e2e_duplicated`` (issue 24): 10 tables on
  a café broker bridged to a central one log 1 000 events each (10 000 in
  all) while the bridge is cut (60 s times the fault-time scale,
  ``LEAGUE_FAULT_SCALE``, default 0.1), the league process is killed with
  SIGKILL and the central broker too, its persistence file 5 s stale, both
  started again (:mod:`tests.kit.league_faults`); then events logged at a table
  that the league's store does not hold, and rows it holds beyond one per
  logged event. Goal: 0 and 0. ``league_e2e_settle_s``: how long after the
  last event was logged the league held them all; ``league_e2e_rewinds``:
  how often a table sent again from the league's mark.

Everything runs on loopback; every wait is bounded. Needs Debian's
``mosquitto`` (``python3 tasks.py bench`` installs it).

Run it alone with ``python -m bench.bench_league``.
"""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.league.app import LeagueServer  # noqa: E402
from companion.league.publisher import LeaguePublisher  # noqa: E402
from companion.league.topics import Credentials  # noqa: E402
from companion.record.store import Store  # noqa: E402
from companion.table.session import TableSession  # noqa: E402
from tests.kit.mosquitto import Broker  # noqa: E402

TABLES = 50
BACKLOG = 200
SAMPLES = 200
BUSIEST_EVENTS_PER_S = 1.0
DEADLINE_S = 180.0


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


@contextmanager
def _broker(root: Path, ids: list[str]):
    """Mosquitto with the generated config for tables ``ids``, listening
    (tests.kit.mosquitto), stopped on leaving."""
    broker = Broker(root / "broker", ids).start()
    try:
        yield broker
    finally:
        broker.stop()


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


@dataclass
class _Table:
    """One simulated table: its store, session and (once started) publisher."""

    tid: str
    store: Store
    session: TableSession
    pub: LeaguePublisher | None = None


def run() -> list[tuple[str, float, str]]:
    ids = [f"t{i:02d}" for i in range(1, TABLES + 1)]
    with tempfile.TemporaryDirectory(prefix="bench-league-") as tmp, ExitStack() as stack:
        # closed in reverse: the live reader, the tables, the league, the broker
        root = Path(tmp)
        broker = stack.enter_context(_broker(root, ids))
        url, made = broker.url, broker.files
        league = _open_league(stack, url, root, made["secrets"]["league"])
        tables: list[_Table] = []
        stack.callback(_close_tables, tables)
        reader = _open_live_reader(stack, league.port)
        _open_tables(tables, root, ids)
        events_per_s = _catch_up_rate(league, tables, url, made["secrets"])
        latency = _live_latency_p95(tables, reader)
    e2e = _end_to_end()
    return [("league_events_per_s", events_per_s, "events/s"),
            ("league_latency_ms_p95", latency, "ms"),
            ("league_busiest_load_pct", 100.0 * TABLES * BUSIEST_EVENTS_PER_S / events_per_s,
             "%"),
            ("league_e2e_lost", e2e["lost"], "events"),
            ("league_e2e_duplicated", e2e["duplicated"], "events"),
            ("league_e2e_settle_s", e2e["settled_s"], "s"),
            ("league_e2e_rewinds", e2e["rewinds"], "rewinds")]


E2E_TABLES = 10
E2E_PER_TABLE = 1000


def _end_to_end() -> dict:
    """10 000 events through a café broker, its bridge and the central broker
    to the league process, with issue 24's faults (tests/kit/league_faults.py)."""
    from tests.kit.league_faults import fault_scale, night

    with tempfile.TemporaryDirectory(prefix="bench-league-e2e-") as tmp:
        result = night(Path(tmp), E2E_TABLES, E2E_PER_TABLE, rate=40.0, scale=fault_scale(),
                       settle_s=DEADLINE_S)
    if result["logged"] != E2E_TABLES * E2E_PER_TABLE:
        raise RuntimeError(f"the tables logged {result['logged']} events, not "
                           f"{E2E_TABLES * E2E_PER_TABLE}")
    return result


def _open_league(stack: ExitStack, url: str, root: Path, secrets) -> LeagueServer:
    """The league server on a free port, its subscriber connected (10 s at most)."""
    league = LeagueServer(url, root / "league.db", Credentials.from_file("league", secrets),
                          host="127.0.0.1", port=0).open().start()
    stack.callback(league.close)
    end = time.monotonic() + 10
    while not league.subscriber.connected and time.monotonic() < end:
        time.sleep(0.01)
    return league


def _open_live_reader(stack: ExitStack, port: int) -> _LiveReader:
    reader = _LiveReader(port)
    stack.callback(reader.close)
    reader.start()
    if not reader.ready.wait(10):
        raise RuntimeError("the league page's live stream did not open")
    return reader


def _open_tables(tables: list[_Table], root: Path, ids: list[str]) -> None:
    """A table for each id, a Chope! game with :data:`BACKLOG` events in its log."""
    for tid in ids:
        store = Store(root / f"{tid}.db")
        table = _Table(tid, store, TableSession(store))
        tables.append(table)
        gid = table.session.new_game("chope", ["ana", "bo", "cy"])
        _backlog(store.path, gid, BACKLOG)


def _close_tables(tables: list[_Table]) -> None:
    for t in tables:
        if t.pub is not None:
            t.pub.close(timeout_s=2)
        t.store.close()


def _catch_up_rate(league: LeagueServer, tables: list[_Table], url: str, secrets) -> float:
    """Throughput: every table starts publishing at once; events per second
    until the league's store holds all the backlogs."""
    total = TABLES * BACKLOG
    t0 = time.monotonic()
    for t in tables:
        t.pub = LeaguePublisher(t.session, t.store, url, t.tid,
                                Credentials.from_file(t.tid, secrets[t.tid])).start()
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
    return total / elapsed


def _live_latency_p95(tables: list[_Table], reader: _LiveReader) -> float:
    """Latency: a table's log to the league page's live update, 95th percentile
    (in ms) of :data:`SAMPLES` events spread over the tables."""
    for t in tables:     # a fresh game: the backlog was filler
        t.session.new_game("chope", ["ana", "bo", "cy"])
        t.pub.flush(30)
    lat_ms = []
    for i in range(SAMPLES):
        t = tables[i % TABLES]
        t1 = time.monotonic_ns()
        eid = _log_one(t.session)
        seen = reader.wait((t.tid, eid), timeout=10)
        if seen is None:
            raise RuntimeError(f"event {eid} of {t.tid} never reached the league page")
        lat_ms.append((seen - t1) / 1e6)
        time.sleep(0.01)
    return _p95(lat_ms)


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
