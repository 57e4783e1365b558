"""The table's one way out: its typed events, in order, outside its lock.

Everything a table session changes is published as one
:class:`~companion.table.events.TableEvent` (a new state, a race armed, a
countdown, a press, a verdict logged, a fault...). Events are queued while
the session lock is held and delivered by :meth:`Outbox.dispatch` once it is
released, to every subscriber in the order they were put: the pages' side
(:meth:`Outbox.subscribe`) gets each event's JSON update
(:meth:`~companion.table.events.TableEvent.page_update`; events with none
are not theirs), the buzzer box's lights (:meth:`Outbox.subscribe_events`)
the typed events themselves. A subscriber may call back into the session
(the outer loop delivers what that queues). Records the edge path must not
write under the lock (stray presses) wait here too and are written first.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Callable

from . import views
from .events import TableEvent

log = logging.getLogger(__name__)


class TableLock:
    """The session's lock: a re-entrant lock that knows whether the calling
    thread holds it (:meth:`held`), so the outbox writes its deferred records
    only once it is released."""

    def __init__(self):
        self._lock = threading.RLock()
        self._owner: int | None = None
        self._depth = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not self._lock.acquire(blocking, timeout):
            return False
        self._owner = threading.get_ident()
        self._depth += 1
        return True

    def release(self) -> None:
        self._depth -= 1
        if not self._depth:
            self._owner = None
        self._lock.release()

    def __enter__(self) -> "TableLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def held(self) -> bool:
        """Whether the calling thread holds the lock."""
        return self._owner == threading.get_ident()

    _is_owned = held        # threading.RLock's spelling, for callers that know it


class Outbox:
    """Subscribers and the events waiting for them."""

    def __init__(self, lock: TableLock, record: Callable[[Any, dict], None]):
        self.lock = lock                # the session's lock
        self._record = record           # writes one deferred record (game id, fault)
        self._subs: list[tuple[Callable[[Any], None], bool]] = []
        self._queue: deque[TableEvent] = deque()
        self._unsaved: deque = deque()
        self._dispatch_lock = threading.RLock()
        self._tls = threading.local()

    def subscribe(self, fn: Callable[[dict], None]) -> Callable[[], None]:
        """``fn(update)`` for every event the pages see, as its JSON update."""
        return self._add(fn, False)

    def subscribe_events(self, fn: Callable[[TableEvent], None]) -> Callable[[], None]:
        """``fn(event)`` for every typed event."""
        return self._add(fn, True)

    def _add(self, fn: Callable[[Any], None], typed: bool) -> Callable[[], None]:
        entry = (fn, typed)
        with self.lock:
            self._subs.append(entry)

        def unsubscribe() -> None:
            with self.lock:
                if entry in self._subs:
                    self._subs.remove(entry)
        return unsubscribe

    def put(self, event: TableEvent) -> None:
        self._queue.append(event)

    def defer_record(self, game_id: Any, fault: dict) -> None:
        """Write ``fault`` once the session lock is released."""
        self._unsaved.append((game_id, fault))

    def call(self, fn: Callable[..., Any], *args) -> Any:
        """Run ``fn(*args)`` holding the session lock, then deliver what it
        published (another thread's news: the store's background writer)."""
        with self.lock:
            out = fn(*args)
        self.dispatch()
        return out

    def dispatch(self) -> None:
        """Deliver everything queued (call without the session lock)."""
        if getattr(self._tls, "dispatching", False):
            return  # a subscriber called back into the session: the outer loop delivers
        if self._unsaved and not self.lock.held():
            self._save_unsaved()
        with self._dispatch_lock:
            self._tls.dispatching = True
            try:
                self._deliver()
            finally:
                self._tls.dispatching = False

    def _deliver(self) -> None:
        while True:
            try:
                event = self._queue.popleft()
            except IndexError:
                return
            with self.lock:
                subs = list(self._subs)
            update = event.page_update()
            for fn, typed in subs:
                if not typed and update is None:
                    continue
                try:
                    fn(event if typed else update)
                except Exception:
                    log.exception("a subscriber failed")

    def _save_unsaved(self) -> None:
        while self._unsaved:
            try:
                game_id, fault = self._unsaved.popleft()
            except IndexError:
                return
            self._record(game_id, fault)


def catch_up(game_log, snapshot: Callable[[], dict], last_id: int) -> list[dict] | None:
    """What an SSE client that saw update ``last_id`` of ``game_log`` (a
    :class:`~companion.table.gamelog.GameLog`, None: no game) missed: ``[]`` when
    it is up to date, else one ``state`` update with the current
    ``snapshot()`` (``data["missed"]`` lists the missed log lines); None when
    ``last_id`` is not an event of the current game (send a snapshot)."""
    if game_log is None:
        return None
    version = game_log.version
    if last_id == version:
        return []
    store, gid = game_log.store, game_log.game_id
    if last_id <= 0 or last_id > version or not store.has_event(gid, last_id):
        return None
    missed = store.events(gid, after_id=last_id)
    if not missed:
        return []
    data = snapshot()
    eid, event = missed[-1]
    data["event"] = views.public_event(game_log.game, event)
    data["line"] = game_log.line(event)
    data["missed"] = [{"id": i, "type": e.get("type"), "line": game_log.line(e)}
                      for i, e in missed]
    return [{"id": eid, "type": "state", "version": version, "data": data}]


__all__ = ["Outbox", "TableLock", "catch_up"]
