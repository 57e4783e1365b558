"""The table session: one running game, its races, its log and its subscribers.

The log in the :class:`~companion.store.Store` is the only source of truth:
the state is what replaying it gives (:class:`companion.gamefile.Replay`,
with ``{"type": "undo"}`` / ``{"type": "redo"}`` as events of the log). The
session keeps that replay in memory and applies each new event to it
incrementally: the tracker first accepts the event, then the event is
appended durably, then the in-memory state moves on (and is rolled back if
the append fails). A refused event (:class:`RulesError`) or a stale one
(:class:`StaleVersion`) changes nothing and is not logged.

Races (DESIGN.md, "Arming"):

* unannounced races (the game asks for one with ``announced=False`` after the
  host logs a card, e.g. a Chope! table card or Mynah): every accepted press
  is recorded as it happens; presses separated by less than ``quiet_gap_ms``
  form a burst. When the host logs the card, the earliest burst that began
  at most ``claim_window_ms`` before and after the last race's presses
  becomes the card's race (armed at the burst's first press, so no false
  starts); with no such burst the race waits for presses from now on. Either
  way the race's deadline is its arm time + ``wait_ms``.
* announced races (``announced=True``, e.g. a Chomp! reveal): the host (or
  ``auto_start``) calls :meth:`TableSession.start_race`; GO is now +
  countdown; presses before GO are false starts.

A decided race is logged by the session itself as a ``race`` event carrying
its spec, edges and verdict, so replay re-judges it
(:func:`companion.gamefile.check_race`). If the tracker refuses the verdict,
it becomes a fault on the page; the session never crashes on it.

Time comes from the injected ``clock`` (integer nanoseconds, default
``time.monotonic_ns``), never from floats.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .edges import Edge
from .gamefile import Replay, check_race, header, parse_header, replay_lines, summary
from .games import Game, RaceRequest, RulesError, get_game
from .referee import (DEFAULT_HOLD_NS, FIRST_PRESS, LAST_PRESS, LiveRace, RaceError, RaceSpec,
                      Referee, earliest, judge)
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
    "claim_window_ms": 10_000,  # a logged card takes a burst that began at most this long ago
    "wait_ms": 5_000,           # unannounced race: deadline after its arm time
    "countdown_ms": 3_000,      # announced race: countdown before GO
    "announced_wait_ms": 5_000,  # announced race: deadline after GO
    "auto_start": False,        # start announced races as soon as the game asks for one
    "recent_faults": 20,        # faults kept for the page
}

PALETTE = ["#e53935", "#1e88e5", "#43a047", "#fdd835", "#8e24aa", "#fb8c00", "#00acc1",
           "#6d4c41"]


class ResumeError(StoreError):
    """A stored game that the tracker can no longer replay."""


@dataclass
class _Race:
    """The session's live race: what the game asked for and the referee's LiveRace."""

    request: RaceRequest
    live: LiveRace
    announced: bool             # started with a countdown and a GO
    go_ns: int                  # GO (announced) or the arm time (unannounced)
    version: int                # game version when the race began
    burst_start: int | None = None
    phase_sent: str = ""
    persisted: int = -1         # number of edges last written to the live_race row
    seen: int = 0               # number of edges checked for virtual presses
    error: str | None = None    # the tracker refused the verdict
    virtual: set = field(default_factory=set)


def effective_events(events: Iterable[dict]) -> list[dict]:
    """The events a log's undo/redo leave in effect (no tracker needed).

    >>> effective_events([{"type": "a"}, {"type": "b"}, {"type": "undo"}, {"type": "c"}])
    [{'type': 'a'}, {'type': 'c'}]
    """
    eff: list[dict] = []
    undone: list[dict] = []
    for ev in events:
        kind = ev.get("type")
        if kind == "undo":
            if eff:
                undone.append(eff.pop())
        elif kind == "redo":
            if undone:
                eff.append(undone.pop())
        else:
            eff.append(ev)
            undone.clear()
    return eff


def normalise_players(players: list) -> list[dict]:
    """Player dicts ``{"name","colour","buzzer"}`` from names or partial dicts."""
    if not isinstance(players, (list, tuple)):
        raise RulesError("players must be a list", "setup")
    out = []
    for i, p in enumerate(players):
        if isinstance(p, str):
            p = {"name": p}
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"].strip():
            raise RulesError(f"player {i + 1} needs a name", "setup")
        unknown = set(p) - {"name", "colour", "buzzer"}
        if unknown:
            raise RulesError(f"unknown player field(s) {sorted(unknown)}", "setup")
        colour = p.get("colour") or PALETTE[i % len(PALETTE)]
        buzzer = p.get("buzzer")
        if not isinstance(colour, str) or (buzzer is not None and not isinstance(buzzer, str)):
            raise RulesError(f"player {p['name']!r}: colour and buzzer must be strings", "setup")
        out.append({"name": p["name"], "colour": colour, "buzzer": buzzer or None})
    buzzers = [p["buzzer"] for p in out if p["buzzer"]]
    if len(set(buzzers)) != len(buzzers):
        raise RulesError("two players have the same buzzer", "setup")
    return out


def _jsonable(event: Any, what: str = "event") -> Any:
    try:
        return json.loads(json.dumps(event, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise RulesError(f"the {what} is not JSON: {exc}", "format") from None


VERDICT_KEYS = ("kind", "winner", "loser", "tied", "order", "false_starts", "ineligible",
                "no_edge")


def _race_view(reason, kind, phase, *, announced=False, go_ns=None, go_in_ms=None,
               deadline_ns=None, eligible=(), order=(), verdict=None, virtual=False,
               error=None) -> dict:
    """A race as the page sees it (docs/session-api.md): every key, always."""
    return {"reason": reason, "kind": kind, "phase": phase, "announced": announced,
            "go_ns": go_ns, "go_in_ms": go_in_ms, "deadline_ns": deadline_ns,
            "eligible": list(eligible), "order": list(order), "verdict": verdict,
            "virtual": virtual, "error": error}


def _order_json(order: list[tuple[str, int]], go_ns: int | None = None) -> list[dict]:
    t0 = order[0][1] if order else 0
    out = []
    for p, t in order:
        item = {"player": p, "t_ns": t, "offset_us": (t - t0) / US}
        if go_ns is not None:
            item["reaction_us"] = (t - go_ns) // US
        out.append(item)
    return out


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
        self._given_referee = referee
        self._lock = threading.RLock()
        self._subs: list[Callable[[dict], None]] = []
        self._outbox: deque = deque()
        self._dispatch_lock = threading.RLock()
        self._tls = threading.local()
        self.faults: deque = deque(maxlen=int(self.settings["recent_faults"]))
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
        self.unknown_edges = 0

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
        options = _jsonable(dict(options or {}), "options")
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
        self._clear()
        self.game, self.game_id, self.replay = tracker, gid, rep
        self.faults.clear()
        try:   # the faults recorded before a restart are still the table's news
            self.faults.extend({k: v for k, v in f.items() if k not in ("id", "created")}
                               for f in self.store.faults(gid, limit=self.faults.maxlen or 20))
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
    # the host's events

    def log(self, event: dict, expected_version: int | None = None) -> dict:
        """Log one event the host made against ``expected_version`` (None:
        no check); the state update. Raises RulesError or StaleVersion and
        changes nothing if the event is refused."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RulesError("an event must be a JSON object with a 'type'", "format")
        with self._lock:
            self._need_game()
            event = _jsonable(event)
            eid = self._commit(event, expected_version)
            update = self._publish_state(eid, event)
            kind = event["type"]
            self._sync_race("host" if kind not in ("undo", "redo", "race") else kind)
        self._dispatch()
        return update

    def undo(self, expected_version: int | None = None) -> dict:
        """Undo the last effective event (logged as ``{"type": "undo"}``)."""
        return self.log({"type": "undo"}, expected_version)

    def redo(self, expected_version: int | None = None) -> dict:
        """Put back the last undone event (logged as ``{"type": "redo"}``)."""
        return self.log({"type": "redo"}, expected_version)

    def _commit(self, event: dict, expected_version: int | None) -> int:
        """Apply on the replay, append durably, keep (or roll back). Lock held."""
        if expected_version is not None and expected_version != self.version:
            last = self._line(self._log[-1][1]) if self._log else "nothing yet"
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
        return _jsonable(summary(self.game, self.names, self.state), "summary")

    def legal_events(self) -> list[dict]:
        with self._lock:
            if self.replay is None or self.game.finished(self.state):
                return []
            return self.game.legal_events(self.state)

    def _line(self, event: dict) -> str:
        kind = event.get("type")
        if kind in ("undo", "redo"):
            return kind
        if kind == "race" and self.game is not None:
            who = event.get("winner") or event.get("loser")
            what = "won by" if event.get("winner") else "lost by" if event.get("loser") else ""
            if who:
                return f"race ({event.get('reason')}) {what} {who}"
            if event.get("tied"):
                return f"race ({event.get('reason')}) tied: {', '.join(event['tied'])}"
            return f"race ({event.get('reason')}): nobody"
        try:
            return self.game.describe(event) if self.game else str(event)
        except Exception:  # a tracker's describe must never break the log
            return json.dumps(event)[:200]

    # ------------------------------------------------------------------
    # buzzers and races

    def feed_edge(self, edge: Edge) -> None:
        """The sink for edge sources: ``edge.player`` is a buzzer id (or the
        name of a player who has no buzzer id). Unknown buzzers are counted
        in ``unknown_edges`` and ignored."""
        with self._lock:
            if self.referee is None:
                return
            name = self._buzzers.get(edge.player)
            if name is None:
                self.unknown_edges += 1
                return
            self._feed(Edge(name, edge.pressed, edge.t_ns))
        self._dispatch()

    def virtual_press(self, player: str, pressed: bool | None = None) -> None:
        """A phone's on-screen buzzer, stamped with the clock now (millisecond
        accuracy, marked ``virtual`` in the race record). ``pressed=None`` is
        a tap (press and release); True holds the button down, False lets go."""
        with self._lock:
            self._need_game()
            if player not in self.names:
                raise RulesError(f"no player called {player!r}", "buzzer")
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
        self._after_referee(e.t_ns)

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
        """The earliest clock time at which :meth:`tick` has work to do
        (a burst to settle, a countdown reaching GO, a verdict to decide)."""
        ref = self.referee
        if ref is None:
            return None
        with self._lock:
            times = [ref.next_deadline()]
            race = self._race
            if race is not None and race.phase_sent == "countdown":
                times.append(race.go_ns)
        return earliest(times)

    def _on_referee(self, kind: str, payload) -> None:
        """Referee listener (called with the session lock held)."""
        if kind == "edge":
            e: Edge = payload
            self._edges.append(e)
            horizon = self._ms("claim_window_ms") + 2 * self._ms("quiet_gap_ms") + self._ms(
                "wait_ms")
            while self._edges and self._edges[0].t_ns < e.t_ns - horizon:
                self._edges.popleft()
            virtual = (e.player, e.t_ns, e.pressed) in self._virtual
            self._transient("press", {"player": e.player, "pressed": e.pressed,
                                      "t_ns": e.t_ns, "virtual": virtual})
        elif kind == "order":
            self._race_dirty = True
        elif kind == "verdict":
            self._decided = payload
        elif kind == "fault":
            self._fault(payload.kind, None, payload.player, payload.t_ns)

    def _after_referee(self, now: int, log_decided: bool = True) -> "_Race | None":
        """Publish the live race's progress; a race the referee decided is
        logged now, or (``log_decided=False``) returned for the caller to
        log once the verdict has gone out."""
        race = self._race
        if race is not None:
            self._note_virtual(race)
            if len(race.live.edges) != race.persisted:
                self._persist_race(race)
            phase = self._phase(race, now)
            if self._race_dirty or phase != race.phase_sent:
                race.phase_sent = phase
                self._transient("race", self._race_view(now))
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

    def _phase(self, race: _Race, now: int) -> str:
        if race.live.verdict is not None:
            return "decided"
        if race.announced and now < race.go_ns:
            return "countdown"
        return "live"

    def _request(self) -> RaceRequest | None:
        if self.replay is None or self.game.finished(self.state):
            return None
        return self.game.race_request(self.state)

    def _spec(self, req: RaceRequest, arm: int, deadline: int) -> RaceSpec:
        tie = req.info.get("tie_window_us", self.settings["tie_window_us"]) if isinstance(
            req.info, dict) else self.settings["tie_window_us"]
        lockout = self.settings["lockout_ms"]
        return RaceSpec(req.kind, players=tuple(req.players) or tuple(self.names),
                        eligible=tuple(req.eligible), arm_ns=arm, deadline_ns=deadline,
                        tie_window_ns=int(tie) * US, debounce_ns=self.referee.debounce_ns,
                        lockout_ns=None if lockout is None else int(lockout) * MS)

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
            view = self._start_announced(req, countdown_ms)
        self._dispatch()
        return view

    def _start_announced(self, req: RaceRequest, countdown_ms: int) -> dict:
        now = self.clock()
        go = now + countdown_ms * MS
        wait = req.info.get("wait_ms") if isinstance(req.info, dict) else None
        deadline = go + (int(wait) * MS if wait is not None else self._ms("announced_wait_ms"))
        try:
            spec = self._spec(req, go, deadline)
        except RaceError as exc:
            raise RulesError(f"the game asked for a race the referee cannot run: {exc}",
                             "race") from None
        self._begin(req, spec, announced=True, go=go, burst=None, now=now)
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

    def _drop_race(self) -> None:
        if self._race is not None and self.referee is not None:
            if self.referee.race is self._race.live:
                self.referee.race = None
        if self._race is not None or self._interrupted is not None:
            self._race = None
            try:
                self.store.clear_live_race(self.game_id)
            except StoreError as exc:
                self._fault("store", f"could not clear the live race: {exc}")

    def _begin(self, req: RaceRequest, spec: RaceSpec, announced: bool, go: int,
               burst: list[Edge] | None, now: int) -> None:
        self._drop_race()
        self._interrupted = None
        live = self.referee.start(spec)
        race = _Race(req, live, announced, go, self.version,
                     burst_start=burst[0].t_ns if burst else None)
        self._race = race
        for e in burst or ():
            live.feed(e)
        self._note_virtual(race)
        self._persist_race(race)
        race.phase_sent = self._phase(race, now)
        self._transient("race", self._race_view(now))

    def _persist_race(self, race: _Race) -> None:
        body = {"reason": race.request.reason, "kind": race.live.spec.kind,
                "announced": race.announced, "go_ns": race.go_ns,
                "request": _jsonable(race.request.to_json(), "race request"),
                "spec": race.live.spec.to_json(),
                "edges": [e.to_json() for e in race.live.edges],
                "virtual": sorted(race.virtual)}
        try:
            self.store.save_live_race(self.game_id, race.version, body)
            race.persisted = len(race.live.edges)
        except StoreError as exc:
            self._fault("store", f"could not save the live race: {exc}")

    def _sync_race(self, trigger: str) -> None:
        """After the state changed: drop a race the game no longer asks for;
        after the host logged a card, give an unannounced race its burst."""
        now = self.clock()
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
                self._start_unannounced(req, now)
            elif req.announced and self.settings["auto_start"] and trigger in ("host", "race"):
                self._start_announced(req, int(self.settings["countdown_ms"]))
        except (RaceError, RulesError) as exc:
            self._fault("race", f"cannot run the race the game asked for: {exc}")

    def _claimed_floor(self, now: int) -> int | None:
        """The latest press or arm time of the recent races (effective race
        events and the live race): a burst must begin after it."""
        horizon = now - self._ms("claim_window_ms") - self._ms("wait_ms")
        floor = None
        for ev in self.replay.events[-30:]:
            if ev.get("type") != "race" or not isinstance(ev.get("spec"), dict):
                continue
            times = [ev["spec"].get("arm_ns")] + [e.get("t_ns") for e in ev.get("edges", ())
                                                  if isinstance(e, dict)]
            for t in times:
                if isinstance(t, int) and horizon <= t <= now and (floor is None or t > floor):
                    floor = t
        return floor

    def bursts(self) -> list[list[Edge]]:
        """The recent bursts of accepted edges, oldest first (a burst starts
        at a press after ``quiet_gap_ms`` without presses)."""
        with self._lock:
            return self._bursts()

    def _bursts(self) -> list[list[Edge]]:
        edges = sorted(self._edges, key=lambda e: e.t_ns)
        gap = self._ms("quiet_gap_ms")
        out: list[list[Edge]] = []
        last_press = None
        for e in edges:
            if e.pressed and (last_press is None or e.t_ns - last_press > gap):
                out.append([])
            if e.pressed:
                last_press = e.t_ns
            if out:
                out[-1].append(e)
        return out

    def _start_unannounced(self, req: RaceRequest, now: int) -> None:
        window = self._ms("claim_window_ms")
        floor = self._claimed_floor(now)
        burst = None
        all_bursts = self._bursts()
        for i, b in enumerate(all_bursts):
            start = b[0].t_ns
            if now - start <= window and start <= now and (floor is None or start > floor):
                # the race takes every edge from the burst's start on
                burst = [e for later in all_bursts[i:] for e in later]
                break
        arm = burst[0].t_ns if burst else now
        spec = self._spec(req, arm, arm + self._ms("wait_ms"))
        self._begin(req, spec, announced=False, go=arm, burst=burst, now=now)

    def _finish_race(self, race: _Race, now: int) -> None:
        """Log a decided race as an event (the tracker may refuse it: a fault)."""
        live = race.live
        event = {"type": "race", "reason": race.request.reason, **live.record(),
                 "announced": race.announced, "virtual": bool(race.virtual)}
        if race.virtual:
            event["virtual_players"] = sorted(race.virtual)
        event = _jsonable(event)
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
        try:
            self.store.clear_live_race(self.game_id)
        except StoreError as exc:
            self._fault("store", f"could not clear the live race: {exc}")
        self._publish_state(eid, event)
        self._sync_race("race")

    # ------------------------------------------------------------------
    # views

    def _race_view(self, now: int) -> dict | None:
        race = self._race
        if race is not None:
            live = race.live
            v = live.verdict
            order = v.order if v is not None else live.order()
            go = race.go_ns if race.announced else None
            return _race_view(reason=race.request.reason, kind=live.spec.kind,
                              phase=self._phase(race, now), announced=race.announced,
                              go_ns=race.go_ns, go_in_ms=max(0, (race.go_ns - now) // MS),
                              deadline_ns=live.spec.deadline_ns,
                              eligible=list(live.spec.eligible), order=_order_json(order, go),
                              verdict=None if v is None else v.to_json(),
                              virtual=bool(race.virtual), error=race.error)
        if self._interrupted is not None:
            body = self._interrupted
            try:
                spec = RaceSpec.from_json(body["spec"])
                edges = [Edge.from_json(e) for e in body["edges"]]
                order = judge(spec, edges).order
            except (RaceError, ValueError, KeyError, TypeError):
                spec, order = None, []
            return _race_view(reason=body.get("reason"), kind=body.get("kind"),
                              phase="interrupted", announced=body.get("announced", False),
                              go_ns=body.get("go_ns"), go_in_ms=0,
                              deadline_ns=spec.deadline_ns if spec else None,
                              eligible=list(spec.eligible) if spec else [],
                              order=_order_json(order), virtual=bool(body.get("virtual")))
        if self.replay is None:
            return None
        req = self._request()
        if req is not None:
            return _race_view(reason=req.reason, kind=req.kind, phase="pending",
                              announced=req.announced, eligible=list(req.eligible))
        events = self.replay.events
        if events and events[-1].get("type") == "race":
            ev = events[-1]
            spec = ev.get("spec") if isinstance(ev.get("spec"), dict) else {}
            order = ev.get("order") if isinstance(ev.get("order"), list) else []
            return _race_view(reason=ev.get("reason"), kind=ev.get("kind", spec.get("kind")),
                              phase="decided", announced=bool(ev.get("announced")),
                              go_ns=spec.get("arm_ns"), deadline_ns=spec.get("deadline_ns"),
                              eligible=spec.get("eligible", []), order=order,
                              verdict={k: ev.get(k) for k in VERDICT_KEYS if k in ev},
                              virtual=bool(ev.get("virtual")))
        return None

    def snapshot(self) -> dict:
        """The public view (GET /api/state); see docs/session-api.md."""
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict:
        now = self.clock()
        if self.replay is None:
            return {"game": None, "title": None, "game_id": None, "version": 0, "players": [],
                    "scores": {}, "hides_scores": False, "current_player": None,
                    "finished": False, "ranking": [], "view": None, "race": None,
                    "faults": list(self.faults), "last_event": None,
                    "can_undo": False, "can_redo": False}
        g, st = self.game, self.state
        return {"game": g.name, "title": g.title, "game_id": self.game_id,
                "version": self.version, "players": [dict(p) for p in self.players],
                "scores": g.scores(st), "hides_scores": g.hides_scores,
                "current_player": g.current_player(st), "finished": g.finished(st),
                "ranking": g.ranking(st), "view": g.public_view(st),
                "race": self._race_view(now), "faults": list(self.faults),
                "last_event": self._line(self._log[-1][1]) if self._log else None,
                "can_undo": bool(self.replay.events), "can_redo": bool(self.replay.undone)}

    def host_snapshot(self) -> dict:
        """The snapshot plus what the host console needs: legal events,
        undo/redo availability and what they would change, the pending race
        request, the tracker's host view and the recent log."""
        with self._lock:
            snap = self._snapshot()
            if self.replay is None:
                snap.update({"legal_events": [], "undo": None, "redo": None,
                             "race_request": None, "host_view": None, "log": [],
                             "settings": dict(self.settings)})
                return snap
            rep = self.replay
            req = self._request()
            snap.update({
                "legal_events": [] if self.game.finished(self.state)
                else self.game.legal_events(self.state),
                "undo": self._line(rep.events[-1]) if rep.events else None,
                "redo": self._line(rep.undone[-1][0]) if rep.undone else None,
                "race_request": None if req is None else _jsonable(req.to_json()),
                "host_view": self.game.host_view(self.state),
                "log": [{"id": i, "type": e.get("type"), "line": self._line(e)}
                        for i, e in self._log[-50:]],
                "settings": dict(self.settings),
            })
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
        data["event"] = self._public_event(event)
        data["line"] = None if event is None else self._line(event)
        update = {"id": eid, "type": "state", "version": self.version, "data": data}
        self._outbox.append(update)
        return update

    def _public_event(self, event: dict | None) -> dict | None:
        """The logged event as every phone may see it (no secret cards)."""
        if event is None or self.game is None or event.get("type") in ("undo", "redo"):
            return event
        try:
            return self.game.public_event(event)
        except Exception:  # a tracker bug must not leak or crash: show nothing
            log.exception("public_event failed")
            return {"type": event.get("type")}

    def _transient(self, kind: str, data: Any) -> None:
        self._outbox.append({"id": None, "type": kind, "version": self.version, "data": data})

    def _fault(self, kind: str, message: str | None, player: str | None = None,
               t_ns: int | None = None) -> None:
        f = {"player": player, "fault": kind, "t_ns": self.clock() if t_ns is None else t_ns}
        if message:
            f["message"] = message
            log.warning("table fault: %s", message)
        self.faults.append(f)
        if kind != "store":     # a store that just failed cannot take the record
            try:
                self.store.record_fault(self.game_id, f)
            except StoreError as exc:
                log.warning("could not record the fault: %s", exc)
        self._transient("fault", f)

    def _dispatch(self) -> None:
        if getattr(self._tls, "dispatching", False):
            return  # a subscriber called back into the session: the outer loop delivers
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
            data["event"] = self._public_event(event)
            data["line"] = self._line(event)
            data["missed"] = [{"id": i, "type": e.get("type"), "line": self._line(e)}
                              for i, e in missed]
            return [{"id": eid, "type": "state", "version": self.version, "data": data}]

    # ------------------------------------------------------------------
    # history

    def history(self) -> list[dict]:
        """Every game in the store, newest first (:meth:`Store.list_games`)."""
        return self.store.list_games()

    def stats(self) -> dict:
        """Per-player statistics across every game in the store (see
        :func:`player_stats`)."""
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


# ---------------------------------------------------------------------------
# History, statistics, export and import (pure functions of the store)


def export_game(store: Store, game_id: int) -> str:
    info = store.game_info(game_id)
    head = header(info["game"], [p["name"] for p in info["players"]], info["options"])
    head["table"] = {"id": info["id"], "players": info["players"], "created": info["created"],
                     "finished_at": info["finished_at"], "source": info["source"]}
    lines = [json.dumps(head, ensure_ascii=False)]
    lines += [json.dumps(ev, ensure_ascii=False) for _, ev in store.events(game_id)]
    return "\n".join(lines) + "\n"


def import_game(store: Store, text: str) -> int:
    lines = text.splitlines()
    rep = replay_lines(lines)   # GameFileError names the line
    objs = [json.loads(s) for s in (ln.strip() for ln in lines) if s and not s.startswith("#")]
    head, events = objs[0], objs[1:]
    game, names, options = parse_header(head)
    table = head.get("table") if isinstance(head.get("table"), dict) else {}
    players = table.get("players")
    try:
        players = normalise_players(players if isinstance(players, list) else names)
    except RulesError:
        players = normalise_players(names)
    if [p["name"] for p in players] != names:
        players = normalise_players(names)
    done = rep.game.finished(rep.state)
    return store.create_game(game, players, options, source="import", events=events,
                             summary=_jsonable(rep.summary()) if done else None,
                             make_current=False)


def _race_stats(events: list[dict]) -> list[dict]:
    return [e for e in effective_events(events) if e.get("type") == "race"]


def player_stats(store: Store) -> dict:
    """``{"games": n, "finished": n, "players": {name: {...}}}`` where each
    player has ``games`` (played), ``finished`` (finished games played),
    ``wins`` (finished games where they ranked first, shared or not),
    ``points`` (sum of final scores), ``races`` (races they were eligible in),
    ``races_won`` (the race's winner), ``races_lost`` (its loser) and
    ``reaction_us``: ``{"count","mean","median","best"}`` over announced
    press races, the time from GO to their counted press (integers, µs).
    Only effective events count (undone ones do not)."""
    per: dict[str, dict] = {}
    reactions: dict[str, list[int]] = {}

    def p(name: str) -> dict:
        if name not in per:
            per[name] = {"games": 0, "finished": 0, "wins": 0, "points": 0, "races": 0,
                         "races_won": 0, "races_lost": 0}
            reactions[name] = []
        return per[name]

    games = store.list_games()
    for info in games:
        names = [q["name"] for q in info["players"]]
        for n in names:
            p(n)["games"] += 1
        summ = info["summary"] if info["finished"] else None
        if summ:
            scores = summ.get("scores") or {}
            ranking = summ.get("ranking") or []
            for n in names:
                s = p(n)
                s["finished"] += 1
                if isinstance(scores.get(n), int):
                    s["points"] += scores[n]
                if ranking and n in ranking[0]:
                    s["wins"] += 1
        for race in _race_stats([e for _, e in store.events(info["id"])]):
            spec = race.get("spec") if isinstance(race.get("spec"), dict) else {}
            for n in spec.get("eligible") or []:
                if isinstance(n, str):
                    p(n)["races"] += 1
            if isinstance(race.get("winner"), str):
                p(race["winner"])["races_won"] += 1
            if isinstance(race.get("loser"), str):
                p(race["loser"])["races_lost"] += 1
            arm = spec.get("arm_ns")
            if (race.get("announced") and spec.get("kind") in (FIRST_PRESS, LAST_PRESS)
                    and isinstance(arm, int)):
                for o in race.get("order") or []:
                    t = o.get("t_ns") if isinstance(o, dict) else None
                    if isinstance(t, int) and isinstance(o.get("player"), str):
                        p(o["player"])
                        reactions[o["player"]].append((t - arm) // US)
    for name, s in per.items():
        r = reactions[name]
        s["reaction_us"] = {"count": len(r),
                            "mean": sum(r) // len(r) if r else None,
                            "median": int(statistics.median_low(r)) if r else None,
                            "best": min(r) if r else None}
    return {"games": len(games), "finished": sum(1 for g in games if g["finished"]),
            "players": per}


CSV_COLUMNS = ["game_id", "game", "created", "finished_at", "status", "source", "player",
               "seat", "colour", "score", "rank", "won", "races", "races_won", "races_lost",
               "reactions", "mean_reaction_us", "best_reaction_us"]


def export_csv(store: Store) -> str:
    """The history as CSV: one row per player per game, oldest game first."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    games = sorted(store.list_games(), key=lambda g: g["id"])
    current = store.current_game()
    for info in games:
        summ = info["summary"] if info["finished"] else None
        status = ("finished" if info["finished"]
                  else "playing" if info["id"] == current else "unfinished")
        races = _race_stats([e for _, e in store.events(info["id"])])
        scores = (summ or {}).get("scores") or {}
        ranking = (summ or {}).get("ranking") or []
        for seat, pl in enumerate(info["players"], start=1):
            n = pl["name"]
            rank = next((i + 1 for i, grp in enumerate(ranking) if n in grp), None)
            entered = won = lost = 0
            react: list[int] = []
            for race in races:
                spec = race.get("spec") if isinstance(race.get("spec"), dict) else {}
                entered += n in (spec.get("eligible") or [])
                won += race.get("winner") == n
                lost += race.get("loser") == n
                arm = spec.get("arm_ns")
                if (race.get("announced") and spec.get("kind") in (FIRST_PRESS, LAST_PRESS)
                        and isinstance(arm, int)):
                    react += [(o["t_ns"] - arm) // US for o in race.get("order") or []
                              if isinstance(o, dict) and o.get("player") == n
                              and isinstance(o.get("t_ns"), int)]
            w.writerow([info["id"], info["game"], info["created"], info["finished_at"] or "",
                        status, info["source"], n, seat, pl.get("colour") or "",
                        scores.get(n, "") if summ else "", rank or "",
                        "" if not summ else int(rank == 1), entered, won, lost, len(react),
                        sum(react) // len(react) if react else "",
                        min(react) if react else ""])
    return buf.getvalue()


__all__ = ["DEFAULT_SETTINGS", "ResumeError", "TableSession", "effective_events",
           "export_csv", "export_game", "import_game", "normalise_players", "player_stats",
           "StaleVersion", "StoreError"]
