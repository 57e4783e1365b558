"""Cards the host logged while a race was still open: queued behind it.

(Not the presses waiting for a card: those are the race desk's,
:meth:`companion.races.desk.RaceDesk.waiting`.)

The host never has to wait to log (docs/rules-notes.md, "Which card a press
belongs to"): an event the tracker takes only once a race outcome is logged
is queued here, with the time it was logged, and is applied the moment the race
is logged. Pure: the table's races save the queue in its own store row.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterable

from ..games import Game, RulesError


def legal_after_races(game: Game, state: Any, events: list[dict], budget: int = 256) -> bool:
    """Whether ``events`` can follow ``state`` in order once each race the
    game waits for on the way has some outcome: a bounded search, which
    tries each race's outcomes in the game's order. With the budget spent
    and no way found, the answer is no: an event that cannot be shown to
    follow is refused (the host logs it once the races are over), never
    taken on trust (an unknown event type used to be queued so)."""
    left = [budget]

    def ok(st: Any, rest: list[dict]) -> bool:
        left[0] -= 1
        if left[0] < 0:
            return False
        if game.race_request(st) is not None:
            return any(_then(st, outcome, rest) for outcome in game.race_outcomes(st))
        if not rest:
            return True
        try:
            return ok(game.apply(st, rest[0]), rest[1:])
        except RulesError:
            return False

    def _then(st: Any, outcome: dict, rest: list[dict]) -> bool:
        try:
            return ok(game.apply(st, outcome), rest)
        except RulesError:
            return False
    return ok(state, events)


def reorder_plan(game: Game, state: Any, first: dict, second: dict,
                 others: list[dict], after: list[dict] = ()) -> list[dict] | None:
    """The host's events after ``state`` with the card ``second`` turned
    before ``first`` (the host logged them the other way round): the two
    cards in that order and the host's other events (a bust's keep, a stop)
    kept in their own order around them, the first arrangement the tracker
    takes once each race on the way has some outcome (and ``after``, the
    host's events logged since, can follow them); None if none.

    >>> from companion.games import get_game
    >>> g = get_game("chope")
    >>> s = g.setup(["ana", "bo"], {})
    >>> red, laksa = {"type": "flip", "card": "table:red"}, {"type": "flip", "card": "food:laksa"}
    >>> reorder_plan(g, s, red, laksa, []) == [laksa, red]
    True
    """
    n = len(others)
    for i in range(n + 1):
        for j in range(i, n + 1):
            seq = others[:i] + [second] + others[i:j] + [first] + others[j:]
            if legal_after_races(game, state, seq + list(after)):
                return seq
    return None


def requests_along(game: Game, state: Any, events: list[dict]) -> list[Any] | None:
    """The race each of ``events`` asks for, applied in order from
    ``state`` (a race on the way takes the first outcome that lets the rest
    follow): the game's :class:`RaceRequest` or None, one per event; None
    when the tracker refuses the sequence."""
    out: list[Any] = []
    st = state
    for k, ev in enumerate(events):
        if game.race_request(st) is not None:
            st = next((game.apply(st, o) for o in game.race_outcomes(st)
                       if legal_after_races(game, game.apply(st, o), events[k:])), None)
            if st is None:
                return None
        try:
            st = game.apply(st, ev)
        except RulesError:
            return None
        out.append(game.race_request(st))
    return out


def _past_the_race(game: Game, state: Any) -> Any:
    """``state`` with the race it waits for given its first outcome: where
    the tracker says what is wrong with an event itself (an unknown card),
    not that the race comes first."""
    if game.race_request(state) is None:
        return state
    for outcome in game.race_outcomes(state):
        try:
            return game.apply(state, outcome)
        except RulesError:
            continue
    return state


class CardQueue:
    """Host events waiting behind the open race, in the order logged."""

    def __init__(self):
        self.items: deque[tuple[dict, int]] = deque()

    def __bool__(self) -> bool:
        return bool(self.items)

    def must_queue(self, game: Game, state: Any, event: dict, race_open: bool,
                   held: bool = False) -> bool:
        """Whether ``event`` is queued: a race is open (or cards are queued) and
        the tracker takes it only after some race outcome, or at all while
        the open race is ``held`` (a card's race whose verdict may still be
        weighed: nothing moves the game on under it). RulesError (the
        tracker's own reason) when no outcome would make it legal."""
        if not race_open and not self.items:
            return False
        if not held and (not race_open or not self.items):
            try:
                game.apply(state, event)
                return False                            # legal now: not queued
            except RulesError:
                pass
        if legal_after_races(game, state, [e for e, _ in self.items] + [event]):
            return True
        game.apply(_past_the_race(game, state), event)   # raises the tracker's own reason
        raise RulesError("that cannot follow the cards already waiting for the race", "race")

    def add(self, event: dict, logged_ns: int) -> None:
        self.items.append((event, logged_ns))

    def pop(self) -> tuple[dict, int]:
        return self.items.popleft()

    def put_back(self, event: dict, logged_ns: int) -> None:
        """Return the first card to the front: it waits for a choice the
        race left (a Siam! loser's card), asked first."""
        self.items.appendleft((event, logged_ns))

    def next_draw(self, game: Game) -> int | None:
        """When the first waiting card (``Game.is_draw``) was logged."""
        return next((t for e, t in self.items if game.is_draw(e)), None)

    def to_json(self) -> list[dict]:
        return [{"event": e, "logged_ns": t} for e, t in self.items]

    def restore(self, saved: Iterable[Any]) -> None:
        """Take back the queue saved with a live race (a restart)."""
        self.items.extend((q["event"], q["logged_ns"]) for q in saved or ()
                          if isinstance(q, dict) and isinstance(q.get("event"), dict)
                          and isinstance(q.get("logged_ns"), int)
                          and not isinstance(q.get("logged_ns"), bool))

    def events(self) -> list[dict]:
        return [e for e, _ in self.items]


__all__ = ["CardQueue", "legal_after_races", "reorder_plan", "requests_along"]
