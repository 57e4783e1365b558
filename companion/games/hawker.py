"""Hawker Wars (SYNT Studio): cook hawker dishes from a hidden hand of ingredients.

Each player runs a hawker stall. On a turn: play any Event on top of the
Action pile (Food Poisoning: everyone holds their buzzer; the *first to let
go* loses 2 cards), draw 2 Ingredients and 1 Action, then up to 2 of COOK,
ACTION, TRADE. A cook matches an open Dish's ingredients (Wildcards stand in;
Rojak takes any 5) and scores its points, +1 for a dish of one's own stall.
The first to the target (2 players 15, 3: 13, 4: 11) wins.

Card ids: Ingredients ``meat-seafood``, ``rice-noodles``, ``water``,
``spices``, ``egg``, ``flour``, ``chili``, ``wildcard``; Actions
``price-inflation``, ``family-recipe``, ``copycat-stall``,
``licence-suspended``; the Event ``food-poisoning``; Dishes ``you-tiao``,
``fish-head-curry``, ``nasi-lemak``, ``ma-la-xiang-guo``, ``rojak``; stalls
``chinese``, ``indian``, ``malay``, ``international``. A group of cards is a
list of ids (``["egg", "water"]``) or a count per id (``{"water": 2}``).

Events::

    {"type": "choose_stall", "player": "ana", "stall": "malay"}     # setup
    {"type": "dish", "card": "nasi-lemak"}          # a Dish turned face up (setup, refill)
    {"type": "market", "card": "egg"}               # setup: an Ingredient into the Black Market
    {"type": "draw", "player": "ana", "pile": "ingredient", "cards": ["egg", "water"]}
    {"type": "draw", "player": "ana", "pile": "ingredient", "count": 2}   # cards not logged
    {"type": "event_check", "event": "food-poisoning"}   # top of the Action pile; null: no Event
    {"type": "race", "reason": "food-poisoning", "loser": "bo", "winner": null, "tied": [], ...}
    {"type": "lose", "player": "bo", "cards": ["egg", "price-inflation"]}
    {"type": "cook", "dish": "nasi-lemak", "cards": ["meat-seafood", "rice-noodles", "wildcard"]}
    {"type": "play", "card": "price-inflation", "target": "bo"}
    {"type": "play", "card": "copycat-stall", "target": "bo"}
    {"type": "play", "card": "family-recipe", "dish": "you-tiao", "cards": ["egg", "egg", "chili"]}
    {"type": "trade", "give": ["egg", "water"], "take": "chili"}
    {"type": "stop", "player": "bo"}                # Licence Suspended on the action (or Stop) in play
    {"type": "resolve"}                             # no (more) Stop: the action in play takes effect
    {"type": "reshuffle", "keep": ["egg", "egg", "water"]}   # Ingredient pile ran out
    {"type": "end_turn"}
    {"type": "discard", "cards": ["water", "spices"]}        # down to 10 cards at the end of the turn

**Hidden hands.** A hand is hidden, so the tracker keeps, per hand, its size
(Ingredients and Actions), the cards it *knows* are in it, and the cards the
*whole table* knows are in it (one taken from the Black Market); every card
whose place the tracker does not know is in an *unseen* pool. Option
``draws`` chooses how a draw is logged:

* ``"private"`` (default): each player logs the cards they drew on their own
  private page (``private_events``): ``{"type": "draw", ..., "cards": [...]}``.
  The tracker then knows every hand and checks each cook, trade, play, Stop,
  discard and loss against the hand as its owner logged it. The scoreboard
  and the live update see the draw as ``{"type": "draw", "player", "pile",
  "count"}`` (``public_event``). The host console offers, for a draw, only
  that cardless form (a fallback when a player cannot log: those cards then
  count as unknown) and, for moves, what *public* information allows, so the
  console never shows a hand; a move the mover's logged hand cannot make is
  refused.
* ``"public"``: nobody logs private draws; the host logs each draw with its
  ``count`` only. The tracker follows what the table sees (hand sizes, the
  cards a cook, trade, play, discard or loss reveals, the Black Market, the
  cooked dishes) and checks what that allows: enough cards in hand, and
  revealed cards still possible given the unseen pool (a fourth Wildcard is
  refused).

**Whose knowledge checks a claim.** An event is a claim by one player, and
it is checked only against what *that player* can know: the public
information plus their own hand as they logged it. A draw with cards is the
drawer's claim; a cook, play, trade or discard the mover's; a Stop its
player's; a Food Poisoning loss the chooser's (the loser, or with
``poisoning_chooser: "left"`` the neighbour who picks blind from a hand they
cannot see). So a player's page never gets a refusal, nor a list of offers,
that depends on another player's hidden cards: probing with draws that are
then refused would otherwise tell them what the others hold. A claim that is
possible from the claimant's side but clashes with what the tracker knows of
another hand (someone mis-logged) is *accepted* and recorded as a **fault**,
for the host only (``host_view``): ``"faults"`` lists each such event (turn,
its public form, what clashed) and ``"inconsistent"`` each card id logged
in more places than the game has copies (the *over-count*: "Wildcard, 4
logged, 3 in the game"), so the host can sort it out at the table (undo the
wrong log, or play on). When a clash means the tracker's record of a hand
or of the reshuffled Ingredient pile cannot be right (a blind pick the
logged hand does not hold), it forgets that record down to what the table
saw; the cards stay counted. Conservation then reads: every card is in
exactly one place *counted by kind* (Ingredients, Actions, Events: sizes
never clash), and each card id is placed no more often than it has copies
except by an over-count a recorded fault names (``check_invariants``).
The tracker cannot tell which screen logged an event, so one channel is
left to the host console (whose operator may be a player): it may log a move
(or a carded draw) for a player, and a refusal then says what that player's
own logged hand rules out.

``chance_outcomes`` gives exact probabilities from what the tracker knows:
the next Dish, the top of the Action pile (Event or not), and the cards of a
draw (``"private"``; with ``"public"`` the cardless draw, probability 1).
Events never enter a hand (they are played from the top of the pile), so the
Event odds on the scoreboard are public and exact.

An action (COOK, an Action card, TRADE) is *in play* until the host logs
``resolve`` or any other event: until then anyone may play Licence Suspended
on it (``stop``), and on that Stop, and so on.

**Steps with one outcome take no tap.** The tracker takes by itself, from
public information only: the resolve of an action nobody at the table can
stop (nobody else may hold a Licence Suspended), the Event check when a draw
of the turn is logged first (no Event was on top) or when no Event can be
on top, the one Dish a refill can turn up, the last stall for the last
player. Each is kept in ``auto`` until the next event: logged anyway, it is
the same step, accepted once (never "cannot ... now"). Rule readings and
settings are in docs/rules-notes.md (Hawker Wars).

>>> g = HawkerWars()
>>> s = g.setup(["ana", "bo"])
>>> s = g.apply(s, {"type": "choose_stall", "player": "ana", "stall": "malay"})
>>> s = g.apply(s, {"type": "choose_stall", "player": "bo", "stall": "chinese"})
>>> g.public_view(s)["pending"]["kind"]
'dish'
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from math import comb
from pathlib import Path

from .base import Game, RaceReason, RaceRequest, RulesError, Setting, rank_by

DATA = json.loads((Path(__file__).parent / "data" / "hawker.json").read_text())
STALLS = DATA["stalls"]
INGREDIENTS = tuple(DATA["ingredients"])
ACTIONS = tuple(DATA["action_cards"])
EVENT_CARDS = tuple(DATA["event_cards"])
DISHES = DATA["dishes"]
STOP, INFLATION, FAMILY, COPYCAT = ("licence-suspended", "price-inflation", "family-recipe",
                                     "copycat-stall")
WILD = "wildcard"
ORDER = {c: i for i, c in enumerate(INGREDIENTS + ACTIONS + EVENT_CARDS)}
NAMES = {**{k: v["name"] for k, v in DATA["ingredients"].items()},
         **{k: v["name"] for k, v in DATA["action_cards"].items()},
         **{k: v["name"] for k, v in DATA["event_cards"].items()},
         **{k: v["name"] for k, v in DISHES.items()},
         **{k: v["name"] for k, v in STALLS.items()}}
TARGETS = {int(k): v for k, v in DATA["targets"].items()}
#: Every card and stall as the page names it (``TC.cardName``).
CARDS = {k: {"name": v, "kind": "stall" if k in STALLS else "dish" if k in DISHES else (
    "ingredient" if k in DATA["ingredients"] else "event" if k in DATA["event_cards"]
    else "action")} for k, v in NAMES.items()}
HAND_LIMIT = DATA["hand_limit"]
PER_TURN = DATA["actions_per_turn"]
#: At most this many cooks (per dish and way), discards or losses are listed:
#: Rojak and Family Recipe take *any* cards, and a hand the table cannot see
#: may hold almost anything; the rest stay legal, just unlisted.
MAX_LISTED = 40
#: A player's own page lists more: it knows its own hand, and its move
#: composer offers each card only if some listed group still takes it.
PLAYER_LISTED = 400
#: The referee's safety deadline for a hold that lasts "for a turn".
TURN_HOLD_MS = 600_000

EVENTS = ("choose_stall", "dish", "market", "draw", "event_check", "race", "lose", "cook",
          "play", "trade", "stop", "resolve", "reshuffle", "end_turn", "discard")


KIND = {**dict.fromkeys(INGREDIENTS, "ingredient"), **dict.fromkeys(ACTIONS, "action"),
        **dict.fromkeys(EVENT_CARDS, "event")}


def kind_of(card: str) -> str:
    """``"ingredient"``, ``"action"`` or ``"event"``."""
    return KIND[card]


def name(card) -> str:
    return NAMES.get(card, str(card))


def n_cards(n: int, what: str = "") -> str:
    """"1 card", "2 Ingredient cards": a count in plain English, each form a
    message of its own (the French puts the kind after: "2 cartes Ingredient")."""
    if what:
        return f"{n} {what} card" if n == 1 else f"{n} {what} cards"
    return f"{n} card" if n == 1 else f"{n} cards"


def _add(d: dict, k: str, n: int = 1) -> None:
    d[k] = d.get(k, 0) + n
    if not d[k]:
        del d[k]


def _plus(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, n in b.items():
        _add(out, k, n)
    return out


def _minus(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, n in b.items():
        _add(out, k, -n)
    return out


def cards_list(counts: dict) -> list[str]:
    """A count per card as a sorted list of ids (the events' canonical form)."""
    return [k for k in sorted(counts, key=ORDER.get) for _ in range(counts[k])]


def _words(counts: dict) -> str:
    return ", ".join(f"{n} {name(k)}" if n > 1 else name(k)
                     for k, n in sorted(counts.items(), key=lambda kv: ORDER.get(kv[0]))) \
        or "nothing"


def parse_cards(value, allowed, what: str) -> dict:
    """A group of cards given as a list of ids or a count per id, checked:
    a count per id, or RulesError naming the problem."""
    if isinstance(value, list):
        if not all(isinstance(c, str) for c in value):
            raise RulesError(f"{what} must list card ids", "format")
        counts: dict = {}
        for c in value:
            _add(counts, c)
    elif isinstance(value, dict):
        counts = {}
        for c, n in value.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise RulesError(f"{what}: the count of {c!r} must be a whole number >= 0",
                                 "format")
            if n:
                counts[c] = n
    else:
        raise RulesError(f"{what} must be a list of card ids", "format")
    wrong = [c for c in counts if c not in allowed]
    if wrong:
        raise RulesError(f"{what}: {', '.join(map(repr, wrong))} is not one of "
                         f"{', '.join(allowed)}", "components")
    return counts


def recipe_fits(dish: str, cards: dict, extra: int, any_n: int | None = None) -> str | None:
    """Why ``cards`` cannot cook ``dish`` (None if they can). ``extra``: the
    extra ingredients Price Inflation asks for; ``any_n``: Family Recipe's
    "any 3 ingredients". Wildcards stand in for any ingredient."""
    size = sum(cards.values())
    info = DISHES[dish]
    if any_n is not None or "any" in info:
        n = any_n if any_n is not None else info["any"]
        if size != n + extra:
            more = f" + {extra} for Price Inflation" if extra else ""
            how = "Family Recipe cooks with any" if any_n is not None else \
                f"{info['name']} is cooked with any"
            return f"{how} {n} ingredients{more}: {size} given"
        return None
    need = {}
    for k in info["ingredients"]:
        _add(need, k)
    if size != len(info["ingredients"]) + extra:
        more = f" plus {extra} extra for Price Inflation" if extra else ""
        return (f"{info['name']} takes {len(info['ingredients'])} ingredients "
                f"({_words(need)}){more}: {size} given")
    missing = sum(max(0, n - cards.get(k, 0)) for k, n in need.items())
    if missing > cards.get(WILD, 0):
        return (f"{info['name']} needs {_words(need)}; {_words(cards)} is missing "
                f"{missing - cards.get(WILD, 0)} (a Wildcard stands in for any one)")
    return None


def _multisets(kinds, size, cap, budget, pool):
    """Every count-per-kind of ``size`` cards where each kind k is at most
    ``cap[k]`` plus what the unknown ``budget`` can bring from ``pool``:
    the card groups a hand may hold (kinds in order)."""
    pool = {k: n for k, n in pool.items() if n > 0}     # an over-count (a fault) offers none
    kinds = [k for k in kinds if cap.get(k, 0) or (budget and pool.get(k, 0))]
    out = []

    def rec(i, left, bud, acc):
        if not left:
            out.append(dict(acc))
            return
        if i == len(kinds):
            return
        k = kinds[i]
        known = cap.get(k, 0)
        top = min(left, known + min(bud, pool.get(k, 0)))
        for n in range(top, -1, -1):
            if n:
                acc[k] = n
            rec(i + 1, left - n, bud - max(0, n - known), acc)
            acc.pop(k, None)

    rec(0, size, budget, {})
    return out


def _copy(obj):
    """A deep copy of plain JSON-like data (dicts, lists, scalars)."""
    if type(obj) is dict:
        return {k: _copy(v) for k, v in obj.items()}
    if type(obj) is list:
        return [_copy(v) for v in obj]
    return obj


class HawkerState(dict):
    """The game state: a plain dict of JSON-like data that copies itself
    fast (every event is applied to a copy, and hands change often)."""

    def __deepcopy__(self, memo):
        return HawkerState(_copy(dict(self)))


class HawkerWars(Game):
    """The Hawker Wars rules tracker (see the module docstring for the events)."""

    name = "hawker"
    title = "Hawker Wars"
    min_players = 2
    max_players = 4
    hidden_information = True
    #: what JSON type each key of each event takes (checked before the rules)
    event_shapes = {
        "choose_stall": {"player": "str", "stall": tuple(STALLS)},
        "dish": {"card": "str"}, "market": {"card": "str"},
        "draw": {"player": "str", "pile": ("ingredient", "action"), "cards": "cards?",
                 "count": "int"},
        "event_check": {"event": "str?"}, "lose": {"player": "str", "cards": "cards"},
        "cook": {"dish": "str", "cards": "cards"},
        "play": {"card": "str", "target": "str", "dish": "str", "cards": "cards"},
        "trade": {"give": "cards", "take": "str"}, "stop": {"player": "str"},
        "resolve": {}, "reshuffle": {"keep": "cards"}, "end_turn": {},
        "discard": {"cards": "cards"}}
    score_unit = "points"

    settings = (
        Setting("starting_player", None, "player", label="Starting player",
                rule="The player who last visited a hawker center starts first.",
                help="Default: the first player listed."),
        Setting("draws", "private", "choice", ("private", "public"), label="Who logs draws",
                rule="Each player ... starts with 4 Ingredient cards and 1 Action card on hand.",
                help="A hand is hidden: players log their own draws on their private page, "
                     "or nobody does and the tracker follows public information only.",
                choice_labels=("Players log their own draws (checked hands)",
                               "Nobody logs draws (public information only)")),
        Setting("actions", dict(DATA["actions"]), "data", assumed=True,
                label="Action cards (not Events)",
                rule="25 Action Cards. The Action cards are marked with one of five card "
                     "types: Attack, Gain, Swap, Stop and Event.",
                help="ASSUMED: 20 Actions + the 5 Events make the 25; Price Inflation 6, "
                     "Family Recipe 6, Copycat Stall 4 are a guess; Licence Suspended 4 is "
                     "the FAQ's."),
        Setting("events", dict(DATA["events"]), "data", assumed=True, label="Event cards",
                rule="5 Event Cards ... The component panel shows the Food Poisoning card as "
                     "the Event card example.",
                help="ASSUMED: all 5 Events are Food Poisoning, the only Event described."),
        Setting("event_shuffle", "random", "choice", ("random", "stacks"),
                label="Events shuffled in",
                rule="shuffle Event cards evenly in the Action draw pile",
                choice_labels=("Shuffled in at random",
                               "One Event in each of equal stacks, top stacks larger")),
        Setting("repeat_actions", True, "bool", label="The same action twice in a turn",
                rule="Then, play up to 2 of the following actions: COOK ... ACTION ... TRADE"),
        Setting("family_recipe_actions", 1, "choice", (1, 2),
                label="Actions a Family Recipe cook uses",
                rule="Family Recipe (Gain): Play with any 3 ingredients on hand to cook any "
                     "dish.",
                choice_labels=("1 (the card is the action)", "2 (ACTION and COOK)")),
        Setting("copycat_bonus", "kept", "choice", ("kept", "follows"),
                label="Stall bonus after Copycat Stall",
                rule="Copycat Stall (Swap): Swop your Hawker card with another player.",
                choice_labels=("Bonus points already earned are kept",
                               "Every cooked dish scores the bonus of the stall held now")),
        Setting("inflation_stacks", True, "bool", label="Price Inflations add up",
                rule="Price Inflation (Attack): Target hawker has to cook with 1 extra "
                     "ingredient for the next dish they cook."),
        Setting("stop_trade", "market", "choice", ("market", "undone", "no"),
                label="A stopped TRADE",
                rule="Licence Suspended (Stop): Stop a player's action. Can be played anytime.",
                choice_labels=("Given Ingredients go to the Black Market, nothing taken",
                               "The trade does not happen, cards back in hand",
                               "A TRADE cannot be stopped")),
        Setting("poisoning_hold", "turn", "choice", ("turn", "seconds"),
                label="Food Poisoning hold lasts",
                rule="All players to hold their stomach with 1 hand for a turn.",
                choice_labels=("Until the end of the turn", "A set time (poisoning_seconds)")),
        Setting("poisoning_seconds", 20, "int", minimum=1, maximum=600,
                label="Food Poisoning hold, seconds",
                rule="All players to hold their stomach with 1 hand for a turn.",
                help="Used when the hold lasts a set time."),
        Setting("poisoning_loss", "discard", "choice", ("discard", "box"),
                label="Where Food Poisoning's 2 cards go",
                rule="First player to let go loses 2 cards from their hand.",
                choice_labels=("Ingredients to the Black Market, Actions to the discard pile",
                               "Out of the game")),
        Setting("poisoning_chooser", "loser", "choice", ("loser", "left"),
                label="Who picks the 2 cards lost",
                rule="First player to let go loses 2 cards from their hand.",
                choice_labels=("The loser chooses", "The player on the loser's left draws "
                               "them blind")),
    )

    race_reasons = (
        RaceReason("food-poisoning", "first-release", "Food Poisoning!", announced=True,
                   loser="{loser} let go first and loses {stake} cards",
                   tie="{tied} let go together: nobody loses cards",
                   nobody="Everyone held on: nobody loses cards",
                   help="Everyone holds their buzzer like a stomach; the first to let go "
                        "loses 2 cards. Not holding at GO is letting go at GO."),
    )

    # -- setup ----------------------------------------------------------
    def _setup(self, players: list[str], options: dict) -> dict:
        rules = {s.name: options[s.name] for s in self.settings
                 if s.name not in ("actions", "events", "starting_player")}
        actions = self._counts_option(options["actions"], ACTIONS, "actions")
        events = self._counts_option(options["events"], EVENT_CARDS, "events")
        total = {k: v["copies"] for k, v in DATA["ingredients"].items()}
        total.update(actions)
        total.update(events)
        start = options["starting_player"] or players[0]
        n_actions = sum(actions.values())
        if n_actions < len(players) * DATA["deal"]["action"]:
            raise RulesError(f"{n_actions} Action cards cannot deal 1 to each of "
                             f"{len(players)} players", "components")
        return HawkerState({
            "players": players, "rules": rules, "target": TARGETS[len(players)],
            "total": {k: n for k, n in total.items() if n},
            "dish_total": {k: v["copies"] for k, v in DISHES.items()},
            "start": players.index(start), "turn": players.index(start), "turn_no": 0,
            "stalls": {},
            "hands": {p: {"ingredient": 0, "action": 0, "known": {}, "public": {}}
                      for p in players},
            "ipile": {"size": sum(v["copies"] for v in DATA["ingredients"].values()),
                      "known": {}, "public": {}},
            "apile": {"size": n_actions, "events": {}, "stacks": [], "shuffled": False},
            "events_aside": {k: n for k, n in events.items() if n},
            "market": {}, "discard": {}, "box": {},
            "open": [None] * DATA["open_dishes"],
            "dish_pile": sum(v["copies"] for v in DISHES.values()),
            "cooked": {p: [] for p in players},
            "todo": [{"do": "stall"}], "used": [], "chain": None, "race": None, "loss": None,
            "inflation": {}, "winner": None, "over": None, "last": None,
            "faults": [], "overcount": {}, "auto": [],
        })

    @staticmethod
    def _counts_option(value, allowed, what) -> dict:
        if not isinstance(value, dict):
            raise RulesError(f"option {what!r} must map card ids to counts", "components")
        out = {k: 0 for k in allowed}
        for k, n in value.items():
            if k not in allowed:
                raise RulesError(f"option {what!r}: {k!r} is not one of {', '.join(allowed)}",
                                 "components")
            if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 60:
                raise RulesError(f"option {what!r}: the count of {k!r} must be a whole "
                                 "number from 0 to 60", "components")
            out[k] = n
        return out

    # -- transitions ----------------------------------------------------
    def apply(self, state, event):
        """As :meth:`Game.apply`, but a step the tracker took by itself is
        accepted when logged anyway, even once it ended the game."""
        if isinstance(event, dict) and isinstance(state, dict) and self.finished(state) and \
                any(d["type"] == event.get("type") for d in state.get("auto") or []):
            s = self.copy_state(state)
            if self._done_already(s, event):
                return s
        return super().apply(state, event)

    def _apply(self, s: dict, ev: dict) -> dict:
        t = ev["type"]
        if t not in EVENTS:
            raise RulesError(f"unknown Hawker Wars event {t!r}; known: {', '.join(EVENTS)}",
                             "events")
        if self._done_already(s, ev):       # a step the tracker took by itself, logged anyway
            return s
        s["auto"] = []
        if s["chain"] and t not in ("stop", "resolve", "race", "lose"):
            self._resolve(s, auto=True)      # nobody stopped it: it took effect
            self._settle(s)
            if self.finished(s):             # ... and ended the game: nothing more to do
                return s
        if t == "draw" and s["todo"] and s["todo"][0]["do"] == "check" and \
                s["apile"]["stacks"][0][0] > s["apile"]["stacks"][0][1]:
            # a draw before the Event check: nobody found an Event on top of the Action pile
            self._on_event_check(s, {"event": None})
            s["auto"].append({"type": "event_check", "event": None})
        if s["loss"] and t != "lose":
            loss = s["loss"]
            raise RulesError(f"{loss['player']} must first give up "
                             f"{n_cards(loss['count'])} for Food Poisoning", "food poisoning")
        if s["race"] and self._hold_blocks(s) and t != "race":
            raise RulesError("everyone is holding for Food Poisoning: log the race verdict "
                             "first", "food poisoning")
        faults = len(s["faults"])
        getattr(self, "_on_" + t)(s, ev)
        after = self._overcount(s)
        if any(n > s["overcount"].get(k, 0) for k, n in after.items()):
            self._fault(s, ev, "logged in more places than the game has cards: " +
                        self._over_words(s, after))
        s["overcount"] = after
        if len(s["faults"]) > faults:          # one record per event, with the over-count now
            merged = s["faults"][faults]
            merged["text"] = "; ".join(f["text"] for f in s["faults"][faults:])
            merged["over"] = after
            s["faults"][faults:] = [merged]
        self._settle(s)
        return s

    @staticmethod
    def _done_already(s, ev) -> bool:
        """Is ``ev`` a step the tracker took by itself since the last logged
        event (an Event check that found none, the one Dish a refill could
        turn up, the resolve of an action nobody could stop)? Then it is the
        same step, accepted and done once (and forgotten from the list)."""
        for i, done in enumerate(s.get("auto") or []):
            if done["type"] == ev["type"] and all(ev.get(k) == v for k, v in done.items()):
                s["auto"] = s["auto"][:i] + s["auto"][i + 1:]
                return True
        return False

    def _fault(self, s, ev, text: str) -> None:
        """Record that an accepted event does not fit what the tracker knows
        (someone's log is wrong): for the host, never for the player who
        logged it (see the module docstring)."""
        s["faults"].append({"turn": s["turn_no"], "event": self.public_event(dict(ev)),
                            "text": f"turn {s['turn_no']}, {self.describe(ev)}: {text}",
                            "over": {}})

    @staticmethod
    def _over_words(s, over: dict) -> str:
        return ", ".join(f"{name(k)} ({s['total'][k] + n} logged, {s['total'][k]} in the game)"
                         for k, n in sorted(over.items(), key=lambda kv: ORDER[kv[0]]))

    def _overcount(self, s) -> dict:
        """Card ids logged in more places than the game has copies of (a
        fault: two logs disagree), and by how many."""
        return {k: -n for k, n in self._pool(s, "tracker").items() if n < 0}

    # setup events
    def _on_choose_stall(self, s, ev):
        self._expect(s, "stall", "choose a stall")
        p, stall = ev.get("player"), ev.get("stall")
        if p not in s["players"]:
            raise RulesError(f"{p!r} is not playing", "setup")
        if p in s["stalls"]:
            raise RulesError(f"{p} already runs the {name(s['stalls'][p])}", "setup")
        if stall not in STALLS:
            raise RulesError(f"{stall!r} is not a Hawker stall; the stalls are "
                             f"{', '.join(STALLS)}", "components")
        if stall in s["stalls"].values():
            raise RulesError(f"the {name(stall)} is taken: each player selects a Hawker card",
                             "setup")
        s["stalls"][p] = stall
        if len(s["stalls"]) == len(s["players"]):
            todo = [{"do": "dish"}] * DATA["open_dishes"] + [{"do": "market"}] * DATA[
                "market_start"]
            for p in self._seats(s):
                todo += [{"do": "draw", "player": p, "pile": pile, "n": n, "deal": True}
                         for pile, n in DATA["deal"].items()]
            s["todo"] = copy.deepcopy(todo) + [{"do": "shuffle_events"}, {"do": "turn"}]

    def _on_dish(self, s, ev):
        self._expect(s, "dish", "turn a Dish card face up")
        card = ev.get("card")
        if card not in DISHES:
            raise RulesError(f"{card!r} is not a Dish card; the dishes are "
                             f"{', '.join(DISHES)}", "components")
        if not self._dish_unseen(s).get(card):
            raise RulesError(f"all {s['dish_total'][card]} {name(card)} cards are already "
                             "open or cooked", "components")
        s["open"][s["open"].index(None)] = card
        s["dish_pile"] -= 1
        s["todo"].pop(0)

    def _on_market(self, s, ev):
        self._expect(s, "market", "place an Ingredient in the Black Market")
        card = ev.get("card")
        self._from_ipile(s, {self._ingredient(card): 1}, 1, "public", ev)
        _add(s["market"], card)
        s["todo"].pop(0)

    # drawing
    def _on_draw(self, s, ev):
        head = s["todo"][0] if s["todo"] else {}
        if head.get("do") != "draw":
            raise RulesError(f"no draw is due now: {self._pending_words(s)}", "on each turn")
        p, pile = ev.get("player", head["player"]), ev.get("pile", head["pile"])
        item = next((d for d in self._draw_items(s) if d["player"] == p and d["pile"] == pile),
                    None)
        if item is None:
            due = " and ".join(f"{n_cards(d['n'], d['pile'].capitalize())} for {d['player']}"
                               for d in self._draw_items(s))
            raise RulesError(f"the draw due now is {due}", "on each turn")
        n = self._draw_size(s, item)
        if n == 0:
            raise RulesError("the Ingredient pile is empty: log the reshuffle first",
                             "ingredient pile")
        if "cards" in ev and ev["cards"] is not None:
            allowed = INGREDIENTS if pile == "ingredient" else ACTIONS
            cards = parse_cards(ev["cards"], allowed, f"the {pile} cards drawn")
            if sum(cards.values()) != n:
                raise RulesError(f"{p} draws {n_cards(n, pile.capitalize())} now, not "
                                 f"{sum(cards.values())}", "on each turn")
        else:
            count = ev.get("count", n)
            if count != n or isinstance(count, bool):
                raise RulesError(f"{p} draws {n_cards(n, pile.capitalize())} now, not "
                                 f"{count!r}", "on each turn")
            cards = None
        if pile == "ingredient":            # the drawer's claim, checked as they can know it
            self._from_ipile(s, cards, n, p, ev)
        else:
            self._from_apile(s, cards, p)
        hand = s["hands"][p]
        hand[pile] += n
        if cards:
            for k, m in cards.items():
                _add(hand["known"], k, m)
        item["n"] -= n
        s["todo"] = [d for d in s["todo"] if d.get("do") != "draw" or d["n"] > 0]

    def _from_ipile(self, s, cards: dict | None, n: int, view: str, ev: dict) -> None:
        """Take ``n`` cards off the Ingredient pile (their ids if logged).
        The ids are checked against what ``view`` (the one who logs them)
        knows: refused only if that view rules them out; if the tracker's
        fuller knowledge rules them out, the draw stands and is a fault."""
        pile = s["ipile"]
        if n > pile["size"]:
            raise RulesError("the Ingredient pile is empty", "ingredient pile")
        if cards is None:           # not logged: whatever the tracker knew about the pile is gone
            pile["known"], pile["public"] = {}, {}
            pile["size"] -= n
            return
        seen = pile["known"] if view == "tracker" else pile["public"]
        pool = self._pool(s, view)
        unknown_slots = pile["size"] - sum(seen.values())
        for k, m in cards.items():
            rest = m - min(m, seen.get(k, 0))
            if rest and rest > min(pool.get(k, 0), unknown_slots):
                raise RulesError(f"no {name(k)} can be in the Ingredient pile: all "
                                 f"{s['total'].get(k, 0)} are accounted for elsewhere",
                                 "components")
            unknown_slots -= rest
        known, slots = pile["known"], pile["size"] - sum(pile["known"].values())
        for k, m in cards.items():
            from_known = min(m, known.get(k, 0))
            slots -= m - from_known
            _add(known, k, -from_known)
        if view == "public":        # the whole table saw which cards left the pile
            for k, m in cards.items():
                _add(pile["public"], k, -min(m, pile["public"].get(k, 0)))
        else:
            pile["public"] = {}
        if slots < 0:               # the tracker knew the pile held other cards
            pile["known"] = dict(pile["public"])
            self._fault(s, ev, "the cards do not fit what was logged of the Ingredient pile "
                               "since the reshuffle; the tracker forgets what is left in it")
        pile["size"] -= n

    def _from_apile(self, s, cards: dict | None, view: str) -> None:
        pile = s["apile"]
        if cards:
            (k,) = cards
            if self._pool(s, view).get(k, 0) <= 0:
                raise RulesError(f"no {name(k)} can be in the Action pile: all "
                                 f"{s['total'].get(k, 0)} are accounted for elsewhere",
                                 "components")
        if pile["stacks"]:
            top = pile["stacks"][0]
            if top[0] <= top[1]:
                raise RulesError("the top card of the Action pile is an Event: log the event "
                                 "check", "event cards")
            top[0] -= 1
            if not top[0]:
                pile["stacks"].pop(0)
        pile["size"] -= 1

    def _on_event_check(self, s, ev):
        self._expect(s, "check", "check the top of the Action pile")
        card = ev.get("event")
        pile = s["apile"]
        top = pile["stacks"][0]
        if card is None:
            if top[0] <= top[1]:
                raise RulesError("the top card of the Action pile must be an Event now "
                                 "(the Events were shuffled in evenly)", "event cards")
            s["todo"].pop(0)
            return
        if card not in EVENT_CARDS or not pile["events"].get(card) or not top[1]:
            left = _words(pile["events"])
            raise RulesError(f"{card!r} cannot be on top of the Action pile (Events left in "
                             f"it: {left})", "event cards")
        _add(pile["events"], card, -1)
        top[0] -= 1
        top[1] -= 1
        if not top[0]:
            pile["stacks"].pop(0)
        _add(s["discard"], card)
        # Food Poisoning: "This card cannot be stopped. Play immediately"
        if s["race"]:               # already holding ("for a turn"): the stake grows
            s["race"]["stake"] += DATA["poisoning_loss"]
            s["race"]["events"] += 1
        else:
            s["race"] = {"stake": DATA["poisoning_loss"], "events": 1}

    def _on_race(self, s, ev):
        if not s["race"]:
            raise RulesError("no race is under way: Food Poisoning starts one", "race")
        _, _, loser, tied, _, _ = self.check_race(s, ev)
        stake = s["race"]["stake"]
        s["race"] = None
        if loser is not None:
            held = self._hand_size(s, loser)
            count = min(stake, held)
            if count:
                seats = s["players"]
                chooser = loser if s["rules"]["poisoning_chooser"] == "loser" else \
                    seats[(seats.index(loser) + 1) % len(seats)]
                s["loss"] = {"player": loser, "count": count, "chooser": chooser}

    def _on_lose(self, s, ev):
        loss = s["loss"]
        if not loss:
            raise RulesError("nobody has cards to lose now", "food poisoning")
        if ev.get("player", loss["player"]) != loss["player"]:
            raise RulesError(f"it is {loss['player']} who let go first", "food poisoning")
        cards = parse_cards(ev.get("cards"), INGREDIENTS + ACTIONS, "the cards lost")
        if sum(cards.values()) != loss["count"]:
            raise RulesError(f"{loss['player']} loses exactly {n_cards(loss['count'])} from "
                             "their hand", "food poisoning")
        self._take(s, loss["player"], cards, loss["chooser"], ev)
        self._throw(s, cards, "box" if s["rules"]["poisoning_loss"] == "box" else "discard")
        s["loss"] = None

    # the turn's actions
    def _on_cook(self, s, ev):
        p = self._actor(s, ev, "cook")
        dish = self._open_dish(s, ev.get("dish"))
        cards = parse_cards(ev.get("cards"), INGREDIENTS, "the ingredients cooked")
        why = recipe_fits(dish, cards, s["inflation"].get(p, 0))
        if why:
            raise RulesError(why, "how to cook")
        self._use_action(s, "COOK")
        self._take(s, p, cards, p, ev)
        s["chain"] = {"kind": "cook", "player": p, "dish": dish, "cards": cards, "card": None,
                      "stops": []}

    def _on_play(self, s, ev):
        p = self._actor(s, ev, "play an Action card")
        card = ev.get("card")
        if card == STOP:
            raise RulesError("Licence Suspended stops an action as it is played: log it as "
                             "'stop' while that action is in play", "licence suspended")
        if card in EVENT_CARDS:
            raise RulesError("an Event is played from the top of the Action pile, never from "
                             "a hand", "event cards")
        if card not in ACTIONS:
            raise RulesError(f"{card!r} is not an Action card", "components")
        chain = {"kind": card, "player": p, "card": card, "cards": {}, "stops": [],
                 "dish": None, "target": None}
        if card in (INFLATION, COPYCAT):
            target = ev.get("target")
            if target not in s["players"] or target == p:
                raise RulesError(f"{name(card)} targets another player, not {target!r}",
                                 name(card).lower())
            chain["target"] = target
        else:                       # Family Recipe
            chain["dish"] = self._open_dish(s, ev.get("dish"))
            chain["cards"] = parse_cards(ev.get("cards"), INGREDIENTS,
                                         "the Family Recipe ingredients")
            why = recipe_fits(chain["dish"], chain["cards"], s["inflation"].get(p, 0),
                              any_n=DATA["family_recipe_any"])
            if why:
                raise RulesError(why, "family recipe")
        self._use_action(s, "ACTION", 2 if card == FAMILY and
                         s["rules"]["family_recipe_actions"] == 2 else 1)
        self._take(s, p, _plus(chain["cards"], {card: 1}), p, ev)
        s["chain"] = chain

    def _on_trade(self, s, ev):
        p = self._actor(s, ev, "trade")
        give = parse_cards(ev.get("give"), INGREDIENTS, "the Ingredients given")
        if sum(give.values()) != DATA["trade_give"]:
            raise RulesError("trade 2 Ingredients on hand for 1 Ingredient from the Black "
                             "Market", "how to trade")
        take = ev.get("take")
        if take not in INGREDIENTS:
            raise RulesError(f"{take!r} is not an Ingredient", "components")
        if not s["market"].get(take):
            raise RulesError(f"there is no {name(take)} in the Black Market "
                             f"({_words(s['market'])})", "how to trade")
        self._use_action(s, "TRADE")
        self._take(s, p, give, p, ev)
        _add(s["market"], take, -1)
        s["chain"] = {"kind": "trade", "player": p, "cards": give, "take": take, "card": None,
                      "stops": []}

    def _on_stop(self, s, ev):
        chain = s["chain"]
        if not chain:
            raise RulesError("Licence Suspended stops a player's action: no action is in play",
                             "licence suspended")
        if chain["kind"] == "trade" and s["rules"]["stop_trade"] == "no":
            raise RulesError("a TRADE cannot be stopped (stop_trade: no)", "licence suspended")
        p = ev.get("player")
        if p not in s["players"]:
            raise RulesError(f"{p!r} is not playing", "licence suspended")
        last = chain["stops"][-1] if chain["stops"] else chain["player"]
        if p == last:
            raise RulesError(f"{p} played the card a Stop would stop", "licence suspended")
        self._take(s, p, {STOP: 1}, p, ev)
        chain["stops"].append(p)

    def _on_resolve(self, s, ev):
        if not s["chain"]:
            raise RulesError("no action is in play", "licence suspended")
        self._resolve(s)

    def _on_reshuffle(self, s, ev):
        if not self._reshuffle_due(s):
            raise RulesError("the Ingredient pile is reshuffled only when it runs out and "
                             "the Black Market has more than 3 cards", "ingredient pile")
        keep = parse_cards(ev.get("keep"), INGREDIENTS, "the cards left in the Black Market")
        if sum(keep.values()) != DATA["market_keep"] or any(
                n > s["market"].get(k, 0) for k, n in keep.items()):
            raise RulesError(f"leave 3 of the Black Market's cards ({_words(s['market'])}) "
                             "in the Market", "ingredient pile")
        new = _minus(s["market"], keep)
        s["ipile"] = {"size": sum(new.values()), "known": dict(new), "public": dict(new)}
        s["market"] = keep

    def _on_end_turn(self, s, ev):
        self._expect(s, "play", "end the turn")
        if s["race"]:               # the hold lasted "for a turn": everyone held on
            s["race"] = None
        s["todo"] = [{"do": "limit"}, {"do": "refill"}, {"do": "next"}]

    def _on_discard(self, s, ev):
        self._expect(s, "limit", "discard down to 10 cards")
        p = self._turn(s)
        over = self._hand_size(s, p) - HAND_LIMIT
        cards = parse_cards(ev.get("cards"), INGREDIENTS + ACTIONS, "the cards discarded")
        if sum(cards.values()) != over:
            raise RulesError(f"you can hold a maximum of 10 cards at the end of each turn: "
                             f"{p} discards exactly {over}", "hand limit")
        self._take(s, p, cards, p, ev)
        self._throw(s, cards, "discard")
        s["todo"].pop(0)

    # -- the mechanics ----------------------------------------------------
    def _expect(self, s, do, what):
        head = s["todo"][0]["do"] if s["todo"] else None
        if head != do:
            raise RulesError(f"cannot {what} now: {self._pending_words(s)}", "turn order")

    def _actor(self, s, ev, what) -> str:
        self._expect(s, "play", what)
        p = self._turn(s)
        if ev.get("player", p) != p:
            raise RulesError(f"it is {p}'s turn: only {p} may {what}", "on each turn")
        return p

    def _use_action(self, s, kind, n=1):
        if len(s["used"]) + n > PER_TURN:
            raise RulesError("play up to 2 of the following actions: COOK, ACTION, TRADE "
                             f"(already played: {', '.join(s['used'])})", "on each turn")
        if not s["rules"]["repeat_actions"] and kind in s["used"]:
            raise RulesError(f"{kind} was already played this turn (repeat_actions off)",
                             "on each turn")
        s["used"] += [kind] * n

    def _open_dish(self, s, dish) -> str:
        if dish not in s["open"]:
            open_ = ", ".join(name(d) for d in s["open"] if d) or "none"
            raise RulesError(f"you can only cook Dishes from the open Dish cards ({open_}), "
                             f"not {dish!r}", "open dish cards")
        return dish

    def _ingredient(self, card) -> str:
        if card not in INGREDIENTS:
            raise RulesError(f"{card!r} is not an Ingredient; they are "
                             f"{', '.join(INGREDIENTS)}", "components")
        return card

    def _take(self, s, p, cards: dict, view: str, ev: dict) -> None:
        """Take ``cards`` out of p's hand, checked against what ``view`` (the
        one whose claim this is: p, or who picks p's lost cards) knows of
        it; if the tracker knew p's hand held other cards, the move stands,
        the tracker forgets which, and it is a fault (module docstring)."""
        hand = s["hands"][p]
        known = self._hand_knowledge(s, p, view)
        pool = self._pool(s, view)
        for cls in ("ingredient", "action"):
            mine = {k: n for k, n in cards.items() if kind_of(k) == cls}
            want = sum(mine.values())
            if want > hand[cls]:
                raise RulesError(f"{p} holds only {n_cards(hand[cls], cls.capitalize())}, not "
                                 f"{want}", "hand")
            slots = self._unknown_slots(s, p, cls, view)
            for k, n in mine.items():
                rest = n - min(n, known.get(k, 0))
                if rest and rest > pool.get(k, 0):
                    raise RulesError(f"{p} cannot hold {n} {name(k)}: the rest are "
                                     "accounted for elsewhere", "hand")
                slots -= rest
            if slots < 0:
                raise RulesError(f"{p}'s hand, as logged, does not hold {_words(mine)}", "hand")
        for k, n in cards.items():
            hand[kind_of(k)] -= n
            _add(hand["known"], k, -min(n, hand["known"].get(k, 0)))
            _add(hand["public"], k, -min(n, hand["public"].get(k, 0)))
        for cls in ("ingredient", "action"):
            if self._unknown_slots(s, p, cls, "tracker") < 0:
                hand["known"] = {k: n for k, n in hand["known"].items() if kind_of(k) != cls}
                hand["known"].update({k: n for k, n in hand["public"].items()
                                      if kind_of(k) == cls})
                self._fault(s, ev, f"{_words(cards)} do not fit {p}'s hand as logged; the "
                                   f"tracker forgets which {cls.capitalize()} cards {p} holds")

    def _give(self, s, p, cards: dict) -> None:
        """Cards the whole table saw go into p's hand."""
        hand = s["hands"][p]
        for k, n in cards.items():
            hand[kind_of(k)] += n
            _add(hand["known"], k, n)
            _add(hand["public"], k, n)

    def _throw(self, s, cards: dict, where: str) -> None:
        for k, n in cards.items():
            place = s["box"] if where == "box" else (
                s["market"] if kind_of(k) == "ingredient" else s["discard"])
            _add(place, k, n)

    def _resolve(self, s, auto: bool = False) -> None:
        """The action in play and its Stops take effect: an even number of
        Stops lets it happen; the Stops go to the discard pile. ``auto``: the
        tracker did it by itself (a ``resolve`` logged after is the same step)."""
        c, s["chain"] = s["chain"], None
        if auto:
            s.setdefault("auto", []).append({"type": "resolve"})
        happens = len(c["stops"]) % 2 == 0
        if c["stops"]:
            _add(s["discard"], STOP, len(c["stops"]))
        p = c["player"]
        s["last"] = {"kind": c["kind"], "player": p, "stopped": not happens,
                     "stops": list(c["stops"])}
        if c.get("card"):
            _add(s["discard"], c["card"])
        if c["kind"] == "trade":
            give, take = c["cards"], c["take"]
            how = "done" if happens else s["rules"]["stop_trade"]
            if how == "done":
                self._throw(s, give, "market")
                self._give(s, p, {take: 1})
            elif how == "market":
                self._throw(s, give, "market")
                _add(s["market"], take)
            else:
                self._give(s, p, give)
                _add(s["market"], take)
            return
        self._throw(s, c["cards"], "market")     # a stopped cook's too (FAQ)
        if not happens:
            return
        if c["kind"] in ("cook", FAMILY):
            dish = c["dish"]
            s["open"][s["open"].index(dish)] = None
            info = DISHES[dish]
            s["cooked"][p].append({"dish": dish, "points": info["points"],
                                   "stall": info["stall"],
                                   "bonus": info["stall"] is not None and
                                   info["stall"] == s["stalls"][p],
                                   "family_recipe": c["kind"] == FAMILY})
            s["inflation"].pop(p, None)
        elif c["kind"] == INFLATION:
            t = c["target"]
            s["inflation"][t] = s["inflation"].get(t, 0) + 1 if s["rules"][
                "inflation_stacks"] else 1
        elif c["kind"] == COPYCAT:
            t = c["target"]
            s["stalls"][p], s["stalls"][t] = s["stalls"][t], s["stalls"][p]
        self._check_target(s, p)

    def _check_target(self, s, actor) -> None:
        sc = self.scores(s)
        reached = [q for q in s["players"] if sc[q] >= s["target"]]
        if reached:
            s["winner"] = actor if actor in reached else max(reached, key=lambda q: sc[q])
            s["todo"], s["race"], s["loss"] = [], None, None

    def _settle(self, s) -> None:
        """Do what needs no choice and no card: shuffle the Events in, start a
        turn, skip what cannot happen; stop at the next thing to log."""
        while True:
            if self._auto_step(s):
                continue
            if self.finished(s) or s["chain"] or s["loss"]:
                return
            if not any(s["open"]) and not s["dish_pile"] and s["todo"] and \
                    s["todo"][0]["do"] not in ("stall", "dish", "market"):
                s["over"] = "no dishes"       # nothing left to cook: the game cannot go on
                s["todo"], s["race"] = [], None
                return
            if not s["todo"]:
                return
            head = s["todo"][0]
            do = head["do"]
            if do == "shuffle_events":
                self._shuffle_events(s)
                s["todo"].pop(0)
            elif do == "turn":
                s["todo"].pop(0)
                self._start_turn(s)
            elif do == "check":
                if s["race"] and self._hold_blocks(s):
                    return
                if self._apile_left(s) == 0 or not s["apile"]["stacks"][0][1]:
                    s["todo"].pop(0)          # no Event can be on top
                else:
                    return
            elif do == "draw":
                if self._apile_left(s) == 0 and any(
                        d["pile"] == "action" for d in self._draw_items(s)):
                    # "when the Action pile runs out ... draw 2 Ingredients instead" (FAQ)
                    for d in self._draw_items(s):
                        if d["pile"] == "action":
                            d.update(pile="ingredient", n=2 * d["n"])
                    self._merge_draws(s)
                    continue
                if head["pile"] == "ingredient" and s["ipile"]["size"] == 0:
                    if self._reshuffle_due(s):
                        return
                    s["todo"].pop(0)           # nothing to draw and nothing to reshuffle
                    continue
                return
            elif do == "limit":
                if self._hand_size(s, self._turn(s)) > HAND_LIMIT:
                    return
                s["todo"].pop(0)
            elif do == "refill":
                if None in s["open"] and s["dish_pile"]:
                    s["todo"][0:0] = [{"do": "dish"}] * min(s["open"].count(None),
                                                             s["dish_pile"])
                s["todo"].remove(head)
            elif do == "next":
                s["todo"].pop(0)
                s["turn"] = (s["turn"] + 1) % len(s["players"])
                self._start_turn(s)
            else:
                return

    def _auto_step(self, s) -> bool:
        """Take one step that has a single possible outcome the whole table
        can see (True if one was taken): the resolve of an action nobody can
        stop, the last stall for the last player, the only Dish a pile can
        turn up. Each is remembered in ``auto``: logged anyway, it is the
        same step (:meth:`_done_already`)."""
        if self.finished(s) or s["loss"]:
            return False
        if s["chain"]:
            if self._may_stop(s, "public"):
                return False
            self._resolve(s, auto=True)         # nobody at the table can stop it
            return True
        do = s["todo"][0]["do"] if s["todo"] else None
        ev = None
        if do == "stall" and len(s["players"]) - len(s["stalls"]) == 1 == \
                len(STALLS) - len(s["stalls"]):  # one player, one stall left
            ev = {"type": "choose_stall",
                  "player": next(q for q in s["players"] if q not in s["stalls"]),
                  "stall": next(k for k in STALLS if k not in s["stalls"].values())}
        elif do == "dish" and len(self._dish_kinds_left(s)) == 1:
            ev = {"type": "dish", "card": self._dish_kinds_left(s)[0]}
        if ev is None:
            return False
        getattr(self, "_on_" + ev["type"])(s, ev)
        s.setdefault("auto", []).append(ev)
        return True

    def _merge_draws(self, s):
        out = []
        for d in s["todo"]:
            if out and d.get("do") == "draw" and out[-1].get("do") == "draw" and \
                    (d["player"], d["pile"]) == (out[-1]["player"], out[-1]["pile"]):
                out[-1] = dict(out[-1], n=out[-1]["n"] + d["n"])
            else:
                out.append(d)
        s["todo"] = out

    def _start_turn(self, s):
        p = self._turn(s)
        s["turn_no"] += 1
        s["used"] = []
        s["todo"] = [{"do": "check"}] + [
            {"do": "draw", "player": p, "pile": pile, "n": n}
            for pile, n in DATA["turn_draw"].items()] + [{"do": "play"}]

    def _shuffle_events(self, s):
        """"shuffle Event cards evenly in the Action draw pile": at random,
        or one Event in each of as many equal stacks (event_shuffle)."""
        pile, events = s["apile"], s["events_aside"]
        e = sum(events.values())
        pile["events"], s["events_aside"], pile["shuffled"] = dict(events), {}, True
        n = pile["size"]
        if s["rules"]["event_shuffle"] == "stacks" and e:
            q, r = divmod(n, e)
            pile["stacks"] = [[q + (i < r) + 1, 1] for i in range(e)]
        else:
            pile["stacks"] = [[n + e, e]] if n + e else []

    # -- knowledge --------------------------------------------------------
    def _hand_knowledge(self, s, p, view) -> dict:
        hand = s["hands"][p]
        return hand["known"] if view in ("tracker", p) else hand["public"]

    def _pool(self, s, view="tracker") -> dict:
        """Ingredients and Actions whose place ``view`` does not know (in the
        piles face down or in a hand as unknown cards), by id."""
        out = {k: n for k, n in s["total"].items() if kind_of(k) != "event"}
        pile = s["ipile"]["known"] if view == "tracker" else s["ipile"]["public"]
        seen = [s["market"], s["discard"], s["box"], pile]
        seen += [self._hand_knowledge(s, p, view) for p in s["players"]]
        c = s["chain"]
        if c:
            seen.append(c["cards"])
            if c.get("card"):
                seen.append({c["card"]: 1})
            if c["stops"]:
                seen.append({STOP: len(c["stops"])})
            if c.get("take"):
                seen.append({c["take"]: 1})
        for group in seen:
            for k, n in group.items():
                if KIND[k] != "event":     # below 0 only when logs clash (a fault)
                    _add(out, k, -n)
        return out

    def _unknown_slots(self, s, p, cls, view) -> int:
        hand = s["hands"][p]
        return hand[cls] - sum(n for k, n in self._hand_knowledge(s, p, view).items()
                               if kind_of(k) == cls)

    def _dish_kinds_left(self, s) -> list[str]:
        return [k for k, n in self._dish_unseen(s).items() if n > 0]

    def _dish_unseen(self, s) -> dict:
        out = dict(s["dish_total"])
        for d in s["open"]:
            if d:
                _add(out, d, -1)
        for p in s["players"]:
            for c in s["cooked"][p]:
                _add(out, c["dish"], -1)
        return out

    def _hand_size(self, s, p) -> int:
        return s["hands"][p]["ingredient"] + s["hands"][p]["action"]

    def _apile_left(self, s) -> int:
        return s["apile"]["size"] + sum(s["apile"]["events"].values())

    def _reshuffle_due(self, s) -> bool:
        head = s["todo"][0] if s["todo"] else {}
        return (head.get("do") == "draw" and head["pile"] == "ingredient"
                and s["ipile"]["size"] == 0
                and sum(s["market"].values()) > DATA["market_keep"])

    def _hold_blocks(self, s) -> bool:
        """A hold for a set time stops play; a hold "for a turn" does not."""
        return s["rules"]["poisoning_hold"] == "seconds" or not s["todo"] or \
            s["todo"][0]["do"] not in ("check", "draw", "play")

    def _draw_items(self, s) -> list[dict]:
        items = []
        for d in s["todo"]:
            if d.get("do") != "draw":
                break
            items.append(d)
        return items

    def _draw_size(self, s, item) -> int:
        if item["pile"] == "ingredient":
            return min(item["n"], s["ipile"]["size"])
        return min(item["n"], s["apile"]["size"])

    def _turn(self, s) -> str:
        return s["players"][s["turn"]]

    def _seats(self, s) -> list[str]:
        i = s["start"]
        return s["players"][i:] + s["players"][:i]

    # -- what may happen next ---------------------------------------------
    def legal_events(self, s) -> list[dict]:
        """Every event the rules allow now, as far as the tracker knows the
        hands: the race outcomes while everyone holds, the decisions, the
        chance outcomes, and (``draws: "private"``) a hidden draw in its
        cardless form too (the fallback when a player cannot log theirs).
        The host console should offer :meth:`host_events` instead, which
        shows no hand."""
        return self._offers(s, "tracker")

    def host_events(self, s) -> list[dict]:
        """What the host console may offer without showing anyone's hand:
        moves as far as *public* information allows them (the tracker still
        refuses one the real, logged hand cannot make) and draws in their
        cardless form; players log their own cards on their private pages."""
        return self._offers(s, "public")

    def _offers(self, s, view) -> list[dict]:
        if self.finished(s):
            return []
        out = []
        if self.race_request(s) is not None:
            out += self.race_outcomes(s)
            if self._hold_blocks(s):
                return out
        out += self.decisions(s, view)
        chance = [e for e, _ in self.chance_outcomes(s)]
        if s["rules"]["draws"] == "private" and chance and chance[0]["type"] == "draw":
            item = self._draw_items(s)[0]
            cardless = {"type": "draw", "player": item["player"], "pile": item["pile"],
                        "count": self._draw_size(s, item)}
            chance = [cardless] if view == "public" else chance + [cardless]
        elif chance and chance[0]["type"] == "event_check":
            t = self._past_check(s)       # no Event on top: the draw may be logged at once
            items = self._draw_items(t) if t is not s else []
            if items and self._draw_size(t, items[0]):
                chance.append({"type": "draw", "player": items[0]["player"],
                               "pile": items[0]["pile"], "count": self._draw_size(t, items[0])})
        return out + chance

    def decisions(self, s, view: str = "tracker") -> list[dict]:
        """The players' choices now, as far as ``view`` knows the hands:
        ``"tracker"`` (default: every hand as logged, so each listed move is
        accepted), ``"public"`` (what the whole table knows: the host
        console's offers) or a player's name (their own hand as they logged
        it, with the others' as the table knows them)."""
        if self.finished(s):
            return []
        if s["loss"]:
            loss = s["loss"]
            return [{"type": "lose", "player": loss["player"], "cards": cards_list(c)}
                    for c in self._groups(s, loss["player"], loss["count"], view,
                                          INGREDIENTS + ACTIONS)]
        if s["chain"]:
            out = [{"type": "stop", "player": p} for p in self._may_stop(s, view)]
            out.append({"type": "resolve"})
            after = copy.deepcopy(s)
            self._resolve(after)
            self._settle(after)
            if not self.finished(after):
                out += [e for e in self.decisions(after, view) if e["type"] != "resolve"]
            return out
        if s["race"] and self._hold_blocks(s):
            return []
        if not s["todo"]:
            return []
        do = s["todo"][0]["do"]
        if do == "stall":
            free = [k for k in STALLS if k not in s["stalls"].values()]
            return [{"type": "choose_stall", "player": p, "stall": k}
                    for p in s["players"] if p not in s["stalls"] for k in free]
        if self._reshuffle_due(s):
            return [{"type": "reshuffle", "keep": cards_list(c)}
                    for c in _multisets(INGREDIENTS, DATA["market_keep"], s["market"], 0, {})]
        if do == "limit":
            p = self._turn(s)
            return [{"type": "discard", "cards": cards_list(c)}
                    for c in self._groups(s, p, self._hand_size(s, p) - HAND_LIMIT, view,
                                          INGREDIENTS + ACTIONS)]
        if do == "play":
            return self._turn_moves(s, view) + [{"type": "end_turn"}]
        return []

    @staticmethod
    def _limit(view) -> int:
        return MAX_LISTED if view in ("tracker", "public") else PLAYER_LISTED

    def _groups(self, s, p, size, view, kinds, limit=None) -> list[dict]:
        """Groups of ``size`` cards of ``kinds`` that p's hand may hold (as ``view``
        knows it), listing at most ``limit`` when the hand is not known."""
        limit = limit or self._limit(view)
        known = self._hand_knowledge(s, p, view)
        pool = self._pool(s, view)
        out = []
        classes = {kind_of(k) for k in kinds}
        slots = {cls: self._unknown_slots(s, p, cls, view) for cls in classes}
        budget = sum(slots.values())
        for g in _multisets(kinds, size, {k: known.get(k, 0) for k in kinds}, budget, pool):
            if all(sum(max(0, n - known.get(k, 0)) for k, n in g.items()
                       if kind_of(k) == cls) <= slots[cls] for cls in classes) and all(
                    sum(n for k, n in g.items() if kind_of(k) == cls) <= s["hands"][p][cls]
                    for cls in classes):
                out.append(g)
                if len(out) >= limit:
                    break
        return out

    def _may_hold(self, s, p, card, view) -> bool:
        known = self._hand_knowledge(s, p, view)
        return bool(known.get(card)) or (
            self._unknown_slots(s, p, kind_of(card), view) > 0 and
            self._pool(s, view).get(card, 0) > 0)

    def _may_stop(self, s, view) -> list[str]:
        c = s["chain"]
        if c["kind"] == "trade" and s["rules"]["stop_trade"] == "no":
            return []
        last = c["stops"][-1] if c["stops"] else c["player"]
        return [p for p in s["players"] if p != last and self._may_hold(s, p, STOP, view)]

    def _cooks(self, s, p, view, dish, any_n=None) -> list[dict]:
        """The ingredient groups p may cook ``dish`` with (at most MAX_LISTED:
        Rojak and Family Recipe take any cards, too many to list them all)."""
        extra = s["inflation"].get(p, 0)
        info = DISHES[dish]
        if any_n is not None or "any" in info:
            n = any_n if any_n is not None else info["any"]
            return self._groups(s, p, n + extra, view, INGREDIENTS)
        pool = self._pool(s, view)
        need: dict = {}
        for k in info["ingredients"]:
            _add(need, k)
        candidates = []
        for sub in self._subs(need):
            base = _plus(_minus(need, sub), {WILD: sum(sub.values())} if sub else {})
            for more in (_multisets(INGREDIENTS, extra, {k: extra for k in INGREDIENTS}, 0, {})
                         if extra else [{}]):
                candidates.append(_plus(base, more))
        out, seen = [], set()
        for g in candidates:
            key = tuple(sorted(g.items()))
            if key not in seen and self._holds(s, p, g, view, pool):
                seen.add(key)
                out.append(g)
        return out[:self._limit(view)]

    @staticmethod
    def _subs(need: dict) -> list[dict]:
        """Every part of a recipe that Wildcards may stand in for (none included)."""
        out = [{}]
        for k, n in need.items():
            out = [dict(o, **({k: m} if m else {})) for o in out for m in range(n + 1)]
        return out

    def _holds(self, s, p, g: dict, view, pool=None) -> bool:
        """May p's hand (as ``view`` knows it) hold the cards ``g``? (``pool``:
        the unseen cards as ``view`` knows them, if already worked out)"""
        known = self._hand_knowledge(s, p, view)
        for cls in ("ingredient", "action"):
            mine = {k: n for k, n in g.items() if kind_of(k) == cls}
            if sum(mine.values()) > s["hands"][p][cls]:
                return False
            rest = {k: n - known.get(k, 0) for k, n in mine.items() if n > known.get(k, 0)}
            if rest:
                if sum(rest.values()) > self._unknown_slots(s, p, cls, view):
                    return False
                pool = pool if pool is not None else self._pool(s, view)
                if any(n > pool.get(k, 0) for k, n in rest.items()):
                    return False
        return True

    def _turn_moves(self, s, view) -> list[dict]:
        p = self._turn(s)
        used = s["used"]
        left = PER_TURN - len(used)
        repeat = s["rules"]["repeat_actions"]
        out = []
        if not left:
            return out
        dishes = list(dict.fromkeys(d for d in s["open"] if d))
        if repeat or "COOK" not in used:
            for d in dishes:
                out += [{"type": "cook", "dish": d, "cards": cards_list(g)}
                        for g in self._cooks(s, p, view, d)]
        if repeat or "ACTION" not in used:
            others = [q for q in s["players"] if q != p]
            for card in (INFLATION, COPYCAT):
                if self._may_hold(s, p, card, view):
                    out += [{"type": "play", "card": card, "target": q} for q in others]
            fr_uses = 2 if s["rules"]["family_recipe_actions"] == 2 else 1
            if self._may_hold(s, p, FAMILY, view) and left >= fr_uses:
                groups = self._cooks(s, p, view, dishes[0], DATA["family_recipe_any"]) \
                    if dishes else []
                for d in dishes:          # any dish, any 3: a sample of each listed
                    out += [{"type": "play", "card": FAMILY, "dish": d, "cards": cards_list(g)}
                            for g in groups[:max(5, self._limit(view) // len(dishes))]]
        if (repeat or "TRADE" not in used) and s["market"]:
            gives = self._groups(s, p, DATA["trade_give"], view, INGREDIENTS)
            for g in gives:
                out += [{"type": "trade", "give": cards_list(g), "take": k}
                        for k in sorted(s["market"], key=ORDER.get)]
        return out

    def chance_outcomes(self, s) -> list[tuple[dict, Fraction]]:
        """The next Dish, Black Market card, draw or top of the Action pile,
        with exact probabilities from what the tracker knows."""
        if self.finished(s) or s["loss"] or s["chain"] or not s["todo"]:
            return []
        if s["race"] and self._hold_blocks(s):
            return []
        head = s["todo"][0]
        do = head["do"]
        if do == "dish":
            left = self._dish_unseen(s)
            total = sum(left.values())
            return [({"type": "dish", "card": k}, Fraction(n, total)) for k, n in left.items()]
        if do == "market":
            return [({"type": "market", "card": cards_list(g)[0]}, p)
                    for g, p in self._draw_odds(s, "ingredient", 1)]
        if do == "check":
            top = s["apile"]["stacks"][0]
            out = []
            if top[0] > top[1]:
                out.append(({"type": "event_check", "event": None},
                            Fraction(top[0] - top[1], top[0])))
            events = s["apile"]["events"]
            n_ev = sum(events.values())
            for k, n in events.items() if top[1] else ():
                out.append(({"type": "event_check", "event": k},
                            Fraction(top[1], top[0]) * Fraction(n, n_ev)))
            return out
        if do == "draw" and not self._reshuffle_due(s):
            item = self._draw_items(s)[0]
            n = self._draw_size(s, item)
            if not n:
                return []
            base = {"type": "draw", "player": item["player"], "pile": item["pile"]}
            if s["rules"]["draws"] == "public":
                return [({**base, "count": n}, Fraction(1))]
            return [({**base, "cards": cards_list(g)}, p)
                    for g, p in self._draw_odds(s, item["pile"], n)]
        return []

    def _draw_odds(self, s, pile, n, view="tracker") -> list[tuple[dict, Fraction]]:
        """Each group of ``n`` cards the pile may give, with its chance
        (multivariate hypergeometric over the cards it may hold)."""
        pile_known = s["ipile"]["known"] if view == "tracker" else s["ipile"]["public"]
        if pile == "ingredient" and pile_known and \
                sum(pile_known.values()) == s["ipile"]["size"]:
            source = dict(pile_known)
        else:
            kinds = INGREDIENTS if pile == "ingredient" else ACTIONS
            pool = self._pool(s, view)
            source = {k: pool[k] for k in kinds if pool.get(k, 0) > 0}
        total = sum(source.values())
        if total < n:
            return []
        out = []
        for g in _multisets(list(source), n, source, 0, {}):
            ways = 1
            for k, m in g.items():
                ways *= comb(source[k], m)
            out.append((g, Fraction(ways, comb(total, n))))
        return out

    def race_request(self, s) -> RaceRequest | None:
        if not s["race"] or self.finished(s) or s["loss"]:
            return None
        turn = s["rules"]["poisoning_hold"] == "turn"
        wait = TURN_HOLD_MS if turn else s["rules"]["poisoning_seconds"] * 1000
        return RaceRequest("first-release", tuple(s["players"]), "food-poisoning",
                           announced=True, players=tuple(s["players"]),
                           info={"card": "Food Poisoning", "stake": s["race"]["stake"],
                                 "events": s["race"]["events"],
                                 "hold": "turn" if turn else "seconds", "wait_ms": wait,
                                 "turn": self._turn(s) if s["stalls"] else None})

    # -- private information ----------------------------------------------
    def private_view(self, s, player: str) -> dict:
        """``player``'s hand as they logged it (and how many cards are unknown)."""
        if player not in s.get("players", ()):
            return {}
        hand = s["hands"][player]
        return {
            "player": player, "stall": s["stalls"].get(player),
            "hand": cards_list(hand["known"]),
            "unknown": {cls: self._unknown_slots(s, player, cls, "tracker")
                        for cls in ("ingredient", "action")},
            "ingredients": hand["ingredient"], "actions": hand["action"],
            "inflation": s["inflation"].get(player, 0),
            "cookable": sorted({d for d in s["open"] if d and self._cooks(
                s, player, player, d)}, key=list(DISHES).index),
            "draw_due": self._draw_due(s, player),
        }

    def _past_check(self, s):
        """The state once the Event check found none, when the check is due
        and the top card may be no Event (else ``s``): a draw logged then
        says no Event was on top, so the draws are offered already."""
        head = s["todo"][0]["do"] if s["todo"] else None
        if head != "check" or s["chain"] or s["loss"] or (s["race"] and self._hold_blocks(s)):
            return s
        top = s["apile"]["stacks"][0]
        if top[0] <= top[1]:
            return s
        t = copy.deepcopy(s)
        self._on_event_check(t, {"event": None})
        self._settle(t)
        return t

    def _draw_due(self, s, player) -> dict | None:
        s = self._past_check(s)
        if self.finished(s) or s["chain"] or s["loss"] or (s["race"] and self._hold_blocks(s)):
            return None
        items = [d for d in self._draw_items(s) if d["player"] == player]
        if not items or self._reshuffle_due(s):
            return None
        return {"pile": items[0]["pile"], "count": self._draw_size(s, items[0])}

    def private_events(self, s, player: str) -> list[dict]:
        """What ``player`` may log from their own page: the cards they drew
        (with ``draws: "private"``) and their own moves, as far as *they*
        can know (public information and the hand they logged), so the list
        never depends on another hand; each one is accepted (a clash with
        another hand is a fault for the host, see the module docstring)."""
        if self.finished(s) or player not in s["players"]:
            return []
        out = []
        if s["rules"]["draws"] == "private" and self._draw_due(s, player):
            t = self._past_check(s)
            for item in self._draw_items(t):
                n = self._draw_size(t, item)
                if item["player"] == player and n:
                    out += [{"type": "draw", "player": player, "pile": item["pile"],
                             "cards": cards_list(g)}
                            for g, _ in self._draw_odds(t, item["pile"], n, player)]
        moves = self.decisions(s, player)
        mine = []
        for e in moves:
            t = e["type"]
            if t in ("stop", "choose_stall") and e["player"] == player:
                mine.append(e)
            elif t == "lose" and s["loss"] and s["loss"]["chooser"] == player:
                mine.append(e)
            elif t in ("cook", "play", "trade", "discard", "end_turn") and \
                    self._turn(s) == player:     # with an action in play: it took effect
                mine.append(e)
        return out + mine

    def complete(self, s, ev: dict) -> dict:
        """A draw that leaves out its player or pile is the draw due now
        (as :meth:`_on_draw` reads it): filled in from the state. A Food
        Poisoning race keeps its ``stake`` (the cards the loser gives up,
        4 after a second Food Poisoning in the hold), so its log line can
        say it."""
        ev = super().complete(s, ev)
        if isinstance(ev, dict) and ev.get("type") == "race" and s["race"] \
                and "stake" not in ev:     # the log line says how many cards were at stake
            return {**ev, "stake": s["race"]["stake"]}
        if isinstance(ev, dict) and ev.get("type") == "draw" and s["todo"] \
                and s["todo"][0].get("do") == "draw" and ("player" not in ev or "pile" not in ev):
            head = s["todo"][0]
            return {"type": "draw", "player": ev.get("player", head["player"]),
                    "pile": ev.get("pile", head["pile"]),
                    **{k: v for k, v in ev.items() if k not in ("type", "player", "pile")}}
        return ev

    def public_event(self, ev: dict) -> dict:
        """A draw is seen as its count: the cards stay in the hand."""
        if isinstance(ev, dict) and ev.get("type") == "draw":
            out = {k: v for k, v in ev.items() if k != "cards"}
            if isinstance(ev.get("cards"), (list, dict)):
                cards = ev["cards"]
                out["count"] = len(cards) if isinstance(cards, list) else sum(
                    n for n in cards.values() if isinstance(n, int))
            return out
        return ev

    # -- reading the state ----------------------------------------------
    def scores(self, s) -> dict[str, int]:
        """Dish points plus 1 for each dish of one's own stall
        (``copycat_bonus``: earned when cooked, or the stall held now)."""
        out = {}
        for p in s["players"]:
            dishes = s["cooked"][p]
            if s["rules"]["copycat_bonus"] == "follows":
                bonus = sum(1 for d in dishes if d["stall"] and d["stall"] == s["stalls"].get(p))
            else:
                bonus = sum(1 for d in dishes if d["bonus"])
            out[p] = sum(d["points"] for d in dishes) + bonus
        return out

    def current_player(self, s) -> str | None:
        """Who must act: the one giving up cards, nobody while everyone holds
        or the table turns cards over, else the player whose turn it is."""
        if self.finished(s):
            return None
        if s["loss"]:
            return s["loss"]["chooser"]
        if s["race"] and self._hold_blocks(s):
            return None
        head = s["todo"][0]["do"] if s["todo"] else None
        if head == "stall":
            return next(p for p in s["players"] if p not in s["stalls"])
        if head in ("dish", "market", "shuffle_events"):
            return None
        if head == "draw":
            return self._draw_items(s)[0]["player"]
        return self._turn(s)

    def finished(self, s) -> bool:
        return s["winner"] is not None or s["over"] is not None

    def ranking(self, s) -> list[list[str]]:
        """The winner first, then the others by points (equal points share a place)."""
        sc = self.scores(s)
        return rank_by(s["players"], lambda p: (p == s["winner"], sc[p]))

    def event_odds(self, s) -> dict | None:
        """Exact chance that the next card off the Action pile is an Event."""
        stacks = s["apile"]["stacks"]
        if not stacks:
            return None
        cards, events = stacks[0]
        p = Fraction(events, cards)
        return {"events_left": sum(s["apile"]["events"].values()),
                "cards_left": self._apile_left(s), "probability": f"{p.numerator}/{p.denominator}",
                "chance": round(float(p), 4), "percent": round(float(p) * 100, 1)}

    def _pending_words(self, s) -> str:
        if self.finished(s):
            return "the game is over"
        if s["loss"]:
            return f"{s['loss']['player']} gives up {n_cards(s['loss']['count'])} for Food Poisoning"
        if s["chain"]:
            who = s["chain"]["stops"][-1] if s["chain"]["stops"] else None
            return (f"{self._chain_words(s)}: " +
                    (f"anyone may stop {who}'s Licence Suspended with another" if who else
                     "anyone holding Licence Suspended may stop it"))
        if s["race"] and self._hold_blocks(s):
            return "everyone holds for Food Poisoning"
        head = s["todo"][0] if s["todo"] else {}
        do = head.get("do")
        if do == "stall":
            return "each player selects a Hawker card"
        if do == "dish":
            return "turn a Dish card face up"
        if do == "market":
            return "place an Ingredient face up in the Black Market"
        if do == "check":
            t = self._past_check(s)
            if t is s or not self._draw_items(t):
                return "check the top of the Action pile for an Event"
            return self._pending_words(t) + " (an Event on top of the Action pile first)"
        if self._reshuffle_due(s):
            return "the Ingredient pile ran out: shuffle the Black Market into it, leaving 3"
        if do == "draw":
            by: dict = {}
            for d in self._draw_items(s):
                by.setdefault(d["player"], []).append(
                    n_cards(self._draw_size(s, d), d["pile"].capitalize()))
            return " and ".join(f"{p} draws {' and '.join(w)}" for p, w in by.items())
        if do == "play":
            return f"{self._turn(s)} plays (up to {PER_TURN - len(s['used'])} more actions)"
        if do == "limit":
            p = self._turn(s)
            return f"{p} discards down to 10 cards"
        return str(do)

    def _chain_words(self, s, c=None) -> str:
        """The action in play in plain words: "Ana cooks You Tiao"."""
        c = c or s["chain"]
        p, k = c["player"], c["kind"]
        if k == "cook":
            return f"{p} cooks {name(c.get('dish'))}"
        if k == FAMILY:
            return f"{p} cooks {name(c.get('dish'))} with a Family Recipe"
        if k == "trade":
            return f"{p} trades {_words(c['cards'])} for {name(c.get('take'))}"
        if k == INFLATION:
            return f"{p} plays Price Inflation on {c.get('target')}"
        if k == COPYCAT:
            return f"{p} swaps stalls with {c.get('target')} (Copycat Stall)"
        return f"{p} plays {name(k)}"

    def public_view(self, s) -> dict:
        """The scoreboard: stalls, points, hand sizes, open Dishes, Black
        Market, piles and Event odds; never a card in a hand."""
        sc = self.scores(s)
        done = self.finished(s)
        players = []
        for p in s["players"]:
            hand = s["hands"][p]
            stall = s["stalls"].get(p)
            players.append({
                "name": p, "stall": stall, "stall_name": name(stall) if stall else None,
                "stall_dish": STALLS[stall]["dish"] if stall else None,
                "score": sc[p], "target": s["target"], "to_target": max(0, s["target"] - sc[p]),
                "hand": self._hand_size(s, p), "ingredients": hand["ingredient"],
                "actions": hand["action"],
                "cooked": [{"dish": d["dish"], "name": name(d["dish"]), "points": d["points"],
                            "bonus": d["bonus"]} for d in s["cooked"][p]],
                "inflation": s["inflation"].get(p, 0),
            })
        chain = None
        if s["chain"]:
            c = s["chain"]
            chain = {"kind": c["kind"], "player": c["player"], "dish": c.get("dish"),
                     "target": c.get("target"), "cards": cards_list(c["cards"]),
                     "take": c.get("take"), "stops": list(c["stops"]),
                     "text": self._chain_words(s)}
        req = self.race_request(s)
        head = s["todo"][0] if s["todo"] and not done else None
        return {
            "game": self.name, "players": players, "target": s["target"],
            "turn": None if done or not s["stalls"] or head and head["do"] in (
                "stall", "dish", "market") else self._turn(s),
            "current_player": self.current_player(s), "turn_number": s["turn_no"],
            "actions_used": list(s["used"]), "actions_left": PER_TURN - len(s["used"]),
            "pending": {"kind": "over" if done else (
                "lose" if s["loss"] else "stop-window" if s["chain"] else
                "food-poisoning" if req and self._hold_blocks(s) else
                "reshuffle" if self._reshuffle_due(s) else head["do"] if head else None),
                "count": s["loss"]["count"] if s["loss"] else None,   # the cards to lose
                "text": self._pending_words(s)},
            "open_dishes": [None if d is None else {
                "dish": d, "name": name(d), "points": DISHES[d]["points"],
                "stall": DISHES[d]["stall"],
                "ingredients": DISHES[d].get("ingredients"), "any": DISHES[d].get("any")}
                for d in s["open"]],
            "black_market": {"count": sum(s["market"].values()), "cards": {
                k: s["market"][k] for k in sorted(s["market"], key=ORDER.get)}},
            "piles": {"ingredient": s["ipile"]["size"], "action": self._apile_left(s),
                      "dish": s["dish_pile"], "action_discard": sum(s["discard"].values()),
                      "out_of_play": sum(s["box"].values())},
            "action_discard": dict(s["discard"]),
            "event_odds": self.event_odds(s),
            "chain": chain, "last_action": copy.deepcopy(s["last"]),
            "race": req.to_json() if req else None,
            "loss": dict(s["loss"]) if s["loss"] else None,
            "scores": sc, "finished": done, "winner": s["winner"],
            "end": "target" if s["winner"] else s["over"],
            "ranking": self.ranking(s), "rules": dict(s["rules"]),
            "cards": CARDS,
        }

    def host_view(self, s) -> dict:
        """The scoreboard plus what only the host may sort out: the card ids
        logged in more places than the game has (``inconsistent``: someone's
        log is wrong) and every accepted event that did not fit what the
        tracker knew (``faults``). Players are never told (module docstring)."""
        view = self.public_view(s)
        over = self._overcount(s)
        view["inconsistent"] = [
            {"card": k, "name": name(k), "logged": s["total"][k] + n, "in_game": s["total"][k],
             "text": self._over_words(s, {k: n})}
            for k, n in sorted(over.items(), key=lambda kv: ORDER[kv[0]])]
        view["faults"] = _copy(s["faults"])
        return view

    def describe(self, ev: dict) -> str:
        t = ev.get("type")
        who = ev.get("player")
        try:
            if t == "choose_stall":
                return f"{who} runs the {name(ev.get('stall'))}"
            if t == "dish":
                return f"Dish turned up: {name(ev.get('card'))}"
            if t == "market":
                return f"Black Market: {name(ev.get('card'))}"
            if t == "draw":               # never name the cards: they are hidden
                n = self.public_event(ev).get("count")   # none logged: the draw due
                pile = str(ev.get("pile")).capitalize()
                drawn = f"{pile} cards" if n is None else n_cards(n, pile)
                return f"{who} draws {drawn}"
            if t == "event_check":
                return (f"Event! {name(ev['event'])}" if ev.get("event")
                        else "no Event on the Action pile")
            if t == "lose":
                return f"{who} loses {_words(parse_cards(ev.get('cards'), list(NAMES), 'cards'))}"
            if t == "cook":
                return (f"cook {name(ev.get('dish'))} with "
                        f"{_words(parse_cards(ev.get('cards'), INGREDIENTS, 'cards'))}")
            if t == "play":
                card = ev.get("card")
                if card == FAMILY:
                    return (f"Family Recipe: cook {name(ev.get('dish'))} with "
                            f"{_words(parse_cards(ev.get('cards'), INGREDIENTS, 'cards'))}")
                return f"{name(card)} on {ev.get('target')}"
            if t == "trade":
                return (f"trade {_words(parse_cards(ev.get('give'), INGREDIENTS, 'cards'))} "
                        f"for {name(ev.get('take'))}")
            if t == "stop":
                return f"{who}: Licence Suspended!"
            if t == "resolve":
                return "nobody stops it: it happens"
            if t == "reshuffle":
                return ("Ingredient pile reshuffled; left in the Black Market: "
                        f"{_words(parse_cards(ev.get('keep'), INGREDIENTS, 'cards'))}")
            if t == "end_turn":
                return "end of turn"
            if t == "discard":
                return f"discard {_words(parse_cards(ev.get('cards'), list(NAMES), 'cards'))}"
            if t == "race":
                return self.race_reason("food-poisoning").word(
                    ev, {"stake": ev.get("stake", DATA["poisoning_loss"])})
        except RulesError:
            pass
        return super().describe(self.public_event(ev))

    def check_invariants(self, s) -> None:
        """Every card in exactly one place (counted by kind: Ingredients,
        Actions, Events); what the tracker (and the table) knows of each hand
        fits in it; the unseen pool fills the unknown places; a card id is
        logged in more places than it has copies only as a recorded fault."""
        self._check_card_counts(s)
        self._check_hands(s)
        self._check_pools(s)
        self._check_piles_and_table(s)

    @staticmethod
    def _check_card_counts(s) -> None:
        """Each kind's cards, wherever they are, add up to the game's total."""
        c = s["chain"]
        in_chain = {}
        if c:
            in_chain = _plus(c["cards"], {STOP: len(c["stops"])} if c["stops"] else {})
            if c.get("card"):
                _add(in_chain, c["card"])
            if c.get("take"):
                _add(in_chain, c["take"])
        by_class = {"ingredient": 0, "action": 0, "event": 0}
        for group in (s["market"], s["discard"], s["box"], in_chain):
            for k, n in group.items():
                assert n > 0, group
                by_class[kind_of(k)] += n
        by_class["ingredient"] += s["ipile"]["size"]
        by_class["action"] += s["apile"]["size"]
        by_class["event"] += sum(s["apile"]["events"].values()) + sum(
            s["events_aside"].values())
        for p in s["players"]:
            by_class["ingredient"] += s["hands"][p]["ingredient"]
            by_class["action"] += s["hands"][p]["action"]
        for cls in by_class:
            want = sum(n for k, n in s["total"].items() if kind_of(k) == cls)
            assert by_class[cls] == want, (cls, by_class[cls], want)

    @staticmethod
    def _check_hands(s) -> None:
        """What the table saw of a hand fits in what the tracker knows of it,
        which fits in the hand; no Event is ever held."""
        for p in s["players"]:
            hand = s["hands"][p]
            for cls in ("ingredient", "action"):
                known = sum(n for k, n in hand["known"].items() if kind_of(k) == cls)
                public = sum(n for k, n in hand["public"].items() if kind_of(k) == cls)
                assert 0 <= public <= known <= hand[cls], (p, hand)
            assert all(hand["public"][k] <= hand["known"].get(k, 0) for k in hand["public"])
            assert all(kind_of(k) != "event" for k in hand["known"])

    def _check_pools(self, s) -> None:
        """Each view's unseen pool fills exactly its unknown places."""
        # two logs may disagree (a player's draw is checked against what that player can
        # know, not against the other hands): a card id may then be logged in more places
        # than the game has, never silently: by at most what a recorded fault names
        recorded: dict = {}
        for f in s["faults"]:
            assert f["text"] and isinstance(f["over"], dict), f
            for k, n in f["over"].items():
                recorded[k] = max(recorded.get(k, 0), n)
        assert s["overcount"] == self._overcount(s), s["overcount"]
        for view in ["tracker", "public"] + list(s["players"]):
            pool = self._pool(s, view)
            assert all(n >= -recorded.get(k, 0) for k, n in pool.items()), (view, pool, recorded)
            pile_known = s["ipile"]["known"] if view == "tracker" else s["ipile"]["public"]
            slots = {"ingredient": s["ipile"]["size"] - sum(pile_known.values()),
                     "action": s["apile"]["size"]}
            for p in s["players"]:
                for cls in slots:
                    slots[cls] += self._unknown_slots(s, p, cls, view)
            for cls, n in slots.items():
                assert sum(m for k, m in pool.items() if kind_of(k) == cls) == n, (view, cls)

    def _check_piles_and_table(self, s) -> None:
        """The draw piles' stacks, the dishes, the open dishes, the stalls and
        the cards used this turn."""
        assert sum(s["ipile"]["known"].values()) <= s["ipile"]["size"]
        stacks = s["apile"]["stacks"]
        assert all(a > 0 and 0 <= e <= a for a, e in stacks), stacks
        if s["apile"]["shuffled"]:
            assert sum(a for a, _ in stacks) == self._apile_left(s), (stacks, s["apile"])
            assert sum(e for _, e in stacks) == sum(s["apile"]["events"].values())
        dishes = self._dish_unseen(s)
        assert all(n >= 0 for n in dishes.values()) and sum(dishes.values()) == s["dish_pile"]
        assert len(s["open"]) == DATA["open_dishes"]
        assert len(set(s["stalls"].values())) == len(s["stalls"])
        assert len(s["used"]) <= PER_TURN
