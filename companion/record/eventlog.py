"""The game log's own engine: undo and redo over a tracker's events.

A game's log is a list of events; the state is what applying them gives.
The log's own events ``{"type": "undo"}`` (drop the last effective event)
and ``{"type": "redo"}`` (put back the last one undone; any other event
clears what could be redone) are handled here, once, for every game:
:class:`Replay` keeps the state after every effective event (so undo costs
nothing), :func:`effective_events` reads the same rules without a tracker.
:func:`summary` is a state's final-state object (what ``companion replay``
prints and a finished game keeps); :func:`jsonable` is the one check that
what goes into the log is plain JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeVar

from ..games import Game, RulesError, get_game

T = TypeVar("T")

#: The log's own event types.
LOG_EVENTS = ("undo", "redo")


def jsonable(value: Any, what: str = "event") -> Any:
    """``value`` as plain JSON (a deep copy); RulesError if it is not JSON."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise RulesError(f"the {what} is not JSON: {exc}", "format") from None


def effective_events(events: Iterable[T], kind_of: Callable[[T], Any] | None = None) -> list[T]:
    """The events a log's undo/redo leave in effect (no tracker needed);
    ``kind_of`` reads an event's kind (by default its ``"type"``: the log's
    own dicts; the reflexes pass ``(id, kind)`` rows from the store).

    >>> effective_events([{"type": "a"}, {"type": "b"}, {"type": "undo"}, {"type": "c"}])
    [{'type': 'a'}, {'type': 'c'}]
    >>> effective_events([(1, "race"), (2, "undo"), (3, "redo")], kind_of=lambda r: r[1])
    [(1, 'race')]
    """
    kind_of = kind_of or (lambda ev: ev.get("type"))
    eff: list[T] = []
    undone: list[T] = []
    for ev in events:
        kind = kind_of(ev)
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


@dataclass
class Replay:
    """The effective history of a game: its state after every effective event."""

    game: Game
    players: list[str]
    options: dict
    states: list[Any]                      # states[0] is the setup
    events: list[dict] = field(default_factory=list)   # effective events
    undone: list[tuple[dict, Any]] = field(default_factory=list)  # redo stack

    @property
    def state(self) -> Any:
        return self.states[-1]

    @classmethod
    def start(cls, game_name: str, players: list[str], options: dict | None = None) -> "Replay":
        game = get_game(game_name)
        state = game.setup(players, options or {})
        return cls(game, list(players), dict(options or {}), [state])

    def apply(self, event: dict) -> Any:
        """Apply one logged event (game event, undo or redo); raises
        RulesError and changes nothing if it is illegal."""
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "undo":
            if not self.events:
                raise RulesError("nothing to undo", "undo")
            self.undone.append((self.events.pop(), self.states.pop()))
        elif kind == "redo":
            if not self.undone:
                raise RulesError("nothing to redo", "redo")
            ev, st = self.undone.pop()
            self.events.append(ev)
            self.states.append(st)
        else:
            new = self.game.apply(self.state, event)
            self.events.append(event)
            self.states.append(new)
            self.undone.clear()
        return self.state

    def summary(self) -> dict:
        return summary(self.game, self.players, self.state)


def summary(game: Game, players: list[str], state: Any) -> dict:
    """The final-state object ``companion replay`` prints."""
    return {
        "game": game.name,
        "players": list(players),
        "scores": game.scores(state),
        "current_player": game.current_player(state),
        "finished": game.finished(state),
        "ranking": game.ranking(state),
        "view": game.public_view(state),
    }


__all__ = ["Replay", "ResumeError", "effective_events", "jsonable", "replay_stored", "summary", "LOG_EVENTS"]


class ResumeError(Exception):
    """A stored game that the tracker can no longer load or replay."""


def replay_stored(store, gid: int, info: dict) -> tuple[Game, Replay, list]:
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
