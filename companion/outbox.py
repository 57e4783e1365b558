"""The session's updates to its subscribers, in order, outside its lock.

Updates are queued while the session lock is held and delivered by
:meth:`Outbox.dispatch` once it is released; a subscriber may call back into
the session (the outer loop delivers what that queues). Records the edge
path must not write under the lock (stray presses) wait here too and are
written first.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Callable

from . import views

log = logging.getLogger(__name__)


class Outbox:
    """Subscribers and the updates waiting for them."""

    def __init__(self, lock: threading.RLock, record: Callable[[Any, dict], None]):
        self._lock = lock               # the session's lock
        self._record = record           # writes one deferred record (game id, fault)
        self._subs: list[Callable[[dict], None]] = []
        self._queue: deque = deque()
        self._unsaved: deque = deque()
        self._dispatch_lock = threading.RLock()
        self._tls = threading.local()

    def subscribe(self, fn: Callable[[dict], None]) -> Callable[[], None]:
        with self._lock:
            self._subs.append(fn)

        def unsubscribe() -> None:
            with self._lock:
                if fn in self._subs:
                    self._subs.remove(fn)
        return unsubscribe

    def put(self, update: dict) -> None:
        self._queue.append(update)

    def defer_record(self, game_id: Any, fault: dict) -> None:
        """Write ``fault`` once the session lock is released."""
        self._unsaved.append((game_id, fault))

    def dispatch(self) -> None:
        """Deliver everything queued (call without the session lock)."""
        if getattr(self._tls, "dispatching", False):
            return  # a subscriber called back into the session: the outer loop delivers
        if self._unsaved and not self._lock._is_owned():
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
                update = self._queue.popleft()
            except IndexError:
                return
            with self._lock:
                subs = list(self._subs)
            for fn in subs:
                try:
                    fn(update)
                except Exception:
                    log.exception("a subscriber failed")

    def _save_unsaved(self) -> None:
        while self._unsaved:
            try:
                game_id, fault = self._unsaved.popleft()
            except IndexError:
                return
            self._record(game_id, fault)


def catch_up(table, last_id: int) -> list[dict] | None:
    """What an SSE client that saw update ``last_id`` missed: ``[]`` when
    it is up to date, else one ``state`` update with the current snapshot
    (``data["missed"]`` lists the missed log lines); None when
    ``last_id`` is not an event of the current game (send a snapshot)."""
    if table.game_id is None:
        return None
    if last_id == table.version:
        return []
    if last_id <= 0 or last_id > table.version \
            or not table.store.has_event(table.game_id, last_id):
        return None
    missed = table.store.events(table.game_id, after_id=last_id)
    if not missed:
        return []
    data = table._snapshot()
    eid, event = missed[-1]
    data["event"] = views.public_event(table.game, event)
    data["line"] = table._public_line(event)
    data["missed"] = [{"id": i, "type": e.get("type"), "line": table._public_line(e)}
                      for i, e in missed]
    return [{"id": eid, "type": "state", "version": table.version, "data": data}]


__all__ = ["Outbox", "catch_up"]
