"""A Chope! table played by people, simulated through the real session.

The simulator plays whole Chope! games (four players) as people at a real
table do, with the numbers of the reaction-time literature, and feeds every
edge into a real :class:`~companion.table.session.TableSession` (real arming,
referee and tracker, an in-memory SQLite store) on a clock it moves. Nothing
here reads a clock or a pin: time is the simulator's integer ns.

The people (every number is a field of :class:`Pace`):

* **Flips** come every ``pace_ms`` on average (gaps pace x (1 +- 0.25),
  never closer than 0.8 s nor further than 4 s apart; 1 s more after a
  stop, 1.5 s more for each bust, siam or debt choice, which the table makes
  and the host logs after the card). The flipper stops after a card with
  p 0.2.
* **Reaction** to a flip: 150 ms + a log-normal of median 195 ms and sigma
  0.69 (``random.lognormvariate``): median 345 ms, p90 ~625 ms, p99 ~1.1 s,
  and a long tail beyond.
* **A Table**: each other player slams it with p 0.9; in a tenth of the
  games one player (drawn per game) never slams a Table at all. In 4 % of
  the Tables slammed twice or more the two fastest slams are within 1 ms of
  each other. A Table nobody slams is discarded (truth: no winner). The
  flipper presses on their own Table by reflex with p 0.05 (never counted).
* **A Mynah**: every player slaps it (the flipper too), but each misses it
  with p 0.03 (never slaps): the rulebook makes the one who missed the last
  (two who missed: a tie for last, nobody loses).
* **False slams**: each player presses on a Food card with p 0.01, at the
  usual reaction time after its flip.
* **Presses** are held 60 to 200 ms; 12 % are pressed again 5 to 30 ms
  after their release (a double slam: a second full press and release); 20 %
  bounce (two or four extra edges 1 ms apart, ending pressed). A player
  whose buzzer is still down when they mean to press presses again just
  after letting go.
* **Delivery**: each edge reaches the Pi 0.05 to 1.5 ms after its stamp
  (``feed_edge`` at stamp + latency, one buzzer's edges in their order), so
  edges of different buzzers can arrive out of stamp order and a bounce's
  edges can arrive after another buzzer's later press. The host's log goes
  through the table's one way in as under ``companion serve``: held for the
  delivery margin, the edges stamped before it that arrive meanwhile go
  first, those stamped after it wait behind it.
* **The host** logs each card 0.1 to 2 s after its flip: a quarter before
  any slam of it (quickly), a fifth after the next card's flip (when the
  next flip comes later than 2 s, up to 0.55 s after it), the rest between
  its first slam and the next flip; in the order flipped, except that the
  host forgets 2 % of the cards and logs a forgotten card right after the
  next one (0.1 to 0.6 s after it; only where the tracker can take the two
  in that order and end in the same state: no stop or choice between them).
  The host answers any question the session asks (a live race whose
  ``confirm`` is set) with the truth a second later: the card's true first
  press, one of the choices or pointed at on the timeline, or "race again";
  and the swap the console offers (two cards logged the other way round
  than they were turned) with the truth too: taken when the two were
  turned the other way round, declined otherwise (:class:`Tally`'s
  ``offers``, ``swaps`` and ``declined``).

For every race card the :class:`Tally` compares the session's logged
``race`` event for that card (matched through the order the host's cards
were applied) with the truth: ``right``, ``flagged`` (the host was asked),
``wrong`` (a different winner or loser without asking), ``wrong_after_answer``
(asked, still wrong after the truthful answer), ``unjudged`` (no race event
for it), the host's logs the tracker ``refused``, and the true winning
presses (a Table's first slam, a Mynah's last slap) counted for no card or
for another card. Each race card is tagged with the situations it met
(:data:`CLASSES`), counted with their wrong and flagged cards. The product's
promise is that ``wrong`` and ``wrong_after_answer`` are always 0. Used by
the property tests (``tests/test_race_pace.py``) and by ``python3 tasks.py
bench`` (``race_pace_*``).
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections import deque
from dataclasses import dataclass, field

from companion.games import RulesError, get_game
from companion.races.edges import Edge
from companion.record.eventlog import effective_events
from companion.record.store import Store
from companion.table.session import TableSession

MS = 1_000_000
S = 1_000 * MS
PLAYERS = ("ana", "bo", "cy", "dee")

#: the situations a race card is tagged with (a card may have several)
CLASSES = {
    "A": "slow runner-up (>600 ms behind the first) before the next card",
    "B": "a false slam on a Food card before a race card logged within 2.5 s",
    "C": "a Mynah someone missed",
    "D": "a Table nobody slams",
    "E": "a double press after a Mynah slap",
    "F": "a bounce delivered late (after another buzzer's later edge)",
    "G": "a card logged out of order or forgotten",
}


@dataclass
class Pace:
    """How the simulated people play (times in ms)."""

    pace_ms: int = 2_500            # a flip every ... on average
    jitter: float = 0.25            # flip gaps are pace x (1 +- jitter)
    min_gap_ms: int = 800           # never closer than this ...
    max_gap_ms: int = 4_000         # ... nor further apart than this
    react_min_ms: float = 150       # reaction = this + lognormal(median, sigma)
    react_median_ms: float = 195
    react_sigma: float = 0.69
    slam_chance: float = 0.9        # each other player slams a Table with this chance
    never_slams_chance: float = 0.1     # per game: one player never slams a Table
    near_tie_chance: float = 0.04   # the two fastest slams of a Table within ...
    near_tie_ms: float = 1.0        # ... this of each other
    miss_chance: float = 0.03       # a player never slaps a Mynah
    false_slam_chance: float = 0.01     # per player per Food card
    reflex_chance: float = 0.05     # the flipper presses on their own Table by reflex
    hold_ms: tuple[int, int] = (60, 200)    # a press is held this long
    double_chance: float = 0.12     # a press is pressed again ...
    double_gap_ms: tuple[int, int] = (5, 30)    # ... this long after its release
    bounce_chance: float = 0.2      # a press bounces (2 or 4 extra edges 1 ms apart)
    latency_ms: tuple[float, float] = (0.05, 1.5)   # an edge reaches the Pi this late
    log_ms: tuple[int, int] = (100, 2_000)  # the host logs a card this long after its flip
    quick_log_chance: float = 0.25  # ... before any slam of it
    late_log_chance: float = 0.2    # ... after the next card's flip
    forget_chance: float = 0.02     # ... after the next card (forgotten)
    stop_chance: float = 0.2        # the flipper stops after a card
    answer_ms: int = 1_000          # the host answers a question this long after it
    #: the flipper presses their own buzzer as they turn a card (setting
    #: ``flipper_arms``; docs/rules-notes.md "Flipper arming") with this
    #: chance a card, this long after it lies face up (a Mynah's mark is
    #: also the flipper's slap: they do not slap it again)
    mark_chance: float = 0.0
    mark_ms: tuple[int, int] = (0, 120)
    #: the camera logs every card instead of the host (docs/camera.md): its
    #: flip time is seen a frame after the card lies face up (``camera_seen_ms``)
    #: and the log goes in ``camera_log_ms`` after the flip (the frames it
    #: must lie still, and the recognition); the host still logs the
    #: table's choices and stops, and never forgets a card
    camera: bool = False
    camera_seen_ms: tuple[int, int] = (0, 34)
    camera_log_ms: tuple[int, int] = (140, 220)


@dataclass
class Tally:
    """What the session decided for every race card, against the truth."""

    right: int = 0
    flagged: int = 0                # the host was asked (right or not after the answer)
    wrong: int = 0                  # another winner or loser, without asking
    wrong_after_answer: int = 0     # asked, and still wrong after the true answer
    unjudged: int = 0               # no race event for the card at all
    refused: int = 0                # host logs the tracker refused
    offers: int = 0                 # swaps the console offered the host
    swaps: int = 0                  # ... taken (the two were turned the other way round)
    declined: int = 0               # ... declined (they were turned as logged)
    winning_presses: int = 0        # true winning presses (a Table's first, a Mynah's last)
    stray_presses: int = 0          # ... counted for no card
    misplaced_presses: int = 0      # ... counted for another card
    classes: dict = field(default_factory=lambda: {
        c: {"cards": 0, "wrong": 0, "flagged": 0, "wrong_after_answer": 0} for c in CLASSES})
    wrongs: list = field(default_factory=list)      # reports of wrong and unjudged cards
    refusals: list = field(default_factory=list)    # (event, message)

    @property
    def cards(self) -> int:
        return self.right + self.flagged + self.wrong + self.unjudged

    @property
    def lost_presses(self) -> int:
        return self.stray_presses + self.misplaced_presses

    def pct(self, n: int) -> float:
        return 100.0 * n / self.cards if self.cards else 0.0

    def summary(self) -> dict:
        """Every count and its percentage (of the race cards; presses of the
        winning presses; a class's wrong and flagged of that class's cards)."""
        out = {"cards": self.cards}
        for k in ("right", "flagged", "wrong", "wrong_after_answer", "unjudged"):
            n = getattr(self, k)
            out[k], out[f"{k}_pct"] = n, self.pct(n)
        out["refused"] = self.refused
        for k in ("offers", "swaps", "declined"):
            out[k] = getattr(self, k)
        out["winning_presses"] = self.winning_presses
        for k in ("lost_presses", "stray_presses", "misplaced_presses"):
            n = getattr(self, k)
            out[k] = n
            out[f"{k}_pct"] = 100.0 * n / self.winning_presses if self.winning_presses else 0.0
        for c, d in self.classes.items():
            n = d["cards"]
            out[f"class_{c}_cards"] = n
            out[f"class_{c}_cards_pct"] = self.pct(n)
            for k in ("wrong", "flagged", "wrong_after_answer"):
                out[f"class_{c}_{k}"] = d[k]
                out[f"class_{c}_{k}_pct"] = 100.0 * d[k] / n if n else 0.0
        return out


@dataclass
class Press:
    """One physical press (with its bounce and its double, if any)."""

    player: str
    t_ns: int
    up_ns: int
    bounce: list = field(default_factory=list)     # (stamp, delivered) of its bounce edges
    double: bool = False
    what: str = ""      # what it was for, in reports: "race", "double", "false", "reflex"
    flip_ns: int | None = None      # ... and when the card it was for was turned


def _norm(v):
    """A state with its lists of plain values sorted: two orders of the same
    cards compare equal."""
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        items = [_norm(x) for x in v]
        if all(isinstance(x, (str, int, float)) for x in items):
            return sorted(items, key=repr)
        return items
    return v


class SimulatedTable:
    """One simulated table: the true game, the people, the host, the session."""

    def __init__(self, rng: random.Random, pace: Pace, settings: dict | None = None):
        self.rng, self.pace = rng, pace
        self.t = 100 * S
        self.session = TableSession(Store(":memory:"), clock=lambda: self.t,
                                    settings=settings)
        self.game = get_game("chope")
        self.tally = Tally()
        self._heap: list = []       # (t_ns, order, kind, payload)
        self._n = 0
        self._answered: list = []
        self._offered: set = set()      # the swaps offered (their event ids)
        self._flip_ns: dict = {}        # id(the host's flip event) -> when it was turned
        self._seen_ns: dict = {}        # id(a flip the camera logs) -> the flip time it saw
        self._logging: dict | None = None   # the event the host is logging now
        #: the table's one way in (companion.buzzers.pipeline): a host's log
        #: waits the delivery margin; the edges stamped after it that arrive
        #: meanwhile wait behind it, those stamped before go first
        self._held: tuple | None = None     # (log time, the log's payload)
        self._behind: list = []             # edges waiting behind the held log
        self.session.subscribe(self._update)
        self._new_game_state()

    def _new_game_state(self) -> None:
        self.cards: list[dict] = []         # race cards of this game, in the order flipped
        self.host_log: list = []            # (card, record or None, flip_ns): flips the session took, in log order
        self.false_slams: list[int] = []    # stamps of false slams on Food cards
        self.edges: list = []               # (stamp, delivered, buzzer) of every edge
        self._busy: dict[str, list] = {p: [] for p in PLAYERS}  # press intervals per player
        self.pressed: list = []             # every press (Press), for reports
        self.logged_flips: list = []        # (flip_ns, card, log_ns) as the host logged them
        self._answered.clear()
        self._mine: deque = deque()         # the host's events waiting behind a race
        self._relog: deque = deque()        # ... refused when applied: logged again

    # -- scheduling --------------------------------------------------------

    def _at(self, t: int, kind: str, payload=None) -> None:
        self._n += 1
        heapq.heappush(self._heap, (t, self._n, kind, payload))

    def _ms(self, lo_hi) -> int:
        return int(self.rng.uniform(*lo_hi) * MS)

    def _react(self) -> int:
        p = self.pace
        return int((p.react_min_ms + self.rng.lognormvariate(math.log(p.react_median_ms),
                                                             p.react_sigma)) * MS)

    def _gap(self) -> int:
        p = self.pace
        gap = p.pace_ms * self.rng.uniform(1 - p.jitter, 1 + p.jitter)
        return int(min(max(gap, p.min_gap_ms), p.max_gap_ms) * MS)

    def _edge(self, buzzer: str, pressed: bool, stamp: int, after: int = 0) -> int:
        """Deliver one edge at its stamp + latency (never before ``after``,
        the delivery of the buzzer's edge before it); its delivery time."""
        at = max(stamp + self._ms(self.pace.latency_ms), after + 1_000)
        self._at(at, "edge", Edge(buzzer, pressed, stamp))
        self.edges.append((stamp, at, buzzer))
        return at

    def _free(self, player: str, t: int, length: int) -> int:
        """The first time from ``t`` on when ``player``'s buzzer is up for
        ``length`` (a player whose buzzer is still down presses again just
        after letting go)."""
        busy = self._busy[player]
        moved = True
        while moved:
            moved = False
            for a, b in busy:
                if t < b + 5 * MS and t + length > a - 5 * MS:
                    t, moved = b + self._ms(self.pace.double_gap_ms), True
        return t

    def _press(self, player: str, t: int, double: bool = True, what: str = "race",
               flip_ns: int | None = None) -> Press:
        """One physical press at ``t`` (or just after the buzzer is free):
        its edges, bounce, release and perhaps a double slam."""
        p, rng = self.pace, self.rng
        hold = self._ms(p.hold_ms)
        t = self._free(player, t, hold + 40 * MS)
        buzzer = f"b{PLAYERS.index(player) + 1}"
        press = Press(player, t, t + hold, what=what, flip_ns=flip_ns)
        self._busy[player].append((t, t + hold))
        self.pressed.append(press)
        last = self._edge(buzzer, True, t)
        if rng.random() < p.bounce_chance:
            for k in range(1, 1 + 2 * rng.randint(1, 2)):
                last = self._edge(buzzer, k % 2 == 0, t + k * MS, last)
                press.bounce.append((t + k * MS, last))
        self._edge(buzzer, False, t + hold, last)
        if double and rng.random() < p.double_chance:
            again = t + hold + self._ms(p.double_gap_ms)
            if self._free(player, again, self._ms(p.hold_ms) + 10 * MS) == again:
                self._press(player, again, double=False, what="double", flip_ns=flip_ns)
                press.double = True
        return press

    # -- the game ------------------------------------------------------------

    def play_game(self) -> None:
        """One whole game of Chope!, from the first flip to the empty deck."""
        p, rng, g = self.pace, self.rng, self.game
        s = self.session
        self._new_game_state()
        s.new_game("chope", [{"name": q, "buzzer": f"b{i + 1}"} for i, q in enumerate(PLAYERS)])
        truth = g.setup(list(PLAYERS), {})
        deck = [c for c, n in truth["deck"].items() for _ in range(n)]
        rng.shuffle(deck)
        self.never = rng.choice(PLAYERS) if rng.random() < p.never_slams_chance else None
        flip_at, last_log = self.t + S, self.t
        pending = None      # a forgotten card: logged after the next one, if it can be
        prev = None         # the previous race card, for its slow runner-ups
        for i, card in enumerate(deck):
            flip_at = max(flip_at, self.t)
            before = truth
            flipper = g.current_player(truth)
            truth = g.apply(truth, {"type": "flip", "card": card})
            req = g.race_request(truth)
            rec = None
            mark = None
            if p.mark_chance and rng.random() < p.mark_chance:
                mark = self._press(flipper, flip_at + self._ms(p.mark_ms), double=False,
                                   what="mark", flip_ns=flip_at)
            if req is not None:
                outcome, rec = self._race(req, card, flip_at, flipper, mark)
                truth = g.apply(truth, outcome)
                self.cards.append(rec)
                first = rec["first_ns"] if rec["first_ns"] is not None else flip_at + self._react()
            else:
                outcome = None
                first = flip_at + self._react()
                for q in PLAYERS:
                    if rng.random() < p.false_slam_chance:
                        self.false_slams.append(self._press(q, flip_at + self._react(),
                                                                what="false", flip_ns=flip_at).t_ns)
            after_card = truth
            truth, choices = self._decide(truth)
            stop = False
            if {"type": "stop"} in g.decisions(truth) and rng.random() < p.stop_chance:
                truth = g.apply(truth, {"type": "stop"})
                stop = True
                truth, more = self._decide(truth)
                choices += [{"type": "stop"}] + more
            gap = self._gap() + len(choices) * 1_500 * MS - (S // 2 if stop else 0)
            next_flip = flip_at + gap
            if prev is not None:
                prev["next_flip_ns"] = flip_at
            prev = rec
            if rec is not None and req.kind == "first-press":
                ts = sorted(t for _, t in rec["presses"])
                if any(t > ts[0] + 600 * MS and t < next_flip for t in ts[1:]):
                    rec["classes"].add("A")
            flip_ev = {"type": "flip", "card": card}
            self._flip_ns[id(flip_ev)] = flip_at
            if pending is not None:
                x = pending
                pending = None
                if self._swappable(x, card, outcome, after_card):
                    log_at = self._log_time(flip_at, first, next_flip, x["last_log"])
                    self._at(log_at, "log", (flip_ev, rec))
                    last_log = log_at + self._ms((100, 600))
                    self._at(last_log, "log", (x["event"], x["rec"]))
                    for r, t in ((rec, log_at), (x["rec"], last_log)):
                        if r is not None:
                            r["classes"].add("G")
                            r["log_ns"] = t
                else:
                    self._at(x["log_ns"], "log", (x["event"], x["rec"]))
                    if x["rec"] is not None:
                        x["rec"]["log_ns"] = x["log_ns"]
                    last_log = self._schedule_log(flip_ev, rec, flip_at, first, next_flip,
                                                  last_log)
            elif (not choices and not stop and i + 1 < len(deck) and not p.camera
                  and rng.random() < p.forget_chance):
                log_at = self._log_time(flip_at, first, next_flip, last_log)
                pending = {"event": flip_ev, "rec": rec, "log_ns": log_at, "last_log": last_log,
                           "before": before, "card": card, "outcome": outcome}
            else:
                last_log = self._schedule_log(flip_ev, rec, flip_at, first, next_flip, last_log)
            for c in choices:       # the table's choices and the stop, in order
                last_log = max(last_log + 50 * MS,
                               flip_at + (0 if c["type"] == "stop" else 1_500) * MS
                               + self._ms(p.log_ms))
                self._at(last_log, "log", (c, None))
            until = next_flip - 200 * MS
            if pending is not None:
                until = min(until, pending["log_ns"] - 1)
            flip_at = next_flip
            self._run_until(until)
        self._run_until(None)
        self._score()

    def _schedule_log(self, event, rec, flip_at, first, next_flip, last_log) -> int:
        if self.pace.camera:
            self._seen_ns[id(event)] = flip_at + self._ms(self.pace.camera_seen_ms)
            log_at = max(flip_at + self._ms(self.pace.camera_log_ms), last_log + MS)
        else:
            log_at = self._log_time(flip_at, first, next_flip, last_log)
        self._at(log_at, "log", (event, rec))
        if rec is not None:
            rec["log_ns"] = log_at
        return log_at

    def _log_time(self, flip_at: int, first: int, next_flip: int, last_log: int) -> int:
        """When the host logs a card flipped at ``flip_at`` whose first slam
        (or a reaction, for a card nobody slams) is at ``first``."""
        p, rng = self.pace, self.rng
        lo_ms, hi_ms = p.log_ms
        earliest, latest = flip_at + lo_ms * MS, flip_at + hi_ms * MS
        u = rng.random()
        if u < p.quick_log_chance:                          # before any slam
            lo, hi = earliest, max(earliest, first - 1)
        elif u < p.quick_log_chance + p.late_log_chance:    # after the next flip
            lo = max(earliest, next_flip + 50 * MS)
            hi = max(latest, lo + 500 * MS)
        else:                                               # between the two
            lo = max(earliest, first)
            hi = max(lo, min(latest, next_flip))
        return max(int(rng.uniform(lo, hi)), last_log + 50 * MS)

    def _swappable(self, x: dict, card: str, outcome, after_card) -> bool:
        """Can the tracker take the forgotten card ``x`` right after this
        ``card`` and end where the table is?"""
        g = self.game
        try:
            s = g.apply(x["before"], {"type": "flip", "card": card})
            if outcome is not None:
                s = g.apply(s, outcome)
            s = g.apply(s, x["event"])
            if x["outcome"] is not None:
                s = g.apply(s, x["outcome"])
        except RulesError:
            return False
        return _norm(s) == _norm(after_card)

    def _decide(self, truth):
        """A bust's keep, a siam's lose, a Mynah debt: chosen at the table
        (the first option); logged by the host after the card."""
        chosen = []
        while truth["choices"]:
            choice = self.game.decisions(truth)[0]
            truth = self.game.apply(truth, choice)
            chosen.append(choice)
        return truth, chosen

    def _race(self, req, card: str, flip_at: int, flipper: str,
              mark: Press | None = None) -> tuple[dict, dict]:
        """The presses a race card really gets: its true outcome and its
        record (``mark``: the flipper's press as they turned it, if any)."""
        p, rng = self.pace, self.rng
        rec = {"card": card, "kind": req.kind, "flip_ns": flip_at, "classes": set(),
               "presses": [], "win_press": None, "first_ns": None}
        if req.kind == "first-press":
            times = {q: flip_at + self._react() for q in req.eligible
                     if q != self.never and rng.random() < p.slam_chance}
            if len(times) >= 2 and rng.random() < p.near_tie_chance:
                a, b = sorted(times, key=times.get)[:2]
                times[b] = times[a] + rng.randint(1_000, int(p.near_tie_ms * MS))
            got = {q: self._press(q, t, flip_ns=flip_at)
                   for q, t in sorted(times.items(), key=lambda kv: kv[1])}
            if rng.random() < p.reflex_chance:
                self._press(flipper, flip_at + self._react(), what="reflex", flip_ns=flip_at)
            winner = min(got, key=lambda q: got[q].t_ns) if got else None
            outcome = {"type": "race", "reason": req.reason, "winner": winner, "loser": None,
                       "tied": []}
            if winner is None:
                rec["classes"].add("D")
            else:
                rec["win_press"] = (winner, got[winner].t_ns)
        else:
            marked = flipper if mark is not None and flipper in req.eligible else None
            times = {q: flip_at + self._react() for q in req.eligible
                     if q != marked and rng.random() >= p.miss_chance}
            got = {q: self._press(q, t, flip_ns=flip_at)
                   for q, t in sorted(times.items(), key=lambda kv: kv[1])}
            if marked is not None:
                got[marked] = mark
            missed = [q for q in req.eligible if q not in got]
            loser, tied = None, []
            if len(missed) == 1:
                loser = missed[0]
            elif missed:
                tied = missed
            elif got:
                loser = max(got, key=lambda q: got[q].t_ns)
                rec["win_press"] = (loser, got[loser].t_ns)
            if missed:
                rec["classes"].add("C")
            if any(pr.double for pr in got.values()):
                rec["classes"].add("E")
            outcome = {"type": "race", "reason": req.reason, "winner": None, "loser": loser,
                       "tied": tied}
        rec["presses"] = sorted(((q, pr.t_ns) for q, pr in got.items()), key=lambda x: x[1])
        rec["press_objs"] = list(got.values())
        rec["first_ns"] = rec["presses"][0][1] if rec["presses"] else None
        rec["winner"], rec["loser"] = outcome["winner"], outcome["loser"]
        return outcome, rec

    # -- running the session -------------------------------------------------

    def _run_until(self, until: int | None) -> None:
        """Deliver every scheduled edge and host log up to ``until`` (None:
        all, then until the session has nothing left to do), ticking the
        session whenever it has work due, like the pipeline's thread."""
        s = self.session
        while True:
            due = s.next_deadline()
            nxt = self._heap[0][0] if self._heap else None
            if until is not None and (nxt is None or nxt > until) and (due is None or due > until):
                return
            if nxt is None and due is None:
                self._catch_up()
                if not self._answer():
                    return
                continue
            if due is not None and (nxt is None or due <= nxt):
                self.t = max(self.t, due)
                s.tick()
                self._catch_up()
                self._answer()      # the host sees the console at once
                continue
            t, _, kind, payload = heapq.heappop(self._heap)
            self.t = max(self.t, t)
            if kind == "edge":
                if self._held is not None and payload.t_ns >= self._held[0]:
                    self._behind.append(payload)
                else:
                    s.feed_edge(payload)
            elif kind == "log" and self._held is None:
                self._held = (self.t, payload)
                self._at(self.t + s.delivery_margin_ns, "held")
            elif kind == "log":         # the host's next tap queues behind the first
                self._at(self._held[0] + s.delivery_margin_ns, "log", payload)
            elif kind == "held":
                (_, held), self._held = self._held, None
                self._log(*held)
                for e in self._behind:
                    s.feed_edge(e)
                self._behind.clear()
            elif kind == "answer":
                self._tap(payload)
            elif kind == "reorder":
                self._reorder(payload)
            self._catch_up()
            self._answer()

    def _log(self, event: dict, rec: dict | None) -> None:
        """The host logs an event. A choice (keep, lose) is the one the
        console asks for: the table's own if the session offers it, else the
        session's first (the session's verdicts may have gone another way
        than the table's), none if the session asks for none. Before a card
        or a stop, the host first answers a choice the console asks for."""
        s = self.session
        if event["type"] == "flip":
            self.logged_flips.append((self._flip_ns.get(id(event)), event["card"], self.t))
        idle = s.desk.race is None      # a choice the last race left is asked at once
        if event["type"] in ("keep", "lose"):
            if idle:
                opts = self._choices_asked()
                if not opts:
                    return
                if event not in opts:
                    event = opts[0]
        elif idle:
            for _ in range(10):
                opts = self._choices_asked()
                if not opts:
                    break
                self._log(opts[0], None)
        self._logging = dict(event)     # its own state update is not a queued one's
        try:
            out = s.log(dict(event), seen_ns=self._seen_ns.get(id(event)))
        except RulesError as exc:       # the session's state went another way
            self.tally.refused += 1
            self.tally.refusals.append((event, str(exc)))
            return
        finally:
            self._logging = None
        if out.get("type") == "queued":
            self._mine.append((event, rec))
        elif event["type"] == "flip":
            self.host_log.append((event["card"], rec, self._flip_ns.get(id(event))))

    def _choices_asked(self) -> list[dict]:
        s = self.session
        return [d for d in s.game.decisions(s.state) if d["type"] in ("keep", "lose")]

    def _update(self, update: dict) -> None:
        """The session's updates: the host's queued events as they are
        applied, or refused (the host logs those again once it can)."""
        if not self._mine:
            return
        if self._logging is not None and update["type"] == "state" \
                and (update["data"].get("event") or {}) == self._logging:
            self._logging = None        # the host's own event, applied at once
            return
        if update["type"] == "fault" and update["data"].get("fault") == "queued":
            self._relog.append(self._mine.popleft())
        elif update["type"] == "state":
            ev = update["data"].get("event") or {}
            head, rec = self._mine[0]
            if ev.get("type") == head["type"] and ev.get("card") == head.get("card"):
                self._mine.popleft()
                if head["type"] == "flip":
                    self.host_log.append((head["card"], rec, self._flip_ns.get(id(head))))

    def _catch_up(self) -> None:
        """Log again, in order, what the session refused from the queue."""
        while self._relog and self.session.desk.race is None and not self._mine:
            self._log(*self._relog.popleft())

    def _aligned(self) -> tuple[list, dict | None]:
        """The race events logged so far with the true card each is for
        (the session applies the host's cards in the order logged), and the
        race card still waiting for its race event."""
        s = self.session
        j, waiting, out = 0, None, []
        for e in effective_events(e for _, e in s.store.events(s.game_id)):
            if e.get("type") == "flip":
                while j < len(self.host_log) and self.host_log[j][0] != e.get("card"):
                    j += 1      # a log applied later and refused then
                rec = self.host_log[j][1] if j < len(self.host_log) else None
                j += 1
                if rec is not None:
                    waiting = rec
            elif e.get("type") == "race":
                out.append((e, waiting))
                waiting = None
        return out, waiting

    def _answer(self) -> bool:
        """Schedule the host's answer to a question the session asks (or to
        the swap the console offers); True if one was scheduled."""
        offer = self.session.races.reorder_offer(self.t) if self.session.races else None
        if offer is not None and tuple(offer["events"]) not in self._offered:
            self._offered.add(tuple(offer["events"]))
            self._at(self.t + self.pace.answer_ms * MS, "reorder", offer)
            return True
        race = self.session.desk.race
        if race is None or race.confirm is None or any(r is race for r in self._answered):
            return False
        self._answered.append(race)     # by identity: a later race may reuse an id()
        self._at(self.t + self.pace.answer_ms * MS, "answer", race)
        return True

    def _tap(self, race) -> None:
        """The host answers with the truth: the reading that is the card's
        (its first slam, its last slapper, or nobody) when it is among the
        choices; else the card's race starts at its true first press,
        pointed at on the timeline; with no such press recorded (or none at
        all: nobody slammed), the card is raced again."""
        s = self.session
        if s.desk.race is not race or race.confirm is None:
            return
        _, rec = self._aligned()
        choices = race.armed.choices
        pick = None if rec is None else self._true_choice(rec, choices)
        first = None if rec is None else rec["first_ns"]
        if pick is not None:
            s.confirm_race(True, pick["t_ns"])
        elif first is not None and race.armed.arm_ns == first and not choices:
            s.confirm_race(True)
        elif first is not None:
            try:            # the host points at the card's slam on the timeline
                s.use_presses(first)
            except RulesError:
                s.confirm_race(False)
        else:
            s.confirm_race(False)
        self._answer()

    def _reorder(self, offer: dict) -> None:
        """The host answers the offered swap with the truth: taken when the
        two cards (the last two the session applied, or the two before the
        last) were turned the other way round, declined otherwise."""
        s, log = self.session, self.host_log
        k = next((k for k in (len(log) - 1, len(log) - 2)
                  if k >= 1 and [log[k][0], log[k - 1][0]] == offer["cards"]), None)
        if k is None:
            return
        true = None not in (log[k][2], log[k - 1][2]) and log[k][2] < log[k - 1][2]
        try:
            s.reorder(offer["events"], accept=true)
        except RulesError:
            return          # the table moved on: the offer is gone
        self.tally.offers += 1
        if true:
            self.tally.swaps += 1
            log[k - 1], log[k] = log[k], log[k - 1]
        else:
            self.tally.declined += 1
        self._answer()

    @staticmethod
    def _true_choice(rec: dict, choices) -> dict | None:
        """The choice that says what really happened, if one does."""
        for c in choices:
            if c.get("nobody"):
                if rec["winner"] is None and rec["loser"] is None:     # or a tie for last
                    return c
            elif c.get("last"):
                if c.get("player") == rec["loser"]:     # the verdict is the same
                    return c
            elif rec["win_press"] == (c.get("player"), c.get("t_ns")) and rec["winner"]:
                return c
        return None

    # -- scoring ---------------------------------------------------------------

    def _classify(self) -> None:
        """The situations B and F (A, C, D, E, G are tagged as played)."""
        for rec in self.cards:
            log = rec.get("log_ns")
            if log is not None and any(t < log <= t + 2_500 * MS for t in self.false_slams):
                rec["classes"].add("B")
        edges = sorted(self.edges)
        stamps = [e[0] for e in edges]
        for rec in self.cards:
            for pr in rec["press_objs"]:
                buzzer = f"b{PLAYERS.index(pr.player) + 1}"
                for stamp, delivered in pr.bounce:
                    k = bisect.bisect_right(stamps, stamp)
                    while k < len(edges) and edges[k][0] < delivered:
                        if edges[k][2] != buzzer and edges[k][1] < delivered:
                            rec["classes"].add("F")
                            break
                        k += 1

    def _score(self) -> None:
        self._classify()
        tally = self.tally
        events, _ = self._aligned()
        got_for = {id(rec): e for e, rec in events if rec is not None}
        counted = {}        # (player, t_ns) -> the record of the card that counted it
        for e, rec in events:
            for o in e.get("order") or ():
                if not o.get("after_verdict"):
                    counted[(o.get("player"), o.get("t_ns"))] = rec
        for rec in self.cards:
            got = got_for.get(id(rec))
            if rec["win_press"] is not None:
                tally.winning_presses += 1
                if rec["win_press"] not in counted:
                    tally.stray_presses += 1
                elif counted[rec["win_press"]] is not rec:
                    tally.misplaced_presses += 1
            same = got is not None and got.get("winner") == rec["winner"] \
                and got.get("loser") == rec["loser"]
            if got is None:
                tally.unjudged += 1
                verdict = "unjudged"
            elif got.get("asked"):
                tally.flagged += 1
                verdict = "flagged" if same else "wrong_after_answer"
                if not same:
                    tally.wrong_after_answer += 1
            elif same:
                tally.right += 1
                verdict = "right"
            else:
                tally.wrong += 1
                verdict = "wrong"
            for c in rec["classes"]:
                d = tally.classes[c]
                d["cards"] += 1
                if verdict in ("wrong", "flagged", "wrong_after_answer"):
                    d["flagged" if verdict != "wrong" else "wrong"] += 1
                if verdict == "wrong_after_answer":
                    d["wrong_after_answer"] += 1
            if verdict in ("wrong", "wrong_after_answer", "unjudged"):
                report = self._report(rec, got, verdict)
                by = counted.get(rec["win_press"]) if rec["win_press"] else None
                report["winning_press_counted_for"] = (
                    None if by is None else "this card" if by is rec
                    else f"{by['card']} flipped {(by['flip_ns'] - rec['flip_ns']) / MS:+.0f} ms")
                tally.wrongs.append(report)

    def _report(self, rec: dict, got: dict | None, verdict: str) -> dict:
        """One wrong card for a report: times in ms from its flip."""
        f = rec["flip_ns"]

        def ms(t):
            return None if t is None else round((t - f) / MS, 1)
        return {
            "verdict": verdict, "card": rec["card"], "classes": sorted(rec["classes"]),
            "truth": {"winner": rec["winner"], "loser": rec["loser"],
                      "presses": [(q, ms(t)) for q, t in rec["presses"]]},
            "log_ms": ms(rec.get("log_ns")), "next_flip_ms": ms(rec.get("next_flip_ns")),
            "got": None if got is None else {
                "winner": got.get("winner"), "loser": got.get("loser"),
                "asked": bool(got.get("asked")), "arm_ms": ms((got.get("spec") or {}).get("arm_ns")),
                "false_starts": got.get("false_starts"), "ineligible": got.get("ineligible"),
                "order": [(o.get("player"), ms(o.get("t_ns")))
                          + (("after",) if o.get("after_verdict") else ())
                          for o in got.get("order") or ()]},
            "other_presses": sorted((pr.player, ms(pr.t_ns), pr.what, ms(pr.flip_ns))
                                    for pr in self.pressed
                                    if f - 4 * S < pr.t_ns < f + 3 * S
                                    and (pr.player, pr.t_ns) not in rec["presses"]),
            "flips": [(card, ms(t), ms(log)) for t, card, log in sorted(self.logged_flips)
                      if t is not None and f - 3 * S < t < f + 3 * S],
        }


def simulate(cards: int, pace_ms: int, seed: int = 0, settings: dict | None = None,
             pace: Pace | None = None) -> Tally:
    """Play whole games until at least ``cards`` race cards were judged."""
    rng = random.Random(seed)
    p = pace or Pace(pace_ms=pace_ms)
    table = SimulatedTable(rng, p, settings)
    while table.tally.cards < cards:
        table.play_game()
    return table.tally


__all__ = ["CLASSES", "Pace", "Press", "SimulatedTable", "Tally", "simulate"]
