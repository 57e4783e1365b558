"""The table session: one running game; it commits, persists and publishes.

The log in the :class:`~companion.store.Store` is the only source of truth:
the state is what replaying it gives (:class:`companion.eventlog.Replay`,
with ``{"type": "undo"}`` / ``{"type": "redo"}`` as events of the log). The
session keeps that replay in memory and applies each new event to it
incrementally: the tracker first accepts the event, then the event is
appended durably, then the in-memory state moves on (and is rolled back if
the append fails). A refused event (:class:`RulesError`) or a stale one
(:class:`StaleVersion`) changes nothing and is not logged.

The session commits, persists and publishes; the rest lives elsewhere:

* :mod:`companion.desk`: the live race, once (referee, recorded edges,
  arming, the box's GO, the verdict), for every edge from any source;
* :mod:`companion.arming`: which presses a logged card takes, the announced
  countdown and GO (docs/rules-notes.md, "Which card a press belongs to");
* :mod:`companion.waiting`: cards logged while a race was open;
* :mod:`companion.views`: the snapshots and race views the pages see;
* :mod:`companion.outbox`: the updates to subscribers, outside the lock;
* :mod:`companion.history`: statistics, CSV, game-file export and import.

A decided race is logged by the session itself as a ``race`` event carrying
its spec, edges and verdict, judged once by the desk's referee (an imported
game file's races are judged again: :func:`companion.gamefile.check_race`).
If the tracker refuses the verdict, it becomes a fault on the page; the
session never crashes on it.

Persistence of the race that is running (docs/store.md, "Resume"): its
record is written durably once when it is armed (never on the edge path);
each press it takes is handed to the store's background writer
(:meth:`Store.save_live_race_soon`), which writes it a moment later off the
session lock. A power cut resumes the race as ``interrupted`` with the
presses written before the cut, and the cards waiting behind it.

Time comes from the injected ``clock`` (integer nanoseconds, default
``time.monotonic_ns``), never from floats.

>>> from companion.store import Store
>>> table = TableSession(Store(":memory:"), clock=lambda: 0)
>>> table.new_game("chope", ["ana", "bo", "cy"]) > 0
True
>>> table.snapshot()["score_unit"]
'points'
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any, Callable

from . import arming, views
from .desk import DeskRace, RaceDesk
from .edges import Edge, VirtualEdge
from .eventlog import Replay, effective_events, jsonable, summary
from .gamefile import check_race
from .games import Game, RaceRequest, RulesError, get_game
from .history import (CSV_COLUMNS, PALETTE, export_csv, export_game, import_game,
                      normalise_players, player_stats)
from .outbox import Outbox
from .referee import DEFAULT_HOLD_NS, RaceError, Referee
from .store import StaleVersion, Store, StoreError
from .waiting import CardQueue

log = logging.getLogger(__name__)

MS = 1_000_000
US = 1_000

DEFAULT_SETTINGS: dict[str, Any] = {
    "debounce_ms": 20,          # leading-edge debounce per buzzer
    "hold_ms": DEFAULT_HOLD_NS // MS,  # decision hold after the deciding edge
    "stuck_ms": 10_000,         # a buzzer held longer is a fault
    "tie_window_us": 0,         # presses this close to the first are a tie
    "lockout_ms": None,         # a false starter may come back after this
    "quiet_gap_ms": 1_500,      # the console groups presses this close as one burst
    "claim_window_ms": 10_000,  # a card's race window reaches this far before its log
    "wait_ms": 5_000,           # ... and this far after its arm time (its deadline)
    "runner_up_ms": 600,        # a first-press race keeps presses this soon after its first
    "min_gap_ms": 250,          # two cards' first presses are never closer than this
    "confirm_ms": 2_500,        # a claimed press older than this needs the host's tap
    "flipper_arms": False,      # the flipper's press marks the flip and arms the race
    "countdown_ms": 3_000,      # announced race: countdown before GO
    "announced_wait_ms": 5_000,  # announced race: deadline after GO
    "auto_start": False,        # start announced races as soon as the game asks for one
    "recent_faults": 20,        # faults kept for the page
}

#: When a deadline :meth:`TableSession.tick` already passed is still due (a
#: tracker or store failure left it undone), the next try is this much later:
#: the clock thread retries, it never spins.
RETRY_NS = 10 * MS

_RACE_ERRORS = (RaceError, RulesError, ValueError)


class ResumeError(StoreError):
    """A stored game that the tracker can no longer replay."""


class TableSession:
    """One table's running game. Thread-safe: every public method takes the
    session lock; subscribers are called outside it, in order."""

    def __init__(self, store: Store, clock: Callable[[], int] = time.monotonic_ns,
                 referee: Referee | None = None, settings: dict | None = None):
        self.store = store
        self.clock = clock
        unknown = set(settings or {}) - set(DEFAULT_SETTINGS)
        if unknown:
            raise ValueError(f"unknown session setting(s) {sorted(unknown)}; known: "
                             f"{', '.join(DEFAULT_SETTINGS)}")
        self.settings = {**DEFAULT_SETTINGS, **(settings or {})}
        self.arming = arming.ArmingSettings.from_settings(self.settings)
        self._given_referee = referee
        self._lock = threading.RLock()
        self._outbox = Outbox(self._lock, self._write_record)
        self.faults: deque = deque(maxlen=int(self.settings["recent_faults"]))
        self._source_status = None
        self._cue_wait_ns: int | None = None
        self.desk: RaceDesk | None = None
        self._clear()

    def _clear(self) -> None:
        self.game: Game | None = None
        self.game_id: int | None = None
        self.replay: Replay | None = None
        self.version = 0
        self.players: list[dict] = []
        self._buzzers: dict[str, str] = {}
        if self.desk is not None:
            self.desk.close()
        self.desk = None
        self._interrupted: dict | None = None
        self._log: list[tuple[int, dict]] = []
        self._finished = False
        self.unknown_edges = 0
        self._queued = CardQueue()

    # ------------------------------------------------------------------
    # properties

    @property
    def state(self) -> Any:
        return None if self.replay is None else self.replay.state

    @property
    def names(self) -> list[str]:
        return [p["name"] for p in self.players]

    @property
    def referee(self) -> Referee | None:
        return None if self.desk is None else self.desk.referee

    @property
    def _race(self) -> DeskRace | None:
        return None if self.desk is None else self.desk.race

    @property
    def cue_wait_ns(self) -> int | None:
        """How much longer an announced race holds its verdict for the buzzer
        box's stamp of GO (None: the source sounds no cue of its own; the
        pipeline sets it for one that does, e.g. a Pico box)."""
        return self._cue_wait_ns

    @cue_wait_ns.setter
    def cue_wait_ns(self, value: int | None) -> None:
        self._cue_wait_ns = value
        if self.desk is not None:
            self.desk.cue_wait_ns = value

    def _ms(self, key: str) -> int:
        return int(self.settings[key]) * MS

    # ------------------------------------------------------------------
    # lifecycle

    def new_game(self, game: str, players: list, options: dict | None = None) -> int:
        """Start a new game at the table (the previous one stays in the
        history); its id. Raises RulesError for bad players or options."""
        players = normalise_players(players)
        options = jsonable(dict(options or {}), "options")
        try:
            tracker = get_game(game)
        except KeyError as exc:
            raise RulesError(str(exc).strip("'\""), "setup") from None
        rep = Replay(tracker, [p["name"] for p in players], options,
                     [tracker.setup([p["name"] for p in players], options)])
        with self._lock:
            gid = self.store.create_game(game, players, options)
            self._install(gid, tracker, rep, players, [])
            self._publish_state(None, None)
        self._outbox.dispatch()
        return gid

    def rematch(self) -> int:
        """A new game of the same game for the same players (names, colours,
        buzzers, seating) with the same options; its id. The finished game
        stays in the history."""
        with self._lock:
            self._need_game()
            info = self.store.game_info(self.game_id)
            game, players, options = info["game"], [dict(p) for p in self.players], info["options"]
        return self.new_game(game, players, options)

    def resume(self, game_id: int | None = None) -> bool:
        """Reopen the table's current game (or ``game_id``, which becomes
        current) from the store; False if there is none. The state is the
        replay of its log; a race that was in progress is shown as
        ``interrupted`` (see docs/store.md, "Resume")."""
        with self._lock:
            gid = self.store.current_game() if game_id is None else game_id
            if gid is None:
                return False
            info = self.store.game_info(gid)
            tracker, rep, log_rows = _replay_stored(self.store, gid, info)
            if game_id is not None and self.store.current_game() != gid:
                self.store.set_current(gid)
            self._install(gid, tracker, rep, info["players"], log_rows)
            if self._finished != info["finished"]:
                self._mark_finished()
            self._resume_live_race(gid)
            self._publish_state(None, None)
        self._outbox.dispatch()
        return True

    def _resume_live_race(self, gid: int) -> None:
        saved = self.store.load_live_race(gid)
        if saved is None:
            return
        version, body = saved
        req = self._request()
        self._queued.restore(body.get("queued"))
        if version == self.version and req is not None and req.reason == body.get("reason"):
            self._interrupted = body
        else:
            self.store.clear_live_race(gid)

    def _install(self, gid: int, tracker: Game, rep: Replay, players: list[dict],
                 log_rows: list[tuple[int, dict]]) -> None:
        self._drop_race(clear=False)
        self._clear()
        self.game, self.game_id, self.replay = tracker, gid, rep
        self.faults.clear()
        try:   # the faults recorded before a restart are still the table's news
            self.faults.extend({k: v for k, v in f.items() if k not in ("id", "created")}
                               for f in self.store.faults(gid, limit=self.faults.maxlen or 20)
                               if f.get("fault") != "stray")
        except StoreError as exc:
            log.warning("could not read the recorded faults: %s", exc)
        self.players = [dict(p) for p in players]
        self._buzzers = self._buzzer_map()
        self._log = list(log_rows)
        self.version = log_rows[-1][0] if log_rows else 0
        self._finished = tracker.finished(rep.state)
        ref = self._given_referee
        if ref is not None and set(ref.players) == set(self.names):
            self._given_referee = None
        else:
            ref = Referee(self.names, debounce_ns=self._ms("debounce_ms"),
                          stuck_ns=self._ms("stuck_ms"), hold_ns=self._ms("hold_ms"))
        self.desk = RaceDesk(self, self.arming, ref)
        self.desk.cue_wait_ns = self._cue_wait_ns

    def _buzzer_map(self) -> dict[str, str]:
        out = {p["name"]: p["name"] for p in self.players if not p["buzzer"]}
        out.update({p["buzzer"]: p["name"] for p in self.players if p["buzzer"]})
        return out

    def set_player(self, name: str, colour: str | None = None,
                   buzzer: str | None | bool = False) -> None:
        """Change a player's colour or buzzer (``buzzer=None`` unassigns it;
        the default False leaves it). Not a game event: no version change."""
        with self._lock:
            self._need_game()
            players = [dict(p) for p in self.players]
            for p in players:
                if p["name"] == name:
                    if colour is not None:
                        p["colour"] = colour
                    if buzzer is not False:
                        p["buzzer"] = buzzer
                    break
            else:
                raise RulesError(f"no player called {name!r}", "setup")
            players = normalise_players(players)
            self.store.update_players(self.game_id, players)
            self.players = players
            self._buzzers = self._buzzer_map()
            self._publish_state(None, None)
        self._outbox.dispatch()

    def _need_game(self) -> None:
        if self.replay is None:
            raise RulesError("no game at the table: start one first", "session")

    def _need_player(self, player: Any, rule: str) -> None:
        if not isinstance(player, str) or player not in self.names:
            raise RulesError(f"no player called {player!r}", rule)

    # ------------------------------------------------------------------
    # the host's and the players' events

    def log(self, event: dict, expected_version: int | None = None) -> dict:
        """Log one event the host made against ``expected_version`` (None:
        no check); the state update, or a ``queued`` one when the event waits
        behind the open race. Raises RulesError or StaleVersion and changes
        nothing if the event is refused."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RulesError("an event must be a JSON object with a 'type'", "format")
        with self._lock:
            self._need_game()
            event = jsonable(event)
            kind = event["type"]
            if kind not in ("undo", "redo", "race") and self._must_wait(event, expected_version):
                update = self._queue(event)
            else:
                eid = self._commit(event, expected_version)
                # the race first: the state update must not carry a race the
                # game no longer asks for (a live board would keep "May win")
                self._sync_race("host" if kind not in ("undo", "redo", "race") else kind)
                update = self._publish_state(eid, event)
                self._drain_queue()
        self._outbox.dispatch()
        return update

    def undo(self, expected_version: int | None = None) -> dict:
        """Undo the last effective event (logged as ``{"type": "undo"}``)."""
        return self.log({"type": "undo"}, expected_version)

    def redo(self, expected_version: int | None = None) -> dict:
        """Put back the last undone event (logged as ``{"type": "redo"}``)."""
        return self.log({"type": "redo"}, expected_version)

    def _must_wait(self, event: dict, expected_version: int | None) -> bool:
        if (self._race is not None or self._queued) and expected_version is not None \
                and expected_version != self.version:
            self._commit(event, expected_version)       # raises StaleVersion
        return self._queued.must_wait(self.game, self.state, event, self._race is not None)

    def _queue(self, event: dict) -> dict:
        """Keep ``event`` (with the time it was logged) until the open race
        is logged; a card stops the open unannounced race taking presses now
        (later ones are the new card's). Saved with the live race, so a power
        cut loses no logged card."""
        now = self.clock()
        self._queued.add(event, now)
        race = self._race
        if race is not None:
            if self.game.is_draw(event):
                self.desk.cut(now)
            race.record = {**race.record, "queued": self._queued.to_json()}
            self.persist(race, True)
        data = {"event": views.public_event(self.game, event), "line": self._public_line(event),
                "queued": [self._public_line(e) for e in self._queued.events()]}
        self.publish("queued", data)
        return {"id": None, "type": "queued", "version": self.version, "data": data}

    def _drain_queue(self) -> None:
        """Log the cards that waited behind a race, in order, each at the
        time it was logged; stop at one whose race is still open."""
        while self._queued and self._race is None and self.replay is not None:
            event, logged_ns = self._queued.pop()
            try:
                eid = self._commit(event, None)
            except (RulesError, StoreError) as exc:
                self.fault("queued", f"the {self._public_line(event)} logged during the race "
                                     f"was refused once the race was logged: {exc}")
                continue
            self._sync_race("host", logged_ns)
            self._publish_state(eid, event)
            self._cut_at_next_draw()

    def _cut_at_next_draw(self) -> None:
        nxt = self._queued.next_draw(self.game)
        if self._race is not None and nxt is not None:
            self.desk.cut(nxt)

    def private_snapshot(self, player: str) -> dict:
        """What ``player``'s private page shows: ``{"player", "view",
        "events", "version"}`` (their hidden cards, and the events they may
        log themselves). RulesError for an unknown player or no game."""
        with self._lock:
            self._need_game()
            self._need_player(player, "private")
            return views.private_snapshot(self.game, self.state, player, self.version)

    def log_private(self, player: str, event: dict, expected_version: int | None = None) -> dict:
        """Log an event from ``player``'s private page: only one of
        ``game.private_events(state, player)`` (RulesError otherwise). The
        public streams get only ``game.public_event(event)``; the answer is
        the public update plus ``"private"``, the player's new private
        snapshot (for that page only)."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RulesError("an event must be a JSON object with a 'type'", "format")
        with self._lock:
            self._need_game()
            self._need_player(player, "private")
            event = jsonable(event)
            if self.game.finished(self.state) or event not in jsonable(
                    self.game.private_events(self.state, player), "private events"):
                raise RulesError(f"{player} cannot log that from their own page now: it is "
                                 f"not one of their events", "private")
            eid = self._commit(event, expected_version)
            self._sync_race("host")
            update = self._publish_state(eid, event)
            answer = {**update, "private": views.private_snapshot(
                self.game, self.state, player, self.version)}
        self._outbox.dispatch()
        return answer

    def _commit(self, event: dict, expected_version: int | None, judged: bool = False) -> int:
        """Apply on the replay, append durably, keep (or roll back). Lock
        held. A race the desk ``judged`` is not judged again."""
        if expected_version is not None and expected_version != self.version:
            last = self._public_line(self._log[-1][1]) if self._log else "nothing yet"
            raise StaleVersion(
                f"the table changed since this console loaded it (it saw version "
                f"{expected_version}, the table is at {self.version}; last: {last}); nothing "
                f"was logged: refresh and try again", expected_version, self.version)
        rep = self.replay
        if not judged:
            check_race(event)
        saved = (list(rep.events), list(rep.states), list(rep.undone))
        rep.apply(event)
        try:
            eid = self.store.append(self.game_id, event, expected_version=self.version)
        except BaseException:
            rep.events, rep.states, rep.undone = saved
            raise
        self.version = eid
        self._log.append((eid, event))
        if self.game.finished(rep.state) != self._finished:
            self._finished = not self._finished
            self._mark_finished()
        return eid

    def _mark_finished(self) -> None:
        try:
            self.store.mark_finished(
                self.game_id, self._summary() if self.game.finished(self.state) else None)
        except StoreError as exc:  # derived data: the log already has the truth
            self.fault("store", f"could not record the end of the game: {exc}")

    def _summary(self) -> dict:
        return jsonable(summary(self.game, self.names, self.state), "summary")

    def legal_events(self) -> list[dict]:
        with self._lock:
            if self.replay is None or self.game.finished(self.state):
                return []
            return self.game.legal_events(self.state)

    def _public_line(self, event: dict) -> str:
        return views.public_line(self.game, event)

    # ------------------------------------------------------------------
    # buzzers: every edge, from a pin, a box or a phone, comes in here

    def feed_edge(self, edge) -> None:
        """The sink for edge sources and the one way in for every edge: a
        :class:`companion.edges.ButtonEdge` (``edge.buzzer`` is a buzzer
        id), the older :class:`Edge` whose ``player`` is a buzzer id (or the
        name of a player who has no buzzer id), or a phone's
        :class:`~companion.edges.VirtualEdge`. Unknown buzzers, and values
        that are not edges, are counted in ``unknown_edges`` and ignored."""
        with self._lock:
            if self.desk is None:
                return
            if isinstance(edge, VirtualEdge):
                if edge.player in self.names:
                    self.desk.feed_virtual(edge)
                else:
                    self.unknown_edges += 1
            else:
                e = self._seated(edge)
                if e is None:
                    self.unknown_edges += 1
                else:
                    self.desk.feed(e)
        self._outbox.dispatch()

    def _seated(self, edge) -> Edge | None:
        """The edge said of the player seated at its buzzer (None: unknown)."""
        buzzer = getattr(edge, "buzzer", None)
        if buzzer is None:
            buzzer = getattr(edge, "player", None)
        t_ns = getattr(edge, "t_ns", None)
        name = self._buzzers.get(buzzer) if isinstance(buzzer, str) else None
        if name is None or isinstance(t_ns, bool) or not isinstance(t_ns, int):
            return None
        return Edge(name, bool(edge.pressed), t_ns)

    def virtual_press(self, player: str, pressed: bool | None = None,
                      seq: int | None = None, pipeline=None) -> None:
        """A phone's on-screen buzzer, stamped with the clock now (millisecond
        accuracy, marked ``virtual`` in the race record). ``pressed=None`` is
        a tap (press and release); True holds the button down, False lets go.
        ``seq`` is the page's increasing number for this buzzer's changes
        (see :meth:`RaceDesk.feed_virtual`). The edge goes through
        ``pipeline`` (the buzzers' :class:`~companion.buzzers.pipeline.Pipeline`,
        the same path as a pin's edge) when the table has one, else straight
        to :meth:`feed_edge`."""
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise RulesError("seq must be an integer", "buzzer")
        with self._lock:
            self._need_game()
            self._need_player(player, "buzzer")
            edge = VirtualEdge(player, pressed, self.clock(), seq)
        if pipeline is not None:
            pipeline.deliver(edge)
        else:
            self.feed_edge(edge)

    def source_fault(self, fault) -> None:
        """A fault the buzzer source reports (``.kind``, ``.message``,
        ``.buzzer``, ``.t_ns``): recorded like a stuck buzzer (in the store,
        shown again after a restart) and published."""
        kind = str(getattr(fault, "kind", None) or "source")
        message = getattr(fault, "message", None)
        buzzer = getattr(fault, "buzzer", None)
        t_ns = getattr(fault, "t_ns", None)
        with self._lock:
            player = self._buzzers.get(buzzer) if isinstance(buzzer, str) else None
            self.fault(kind, None if message is None else str(message), player,
                       t_ns if isinstance(t_ns, int) and not isinstance(t_ns, bool) else None,
                       buzzer=buzzer if isinstance(buzzer, str) else None, source=True)
        self._outbox.dispatch()

    def source_status(self, status) -> None:
        """The buzzer source's latest status (``.source``, ``.connected``,
        ``.precision_ns``, ``.error_bound_ns``, ``.detail``): kept for the
        snapshot's ``buzzers`` and published as a ``buzzers`` update."""
        with self._lock:
            self._source_status = status
            self.publish("buzzers", views.buzzers_view(status))
        self._outbox.dispatch()

    # ------------------------------------------------------------------
    # the clock

    def tick(self) -> None:
        """Poll the desk on the clock: settle debounces, find stuck buttons,
        move a countdown to GO, decide and log races. Cheap when idle."""
        with self._lock:
            if self.desk is None:
                return
            decided = self.desk.poll(self.clock())
        # the verdict reaches the pages first (a transient race update);
        # then it is logged durably and the new state follows
        self._outbox.dispatch()
        if decided is not None:
            with self._lock:
                if self._race is decided:
                    self.race_decided(decided, self.clock())
            self._outbox.dispatch()

    def next_deadline(self) -> int | None:
        """The earliest clock time at which :meth:`tick` has work to do, or
        None when nothing is due: the clock thread may sleep until it is
        woken (see :meth:`RaceDesk.next_deadline`)."""
        with self._lock:
            return None if self.desk is None else self.desk.next_deadline(RETRY_NS)

    # ------------------------------------------------------------------
    # races: the host's commands

    def _request(self) -> RaceRequest | None:
        if self.replay is None or self.game.finished(self.state):
            return None
        return self.game.race_request(self.state)

    def confirm_race(self, accept: bool, t_ns: int | None = None) -> dict | None:
        """The host's answer to a card's question: ``accept`` lets the claim
        decide the card (logged at once if it already has a verdict), with
        ``t_ns`` one of its ``choices`` (the press the card's race starts
        at); otherwise its presses become strays and the card is raced again
        from now (the answer may come as late as the host likes). The race
        view."""
        if t_ns is not None and (isinstance(t_ns, bool) or not isinstance(t_ns, int)):
            raise RulesError("t_ns must be the chosen press's time in nanoseconds", "race")
        with self._lock:
            self._need_game()
            race = self._race
            if race is None or race.confirm is None:
                raise RulesError("no race is waiting for the host's confirmation", "race")
            now = self.clock()
            try:
                log_now = self.desk.confirm(accept, t_ns, now)
            except ValueError as exc:
                raise RulesError(str(exc), "race") from None
            if log_now:
                self.race_decided(race, now)
            elif self._race is race:
                self.publish("race", self.race_view(now))
            self._cut_at_next_draw()
            view = self.race_view(now)
        self._outbox.dispatch()
        return view

    def use_presses(self, t_ns: int) -> dict | None:
        """The host's tap on a stray press: the card waiting for an
        unannounced race takes the presses from ``t_ns`` on, as if they had
        been its own. The race view."""
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise RulesError("t_ns must be the press's time in nanoseconds", "race")
        with self._lock:
            self._need_game()
            req = self._request()
            if req is None or req.announced:
                raise RulesError("no card is waiting for an unannounced race: nothing for "
                                 "these presses to decide", "race")
            now = self.clock()
            try:
                self._interrupted = None
                self.desk.use_presses(req, t_ns, now, self.names, self.version)
            except ValueError as exc:
                raise RulesError(str(exc), "race") from None
            view = self.race_view(now)
        self._outbox.dispatch()
        return view

    def start_race(self, countdown_ms: int | None = None) -> dict:
        """Start the race the game asks for with a countdown: GO at now +
        ``countdown_ms`` (default setting); presses before GO are false
        starts. Also re-runs an unannounced or interrupted race. The race view."""
        with self._lock:
            self._need_game()
            req = self._request()
            if req is None:
                raise RulesError("no race to start: the game is not waiting for one", "race")
            if countdown_ms is None:
                countdown_ms = self.settings["countdown_ms"]
            if isinstance(countdown_ms, bool) or not isinstance(countdown_ms, int) \
                    or countdown_ms < 0:
                raise RulesError("countdown_ms must be a non-negative integer", "race")
            view = self._start_announced(req, countdown_ms * MS)
        self._outbox.dispatch()
        return view

    def _start_announced(self, req: RaceRequest, countdown_ns: int | None) -> dict:
        now = self.clock()
        try:
            self._drop_race()
            self._interrupted = None
            self.desk.start_announced(req, countdown_ns, now, self.names, self.version)
        except (RaceError, ValueError) as exc:
            raise RulesError(f"the game asked for a race the referee cannot run: {exc}",
                             "race") from None
        return self.race_view(now)

    def cue_sounded(self, t_ns: int, at_ns: int | None = None) -> None:
        """The buzzer box sounded its cue at ``t_ns`` (its own stamp, on the
        clock of its presses), asked for ``at_ns``: when that is the live
        announced race's GO, the race is armed again at ``t_ns``, so presses
        before the box's GO are false starts on the box's clock
        (docs/rules-notes.md, "Races"). A stamp of another cue changes
        nothing; one that comes after the race was decided on the scheduled
        GO is recorded as a ``cue`` fault (the host may run it again)."""
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise ValueError(f"a cue stamp must be integer nanoseconds, not {t_ns!r}")
        with self._lock:
            if self.desk is None or self.replay is None:
                return
            go = self.desk.cue_sounded(t_ns, at_ns, self.clock())
            if go is not None:
                self.fault("cue", f"the buzzer box sounded GO {(t_ns - go) / MS:+.3f} ms from "
                                  f"the scheduled GO, after the race was decided on the "
                                  f"scheduled GO; undo it and run it again if a press came in "
                                  f"between", t_ns=t_ns)
        self._outbox.dispatch()

    def cancel_race(self) -> None:
        """Stop the live race without logging anything (the game still waits
        for its outcome: re-run it or log it by hand)."""
        with self._lock:
            self._drop_race()
            self._interrupted = None
            if self.game_id is not None:
                self.publish("race", self.race_view(self.clock()))
        self._outbox.dispatch()

    def _drop_race(self, clear: bool = True) -> None:
        had = self.desk is not None and self.desk.drop()
        if (had or self._interrupted is not None) and clear:
            try:
                self.store.clear_live_race(self.game_id)
            except StoreError as exc:
                self.fault("store", f"could not clear the live race: {exc}")

    def _sync_race(self, trigger: str, logged_ns: int | None = None) -> None:
        """After the state changed: drop a race the game no longer asks for;
        after the host logged a card (at ``logged_ns``, default now), give an
        unannounced race the presses that are its own."""
        now = self.clock()
        try:
            req = self._request()
        except Exception as exc:  # a tracker bug must not take the table down
            log.exception("race_request failed")
            self.fault("tracker", f"race_request failed: {exc}")
            return
        race = self._race
        if race is not None and (req is None or req.reason != race.request.reason
                                 or req.kind != race.request.kind):
            self._drop_race()
        if self._interrupted is not None and (
                req is None or req.reason != self._interrupted.get("reason")):
            self._drop_race()
            self._interrupted = None
        if req is None or self._race is not None:
            return
        try:
            if not req.announced and trigger == "host":
                self._drop_race()
                self._interrupted = None
                self.desk.take_card(req, now if logged_ns is None else logged_ns, now,
                                    self.names, self.version)
            elif req.announced and self.settings["auto_start"] and trigger in ("host", "race"):
                self._start_announced(req, None)
        except _RACE_ERRORS as exc:
            self.fault("race", f"cannot run the race the game asked for: {exc}")

    def bursts(self) -> list[list[Edge]]:
        """The recent bursts of accepted edges, oldest first (a burst starts
        at a press after ``quiet_gap_ms`` without presses)."""
        with self._lock:
            return [] if self.desk is None else arming.bursts(self.desk.edges,
                                                              self.arming.quiet_gap_ns)

    # ------------------------------------------------------------------
    # the desk's owner (called by the desk with the lock held)

    def race_events(self) -> list[dict]:
        return [] if self.replay is None else self.replay.events

    def marks_flip(self, player: str) -> bool:
        return self.replay is not None and self.game.current_player(self.state) == player

    def race_decided(self, race: DeskRace, now: int) -> None:
        """Log a decided race as an event (the tracker may refuse it: a fault)."""
        if race.confirm is not None:    # the host answers the card's question first
            self.publish("race", self.race_view(now))
            return
        req = self._request()
        if req is None or req.reason != race.request.reason:
            self.fault("race", "the decided race no longer matches the game; not logged")
            self._drop_race()
            return
        event = views.race_event(race, self.arming)
        if race.awaits_cue and race.armed.scheduled_ns is None:
            race.awaits_cue = False
            self.fault("cue", "the buzzer box did not report when it sounded GO: the race "
                              "was judged on the scheduled GO")
        try:
            eid = self._commit(event, None, judged=True)
        except (RulesError, StoreError) as exc:
            race.error = str(exc)
            kind = "store" if isinstance(exc, StoreError) else "race-rejected"
            self.fault(kind, f"could not log the race: {exc}" if kind == "store"
                       else f"the game refused the verdict: {exc}")
            self.publish("race", self.race_view(now))
            return
        except Exception as exc:  # a tracker bug must not take the table down
            log.exception("logging a race failed")
            race.error = str(exc)
            self.fault("tracker", f"logging the race failed: {exc}")
            return
        self.desk.drop()
        try:   # stale now (the version moved on): the background writer deletes it
            self.store.clear_live_race(self.game_id, wait=False)
        except StoreError as exc:
            self.fault("store", f"could not clear the live race: {exc}")
        self._publish_state(eid, event)
        self._sync_race("race")
        self._drain_queue()

    def persist(self, race: DeskRace, durable: bool) -> None:
        """Save the live race row: durably now (at arming), or handed to the
        store's background writer (a press: no disk write under the lock)."""
        new = race.live.edges[race.persisted:]
        race.edges_json.extend(e.to_json() for e in new)
        race.persisted = len(race.live.edges)
        body = jsonable({**race.record, "edges": list(race.edges_json),
                         "virtual": sorted(race.virtual)}, "live race")
        try:
            if durable:
                self.store.save_live_race(self.game_id, race.version, body)
            else:
                self.store.save_live_race_soon(self.game_id, race.version, body,
                                               on_error=self._live_race_not_saved)
        except StoreError as exc:
            self.fault("store", f"could not save the live race: {exc}")

    def _live_race_not_saved(self, exc: StoreError) -> None:
        """The background writer could not save the live race (its thread)."""
        with self._lock:
            self.fault("store", f"could not save the live race: {exc}")
        self._outbox.dispatch()

    def record_stray(self, e: Edge, why: str) -> None:
        # kept for the record, but not under the lock: the outbox writes it
        # once the lock is released
        self._outbox.defer_record(self.game_id, {
            "player": e.player, "fault": "stray", "t_ns": e.t_ns,
            "message": f"stray press by {e.player} ({why}): no race window held it"})

    def _write_record(self, game_id: int | None, fault: dict) -> None:
        try:
            self.store.record_fault(game_id, fault)
        except StoreError as exc:
            log.warning("could not record a stray press: %s", exc)

    def publish(self, kind: str, data: Any) -> None:
        self._outbox.put({"id": None, "type": kind, "version": self.version, "data": data})

    def fault(self, kind: str, message: str | None, player: str | None = None,
              t_ns: int | None = None, buzzer: str | None = None,
              source: bool = False) -> None:
        f = {"player": player, "fault": kind, "t_ns": self.clock() if t_ns is None else t_ns}
        if buzzer is not None:
            f["buzzer"] = buzzer
        if message:
            f["message"] = message
            log.warning("table fault: %s", message)
        self.faults.append(f)
        if kind != "store" or source:   # a store that just failed cannot take the record
            try:
                self.store.record_fault(self.game_id, f)
            except StoreError as exc:
                log.warning("could not record the fault: %s", exc)
        self.publish("fault", f)

    # ------------------------------------------------------------------
    # views

    def race_view(self, now: int) -> dict | None:
        return views.table_race_view(self.game, self.replay, self._race, self._interrupted,
                                     self._request() if self.replay is not None else None,
                                     self.desk.edges if self.desk else (), self.arming, now)

    def snapshot(self) -> dict:
        """The public view (GET /api/state); see docs/session-api.md."""
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict:
        buzzers = views.buzzers_view(self._source_status)
        if self.replay is None:
            return views.empty_snapshot(self.faults, buzzers)
        now = self.clock()
        snap = views.snapshot(self.game, self.replay, game_id=self.game_id,
                              version=self.version, players=self.players,
                              race=self.race_view(now), faults=self.faults,
                              last_event=self._log[-1][1] if self._log else None,
                              buzzers=buzzers)
        snap.update(views.desk_extras(self.desk, now, self.arming))
        snap["queued"] = [self._public_line(e) for e in self._queued.events()]
        return snap

    def host_snapshot(self) -> dict:
        """The snapshot plus what the host console needs: legal events,
        undo/redo availability and what they would change, the pending race
        request, the tracker's host view, the recent log, the settings and
        the presses a card logged now could still claim (``windows``)."""
        with self._lock:
            snap = self._snapshot()
            req = None if self.replay is None else self._request()
            extras = views.host_extras(self.game, self.replay, request=req,
                                       log_rows=self._log, settings=self.settings,
                                       windows=snap.get("waiting") or [])
            if extras["race_request"] is not None:
                extras["race_request"] = jsonable(extras["race_request"], "race request")
            snap.update(extras)
            return snap

    # ------------------------------------------------------------------
    # subscribers

    def subscribe(self, fn: Callable[[dict], None]) -> Callable[[], None]:
        """Call ``fn(update)`` for every update (outside the session lock, in
        order); returns the function that unsubscribes it."""
        return self._outbox.subscribe(fn)

    def _publish_state(self, eid: int | None, event: dict | None) -> dict:
        data = self._snapshot()
        data["event"] = views.public_event(self.game, event)
        data["line"] = None if event is None else self._public_line(event)
        update = {"id": eid, "type": "state", "version": self.version, "data": data}
        self._outbox.put(update)
        return update

    def updates_since(self, last_id: int) -> list[dict] | None:
        """What an SSE client that saw update ``last_id`` missed: ``[]`` when
        it is up to date, else one ``state`` update with the current snapshot
        (``data["missed"]`` lists the missed log lines); None when
        ``last_id`` is not an event of the current game (send a snapshot)."""
        with self._lock:
            if self.game_id is None:
                return None
            if last_id == self.version:
                return []
            if last_id <= 0 or last_id > self.version \
                    or not self.store.has_event(self.game_id, last_id):
                return None
            missed = self.store.events(self.game_id, after_id=last_id)
            if not missed:
                return []
            data = self._snapshot()
            eid, event = missed[-1]
            data["event"] = views.public_event(self.game, event)
            data["line"] = self._public_line(event)
            data["missed"] = [{"id": i, "type": e.get("type"), "line": self._public_line(e)}
                              for i, e in missed]
            return [{"id": eid, "type": "state", "version": self.version, "data": data}]

    # ------------------------------------------------------------------
    # history (companion.history, on this session's store)

    def history(self) -> list[dict]:
        """Every game in the store, newest first (:meth:`Store.list_games`)."""
        return self.store.list_games()

    def stats(self) -> dict:
        """Per-player statistics across every game in the store (see
        :func:`companion.history.player_stats`)."""
        return player_stats(self.store)

    def export_game(self, game_id: int | None = None) -> str:
        """The game as a game file (docs/game-file.md): the header, then every
        logged event, undo and redo included (the audit trail)."""
        gid = self.game_id if game_id is None else game_id
        if gid is None:
            raise RulesError("no game to export", "session")
        return export_game(self.store, gid)

    def export_csv(self) -> str:
        return export_csv(self.store)

    def import_game(self, text: str) -> int:
        """Store an exported game file as a finished (or unfinished) game of
        the history, after replaying it (GameFileError names a bad line); it
        does not become the table's current game."""
        return import_game(self.store, text)


def _replay_stored(store: Store, gid: int, info: dict) -> tuple[Game, Replay, list]:
    """A stored game's tracker, its replay and its log rows; ResumeError
    naming what the tracker can no longer load or replay."""
    try:
        tracker = get_game(info["game"])
    except (KeyError, ImportError) as exc:
        raise ResumeError(f"game {gid} is {info['game']!r}, which this companion "
                          f"cannot load: {exc}") from None
    names = [p["name"] for p in info["players"]]
    try:
        rep = Replay(tracker, names, info["options"], [tracker.setup(names, info["options"])])
    except RulesError as exc:
        raise ResumeError(f"game {gid} cannot be set up again: {exc}") from None
    log_rows = store.events(gid)
    for eid, ev in log_rows:
        try:
            rep.apply(ev)
        except RulesError as exc:
            raise ResumeError(f"game {gid} cannot be replayed: event {eid} "
                              f"({tracker.describe(ev)}) is refused by the {tracker.title} "
                              f"tracker: {exc}") from None
    return tracker, rep, log_rows


__all__ = ["CSV_COLUMNS", "DEFAULT_SETTINGS", "PALETTE", "ResumeError", "TableSession",
           "effective_events", "export_csv", "export_game", "import_game",
           "normalise_players", "player_stats", "StaleVersion", "StoreError"]
