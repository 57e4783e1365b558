"""The table session: one running game; it commits, persists and publishes.

The log in the :class:`~companion.record.store.Store` is the only source of truth:
the game's log (:class:`companion.table.gamelog.GameLog`) replays it, appends each
new event durably (rolled back if the append fails) and keeps the version;
a refused (:class:`RulesError`) or stale (:class:`StaleVersion`) event
changes nothing. The session and its races (:mod:`companion.table.tableraces`, on
the race desk, :mod:`companion.races.desk`) are both handed that log: every edge,
from a pin, a box or a phone, comes in through :meth:`TableSession.feed_edge`.
Everything the table changes goes out one way: typed events
(:mod:`companion.table.events`) through the outbox (:mod:`companion.table.outbox`),
outside the lock, to the pages (:meth:`subscribe`, their JSON) and the
buzzer box (:meth:`subscribe_events`). The pages' views are built in
:mod:`companion.table.views`; the history in :mod:`companion.record.history`. A live race
is saved once when armed and its presses off the edge path (docs/store.md,
"Resume"). Time is the injected ``clock``'s integer nanoseconds.

>>> from companion.record.store import Store
>>> table = TableSession(Store(":memory:"), clock=lambda: 0)
>>> table.new_game("chope", ["ana", "bo", "cy"]) > 0
True
>>> table.snapshot()["score_unit"]
'points'
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from typing import Any, Callable

from ..races import arming
from . import views
from ..races.desk import RaceDesk
from .tableraces import TableRaces
from ..races.edges import Edge, VirtualEdge
from ..record.eventlog import ResumeError, Replay, effective_events, jsonable
from .gamelog import GameLog
from ..games import Game, RulesError, get_game
from ..record.history import (CSV_COLUMNS, PALETTE, export_csv, export_game, import_game,
                      normalise_players, player_stats)
from .outbox import Outbox, TableLock, catch_up
from .seating import buzzer_map, reseat, seated
from ..races.referee import DEFAULT_DELIVERY_MARGIN_NS, Referee
from ..record.store import StaleVersion, Store, StoreError
from .settings import DEFAULT_SETTINGS, table_settings
from .events import BuzzerStatus, Fault, NewState, TableEvent

log = logging.getLogger(__name__)

MS = 1_000_000
US = 1_000


#: When a deadline :meth:`TableSession.tick` already passed is still due (a
#: tracker or store failure left it undone), the next try is this much later:
#: the clock thread retries, it never spins.
RETRY_NS = 10 * MS


def _way_in(method: Callable) -> Callable:
    """A change to the table: through the table's one way in when it has
    one (:meth:`TableSession.enter_through`), else applied now."""

    @functools.wraps(method)
    def change(self, *args, **kwargs):
        way_in = self.way_in
        if way_in is None:
            return method(self, *args, **kwargs)
        return way_in.call(method, self, *args, **kwargs)

    return change


class TableSession:
    """One table's running game. Thread-safe: every public method takes the
    session lock; subscribers are called outside it, in order.

    Under ``companion serve`` and the web app every change (a pin or box
    edge, a phone's press, a host's log, undo, an answer, a race command)
    comes in through one queue, the buzzer pipeline's
    (:class:`~companion.buzzers.pipeline.Pipeline`), and is applied by one
    thread in the order it came in: the methods marked "a change" hand
    themselves to :attr:`way_in` when it is set."""

    def __init__(self, store: Store, clock: Callable[[], int] = time.monotonic_ns,
                 referee: Referee | None = None, settings: dict | None = None):
        self.store = store
        self.clock = clock
        self.settings = table_settings(settings)
        self.arming = arming.ArmingSettings.from_settings(self.settings)
        self._given_referee = referee
        self._lock = TableLock()
        self._outbox = Outbox(self._lock, self._write_record)
        self.faults: deque = deque(maxlen=int(self.settings["recent_faults"]))
        self._source_status = None
        self._cue_wait_ns: int | None = None
        self.races: TableRaces | None = None
        #: the table's one way in (a pipeline's ``call``), None: none yet
        self.way_in = None
        #: head starts may be given (off when the table plays in a league or
        #: a convention: its games are ranked against other tables')
        self.handicaps_allowed = True
        self._clear()

    def enter_through(self, way_in) -> None:
        """Every later change comes in through ``way_in.call`` (None: is
        applied on the caller's thread, as a script or a test does)."""
        self.way_in = way_in

    @property
    def delivery_margin_ns(self) -> int:
        """How late an edge may reach the table after its stamp (the
        referee's margin): a change waits that long in the way in."""
        ref = self.referee or self._given_referee
        return ref.delivery_margin_ns if ref is not None else DEFAULT_DELIVERY_MARGIN_NS

    def _clear(self) -> None:
        #: the current game's log (None before a game)
        self.gamelog: GameLog | None = None
        self.players: list[dict] = []
        self._buzzers: dict[str, str] = {}
        if self.races is not None:
            self.races.close()
        self.races = None
        self.unknown_edges = 0

    # -- properties ------------------------------------------------------------

    @property
    def game(self) -> Game | None:
        return None if self.gamelog is None else self.gamelog.game

    @property
    def game_id(self) -> int | None:
        return None if self.gamelog is None else self.gamelog.game_id

    @property
    def replay(self) -> Replay | None:
        return None if self.gamelog is None else self.gamelog.replay

    @property
    def version(self) -> int:
        """The id of the last event logged (0: none yet, or no game)."""
        return 0 if self.gamelog is None else self.gamelog.version

    @property
    def _log(self) -> list[tuple[int, dict]]:
        return [] if self.gamelog is None else self.gamelog.rows

    @property
    def state(self) -> Any:
        return None if self.gamelog is None else self.gamelog.state

    @property
    def names(self) -> list[str]:
        return [p["name"] for p in self.players]

    @property
    def referee(self) -> Referee | None:
        return None if self.races is None else self.races.desk.referee

    @property
    def desk(self) -> RaceDesk | None:
        """The race desk of the current game (None before one)."""
        return None if self.races is None else self.races.desk

    @property
    def cue_wait_ns(self) -> int | None:
        """How long an announced race waits for the box's GO stamp (the
        pipeline sets it for a source that sounds the cue; else None)."""
        return self._cue_wait_ns

    @cue_wait_ns.setter
    def cue_wait_ns(self, value: int | None) -> None:
        self._cue_wait_ns = value
        if self.desk is not None:
            self.desk.cue_wait_ns = value

    # -- lifecycle -------------------------------------------------------------

    @_way_in
    def new_game(self, game: str, players: list, options: dict | None = None) -> int:
        """Start a new game at the table (the previous one stays in the
        history); its id. Raises RulesError for bad players or options."""
        players = normalise_players(players)
        if not self.handicaps_allowed and any("handicap_ms" in p for p in players):
            raise RulesError("handicaps are off at a league or convention table: its games "
                             "are ranked against other tables'", "setup")
        options = jsonable(dict(options or {}), "options")
        try:
            tracker = get_game(game)
        except KeyError as exc:
            raise RulesError(str(exc).strip("'\""), "setup") from None
        with self._lock:
            gamelog = GameLog.create(self.store, tracker, players, options, self._log_fault)
            self._install(gamelog, players)
            self.publish_state(None, None)
        self._outbox.dispatch()
        return gamelog.game_id

    def rematch(self) -> int:
        """A new game of the same game for the same players (names, colours,
        buzzers, seating) with the same options; its id. The finished game
        stays in the history."""
        with self._lock:
            self._need_game()
            info = self.store.game_info(self.game_id)
            game, players, options = info["game"], [dict(p) for p in self.players], info["options"]
        return self.new_game(game, players, options)

    @_way_in
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
            gamelog = GameLog.load(self.store, gid, info, self._log_fault)
            if game_id is not None and self.store.current_game() != gid:
                self.store.set_current(gid)
            self._install(gamelog, info["players"])
            if gamelog.finished != info["finished"]:
                gamelog.record_end()
            self.races.resume()
            self.publish_state(None, None)
        self._outbox.dispatch()
        return True

    def _install(self, gamelog: GameLog, players: list[dict]) -> None:
        if self.races is not None:
            self.races.drop(clear=False)
        self._clear()
        self.gamelog = gamelog
        gid = gamelog.game_id
        self.faults.clear()
        try:   # the faults recorded before a restart are still the table's news
            self.faults.extend({k: v for k, v in f.items() if k not in ("id", "created")}
                               for f in self.store.faults(gid, limit=self.faults.maxlen or 20)
                               if f.get("fault") != "stray")
        except StoreError as exc:
            log.warning("could not read the recorded faults: %s", exc)
        self.players = [dict(p) for p in players]
        self._buzzers = buzzer_map(self.players)
        ref, self._given_referee = self._given_referee, None
        if ref is None or set(ref.players) != set(self.names):
            self._given_referee, ref = ref, None
        self.races = TableRaces(gamelog, store=self.store, out=self._outbox, clock=self.clock,
                                settings=self.settings, arming_settings=self.arming,
                                publish_state=self.publish_state, fault=self.fault,
                                referee=ref, cue_wait_ns=self._cue_wait_ns)
        self.referee.handicap_ns = {p["name"]: p["handicap_ms"] * MS for p in self.players
                                    if p.get("handicap_ms") and self.handicaps_allowed}

    def _log_fault(self, kind: str, message: str) -> None:
        """The game log could not write a derived record (lock held)."""
        self.fault(kind, message)

    @_way_in
    def set_player(self, name: str, colour: str | None = None,
                   buzzer: str | None | bool = False) -> None:
        """Change a player's colour or buzzer (``buzzer=None`` unassigns it;
        the default False leaves it). Not a game event: no version change."""
        with self._lock:
            self._need_game()
            players = reseat(self.players, name, colour, buzzer)
            self.store.update_players(self.game_id, players)
            self.players = players
            self._buzzers = buzzer_map(self.players)
            self.publish_state(None, None)
        self._outbox.dispatch()

    def _need_game(self) -> None:
        if self.replay is None:
            raise RulesError("no game at the table: start one first", "session")

    def _need_player(self, player: Any, rule: str) -> None:
        if not isinstance(player, str) or player not in self.names:
            raise RulesError(f"no player called {player!r}", rule)

    # -- the host's and the players' events ------------------------------------

    @_way_in
    def log(self, event: dict, expected_version: int | None = None, *,
            seen_ns: int | None = None) -> dict:
        """Log one event the host made against ``expected_version`` (None:
        no check); the state update, or a ``queued`` one when the event waits
        behind the open race. Raises RulesError or StaleVersion and changes
        nothing if the event is refused. ``seen_ns``: a card the camera saw
        turned then (docs/camera.md): logged at that time, its race armed
        there and judged with a lag of ~0 (``camera_lag_ms``)."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RulesError("an event must be a JSON object with a 'type'", "format")
        if seen_ns is not None and (isinstance(seen_ns, bool) or not isinstance(seen_ns, int)):
            raise RulesError("seen_ns must be integer nanoseconds", "format")
        with self._lock:
            self._need_game()
            event = jsonable(event)
            kind = event["type"]
            if kind not in ("undo", "redo", "race") and self.races.must_queue(event,
                                                                              expected_version):
                update = self.races.queue(event, seen_ns)
            else:
                eid = self.gamelog.append(event, expected_version)
                # the race first: the state update must not carry a race the
                # game no longer asks for (a live board would keep "May win")
                self.races.sync("host" if kind not in ("undo", "redo", "race") else kind,
                                seen_ns, camera=seen_ns is not None)
                update = self.publish_state(eid, event)
                self.races.drain()
        self._outbox.dispatch()
        return update

    def undo(self, expected_version: int | None = None) -> dict:
        """Undo the last effective event (logged as ``{"type": "undo"}``)."""
        return self.log({"type": "undo"}, expected_version)

    def redo(self, expected_version: int | None = None) -> dict:
        """Put back the last undone event (logged as ``{"type": "redo"}``)."""
        return self.log({"type": "redo"}, expected_version)

    @_way_in
    def reorder(self, events: list, accept: bool = True,
                expected_version: int | None = None) -> dict:
        """The host's one tap on the swap the table offers (the snapshot's
        ``reorder``: two cards logged the other way round than they were
        turned, docs/rules-notes.md "The host's slips"); ``events`` is the
        offer's ``events``. Accepted, the log's tail is undone (undo events:
        the log stays append-only) and the two cards are logged again in the
        other order, each at its own log time, their races judged again from
        the recorded presses; declined, it is not offered again. RulesError
        when no such offer stands, StaleVersion as :meth:`log`."""
        if not isinstance(events, list) or len(events) != 2 or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in events):
            raise RulesError("events must be the offer's two event ids", "reorder")
        with self._lock:
            self._need_game()
            self.gamelog.check_version(expected_version)
            out = self.races.reorder(list(events), bool(accept))
        self._outbox.dispatch()
        return out

    def private_snapshot(self, player: str) -> dict:
        """What ``player``'s private page shows: ``{"player", "view",
        "events", "version"}``. RulesError for an unknown player or no game."""
        with self._lock:
            self._need_game()
            self._need_player(player, "private")
            return views.private_snapshot(self.game, self.state, player, self.version)

    @_way_in
    def log_private(self, player: str, event: dict, expected_version: int | None = None) -> dict:
        """Log one of ``game.private_events(state, player)`` from that
        player's page (RulesError otherwise); the public update plus
        ``"private"``, the player's new private snapshot."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RulesError("an event must be a JSON object with a 'type'", "format")
        with self._lock:
            self._need_game()
            self._need_player(player, "private")
            self.gamelog.check_version(expected_version)   # a stale page: 409, not "not theirs"
            event = jsonable(event)
            if self.game.finished(self.state) or event not in jsonable(
                    self.game.private_events(self.state, player), "private events"):
                raise RulesError(f"{player} cannot log that from their own page now: it is "
                                 f"not one of their events", "private")
            eid = self.gamelog.append(event, expected_version)
            self.races.sync("host")
            update = self.publish_state(eid, event)
            answer = {**update, "private": views.private_snapshot(
                self.game, self.state, player, self.version)}
        self._outbox.dispatch()
        return answer

    def legal_events(self) -> list[dict]:
        with self._lock:
            live = self.replay is not None and not self.game.finished(self.state)
            return self.game.legal_events(self.state) if live else []

    # -- buzzers: every edge, from a pin, a box or a phone, comes in here ------

    @_way_in
    def feed_edge(self, edge) -> None:
        """The one way in for every edge: a ``ButtonEdge`` (a buzzer id), an
        ``Edge`` naming a buzzer id (or a player with none), or a phone's
        ``VirtualEdge``; the unknown are counted in ``unknown_edges``."""
        with self._lock:
            if self.desk is None:
                return
            e = seated(self._buzzers, edge)
            if isinstance(edge, VirtualEdge) and edge.player in self.names:
                self.desk.feed_virtual(edge)
            elif e is not None:
                self.desk.feed(e)
            else:
                self.unknown_edges += 1
        self._outbox.dispatch()

    def virtual_press(self, player: str, pressed: bool | None = None,
                      seq: int | None = None, page: str | None = None) -> None:
        """A phone's on-screen buzzer, stamped now (ms accuracy, marked
        ``virtual``; ``pressed=None``: a tap; ``seq`` and ``page``, the page
        whose numbers ``seq`` follows: see :meth:`RaceDesk.feed_virtual`),
        into :meth:`feed_edge`: the one way in, behind every edge and change
        that came in before it."""
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise RulesError("seq must be an integer", "buzzer")
        if page is not None and not isinstance(page, str):
            raise RulesError("page must be a string", "buzzer")
        with self._lock:
            self._need_game()
            self._need_player(player, "buzzer")
            edge = VirtualEdge(player, pressed, self.clock(), seq, page)
        self.feed_edge(edge)

    @_way_in
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

    @_way_in
    def source_status(self, status) -> None:
        """The buzzer source's latest status (``.source``, ``.connected``,
        ``.precision_ns``, ``.error_bound_ns``, ``.detail``): kept for the
        snapshot's ``buzzers`` and published as a ``buzzers`` update."""
        with self._lock:
            self._source_status = status
            self._outbox.put(BuzzerStatus(self.version, data=views.buzzers_view(status)))
        self._outbox.dispatch()

    # -- the clock -------------------------------------------------------------

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
                if self.races.race is decided:
                    self.races.race_decided(decided, self.clock())
            self._outbox.dispatch()

    def next_deadline(self) -> int | None:
        """The earliest clock time at which :meth:`tick` has work to do, or
        None when nothing is due: the clock thread may sleep until it is
        woken (see :meth:`RaceDesk.next_deadline`)."""
        with self._lock:
            return None if self.desk is None else self.desk.next_deadline(RETRY_NS)


    # -- races: the host's commands (companion.table.tableraces) ---------------------

    def _race_command(self, fn: Callable, *args) -> Any:
        with self._lock:
            self._need_game()
            out = fn(*args)
        self._outbox.dispatch()
        return out

    @_way_in
    def confirm_race(self, accept: bool, t_ns: int | None = None) -> dict | None:
        """The host's answer to a card's question: ``accept`` lets the claim
        decide the card (logged at once if it already has a verdict), with
        ``t_ns`` one of its ``choices`` (the press the card's race starts
        at); otherwise its presses become strays and the card is raced again
        from now (the answer may come as late as the host likes). The race
        view."""
        if t_ns is not None and (isinstance(t_ns, bool) or not isinstance(t_ns, int)):
            raise RulesError("t_ns must be the chosen press's time in nanoseconds", "race")
        return self._race_command(lambda: self.races.confirm(accept, t_ns))

    @_way_in
    def use_presses(self, t_ns: int) -> dict | None:
        """The host's tap on a stray press: the card waiting for an
        unannounced race takes the presses from ``t_ns`` on, as if they had
        been its own. The race view."""
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise RulesError("t_ns must be the press's time in nanoseconds", "race")
        return self._race_command(lambda: self.races.use(t_ns))

    @_way_in
    def start_race(self, countdown_ms: int | None = None) -> dict:
        """Start the race the game asks for with a countdown: GO at now +
        ``countdown_ms`` (default setting); presses before GO are false
        starts. Also re-runs an unannounced or interrupted race. The race view."""
        return self._race_command(lambda: self.races.start(countdown_ms))

    @_way_in
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
            if self.races is not None and self.replay is not None:
                self.races.cue(t_ns, at_ns)
        self._outbox.dispatch()

    @_way_in
    def cancel_race(self) -> None:
        """Stop the live race without logging anything (the game still waits
        for its outcome: re-run it or log it by hand)."""
        with self._lock:
            if self.races is not None:
                self.races.cancel()
        self._outbox.dispatch()

    def bursts(self) -> list[list[Edge]]:
        """The recent bursts of accepted edges, oldest first (a burst starts
        at a press after ``quiet_gap_ms`` without presses)."""
        with self._lock:
            return [] if self.races is None else self.races.bursts()

    # -- faults (the races report theirs here too, with the lock held) ---------

    def _write_record(self, game_id: int | None, fault: dict) -> None:
        try:
            self.store.record_fault(game_id, fault)
        except StoreError as exc:
            log.warning("could not record a stray press: %s", exc)

    def fault(self, kind: str, message: str | None, player: str | None = None,
              t_ns: int | None = None, buzzer: str | None = None,
              source: bool = False) -> None:
        """Record a fault (kept for the snapshot and the store) and publish it
        as a :class:`~companion.table.events.Fault`. Lock held."""
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
        self._outbox.put(Fault(self.version, fault=kind, player=player, buzzer=buzzer, data=f))

    # -- views -----------------------------------------------------------------

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
                              race=self.races.race_view(now), faults=self.faults,
                              last_event=self._log[-1][1] if self._log else None,
                              buzzers=buzzers)
        snap.update(self.races.extras(now))
        return snap

    def host_snapshot(self) -> dict:
        """The snapshot plus what the host console needs: legal events,
        undo/redo availability and what they would change, the pending race
        request, the tracker's host view, the recent log, the settings and
        the presses a card logged now could still claim (``windows``)."""
        with self._lock:
            snap = self._snapshot()
            req = None if self.replay is None else self.races.request()
            extras = views.host_extras(self.game, self.replay, request=req,
                                       log_rows=self._log, settings=self.settings,
                                       windows=snap.get("waiting") or [],
                                       word=None if self.gamelog is None else self.gamelog.worded)
            if extras["race_request"] is not None:
                extras["race_request"] = jsonable(extras["race_request"], "race request")
            snap.update(extras)
            snap["handicaps"] = self.handicaps_allowed     # the new-game form offers them
            return snap

    # -- subscribers -----------------------------------------------------------

    def subscribe(self, fn: Callable[[dict], None]) -> Callable[[], None]:
        """Call ``fn(update)`` with the pages' JSON update of every event
        (outside the session lock, in order); returns the function that
        unsubscribes it."""
        return self._outbox.subscribe(fn)

    def subscribe_events(self, fn: Callable[[TableEvent], None]) -> Callable[[], None]:
        """Call ``fn(event)`` for every typed event of the table
        (:mod:`companion.table.events`; the same stream as :meth:`subscribe`,
        in the same order); returns the function that unsubscribes it."""
        return self._outbox.subscribe_events(fn)

    def publish_state(self, eid: int | None, event: dict | None) -> dict:
        """Publish the table's new state (after ``event``, logged as ``eid``;
        None: a new game, a resume, a seat); its update. Lock held."""
        if eid is not None:         # as the log keeps it: completed by the tracker
            event = self.gamelog.logged(eid) or event
        data = self._snapshot()
        data["event"] = views.public_event(self.game, event)
        data["line"] = None if event is None else self.gamelog.line(event)
        state = NewState(self.version, eid=eid, data=data, game_id=self.game_id,
                         seating={p["name"]: p.get("buzzer") for p in self.players})
        self._outbox.put(state)
        return state.page_update()

    def updates_since(self, last_id: int) -> list[dict] | None:
        """What an SSE client that saw update ``last_id`` missed (see
        :func:`companion.table.outbox.catch_up`)."""
        with self._lock:
            return catch_up(self.gamelog, self._snapshot, last_id)

    # -- history (companion.record.history, on this session's store) ------------------

    def history(self) -> list[dict]:
        return self.store.list_games()      # every game, newest first

    def stats(self) -> dict:
        return player_stats(self.store)     # per player, across every game

    def export_game(self, game_id: int | None = None) -> str:
        """The game as a game file (docs/game-file.md), undo and redo included."""
        gid = self.game_id if game_id is None else game_id
        if gid is None:
            raise RulesError("no game to export", "session")
        return export_game(self.store, gid)

    def export_csv(self) -> str:
        return export_csv(self.store)

    def import_game(self, text: str) -> int:
        """Store a game file in the history (not as the current game)."""
        return import_game(self.store, text)




__all__ = ["CSV_COLUMNS", "DEFAULT_SETTINGS", "PALETTE", "ResumeError", "TableSession",
           "effective_events", "export_csv", "export_game", "import_game",
           "normalise_players", "player_stats", "StaleVersion", "StoreError"]
