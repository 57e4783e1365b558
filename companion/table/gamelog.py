"""One game's log at the table: the store's rows, their replay, the version.

The log in the :class:`~companion.record.store.Store` is the only source of truth:
the state is what replaying it gives (:class:`companion.record.eventlog.Replay`;
undo and redo are events of the log). :class:`GameLog` is that log as the
running table holds it: :meth:`GameLog.append` has the tracker accept an
event, appends it durably, then keeps it in memory (the replay is rolled
back if the append fails); a refused (:class:`RulesError`) or stale
(:class:`StaleVersion`) event changes nothing. The version is the id of the
last event logged.

The session (:class:`companion.table.session.TableSession`) and its races
(:class:`companion.table.tableraces.TableRaces`) are both handed the same
:class:`GameLog`; neither reaches into the other to log. It takes no lock:
its callers hold the session's.

>>> from companion.record.store import Store
>>> from companion.games import get_game
>>> game = GameLog.create(Store(":memory:"), get_game("chope"),
...                       [{"name": n} for n in ("ana", "bo", "cy")], {})
>>> game.version
0
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from ..games import Game
from ..record.eventlog import Replay, jsonable, replay_stored, summary
from ..record.gamefile import rejudge_race
from ..record.store import StaleVersion, Store, StoreError
from .views import public_line

log = logging.getLogger(__name__)

#: ``on_fault(kind, message)``: a derived record (the end of the game) could
#: not be written; the log itself is fine
FaultFn = Callable[[str, str], None]


class GameLog:
    """The current game's log: replay, durable append with rollback, version."""

    def __init__(self, store: Store, game_id: int, game: Game, replay: Replay,
                 rows: list[tuple[int, dict]] | None = None,
                 on_fault: FaultFn | None = None):
        self.store = store
        self.game_id = game_id
        self.game = game
        self.replay = replay
        #: every logged event ``(id, event)``, undo and redo included
        self.rows: list[tuple[int, dict]] = list(rows or [])
        self.version = self.rows[-1][0] if self.rows else 0
        self.finished = game.finished(replay.state)
        self.on_fault = on_fault
        #: each logged event's public line, worded once (by its id: a logged
        #: event never changes; the console's log shows its last 50 on every change)
        self._worded: dict[int, str] = {}

    @classmethod
    def create(cls, store: Store, game: Game, players: list[dict], options: dict,
               on_fault: FaultFn | None = None) -> "GameLog":
        """A new game in the store (set up first: bad options store nothing)."""
        names = [p["name"] for p in players]
        rep = Replay(game, names, options, [game.setup(names, options)])
        gid = store.create_game(game.name, players, options)
        return cls(store, gid, game, rep, [], on_fault)

    @classmethod
    def load(cls, store: Store, game_id: int, info: dict,
             on_fault: FaultFn | None = None) -> "GameLog":
        """A stored game replayed (:class:`~companion.record.eventlog.ResumeError`
        naming what the tracker can no longer replay). Where the store's
        record of its end (``info["finished"]``) differs from the replay, the
        caller calls :meth:`record_end`."""
        tracker, rep, rows = replay_stored(store, game_id, info)
        return cls(store, game_id, tracker, rep, rows, on_fault)

    # -- reading ---------------------------------------------------------------

    @property
    def state(self) -> Any:
        return self.replay.state

    @property
    def events(self) -> list[dict]:
        """The effective events (undo and redo applied)."""
        return self.replay.events

    @property
    def names(self) -> list[str]:
        return list(self.replay.players)

    @property
    def last_event(self) -> dict | None:
        return self.rows[-1][1] if self.rows else None

    def line(self, event: dict) -> str:
        """``event``'s public line (what every page may read)."""
        return public_line(self.game, event)

    def worded(self, eid: int, event: dict) -> str:
        """The public line of the event logged as ``eid`` (:meth:`line`),
        worded once."""
        got = self._worded.get(eid)
        if got is None:
            got = self._worded[eid] = self.line(event)
        return got

    # -- versions --------------------------------------------------------------

    def check_version(self, expected_version: int | None) -> None:
        """StaleVersion (409) if the log moved on since ``expected_version``
        (races the table judged itself excepted)."""
        if expected_version is None or expected_version == self.version \
                or self.only_races_since(expected_version):
            return
        last = self.line(self.rows[-1][1]) if self.rows else "nothing yet"
        raise StaleVersion(
            f"the table changed since this console loaded it (it saw version "
            f"{expected_version}, the table is at {self.version}; last: {last}); nothing "
            f"was logged: refresh and try again", expected_version, self.version)

    def only_races_since(self, version: int) -> bool:
        """Whether only races the table judged itself came after ``version``
        (a console a verdict overtook still logs its card)."""
        return 0 < version < self.version and all(
            ev.get("type") == "race" and "spec" in ev for eid, ev in self.rows if eid > version)

    # -- writing ---------------------------------------------------------------

    def append(self, event: dict, expected_version: int | None = None,
               judged: bool = False, queued: list | None = None) -> int:
        """Apply ``event`` on the replay, append it durably, keep it (or roll
        back); its id, the new version. A race event is judged again from
        its edges unless the desk ``judged`` it. ``queued``: the cards still
        queued behind a race, saved in the same transaction."""
        self.check_version(expected_version)
        rep = self.replay
        event = self.game.complete(rep.state, event)
        if not judged:
            rejudge_race(event)
        saved = (list(rep.events), list(rep.states), list(rep.undone))
        rep.apply(event)
        try:
            eid = self.store.append(self.game_id, event, expected_version=self.version,
                                    queued=queued)
        except BaseException:
            rep.events, rep.states, rep.undone = saved
            raise
        self.version = eid
        self.rows.append((eid, event))
        if self.game.finished(rep.state) != self.finished:
            self.finished = not self.finished
            self.record_end()
        return eid

    def logged(self, eid: int) -> dict | None:
        """The event logged as ``eid``, as the log keeps it (completed by
        the tracker), if it is the last one."""
        return self.rows[-1][1] if self.rows and self.rows[-1][0] == eid else None

    def record_end(self) -> None:
        """Record in the store whether (and how) the game ended: derived data,
        so a failure is a ``store`` fault, never a lost event."""
        done = self.game.finished(self.state)
        try:
            self.store.mark_finished(self.game_id, jsonable(summary(
                self.game, self.names, self.state), "summary") if done else None)
        except StoreError as exc:
            if self.on_fault is not None:
                self.on_fault("store", f"could not record the end of the game: {exc}")
            else:
                log.warning("could not record the end of the game: %s", exc)


__all__ = ["GameLog"]
