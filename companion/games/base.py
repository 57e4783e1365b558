"""The framework every game tracker shares.

A tracker is a pure state machine in the OpenSpiel / boardgame.io style. The
table supplies chance: the host logs the card that was really drawn or the die
that was really rolled; nothing here draws a random number or reads a clock.

Events are plain JSON objects with a ``"type"`` key, so the log, the replay
file, the web API and the tests all speak the same language. A race that the
buzzers settled comes in as an event too::

    {"type": "race", "reason": "chope", "winner": "bo", "loser": null,
     "tied": [], "false_starts": [], "ineligible": [], "edges": [...]}

(the keys of :meth:`companion.referee.Verdict.to_json` plus ``reason``; a
tracker reads only ``winner``, ``loser``, ``tied``, ``false_starts`` and
``ineligible``).

Subclasses implement :meth:`Game._apply` on a private copy of the state; the
public :meth:`Game.apply` makes that copy, so an illegal event (a
:class:`RulesError`) always leaves the caller's state unchanged.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar


class RulesError(ValueError):
    """An event the rules do not allow; the message names the rule."""

    def __init__(self, message: str, rule: str | None = None):
        super().__init__(message)
        self.rule = rule

    def to_json(self) -> dict:
        return {"error": str(self), "rule": self.rule}


@dataclass(frozen=True)
class RaceRequest:
    """A race the game wants the buzzers to settle before play goes on.

    ``kind`` is one of the referee's race kinds (``first-press``,
    ``last-press``, ``first-release``); ``reason`` is the game's own word for
    it (``chope``, ``siam``, ``chomp``, ``feeding-frenzy``,
    ``food-poisoning``); ``announced`` races are started by the companion with
    a countdown, unannounced ones take the burst of presses recorded when the
    card was flipped (see DESIGN.md, "Arming").
    """

    kind: str
    eligible: tuple[str, ...]
    reason: str
    announced: bool = False
    players: tuple[str, ...] = ()
    info: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"kind": self.kind, "eligible": list(self.eligible), "reason": self.reason,
                "announced": self.announced, "players": list(self.players),
                "info": self.info}


class Game(ABC):
    """One game's rules. Instances hold no per-game state; states are values."""

    name: ClassVar[str]          # "chope": the id used in files and URLs
    title: ClassVar[str]         # "Chope!": what people read
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    hides_scores: ClassVar[bool] = False   # True: the scoreboard shows counts only

    # -- setup ----------------------------------------------------------
    def default_options(self) -> dict:
        """Options and their defaults (component counts, variants, house rules)."""
        return {}

    def setup(self, players: list[str], options: dict | None = None) -> Any:
        """A new game for ``players`` (in seating order, clockwise)."""
        if not isinstance(players, (list, tuple)) or not all(
                isinstance(p, str) and p.strip() for p in players):
            raise RulesError("players must be a list of non-empty names", "setup")
        if len(set(players)) != len(players):
            raise RulesError("two players have the same name", "setup")
        if not self.min_players <= len(players) <= self.max_players:
            raise RulesError(f"{self.title} is for {self.min_players} to "
                             f"{self.max_players} players, not {len(players)}", "setup")
        opts = self.default_options()
        unknown = set(options or {}) - set(opts)
        if unknown:
            raise RulesError(f"unknown option(s) for {self.title}: {sorted(unknown)}", "setup")
        opts.update(copy.deepcopy(options or {}))
        return self._setup(list(players), opts)

    @abstractmethod
    def _setup(self, players: list[str], options: dict) -> Any: ...

    # -- transitions ----------------------------------------------------
    def apply(self, state: Any, event: dict) -> Any:
        """The state after ``event``; raises :class:`RulesError` and leaves
        ``state`` untouched if the rules do not allow it."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise RulesError("an event must be a JSON object with a 'type'", "format")
        if self.finished(state):
            raise RulesError("the game is over", "end of game")
        return self._apply(copy.deepcopy(state), event)

    @abstractmethod
    def _apply(self, state: Any, event: dict) -> Any:
        """Apply ``event`` to ``state`` (a private copy: mutate freely)."""

    @abstractmethod
    def legal_events(self, state: Any) -> list[dict]:
        """Every event the host may log now, fully formed, so the console can
        offer only legal buttons. When a race is pending this lists a
        representative set of race outcomes (each possible winner or loser, a
        tie, nobody)."""

    def race_request(self, state: Any) -> RaceRequest | None:
        """The race the buzzers must settle next, if any."""
        return None

    # -- reading the state ----------------------------------------------
    @abstractmethod
    def scores(self, state: Any) -> dict[str, int]:
        """Points per player as the rulebook's scoring would give them now
        (the final scores once :meth:`finished`)."""

    @abstractmethod
    def current_player(self, state: Any) -> str | None:
        """Whose turn it is; None when nobody's (a simultaneous round, the end)."""

    @abstractmethod
    def finished(self, state: Any) -> bool: ...

    @abstractmethod
    def ranking(self, state: Any) -> list[list[str]]:
        """Players best first, grouped: players still tied after the
        rulebook's tie-breaks share a group, e.g. ``[["ana"], ["bo", "cy"]]``."""

    @abstractmethod
    def public_view(self, state: Any) -> dict:
        """What the whole table may see (the scoreboard): JSON-able, no hidden
        information (secret cards stay secret until the end)."""

    def host_view(self, state: Any) -> dict:
        """What the host console shows; by default the public view."""
        return self.public_view(state)

    def public_event(self, event: dict) -> dict:
        """``event`` as every phone may see it (the live update's ``event``):
        by default the whole event; a game with secret events strips them."""
        return event

    def describe(self, event: dict) -> str:
        """A short human line for the log."""
        return " ".join(f"{k}={v}" for k, v in event.items() if k != "edges")

    def check_invariants(self, state: Any) -> None:
        """Raise AssertionError if the state breaks a conservation law
        (every card in exactly one place). Used by the conformance tests."""


def verdict_names(event: dict, key: str, players, absent: str = "did not take part in this race",
                  rule: str = "race") -> list[str]:
    """``event[key]`` (a verdict's ``tied``, ``false_starts`` or
    ``ineligible``) as a list of distinct names of ``players``."""
    value = event.get(key) or []
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value) \
            or len(set(value)) != len(value):
        raise RulesError(f"{key!r} must be a list of distinct player names", "format")
    stray = [p for p in value if p not in players]
    if stray:
        raise RulesError(f"{', '.join(stray)} {absent}", rule)
    return value


def check_verdict(event: dict, kind: str, players, eligible) -> tuple:
    """The race outcome of a ``race`` event, checked for the shape the
    referee gives a race of ``kind``; returns ``(winner, loser, tied,
    false_starts, ineligible)`` or raises :class:`RulesError`.

    A ``first-press`` race has a winner or a tie (two or more eligible
    players), never a loser; a ``last-press`` or ``first-release`` race has
    a loser or a tie, never a winner. A false starter may still win: the
    referee lets one back in only under its lockout setting.
    """
    players, eligible = list(players), set(eligible)
    tied, false_starts, ineligible = (verdict_names(event, k, players)
                                      for k in ("tied", "false_starts", "ineligible"))
    winner, loser = event.get("winner"), event.get("loser")
    decisive, other = ("winner", "loser") if kind == "first-press" else ("loser", "winner")
    if event.get(other) is not None:
        raise RulesError(f"a {kind} race has a {decisive}, never a {other}", "race")
    who = winner if kind == "first-press" else loser
    if who is not None:
        if who not in players:
            raise RulesError(f"{who!r} did not take part in this race", "race")
        if who not in eligible:
            raise RulesError(f"{who} was not in this race and cannot be its {decisive}", "race")
        if who in ineligible:
            raise RulesError(f"{who} cannot be both the {decisive} and ineligible", "race")
        if tied:
            raise RulesError(f"a race has a {decisive} or a tie, not both", "race")
    if tied and (len(tied) < 2 or set(tied) - eligible):
        raise RulesError("a tie is two or more players of the race", "race")
    wrong = [p for p in ineligible if p in eligible]
    if wrong:
        raise RulesError(f"{', '.join(wrong)} may take part, so cannot be ineligible", "race")
    return winner, loser, tied, false_starts, ineligible


def rank_by(players: list[str], key) -> list[list[str]]:
    """Group ``players`` best first by ``key(player)`` (higher is better);
    equal keys share a group."""
    ordered = sorted(players, key=key, reverse=True)
    groups: list[list[str]] = []
    last = object()
    for p in ordered:
        k = key(p)
        if groups and k == last:
            groups[-1].append(p)
        else:
            groups.append([p])
        last = k
    return groups
