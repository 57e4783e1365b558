"""Chope! (Origame): press your luck at the hawker centre, with buzzer races.

On your turn you flip cards from the Hawker Centre Deck. Food stays face-up
until you *stop* and claim it all, or until two Foods of one type are face-up:
a *bust*, and you keep only one of them. A Table card starts a *chope* race
(the first *other* player to press takes it); a Mynah starts a *siam* race
(the *last* player to press loses a card). The game ends when the deck runs
out; each Table seats one Main and optionally one Side.

The host logs what really happens; card ids are ``food:<type>`` (``food:laksa``),
``table:<colour>`` (``table:red``) and ``mynah``. Events::

    {"type": "favourite", "player": "ana", "food": "laksa"}   # variant, before the first flip
    {"type": "flip", "card": "food:laksa"}
    {"type": "stop"}                                         # claim the face-up food, pass
    {"type": "keep", "card": "food:laksa"}                   # after a bust
    {"type": "lose", "player": "bo", "card": "table:red"}    # after a siam, or paying a Mynah debt
    {"type": "race", "reason": "chope", "winner": "bo", "loser": null, "tied": [], ...}

A choice that has only one possible answer is made automatically. Rule
readings and house-rule settings are in docs/rules-notes.md (Chope!); every
option is declared in :attr:`Chope.settings`.

Chance (OpenSpiel-style): a flip is a chance step whose outcomes are the card
kinds still in the deck, each with probability copies left / cards left;
:attr:`~Chope.decisions` are ``stop``, the bust's ``keep`` and the siam's
``lose``. Dealing the My Favourite cards is chance too (the next player in
seating order gets one of the cards not dealt yet, evenly), but the host's
list of legal events offers every food to every player still waiting, so it
does not give away which ones are gone. A player's Favourite is on their
:meth:`~Chope.private_view` only, until the end.

>>> g = Chope()
>>> s = g.setup(["ana", "bo"])
>>> s = g.apply(s, {"type": "flip", "card": "table:blue"})
>>> g.race_request(s).eligible
('bo',)
>>> s = g.apply(s, {"type": "race", "reason": "chope", "winner": "bo", "tied": []})
>>> g.scores(s)
{'ana': 0, 'bo': -1}
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

from .base import Game, RaceReason, RaceRequest, RulesError, Setting, copy_json, rank_by

DATA = json.loads((Path(__file__).parent / "data" / "chope.json").read_text())

BUSTING = ("If there are ever two Food cards of the same type face-up on the table, they bust "
           "and the player has to discard ALL BUT ONE (of their choice) of the face-up Food "
           "cards to the discard pile.")
SIAM = ("When a player flips over a Mynah card, the last player to place their Chope card "
        "(Drive-off side up; otherwise it doesn't count!) on the Mynah card and say 'Siam!' "
        "will lose a card.")

MYNAH = "mynah"
#: parts of a state that never change after setup (shared between copies)
FIXED = ("players", "colours", "foods", "rules", "favourite_cards", "total")
EVENTS = ("favourite", "flip", "stop", "keep", "lose", "race")


def kind_of(card: str) -> str:
    """``"food"``, ``"table"`` or ``"mynah"``: what sort of card an id names."""
    return card if card == MYNAH else card.split(":", 1)[0]


def label(card: str) -> str:
    """A card id as people say it: ``food:chicken-rice`` -> ``Chicken rice``."""
    if card == MYNAH:
        return "Mynah"
    kind, _, what = card.partition(":")
    if kind == "table":
        return f"{what.capitalize()} Table"
    return DATA["foods"].get(what, {}).get("name") or what.replace("-", " ").capitalize()


def best_seating(tables: list[str], food: list[str], colour: str, kinds: dict[str, str],
                 own_colour_bonus: str = "matched", unmatched_food_scores: bool = False) -> dict:
    """The best way to seat a player's food at their tables, and its points.

    ``tables`` and ``food`` are card ids, ``kinds`` maps a food type to
    ``"main"`` or ``"side"``. A used Table holds exactly one Main and at most
    one Side; each seated Food scores 1, a used Table of the player's colour 1
    more, an unused Table -1.

    Why this is optimal: food cards are all worth 1 and tables differ only by
    colour, so only counts matter. Using k tables scores
    ``k + min(k, sides) + min(k, own) - (tables - k)`` (own-colour tables used
    first), which grows with k; so use ``k = min(tables, mains)`` tables, own
    colour first, and put a Side on each while Sides last. The tests check
    this against a brute force over every assignment.
    """
    own = [t for t in tables if t == f"table:{colour}"]
    order = own + [t for t in tables if t != f"table:{colour}"]
    mains = [f for f in food if kinds[f[5:]] == "main"]
    sides = [f for f in food if kinds[f[5:]] == "side"]
    used = min(len(order), len(mains))
    plates = [{"table": order[i], "main": mains[i], "side": sides[i] if i < len(sides) else None}
              for i in range(used)]
    seated = used + min(used, len(sides))
    own_bonus = len(own) if own_colour_bonus == "any" else min(used, len(own))
    food_points = len(food) if unmatched_food_scores else seated
    leftover = len(tables) - used
    return {"food": food_points, "own_colour": own_bonus, "leftover_tables": -leftover,
            "total": food_points + own_bonus - leftover, "tables_used": used,
            "food_seated": seated, "plates": plates}


class Chope(Game):
    """The Chope! rules tracker (see the module docstring for the events)."""

    name = "chope"
    title = "Chope!"
    min_players = 2
    max_players = 6

    #: Every option of the game: component data (the rulebook gives only totals),
    #: setup, and the house rules where tables may read the rulebook differently
    #: (docs/rules-notes.md (Chope!) says why each default was chosen).
    settings = (
        Setting("tables", DATA["tables"], "data", label="Table cards by colour", assumed=True,
                rule="24 Table cards",
                help="colour -> number of Table cards; assumed: the 6 player colours, 4 each"),
        Setting("mynahs", DATA["mynahs"], "int", minimum=0, label="Mynah cards",
                rule="8 Mynah cards"),
        Setting("foods", DATA["foods"], "data", label="Food cards", assumed=True,
                rule="60 Food cards: Mains (on tray) and Sides (on napkins)",
                help="food -> {name, kind: main or side, copies}; assumed: 12 dishes, 5 copies "
                     "each, 7 Mains and 5 Sides"),
        Setting("favourite_cards", DATA["favourite_cards"], "data", label="My Favourite cards",
                assumed=True, rule="6 My Favourite cards",
                help="the food each My Favourite card shows; assumed: 6 different foods"),
        Setting("colours", {}, "data", label="Player colours",
                rule="Give each player 1 Chope card in their colour.",
                help="player -> Table colour; players not named get the first free colour"),
        Setting("starting_player", None, "player", label="Starting player",
                rule="Determine a starting player, preferably the player who has visited "
                     "Singapore most recently.",
                help="empty: the first player listed"),
        Setting("unmatched_food_scores", False, "bool", label="Unmatched Food scores 1 point",
                rule="All Food cards score 1 point each.",
                help="off: only Food seated at a Table scores"),
        Setting("own_colour_bonus", "matched", "choice", ("matched", "any"),
                label="Own-colour Table bonus",
                rule="Each Table card in your own colour gains you 1 additional point.",
                choice_labels=("only a Table that seats a Main", "every own-colour Table")),
        Setting("bust_kept_card", "claim", "choice", ("claim", "stays"),
                label="After a bust, the kept card", rule=BUSTING,
                choice_labels=("goes to the buster's scoring area", "stays face-up")),
        Setting("bust_ends_turn", True, "bool", label="A bust ends the turn", rule=BUSTING),
        Setting("siam_tie", "nobody", "choice", ("nobody", "all"),
                label="Tie for last in a Siam!", rule=SIAM,
                choice_labels=("nobody loses a card", "every tied player loses a card")),
        Setting("siam_empty_type", "other", "choice", ("other", "spared"),
                label="Siam! loser with none of the type they have less of",
                rule="They lose the type, either Table or Food, that they have LESS of (of their "
                     "choose if equal).",
                choice_labels=("loses a card of the other type", "loses nothing")),
        Setting("favourite_food", False, "bool", label="Favourite Food variant",
                rule="Upsize your Chope experience with these My Favourite cards!"),
    )
    race_reasons = (
        RaceReason("chope", "first-press", "Chope!", winner="{winner} chopes it!",
                   ineligible="not eligible",
                   help="A Table card: the first OTHER player to press takes it; a tie or "
                        "nobody pressing discards it."),
        RaceReason("siam", "last-press", "Siam!", loser="{loser} was last: Siam!",
                   ineligible="not eligible",
                   help="A Mynah card: the last player to press loses a card."),
    )
    score_unit = "points"
    hidden_information = True        # each player's My Favourite card
    #: what JSON type each key of each event takes (checked before the rules)
    event_shapes = {"favourite": {"player": "str", "food": "str"}, "flip": {"card": "str"},
                    "stop": {}, "keep": {"card": "str"},
                    "lose": {"player": "str", "card": "str"}}

    # -- setup ----------------------------------------------------------
    def _setup(self, players: list[str], options: dict) -> dict:
        tables, foods, mynahs = options["tables"], options["foods"], options["mynahs"]

        def count(n, what):
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise RulesError(f"{what} must be a whole number >= 0, not {n!r}", "components")
            return n

        if not isinstance(tables, dict) or not isinstance(foods, dict):
            raise RulesError("'tables' and 'foods' must be objects", "components")
        total = {f"table:{c}": count(n, f"tables[{c!r}]") for c, n in tables.items()}
        total[MYNAH] = mynahs
        food_info = {}
        for f, info in foods.items():
            if not isinstance(info, dict) or info.get("kind") not in ("main", "side"):
                raise RulesError(f"food {f!r} must say whether it is a 'main' or a 'side'",
                                 "components")
            total[f"food:{f}"] = count(info.get("copies"), f"copies of {f!r}")
            food_info[f] = {"name": info.get("name") or f.replace("-", " ").capitalize(),
                            "kind": info["kind"]}
        if not sum(total.values()):
            raise RulesError("the Hawker Centre Deck is empty", "components")

        colours = options["colours"]
        if not isinstance(colours, dict) or set(colours) - set(players) or not all(
                isinstance(c, str) for c in colours.values()):
            raise RulesError("'colours' must map players to colours", "setup")
        free = [c for c in tables if c not in colours.values()]
        colours = {p: colours.get(p) or free.pop(0) for p in players if colours.get(p) or free}
        if len(colours) < len(players) or len(set(colours.values())) < len(players) \
                or set(colours.values()) - set(tables):
            raise RulesError("each player needs their own colour, one of the Table colours "
                             f"{list(tables)}", "setup")
        start = options["starting_player"] or players[0]
        favourite_cards = options["favourite_cards"]
        if not isinstance(favourite_cards, list) or not all(
                isinstance(f, str) for f in favourite_cards):
            raise RulesError("'favourite_cards' must list food types", "favourite food variant")
        if options["favourite_food"] and (set(favourite_cards) - set(foods) or
                                           len(favourite_cards) < len(players)):
            raise RulesError("the My Favourite cards must show known foods, one per player",
                             "favourite food variant")
        return {
            "players": players, "colours": colours, "foods": food_info,
            "rules": {st.name: options[st.name] for st in self.settings
                      if st.kind in ("bool", "choice")}, "favourite_cards": favourite_cards,
            "total": total, "deck": dict(total), "face_up": [], "contested": None,
            "race": None, "choices": [], "turn": players.index(start),
            "starting_player": start, "flips_this_turn": 0, "last_flipper": None,
            "hands": {p: {"tables": [], "food": [], "mynahs": 0, "debt": 0} for p in players},
            "discard": {}, "favourites": {},
        }

    # -- transitions ----------------------------------------------------
    def copy_state(self, s: dict) -> dict:
        """A deep copy that shares the parts fixed at setup (:data:`FIXED`)."""
        return {k: v if k in FIXED else copy_json(v) for k, v in s.items()}

    def _apply(self, s: dict, ev: dict) -> dict:
        if ev["type"] not in EVENTS:
            raise RulesError(f"unknown Chope! event {ev['type']!r}; known: {EVENTS}", "events")
        getattr(self, "_on_" + ev["type"])(s, ev)
        self._settle(s)
        return s

    def _on_favourite(self, s, ev):
        if not s["rules"]["favourite_food"]:
            raise RulesError("My Favourite cards are only dealt in the Favourite Food variant",
                             "favourite food variant")
        p = ev.get("player")
        if p not in s["players"]:
            raise RulesError(f"{p!r} is not playing", "favourite food variant")
        if p in s["favourites"]:
            raise RulesError(f"{p} already has a My Favourite card: each player receives one",
                             "favourite food variant")
        if ev.get("food") not in s["favourite_cards"]:
            raise RulesError(f"no My Favourite card shows {ev.get('food')!r}",
                             "favourite food variant")
        s["favourites"][p] = ev["food"]

    def _on_flip(self, s, ev):
        self._expect_turn(s, "flip")
        card = ev.get("card")
        if not isinstance(card, str) or card not in s["total"]:
            raise RulesError(f"there is no {card!r} card in this Hawker Centre Deck", "components")
        if not s["deck"][card]:
            raise RulesError(f"the deck holds only {s['total'][card]} {self._name(s, card)} "
                             "card(s) and all are out: check the card", "components")
        s["deck"][card] -= 1
        s["flips_this_turn"] += 1
        s["last_flipper"] = self._turn(s)
        kind = kind_of(card)
        if kind == "food":
            if card in s["face_up"]:
                s["choices"].append({"kind": "keep", "player": self._turn(s), "why": "bust"})
            s["face_up"].append(card)
        else:
            s["contested"] = card
            s["race"] = {"reason": "chope" if kind == "table" else "siam",
                         "flipper": self._turn(s)}

    def _on_stop(self, s, ev):
        self._expect_turn(s, "stop")
        if not s["flips_this_turn"]:
            raise RulesError("flip at least one card before stopping", "game turn")
        claimed, s["face_up"] = s["face_up"], []
        self._gain(s, self._turn(s), claimed)
        self._pass_turn(s)

    def _on_race(self, s, ev):
        race = s["race"]
        if race is None:
            raise RulesError("no race is pending: races follow a Table or a Mynah card", "race")
        if race["reason"] == "chope" and ev.get("winner") == race["flipper"] \
                and ev.get("reason", "chope") == "chope":
            raise RulesError("only the OTHER players may chope a Table", "table cards")
        _, winner, loser, tied, _, _ = self.check_race(s, ev)
        card, s["contested"], s["race"] = s["contested"], None, None
        if race["reason"] == "chope":
            if winner is not None:
                self._gain(s, winner, [card])
            else:          # a tie nobody can tell apart, or nobody choped: discard
                self._discard(s, card)
            return
        losers = [loser] if loser else (tied if s["rules"]["siam_tie"] == "all" else [])
        for p in dict.fromkeys(losers):
            if self._cards(s, p):
                s["choices"].append({"kind": "lose", "player": p, "why": "siam"})
            else:          # nothing to lose now: the Mynah waits in their scoring area
                s["hands"][p]["debt"] += 1
                if card:
                    s["hands"][p]["mynahs"] += 1
                    card = None
        if card:
            self._discard(s, card)

    def _on_keep(self, s, ev):
        self._on_choice(s, ev, "keep")

    def _on_lose(self, s, ev):
        self._on_choice(s, ev, "lose")

    def _on_choice(self, s, ev, kind):
        choice = s["choices"][0] if s["choices"] and not s["race"] else None
        if choice is None or choice["kind"] != kind:
            raise RulesError(f"no {kind!r} choice is pending",
                             "bust" if kind == "keep" else "siam")
        if ev.get("player", choice["player"]) != choice["player"]:
            raise RulesError(f"it is {choice['player']} who chooses", choice["why"])
        options = self._choice_options(s, choice)
        if ev.get("card") not in options:
            raise RulesError(self._choice_rule(s, choice) + f"; {ev.get('card')!r} is not one "
                             f"of {options}", choice["why"])
        self._resolve(s, ev["card"])

    # -- the mechanics ----------------------------------------------------
    def _expect_turn(self, s, what):
        if s["rules"]["favourite_food"] and len(s["favourites"]) < len(s["players"]):
            raise RulesError("deal every player a My Favourite card before the first flip",
                             "favourite food variant")
        if s["race"]:
            raise RulesError(f"settle the {s['race']['reason']} race for {s['contested']} "
                             f"before the next {what}", "race")
        if s["choices"]:
            c = s["choices"][0]
            raise RulesError(f"{c['player']} must first choose a card to "
                             f"{c['kind']} ({c['why']})", c["why"])

    def _turn(self, s) -> str:
        return s["players"][s["turn"]]

    def _pass_turn(self, s):
        s["turn"] = (s["turn"] + 1) % len(s["players"])
        s["flips_this_turn"] = 0

    def _cards(self, s, p) -> list[str]:
        return s["hands"][p]["tables"] + s["hands"][p]["food"]

    def _discard(self, s, card):
        s["discard"][card] = s["discard"].get(card, 0) + 1

    def _gain(self, s, p, cards):
        """``p`` takes ``cards``; a Mynah debt falls due the next time they gain any."""
        if not cards:
            return
        for c in cards:
            s["hands"][p]["tables" if kind_of(c) == "table" else "food"].append(c)
        if s["hands"][p]["debt"] and not any(
                c["player"] == p and c["why"] == "debt" for c in s["choices"]):
            s["choices"].append({"kind": "lose", "player": p, "why": "debt"})

    def _choice_options(self, s, choice) -> list[str]:
        """The cards the pending choice may name (sorted ids)."""
        if choice["kind"] == "keep":
            return sorted(set(s["face_up"]))
        hand = s["hands"][choice["player"]]
        if choice["why"] == "debt":
            return sorted(set(hand["tables"] + hand["food"]))
        tables, food = hand["tables"], hand["food"]
        if len(tables) == len(food):
            return sorted(set(tables + food))            # equal: their choice
        fewer, more = (tables, food) if len(tables) < len(food) else (food, tables)
        if not fewer:                                     # none of the type they have less of
            return sorted(set(more)) if s["rules"]["siam_empty_type"] == "other" else []
        return sorted(set(fewer))

    def _choice_rule(self, s, choice) -> str:
        if choice["kind"] == "keep":
            return "after a bust, keep exactly ONE of the face-up Food cards"
        if choice["why"] == "debt":
            return f"{choice['player']} owes a card for a Mynah: lose a Table or Food card"
        hand = s["hands"][choice["player"]]
        tables, food = len(hand["tables"]), len(hand["food"])
        if tables == food:
            return (f"a siam loser loses the type they have LESS of, of their choice if equal "
                    f"(Tables {tables}, Food {food}: {choice['player']} chooses)")
        return (f"a siam loser loses the type they have LESS of (Tables {tables}, "
                f"Food {food})")

    def _resolve(self, s, card):
        """Answer the choice at the head of the queue with ``card``."""
        choice = s["choices"].pop(0)
        p = choice["player"]
        if choice["kind"] == "keep":
            rest = list(s["face_up"])
            rest.remove(card)
            for c in rest:
                self._discard(s, c)
            s["face_up"] = []
            if s["rules"]["bust_kept_card"] == "claim":
                self._gain(s, p, [card])
            else:
                s["face_up"] = [card]
            if s["rules"]["bust_ends_turn"]:
                self._pass_turn(s)
            return
        hand = s["hands"][p]
        hand["tables" if kind_of(card) == "table" else "food"].remove(card)
        self._discard(s, card)
        if choice["why"] == "debt":
            hand["debt"] -= 1
            if hand["mynahs"]:
                hand["mynahs"] -= 1
                self._discard(s, MYNAH)
            if hand["debt"] and self._cards(s, p):   # every debt falls due at once
                s["choices"].insert(0, dict(choice))

    def _settle(self, s):
        """Make forced choices, drop empty ones, and end the deck: when it runs
        out the last player takes the cards that were last drawn."""
        while not s["race"]:
            if s["choices"]:
                options = self._choice_options(s, s["choices"][0])
                if len(options) > 1:
                    return
                if options:
                    self._resolve(s, options[0])
                else:
                    s["choices"].pop(0)
            elif s["face_up"] and not any(s["deck"].values()):
                claimed, s["face_up"] = s["face_up"], []
                self._gain(s, s["last_flipper"], claimed)
            else:
                return

    # -- what may happen next ---------------------------------------------
    def _dealing(self, s) -> bool:
        return s["rules"]["favourite_food"] and len(s["favourites"]) < len(s["players"])

    def legal_events(self, s) -> list[dict]:
        """As the base class, except while My Favourite cards are dealt: every
        food for every player still waiting (listing only the cards not dealt
        yet would tell the host which ones the others hold)."""
        if self._dealing(s):
            return [{"type": "favourite", "player": p, "food": f} for p in s["players"]
                    if p not in s["favourites"] for f in s["favourite_cards"]]
        return super().legal_events(s)

    def decisions(self, s) -> list[dict]:
        """The pending bust (``keep``) or siam (``lose``) choice, else ``stop``
        once the player has flipped this turn."""
        if self.finished(s) or s["race"] or self._dealing(s):
            return []
        if s["choices"]:
            c = s["choices"][0]
            extra = {} if c["kind"] == "keep" else {"player": c["player"]}
            return [{"type": c["kind"], **extra, "card": card}
                    for card in self._choice_options(s, c)]
        return [{"type": "stop"}] if s["flips_this_turn"] else []

    def chance_outcomes(self, s) -> list[tuple[dict, Fraction]]:
        """The next flip: each kind of card left in the deck, with probability
        copies left / cards left. While My Favourite cards are dealt: the
        next player in seating order gets each card not dealt yet evenly."""
        if self.finished(s) or s["race"] or s["choices"]:
            return []
        if self._dealing(s):
            p = next(q for q in s["players"] if q not in s["favourites"])
            left = Counter(s["favourite_cards"])
            left.subtract(s["favourites"].values())
            left = +left
            n = sum(left.values())
            if not n:          # more players than cards (only by logging duplicates)
                left, n = Counter(s["favourite_cards"]), len(s["favourite_cards"])
            return [({"type": "favourite", "player": p, "food": f}, Fraction(k, n))
                    for f, k in left.items()]
        left = sum(s["deck"].values())
        return [({"type": "flip", "card": c}, Fraction(n, left))
                for c, n in s["deck"].items() if n]

    def race_request(self, s) -> RaceRequest | None:
        race = s["race"]
        if not race:
            return None
        seats = s["players"][s["turn"]:] + s["players"][:s["turn"]]  # clockwise from flipper
        if race["reason"] == "chope":
            return RaceRequest("first-press", tuple(seats[1:]), "chope", announced=False,
                               players=tuple(s["players"]), flipper=seats[0],
                               info={"card": s["contested"], "flipper": seats[0]})
        return RaceRequest("last-press", tuple(seats), "siam", announced=False,
                           players=tuple(s["players"]), info={"card": MYNAH, "flipper": seats[0]})

    # -- reading the state ----------------------------------------------
    def _seating(self, s, p) -> dict:
        r = s["rules"]
        hand = s["hands"][p]
        kinds = {f: info["kind"] for f, info in s["foods"].items()}
        out = best_seating(hand["tables"], hand["food"], s["colours"][p], kinds,
                           r["own_colour_bonus"], r["unmatched_food_scores"])
        out["favourite"] = None
        if r["favourite_food"] and self.finished(s):   # secret until the end
            out["favourite"] = hand["food"].count(f"food:{s['favourites'][p]}")
            out["total"] += out["favourite"]
        return out

    def scores(self, s) -> dict[str, int]:
        return {p: self._seating(s, p)["total"] for p in s["players"]}

    def current_player(self, s) -> str | None:
        """Who must act: the chooser of a pending choice, nobody during a race
        or the dealing of My Favourite cards, else the player whose turn it is."""
        if self.finished(s) or s["race"] or self._dealing(s):
            return None
        return s["choices"][0]["player"] if s["choices"] else self._turn(s)

    def finished(self, s) -> bool:
        return not (any(s["deck"].values()) or s["race"] or s["choices"] or s["face_up"])

    def ranking(self, s, scores: dict | None = None) -> list[list[str]]:
        """Most points; ties go to the most Table cards; still tied: play again."""
        sc = scores or self.scores(s)
        return rank_by(s["players"], lambda p: (sc[p], len(s["hands"][p]["tables"])))

    def bust_odds(self, s) -> dict | None:
        """Exact chance that the next flip busts (a Food of a type already
        face-up), from the flip's chance outcomes; None when the next step is
        not a flip. ``cards`` of the ``of`` cards left would bust."""
        busting = set(s["face_up"])
        p = self.chance_probability(s, lambda e: e["type"] == "flip" and e["card"] in busting)
        if p is None or self._dealing(s):
            return None
        left = sum(s["deck"].values())
        return {"cards": int(p * left), "of": left, "probability": round(float(p), 4)}

    def _name(self, s, card) -> str:
        return s["foods"][card[5:]]["name"] if kind_of(card) == "food" else label(card)

    def public_view(self, s) -> dict:
        """The scoreboard: everything on the table, favourites hidden until the end."""
        done = self.finished(s)
        variant = s["rules"]["favourite_food"]
        players = []
        seatings = {p: self._seating(s, p) for p in s["players"]}
        scores = {p: x["total"] for p, x in seatings.items()}
        for p in s["players"]:
            hand, seating = s["hands"][p], seatings[p]
            players.append({
                "name": p, "colour": s["colours"][p],
                "tables": list(hand["tables"]), "food": list(hand["food"]),
                "table_count": len(hand["tables"]), "food_count": len(hand["food"]),
                "mains": sum(s["foods"][f[5:]]["kind"] == "main" for f in hand["food"]),
                "sides": sum(s["foods"][f[5:]]["kind"] == "side" for f in hand["food"]),
                "mynahs": hand["mynahs"], "mynah_debt": hand["debt"],
                "favourite_dealt": p in s["favourites"] if variant else None,
                "favourite": s["favourites"].get(p) if variant and done else None,
                "score": seating.pop("total"), "score_detail": seating,
            })
        pending = None
        if s["race"]:
            pending = {"kind": "race", "reason": s["race"]["reason"], "card": s["contested"],
                       "flipper": s["race"]["flipper"], "race": self.race_request(s).to_json()}
        elif s["choices"]:
            c = s["choices"][0]
            pending = {"kind": c["kind"], "player": c["player"], "why": c["why"],
                       "rule": self._choice_rule(s, c),
                       "options": self._choice_options(s, c)}
        elif variant and len(s["favourites"]) < len(s["players"]):
            pending = {"kind": "favourites",
                       "waiting": [p for p in s["players"] if p not in s["favourites"]]}
        cards = {c: {"name": self._name(s, c), "kind": s["foods"][c[5:]]["kind"]
                     if kind_of(c) == "food" else kind_of(c)} for c in s["total"]}
        return {
            "game": self.name, "players": players,
            "turn": None if done else self._turn(s), "current_player": self.current_player(s),
            "starting_player": s["starting_player"], "flips_this_turn": s["flips_this_turn"],
            "face_up": list(s["face_up"]), "contested": s["contested"],
            "deck_left": {"count": sum(s["deck"].values()),
                          "cards": {c: n for c, n in s["deck"].items() if n}},
            "bust_odds": self.bust_odds(s),
            "discard": {"count": sum(s["discard"].values()), "cards": dict(s["discard"])},
            "pending": pending, "queued_choices": max(0, len(s["choices"]) - 1),
            "scores": scores, "finished": done, "ranking": self.ranking(s, scores),
            "rules": dict(s["rules"]), "cards": cards,
        }

    def host_view(self, s) -> dict:
        """The host is a player too: the console sees what the table sees
        (who has been dealt a My Favourite card, never which)."""
        return self.public_view(s)

    def private_view(self, s, player: str) -> dict:
        """What only ``player`` sees: their My Favourite card and the points
        it will add at the end (Food cards of that type in their scoring area)."""
        if player not in s["players"] or not s["rules"]["favourite_food"]:
            return {}
        food = s["favourites"].get(player)
        return {"favourite": food, "favourite_name": s["foods"][food]["name"] if food in
                s["foods"] else None,
                "favourite_points": s["hands"][player]["food"].count(f"food:{food}")
                if food else 0}

    def private_events(self, s, player: str) -> list[dict]:
        """A player logs their own My Favourite card from their page."""
        if self.finished(s) or not self._dealing(s) or player in s["favourites"] \
                or player not in s["players"]:
            return []
        return [{"type": "favourite", "player": player, "food": f}
                for f in dict.fromkeys(s["favourite_cards"])]

    def public_event(self, ev: dict) -> dict:
        """A My Favourite card is secret: the table sees who was dealt one,
        never which food."""
        if ev.get("type") == "favourite":
            return {k: v for k, v in ev.items() if k != "food"}
        return ev

    def describe(self, ev: dict) -> str:
        t = ev.get("type")
        if t == "favourite":                      # never name the food: it is secret
            return f"{ev.get('player')} is dealt a My Favourite card"
        card = label(ev["card"]) if isinstance(ev.get("card"), str) else ev.get("card")
        if t == "flip":
            return f"flip {card}"
        if t == "stop":
            return "stop and claim the face-up food"
        if t == "keep":
            return f"bust: keep {card}"
        if t == "lose":
            return f"{ev.get('player')} loses {card}"
        if t == "race" and ev.get("reason") == "chope":
            return (f"Chope! {ev['winner']} takes the table" if ev.get("winner") else
                    "Chope! tie: table discarded" if ev.get("tied") else "nobody choped")
        if t == "race" and ev.get("reason") == "siam":
            return (f"Siam! {ev['loser']} was last" if ev.get("loser") else
                    f"Siam! tie: {', '.join(ev.get('tied') or [])}" if ev.get("tied")
                    else "Siam! nobody was last")
        return super().describe(ev)

    def check_invariants(self, s) -> None:
        """Every card in exactly one place; face-up is all Food and busts only
        while a keep choice waits; a Mynah in a scoring area is a debt."""
        seen = Counter({c: n for c, n in s["deck"].items() if n})
        seen.update(s["face_up"])
        seen.update(s["discard"])
        if s["contested"]:
            seen[s["contested"]] += 1
        for p in s["players"]:
            hand = s["hands"][p]
            seen.update(hand["tables"] + hand["food"])
            seen[MYNAH] += hand["mynahs"]
            assert 0 <= hand["mynahs"] <= hand["debt"], (p, hand)
            assert all(kind_of(c) == "table" for c in hand["tables"])
            assert all(kind_of(c) == "food" for c in hand["food"])
        assert +seen == +Counter(s["total"]), (seen, s["total"])
        assert min(s["deck"].values(), default=0) >= 0
        assert all(kind_of(c) == "food" for c in s["face_up"])
        busted = len(set(s["face_up"])) < len(s["face_up"])
        assert not busted or any(c["kind"] == "keep" for c in s["choices"])
        assert bool(s["race"]) == bool(s["contested"])
