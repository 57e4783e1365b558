"""The framework every game tracker shares.

A tracker is a pure state machine in the OpenSpiel / boardgame.io style. The
table supplies chance: the host logs the card that was really drawn or the die
that was really rolled; the rules never draw a random number or read a clock.
The one draw is "Roll for us" (:meth:`Game.roll_for_us`), for a table that
lost its die: it picks an outcome the rules offer, outside :meth:`Game.apply`,
and the host logs it like any roll.

Every hook the pages and the console use is declared on :class:`Game` with a
default, so a new game overrides only what it needs: the scoreboard
(:meth:`~Game.public_view`), the console (:meth:`~Game.host_view`,
:meth:`~Game.host_events`, :meth:`~Game.roll_offer`), a player's private page
(:attr:`~Game.hidden_information`, :meth:`~Game.private_view`,
:meth:`~Game.private_events`, :meth:`~Game.public_event`) and the log
(:meth:`~Game.describe`). The page's drawing of them is the game's one page
script, ``companion/web/static/games/<name>.js`` (see ``js/render.js``).

Events are plain JSON objects with a ``"type"`` key, so the log, the replay
file, the web API and the tests all speak the same language. A race that the
buzzers settled comes in as an event too::

    {"type": "race", "reason": "chope", "winner": "bo", "loser": null,
     "tied": [], "false_starts": [], "ineligible": [], "edges": [...]}

(the keys of :meth:`companion.races.referee.Verdict.to_json` plus ``reason``; a
tracker reads only ``winner``, ``loser``, ``tied``, ``false_starts`` and
``ineligible``).

Subclasses implement :meth:`Game._apply` on a private copy of the state; the
public :meth:`Game.apply` makes that copy, so an illegal event (a
:class:`RulesError`) always leaves the caller's state unchanged.
"""

from __future__ import annotations

import copy
import logging
import math
import secrets
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, ClassVar

from .shapes import RACE, check_shape

log = logging.getLogger(__name__)
_system_random = secrets.SystemRandom()


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
    ``food-poisoning``). ``announced`` races (a Chomp! reveal) are started by
    the companion with a countdown and a cue on the buttons' clock, and a
    press before GO is a false start; unannounced ones (a Chope! Table) are
    already over when the host logs the card seconds after its flip, so they
    take the burst of presses recorded live when the card was flipped.
    ``auto_start``: an announced race the companion starts (its countdown)
    as soon as the game asks for it, with no "Start race" tap (Chomp!: the
    round's last card logged is the signal), whatever the table's
    ``auto_start`` setting.
    """

    kind: str
    eligible: tuple[str, ...]
    reason: str
    announced: bool = False
    players: tuple[str, ...] = ()
    info: dict = field(default_factory=dict)
    #: the player who turned the card and does not race it (a Chope! Table):
    #: with flipper arming (docs/rules-notes.md), their press marks the flip
    flipper: str | None = None
    auto_start: bool = False

    def to_json(self) -> dict:
        out = {"kind": self.kind, "eligible": list(self.eligible), "reason": self.reason,
               "announced": self.announced, "players": list(self.players),
               "info": self.info}
        if self.flipper is not None:
            out["flipper"] = self.flipper
        if self.auto_start:
            out["auto_start"] = True
        return out


#: The kinds of a :class:`Setting`: what the host's form shows for it.
SETTING_KINDS = ("bool", "choice", "int", "player", "data")


@dataclass(frozen=True)
class Setting:
    """One option of a game, declared as data: the host's new-game form is
    built from it (a checkbox, a dropdown, a number field, a player picker)
    and :meth:`Game.setup` checks every value against it in one place.

    ``kind``: ``bool``; ``choice`` (one of ``choices``, the default first);
    ``int`` (``minimum`` to ``maximum``); ``player`` (one of the game's
    players, or None when ``default`` is None); ``data`` (a JSON value such
    as component counts, checked by the game's own ``_setup``). ``rule`` is
    the rulebook line the setting implements or reads, quoted; ``assumed``
    marks a default that the rulebook does not give (a labelled assumption).

    >>> Setting("bust_ends_turn", True, "bool", label="A bust ends the turn").check(False, [])
    False
    """

    name: str
    default: Any
    kind: str = "choice"
    choices: tuple = ()
    minimum: int | None = None
    maximum: int | None = None
    label: str = ""
    rule: str = ""
    help: str = ""
    assumed: bool = False
    choice_labels: tuple = ()

    def __post_init__(self):
        if self.kind not in SETTING_KINDS:
            raise ValueError(f"setting {self.name}: kind must be one of {SETTING_KINDS}")
        if self.kind == "choice" and self.default not in self.choices:
            raise ValueError(f"setting {self.name}: the default must be one of its choices")

    def check(self, value: Any, players) -> Any:
        """``value`` if it is allowed, else :class:`RulesError` naming the setting."""
        name = self.label or self.name
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise RulesError(f"option {self.name!r} ({name}) must be true or false", "setup")
        elif self.kind == "choice":
            if not any(value == c and type(value) is type(c) for c in self.choices):
                raise RulesError(f"option {self.name!r} ({name}) must be one of "
                                 f"{list(self.choices)}", "setup")
        elif self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int) or (
                    self.minimum is not None and value < self.minimum) or (
                    self.maximum is not None and value > self.maximum):
                raise RulesError(f"option {self.name!r} ({name}) must be a whole number"
                                 f"{self._bounds()}", "setup")
        elif self.kind == "player":
            if value is None and self.default is None:
                return value
            if value not in list(players):
                raise RulesError(f"option {self.name!r} ({name}) must name a player", "setup")
        return value

    def _bounds(self) -> str:
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f" from {lo} to {hi}"
        if lo is not None:
            return f" >= {lo}"
        return f" <= {hi}" if hi is not None else ""

    def to_json(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "default": self.default,
               "label": self.label or self.name.replace("_", " "), "rule": self.rule,
               "help": self.help, "assumed": self.assumed}
        if self.kind == "choice":
            labels = self.choice_labels or tuple(str(c) for c in self.choices)
            out["choices"] = [{"value": v, "label": lab} for v, lab in zip(self.choices, labels)]
        if self.kind == "int":
            out["minimum"], out["maximum"] = self.minimum, self.maximum
        return out


@dataclass(frozen=True)
class RaceReason:
    """A race a game asks for, as data: what the page calls it and how it
    words each verdict. Templates take ``{winner}``, ``{loser}``,
    ``{tied}`` (names joined with "and") and the race request's ``info``
    keys (``{card}``...).

    >>> RaceReason("chope", "first-press", "Chope!", winner="{winner} chopes the {card}").word(
    ...     {"winner": "Bo"}, {"card": "Red Table"})
    'Bo chopes the Red Table'
    """

    name: str
    kind: str
    title: str
    announced: bool = False
    winner: str = "{winner} wins"
    loser: str = "{loser} loses"
    tie: str = "Tie: {tied}"
    nobody: str = "Nobody"
    false_start: str = "false start"
    ineligible: str = "pressed out of turn"
    help: str = ""
    #: what a press out of turn costs, said in the log's line after the verdict
    #: (``{names}``: who pressed); empty: the ``ineligible`` label and the names
    penalty: str = ""

    def word(self, verdict: dict, info: dict | None = None) -> str:
        """The verdict as one line of the page."""
        fields = {k: str(v) for k, v in (info or {}).items()}
        fields.update(winner=verdict.get("winner") or "", loser=verdict.get("loser") or "",
                      tied=" and ".join(verdict.get("tied") or []))
        if verdict.get("winner"):
            template = self.winner
        elif verdict.get("loser"):
            template = self.loser
        elif verdict.get("tied"):
            template = self.tie
        else:
            template = self.nobody
        try:
            return template.format_map(_Blank(fields))
        except (ValueError, IndexError):
            return template

    def penalties(self, verdict: dict) -> list[str]:
        """What the verdict's penalties cost, one line each: the presses out
        of turn (:attr:`penalty`, else :attr:`ineligible` and the names),
        then the false starts (:attr:`false_start` and the names)."""
        out = []
        out_of_turn = ", ".join(verdict.get("ineligible") or [])
        if out_of_turn:
            out.append(self.penalty.format_map(_Blank(names=out_of_turn)) if self.penalty
                       else f"{self.ineligible}: {out_of_turn}")
        early = ", ".join(verdict.get("false_starts") or [])
        if early:
            out.append(f"{self.false_start}: {early}")
        return out

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "title": self.title,
                "announced": self.announced, "winner": self.winner, "loser": self.loser,
                "tie": self.tie, "nobody": self.nobody, "false_start": self.false_start,
                "ineligible": self.ineligible, "help": self.help, "penalty": self.penalty}


class _Blank(dict):
    def __missing__(self, key):
        return ""


class Game(ABC):
    """One game's rules. Instances hold no per-game state; states are values."""

    name: ClassVar[str]          # "chope": the id used in files and URLs
    title: ClassVar[str]         # "Chope!": what people read
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    hides_scores: ClassVar[bool] = False   # True: the scoreboard shows counts only
    #: every option, declared as data (see :class:`Setting`)
    settings: ClassVar[tuple[Setting, ...]] = ()
    #: the races this game asks the buzzers for, by reason (see :class:`RaceReason`)
    race_reasons: ClassVar[tuple[RaceReason, ...]] = ()
    #: what a score counts, for the page ("points", "cards")
    score_unit: ClassVar[str] = "points"
    #: True when some information is private to one player (a hand, a secret card):
    #: the game then has a :meth:`private_view` and player pages show it
    hidden_information: ClassVar[bool] = False
    #: per event type, what JSON type each key takes (see :mod:`.shapes`):
    #: :meth:`apply` refuses a wrong type before the rules see the event;
    #: ``race`` (the verdict) is declared for every game
    event_shapes: ClassVar[dict[str, dict]] = {}

    # -- description ----------------------------------------------------
    def info(self) -> dict:
        """The game described as data for the page and the API: its settings,
        race reasons, score unit and player counts."""
        return {"name": self.name, "title": self.title, "min_players": self.min_players,
                "max_players": self.max_players, "hides_scores": self.hides_scores,
                "score_unit": self.score_unit, "hidden_information": self.hidden_information,
                "settings": [s.to_json() for s in self.settings],
                "race_reasons": {r.name: r.to_json() for r in self.race_reasons}}

    def race_reason(self, name: str) -> RaceReason:
        """The declared :class:`RaceReason` called ``name`` (a plain one if undeclared)."""
        for r in self.race_reasons:
            if r.name == name:
                return r
        return RaceReason(name, "first-press", name.replace("-", " ").capitalize())

    # -- setup ----------------------------------------------------------
    def default_options(self) -> dict:
        """Options and their defaults (component counts, variants, house rules):
        the declared :attr:`settings`."""
        return {s.name: copy.deepcopy(s.default) for s in self.settings}

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
        for setting in self.settings:
            setting.check(opts[setting.name], players)
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
        self.check_shape(event)
        return self._apply(self.copy_state(state), event)

    def check_shape(self, event: dict) -> dict:
        """``event`` if its keys have the JSON types :attr:`event_shapes`
        declares for its type (and a race's those of a verdict), else
        :class:`RulesError` (400 on the web) before the rules see it."""
        return check_shape({"race": RACE, **self.event_shapes}, event)

    def copy_state(self, state: Any) -> Any:
        """The private copy :meth:`apply` hands to :meth:`_apply`: a deep copy.
        A game may share the parts of its state that never change after
        setup (component data, house rules), e.g. through ``copy.deepcopy``'s
        memo, when copying them dominates the time an event takes."""
        return copy.deepcopy(state)

    @abstractmethod
    def _apply(self, state: Any, event: dict) -> Any:
        """Apply ``event`` to ``state`` (a private copy: mutate freely)."""

    def legal_events(self, state: Any) -> list[dict]:
        """Every event the host may log now, fully formed, so the console can
        offer only legal buttons: the race outcomes while a race is pending
        (:meth:`race_outcomes`), else the decisions and the chance outcomes."""
        if self.finished(state):
            return []
        if self.race_request(state) is not None:
            return self.race_outcomes(state)
        return self.decisions(state) + [e for e, _ in self.chance_outcomes(state)]

    def decisions(self, state: Any) -> list[dict]:
        """The players' (or the host's) choices now, fully formed: stop, keep
        a card, move a bottle, cook a dish. Not chance, not race verdicts."""
        return []

    def chance_outcomes(self, state: Any) -> list[tuple[dict, Fraction]]:
        """OpenSpiel's chance node: when the table's next step is chance (a
        card drawn, a die rolled, a chip from the bag), every event that can
        come with its exact probability (they sum to 1), from what is left
        unseen; empty otherwise. The table supplies the outcome that really
        came; this only says what could."""
        return []

    def chance_probability(self, state: Any, test: Callable[[dict], bool]) -> Fraction | None:
        """The chance that the next chance outcome satisfies ``test`` (None
        when the next step is not chance). Odds such as Chope!'s bust odds."""
        outcomes = self.chance_outcomes(state)
        if not outcomes:
            return None
        return sum((p for e, p in outcomes if test(e)), Fraction(0))

    #: the event types that put a new card (or die roll) on the table: one
    #: logged while an unannounced race is open ends that race's presses
    #: (later ones are the new card's); a choice or a "stop" does not
    draw_types: tuple[str, ...] = ("flip", "draw", "reveal", "roll")
    #: the event type of one player's own card when everyone turns a card at
    #: once onto a spot in front of her (``{"type": ..., "player": ..., "card":
    #: ...}``, offered by :meth:`host_events`); None: cards come from one pile.
    #: The camera tells such cards apart by the spot they lie on
    #: (companion/camera/seats.py).
    seat_draw: str | None = None

    def is_draw(self, event: dict) -> bool:
        """Whether ``event`` puts a new card on the table (see :attr:`draw_types`)."""
        return isinstance(event, dict) and event.get("type") in self.draw_types

    def race_request(self, state: Any) -> RaceRequest | None:
        """The race the buzzers must settle next, if any."""
        return None

    def race_outcomes(self, state: Any) -> list[dict]:
        """A representative set of verdicts the referee can give the pending
        race, as ``race`` events: each possible winner (or loser), a tie,
        nobody, with false starts and presses by players out of the race.
        Every game must accept each of them (the conformance test plays them)."""
        req = self.race_request(state)
        if req is None:
            return []
        eligible = list(req.eligible)
        others = [p for p in (req.players or ()) if p not in eligible]
        key = "winner" if req.kind == "first-press" else "loser"

        def verdict(who=None, tied=(), false_starts=(), ineligible=()):
            ev = {"type": "race", "reason": req.reason, "winner": None, "loser": None,
                  "tied": list(tied), "false_starts": list(false_starts),
                  "ineligible": list(ineligible)}
            ev[key] = who
            return ev

        out = [verdict(p) for p in eligible] + [verdict()]
        if len(eligible) >= 2:
            out.append(verdict(tied=eligible[:2]))
            out.append(verdict(eligible[0], false_starts=eligible[-1:]))
        if len(eligible) > 2:
            out.append(verdict(tied=eligible))
        if eligible:
            out.append(verdict(false_starts=eligible[:1]))
        for p in others:
            out.append(verdict(ineligible=[p]))
            if eligible:
                out.append(verdict(eligible[-1], ineligible=[p]))
        if len(others) >= 2:
            out.append(verdict(ineligible=others))
        return out

    def check_race(self, state: Any, event: dict,
                   absent: str = "did not take part in this race") -> tuple:
        """The pending race's verdict in ``event``, checked against the race
        request (:func:`check_verdict`); returns ``(request, winner, loser,
        tied, false_starts, ineligible)``. ``absent`` words the refusal of a
        name that was not in the race ("turned no card over this round")."""
        req = self.race_request(state)
        if req is None:
            raise RulesError("no race is under way", "race")
        if event.get("reason", req.reason) != req.reason:
            raise RulesError(f"the race under way is {req.reason!r}, not "
                             f"{event.get('reason')!r}", "race")
        return (req, *check_verdict(event, req.kind, req.players or req.eligible, req.eligible,
                                    absent=absent))

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

    # -- the host console -----------------------------------------------
    def host_view(self, state: Any) -> dict:
        """What the host console shows; by default the public view. The host
        is usually a player too: no hand belongs here."""
        return self.public_view(state)

    def host_events(self, state: Any) -> list[dict]:
        """The events the console offers as buttons: by default
        :meth:`legal_events`. A game with hidden hands overrides it to offer
        moves only as far as *public* information allows and draws without
        their cards (Hawker Wars), so the console never shows a hand by
        listing what could be made from it; the tracker still refuses what
        the real, logged hand cannot do."""
        return self.legal_events(state)

    #: Most outcomes "Roll for us" offers to draw (two dice summed give 11).
    max_roll_outcomes: ClassVar[int] = 12

    def roll_offer(self, state: Any) -> dict | None:
        """What "Roll for us" may draw for the table now, or None.

        By default only when the next step is chance alone (no decision open,
        no race waiting), every outcome has one type and differs from the
        others in one field only, that field is a number (a die's face, not
        a card: a table that has its deck or bag draws its own, and an
        invented card would leave the tracker disagreeing with the table),
        there are 2 to :attr:`max_roll_outcomes` of them, and each is an
        event the console offers anyway (:meth:`host_events`).
        ``{"type", "field", "outcomes": [{"event", "value", "p"}]}``, ``p``
        as a fraction in text ("1/6"). A game may narrow it (return None)."""
        try:
            if self.finished(state) or self.decisions(state) or self.race_request(state):
                return None
            outcomes = list(self.chance_outcomes(state) or [])
        except Exception:  # noqa: BLE001 - a tracker bug must not break the console
            log.exception("%s: could not list its chance outcomes", self.name)
            return None
        if not 2 <= len(outcomes) <= self.max_roll_outcomes:
            return None
        events = [e for e, _ in outcomes]
        if not all(isinstance(e, dict) for e in events) or \
                len({e.get("type") for e in events}) != 1 or len({frozenset(e) for e in events}) != 1:
            return None
        varying = [k for k in events[0] if len({repr(e[k]) for e in events}) > 1]
        if len(varying) != 1:
            return None
        field = varying[0]
        if any(isinstance(e[field], bool) or not isinstance(e[field], int) for e in events):
            return None
        probs = [Fraction(p) for _, p in outcomes]
        if any(p <= 0 for p in probs) or sum(probs) != 1:
            return None
        offered = self.host_events(state)
        if any(e not in offered for e in events):
            return None
        return {"type": events[0]["type"], "field": field,
                "outcomes": [{"event": e, "value": e[field], "p": str(p)}
                             for e, p in zip(events, probs)]}

    def roll_for_us(self, state: Any, rng=None) -> dict | None:
        """"Roll for us": one outcome of :meth:`roll_offer` (``{"event",
        "value", "p"}``) drawn by its probability with ``rng`` (default: the
        operating system's randomness), or None when there is nothing to
        roll. The state is not touched: the caller logs ``["event"]`` like
        the roll the host would have seen."""
        offer = self.roll_offer(state)
        return None if offer is None else draw_outcome(offer, rng or _system_random)

    # -- a player's private page ------------------------------------------
    def private_view(self, state: Any, player: str) -> dict:
        """What only ``player`` may see (their hand, their secret card): shown
        on that player's private page, never on a public one (set
        :attr:`hidden_information`). The page draws it with the private
        panel of the game's page script, ``private(container, view,
        snapshot)`` in ``static/games/<name>.js`` (Chope!'s My Favourite
        card, Tropichaos's hand); without one, generically: a ``hand`` list
        as card chips, ``unknown`` as "?" chips, the other keys as a list."""
        return {}

    def private_events(self, state: Any, player: str) -> list[dict]:
        """Events ``player`` may log from their own page (the cards they
        drew), fully formed; by default none. Each button shows the secret
        part of the event (what :meth:`public_event` strips) and the
        tracker's :meth:`describe` line."""
        return []

    def public_event(self, event: dict) -> dict:
        """``event`` as every phone may see it (the live update's ``event``):
        by default the whole event; a game with secret events strips them."""
        return event

    def complete(self, state: Any, event: dict) -> dict:
        """``event`` as the tracker reads it in ``state``: the keys it would
        take from the state when they are left out, filled in (the log keeps
        and shows the completed event, never "None draws"). By default a
        race verdict's ``reason``, from the race the game asks for."""
        if isinstance(event, dict) and event.get("type") == "race" and "reason" not in event:
            req = self.race_request(state)
            if req is not None:
                return {"type": "race", "reason": req.reason,
                        **{k: v for k, v in event.items() if k != "type"}}
        return event

    def describe(self, event: dict) -> str:
        """A short human line for the log."""
        return " ".join(f"{k}={v}" for k, v in event.items() if k != "edges")

    def check_invariants(self, state: Any) -> None:
        """Raise AssertionError if the state breaks a conservation law
        (every card in exactly one place). Used by the conformance tests."""


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists; anything else is taken
    as immutable and shared): several times faster than ``copy.deepcopy``
    for a tracker's state, which is copied on every event."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


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


def check_verdict(event: dict, kind: str, players, eligible,
                  absent: str = "did not take part in this race") -> tuple:
    """The race outcome of a ``race`` event, checked for the shape the
    referee gives a race of ``kind``; returns ``(winner, loser, tied,
    false_starts, ineligible)`` or raises :class:`RulesError`.

    A ``first-press`` race has a winner or a tie (two or more eligible
    players), never a loser; a ``last-press`` or ``first-release`` race has
    a loser or a tie, never a winner. A false starter may still win: the
    referee lets one back in only under its lockout setting.
    """
    players, eligible = list(players), set(eligible)
    tied, false_starts, ineligible = (verdict_names(event, k, players, absent)
                                      for k in ("tied", "false_starts", "ineligible"))
    winner, loser = event.get("winner"), event.get("loser")
    decisive, other = ("winner", "loser") if kind == "first-press" else ("loser", "winner")
    if event.get(other) is not None:
        raise RulesError(f"a {kind} race has a {decisive}, never a {other}", "race")
    who = winner if kind == "first-press" else loser
    if who is not None:
        if who not in players:
            raise RulesError(f"{who!r} {absent}", "race")
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


def draw_outcome(offer: dict, rng=_system_random) -> dict:
    """One outcome of ``offer`` (see :meth:`Game.roll_offer`) drawn by its
    probability, exactly: the fractions are put on one denominator and one
    whole number below it is drawn uniformly (``rng.randrange``)."""
    probs = [Fraction(o["p"]) for o in offer["outcomes"]]
    denominator = math.lcm(*(p.denominator for p in probs))
    ticket = rng.randrange(denominator)
    for o, p in zip(offer["outcomes"], probs):
        share = p.numerator * (denominator // p.denominator)
        if ticket < share:
            return o
        ticket -= share
    raise AssertionError("the probabilities do not add up to 1")  # checked by roll_offer


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
