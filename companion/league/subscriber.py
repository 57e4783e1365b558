"""The league's end of the broker: every table's messages into its store,
and each table's delivery mark back out.

:class:`LeagueSubscriber` is one MQTT v5 client with a *persistent session*
(``clean_start=False``, a long session expiry), subscribed to
``<prefix>/#`` with QoS 1. The broker queues the tables' events while the
league is away and hands them over when it is back. Each message is written
to the store before paho acknowledges it (the acknowledgement goes out when
the callback returns), so a message the broker considers delivered is on
the league's disk. The table id is taken from the topic (which the broker's
ACL ties to the table's user), never from the payload.

Trust nothing a table sends: every field is checked
(:mod:`.topics`' ``check_*``), a message over the size limit or with one
bad field is refused, logged and counted on that table's card, and nothing
else changes.

End-to-end delivery: the broker's acknowledgement only says the *broker*
has a message (a broker that dies, a bridge that is cut, a session that
is lost can still lose it). So the league publishes, per table, the last
event id up to which it holds *every* event of that table's store (its
*mark*, :meth:`LeagueStore.mark`) on ``<prefix>/<table>/mark``, retained,
QoS 1: within ``mark_every_s`` of a change, every ``heartbeat_s`` for every
table (so a table sees the league alive and its mark not moving) and on
every (re)connect (a broker restored from a stale file may hold an old
one). A table the league has heard of but holds no event of (the league
started after the table's events went out: it hears only their retained
state and results) gets a mark naming no store (``topics.NO_STORE``) the
moment it is first heard. The table's publisher re-sends from the mark
whenever it lags behind what the broker acknowledged, and everything it
published since it joined when the mark names another store; the store
keys events by (table, store id, event id), so a re-sent event is stored
once.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from .client import mqtt_client
from .store import LeagueStore
from .topics import (DEFAULT_PREFIX, BrokerURL, Credentials, LeagueError, Topics,
                     check_table_id, dumps, loads)

log = logging.getLogger(__name__)

#: A league screen that is away keeps its queue at the broker this long.
SESSION_EXPIRY_S = 14 * 24 * 3600


class LeagueSubscriber:
    """Receives every table's messages into the :class:`LeagueStore` and
    publishes each table's mark (see the module doc).

    ``name`` makes the broker session's client id (two league screens need
    two names, and two broker users: the broker binds client ids to users).
    ``on_stored(kind, data)`` is called after each message is stored (the
    :class:`~companion.league.app.Hub`). :meth:`status` reports the
    connection."""

    def __init__(self, store: LeagueStore, url: str, credentials: Credentials | None = None,
                 *, prefix: str = DEFAULT_PREFIX, name: str = "league",
                 on_stored: Callable[[str, dict], None] | None = None,
                 reconnect_s: tuple[int, int] = (1, 10), keepalive_s: int = 15,
                 mark_every_s: float = 1.0, heartbeat_s: float = 5.0,
                 ca_file: str | None = None):
        self.store = store
        self.broker = BrokerURL.parse(url)
        self.credentials = credentials
        self.topics = Topics(prefix)
        self.name = check_table_id(name)
        self.on_stored = on_stored
        self.reconnect_s, self.keepalive_s = reconnect_s, keepalive_s
        self.mark_every_s, self.heartbeat_s = mark_every_s, heartbeat_s
        self.ca_file = ca_file
        self.connected = False
        self.error: str | None = None
        self.received = self.duplicates = self.rejected = 0
        self.events = 0             # new events stored (not duplicates)
        self.marks_sent = 0
        self.disconnects = 0        # connections lost (a session taken over counts)
        self._client = None
        self._stop = threading.Event()
        self._all_marks = threading.Event()   # publish every table's mark now
        self._thread: threading.Thread | None = None

    def start(self) -> "LeagueSubscriber":
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        client = mqtt_client(self.broker, self.credentials,
                             f"{self.topics.prefix}-league-{self.name}", self.reconnect_s,
                             ca_file=self.ca_file)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        self._client = client
        client.connect_async(self.broker.host, self.broker.port, keepalive=self.keepalive_s,
                             clean_start=False, properties=props)
        client.loop_start()
        self._thread = threading.Thread(target=self._marks_loop, daemon=True,
                                        name="league-marks")
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        client, self._client = self._client, None
        if client is not None:
            try:
                client.disconnect()
            except Exception:
                pass
            client.loop_stop()
        self.connected = False

    def status(self) -> dict:
        return {"broker": str(self.broker), "connected": self.connected, "error": self.error,
                "received": self.received, "events": self.events, "duplicates": self.duplicates,
                "rejected": self.rejected, "marks_sent": self.marks_sent,
                "disconnects": self.disconnects}

    def _on_connect(self, client, userdata, flags, reason_code, properties=None):
        if reason_code.is_failure:
            self.error = f"the broker refused the league: {reason_code}"
            log.warning("league: %s", self.error)
            return
        self.connected, self.error = True, None
        client.subscribe(self.topics.everything, qos=1)
        self._all_marks.set()
        self._notify("status", {"league": True, "connected": True})

    def _on_disconnect(self, client, userdata, flags, reason_code, properties=None):
        if self.connected:
            self.disconnects += 1
        self.connected = False
        self._notify("status", {"league": True, "connected": False})

    def _on_message(self, client, userdata, message) -> None:
        try:
            self.handle(message.topic, message.payload)
        except Exception:   # a bad message must never stop the league
            log.exception("league: message on %s could not be stored", message.topic)
            self.rejected += 1

    # -- marks -----------------------------------------------------------------
    def _marks_loop(self) -> None:
        """Publish the marks that moved (every ``mark_every_s``), every mark
        after each connect, and each table's mark once every ``heartbeat_s``
        (a slice of the tables each round, so a hall of tables is not one
        burst)."""
        turn = 0
        while not self._stop.wait(self.mark_every_s):
            if not self.connected:
                continue
            tables = self.store.take_marks_changed()
            every = [r[0] for r in self.store.rows("SELECT table_id FROM tables"
                                                   " ORDER BY table_id")]
            if self._all_marks.is_set():
                self._all_marks.clear()
                tables.update(every)
            elif every:
                rounds = max(1, round(self.heartbeat_s / self.mark_every_s))
                tables.update(t for i, t in enumerate(every) if i % rounds == turn % rounds)
                turn += 1
            for table in sorted(tables):
                self.publish_mark(table)

    def publish_mark(self, table: str) -> bool:
        """Publish one table's mark (retained, QoS 1); False if not connected."""
        client = self._client
        try:
            mark = self.store.mark(table)
        except Exception:       # the store closing under us: the next round retries
            log.exception("league: cannot read %s's mark", table)
            return False
        if client is None or mark is None:
            return False
        info = client.publish(self.topics.mark(table), dumps(mark), qos=1, retain=True)
        if info.rc == 0:
            self.marks_sent += 1
        return info.rc == 0

    # -- what arrives ----------------------------------------------------------
    def handle(self, topic: str, payload: bytes) -> str | None:
        """Store one message; its kind, or None if it was refused (not a
        league topic, not our wire format, a bad field), empty (a cleared
        retained one) or one of the league's own marks."""
        if topic.startswith(f"{self.topics.prefix}/_"):
            return None     # the league's own tree (no table id starts with "_"), heard back
        where = self.topics.parse(topic)
        if where is None or not payload:
            if payload:
                self.rejected += 1
                log.warning("league: refused a message on %s: not a league topic", topic)
            return None
        table, kind, game_id = where
        if kind == "mark":
            return None                 # the league's own, heard back
        try:
            data = self._store(table, kind, game_id, loads(payload), time.time_ns())
        except (LeagueError, ValueError, KeyError, TypeError) as exc:
            self.rejected += 1
            log.warning("league: refused a message on %s: %s", topic, exc)
            try:
                self.store.refuse(table, f"{kind}: {exc}")
            except Exception:
                log.exception("league: cannot count a refusal")
            return None
        self.received += 1
        self._notify(kind, data)
        for counted in self.store.take_counted():   # a result its last events completed
            if kind != "game" or counted.get("game_id") != game_id:
                self._notify("game", counted)
        return kind

    def _store(self, table: str, kind: str, game_id: int | None, msg: dict, now: int) -> dict:
        if kind == "event":
            new = self.store.add_event(table, msg, now)
            self.store.marks_changed.add(table)         # its heard_ns moved
            if new:
                self.events += 1
            else:
                self.duplicates += 1
            return {"table": table, "id": msg["id"], "line": msg.get("line"), "new": new}
        if kind == "state":
            self.store.set_state(table, msg, now)
            return {"table": table, "version": msg.get("version")}
        if kind == "status":
            if not isinstance(msg.get("online"), bool):
                raise LeagueError("online must be true or false")
            self.store.set_status(table, msg["online"], now)
            return {"table": table, "online": msg["online"]}
        self.store.set_result(table, game_id, msg, now)
        return {"table": table, "game_id": game_id, "finished": bool(msg.get("finished"))}

    def send(self, topic: str, payload: bytes) -> None:
        """Publish a retained QoS 1 message (a convention's pairing); paho
        queues it while the broker is away."""
        client = self._client
        if client is not None:
            client.publish(topic, payload, qos=1, retain=True)

    def _notify(self, kind: str, data: dict) -> None:
        if self.on_stored is not None:
            try:
                self.on_stored(kind, data)
            except Exception:
                log.exception("league: a live update failed")


__all__ = ["LeagueSubscriber", "SESSION_EXPIRY_S"]
