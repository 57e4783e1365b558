"""Server-Sent Events: one table session fanned out to every open page.

The :class:`Broker` subscribes once to the session's stream of events
(:mod:`companion.table.events`), in the pages' form
(:meth:`TableSession.subscribe`: each event's JSON update), and copies each
update, encoded once, into a small bounded queue per connected page. A page's stream
(:meth:`Broker.stream`) starts with a full snapshot, or, when the browser
comes back with ``Last-Event-ID``, with the log's updates since that id
(:meth:`TableSession.updates_since`); then it sends updates as they come and
a ``heartbeat`` event every ``heartbeat_s`` seconds so the page's watchdog
knows the connection is alive. A page that cannot keep up (its queue is full)
is not allowed to slow the others: its queue is emptied and it gets a fresh
snapshot instead.

Wire format (docs/web.md)::

    retry: 2000

    id: 41
    event: snapshot
    data: {"type": "snapshot", "id": 41, "data": {...snapshot...}, "now_ns": ...}

    id: 42
    event: state
    data: {"id": 42, "type": "state", "data": {...}, "pub_ns": ..., "now_ns": ...}

    event: press
    data: {"id": null, "type": "press", "data": {...}, "version": 42, ...}

    event: heartbeat
    data: {"now_ns": ...}

    event: saving
    data: {"id": null, "type": "saving", "data": {"saving": false, "error": "the disk is full: ..."}}

    event: notice
    data: {"id": null, "type": "notice", "data": {"key": "league", "level": "info", "title": ..., "text": ...}}

``notice`` is a line from outside the game for every page (a convention's
pairing from the league, :meth:`Broker.set_notice`), by ``key``; one with
``"clear": true`` takes it away. A page that connects gets the current
ones right after its snapshot.

``saving`` tells every page whether the table is keeping its log: false
after a write failed (:meth:`Broker.store_failed`, or a ``store`` fault of
the session), true again once an event is logged. A page that connects
while the table is not saving gets it right after its snapshot.

Only log updates carry an ``id:`` line, so the browser's ``Last-Event-ID``
is always an id of the log. ``pub_ns`` is the server's monotonic clock when
the update was published (the benchmark measures latency with it); ``now_ns``
is the session's clock, so a page can count down to a race's ``go_ns``.
"""

from __future__ import annotations

import ipaddress
import json
import queue
import threading
import time
from typing import Callable, Iterator

#: An idle stream wakes only for its heartbeat and, this often, to ask
#: waitress whether the phone went away (it cannot tell us by itself): a
#: page that says nothing costs the server a wake-up every few seconds, not
#: a poll loop, and a phone that left frees its worker thread within this.
CHECK_S = 5.0

#: Markers a client's queue may hold besides encoded frames.
_CLOSE = object()     # the server is shutting down: end the stream
_DROP = object()      # drop this connection (tests; the page reconnects)
_RESYNC = object()    # the queue overflowed: send a snapshot
_WAKE = object()      # send a heartbeat now: a page's wrapper checks its link again


def _game_of(update: dict):
    data = update.get("data")
    return data.get("game_id") if isinstance(data, dict) else None


class _Item:
    """An encoded update in a client's queue, with what deduplication needs."""

    __slots__ = ("id", "kind", "version", "game_id", "frame")

    def __init__(self, uid, kind, version, game_id, data: bytes):
        self.id, self.kind, self.version, self.game_id, self.frame = (
            uid, kind, version, game_id, data)


class _Sent:
    """What a page already has: the last log id, version and game it was sent."""

    __slots__ = ("id", "version", "game_id")

    def __init__(self, uid, version, game_id):
        self.id, self.version, self.game_id = uid or 0, version or 0, game_id

    def stale(self, item: _Item) -> bool:
        """True if ``item`` is older than what the page has (it was queued
        while the snapshot or the replay was being made)."""
        if item.id is not None and item.id <= self.id:
            return True
        if item.version is None:
            return False
        if item.kind == "state":
            return item.game_id == self.game_id and item.version < self.version
        return item.version < self.version

    def note(self, item: _Item) -> None:
        if item.id is not None:
            self.id = max(self.id, item.id)
        if item.kind == "state":
            self.version = item.version or 0
            self.game_id = item.game_id


def frame(event: str, payload: dict, event_id: int | None = None) -> bytes:
    """One SSE message: optional ``id:``, ``event:``, one ``data:`` line."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    data = json.dumps(payload, separators=(",", ":"), default=str)
    return f"{head}event: {event}\ndata: {data}\n\n".encode()


class Client:
    """One open page: a bounded queue of encoded updates and markers."""

    __slots__ = ("queue", "remote", "connected_ns")

    def __init__(self, maxsize: int, remote: str = "?"):
        self.queue: queue.Queue = queue.Queue(maxsize)
        self.remote = remote
        self.connected_ns = time.monotonic_ns()

    def offer(self, item) -> None:
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            # too slow: forget what it missed; it gets a snapshot instead
            # (or the end of the stream, if that is what did not fit)
            try:
                while True:
                    self.queue.get_nowait()
            except queue.Empty:
                pass
            self.queue.put_nowait(item if item is _CLOSE or item is _DROP else _RESYNC)


def _is_loopback(remote: str) -> bool:
    try:
        return ipaddress.ip_address(remote).is_loopback
    except ValueError:
        return False


class Broker:
    """Fan-out of a :class:`~companion.table.session.TableSession`'s updates to SSE clients.

    >>> # broker = Broker(session); app streams broker.stream(broker.connect(), last_id)
    """

    def __init__(self, session, queue_size: int = 256, max_clients: int = 200,
                 heartbeat_s: float = 15.0, clock: Callable[[], int] | None = None,
                 max_per_remote: int = 6, check_s: float = CHECK_S):
        self.session = session
        self.queue_size = queue_size
        self.max_clients = max_clients
        #: one phone (an address) may hold this many live pages, so a single
        #: device cannot take every stream slot; the Pi itself is exempt
        self.max_per_remote = max_per_remote
        self.heartbeat_s = heartbeat_s
        #: how often an idle stream asks waitress whether its phone is still
        #: there (between heartbeats; a write finds a gone phone anyway)
        self.check_s = check_s
        self.clock = clock or getattr(session, "clock", None) or time.monotonic_ns
        self._clients: set[Client] = set()
        self._lock = threading.Lock()
        self._closed = False
        #: False while the table cannot write its log (the cause in saving_error)
        self.saving = True
        self.saving_error: str | None = None
        self._notices: dict[str, dict] = {}       # key -> notice (set_notice)
        self._unsubscribe = session.subscribe(self.publish)

    # -- the session side -------------------------------------------------
    def publish(self, update: dict) -> None:
        """Called by the session (any thread) for every update: encode once,
        queue for every client. Never blocks."""
        self._send(update)
        kind = update.get("type")
        data = update.get("data")
        if kind == "fault" and isinstance(data, dict) and data.get("fault") == "store":
            self.store_failed(str(data.get("message") or "the store failed"))
        elif kind == "state" and update.get("id") is not None and not self.saving:
            self._set_saving(True, None)

    def store_failed(self, cause: str) -> None:
        """The table could not write its log: tell every page (``saving``)."""
        self._set_saving(False, cause)

    def _set_saving(self, saving: bool, error: str | None) -> None:
        with self._lock:
            changed = saving != self.saving or error != self.saving_error
            self.saving, self.saving_error = saving, error
        if changed:
            self._send(self._saving_update())

    def set_notice(self, notice: dict | None, key: str = "league") -> None:
        """Show ``notice`` (``{"key", "level", "title", "text"}``) on every
        page, now and to pages that connect later; None takes ``key``'s away."""
        key = str((notice or {}).get("key") or key)
        data = dict(notice) if notice else {"key": key, "clear": True}
        with self._lock:
            if notice:
                self._notices[key] = data
            else:
                self._notices.pop(key, None)
        self._send({"id": None, "type": "notice", "data": data})

    def _notice_frames(self) -> list[bytes]:
        with self._lock:
            notices = list(self._notices.values())
        return [frame("notice", {"id": None, "type": "notice", "data": n,
                                 "pub_ns": time.monotonic_ns(), "now_ns": self.clock()})
                for n in notices]

    def _saving_update(self) -> dict:
        return {"id": None, "type": "saving", "version": getattr(self.session, "version", None),
                "data": {"saving": self.saving, "error": self.saving_error}}

    def _send(self, update: dict) -> None:
        uid = update.get("id")
        kind = str(update.get("type") or "state")
        payload = dict(update)
        payload["pub_ns"] = time.monotonic_ns()
        payload["now_ns"] = self.clock()
        item = _Item(uid, kind, update.get("version"), _game_of(update),
                     frame(kind, payload, uid))
        with self._lock:
            clients = list(self._clients)
        for c in clients:
            c.offer(item)

    # -- the page side ----------------------------------------------------
    @property
    def count(self) -> int:
        with self._lock:
            return len(self._clients)

    def connect(self, remote: str = "?") -> Client | None:
        """Register a page (before its snapshot is taken, so nothing is
        missed); None if the server is full or closing."""
        with self._lock:
            if self._closed or len(self._clients) >= self.max_clients:
                return None
            if self.max_per_remote and not _is_loopback(remote) and sum(
                    1 for c in self._clients if c.remote == remote) >= self.max_per_remote:
                return None
            c = Client(self.queue_size, remote)
            self._clients.add(c)
            return c

    def disconnect(self, client: Client) -> None:
        with self._lock:
            self._clients.discard(client)

    def snapshot_frame(self) -> tuple[_Sent, bytes]:
        snap = self.session.snapshot()
        version = int(snap.get("version") or 0)
        payload = {"id": version, "type": "snapshot", "version": version, "data": snap,
                   "pub_ns": time.monotonic_ns(), "now_ns": self.clock()}
        return _Sent(version, version, snap.get("game_id")), frame("snapshot", payload, version)

    def replay_frames(self, last_id: int | None) -> tuple[_Sent, list[bytes]]:
        """What a (re)connecting page needs first: the log's updates after
        ``last_id`` if the session can tell (an up-to-date page gets
        nothing), else a snapshot."""
        if last_id is not None:
            updates = self.session.updates_since(last_id)
            if updates is not None:
                sent = _Sent(last_id, getattr(self.session, "version", last_id),
                             getattr(self.session, "game_id", None))
                frames = []
                for u in updates:
                    kind = str(u.get("type") or "state")
                    payload = dict(u, pub_ns=time.monotonic_ns(), now_ns=self.clock())
                    frames.append(frame(kind, payload, u.get("id")))
                    sent.note(_Item(u.get("id"), kind, u.get("version"), _game_of(u), b""))
                return sent, frames
        sent, f = self.snapshot_frame()
        return sent, [f]

    def stream(self, client: Client, last_id: int | None = None,
               disconnected: Callable[[], bool] | None = None,
               heartbeat_s: float | None = None) -> Iterator[bytes]:
        """The byte stream of one page; ends when the server closes, the page
        is dropped, or the client is gone (found at the next write or by
        ``disconnected``, waitress's ``waitress.client_disconnected``)."""
        beat = self.heartbeat_s if heartbeat_s is None else heartbeat_s
        try:
            sent, frames = self.replay_frames(last_id)
            if not self.saving:
                frames.append(frame("saving", dict(self._saving_update(),
                                                   pub_ns=time.monotonic_ns(),
                                                   now_ns=self.clock())))
            frames += self._notice_frames()
            yield b"retry: 2000\n\n" + b"".join(frames)
            next_beat = time.monotonic() + beat
            check = max(self.check_s, 1.0) if disconnected is not None else beat
            while True:
                # block on the queue until the next heartbeat or disconnect
                # check, whichever is first: no wake-ups in between
                wait = max(0.0, min(check, next_beat - time.monotonic()))
                try:
                    item = client.queue.get(timeout=wait)
                except queue.Empty:
                    if disconnected is not None and disconnected():
                        return
                    if time.monotonic() >= next_beat:
                        yield frame("heartbeat", {"now_ns": self.clock(),
                                                  "pub_ns": time.monotonic_ns()})
                        next_beat = time.monotonic() + beat
                    continue
                if item is _CLOSE or item is _DROP:
                    return
                if item is _RESYNC:
                    sent, f = self.snapshot_frame()
                    yield f
                elif item is _WAKE:
                    yield frame("heartbeat", {"now_ns": self.clock(),
                                              "pub_ns": time.monotonic_ns()})
                elif sent.stale(item):
                    continue
                else:
                    sent.note(item)
                    yield item.frame
                next_beat = time.monotonic() + beat
        finally:
            self.disconnect(client)

    # -- control ----------------------------------------------------------
    def drop_all(self) -> int:
        """End every open stream (the pages reconnect); returns how many."""
        with self._lock:
            clients = list(self._clients)
        for c in clients:
            c.offer(_DROP)
        return len(clients)

    def wake_all(self) -> int:
        """Have every open stream send a heartbeat now, so what wraps it
        checks again at once whether it may go on (a revoked player link
        ends its page's stream this way, not at the next heartbeat)."""
        with self._lock:
            clients = list(self._clients)
        for c in clients:
            c.offer(_WAKE)
        return len(clients)

    def close(self) -> None:
        """Stop taking updates and end every stream (server shutdown)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            clients = list(self._clients)
        try:
            self._unsubscribe()
        except Exception:   # the session may already be gone
            pass
        for c in clients:
            c.offer(_CLOSE)
