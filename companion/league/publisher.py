"""The table publisher: the table's durable log, out to the league's broker.

Off by default; ``companion serve --league mqtt://host:port`` turns it on.
The *log* is the queue: the publisher reads the table's events from the
store by id (never only from live updates) and publishes each one with
QoS 1 to ``<prefix>/<table>/event``, keyed by (table id, event id), so a
duplicate delivery is harmless. The highest event id up to which the broker
acknowledged *every* event is kept in the same SQLite file (table
``league_published``, created here with ``CREATE TABLE IF NOT EXISTS``);
after a restart, a lost network or a broker that went away, publishing
resumes from there. An hour offline is an hour of events still in the log,
sent when the broker is back.

Besides events it publishes, all QoS 1:

* the table's current state, *retained* (``<prefix>/<table>/state``), so a
  league page that starts late sees every table at once;
* each finished game's result, retained (``<prefix>/<table>/game/<id>``),
  once every event of the game is acknowledged (and again, as "playing
  again", if its last event is undone); what was acknowledged is kept in
  ``league_results``;
* ``online`` / ``offline`` on ``<prefix>/<table>/status`` (``offline`` is
  the broker's will, sent if the table vanishes).

Hidden information never leaves the table: an event goes out as
``game.public_event(event)`` with its public line, the state is the public
snapshot (scores and ranking left out while a game hides them), and a
result is the game's final public summary. The same rule as the phones.

Threads: paho's network thread only queues what it hears (connect,
disconnect, acknowledgements); one publisher thread reads the store, calls
``publish`` and records progress. Every wait is bounded.

>>> # pub = LeaguePublisher(session, store, "mqtt://league.local:1883", "t1",
>>> #                       Credentials("t1", "secret")).start()
>>> # ...; pub.close()
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
import time
from collections import deque
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Callable

from .client import mqtt_client
from .topics import (DEFAULT_PREFIX, MAX_MESSAGE_BYTES, BrokerURL, Credentials, LeagueError,
                     Topics, check_table_id, dumps)

log = logging.getLogger(__name__)

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS league_published (
        table_id TEXT PRIMARY KEY,      -- this table's id in the league
        since INTEGER NOT NULL,         -- events up to this id were never published (before joining)
        acked INTEGER NOT NULL,         -- every event up to this id is acknowledged by the broker
        updated INTEGER NOT NULL        -- wall clock, Unix ns
    )""",
    """CREATE TABLE IF NOT EXISTS league_identity (
        store TEXT NOT NULL             -- this store's id in the league (random, made once)
    )""",
    """CREATE TABLE IF NOT EXISTS league_results (
        table_id TEXT NOT NULL,
        game_id INTEGER NOT NULL,
        version INTEGER,                -- the game's last event id when its result was acknowledged
        finished INTEGER NOT NULL,      -- 1: the result; 0: "playing again" (an undone ending)
        PRIMARY KEY (table_id, game_id)
    )""",
)

#: State-update keys of the public snapshot that go to the league.
STATE_KEYS = ("game", "title", "game_id", "version", "hides_scores", "score_unit",
              "current_player", "finished", "last_event")


def public_state(snapshot: dict) -> dict:
    """The part of the table's public snapshot the league shows: game,
    players, whose turn, scores, the last race, the last event's public
    line. Scores and ranking are left out while the game hides them.

    >>> public_state({"game": None, "players": [], "scores": {}, "race": None})["game"]
    """
    out = {k: snapshot.get(k) for k in STATE_KEYS}
    out["players"] = [{"name": p.get("name"), "colour": p.get("colour")}
                      for p in snapshot.get("players") or []]
    hidden = bool(snapshot.get("hides_scores")) and not snapshot.get("finished")
    out["scores"] = None if hidden else snapshot.get("scores")
    out["ranking"] = None if hidden else snapshot.get("ranking")
    race = snapshot.get("race")
    out["race"] = None if not isinstance(race, dict) else {
        k: race.get(k) for k in ("reason", "title", "kind", "phase", "announced", "text",
                                 "virtual")}
    return out


class _Db:
    """The store's SQLite file, for the publisher: its own connection to the
    file (WAL lets it read while the table writes), or, for an in-memory
    store, the store's own connection under the store's lock
    (:meth:`~companion.record.store.Store.locked`)."""

    def __init__(self, store_or_path):
        lock = threading.RLock()
        #: a context manager that holds the lock guarding :attr:`conn`
        self.locked: Callable[[], AbstractContextManager] = lambda: lock
        self.own = True
        if hasattr(store_or_path, "path") and hasattr(store_or_path, "conn"):
            if getattr(store_or_path, "memory", False):
                self.conn = store_or_path.conn
                self.locked = store_or_path.locked
                self.own = False
                return
            path = store_or_path.path
        else:
            path = store_or_path
        if str(path) == ":memory:" or not Path(path).exists():
            raise LeagueError(f"the table's store {path} does not exist: open the table first")
        try:
            self.conn = sqlite3.connect(str(path), timeout=10.0, isolation_level=None,
                                        check_same_thread=False)
            self.conn.execute("PRAGMA synchronous=NORMAL")   # a lost ack only means a resend
        except sqlite3.Error as exc:
            raise LeagueError(f"cannot open the table's store {path}: {exc}") from None

    def rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self.locked():
            return self.conn.execute(sql, args).fetchall()

    def write(self, sql: str, args: tuple = ()) -> None:
        with self.locked():
            self.conn.execute(sql, args)

    def close(self) -> None:
        if self.own:
            with self.locked():
                self.conn.close()


class LeaguePublisher:
    """Publishes one table's log to the league broker; see the module doc.

    ``session``: the table's :class:`~companion.table.session.TableSession` (its
    updates wake the publisher and give the public state); ``store``: the
    :class:`~companion.record.store.Store` or its file path; ``url``:
    ``mqtt://host:port``; ``table_id``: the table's id and broker user;
    ``credentials``: :class:`Credentials` (None: anonymous, only for a
    broker that allows it). On first start the league gets the table's
    current game and everything after (``from_start=True``: the whole
    history). ``window``: events in flight before waiting for
    acknowledgements.

    :meth:`start` returns at once: the broker may be down; the table plays
    on and the publisher catches up when it comes back. :meth:`status`
    says where it is; :meth:`flush` waits (bounded) until everything the
    log holds is acknowledged.
    """

    def __init__(self, session, store, url: str, table_id: str,
                 credentials: Credentials | None = None, *, prefix: str = DEFAULT_PREFIX,
                 window: int = 200, keepalive_s: int = 15, from_start: bool = False,
                 reconnect_s: tuple[int, int] = (1, 10), ack_timeout_s: float = 30.0,
                 refused_retry_s: float = 15.0, poll_s: float = 1.0, stall_s: float = 10.0,
                 ca_file=None):
        self.session = session
        self.store = store
        self.broker = BrokerURL.parse(url)
        self.table_id = check_table_id(table_id)
        if credentials is not None and not isinstance(credentials, Credentials):
            raise LeagueError("credentials must be a league Credentials(username, password)")
        self.credentials = credentials
        self.topics = Topics(prefix)
        if not isinstance(window, int) or window < 1:
            raise LeagueError("window must be a positive whole number")
        self.window = window
        self.keepalive_s = keepalive_s
        self.from_start = from_start
        self.reconnect_s = reconnect_s
        self.ack_timeout_s = ack_timeout_s
        self.refused_retry_s = refused_retry_s
        self.poll_s = poll_s
        self.stall_s = stall_s
        self.ca_file = ca_file
        self._db: _Db | None = None
        self.store_id = ""
        self._seq = 0                               # published events up to the cursor
        self._init_marks()
        self._client = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._control: queue.SimpleQueue = queue.SimpleQueue()
        self._unsubscribe = None
        self._lock = threading.Lock()      # guards the fields status() reads
        # publisher-thread state
        self.since = 0
        self.acked = 0
        self._saved = 0
        self._cursor = 0
        self._order: deque[int] = deque()          # event ids in flight, in publish order
        self._acked_ids: set[int] = set()
        self._inflight: dict[int, tuple] = {}       # mid -> (kind, key, sent_monotonic)
        self._results_inflight: set = set()
        self._connected = False
        self._state_dirty = True
        self._results_dirty = True
        self._refused_until = 0.0
        # counters
        self.published = 0
        self.acknowledged = 0
        self.refused = 0
        self.connects = 0
        self.error: str | None = None
        self._listening: list[tuple[str, Any]] = []     # (topic, callback): see listen()

    def _init_marks(self) -> None:
        self.mark: int | None = None                # the league's mark for this store
        self._mark_moved = 0.0                      # when it last moved (monotonic)
        self._mark_fresh = False                    # no mark seen since the last connect
        self._heard = None                          # the mark's heard_ns, last seen
        self._rewound_at: tuple[int, float] | None = None   # (mark, when) of the last rewind
        self._backoff = 1
        self.rewinds = 0

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "LeaguePublisher":
        """Open the progress rows, subscribe to the session and connect
        (in the background); returns at once."""
        self._db = _Db(self.store)
        for sql in SCHEMA:
            self._db.write(sql)
        self._load_progress()
        client = mqtt_client(self.broker, self.credentials,
                             f"{self.topics.prefix}-table-{self.table_id}", self.reconnect_s,
                             ca_file=self.ca_file)
        client.will_set(self.topics.status(self.table_id), self._status_payload(False),
                        qos=1, retain=True)
        client.max_inflight_messages_set(min(self.window, 100))
        client.max_queued_messages_set(0)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        client.on_connect_fail = self._on_connect_fail
        self._client = client
        self._unsubscribe = self.session.subscribe(self._on_update)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"league-publisher-{self.table_id}")
        self._thread.start()
        client.connect_async(self.broker.host, self.broker.port, keepalive=self.keepalive_s,
                             clean_start=True)
        client.loop_start()
        return self

    def close(self, timeout_s: float = 5.0) -> None:
        """Say ``offline``, stop, and keep the progress (bounded by ``timeout_s``)."""
        if self._unsubscribe is not None:
            try:
                self._unsubscribe()
            except Exception:   # the session may already be gone
                pass
            self._unsubscribe = None
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
        client = self._client
        if client is not None:
            if self._connected:
                try:
                    info = client.publish(self.topics.status(self.table_id),
                                          self._status_payload(False), qos=1, retain=True)
                    info.wait_for_publish(min(1.0, timeout_s))
                except (RuntimeError, ValueError):
                    pass
            try:
                client.disconnect()
            except Exception:
                pass
            client.loop_stop()
            self._client = None
        if self._db is not None:
            try:
                self._save_progress()
            except sqlite3.Error as exc:
                log.warning("league: could not save progress: %s", exc)
            self._db.close()
            self._db = None

    def __enter__(self) -> "LeaguePublisher":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- progress ----------------------------------------------------------
    _EVENTS = ("SELECT e.id, e.game_id, e.body, e.created, g.game, g.players FROM events e"
               " JOIN games g ON g.id = e.game_id WHERE e.id > ? AND g.source = 'table'"
               " ORDER BY e.id LIMIT ?")

    def _load_progress(self) -> None:
        ident = self._db.rows("SELECT store FROM league_identity")
        if not ident:
            import uuid
            self._db.write("INSERT INTO league_identity VALUES (?)", (uuid.uuid4().hex,))
            ident = self._db.rows("SELECT store FROM league_identity")
        self.store_id = ident[0][0]
        rows = self._db.rows("SELECT since, acked FROM league_published WHERE table_id = ?",
                             (self.table_id,))
        if rows:
            self.since, self.acked = rows[0]
        else:
            self.since = 0 if self.from_start else self._joining_point()
            self.acked = self.since
            self._db.write("INSERT INTO league_published VALUES (?, ?, ?, ?)",
                           (self.table_id, self.since, self.acked, time.time_ns()))
        self._saved = self._cursor = self.acked
        self._seq = self._count_upto(self._cursor)

    def _joining_point(self) -> int:
        """Where a table joining the league starts: just before its current
        game's first event (or after everything, with no current game)."""
        cur = self._db.rows("SELECT value FROM meta WHERE key = 'current_game'")
        last = self._db.rows("SELECT COALESCE(MAX(id), 0) FROM events")[0][0]
        if not cur:
            return last
        first = self._db.rows("SELECT MIN(id) FROM events WHERE game_id = ?",
                              (int(cur[0][0]),))[0][0]
        return last if first is None else first - 1

    def _save_progress(self) -> None:
        if self.acked != self._saved:
            self._db.write("UPDATE league_published SET acked = ?, updated = ? WHERE table_id = ?",
                           (self.acked, time.time_ns(), self.table_id))
            self._saved = self.acked

    def latest(self) -> int:
        """The id of the last event of this table's log the league should get."""
        return self._db.rows("SELECT COALESCE(MAX(e.id), 0) FROM events e JOIN games g ON"
                             " g.id = e.game_id WHERE g.source = 'table' AND e.id > ?",
                             (self.since,))[0][0] or self.since

    def status(self) -> dict:
        """Where the publisher is: ``broker``, ``table``, ``connected``,
        ``acked`` (every event up to this id is at the broker), ``latest``
        (the log's last event), ``pending``, ``published``, ``refused``,
        ``error`` (the last refusal or connection error, or null)."""
        with self._lock:
            out = {"broker": str(self.broker), "table": self.table_id, "store": self.store_id,
                   "connected": self._connected, "since": self.since, "acked": self.acked,
                   "league_mark": self.mark, "rewinds": self.rewinds,
                   "published": self.published, "acknowledged": self.acknowledged,
                   "refused": self.refused, "connects": self.connects, "error": self.error}
        try:
            out["latest"] = self.latest() if self._db is not None else None
        except sqlite3.Error:
            out["latest"] = None
        out["pending"] = None if out["latest"] is None else max(0, out["latest"] - out["acked"])
        return out

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every event in the log (and every finished game's
        result) is acknowledged; False if ``timeout_s`` passes first."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self._db is not None and self.acked >= self.latest() and \
                    not self._results_inflight and not self._results_dirty:
                return True
            self._wake.set()
            time.sleep(0.02)
        return False

    def delivered(self, timeout_s: float = 10.0) -> bool:
        """Wait until the *league* says it holds every event in the log (its
        mark); False if ``timeout_s`` passes first."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self._db is not None and self.mark is not None and self.mark >= self.latest():
                return True
            self._wake.set()
            time.sleep(0.05)
        return False

    # -- paho's thread: only queue what happened ----------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties=None):
        if reason_code.is_failure:
            with self._lock:
                self.error = f"the broker refused the connection: {reason_code}"
            log.warning("league: %s", self.error)
            return
        client.drop_out_messages()    # the log is the queue: resend from the acked point
        client.subscribe(self.topics.mark(self.table_id), qos=1)
        for topic, _ in list(self._listening):
            client.subscribe(topic, qos=1)
        self._control.put(("connected",))
        self._wake.set()

    def _on_connect_fail(self, client, userdata):
        with self._lock:
            self.error = (f"cannot connect to {self.broker} (down, unreachable, or its TLS "
                          f"certificate not trusted)")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties=None):
        self._control.put(("disconnected", str(reason_code)))
        self._wake.set()

    def _on_publish(self, client, userdata, mid, reason_code, properties=None):
        self._control.put(("ack", mid, reason_code.is_failure, str(reason_code)))
        self._wake.set()

    def _on_message(self, client, userdata, message):
        if message.topic == self.topics.mark(self.table_id):
            self._control.put(("mark", bytes(message.payload)))
            self._wake.set()

    def _on_update(self, update: dict) -> None:
        if update.get("type") == "state":
            self._state_dirty = True
            self._results_dirty = True
            self._wake.set()

    # -- the publisher thread -------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll_s)
            self._wake.clear()
            try:
                self._step()
            except sqlite3.Error as exc:        # the store is busy or gone: try again later
                with self._lock:
                    self.error = f"cannot read the table's store: {exc}"
                log.warning("league: %s", self.error)
                self._stop.wait(self.poll_s)
            except Exception:                   # never let the table's publisher die silently
                log.exception("league publisher failed; retrying")
                self._stop.wait(self.poll_s)

    def _step(self) -> None:
        self._handle_control()
        now = time.monotonic()
        if self._connected and now >= self._refused_until:
            if self._inflight and now - min(t for *_, t in self._inflight.values()) \
                    > self.ack_timeout_s:
                log.warning("league: no acknowledgement for %.0f s; resending from event %d",
                            self.ack_timeout_s, self.acked)
                self._reset_flight()
            self._fill()
            if self._results_dirty:
                self._publish_results()
            if self._state_dirty:
                self._publish_state()
        self._save_progress()

    def _handle_control(self) -> None:
        while True:
            try:
                item = self._control.get_nowait()
            except queue.Empty:
                return
            kind = item[0]
            if kind == "connected":
                with self._lock:
                    self._connected = True
                    self.connects += 1
                    self.error = None
                self._reset_flight()
                self._mark_fresh = True
                self._state_dirty = self._results_dirty = True
                self._send(self.topics.status(self.table_id), self._status_payload(True),
                           ("status", None), retain=True)
            elif kind == "disconnected":
                with self._lock:
                    was, self._connected = self._connected, False
                if was:
                    log.info("league: lost the broker (%s); the table plays on", item[1])
                self._reset_flight()
            elif kind == "ack":
                self._ack(item[1], item[2], item[3])
            elif kind == "mark":
                self._on_mark(item[1])

    def _reset_flight(self) -> None:
        """Forget what is in flight; publish again from the acknowledged point."""
        self._inflight.clear()
        self._order.clear()
        self._acked_ids.clear()
        self._results_inflight.clear()
        self._cursor = self.acked
        self._seq = self._count_upto(self._cursor)

    def _count_upto(self, eid: int) -> int:
        """How many of the log's published events (after ``since``) are up to ``eid``."""
        return self._db.rows("SELECT COUNT(*) FROM events e JOIN games g ON g.id = e.game_id"
                             " WHERE g.source = 'table' AND e.id > ? AND e.id <= ?",
                             (self.since, eid))[0][0]

    # -- the league's mark ------------------------------------------------------
    def _on_mark(self, payload: bytes) -> None:
        """The league's mark for this table: re-send from it if it lags
        behind what the broker acknowledged: just after a connect; when the
        league is alive (its marks arrive) but neither its mark nor the last
        event it heard from us (``heard_ns``: a league busy with a backlog
        is still hearing our stream) has moved for ``stall_s``, backing off
        while that repeats; and, when it reports events beyond a hole, the
        hole's events only. Results the league does not hold are sent again."""
        from .topics import check_mark, loads

        try:
            mark = check_mark(loads(payload))
        except LeagueError as exc:
            log.warning("league: ignored a mark: %s", exc)
            return
        now = time.monotonic()
        if mark["store"] != self.store_id:      # the league knows another (older) store
            mark = {"store": self.store_id, "since": self.since, "upto": self.since,
                    "ahead": False, "results": {}}
        upto = mark["upto"]
        if mark.get("heard_ns") != self._heard:     # the league is still taking our stream
            self._heard, self._mark_moved = mark.get("heard_ns"), now
        with self._lock:
            moved, self.mark = upto != self.mark, upto
        fresh, self._mark_fresh = self._mark_fresh, False
        if moved:
            self._mark_moved = now
        if upto >= self.acked:
            self._backoff = 1
            self._check_results(mark, fresh or now - self._mark_moved >= self.stall_s)
            return
        stalled = now - self._mark_moved >= self.stall_s * self._backoff
        if fresh or stalled:
            self._rewind(upto, now)
        elif mark["ahead"] and mark.get("next"):
            self._fill_hole(upto, mark["next"], now)

    def _again(self, upto: int, now: float) -> bool:
        """False if a re-send from ``upto`` was just made (the re-sent events
        are on their way); else note this one, backing off if it repeats."""
        again = self._rewound_at is not None and self._rewound_at[0] == upto
        if again and now - self._rewound_at[1] < self.stall_s * self._backoff:
            return False
        self._backoff = min(32, self._backoff * 2) if again else 1
        self._rewound_at = (upto, now)
        self._mark_moved = now
        return True

    def _fill_hole(self, upto: int, nxt: int, now: float) -> None:
        """The league holds events beyond a hole (upto, nxt): send the hole's
        events again (at most ``window`` of them; a larger hole is a rewind)."""
        rows = self._db.rows(self._EVENTS.replace("WHERE e.id > ?", "WHERE e.id > ? AND e.id < ?"),
                             (upto, nxt, self.window + 1))
        if len(rows) > self.window:
            self._rewind(upto, now)
            return
        if not rows or not self._again(upto, now):
            return
        prev, seq = upto, self._count_upto(upto)
        for eid, gid, body, created, game, players in rows:
            seq += 1
            payload = self._event_payload(eid, gid, body, created, game, players, prev, seq)
            if not self._send(self.topics.event(self.table_id), payload, ("resend", eid)):
                return
            prev = eid
        with self._lock:
            self.rewinds += 1
        log.info("league: the league misses events %d to %d: sent them again", upto + 1, prev)

    def _rewind(self, upto: int, now: float) -> None:
        if not self._again(upto, now):
            return                      # just did: give the re-sent events time to arrive
        log.info("league: the league holds up to event %d, the broker acknowledged %d: "
                 "sending again from %d", upto, self.acked, upto)
        with self._lock:
            self.acked = max(self.since, upto)
            self.rewinds += 1
        self._reset_flight()
        self._results_dirty = True

    def _check_results(self, mark: dict, act: bool) -> None:
        """Forget the acknowledgement of a result (or "playing again") the
        league does not hold, so it is sent again."""
        if not act:
            return
        held = mark["results"]
        for gid, version, finished in self._db.rows(
                "SELECT game_id, version, finished FROM league_results WHERE table_id = ?",
                (self.table_id,)):
            if (version or 0) <= mark["upto"] and held.get(str(gid)) != version:
                self._db.write("DELETE FROM league_results WHERE table_id = ? AND game_id = ?"
                               if finished else "UPDATE league_results SET finished = 1 WHERE"
                               " table_id = ? AND game_id = ?", (self.table_id, gid))
                self._results_dirty = True

    def _ack(self, mid: int, failed: bool, reason: str) -> None:
        entry = self._inflight.pop(mid, None)
        if entry is None:
            return                      # from before a reconnect: resent anyway
        kind, key, _ = entry
        if failed:
            with self._lock:
                self.refused += 1
                self.error = (f"the broker refused a {kind} message ({reason}): is this "
                              f"table's user allowed to write {self.topics.table_tree(self.table_id)}?")
            log.warning("league: %s", self.error)
            self._refused_until = time.monotonic() + self.refused_retry_s
            self._reset_flight()
            return
        with self._lock:
            self.acknowledged += 1
        if kind == "event":
            self._acked_ids.add(key)
            advanced = False
            while self._order and self._order[0] in self._acked_ids:
                eid = self._order.popleft()
                self._acked_ids.discard(eid)
                with self._lock:
                    self.acked = eid
                advanced = True
            if advanced:
                self._results_dirty = True
        elif kind == "result":
            game_id, version, finished = key
            self._results_inflight.discard(key)
            self._db.write("INSERT OR REPLACE INTO league_results VALUES (?, ?, ?, ?)",
                           (self.table_id, game_id, version, int(finished)))

    def _send(self, topic: str, payload: bytes, entry: tuple, retain: bool = False) -> bool:
        import paho.mqtt.client as mqtt

        client = self._client
        if client is None:
            return False
        try:
            info = client.publish(topic, payload, qos=1, retain=retain)
        except (ValueError, RuntimeError) as exc:
            log.warning("league: cannot publish to %s: %s", topic, exc)
            return False
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            return False            # not connected: on_connect will start again
        self._inflight[info.mid] = (*entry, time.monotonic())
        with self._lock:
            self.published += 1
        return True

    def _fill(self) -> None:
        """Publish the log's next events, up to ``window`` in flight."""
        while len(self._order) < self.window and not self._stop.is_set():
            rows = self._db.rows(self._EVENTS, (self._cursor, self.window - len(self._order)))
            if not rows:
                return
            for eid, gid, body, created, game, players in rows:
                self._seq += 1
                payload = self._event_payload(eid, gid, body, created, game, players)
                if not self._send(self.topics.event(self.table_id), payload, ("event", eid)):
                    self._seq -= 1
                    return
                self._order.append(eid)
                self._cursor = eid

    def _event_payload(self, eid, gid, body, created, game_name, players, prev=None,
                       seq=None) -> bytes:
        from ..games import get_game
        from ..table import views

        event = json.loads(body)
        try:
            game = get_game(game_name)
        except (KeyError, ImportError):
            game = None
        if game is None:     # a tracker this build cannot load: only the event's kind
            public, line = {"type": event.get("type")}, str(event.get("type"))
        else:
            public = views.public_event(game, event)
            line = views.public_line(game, event)
        msg = {"table": self.table_id, "store": self.store_id, "id": eid,
               "prev": self._cursor if prev is None else prev,
               "seq": self._seq if seq is None else seq, "since": self.since, "game_id": gid,
               "game": game_name, "title": getattr(game, "title", game_name),
               "players": [p.get("name") for p in json.loads(players)],
               "type": public.get("type") if isinstance(public, dict) else None,
               "event": public, "line": line[:500], "logged_ns": created,
               "sent_ns": time.time_ns()}
        out = dumps(msg)
        if len(out) > MAX_MESSAGE_BYTES:     # the league would refuse it: send its kind only
            out = dumps({**msg, "event": {"type": msg["type"], "truncated": True}})
        return out

    def _publish_results(self) -> None:
        """Each game whose ending changed since the broker last acknowledged
        its result, once all its events are acknowledged."""
        self._results_dirty = False
        rows = self._db.rows(
            "SELECT g.id, g.game, g.players, g.finished, g.summary, g.created,"
            " (SELECT MAX(e.id) FROM events e WHERE e.game_id = g.id),"
            " r.version, r.finished FROM games g LEFT JOIN league_results r"
            " ON r.table_id = ? AND r.game_id = g.id WHERE g.source = 'table' AND"
            " EXISTS (SELECT 1 FROM events e WHERE e.game_id = g.id AND e.id > ?)",
            (self.table_id, self.since))
        for gid, game, players, finished, summary, created, version, r_version, r_finished \
                in rows:
            done = finished is not None and summary is not None
            want = (version, done)
            have = (r_version, bool(r_finished)) if r_finished is not None else (None, False)
            if want == have or (not done and not have[1]) or (version or 0) > self.acked:
                continue        # the same news, or no ending ever reported to undo
            key = (gid, want[0], want[1])
            if key in self._results_inflight:
                continue
            try:
                from ..games import get_game
                title = get_game(game).title
            except (KeyError, ImportError):
                title = game
            payload = self._result_payload(gid, game, title, players, version, done, summary,
                                           created, finished)
            if self._send(self.topics.game(self.table_id, gid), payload, ("result", key),
                          retain=True):
                self._results_inflight.add(key)

    def _result_payload(self, gid, game, title, players, version, done, summary, created,
                        finished) -> bytes:
        msg = {"table": self.table_id, "store": self.store_id, "game_id": gid, "game": game,
               "title": title, "players": json.loads(players), "version": version,
               "finished": done, "summary": json.loads(summary) if done else None,
               "created_ns": created, "finished_ns": finished if done else None,
               "sent_ns": time.time_ns()}
        if done:
            msg.update(self._game_facts(gid, game))
        return dumps(msg)

    def _game_facts(self, gid: int, game_name: str) -> dict:
        """What the league needs to replay a game: its options, how many
        events it has, and whether any of them hides something on the wire."""
        from ..games import get_game
        from ..table import views

        rows = self._db.rows("SELECT body FROM events WHERE game_id = ? ORDER BY id", (gid,))
        options = self._db.rows("SELECT options FROM games WHERE id = ?", (gid,))[0][0]
        try:
            game = get_game(game_name)
        except (KeyError, ImportError):
            game = None
        hidden = game is None
        for (body,) in rows:
            ev = json.loads(body)
            if not hidden and views.public_event(game, ev) != ev:
                hidden = True
        return {"events": len(rows), "hidden": hidden, "options": json.loads(options)}

    def _publish_state(self) -> None:
        self._state_dirty = False
        try:
            snap = self.session.snapshot()
        except Exception:
            log.exception("league: no snapshot")
            return
        payload = dumps({"table": self.table_id, "store": self.store_id, **public_state(snap),
                         "acked": self.acked, "sent_ns": time.time_ns()})
        if not self._send(self.topics.state(self.table_id), payload, ("state", None),
                          retain=True):
            self._state_dirty = True

    # -- from the league to this table (a convention's pairing) ---------------
    def listen(self, topic: str, callback) -> None:
        """Also receive ``topic`` on this table's connection (subscribed,
        QoS 1, at every connect): ``callback(payload: bytes)`` runs in
        paho's thread for each message (retained ones too)."""
        self._listening.append((topic, callback))
        client = self._client
        if client is not None:
            client.message_callback_add(topic, lambda c, u, msg: callback(msg.payload))
            if client.is_connected():     # else (or also) on_connect subscribes it
                client.subscribe(topic, qos=1)

    def _status_payload(self, online: bool) -> bytes:
        return dumps({"table": self.table_id, "online": online})


def publisher_from_options(session, store, url: str | None, table_id: str | None,
                           user: str | None = None, password_file=None, ca_file=None,
                           **kwargs: Any) -> "LeaguePublisher | None":
    """The publisher ``companion serve --league URL --table-id ID
    [--league-user USER --league-password-file FILE]`` asks for (None when
    ``url`` is None); LeagueError names a missing or bad option. The user
    defaults to the table id (as ``python -m companion.league config``
    names them)."""
    if not url:
        return None
    if not table_id:
        raise LeagueError("--league needs --table-id (this table's id in the league)")
    creds = None
    if password_file:
        creds = Credentials.from_file(user or table_id, password_file)
    elif user:
        raise LeagueError("--league-user needs --league-password-file")
    return LeaguePublisher(session, store, url, table_id, creds, ca_file=ca_file, **kwargs)


__all__ = ["LeaguePublisher", "public_state", "publisher_from_options", "SCHEMA"]
