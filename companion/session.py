"""The table session: one running game; it commits, persists and publishes.

The log in the :class:`~companion.store.Store` is the only source of truth:
the state is what replaying it gives (:class:`companion.gamefile.Replay`,
with ``{"type": "undo"}`` / ``{"type": "redo"}`` as events of the log). The
session keeps that replay in memory and applies each new event to it
incrementally: the tracker first accepts the event, then the event is
appended durably, then the in-memory state moves on (and is rolled back if
the append fails). A refused event (:class:`RulesError`) or a stale one
(:class:`StaleVersion`) changes nothing and is not logged.

The session is thin on purpose; the rest lives in pure modules:

* :mod:`companion.arming`: bursts, which burst a logged card claims, the
  announced countdown and GO, race windows (docs/rules-notes.md, "Races");
* :mod:`companion.views`: the snapshots and race views the pages see;
* :mod:`companion.history`: statistics, CSV, game-file export and import.

A decided race is logged by the session itself as a ``race`` event carrying
its spec, edges and verdict, so replay re-judges it
(:func:`companion.gamefile.check_race`). If the tracker refuses the verdict,
it becomes a fault on the page; the session never crashes on it.

Persistence of the race that is running (docs/store.md, "Resume"): its
record is written durably once when it is armed (never on the edge path);
each press it takes is handed to the store's background writer
(:meth:`Store.save_live_race_soon`), which writes it a moment later off the
session lock. A power cut resumes the race as ``interrupted`` with the
presses written before the cut.

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
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from . import arming, views
from .edges import Edge
from .gamefile import Replay, check_race, summary
from .games import Game, RaceRequest, RulesError, get_game
from .history import (CSV_COLUMNS, PALETTE, effective_events, export_csv, export_game,
                      import_game, jsonable, normalise_players, player_stats)
from .referee import DEFAULT_HOLD_NS, LiveRace, RaceError, Referee, earliest
from .store import StaleVersion, Store, StoreError

log = logging.getLogger(__name__)

MS = 1_000_000
US = 1_000

DEFAULT_SETTINGS: dict[str, Any] = {
    "debounce_ms": 20,          # leading-edge debounce per buzzer
    "hold_ms": DEFAULT_HOLD_NS // MS,  # decision hold after the deciding edge
    "stuck_ms": 10_000,         # a buzzer held longer is a fault
    "tie_window_us": 0,         # presses this close to the first are a tie
    "lockout_ms": None,         # a false starter may come back after this
    "quiet_gap_ms": 1_500,      # a burst of presses ends after this long without a press
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

def _in_order(edges) -> list[Edge]:
    """Edges in the referee's canonical order (by time, a release first)."""
    return sorted(edges, key=lambda e: (e.t_ns, e.pressed, e.player))


def _flipper(req: RaceRequest) -> str | None:
    """The player who turned the card and may not race it: the request's
    ``info["flipper"]``, else the one player of a first-press race who is
    not eligible (Chope!'s Table: the flipper cannot chope)."""
    info = req.info if isinstance(req.info, dict) else {}
    if isinstance(info.get("flipper"), str):
        return info["flipper"]
    if req.kind == "first-press" and req.players:
        out = [p for p in req.players if p not in req.eligible]
        if len(out) == 1:
            return out[0]
    return None


def _legal_after_races(game: Game, state: Any, events: list[dict], budget: int = 256) -> bool:
    """Whether ``events`` can follow ``state`` in order once each race the
    game waits for on the way has some outcome (a bounded search: with the
    budget spent, they are taken; a refusal then is a recorded fault)."""
    left = [budget]

    def ok(st: Any, rest: list[dict]) -> bool:
        left[0] -= 1
        if left[0] < 0:
            return True
        if game.race_request(st) is not None:
            for outcome in game.race_outcomes(st):
                try:
                    after = game.apply(st, outcome)
                except RulesError:
                    continue
                if ok(after, rest):
                    return True
            return False
        if not rest:
            return True
        try:
            return ok(game.apply(st, rest[0]), rest[1:])
        except RulesError:
            return False
    return ok(state, events)


class ResumeError(StoreError):
    """A stored game that the tracker can no longer replay."""


@dataclass
class _Race:
    """The session's live race: what the game asked for, how it was armed,
    the referee's LiveRace, and what of it was persisted and published."""

    request: RaceRequest
    live: LiveRace
    armed: arming.Arming
    version: int                # game version when the race began
    record: dict                # the live-race row without its edges (written at arming)
    phase_sent: str = ""
    persisted: int = 0          # edges of live.edges already in edges_json
    edges_json: list = field(default_factory=list)
    seen: int = 0               # number of edges checked for virtual presses
    error: str | None = None    # the tracker refused the verdict
    virtual: set = field(default_factory=set)
    logged_ns: int | None = None    # when the host logged the card (unannounced races)
    confirmed: bool = False     # the host accepted a doubtful claimed burst
    cut_ns: int | None = None   # the next card was logged then: no press after it is ours
    awaits_cue: bool = False    # announced: the box's stamp of GO is still to come

    @property
    def confirm(self) -> str | None:
        """Why the host must accept the claimed burst first (None: no need)."""
        return None if self.confirmed else self.armed.confirm

    @property
    def announced(self) -> bool:
        return self.armed.announced

    @property
    def go_ns(self) -> int:
        return self.armed.go_ns


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
        self._subs: list[Callable[[dict], None]] = []
        self._outbox: deque = deque()
        self._dispatch_lock = threading.RLock()
        #: records to write once the lock is released: (game id, fault)
        self._unsaved: deque[tuple[int | None, dict]] = deque()
        self._tls = threading.local()
        self.faults: deque = deque(maxlen=int(self.settings["recent_faults"]))
        self._source_status = None
        #: how much longer an announced race holds its verdict for the buzzer
        #: box's stamp of GO (None: the source sounds no cue of its own; the
        #: pipeline sets it for one that does, e.g. a Pico box)
        self.cue_wait_ns: int | None = None
        self._clear()

    def _clear(self) -> None:
        self.game: Game | None = None
        self.game_id: int | None = None
        self.replay: Replay | None = None
        self.version = 0
        self.players: list[dict] = []
        self._buzzers: dict[str, str] = {}
        if getattr(self, "referee", None) is not None:
            self.referee.listeners.remove(self._on_referee)
        self.referee: Referee | None = None
        self._race: _Race | None = None
        self._interrupted: dict | None = None
        self._edges: deque[Edge] = deque()
        self._virtual: set = set()
        self._virtual_fifo: deque = deque()
        self._log: list[tuple[int, dict]] = []
        self._finished = False
        self._race_dirty = False
        self._decided: LiveRace | None = None
        self._polled_at: int | None = None
        self.unknown_edges = 0
        self._strays: deque = deque(maxlen=20)
        self._stray_mark: int | None = None     # presses up to here are classified
        #: host events logged while a race was open, applied once it is
        #: logged, in order: (event, when the host logged it)
        self._queued: deque[tuple[dict, int]] = deque()
        self._press_seq: dict[str, int] = {}    # the last sequence number per virtual buzzer

    # ------------------------------------------------------------------
    # properties

    @property
    def state(self) -> Any:
        return None if self.replay is None else self.replay.state

    @property
    def names(self) -> list[str]:
        return [p["name"] for p in self.players]

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
        self._dispatch()
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
            try:
                tracker = get_game(info["game"])
            except (KeyError, ImportError) as exc:
                raise ResumeError(f"game {gid} is {info['game']!r}, which this companion "
                                  f"cannot load: {exc}") from None
            names = [p["name"] for p in info["players"]]
            try:
                rep = Replay(tracker, names, info["options"],
                             [tracker.setup(names, info["options"])])
            except RulesError as exc:
                raise ResumeError(f"game {gid} cannot be set up again: {exc}") from None
            log_rows = self.store.events(gid)
            for eid, ev in log_rows:
                try:
                    rep.apply(ev)
                except RulesError as exc:
                    raise ResumeError(
                        f"game {gid} cannot be replayed: event {eid} "
                        f"({tracker.describe(ev)}) is refused by the {tracker.title} "
                        f"tracker: {exc}") from None
            if game_id is not None and self.store.current_game() != gid:
                self.store.set_current(gid)
            self._install(gid, tracker, rep, info["players"], log_rows)
            if self._finished != info["finished"]:
                self._mark_finished()
            saved = self.store.load_live_race(gid)
            if saved is not None:
                version, body = saved
                req = self._request()
                self._queued.extend((q["event"], q["logged_ns"]) for q in body.get("queued") or ()
                                    if isinstance(q, dict) and isinstance(q.get("event"), dict)
                                    and isinstance(q.get("logged_ns"), int))
                if (version == self.version and req is not None
                        and req.reason == body.get("reason")):
                    self._interrupted = body
                else:
                    self.store.clear_live_race(gid)
            self._publish_state(None, None)
        self._dispatch()
        return True

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
        names = self.names
        ref = self._given_referee
        if ref is not None and set(ref.players) == set(names):
            self._given_referee = None
        else:
            ref = Referee(names, debounce_ns=self._ms("debounce_ms"),
                          stuck_ns=self._ms("stuck_ms"), hold_ns=self._ms("hold_ms"))
        ref.listeners.append(self._on_referee)
        self.referee = ref

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
        self._dispatch()

    def _need_game(self) -> None:
        if self.replay is None:
            raise RulesError("no game at the table: start one first", "session")

    # ------------------------------------------------------------------
    # the host's and the players' events

    def log(self, event: dict, expected_version: int | None = None) -> dict:
        """Log one event the host made against ``expected_version`` (None:
        no check); the state update. Raises RulesError or StaleVersion and
        changes nothing if the event is refused."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RulesError("an event must be a JSON object with a 'type'", "format")
        with self._lock:
            self._need_game()
            event = jsonable(event)
            kind = event["type"]
            if kind not in ("undo", "redo", "race") and self._waits_for_race(event,
                                                                           expected_version):
                update = self._queue(event)
            else:
                eid = self._commit(event, expected_version)
                # the race first: the state update must not carry a race the
                # game no longer asks for (a live board would keep "May win")
                self._sync_race("host" if kind not in ("undo", "redo", "race") else kind)
                update = self._publish_state(eid, event)
                self._drain_queue()
        self._dispatch()
        return update

    # -- the host never waits: a card logged while a race is open --------

    def _waits_for_race(self, event: dict, expected_version: int | None) -> bool:
        """Whether ``event`` must wait behind the open race: a race is open
        (or cards wait already) and the tracker takes the event only once a
        race outcome is logged. RulesError when no outcome would make it
        legal; StaleVersion as for any event."""
        if self._race is None and not self._queued:
            return False
        if expected_version is not None and expected_version != self.version:
            self._commit(event, expected_version)       # raises StaleVersion
        game, state = self.game, self.state
        if not self._queued:
            try:
                game.apply(state, event)
                return False                            # legal now: no wait
            except RulesError:
                pass
        if _legal_after_races(game, state, [e for e, _ in self._queued] + [event]):
            return True
        game.apply(state, event)        # raises the tracker's own reason
        raise RulesError("that cannot follow the cards already waiting for the race", "race")

    def _queue(self, event: dict) -> dict:
        """Keep ``event`` (with the time it was logged) until the open race
        is logged; an unannounced race stops taking presses now (the next
        card is on the table: later presses are its). Saved with the live
        race, so a power cut loses no logged card."""
        now = self.clock()
        self._queued.append((event, now))
        race = self._race
        if race is not None:
            if self.game.is_draw(event):
                self._cut(race, now)
            race.record = {**race.record, "queued": [{"event": e, "logged_ns": t}
                                                     for e, t in self._queued]}
            self._persist_race(race, durable=True)
        line = self._public_line(event)
        data = {"event": views.public_event(self.game, event), "line": line,
                "queued": [self._public_line(e) for e, _ in self._queued]}
        self._transient("queued", data)
        return {"id": None, "type": "queued", "version": self.version, "data": data}

    def _cut(self, race: "_Race", at_ns: int) -> None:
        """An open unannounced race takes no press after ``at_ns`` (the next
        card's log): its deadline moves there, so it is decided now."""
        if race.announced or race.cut_ns is not None or race.live.verdict is not None:
            return
        race.cut_ns = at_ns
        deadline = max(race.armed.arm_ns, at_ns)
        if race.live.spec.deadline_ns is None or deadline < race.live.spec.deadline_ns:
            arming.rearm_live(race.live, race.live.spec.arm_ns, deadline)
            race.armed = replace(race.armed, deadline_ns=deadline)
            race.record = {**race.record, "spec": race.live.spec.to_json()}
            self._race_dirty = True

    def _cut_at_next_draw(self) -> None:
        """The live race takes no press after the next waiting card's log."""
        nxt = next((t for e, t in self._queued if self.game.is_draw(e)), None)
        if self._race is not None and nxt is not None:
            self._cut(self._race, nxt)

    def _drain_queue(self) -> None:
        """Log the cards that waited behind a race, in order, each at the
        time it was logged; stop at one whose race is still open."""
        while self._queued and self._race is None and self.replay is not None:
            event, logged_ns = self._queued.popleft()
            try:
                eid = self._commit(event, None)
            except (RulesError, StoreError) as exc:
                self._fault("queued", f"the {self._public_line(event)} logged during the race "
                                      f"was refused once the race was logged: {exc}")
                continue
            self._sync_race("host", logged_ns)
            self._publish_state(eid, event)
            self._cut_at_next_draw()

    def undo(self, expected_version: int | None = None) -> dict:
        """Undo the last effective event (logged as ``{"type": "undo"}``)."""
        return self.log({"type": "undo"}, expected_version)

    def redo(self, expected_version: int | None = None) -> dict:
        """Put back the last undone event (logged as ``{"type": "redo"}``)."""
        return self.log({"type": "redo"}, expected_version)

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
        self._dispatch()
        return answer

    def _need_player(self, player: Any, rule: str) -> None:
        if not isinstance(player, str) or player not in self.names:
            raise RulesError(f"no player called {player!r}", rule)

    def _commit(self, event: dict, expected_version: int | None) -> int:
        """Apply on the replay, append durably, keep (or roll back). Lock held."""
        if expected_version is not None and expected_version != self.version:
            last = self._public_line(self._log[-1][1]) if self._log else "nothing yet"
            raise StaleVersion(
                f"the table changed since this console loaded it (it saw version "
                f"{expected_version}, the table is at {self.version}; last: {last}); nothing "
                f"was logged: refresh and try again", expected_version, self.version)
        rep = self.replay
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
            self._fault("store", f"could not record the end of the game: {exc}")

    def _summary(self) -> dict:
        return jsonable(summary(self.game, self.names, self.state), "summary")

    def legal_events(self) -> list[dict]:
        with self._lock:
            if self.replay is None or self.game.finished(self.state):
                return []
            return self.game.legal_events(self.state)

    def _line(self, event: dict) -> str:
        return views.line(self.game, event)

    def _public_line(self, event: dict) -> str:
        return views.public_line(self.game, event)

    # ------------------------------------------------------------------
    # buzzers: edges, faults and the source's status

    def feed_edge(self, edge) -> None:
        """The sink for edge sources: a :class:`companion.edges.ButtonEdge`
        (``edge.buzzer`` is a buzzer id), or the older :class:`Edge` whose
        ``player`` is a buzzer id (or the name of a player who has no buzzer
        id). Unknown buzzers, and values that are not edges, are counted in
        ``unknown_edges`` and ignored."""
        buzzer = getattr(edge, "buzzer", None)
        if buzzer is None:
            buzzer = getattr(edge, "player", None)
        t_ns = getattr(edge, "t_ns", None)
        with self._lock:
            if self.referee is None:
                return
            name = self._buzzers.get(buzzer) if isinstance(buzzer, str) else None
            if name is None or isinstance(t_ns, bool) or not isinstance(t_ns, int):
                self.unknown_edges += 1
                return
            self._feed(Edge(name, bool(edge.pressed), t_ns))
        self._dispatch()

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
            self._fault(kind, None if message is None else str(message), player,
                        t_ns if isinstance(t_ns, int) and not isinstance(t_ns, bool) else None,
                        buzzer=buzzer if isinstance(buzzer, str) else None, source=True)
        self._dispatch()

    def source_status(self, status) -> None:
        """The buzzer source's latest status (``.source``, ``.connected``,
        ``.precision_ns``, ``.error_bound_ns``, ``.detail``): kept for the
        snapshot's ``buzzers`` and published as a ``buzzers`` update."""
        with self._lock:
            self._source_status = status
            self._transient("buzzers", views.buzzers_view(status))
        self._dispatch()

    def virtual_press(self, player: str, pressed: bool | None = None,
                      seq: int | None = None) -> None:
        """A phone's on-screen buzzer, stamped with the clock now (millisecond
        accuracy, marked ``virtual`` in the race record). ``pressed=None`` is
        a tap (press and release); True holds the button down, False lets go.

        ``seq`` is the page's increasing number (by one) for this buzzer's
        changes: two requests can overtake each other on the way. A change
        older than the last one applied is dropped (a press arriving after
        its own release would otherwise hold the buzzer down: stuck); a
        release whose press has not arrived is taken as a tap, so the press
        still counts."""
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise RulesError("seq must be an integer", "buzzer")
        with self._lock:
            self._need_game()
            self._need_player(player, "buzzer")
            if seq is not None:
                last = self._press_seq.get(player)
                if last is not None and seq <= last:
                    return          # overtaken by a later change: dropped
                if pressed is False and (last is None or seq > last + 1) \
                        and not self.referee.level(player):
                    pressed = None  # its press is still on the way: a tap, now
                self._press_seq[player] = seq
            now = self.clock()
            edges = ([Edge(player, True, now), Edge(player, False, now + 1)] if pressed is None
                     else [Edge(player, bool(pressed), now)])
            for e in edges:
                key = (e.player, e.t_ns, e.pressed)
                self._virtual.add(key)
                self._virtual_fifo.append(key)
                while len(self._virtual_fifo) > 1024:
                    self._virtual.discard(self._virtual_fifo.popleft())
                self._feed(e)
        self._dispatch()

    def _feed(self, e: Edge) -> None:
        self.referee.feed(e)
        self._reclaim(e)
        self._after_referee(e.t_ns)

    def _reclaim(self, e: Edge) -> None:
        """A press stamped before the card was logged but delivered after it
        (the source's queue was a moment behind the host's tap): had it been
        there, the card would have claimed its burst. An unannounced race
        armed at its log with nothing claimed is armed again as if it had."""
        race = self._race
        if (race is None or race.announced or race.armed.burst or race.armed.flipper
                or race.logged_ns is None or not e.pressed or e.t_ns >= race.armed.arm_ns
                or race.live.verdict is not None):
            return
        try:
            armed = self._arm_card(race.request, race.logged_ns, self.clock())
            if armed.burst:
                self._begin(race.request, armed, self.clock(), logged_ns=race.logged_ns)
        except (RaceError, RulesError, ValueError) as exc:
            self._fault("race", f"cannot run the race the game asked for: {exc}")

    # ------------------------------------------------------------------
    # the clock

    def tick(self) -> None:
        """Poll the referee on the clock: settle bursts, find stuck buttons,
        move a countdown to GO, decide and log races. Cheap when idle."""
        if self.referee is None:
            return
        with self._lock:
            ref = self.referee
            if ref is None:
                return
            now = self.clock()
            at = ref.next_deadline()
            race = self._race
            phase_due = (race is not None and race.phase_sent == "countdown"
                         and now >= race.go_ns)
            if (at is None or now < at) and not phase_due:
                return
            self._polled_at = now
            ref.poll(now)
            decided = self._after_referee(now, log_decided=False)
        # the verdict reaches the pages first (a transient race update);
        # then it is logged durably and the new state follows
        self._dispatch()
        if decided is not None:
            with self._lock:
                if self._race is decided:
                    self._finish_race(decided, self.clock())
            self._dispatch()

    def next_deadline(self) -> int | None:
        """The earliest clock time at which :meth:`tick` has work to do (a
        debounce to settle, a buzzer that may be stuck, a countdown reaching
        GO, a verdict to decide), or None when nothing is due: the clock
        thread may sleep until it is woken. A deadline that a tick already
        passed without doing its work (a failure) comes back
        :data:`RETRY_NS` after that tick, never in the past again."""
        ref = self.referee
        if ref is None:
            return None
        with self._lock:
            times = [ref.next_deadline()]
            race = self._race
            if race is not None and race.phase_sent == "countdown":
                times.append(race.go_ns)
            at = earliest(times)
            polled = self._polled_at
        if at is not None and polled is not None and at <= polled:
            return polled + RETRY_NS
        return at

    # ------------------------------------------------------------------
    # races

    def _on_referee(self, kind: str, payload) -> None:
        """Referee listener (called with the session lock held)."""
        if kind == "edge":
            e: Edge = payload
            self._edges.append(e)
            for _ in range(arming.forget_before(self._edges, e.t_ns, self.arming)):
                self._edges.popleft()
            virtual = (e.player, e.t_ns, e.pressed) in self._virtual
            data = {"player": e.player, "pressed": e.pressed, "t_ns": e.t_ns,
                    "virtual": virtual}
            if e.pressed and self.replay is not None:
                data.update(self._press_window(e))
            self._transient("press", data)
        elif kind == "order":
            self._race_dirty = True
        elif kind == "verdict":
            self._decided = payload
        elif kind == "fault":
            self._fault(payload.kind, None, payload.player, payload.t_ns)

    def _after_referee(self, now: int, log_decided: bool = True) -> "_Race | None":
        """Publish the live race's progress (and hand its new presses to the
        background writer); a race the referee decided is logged now, or
        (``log_decided=False``) returned for the caller to log once the
        verdict has gone out."""
        race = self._race
        if race is not None:
            self._note_virtual(race)
            if len(race.live.edges) != race.persisted:
                self._persist_race(race, durable=False)
            phase = arming.phase(race.live.verdict is not None, race.announced, race.go_ns, now)
            if self._race_dirty or phase != race.phase_sent:
                race.phase_sent = phase
                self._transient("race", self._race_view(now))
        elif self._race_dirty and self.replay is not None:
            self._transient("race", self._race_view(now))   # a late runner-up, live
        self._race_dirty = False
        decided, self._decided = self._decided, None
        if decided is not None and race is not None and decided is race.live:
            if not log_decided:
                return race
            self._finish_race(race, now)
        return None

    def _note_virtual(self, race: _Race) -> None:
        edges = race.live.edges
        for e in edges[race.seen:]:
            if (e.player, e.t_ns, e.pressed) in self._virtual:
                race.virtual.add(e.player)
        race.seen = len(edges)

    def _press_window(self, e: Edge) -> dict:
        """Which window a press fell in (``race``, ``late``, ``mark``, ``open``),
        for the pages; a late press is a stray at once."""
        race = self._race
        live = race.armed.window if race is not None else None
        got = arming.press_window(e.t_ns, self.replay.events, self.arming, live)
        if got["window"] == "race" and race is None:
            self._race_dirty = True     # a runner-up of the last race: its card shows it live
        elif got["window"] == "open" and self.arming.flipper_arms:
            try:
                if self.game.current_player(self.state) == e.player:
                    got["window"] = "mark"     # the flipper marks the flip
            except Exception:  # noqa: BLE001 - a tracker bug must not drop the press
                log.exception("current_player failed")
        return got

    def _stray(self, e: Edge, why: str) -> None:
        """A press outside every race window: shown briefly, kept in the
        store's record (as a ``stray`` fault), never a later card's."""
        item = {"player": e.player, "t_ns": e.t_ns, "why": why}
        if any(x["player"] == e.player and x["t_ns"] == e.t_ns for x in self._strays):
            return
        self._strays.append(item)
        # kept for the record, but not here: this runs on the edge path under
        # the lock; _dispatch writes it once the lock is released
        self._unsaved.append((self.game_id, {
            "player": e.player, "fault": "stray", "t_ns": e.t_ns,
            "message": f"stray press by {e.player} ({why}): no race window held it"}))

    def _save_unsaved(self) -> None:
        """Write the records the edge path left (stray presses), outside
        the session lock."""
        while self._unsaved:
            try:
                game_id, fault = self._unsaved.popleft()
            except IndexError:
                return
            try:
                self.store.record_fault(game_id, fault)
            except StoreError as exc:
                log.warning("could not record a stray press: %s", exc)

    def confirm_race(self, accept: bool, t_ns: int | None = None) -> dict | None:
        """The host's tap on a doubtful claim: ``accept`` lets it decide the
        card (logged at once if it already has a verdict), with ``t_ns`` one
        of its ``choices`` (the press the card's race starts at); otherwise
        its presses become strays and the card is raced again from now (the
        players press again; the answer may come as late as the host likes).
        The race view."""
        if t_ns is not None and (isinstance(t_ns, bool) or not isinstance(t_ns, int)):
            raise RulesError("t_ns must be the chosen press's time in nanoseconds", "race")
        with self._lock:
            self._need_game()
            race = self._race
            if race is None or race.confirm is None:
                raise RulesError("no race is waiting for the host's confirmation", "race")
            now = self.clock()
            choices = {c["t_ns"] for c in race.armed.choices}
            if accept and t_ns is not None and t_ns != race.armed.arm_ns:
                if t_ns not in choices:
                    raise RulesError("that press is not one the host was asked about", "race")
                taken = arming.segment(_in_order(self._edges), t_ns, race.request.kind,
                                       self.arming)
                self._begin(race.request, arming.Arming(False, t_ns, t_ns + self.arming.wait_ns,
                                                        taken),
                            now, logged_ns=race.logged_ns, confirmed=True)
                self._cut_at_next_draw()
            elif accept:
                race.confirmed = True
                if race.live.verdict is not None:
                    self._finish_race(race, now)
                else:
                    self._transient("race", self._race_view(now))
            else:
                for e in race.armed.burst:
                    if e.pressed and e.t_ns < now:
                        self._stray(e, "rejected")
                self._begin(race.request, arming.Arming(False, now, now + self.arming.wait_ns),
                            now, logged_ns=race.logged_ns, confirmed=True)
            view = self._race_view(now)
        self._dispatch()
        return view

    def use_presses(self, t_ns: int) -> dict | None:
        """The host's tap on a stray press: the card waiting for an
        unannounced race takes the presses from ``t_ns`` on (that press and
        every later one), as if they had been its burst. The race view."""
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise RulesError("t_ns must be the press's time in nanoseconds", "race")
        with self._lock:
            self._need_game()
            req = self._request()
            if req is None or req.announced:
                raise RulesError("no card is waiting for an unannounced race: nothing for "
                                 "these presses to decide", "race")
            taken = arming.segment(_in_order(self._edges), t_ns, req.kind, self.arming)
            if not any(e.pressed and e.t_ns == t_ns for e in taken):
                raise RulesError("no press was recorded at that time (it may be too old)",
                                 "race")
            now = self.clock()
            logged = self._race.logged_ns if self._race is not None else None
            self._begin(req, arming.Arming(False, t_ns, t_ns + self.arming.wait_ns, taken),
                        now, logged_ns=logged, confirmed=True)
            self._strays = deque((x for x in self._strays if x["t_ns"] < t_ns),
                                 maxlen=self._strays.maxlen)
            view = self._race_view(now)
        self._dispatch()
        return view

    def _request(self) -> RaceRequest | None:
        if self.replay is None or self.game.finished(self.state):
            return None
        return self.game.race_request(self.state)

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
        self._dispatch()
        return view

    def cue_sounded(self, t_ns: int, at_ns: int | None = None) -> None:
        """The buzzer box sounded its cue at ``t_ns`` (its own stamp, on the
        clock of its presses), asked for ``at_ns``: when that is the live
        announced race's GO, the race is armed again at ``t_ns``, so presses
        before the box's GO are false starts on the box's clock
        (docs/rules-notes.md, "Races"). A stamp of another cue (a blip, an old countdown) changes
        nothing; one that comes after the race was decided on the scheduled
        GO is recorded as a ``cue`` fault (the host may run it again)."""
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise ValueError(f"a cue stamp must be integer nanoseconds, not {t_ns!r}")
        with self._lock:
            race = self._race
            if self.referee is None or self.replay is None:
                return
            if race is None:
                go = arming.logged_go(self.replay.events, at_ns)
                if go is None:
                    return
                self._late_cue(t_ns, go)    # that race is logged already
            else:
                armed = arming.arm_at_cue(race.armed, t_ns, at_ns)
                if armed is None:
                    return
                now = self.clock()
                if race.live.verdict is not None or race.live is not self.referee.race:
                    self._late_cue(t_ns, race.go_ns)
                else:
                    self._rearm(race, armed, now)
                    self._after_referee(now)
        self._dispatch()

    def _late_cue(self, t_ns: int, go_ns: int) -> None:
        self._fault("cue", f"the buzzer box sounded GO {(t_ns - go_ns) / MS:+.3f} ms from the "
                           f"scheduled GO, after the race was decided on the scheduled GO; "
                           f"undo it and run it again if a press came in between", t_ns=t_ns)

    def _rearm(self, race: _Race, armed: arming.Arming, now: int) -> None:
        """Judge the live race again armed as ``armed``, from the edges it
        has: the same race (its version, virtual presses), a new GO."""
        race.live.hold_ns = self.referee.hold_ns     # the stamp is here: the usual hold
        arming.rearm_live(race.live, armed.arm_ns, armed.deadline_ns)
        race.armed = armed
        race.awaits_cue = False
        race.record = {**race.record, "go_ns": armed.go_ns, "spec": race.live.spec.to_json(),
                       "scheduled_go_ns": armed.scheduled_ns}
        self._persist_race(race, durable=False)     # at GO: no disk wait under the lock
        self._race_dirty = True

    def _start_announced(self, req: RaceRequest, countdown_ns: int | None) -> dict:
        now = self.clock()
        try:
            armed = arming.arm_announced(now, self.arming, countdown_ns,
                                         arming.request_wait_ns(req.info))
            self._begin(req, armed, now)
            if self.cue_wait_ns:
                # a press before the box's GO may reach us before the box's
                # stamp of GO does: no verdict until the stamp (or the wait)
                self._race.awaits_cue = True
                self._race.live.hold_ns = self.referee.hold_ns + self.cue_wait_ns
        except (RaceError, ValueError) as exc:
            raise RulesError(f"the game asked for a race the referee cannot run: {exc}",
                             "race") from None
        return self._race_view(now)

    def cancel_race(self) -> None:
        """Stop the live race without logging anything (the game still waits
        for its outcome: re-run it or log it by hand)."""
        with self._lock:
            self._drop_race()
            self._interrupted = None
            if self.game_id is not None:
                self._transient("race", self._race_view(self.clock()))
        self._dispatch()

    def _drop_race(self, clear: bool = True) -> None:
        if self._race is not None and self.referee is not None:
            if self.referee.race is self._race.live:
                self.referee.race = None
        if self._race is not None or self._interrupted is not None:
            self._race = None
            if clear:
                try:
                    self.store.clear_live_race(self.game_id)
                except StoreError as exc:
                    self._fault("store", f"could not clear the live race: {exc}")

    def _begin(self, req: RaceRequest, armed: arming.Arming, now: int,
               logged_ns: int | None = None, confirmed: bool = False) -> None:
        """Run ``req`` as the live race, armed as ``armed``; its record is
        written durably now, once (a power cut resumes it as interrupted)."""
        spec = arming.race_spec(req, armed, self.arming, self.names, self.referee.debounce_ns)
        self._drop_race()
        self._interrupted = None
        live = self.referee.start(spec)
        record = {"reason": req.reason, "kind": live.spec.kind, "announced": armed.announced,
                  "go_ns": armed.go_ns, "request": jsonable(req.to_json(), "race request"),
                  "spec": live.spec.to_json()}
        race = _Race(req, live, armed, self.version, record, logged_ns=logged_ns,
                     confirmed=confirmed)
        self._race = race
        for e in armed.burst:
            live.feed(e)
        self._note_virtual(race)
        self._persist_race(race, durable=True)
        race.phase_sent = arming.phase(live.verdict is not None, armed.announced, armed.go_ns,
                                       now)
        self._transient("race", self._race_view(now))

    def _persist_race(self, race: _Race, durable: bool) -> None:
        """Save the live race row: durably now (at arming), or handed to the
        store's background writer (a press: no disk write under the lock)."""
        new = race.live.edges[race.persisted:]
        race.edges_json.extend(e.to_json() for e in new)
        race.persisted = len(race.live.edges)
        body = {**race.record, "edges": list(race.edges_json), "virtual": sorted(race.virtual)}
        try:
            if durable:
                self.store.save_live_race(self.game_id, race.version, body)
            else:
                self.store.save_live_race_soon(self.game_id, race.version, body,
                                               on_error=self._live_race_not_saved)
        except StoreError as exc:
            self._fault("store", f"could not save the live race: {exc}")

    def _live_race_not_saved(self, exc: StoreError) -> None:
        """The background writer could not save the live race (its thread)."""
        with self._lock:
            self._fault("store", f"could not save the live race: {exc}")
        self._dispatch()

    def _sync_race(self, trigger: str, logged_ns: int | None = None) -> None:
        """After the state changed: drop a race the game no longer asks for;
        after the host logged a card (at ``logged_ns``, default now), give an
        unannounced race the presses that are its own."""
        now = self.clock()
        logged = now if logged_ns is None else logged_ns
        try:
            req = self._request()
        except Exception as exc:  # a tracker bug must not take the table down
            log.exception("race_request failed")
            self._fault("tracker", f"race_request failed: {exc}")
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
                events = self.replay.events
                armed = self._arm_card(req, logged, now)
                cut = armed.window.start_ns if armed.burst else logged
                for e in arming.strays(self._edges, events, self._stray_mark, cut,
                                       self.arming):
                    self._stray(e, "unclaimed")
                self._stray_mark = cut
                self._begin(req, armed, now, logged_ns=logged)
            elif req.announced and self.settings["auto_start"] and trigger in ("host", "race"):
                self._start_announced(req, None)
        except (RaceError, RulesError, ValueError) as exc:
            self._fault("race", f"cannot run the race the game asked for: {exc}")

    def _arm_card(self, req: RaceRequest, logged_ns: int, now: int) -> arming.Arming:
        """How the race of a card logged at ``logged_ns`` is armed at ``now``."""
        return arming.arm_unannounced(self._edges, self.replay.events, logged_ns, self.arming,
                                      _flipper(req), req.eligible, now, req.kind)

    def bursts(self) -> list[list[Edge]]:
        """The recent bursts of accepted edges, oldest first (a burst starts
        at a press after ``quiet_gap_ms`` without presses)."""
        with self._lock:
            return arming.bursts(self._edges, self.arming.quiet_gap_ns)

    def _finish_race(self, race: _Race, now: int) -> None:
        """Log a decided race as an event (the tracker may refuse it: a fault)."""
        if race.confirm is not None:    # the host accepts or rejects the burst first
            self._transient("race", self._race_view(now))
            return
        live = race.live
        event = {"type": "race", "reason": race.request.reason, **live.record(),
                 "announced": race.announced, "virtual": bool(race.virtual)}
        if race.armed.flipper is not None:
            event["armed_by"] = race.armed.flipper
        if race.armed.scheduled_ns is not None:     # armed at the box's own GO
            event["scheduled_go_ns"] = race.armed.scheduled_ns
        elif race.awaits_cue:
            race.awaits_cue = False
            self._fault("cue", "the buzzer box did not report when it sounded GO: the race "
                               "was judged on the scheduled GO")
        if race.virtual:
            event["virtual_players"] = sorted(race.virtual)
        if race.confirmed:
            event["asked"] = True       # the host chose which presses were this card's
        close = arming.race_close_ns(event, self.arming)
        if close is not None:
            event["close_ns"] = close if race.cut_ns is None else min(close, race.cut_ns)
        event = jsonable(event)
        req = self._request()
        if req is None or req.reason != race.request.reason:
            self._fault("race", "the decided race no longer matches the game; not logged")
            self._drop_race()
            return
        try:
            eid = self._commit(event, None)
        except RulesError as exc:
            race.error = str(exc)
            self._fault("race-rejected", f"the game refused the verdict: {exc}")
            self._transient("race", self._race_view(now))
            return
        except StoreError as exc:
            race.error = str(exc)
            self._fault("store", f"could not log the race: {exc}")
            self._transient("race", self._race_view(now))
            return
        except Exception as exc:  # a tracker bug must not take the table down
            log.exception("logging a race failed")
            race.error = str(exc)
            self._fault("tracker", f"logging the race failed: {exc}")
            return
        self._race = None
        try:   # stale now (the version moved on): the background writer deletes it
            self.store.clear_live_race(self.game_id, wait=False)
        except StoreError as exc:
            self._fault("store", f"could not clear the live race: {exc}")
        self._publish_state(eid, event)
        self._sync_race("race")
        self._drain_queue()

    # ------------------------------------------------------------------
    # views

    def _race_view(self, now: int) -> dict | None:
        game, race = self.game, self._race
        if race is not None:
            return views.live_race_view(game, race.request, race.live,
                                        announced=race.announced, go_ns=race.go_ns,
                                        now_ns=now, virtual=bool(race.virtual),
                                        error=race.error,
                                        window_start_ns=race.armed.window.start_ns,
                                        confirm=race.confirm, flipper=race.armed.flipper,
                                        choices=race.armed.choices if race.confirm else ())
        if self._interrupted is not None:
            return views.interrupted_race_view(game, self._interrupted)
        if self.replay is None:
            return None
        req = self._request()
        if req is not None:
            return views.pending_race_view(game, req)
        rep = self.replay
        if rep.events and rep.events[-1].get("type") == "race":
            info = None
            try:   # the request the race answered, for the verdict's wording
                before = game.race_request(rep.states[-2]) if len(rep.states) > 1 else None
                info = before.info if before is not None else None
            except Exception:  # noqa: BLE001 - wording only
                info = None
            return views.decided_race_view(game, rep.events[-1], info, edges=self._edges,
                                           close_ns=arming.race_close_ns(rep.events[-1],
                                                                         self.arming))
        return None

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
                              race=self._race_view(now), faults=self.faults,
                              last_event=self._log[-1][1] if self._log else None,
                              buzzers=buzzers)
        snap["strays"] = [dict(x) for x in self._strays
                          if now - x["t_ns"] <= self.arming.claim_window_ns + self.arming.wait_ns]
        snap["waiting"] = self._waiting(now)
        snap["windows_ms"] = {"before": self.arming.claim_window_ns // MS,
                              "after": self.arming.wait_ns // MS,
                              "runner_up": self.arming.runner_up_ns // MS}
        snap["queued"] = [self._public_line(e) for e, _ in self._queued]
        return snap

    def _waiting(self, now: int) -> list[dict]:
        """The bursts a card logged now could still claim (none while a
        race runs), each with its claim window draining."""
        if self.replay is None or self._race is not None:
            return []
        prior = arming.prior_race(self.replay.events, self._edges, self.arming)
        return arming.claim_windows(self._edges, now, self.arming, prior)

    def host_snapshot(self) -> dict:
        """The snapshot plus what the host console needs: legal events,
        undo/redo availability and what they would change, the pending race
        request, the tracker's host view, the recent log, the settings and
        the bursts a card logged now could still claim (``windows``)."""
        with self._lock:
            snap = self._snapshot()
            req = None if self.replay is None else self._request()
            windows = snap.get("waiting") or []
            extras = views.host_extras(self.game, self.replay, request=req,
                                       log_rows=self._log, settings=self.settings,
                                       windows=windows)
            if extras["race_request"] is not None:
                extras["race_request"] = jsonable(extras["race_request"], "race request")
            snap.update(extras)
            return snap

    # ------------------------------------------------------------------
    # subscribers

    def subscribe(self, fn: Callable[[dict], None]) -> Callable[[], None]:
        """Call ``fn(update)`` for every update (outside the session lock, in
        order); returns the function that unsubscribes it."""
        with self._lock:
            self._subs.append(fn)

        def unsubscribe() -> None:
            with self._lock:
                if fn in self._subs:
                    self._subs.remove(fn)
        return unsubscribe

    def _publish_state(self, eid: int | None, event: dict | None) -> dict:
        data = self._snapshot()
        data["event"] = views.public_event(self.game, event)
        data["line"] = None if event is None else self._public_line(event)
        update = {"id": eid, "type": "state", "version": self.version, "data": data}
        self._outbox.append(update)
        return update

    def _transient(self, kind: str, data: Any) -> None:
        self._outbox.append({"id": None, "type": kind, "version": self.version, "data": data})

    def _fault(self, kind: str, message: str | None, player: str | None = None,
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
        self._transient("fault", f)

    def _dispatch(self) -> None:
        if getattr(self._tls, "dispatching", False):
            return  # a subscriber called back into the session: the outer loop delivers
        if self._unsaved and not self._lock._is_owned():
            self._save_unsaved()
        with self._dispatch_lock:
            self._tls.dispatching = True
            try:
                while True:
                    try:
                        update = self._outbox.popleft()
                    except IndexError:
                        return
                    with self._lock:
                        subs = list(self._subs)
                    for fn in subs:
                        try:
                            fn(update)
                        except Exception:
                            log.exception("a subscriber failed")
            finally:
                self._tls.dispatching = False

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


__all__ = ["CSV_COLUMNS", "DEFAULT_SETTINGS", "PALETTE", "ResumeError", "TableSession",
           "effective_events", "export_csv", "export_game", "import_game",
           "normalise_players", "player_stats", "StaleVersion", "StoreError"]
