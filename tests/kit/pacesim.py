"""A Chope! table at a real table's pace, simulated through the real session.

The simulator plays whole Chope! games as a table does: a player flips a
card every ``pace`` seconds (with jitter, never closer than 0.8 s nor
further than 4 s apart), the other players slam a Table 150 to 700 ms after
it is flipped, everybody slaps a Mynah, a player now and then presses by
reflex on their own flip, buzzers bounce, and the host logs each card 0.1 to
2 s after it was flipped (in the order flipped, so often two cards after
both slams). Every press goes into a real :class:`~companion.session.TableSession`
(real arming, referee and tracker, an in-memory SQLite store) on a clock the
simulator moves; the host answers the session's questions (a claim it
cannot tell) with the truth a second later, as a host looking at the table
would.

For every race card it records what the session decided against what really
happened: ``right``, ``flagged`` (the session asked the host) or ``wrong``
(a different winner or loser, without asking): the product's promise is
that ``wrong`` is always 0. Used by the property tests and by
``python3 tasks.py bench`` (``race_pace_*``).

Nothing here reads a clock or a pin: time is the simulator's integer ns.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

from .edges import Edge
from .games import RulesError, get_game
from .session import TableSession
from .store import Store

MS = 1_000_000
S = 1_000 * MS
PLAYERS = ("ana", "bo", "cy", "dee")


@dataclass
class Pace:
    """How the simulated table plays (all times in ms)."""

    pace_ms: int = 2_500            # a flip every ... on average
    jitter: float = 0.25            # flip gaps are pace x (1 +- jitter)
    min_gap_ms: int = 800           # never closer than this ...
    max_gap_ms: int = 4_000         # ... nor further apart than this
    react_ms: tuple[int, int] = (150, 700)    # a slam this long after the flip
    log_ms: tuple[int, int] = (100, 2_000)    # the host logs a card this long after its flip
    slam_chance: float = 0.85       # each eligible player slams a Table with this chance
    reflex_chance: float = 0.05     # the flipper presses on their own Table by reflex
    bounce_chance: float = 0.2      # a press bounces (extra edges within 5 ms)
    stop_chance: float = 0.2        # the flipper stops after a card
    answer_ms: int = 1_000          # the host answers a question this long after it


@dataclass
class Tally:
    """What the session decided for every race card, against the truth."""

    right: int = 0
    flagged: int = 0
    wrong: int = 0
    wrongs: list = field(default_factory=list)      # (card, truth, verdict) for a report

    @property
    def cards(self) -> int:
        return self.right + self.flagged + self.wrong

    def pct(self, n: int) -> float:
        return 100.0 * n / self.cards if self.cards else 0.0


class Table:
    """One simulated table: the true game, the presses, the host, the session."""

    def __init__(self, rng: random.Random, pace: Pace, settings: dict | None = None):
        self.rng, self.pace = rng, pace
        self.t = 100 * S
        self.session = TableSession(Store(":memory:"), clock=lambda: self.t,
                                    settings=settings)
        self.game = get_game("chope")
        self.tally = Tally()
        self._heap: list = []       # (t_ns, order, kind, payload)
        self._n = 0
        self.truths: list[dict] = []        # race cards in the order flipped
        self._answered: list = []
        self.pressed: list = []     # every press scheduled: (t_ns, player), for reports

    # -- scheduling ------------------------------------------------------

    def _at(self, t: int, kind: str, payload=None) -> None:
        self._n += 1
        heapq.heappush(self._heap, (t, self._n, kind, payload))

    def _ms(self, lo_hi: tuple[int, int]) -> int:
        return int(self.rng.uniform(*lo_hi) * MS)

    def _gap(self) -> int:
        p = self.pace
        gap = p.pace_ms * self.rng.uniform(1 - p.jitter, 1 + p.jitter)
        return int(min(max(gap, p.min_gap_ms), p.max_gap_ms) * MS)

    def _press(self, player: str, t: int) -> None:
        self.pressed.append((t, player))
        buzzer = f"b{PLAYERS.index(player) + 1}"
        self._at(t, "edge", Edge(buzzer, True, t))
        if self.rng.random() < self.pace.bounce_chance:
            for k in range(1, self.rng.randint(2, 5)):
                self._at(t + k * MS, "edge", Edge(buzzer, k % 2 == 0, t + k * MS))
        up = t + self.rng.randint(60, 200) * MS
        self._at(up, "edge", Edge(buzzer, False, up))

    # -- the game ----------------------------------------------------------

    def play_game(self) -> None:
        """One whole game of Chope!, from the first flip to the empty deck."""
        s = self.session
        s.new_game("chope", [{"name": p, "buzzer": f"b{i + 1}"} for i, p in enumerate(PLAYERS)])
        truth = self.game.setup(list(PLAYERS), {})
        deck = [c for c, n in truth["deck"].items() for _ in range(n)]
        self.rng.shuffle(deck)
        flip_at, last_log = self.t + S, self.t
        for card in deck:
            flip_at = max(flip_at, self.t)
            flipper = self.game.current_player(truth)
            truth = self.game.apply(truth, {"type": "flip", "card": card})
            req = self.game.race_request(truth)
            log_at = max(flip_at + self._ms(self.pace.log_ms), last_log + 50 * MS)
            last_log = log_at
            self._at(log_at, "log", {"type": "flip", "card": card})
            if req is not None:
                outcome, first = self._race(req, flip_at, flipper)
                truth = self.game.apply(truth, outcome)
                self.truths.append({"card": card, "flip_ns": flip_at, "first_ns": first,
                                    "log_ns": log_at, **outcome})
            gap = self._gap()
            truth, last_log, gap = self._choices(truth, flip_at, last_log, gap)
            if {"type": "stop"} in self.game.decisions(truth) \
                    and self.rng.random() < self.pace.stop_chance:
                truth = self.game.apply(truth, {"type": "stop"})
                last_log = max(last_log + 50 * MS, flip_at + self._ms(self.pace.log_ms))
                self._at(last_log, "log", {"type": "stop"})
                gap += 1_000 * MS
                truth, last_log, gap = self._choices(truth, flip_at, last_log, gap)
            flip_at += gap
            self._run_until(flip_at - 200 * MS)
        self._run_until(None)
        self._score()
        self.truths.clear()
        self._answered.clear()

    def _choices(self, truth, flip_at: int, last_log: int, gap: int):
        """A bust's keep, a siam's lose, a Mynah debt: chosen at the table
        (the first option), logged by the host after the card; the next flip
        waits for it."""
        while truth["choices"]:
            choice = self.game.decisions(truth)[0]
            truth = self.game.apply(truth, choice)
            last_log = max(last_log + 50 * MS, flip_at + 1_500 * MS + self._ms(self.pace.log_ms))
            self._at(last_log, "log", choice)
            gap += 1_500 * MS
        return truth, last_log, gap

    def _race(self, req, flip_at: int, flipper: str) -> tuple[dict, int]:
        """The presses a race card really gets: its true outcome and the
        time of its first counted press."""
        p = self.pace
        presses = {}
        if req.kind == "first-press":
            who = [q for q in req.eligible if self.rng.random() < p.slam_chance] \
                or [self.rng.choice(req.eligible)]
            for q in who:
                presses[q] = flip_at + self._ms(p.react_ms)
            if self.rng.random() < p.reflex_chance:
                self._press(flipper, flip_at + self._ms(p.react_ms))
            winner = min(presses, key=presses.get)
            outcome = {"type": "race", "reason": req.reason, "winner": winner, "loser": None,
                       "tied": []}
        else:
            for q in req.eligible:
                presses[q] = flip_at + self._ms(p.react_ms)
            loser = max(presses, key=presses.get)
            outcome = {"type": "race", "reason": req.reason, "winner": None, "loser": loser,
                       "tied": []}
        for q, t in presses.items():
            self._press(q, t)
        return outcome, min(presses.values())

    # -- running the session -------------------------------------------

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
                if not self._answer():
                    return
                continue
            if due is not None and (nxt is None or due <= nxt):
                self.t = max(self.t, due)
                s.tick()
                continue
            t, _, kind, payload = heapq.heappop(self._heap)
            self.t = max(self.t, t)
            if kind == "edge":
                s.feed_edge(payload)
            elif kind == "log":
                self._log(payload)
            elif kind == "answer":
                self._tap(payload)
            self._answer()

    def _log(self, event: dict) -> None:
        try:
            self.session.log(dict(event))
        except RulesError as exc:       # the session's state went another way: wrong
            self.tally.wrongs.append(("refused", event, str(exc)))

    def _answer(self) -> bool:
        """Schedule the host's answer to a question the session asks; True
        if one was scheduled."""
        race = self.session.desk.race
        if race is None or race.confirm is None or any(r is race for r in self._answered):
            return False
        self._answered.append(race)     # by identity: a later race may reuse an id()
        self._at(self.t + self.pace.answer_ms * MS, "answer", race)
        return True

    def _tap(self, race) -> None:
        """The host answers with the truth: the card's race starts at its
        true first press (one of the choices, or pointed at on the timeline),
        or, with that press not recorded, the card is raced again."""
        s = self.session
        if s.desk.race is not race or race.confirm is None:
            return
        index = sum(1 for _, e in s.store.events(s.game_id) if e.get("type") == "race")
        truth = self.truths[index] if index < len(self.truths) else None
        first = None if truth is None else truth["first_ns"]
        if first is not None and race.armed.arm_ns == first:
            s.confirm_race(True)
        elif first is not None and any(c["t_ns"] == first for c in race.armed.choices):
            s.confirm_race(True, first)
        elif first is not None:
            try:            # the host points at the card's slam on the timeline
                s.use_presses(first)
            except RulesError:
                s.confirm_race(False)
        else:
            s.confirm_race(False)
        self._answer()

    def _score(self) -> None:
        s = self.session
        logged = [e for _, e in s.store.events(s.game_id) if e.get("type") == "race"]
        for i, truth in enumerate(self.truths):
            got = logged[i] if i < len(logged) else None
            if got is None:
                self.tally.wrong += 1
                self.tally.wrongs.append((truth["card"], truth, None))
            elif got.get("asked"):
                self.tally.flagged += 1
            elif got.get("winner") == truth["winner"] and got.get("loser") == truth["loser"]:
                self.tally.right += 1
            else:
                self.tally.wrong += 1
                self.tally.wrongs.append((truth["card"], truth,
                                          {k: got.get(k) for k in ("winner", "loser", "tied")}))


def simulate(cards: int, pace_ms: int, seed: int = 0, settings: dict | None = None,
             pace: Pace | None = None) -> Tally:
    """Play whole games until at least ``cards`` race cards were judged."""
    rng = random.Random(seed)
    p = pace or Pace(pace_ms=pace_ms)
    table = Table(rng, p, settings)
    while table.tally.cards < cards:
        table.play_game()
    return table.tally


__all__ = ["Pace", "Tally", "Table", "simulate"]
