"""A table's races: the game's race requests on the race desk, the cards
waiting behind an open race, and what a decided race leaves in the log.

:class:`TableRaces` is the :class:`~companion.desk.DeskOwner` of a
:class:`~companion.session.TableSession`'s desk: it knows the game (what it
asks for, which card was logged when), the log (the races before, for
claims; the race event a verdict becomes) and the store (the live race
saved, the strays kept). Every method runs with the session's lock held;
the session's public race methods (``confirm_race``, ``start_race``, ...)
take the lock and call here.
"""

from __future__ import annotations

import logging
from typing import Any

from . import arming, views
from .desk import DeskRace, RaceDesk
from .edges import Edge
from .eventlog import jsonable
from .games import RaceRequest, RulesError
from .referee import RaceError, Referee
from .store import StoreError
from .waiting import CardQueue

log = logging.getLogger(__name__)

MS = 1_000_000
_RACE_ERRORS = (RaceError, RulesError, ValueError)


class TableRaces:
    """The races of one game at one table (see the module's docstring)."""

    def __init__(self, table, referee: Referee | None = None, cue_wait_ns: int | None = None):
        self.t = table
        if referee is None:     # the table's own, from its settings
            ms = {k: int(table.settings[k]) * MS for k in ("debounce_ms", "stuck_ms", "hold_ms")}
            referee = Referee(table.names, debounce_ns=ms["debounce_ms"],
                              stuck_ns=ms["stuck_ms"], hold_ns=ms["hold_ms"])
        self.desk = RaceDesk(self, table.arming, referee)
        self.desk.cue_wait_ns = cue_wait_ns
        self.queued = CardQueue()
        #: the live race saved before a restart, shown as interrupted
        self.interrupted: dict | None = None

    @property
    def race(self) -> DeskRace | None:
        return self.desk.race

    def close(self) -> None:
        self.desk.close()

    def request(self) -> RaceRequest | None:
        t = self.t
        if t.replay is None or t.game.finished(t.state):
            return None
        return t.game.race_request(t.state)

    def resume(self, gid: int) -> None:
        """Take back the live race saved before a restart (as interrupted)
        and the cards that waited behind it."""
        saved = self.t.store.load_live_race(gid)
        if saved is None:
            return
        version, body = saved
        req = self.request()
        self.queued.restore(body.get("queued"))
        if version == self.t.version and req is not None and req.reason == body.get("reason"):
            self.interrupted = body
        else:
            self.t.store.clear_live_race(gid)

    # -- cards logged while a race is open ------------------------------------

    def must_wait(self, event: dict, expected_version: int | None) -> bool:
        """Whether the host's ``event`` waits behind the open race."""
        t = self.t
        if self.race is not None or self.queued:
            t._need_version(expected_version)        # a stale console: StaleVersion
        return self.queued.must_wait(t.game, t.state, event, self.race is not None)

    def queue(self, event: dict) -> dict:
        """Keep ``event`` (with the time it was logged) until the open race
        is logged; a card stops the open unannounced race taking presses now
        (later ones are the new card's). Saved with the live race, so a power
        cut loses no logged card. The ``queued`` update."""
        t = self.t
        now = t.clock()
        self.queued.add(event, now)
        race = self.race
        if race is not None:
            if t.game.is_draw(event):
                self.desk.cut(now)
            race.record = {**race.record, "queued": self.queued.to_json()}
            self.persist(race, True)
        data = {"event": views.public_event(t.game, event), "line": t._public_line(event),
                "queued": self.queued_lines()}
        self.publish("queued", data)
        return {"id": None, "type": "queued", "version": t.version, "data": data}

    def queued_lines(self) -> list[str]:
        return [self.t._public_line(e) for e in self.queued.events()]

    def drain(self) -> None:
        """Log the cards that waited behind a race, in order, each at the
        time it was logged; stop at one whose race is still open."""
        t = self.t
        while self.queued and self.race is None and t.replay is not None:
            event, logged_ns = self.queued.pop()
            try:
                eid = t._commit(event, None)
            except (RulesError, StoreError) as exc:
                self.fault("queued", f"the {t._public_line(event)} logged during the race "
                                     f"was refused once the race was logged: {exc}")
                continue
            self.sync("host", logged_ns)
            t._publish_state(eid, event)
            self.cut_at_next_draw()

    def cut_at_next_draw(self) -> None:
        nxt = self.queued.next_draw(self.t.game)
        if self.race is not None and nxt is not None:
            self.desk.cut(nxt)

    # -- following the game ---------------------------------------------------

    def sync(self, trigger: str, logged_ns: int | None = None) -> None:
        """After the state changed: drop a race the game no longer asks for;
        after the host logged a card (at ``logged_ns``, default now), give an
        unannounced race the presses that are its own."""
        t = self.t
        now = t.clock()
        try:
            req = self.request()
        except Exception as exc:  # a tracker bug must not take the table down
            log.exception("race_request failed")
            self.fault("tracker", f"race_request failed: {exc}")
            return
        race = self.race
        if race is not None and (req is None or req.reason != race.request.reason
                                 or req.kind != race.request.kind):
            self.drop()
        if self.interrupted is not None and (
                req is None or req.reason != self.interrupted.get("reason")):
            self.drop()
            self.interrupted = None
        if req is None or self.race is not None:
            return
        try:
            if not req.announced and trigger == "host":
                self.drop()
                self.interrupted = None
                self.desk.take_card(req, now if logged_ns is None else logged_ns, now,
                                    t.names, t.version)
            elif req.announced and (t.settings["auto_start"] or req.auto_start) \
                    and trigger in ("host", "race"):
                self.start_announced(req, None)
        except _RACE_ERRORS as exc:
            self.fault("race", f"cannot run the race the game asked for: {exc}")

    def drop(self, clear: bool = True) -> None:
        had = self.desk.drop()
        if (had or self.interrupted is not None) and clear:
            try:
                self.t.store.clear_live_race(self.t.game_id)
            except StoreError as exc:
                self.fault("store", f"could not clear the live race: {exc}")

    # -- the host's commands ----------------------------------------------------

    def confirm(self, accept: bool, t_ns: int | None) -> dict | None:
        """The host's answer to a card's question (see
        :meth:`TableSession.confirm_race`); the race view."""
        race = self.race
        if race is None or race.confirm is None:
            raise RulesError("no race is waiting for the host's confirmation", "race")
        now = self.t.clock()
        try:
            log_now = self.desk.confirm(accept, t_ns, now)
        except ValueError as exc:
            raise RulesError(str(exc), "race") from None
        if log_now:
            self.race_decided(race, now)
        elif self.race is race:
            self.publish("race", self.race_view(now))
        self.cut_at_next_draw()
        return self.race_view(now)

    def use(self, t_ns: int) -> dict | None:
        """The host hands a stray to the card waiting for its race."""
        req = self.request()
        if req is None or req.announced:
            raise RulesError("no card is waiting for an unannounced race: nothing for "
                             "these presses to decide", "race")
        now = self.t.clock()
        try:
            self.interrupted = None
            self.desk.use_presses(req, t_ns, now, self.t.names, self.t.version)
        except ValueError as exc:
            raise RulesError(str(exc), "race") from None
        return self.race_view(now)

    def start(self, countdown_ms: int | None) -> dict:
        """Start the race the game asks for with a countdown."""
        req = self.request()
        if req is None:
            raise RulesError("no race to start: the game is not waiting for one", "race")
        if countdown_ms is None:
            countdown_ms = self.t.settings["countdown_ms"]
        if isinstance(countdown_ms, bool) or not isinstance(countdown_ms, int) \
                or countdown_ms < 0:
            raise RulesError("countdown_ms must be a non-negative integer", "race")
        return self.start_announced(req, countdown_ms * MS)

    def start_announced(self, req: RaceRequest, countdown_ns: int | None) -> dict:
        now = self.t.clock()
        try:
            self.drop()
            self.interrupted = None
            self.desk.start_announced(req, countdown_ns, now, self.t.names, self.t.version)
        except (RaceError, ValueError) as exc:
            raise RulesError(f"the game asked for a race the referee cannot run: {exc}",
                             "race") from None
        return self.race_view(now)

    def cue(self, t_ns: int, at_ns: int | None) -> None:
        """The box's stamp of the GO it sounded (see :meth:`TableSession.cue_sounded`)."""
        go = self.desk.cue_sounded(t_ns, at_ns, self.t.clock())
        if go is not None:
            self.fault("cue", f"the buzzer box sounded GO {(t_ns - go) / MS:+.3f} ms from the "
                              f"scheduled GO, after the race was decided on the scheduled GO; "
                              f"undo it and run it again if a press came in between", t_ns=t_ns)

    def cancel(self) -> None:
        self.drop()
        self.interrupted = None
        if self.t.game_id is not None:
            self.publish("race", self.race_view(self.t.clock()))

    def bursts(self) -> list[list[Edge]]:
        return arming.bursts(self.desk.edges, self.t.arming.quiet_gap_ns)

    # -- the desk's owner -------------------------------------------------------

    def race_events(self) -> list[dict]:
        return [] if self.t.replay is None else self.t.replay.events

    def marks_flip(self, player: str) -> bool:
        t = self.t
        return t.replay is not None and t.game.current_player(t.state) == player

    def race_decided(self, race: DeskRace, now: int) -> None:
        """Log a decided race as an event (the tracker may refuse it: a fault)."""
        if race.confirm is not None:    # the host answers the card's question first
            self.publish("race", self.race_view(now))
            return
        req = self.request()
        if req is None or req.reason != race.request.reason:
            self.fault("race", "the decided race no longer matches the game; not logged")
            self.drop()
            return
        if race.awaits_cue and race.armed.scheduled_ns is None:
            race.awaits_cue = False
            self.fault("cue", "the buzzer box did not report when it sounded GO: the race "
                              "was judged on the scheduled GO")
        event = views.race_event(race, self.t.arming)
        if not self._log_race(race, event, now):
            return
        self.desk.drop()
        try:   # stale now (the version moved on): the background writer deletes it
            self.t.store.clear_live_race(self.t.game_id, wait=False)
        except StoreError as exc:
            self.fault("store", f"could not clear the live race: {exc}")
        self.sync("race")
        self.drain()

    def _log_race(self, race: DeskRace, event: dict, now: int) -> bool:
        """Append the race event (judged once, by the desk) and publish the
        new state; a refusal is a fault on the race card."""
        t = self.t
        try:
            eid = t._commit(event, None, judged=True)
        except (RulesError, StoreError) as exc:
            race.error = str(exc)
            store = isinstance(exc, StoreError)
            self.fault("store" if store else "race-rejected",
                       f"could not log the race: {exc}" if store
                       else f"the game refused the verdict: {exc}")
            self.publish("race", self.race_view(now))
            return False
        except Exception as exc:  # a tracker bug must not take the table down
            log.exception("logging a race failed")
            race.error = str(exc)
            self.fault("tracker", f"logging the race failed: {exc}")
            return False
        t._publish_state(eid, event)
        return True

    def persist(self, race: DeskRace, durable: bool) -> None:
        """Save the live race row: durably now (at arming), or handed to the
        store's background writer (a press: no disk write under the lock)."""
        t = self.t
        new = race.live.edges[race.persisted:]
        race.edges_json.extend(e.to_json() for e in new)
        race.persisted = len(race.live.edges)
        body = jsonable({**race.record, "edges": list(race.edges_json),
                         "virtual": sorted(race.virtual)}, "live race")
        try:
            if durable:
                t.store.save_live_race(t.game_id, race.version, body)
            else:
                t.store.save_live_race_soon(t.game_id, race.version, body,
                                            on_error=self._not_saved)
        except StoreError as exc:
            self.fault("store", f"could not save the live race: {exc}")

    def _not_saved(self, exc: StoreError) -> None:
        """The background writer could not save the live race (its thread)."""
        with self.t._lock:
            self.fault("store", f"could not save the live race: {exc}")
        self.t._outbox.dispatch()

    def record_stray(self, e: Edge, why: str) -> None:
        # kept for the record, but not under the lock: the outbox writes it
        # once the lock is released
        self.t._outbox.defer_record(self.t.game_id, {
            "player": e.player, "fault": "stray", "t_ns": e.t_ns,
            "message": f"stray press by {e.player} ({why}): no race window held it"})

    def publish(self, kind: str, data: Any) -> None:
        self.t.publish(kind, data)

    def fault(self, kind: str, message: str | None, player: str | None = None,
              t_ns: int | None = None) -> None:
        self.t.fault(kind, message, player, t_ns)

    def race_view(self, now: int) -> dict | None:
        t = self.t
        return views.table_race_view(t.game, t.replay, self.race, self.interrupted,
                                     self.request, self.desk.edges, t.arming, now)

    def extras(self, now: int) -> dict:
        """The snapshot's strays, waiting presses, windows and queued cards."""
        return {**views.desk_extras(self.desk, now, self.t.arming),
                "queued": self.queued_lines()}


__all__ = ["TableRaces"]
