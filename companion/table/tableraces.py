"""A table's races: the game's race requests on the race desk, the cards
queued behind an open race, and what a decided race leaves in the log.

:class:`TableRaces` is the :class:`~companion.races.desk.DeskOwner` of a table's
desk. It is handed what it works with, and nothing else: the game's log
(:class:`~companion.table.gamelog.GameLog`: what the game asks for, the races
before, for claims; the race event a verdict becomes, appended there), the
store (the live race saved, the strays kept), the table's outbox (its one
way out: typed events, :mod:`companion.table.events`), the clock, the
settings, and two of the session's public methods: ``publish_state`` (a new
state after an event is logged) and ``fault``. Every method runs with the
session's lock held; the session's public race methods (``confirm_race``,
``start_race``, ...) take the lock and call here.

The race code decides what a race *is* (:mod:`companion.table.raceshots`): the
event a verdict is logged as, the runners-up, the interrupted race's order,
judged once at resume; the views get a frozen shot of it to format.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable

from ..races import arming
from . import views
from ..races.attribution import FIRST, LAST, Turned
from ..races.desk import DeskRace, RaceDesk
from ..races.edges import Edge
from ..record.eventlog import jsonable
from .gamelog import GameLog
from ..games import RaceRequest, RulesError
from .outbox import Outbox
from .queued import CardQueue, reorder_plan, requests_along
from .raceshots import (InterruptedShot, decided_shot, interrupted_shot, live_shot,
                        pending_shot, race_event)
from ..races.referee import RaceError, Referee
from ..record.store import Store, StoreError
from .events import Countdown, Press, Queued, RaceArmed, RaceShown, VerdictLogged

log = logging.getLogger(__name__)

MS = 1_000_000
_RACE_ERRORS = (RaceError, RulesError, ValueError)
#: how many host events' log times are remembered (for the order check)
LOGGED_KEPT = 256


def N_(text: str) -> str:
    """Marks a sentence the pages show for the catalog (translated there)."""
    return text


NO_OFFER = N_("no swap is offered now: the table changed since the console showed it")


class TableRaces:
    """The races of one game at one table (see the module's docstring)."""

    def __init__(self, gamelog: GameLog, *, store: Store, out: Outbox,
                 clock: Callable[[], int], settings: dict, arming_settings: arming.ArmingSettings,
                 publish_state: Callable[[int | None, dict | None], Any],
                 fault: Callable[..., None], referee: Referee | None = None,
                 cue_wait_ns: int | None = None):
        self.gamelog = gamelog
        self.store = store
        self.out = out
        self.clock = clock
        self.settings = settings
        self.arming = arming_settings
        self.publish_state = publish_state
        self.report_fault = fault
        if referee is None:     # the table's own, from its settings
            ms = {k: int(settings[k]) * MS for k in ("debounce_ms", "stuck_ms", "hold_ms")}
            referee = Referee(gamelog.names, debounce_ns=ms["debounce_ms"],
                              stuck_ns=ms["stuck_ms"], hold_ns=ms["hold_ms"])
        self.desk = RaceDesk(self, arming_settings, referee)
        self.desk.cue_wait_ns = cue_wait_ns
        self.queued = CardQueue()
        #: the live race saved before a restart, judged once, shown as interrupted
        self.interrupted: InterruptedShot | None = None
        self._shown: tuple[Any, Any] = (None, None)   # the race (and arming) last shown armed
        self._decided: tuple[int, dict | None] | None = None   # (version, request info)
        #: when the host logged each of their events (by event id): the order check
        self.logged_at: dict[int, int] = {}
        self._offer: tuple[Any, Any] | None = None     # (key, the swap offered or None)
        #: the other order of the last pairs weighed, and its races (the tracker's
        #: answer for the same events never changes; the presses' may)
        self._plans: dict[Any, tuple] = {}
        self.declined: set = set()      # the pairs of event ids the host kept as logged
        self._order_known_at: int | None = None     # the log time of a swap's first card
        #: the log times of the queued cards the camera saw turned (each is its flip time)
        self.seen_at: set[int] = set()

    @property
    def race(self) -> DeskRace | None:
        return self.desk.race

    @property
    def names(self) -> list[str]:
        return self.gamelog.names

    def close(self) -> None:
        self.desk.close()

    def request(self) -> RaceRequest | None:
        g = self.gamelog
        if g.game.finished(g.state):
            return None
        return g.game.race_request(g.state)

    def resume(self) -> None:
        """Take back the live race saved before a restart (as interrupted,
        its presses judged once, now) and the cards queued behind it."""
        gid = self.gamelog.game_id
        saved = self.store.load_live_race(gid)
        queued = self.store.load_queued(gid)
        if queued is None and saved is not None:    # a store from before the queue's own row
            queued = saved[1].get("queued")
        self.queued.restore(queued)
        if saved is None:
            return
        version, body = saved
        req = self.request()
        if version == self.gamelog.version and req is not None \
                and req.reason == body.get("reason"):
            self.interrupted = interrupted_shot(body)
        else:
            self.store.clear_live_race(gid)

    # -- cards logged while a race is open ------------------------------------

    def must_queue(self, event: dict, expected_version: int | None) -> bool:
        """Whether the host's ``event`` is queued behind the open race."""
        g = self.gamelog
        if self.race is not None or self.queued:
            g.check_version(expected_version)        # a stale console: StaleVersion
        race = self.race
        # a card's race the judge may still be weighing: nothing moves the game
        # on under it (a Stop tapped while its verdict is held is queued behind it)
        held = race is not None and not race.announced and race.request is not None
        return self.queued.must_queue(g.game, g.state, event, race is not None, held)

    def queue(self, event: dict, seen_ns: int | None = None) -> dict:
        """Keep ``event`` (with the time it was logged: ``seen_ns``, the flip
        the camera saw, else now) until the open race is logged; a card stops
        the open unannounced race taking presses then (later ones are the new
        card's). Saved durably in the queue's own row before it is
        acknowledged (StoreError: not queued), so a power cut loses no
        acknowledged card. The ``queued`` update."""
        g = self.gamelog
        now = self.clock() if seen_ns is None else seen_ns
        self.queued.add(event, now)
        try:
            self.store.save_queued(g.game_id, self.queued.to_json())
        except StoreError:
            self.queued.items.pop()
            raise
        if seen_ns is not None:
            self.seen_at.add(seen_ns)
        race = self.race
        if race is not None and g.game.is_draw(event):
            self.desk.cut(now)
            self.persist(race, True)        # its new deadline
        data = {"event": views.public_event(g.game, event), "line": g.line(event),
                "queued": self.queued_lines()}
        queued = Queued(g.version, data=data)
        self.out.put(queued)
        return queued.page_update()

    def save_queued(self) -> None:
        """Keep the queue as it is now (a card dropped with a fault, the
        host's swap); a failure is a ``store`` fault."""
        try:
            self.store.save_queued(self.gamelog.game_id, self.queued.to_json())
        except StoreError as exc:
            self.fault("store", f"could not save the cards waiting for the race: {exc}")

    def queued_lines(self) -> list[str]:
        return [self.gamelog.line(e) for e in self.queued.events()]

    def drain(self) -> None:
        """Log the cards that were queued behind a race, in order, each at the
        time it was logged; stop at one whose race is still open."""
        g = self.gamelog
        while self.queued and self.race is None:
            event, logged_ns = self.queued.pop()
            try:        # the card leaves the saved queue as it enters the log
                eid = g.append(event, queued=self.queued.to_json())
            except (RulesError, StoreError) as exc:
                if isinstance(exc, RulesError) and self._choice_first(g, event):
                    # the race left a choice to make first (a Siam! loser's
                    # card): it is asked now; the card waits for it, not lost
                    self.queued.put_back(event, logged_ns)
                    return
                self.fault("queued", f"the {g.line(event)} logged during the race "
                                     f"was refused once the race was logged: {exc}")
                self.save_queued()
                continue
            self.sync("host", logged_ns, camera=logged_ns in self.seen_at)
            self.seen_at.discard(logged_ns)
            self.publish_state(eid, event)
            self.cut_at_next_draw()

    @staticmethod
    def _choice_first(g, event: dict) -> bool:
        """Whether ``event`` becomes legal once a player makes a choice the
        game waits for now (a Siam! loser's card)."""
        game, state = g.game, g.state
        try:
            if game.race_request(state) is not None:
                return False
            for choice in game.decisions(state):
                try:
                    game.apply(game.apply(state, choice), event)
                    return True
                except RulesError:
                    continue
        except Exception:  # noqa: BLE001 - a tracker bug must not lose the card
            log.exception("decisions failed")
        return False

    def cut_at_next_draw(self) -> None:
        nxt = self.queued.next_draw(self.gamelog.game)
        if self.race is not None and nxt is not None:
            self.desk.cut(nxt)

    # -- following the game ---------------------------------------------------

    def sync(self, trigger: str, logged_ns: int | None = None, camera: bool = False) -> None:
        """After the state changed: drop a race the game no longer asks for;
        after the host logged a card (at ``logged_ns``, default now), give an
        unannounced race the presses that are its own. ``camera``: the camera
        saw the card turned at ``logged_ns`` (the judge's lag is ~0)."""
        now = self.clock()
        if trigger == "host":
            self.logged_at[self.gamelog.version] = now if logged_ns is None else logged_ns
            while len(self.logged_at) > LOGGED_KEPT:
                self.logged_at.pop(next(iter(self.logged_at)))
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
                req is None or req.reason != self.interrupted.reason):
            self.drop()
            self.interrupted = None
        if req is None or self.race is not None:
            return
        try:
            if not req.announced and trigger == "host":
                self.drop()
                self.interrupted = None
                self.desk.take_card(req, now if logged_ns is None else logged_ns, now,
                                    self.names, self.gamelog.version)
                if logged_ns is not None and logged_ns == self._order_known_at:
                    self._order_known_at = None     # the host's swap: its order is known
                    if self.race is not None:
                        self.race.order_known = True
                if camera and self.race is not None:
                    self.race.camera = True
            elif req.announced and (self.settings["auto_start"] or req.auto_start) \
                    and trigger in ("host", "race"):
                self.start_announced(req, None)
        except _RACE_ERRORS as exc:
            self.fault("race", f"cannot run the race the game asked for: {exc}")

    def drop(self, clear: bool = True) -> None:
        had = self.desk.drop()
        if (had or self.interrupted is not None) and clear:
            try:
                self.store.clear_live_race(self.gamelog.game_id)
            except StoreError as exc:
                self.fault("store", f"could not clear the live race: {exc}")

    # -- the host's commands ----------------------------------------------------

    def confirm(self, accept: bool, t_ns: int | None) -> dict | None:
        """The host's answer to a card's question (see
        :meth:`TableSession.confirm_race`); the race view."""
        race = self.race
        if race is None or race.confirm is None:
            raise RulesError("no race is waiting for the host's confirmation", "race")
        now = self.clock()
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
        now = self.clock()
        try:
            self.interrupted = None
            self.desk.use_presses(req, t_ns, now, self.names, self.gamelog.version)
        except ValueError as exc:
            raise RulesError(str(exc), "race") from None
        return self.race_view(now)

    def start(self, countdown_ms: int | None) -> dict:
        """Start the race the game asks for with a countdown."""
        req = self.request()
        if req is None:
            raise RulesError("no race to start: the game is not waiting for one", "race")
        if countdown_ms is None:
            countdown_ms = self.settings["countdown_ms"]
        if isinstance(countdown_ms, bool) or not isinstance(countdown_ms, int) \
                or countdown_ms < 0:
            raise RulesError("countdown_ms must be a non-negative integer", "race")
        return self.start_announced(req, countdown_ms * MS)

    def start_announced(self, req: RaceRequest, countdown_ns: int | None) -> dict:
        now = self.clock()
        try:
            self.drop()
            self.interrupted = None
            self.desk.start_announced(req, countdown_ns, now, self.names, self.gamelog.version)
        except (RaceError, ValueError) as exc:
            raise RulesError(f"the game asked for a race the referee cannot run: {exc}",
                             "race") from None
        return self.race_view(now)

    def cue(self, t_ns: int, at_ns: int | None) -> None:
        """The box's stamp of the GO it sounded (see :meth:`TableSession.cue_sounded`)."""
        go = self.desk.cue_sounded(t_ns, at_ns, self.clock())
        if go is not None:
            self.fault("cue", f"the buzzer box sounded GO {(t_ns - go) / MS:+.3f} ms from the "
                              f"scheduled GO, after the race was decided on the scheduled GO; "
                              f"undo it and run it again if a press came in between", t_ns=t_ns)

    def cancel(self) -> None:
        self.drop()
        self.interrupted = None
        self.publish("race", self.race_view(self.clock()))

    def bursts(self) -> list[list[Edge]]:
        return arming.bursts(self.desk.edges, self.arming.quiet_gap_ns)

    # -- the host's slips: two cards logged the other way round ----------------

    def reorder_offer(self, now: int) -> dict | None:
        """The swap the host is offered now (docs/rules-notes.md, "The host's
        slips"): the last two cards logged, when the presses say they were
        likely turned the other way round, or the verdicts as logged are
        unlikely and the other order fits; weighed once per state."""
        race = self.race
        key = (self.gamelog.version, len(self.queued.items), self.interrupted is None,
               None if race is None else (id(race), race.confirm, race.judging,
                                          race.live.verdict is not None))
        if self._offer is None or self._offer[0] != key:
            try:
                found = self._find_offer(now)
            except Exception:  # noqa: BLE001 - a check must not take the table down
                log.exception("the order check failed")
                found = None
            self._offer = (key, found)
        found = self._offer[1]
        return None if found is None else found["offer"]

    def _find_offer(self, now: int) -> dict | None:
        race = self.race
        if not self.gamelog.game.race_reasons:
            return None         # a game with no race: no order changes a verdict
        if self.interrupted is not None or any(not self.gamelog.game.is_draw(e)
                                               for e in self.queued.events()):
            return None
        if race is not None and (race.announced or race.request is None or (
                race.live.verdict is None and race.confirm is None and not race.judging)):
            return None         # a race still taking presses: they may tell
        for back in (0, 1):     # the last two cards; else the two before the last
            tail = self._slip_tail(back)
            if tail is not None and tail["pair"] not in self.declined:
                found = self._weigh(tail, now)
                if found is not None:
                    return found
        return None

    def _weigh(self, tail: dict, now: int) -> dict | None:
        """The offer for the two cards of ``tail`` (see :meth:`_slip_tail`),
        if the order check doubts the order they were logged in."""
        g = self.gamelog
        i, j = tail["at"]
        events, states, game = g.events, g.replay.states, g.game
        first, second = events[i], events[j]
        t_first, t_second = tail["times"]
        logged = (_turned(game.race_request(states[i + 1]), t_first, tail["races"][0]),
                  _turned(game.race_request(states[j + 1]), t_second, tail["races"][1]))
        if logged[0].kind is None and logged[1].kind is None:
            return None         # no race: the order changes no verdict (no plan needed)
        # with none of the host's events between them, the other order is the
        # two swapped, and who races each then is known without the plan: the
        # plan (can the events logged since follow?) waits until the check doubts
        alone = not tail["others"]
        seq, reqs = ([second, first], self._requests(tail, states[i], first, second)) \
            if alone else self._plan(tail, states[i], first, second)
        if reqs is None:
            return None         # the tracker takes them in no other order
        # (the plan may have been found for the same events read before: by content)
        swapped_req = {json.dumps(e, sort_keys=True): r for e, r in zip(seq, reqs)}
        swapped = (_turned(swapped_req[json.dumps(second, sort_keys=True)], t_second, None),
                   _turned(swapped_req[json.dumps(first, sort_keys=True)], t_first, None))
        check = self.desk.order_check(logged, swapped, now, events[:i], self.names)
        log.debug("order check %s %s: %s", first.get("card"), second.get("card"), check)
        if not check.doubtful(self.arming.people):
            return None
        if alone and self._plan(tail, states[i], first, second)[1] is None:
            return None         # the events logged since cannot follow the swap
        offer = {"events": [tail["pair"][1], tail["pair"][0]],
                 "cards": [second.get("card"), first.get("card")],
                 "lines": [g.line(second), g.line(first)],
                 "likely": round(check.swapped_p, 3)}
        return {"offer": offer, "at": i, "seq": seq + tail["after"], "pair": tail["pair"],
                "times": tail["times"], "cards": (first, second)}

    def _plan(self, tail: dict, state, first: dict, second: dict) -> tuple:
        """The host's events with the two cards of ``tail`` the other way
        round and the race each asks for then (both None: the tracker takes
        them in no other order), found once for the same events."""
        def plan() -> tuple:
            game = self.gamelog.game
            seq = reorder_plan(game, state, first, second, tail["others"], tail["after"])
            return seq, None if seq is None else requests_along(game, state, seq)
        return self._kept((self.gamelog.game_id, tail["pair"], repr(tail["others"]),
                           repr(tail["after"])), plan)

    def _requests(self, tail: dict, state, first: dict, second: dict) -> list | None:
        """The races of the two cards of ``tail`` the other way round, with
        nothing between them, after ``state`` (None: the tracker refuses that
        order), found once for the same events."""
        return self._kept((self.gamelog.game_id, tail["pair"], "swapped"),
                          lambda: requests_along(self.gamelog.game, state, [second, first]))

    def _kept(self, key, make: Callable[[], Any]) -> Any:
        """``make()``, kept for ``key`` among the last few: the tracker's answer
        for the same events never changes."""
        if key not in self._plans:
            if len(self._plans) >= 8:
                self._plans.pop(next(iter(self._plans)))
            self._plans[key] = make()
        return self._plans[key]

    def _slip_tail(self, back: int = 0) -> dict | None:
        """Two cards logged one after the other (the last two, or with
        ``back`` 1 the two before the last): ``at``, their places among the
        effective events, ``pair`` their event ids, ``times`` when the host
        logged them, the races the table judged for each, the host's other
        events between the first and the next card (its choices), and
        ``after``: the host's events from the next card on (kept after
        them). None when a race there was logged by hand or a log time is
        unknown."""
        g = self.gamelog
        events = g.events
        draws = [k for k in range(max(0, len(events) - 16), len(events))
                 if g.game.is_draw(events[k])]
        if len(draws) < 2 + back:
            return None
        i, j = draws[len(draws) - 2 - back:len(draws) - back]
        end = draws[-1] if back else len(events)
        ids = {id(ev): eid for eid, ev in g.rows}
        pair = (ids.get(id(events[i])), ids.get(id(events[j])))
        times = tuple(self.logged_at.get(x) for x in pair)
        if None in pair or None in times:
            return None
        races: list[dict | None] = [None, None]
        others = []
        for k in range(i + 1, len(events)):
            ev = events[k]
            if ev.get("type") == "race" and "spec" not in ev:
                return None     # the host's own verdict: not the judge's to doubt
            if k == j or k >= end:
                continue
            if ev.get("type") != "race":
                others.append(ev)
            elif races[k > j] is None:
                races[k > j] = ev
        after = [e for e in events[end:] if e.get("type") != "race"]
        return {"at": (i, j), "pair": pair, "times": times, "races": races, "others": others,
                "after": after}

    def reorder(self, pair: list, accept: bool) -> dict:
        """The host's one tap on the offered swap (``pair``: the offer's
        ``events``): accepted, the log's tail is undone and the cards logged
        again the other way round, each at its log time, so their races are
        judged again from the recorded presses (the host's choices after
        them follow where the tracker takes them); declined, the pair is
        not offered again."""
        now = self.clock()
        self.reorder_offer(now)
        found = None if self._offer is None else self._offer[1]
        if found is None or found["offer"]["events"] != pair:
            raise RulesError(NO_OFFER, "reorder")
        self._offer = None
        g = self.gamelog
        if not accept:
            self.declined.add(found["pair"])
            self.publish_state(None, None)
            return {"swapped": False, "order": None}
        self.drop()
        self.interrupted = None
        later = list(self.queued.items)     # cards logged since: after the two
        try:
            eid = self._undo_tail(found, later, now)
        finally:
            self.sync("undo")
        self.publish_state(eid, {"type": "undo"})
        self.drain()
        return {"swapped": True, "order": [g.line(e) for e in found["seq"]]}

    def _undo_tail(self, found: dict, later: list, now: int) -> int:
        """Undo the log from the offer's first card on. Each undo saves, in
        its own transaction, the queue that stands once it is done: the
        host's events undone so far in the order logged (then the cards
        logged since), and with the last undo the new order. A crash
        between two undos loses no card and logs none twice: the restart
        logs the queue again (in the old order until the last undo). A
        failed undo leaves the queue in memory as last saved."""
        g = self.gamelog
        ids = {id(ev): eid for eid, ev in g.rows}
        tail = list(g.events[found["at"]:])
        eid, saved = 0, [{"event": e, "logged_ns": t} for e, t in later]
        for k in range(len(tail)):
            self.queued.items.clear()
            if k == len(tail) - 1:
                self._requeue(found, now)
            else:
                for ev in tail[len(tail) - 1 - k:]:
                    if ev.get("type") != "race":
                        self.queued.add(jsonable(ev), self.logged_at.get(ids.get(id(ev)), now))
            self.queued.items.extend(later)
            try:
                eid = g.append({"type": "undo"}, queued=self.queued.to_json())
            except BaseException:
                self.queued.items.clear()
                self.queued.restore(saved)
                raise
            saved = self.queued.to_json()
        return eid

    def _requeue(self, found: dict, now: int) -> None:
        """Queue the offer's new order: the card turned first at the earlier
        of the two log times, the other at the later; the host's choices at
        their own."""
        g = self.gamelog
        first, second = found["cards"]
        lo, hi = sorted(found["times"])
        self._order_known_at = lo
        ids = {id(ev): eid for eid, ev in g.rows}
        for ev in found["seq"]:
            if ev is second or ev is first:
                t = lo if ev is second else hi
            else:
                t = self.logged_at.get(ids.get(id(ev)), now)
            self.queued.add(jsonable(ev), t)

    # -- the desk's owner -------------------------------------------------------

    def race_events(self) -> list[dict]:
        return self.gamelog.events

    def marks_flip(self, player: str) -> bool:
        g = self.gamelog
        return g.game.current_player(g.state) == player

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
        event = race_event(race, self.arming)
        mark = self.desk.flip_mark(race)
        if mark is not None:        # flipper arming: when the card was turned, for the record
            event["armed_by"], event["mark_ns"] = mark
        if not self._log_race(race, event, now):
            return
        self.desk.drop()
        try:   # stale now (the version moved on): the background writer deletes it
            self.store.clear_live_race(self.gamelog.game_id, wait=False)
        except StoreError as exc:
            self.fault("store", f"could not clear the live race: {exc}")
        self.sync("race")
        self.drain()

    def _log_race(self, race: DeskRace, event: dict, now: int) -> bool:
        """Append the race event (judged once, by the desk) and publish it:
        the verdict logged (the box's lights), then the new state; a refusal
        is a fault on the race card, and lights nothing."""
        try:
            eid = self.gamelog.append(event, judged=True)
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
        self.out.put(VerdictLogged(eid, eid=eid, reason=race.request.reason,
                                   verdict=race.live.verdict))
        self.publish_state(eid, event)
        return True

    def persist(self, race: DeskRace, durable: bool) -> None:
        """Save the live race row: durably now (at arming), or handed to the
        store's background writer (a press: no disk write under the lock)."""
        gid = self.gamelog.game_id
        new = race.live.edges[race.persisted:]
        race.edges_json.extend(e.to_json() for e in new)
        race.persisted = len(race.live.edges)
        body = jsonable({**race.record, "edges": list(race.edges_json),
                         "virtual": sorted(race.virtual)}, "live race")
        try:
            if durable:
                self.store.save_live_race(gid, race.version, body)
            else:
                self.store.save_live_race_soon(gid, race.version, body,
                                               on_error=self._not_saved)
        except StoreError as exc:
            self.fault("store", f"could not save the live race: {exc}")

    def _not_saved(self, exc: StoreError) -> None:
        """The background writer could not save the live race (its thread)."""
        self.out.call(self.fault, "store", f"could not save the live race: {exc}")

    def record_stray(self, e: Edge, why: str) -> None:
        # kept for the record, but not under the lock: the outbox writes it
        # once the lock is released
        self.out.defer_record(self.gamelog.game_id, {
            "player": e.player, "fault": "stray", "t_ns": e.t_ns,
            "message": f"stray press by {e.player} ({why}): no race window held it"})

    def publish(self, kind: str, data: Any) -> None:
        """The desk's news (``press``, ``race``) as the table's typed events."""
        version = self.gamelog.version
        if kind == "press":
            self.out.put(Press(version, player=data["player"], pressed=data["pressed"],
                               t_ns=data["t_ns"], data=data))
        elif kind == "race":
            self.out.put(self._race_event(version, data))
        else:   # the desk publishes presses and races only
            log.error("no table event for the desk's %r update", kind)

    def _race_event(self, version: int, view: dict | None) -> RaceShown:
        """A race view as the event it is: a race armed (a countdown), or shown."""
        race = self.race
        if race is None or (race is self._shown[0] and race.armed is self._shown[1]):
            return RaceShown(version, data=view)
        self._shown = (race, race.armed)
        if race.announced and view is not None and view.get("phase") == "countdown":
            return Countdown(version, data=view, announced=True, go_ns=race.go_ns)
        return RaceArmed(version, data=view, announced=race.announced, go_ns=race.go_ns)

    def fault(self, kind: str, message: str | None, player: str | None = None,
              t_ns: int | None = None) -> None:
        self.report_fault(kind, message, player, t_ns)

    # -- what the pages see -----------------------------------------------------

    def shot(self, now: int):
        """The race now, frozen for the views (:mod:`companion.table.raceshots`):
        the live race, else the one interrupted by a restart, else the race
        the game waits for (asked only then: the live race's view is on the
        verdict's path), else the last logged race with its late runners-up
        among the recent presses; None: no race to show."""
        if self.race is not None:
            return live_shot(self.race)
        if self.interrupted is not None:
            return self.interrupted
        pending = self.request()
        if pending is not None:
            return pending_shot(pending)
        g = self.gamelog
        events = g.events
        if not events or events[-1].get("type") != "race":
            return None
        return decided_shot(events[-1], self._decided_info(), self.desk.edges, self.arming)

    def _decided_info(self) -> dict | None:
        """The request the last logged race answered (for the verdict's
        wording), found once per version."""
        g = self.gamelog
        if self._decided is None or self._decided[0] != g.version:
            info = None
            states = g.replay.states
            try:
                before = g.game.race_request(states[-2]) if len(states) > 1 else None
                info = before.info if before is not None else None
            except Exception:  # noqa: BLE001 - wording only
                info = None
            self._decided = (g.version, info)
        return self._decided[1]

    def race_view(self, now: int) -> dict | None:
        return views.race_shot_view(self.gamelog.game, self.shot(now), now)

    def extras(self, now: int) -> dict:
        """The snapshot's strays, waiting presses, windows and queued cards."""
        return {**views.desk_extras(self.desk.recent_strays(now), self.desk.waiting(now),
                                    self.arming),
                "queued": self.queued_lines(), "reorder": self.reorder_offer(now)}


def _turned(req: RaceRequest | None, log_ns: int, race: dict | None) -> Turned:
    """A card as the order check weighs it: its race (none for a card with
    no unannounced race), who may race it, and the verdict the table gave
    it (``race``: its logged race event, None: not weighed)."""
    if req is None or req.announced or req.kind not in (FIRST, LAST):
        return Turned(None, (), log_ns)
    flipper = getattr(req, "flipper", None) or (req.info or {}).get("flipper")
    winner, nobody = None, False
    if race is not None and req.kind == FIRST and not race.get("tied"):
        who = race.get("winner")
        t = next((o.get("t_ns") for o in race.get("order") or ()
                  if isinstance(o, dict) and o.get("player") == who
                  and not o.get("after_verdict")), None)
        nobody = who is None
        winner = (who, t) if who is not None and isinstance(t, int) else None
    return Turned(req.kind, tuple(req.eligible), log_ns, flipper, winner, nobody)


__all__ = ["TableRaces"]
