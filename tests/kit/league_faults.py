"""A café night with faults, for the league's end-to-end figures and tests (issue 24):
tests/test_league_bridge.py and bench/bench_league.py.

Two real Mosquitto brokers with the configuration ``companion league
config`` writes: a *café* broker (the tables connect to it) bridged, with
Mosquitto's own bridge (``config --bridge``), to a *central* broker (the
league screen connects to it, as a separate process). The bridge goes
through a small TCP relay (:class:`Relay`) so the test can cut the café's
link to the central broker the way a pulled cable does. Then the faults of
issue 24, in order, while the tables keep logging:

1. the bridge is cut for ``60 * scale`` seconds (``scale``: the *fault-time
   scale*, ``LEAGUE_FAULT_SCALE`` in the environment, default 0.1: the
   tests and the benchmark cut it for 6 s; 1 runs the full minute);
2. the central broker is killed (SIGKILL) with its persistence file 5 s
   stale (saved, then 5 s more of play, then the kill, and the saved file
   put back: what a power cut leaves with ``autosave_interval 5``);
3. the league process is killed (SIGKILL) just before, and started again
   after: the 5 s the central broker forgets are the league's queue, which
   it had acknowledged to the café's bridge (and the café to the tables).

Nobody resets anything by hand; :meth:`CafeNight.settle` waits until the
league's store holds every event, and :meth:`CafeNight.tally` counts what
was lost and what was duplicated.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from companion.league.config import generate
from companion.league.publisher import LeaguePublisher
from companion.league.topics import Credentials
from companion.record.store import Store
from companion.table.session import TableSession
from tests.kit.mosquitto import MOSQUITTO, Mosquitto, free_port, listening, stop_process

CUT_S = 60.0
STALE_S = 5.0


def fault_scale() -> float:
    """The fault-time scale: ``LEAGUE_FAULT_SCALE`` (default 0.1)."""
    try:
        return max(0.01, float(os.environ.get("LEAGUE_FAULT_SCALE", "0.1")))
    except ValueError:
        return 0.1


class Relay:
    """A TCP relay from ``port`` to ``target``; :meth:`cut` drops every
    connection and refuses new ones until :meth:`heal`."""

    def __init__(self, target: int):
        self.target = target
        self.port = free_port()
        self.up = True
        self._socks: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._server.settimeout(0.2)
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True, name="relay").start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                continue
            if not self.up:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=2)
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):     # a quiet link is no reason to drop it
                sock.settimeout(None)
            with self._lock:
                self._socks |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            self._drop(s)

    def _drop(self, s: socket.socket) -> None:
        with self._lock:
            self._socks.discard(s)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def cut(self) -> None:
        self.up = False
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            self._drop(s)

    def heal(self) -> None:
        self.up = True

    def close(self) -> None:
        self._stop.set()
        self.cut()
        self._server.close()


class LeagueProcess:
    """``python -m companion.league serve`` as its own process (so it can be
    killed with SIGKILL)."""

    def __init__(self, broker_url: str, db: Path, password_file: Path, log: Path):
        self.args = [sys.executable, "-m", "companion.league", "serve", "--broker", broker_url,
                     "--db", str(db), "--user", "league", "--password-file",
                     str(password_file), "--host", "127.0.0.1"]
        self.log = log
        self.port = 0
        self.proc: subprocess.Popen | None = None

    def start(self) -> "LeagueProcess":
        self.port = free_port()
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([*self.args, "--port", str(self.port)], stdout=out,
                                         stderr=subprocess.STDOUT)
        listening(self.port, self.proc, settle_s=0.2)
        return self

    def kill9(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, 15)
            self.proc = None


class Writer(threading.Thread):
    """One table logging ``total`` events, ``rate`` a second, into its store."""

    def __init__(self, table: "CafeTable", total: int, rate: float):
        super().__init__(daemon=True, name=f"writer-{table.tid}")
        self.table, self.total, self.rate = table, total, rate
        self.done = 0
        self.stop = threading.Event()

    def run(self) -> None:
        t = self.table
        gid = t.session.new_game("chope", ["ana", "bo", "cy"])
        start = time.monotonic()
        while self.done < self.total and not self.stop.is_set():
            due = start + self.done / self.rate
            if due > time.monotonic():
                self.stop.wait(due - time.monotonic())
            t.store.append(gid, {"type": "stop"} if self.done % 2 else
                           {"type": "flip", "card": "food:laksa"})
            self.done += 1
            if t.pub is not None:
                t.pub._wake.set()


class CafeTable:
    """A table Pi: its store, session and publisher on the café broker."""

    def __init__(self, root: Path, tid: str, url: str, secret: Path, stall_s: float):
        self.tid = tid
        self.store = Store(root / f"{tid}.db")
        self.session = TableSession(self.store)
        self.pub = LeaguePublisher(self.session, self.store, url, tid,
                                   Credentials.from_file(tid, secret), reconnect_s=(1, 2),
                                   stall_s=stall_s)

    def ids(self) -> list[int]:
        return [r[0] for r in self.store._read(
            "SELECT e.id FROM events e JOIN games g ON g.id = e.game_id"
            " WHERE g.source = 'table' ORDER BY e.id")]

    def close(self) -> None:
        self.pub.close(timeout_s=2)
        self.store.close()


class CafeNight:
    """The whole setup in ``root``: central broker, café broker bridged to it
    through a :class:`Relay`, the league process, ``tables`` tables."""

    def __init__(self, root: Path, tables: list[str], stall_s: float = 10.0):
        self.root = Path(root)
        run_as = "root" if os.geteuid() == 0 else None
        cport, fport = free_port(), free_port()
        central = generate(self.root / "central", [], port=cport, bind="127.0.0.1",
                           run_as=run_as, cafes={"cafe1": list(tables)})
        self.central = Mosquitto(central, cport, settle_s=0.2)
        self.relay = Relay(cport)
        cafe = generate(self.root / "cafe", list(tables), port=fport, bind="127.0.0.1",
                        run_as=run_as,
                        bridge={"central": f"mqtt://127.0.0.1:{self.relay.port}",
                                "user": "cafe1", "password_file": central["secrets"]["cafe1"]})
        self.cafe = Mosquitto(cafe, fport, settle_s=0.2)
        self.league = LeagueProcess(f"mqtt://127.0.0.1:{cport}", self.root / "league.db",
                                    central["secrets"]["league"], self.root / "league.log")
        self.tables = [CafeTable(self.root, t, f"mqtt://127.0.0.1:{fport}",
                                 cafe["secrets"][t], stall_s) for t in tables]
        self.faults: list[tuple[float, str]] = []

    def start(self) -> "CafeNight":
        self.central.start()
        self.league.start()
        self.cafe.start()
        for t in self.tables:
            t.pub.start()
        return self

    def _note(self, what: str, t0: float) -> None:
        self.faults.append((round(time.monotonic() - t0, 1), what))

    def run_faults(self, scale: float, calm_s: float = 2.0) -> None:
        """The faults of the module doc, ``calm_s`` apart. The league is
        killed first and stays down while the central broker dies, so the
        broker's loss is the league's queue: what it had acknowledged to the
        café's bridge in its last 5 s and not yet written to disk."""
        t0 = time.monotonic()
        time.sleep(calm_s)
        self._note("bridge cut", t0)
        self.relay.cut()
        time.sleep(CUT_S * scale)
        self.relay.heal()
        self._note("bridge back", t0)
        time.sleep(calm_s)
        self.league.kill9()
        self._note("league kill -9", t0)
        stale = self.central.save_copy()
        time.sleep(STALE_S)
        self.central.kill9(stale)
        self._note("central broker kill -9 (file 5 s stale)", t0)
        time.sleep(1.0)
        self.central.start()
        self._note("central broker back", t0)
        time.sleep(1.0)
        self.league.start()
        self._note("league back", t0)

    def league_ids(self) -> dict[str, list[tuple[str, int]]]:
        """What the league's store holds: (store id, event id) per table."""
        conn = sqlite3.connect(f"file:{self.root / 'league.db'}?mode=ro", uri=True,
                               timeout=10)
        try:
            out: dict[str, list] = {}
            for table, store, eid in conn.execute(
                    "SELECT table_id, store, event_id FROM events ORDER BY table_id, event_id"):
                out.setdefault(table, []).append((store, eid))
            return out
        except sqlite3.Error:
            return {}
        finally:
            conn.close()

    def tally(self) -> tuple[int, int]:
        """``(lost, duplicated)``: events logged at a table that the league
        does not hold, and rows the league holds beyond one per logged event."""
        held = self.league_ids()
        lost = dup = 0
        for t in self.tables:
            want = {(t.pub.store_id, i) for i in t.ids()}
            rows = held.get(t.tid, [])
            lost += len(want - set(rows))
            dup += len(rows) - len(set(rows) & want)
        return lost, dup

    def settle(self, timeout_s: float) -> bool:
        """Wait until the league holds every event logged (or ``timeout_s``)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.tally()[0] == 0:
                return True
            time.sleep(0.5)
        return False

    def close(self) -> None:
        for t in self.tables:
            try:
                t.close()
            except Exception:   # noqa: BLE001 - close the rest
                pass
        self.league.stop()
        self.cafe.stop()
        self.relay.close()
        self.central.stop()


def night(root: Path, tables: int, per_table: int, rate: float, scale: float,
          settle_s: float = 180.0) -> dict:
    """Run a night with the faults; ``{"lost", "duplicated", "logged",
    "faults", "settled_s", "rewinds"}`` (``rewinds``: how often a table sent
    again from the league's mark)."""
    ids = [f"t{i}" for i in range(1, tables + 1)]
    n = CafeNight(root, ids).start()
    writers = [Writer(t, per_table, rate) for t in n.tables]
    try:
        for w in writers:
            w.start()
        n.run_faults(scale)
        for w in writers:
            w.join(per_table / rate + 60)
        t0 = time.monotonic()
        n.settle(settle_s)
        lost, dup = n.tally()
        return {"lost": lost, "duplicated": dup, "logged": sum(w.done for w in writers),
                "faults": n.faults, "settled_s": time.monotonic() - t0,
                "rewinds": sum(t.pub.rewinds for t in n.tables)}
    finally:
        for w in writers:
            w.stop.set()
        n.close()


__all__ = ["MOSQUITTO", "CafeNight", "CafeTable", "LeagueProcess", "Relay", "Writer",
           "fault_scale", "night"]
