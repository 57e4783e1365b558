"""Chomp! (Gamewright): slap the lowest creature on the food chain.

All players still in turn over the top card of their pile together. The first
to slap the lowest creature *chomps*: she takes every card her creature can
chomp (and her own); the other cards go to their owners' discard piles. An
Electric Eel starts a *Feeding Frenzy* (the first press takes every card); an
Octopus an *Ink Out* (no one may chomp: the tracker sets the cards aside at
once for the next round's winner, with no race; a slap in it, logged as the
``ink-out`` race with the slapper ``ineligible``, is a Bad Chomp). A press that may not chomp is a *Bad Chomp*: the chomper's card and
the top card of her pile go to the round's winner. Run out of cards and you are
*washed up*. The last two players count their cards or play *Underwater War*
(two players play it from the start).

The host cannot see face-down piles. The tracker keeps pile *sizes* and learns
identities when cards are turned over: for each pile and discard pile it keeps
the cards already seen there plus a number of unseen ones, and how many of
each creature nobody has seen yet. So a card that cannot be there (a fourth
Electric Eel, a Seal from a pile known to hold only Sharks) is refused.

Events (card ids: ``shark``, ``seal``, ``big-fish``, ``little-fish``,
``shrimp``, ``plankton``, ``octopus``, ``eel``)::

    {"type": "reveal", "cards": {"ana": "seal", "bo": "shark", "cy": "big-fish"}}
    {"type": "turn", "player": "ana", "card": "seal"}   # one player's card of a reveal
    {"type": "race", "reason": "chomp", "winner": "bo", "loser": null, "tied": [],
     "false_starts": [], "ineligible": ["cy"]}          # cy made a Bad Chomp

A ``reveal`` names the card of every player who has not turned one over yet
this round; ``turn`` logs one player's card, and the round goes on once every
player still in has turned one over (the two can be mixed). The console offers
``turn`` events (:meth:`Chomp.host_events`: one tap a card) and the race the
last one calls starts by itself (the race request's ``auto_start``).

Rule readings and house-rule settings are in docs/rules-notes.md (Chomp!);
every option is declared in :attr:`Chomp.settings`.

Chance. Turning cards over is the only chance in Chomp! (there are no
decisions: the rest is races). The probabilities are exact under what the
tracker knows: each face-down pile is in random order, and each creature
nobody has seen is equally likely to be in any face-down slot the tracker has
not identified (piles, discard piles, face-down cards in the centre, the
box). So player p, turning from a pile of n cards of which ``known[k]`` are
seen k's and u are unseen, shows k with probability
``(known[k] + u * unseen[k] / U) / n`` (U: every unseen card), and the
tracker's own update (a seen card is used first) gives the next player's odds.
A whole reveal's probability is the product over the players in seating
order. The joint distribution can be huge (six players, eight creatures:
8**6 reveals), so :meth:`Chomp.chance_outcomes` lists whole reveals only when
there are at most :data:`MAX_REVEALS` combinations; beyond that the reveal is
a sequence of exact per-player chance steps (``turn`` events, in seating
order). Either way every probability is an exact Fraction and they sum to 1.

>>> g = Chomp()
>>> s = g.setup(["ana", "bo", "cy", "di"])
>>> s = g.apply(s, {"type": "reveal", "cards": {"ana": "seal", "bo": "shark",
...                                            "cy": "big-fish", "di": "big-fish"}})
>>> g.race_request(s).eligible
('ana', 'bo')
>>> s = g.apply(s, {"type": "race", "reason": "chomp", "winner": "ana", "tied": []})
>>> [(p["name"], p["discard"]) for p in g.public_view(s)["players"]]
[('ana', 3), ('bo', 1), ('cy', 0), ('di', 0)]
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

from fractions import Fraction

from .base import (Game, RaceReason, RaceRequest, RulesError, Setting, check_verdict, copy_json,
                   rank_by)

#: A slap on a card you may not chomp up to this long after the winning slap
#: is still that round's Bad Chomp (docs/rules-notes.md, Bad Chomps): the
#: race request's ``info["out_of_turn_ms"]``, the referee's out-of-turn window.
BAD_CHOMP_AFTER_MS = 500

DATA = json.loads((Path(__file__).parent / "data" / "chomp.json").read_text())
CREATURES = {c["id"]: c for c in DATA["creatures"]}
#: Place on the food chain (Shark 6 ... Plankton 1); None: Octopus and Eel,
#: which nothing can chomp and which chomp nothing.
RANK = {k: c["rank"] for k, c in CREATURES.items()}
OCTOPUS, EEL = "octopus", "eel"
#: parts of a state that never change after setup (shared between copies)
FIXED = ("players", "rules", "deck")
ALIASES = {"electric-eel": EEL}

#: Up to this many combinations a reveal's chance outcomes are whole reveals;
#: beyond it, one player's card at a time (``turn`` events).
MAX_REVEALS = 512


def card_id(name) -> str:
    """The card id for a creature as the host may type it (``"Big Fish"`` -> ``"big-fish"``)."""
    key = None
    if isinstance(name, str):
        key = name.strip().lower().replace("_", "-").replace(" ", "-")
        key = ALIASES.get(key, key)
    if key not in RANK:
        raise RulesError(f"{name!r} is not a Chomp! card; the cards are {', '.join(RANK)}", "cards")
    return key


def chomps(a: str, b: str) -> bool:
    """Can creature ``a`` chomp ``b``? Nothing chomps its own kind or anything
    higher up the food chain, and nobody can chomp an Octopus or an Eel."""
    ra, rb = RANK[a], RANK[b]
    return ra is not None and rb is not None and ra > rb


# A stack is a face-down pile as the tracker knows it: the cards already seen
# in it (kind -> count) and how many unseen ones.
def _stack(unknown: int = 0) -> dict:
    return {"known": {}, "unknown": unknown}


def _size(stack: dict) -> int:
    return stack["unknown"] + sum(stack["known"].values())


def _put(stack: dict, card: str | None) -> None:
    if card is None:
        stack["unknown"] += 1
    else:
        stack["known"][card] = stack["known"].get(card, 0) + 1


def _take(stack: dict, card: str) -> None:
    stack["known"][card] -= 1
    if not stack["known"][card]:
        del stack["known"][card]


def _name(card: str | None) -> str:
    return CREATURES[card]["name"] if card else "face-down card"


def _odds(pile: dict, unseen: dict) -> dict[str, Fraction]:
    """Creature -> the exact chance that the top card of ``pile`` is one,
    given the creatures nobody has seen (``unseen``; every unseen card is
    equally likely in any face-down slot): ``(known[k] + u * unseen[k] / U) / n``.
    Only the creatures that can be there are listed; the chances sum to 1."""
    weights, total = _weights(pile, unseen)
    return {k: Fraction(w, total) for k, w in weights.items()}


def _weights(pile: dict, unseen: dict) -> tuple[dict[str, int], int]:
    """:func:`_odds` as whole numbers over one denominator (``n * U``)."""
    n, u, pool = _size(pile), pile["unknown"], sum(unseen.values())
    pool = pool or 1                  # no unseen card: only seen ones can come
    known = pile["known"]
    weights = {}
    for k in RANK:
        w = known.get(k, 0) * pool + (u * unseen[k] if u else 0)
        if w:
            weights[k] = w
    return weights, n * pool


class Chomp(Game):
    name = "chomp"
    seat_draw = "turn"
    title = "Chomp!"
    #: what JSON type each key of each event takes (checked before the rules)
    event_shapes = {"reveal": {"cards": "{str:str}"}, "turn": {"player": "str", "card": "str"}}
    min_players = 2
    max_players = 6

    #: Every option: the deck (the rulebook does not publish it) and the house
    #: rules where tables may read the rulebook differently
    #: (docs/rules-notes.md (Chomp!) says why each default was chosen).
    settings = (
        Setting("counts", {k: c["count"] for k, c in CREATURES.items()}, "data",
                label="Cards of each creature", assumed=True,
                rule="remove the two Chomp! sequence cards, then shuffle and deal the "
                     "remaining cards face down, equally to each player",
                help="creature -> number of cards (replaces the whole deck); assumed: a "
                     "food-chain pyramid of 50 cards"),
        Setting("two_player_end", "count", "choice", ("count", "underwater_war"),
                label="The last two players",
                rule="The last 2 players can either count their cards and declare the one "
                     "with the most cards the winner, or they can switch to one of the "
                     "2-player games and continue playing.",
                choice_labels=("count their cards", "play Underwater War")),
        Setting("false_start_is_bad_chomp", False, "bool",
                label="Pressing before GO is a Bad Chomp",
                rule="Be quick - but not so quick that you comp when you shouldn't"),
        Setting("no_chomp", "return", "choice", ("return", "set_aside"),
                label="When nobody chomps, the cards",
                rule="If your card couldn't be chomped, place it in your discard pile.",
                choice_labels=("go to their owners' discard piles",
                               "wait in the centre for the next winner")),
        Setting("tie_round_cards", "all", "choice", ("all", "chompable"),
                label="After a tie, the next winner gets",
                rule="The first to slap the lowest card and shout \"Chomp!\" wins all the "
                     "cards from the tie round. She also gets any cards from the previous "
                     "round that she is allowed to chomp.",
                choice_labels=("all the tie-round cards", "the tie-round cards she can chomp")),
    )
    race_reasons = (
        RaceReason("chomp", "first-press", "Chomp!", announced=True,
                   winner="{winner} chomps!", ineligible="Bad Chomp", nobody="nobody chomps",
                   penalty="Bad Chomp: {names} put their turned card and the top card "
                           "of their pile in the centre",
                   help="The first player who may chomp the lowest creature wins the round; "
                        "a press by anyone else is a Bad Chomp."),
        RaceReason("feeding-frenzy", "first-press", "Feeding Frenzy!", announced=True,
                   winner="{winner} chomps!", ineligible="Bad Chomp", nobody="nobody chomps",
                   penalty="Bad Chomp: {names} put their turned card and the top card "
                           "of their pile in the centre",
                   help="An Electric Eel: the first press takes all the cards."),
        RaceReason("ink-out", "first-press", "Ink Out!", announced=True,
                   winner="{winner} chomps!", ineligible="Bad Chomp", nobody="nobody chomps",
                   penalty="Bad Chomp: {names} put their turned card and the top card "
                           "of their pile in the centre",
                   help="An Octopus: no one may chomp; the cards are set aside at once and a "
                        "press is a Bad Chomp (logged only if someone slapped)."),
    )
    score_unit = "cards"

    # -- setup ----------------------------------------------------------
    def _setup(self, players: list[str], options: dict) -> dict:
        counts = options["counts"]
        if not isinstance(counts, dict):
            raise RulesError("'counts' must map creatures to how many cards of each", "components")
        deck = dict.fromkeys(CREATURES, 0)
        for kind, n in counts.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise RulesError(f"counts[{kind!r}] must be a whole number >= 0", "components")
            deck[card_id(kind)] += n
        size = sum(deck.values())
        per = size // len(players)
        if per < 1:
            raise RulesError(f"{size} cards cannot be dealt to {len(players)} players", "set-up")
        return {
            "players": players, "rules": {st.name: options[st.name] for st in self.settings
                                          if st.kind in ("bool", "choice")},
            "deck": deck, "size": size, "box": size % len(players),
            "mode": "underwater_war" if len(players) == 2 else "multi",
            "round": 1, "phase": "reveal", "next": "round",
            "pile": {p: _stack(per) for p in players}, "discard": {p: _stack() for p in players},
            "unseen": dict(deck), "table": {}, "pot": [], "race": None,
            "eliminated": {}, "last": None, "winner": None,
        }

    # -- transitions ----------------------------------------------------
    def copy_state(self, s: dict) -> dict:
        """A deep copy that shares the parts fixed at setup (:data:`FIXED`)."""
        return {k: v if k in FIXED else copy_json(v) for k, v in s.items()}

    def _apply(self, s: dict, ev: dict) -> dict:
        handler = {"reveal": self._on_reveal, "turn": self._on_turn,
                   "race": self._on_race}.get(ev["type"])
        if handler is None:
            raise RulesError(f"unknown event {ev['type']!r}; Chomp! events are 'reveal', "
                             "'turn' and 'race'", "format")
        handler(s, ev)
        return s

    def _on_reveal(self, s, ev):
        if s["phase"] != "reveal":
            raise RulesError("settle the race for the cards on the table first", "game play")
        cards = ev.get("cards")
        if not isinstance(cards, dict):
            raise RulesError("'cards' must map each player to the card they turned over", "format")
        players = [p for p in self._active(s) if p not in s["table"]]
        turned = [p for p in cards if p in s["table"]]
        extra = [p for p in cards if p not in players and p not in turned]
        missing = [p for p in players if p not in cards]
        if extra:
            raise RulesError(f"{', '.join(map(str, extra))} cannot turn a card over: not in the "
                             "game or washed up", "game play")
        if turned:
            raise RulesError(f"{', '.join(turned)} already turned a card over this round",
                             "game play")
        if missing:
            raise RulesError("all players turn over their top card in unison; missing "
                             + ", ".join(missing), "game play")
        table = {p: card_id(cards[p]) for p in players}
        for p in players:
            self._turn_over(s, p, table[p])
        self._all_turned(s)

    def _on_turn(self, s, ev):
        """One player's card of this round's reveal."""
        if s["phase"] != "reveal":
            raise RulesError("settle the race for the cards on the table first", "game play")
        p = ev.get("player")
        if not isinstance(p, str) or p not in self._active(s):
            raise RulesError(f"{p!r} cannot turn a card over: not in the game or washed up",
                             "game play")
        if p in s["table"]:
            raise RulesError(f"{p} already turned a card over this round", "game play")
        self._turn_over(s, p, card_id(ev.get("card")))
        self._all_turned(s)

    def _all_turned(self, s):
        """Once every player still in has turned a card over, the round goes on."""
        players = self._active(s)
        if len(s["table"]) < len(players):
            return
        s["table"] = {p: s["table"][p] for p in players}      # seating order
        (self._start_race if s["mode"] == "multi" else self._underwater_war)(s)

    def _turn_over(self, s, p, card):
        """Take ``card`` from the top of p's pile, if the pile can hold one."""
        self._refill(s, p)
        pile = s["pile"][p]
        if pile["known"].get(card):
            _take(pile, card)       # keeping the unseen cards unseen keeps every possibility open
        elif pile["unknown"] and s["unseen"][card]:
            pile["unknown"] -= 1
            s["unseen"][card] -= 1
        elif not s["deck"][card]:
            raise RulesError(f"there is no {_name(card)} in this deck", "deck")
        elif not pile["unknown"]:
            seen = ", ".join(_name(k) for k in pile["known"]) or "nothing"
            raise RulesError(f"{p}'s pile holds only cards already seen ({seen}): no "
                             f"{_name(card)} can be in it", "deck")
        else:
            raise RulesError(f"all {s['deck'][card]} {_name(card)} cards are already "
                             "accounted for elsewhere", "deck")
        s["table"][p] = card

    def _start_race(self, s):
        """After a reveal (3+ players): who may chomp, and the race to call."""
        table = s["table"]
        kinds = set(table.values())
        players = list(table)
        lowest = None
        if EEL in kinds:            # "Octopus vs. Electric Eel: the Eel prevails"
            reason, eligible = "feeding-frenzy", players
        elif OCTOPUS in kinds:      # "no one can chomp and all cards played are set aside"
            last = self._last(s, "ink-out")
            self._set_aside(s, "ink-out")
            self._end_round(s, last, "ink-out")
            return
        else:
            lowest = min(kinds, key=RANK.__getitem__)
            reason = "chomp"
            eligible = [p for p in players if chomps(table[p], lowest)]
        s["race"] = {"reason": reason, "players": players, "eligible": eligible, "lowest": lowest}
        s["phase"] = "race"

    def _underwater_war(self, s):
        """After a reveal (2 players): the higher creature takes the cards."""
        table = s["table"]
        a, b = table
        ka, kb = table[a], table[b]
        if EEL in (ka, kb):
            s["race"] = {"reason": "feeding-frenzy", "players": [a, b], "eligible": [a, b],
                         "lowest": None}
            s["phase"] = "race"
        elif OCTOPUS in (ka, kb):
            last = self._last(s, "ink-out")
            self._set_aside(s, "ink-out")
            self._end_round(s, last, "next-card")
        elif RANK[ka] == RANK[kb]:
            last = self._last(s, "war")
            self._set_aside(s, "war")
            self._end_round(s, last, "war")
        else:
            winner = a if RANK[ka] > RANK[kb] else b
            last = self._last(s, "higher", winner)
            last["took"] = self._take_all(s, winner)
            self._end_round(s, last, "round")

    def _on_race(self, s, ev):
        if self._inked(s) and ev.get("reason") == "ink-out":
            self._late_ink_out(s, ev)
            return
        if s["phase"] != "race":
            raise RulesError("no race is pending: turn the cards over first", "race")
        race = s["race"]
        winner = ev.get("winner")
        if ev.get("reason", race["reason"]) == race["reason"] and isinstance(winner, str) \
                and winner in race["players"] and winner not in race["eligible"]:
            raise RulesError(f"{winner} may not chomp: {self._why_not(s, winner)}",
                             "who may chomp")
        _, winner, _, tied, false_starts, ineligible = self.check_race(
            s, ev, absent="turned no card over this round")
        if s["mode"] == "multi" and s["rules"]["false_start_is_bad_chomp"]:
            if winner in false_starts:
                raise RulesError(f"{winner}'s false start is a Bad Chomp "
                                 "(false_start_is_bad_chomp): no win", "bad chomp")
            if set(tied) & set(false_starts):
                raise RulesError("a tie is two or more players who may chomp pressing "
                                 "together; a false start is a Bad Chomp", "breaking a tie")
        bad = []
        if s["mode"] == "multi":
            fs_bad = s["rules"]["false_start_is_bad_chomp"]
            bad = [p for p in race["players"]
                   if p in ineligible or (fs_bad and p in false_starts)]
        last = self._last(s, race["reason"], winner, bad, tied)
        for p in bad:
            self._bad_chomp(s, p)
        if winner:
            if race["reason"] == "chomp":
                last["took"] = self._chomp(s, winner, last["cards"][winner])
            else:                   # Feeding Frenzy: "takes all the cards, even those higher"
                last["took"] = self._take_all(s, winner)
            self._end_round(s, last, "round")
            return
        if tied:
            why = last["result"] = "tie"
        elif race["reason"] == "ink-out":
            why = "ink-out"
        else:
            why = "no-chomp" if s["rules"]["no_chomp"] == "set_aside" else None
            last["result"] = "no-chomp"
        if why:
            self._set_aside(s, why)
        else:
            for p, card in s["table"].items():      # "If your card couldn't be chomped"
                _put(s["discard"][p], card)
            s["table"] = {}
        self._end_round(s, last, why if why in ("tie", "ink-out") else "round")

    @staticmethod
    def _inked(s) -> bool:
        """Whether the last round was an Ink Out the tracker set aside by
        itself and the next round's cards are still being turned over."""
        return s["phase"] == "reveal" and s["next"] == "ink-out" and bool(s["last"])

    def _late_ink_out(self, s, ev):
        """An Ink Out's race logged anyway (the tracker set the cards aside by
        itself): "nobody" is the same step again; a press in it ("slap a card
        in an Octopus Ink Out") is a Bad Chomp: the top card of her pile goes
        face down into the centre (her turned card is there already)."""
        last = s["last"]
        if ev.get("winner") is not None or ev.get("tied"):
            raise RulesError("no one can chomp in an Octopus Ink Out: no winner, no tie",
                             "who may chomp")
        _, _, _, false_starts, ineligible = check_verdict(
            ev, "first-press", list(last["cards"]), (), absent="turned no card over in that Ink Out")
        fs_bad = s["mode"] == "multi" and s["rules"]["false_start_is_bad_chomp"]
        bad = [p for p in last["cards"] if p in ineligible or (fs_bad and p in false_starts)]
        out = [p for p in bad if p in s["eliminated"]]
        if out:
            raise RulesError(f"{', '.join(out)} is washed up: no card left to pay a Bad Chomp",
                             "bad chomp")
        for p in bad:
            self._put_face_down(s, p, "bad-chomp")
            last["bad_chomps"].append(p)
        self._wash_up(s, last["round"])

    def _wash_up(self, s, round_no):
        """After a late Bad Chomp: a player with no card left (none turned
        over this round either) is washed up; the last one in takes all."""
        for p in self._active(s):
            self._refill(s, p)
            if p not in s["table"] and not self._hand(s, p):
                s["eliminated"][p] = round_no
        alive = self._active(s)
        if len(alive) <= 1:
            for p, card in s["table"].items():
                _put(s["discard"][p], card)
            s["table"] = {}
            self._game_over(s, alive)

    def _game_over(self, s, alive):
        """The last one in takes what is left; none: a draw."""
        if alive:
            self._take_all(s, alive[0])
            s["winner"] = alive[0]
        s["phase"], s["next"] = "over", None

    def _why_not(self, s, p):
        race = s["race"]
        if race["reason"] == "ink-out":
            return "no one can chomp in an Octopus Ink Out"
        card = s["table"][p]
        if sum(k == card for k in s["table"].values()) == 1:
            return f"the lowest card, the {_name(card)}, is theirs"
        return f"their {_name(card)} is the same as the lowest card"

    def _bad_chomp(self, s, p):
        """A Bad Chomp: the card she turned over and "the top card of your pile
        face down" wait in the centre for the round's (or the next) winner."""
        s["pot"].append({"owner": p, "card": s["table"].pop(p), "why": "bad-chomp",
                         "face_down": False})
        self._put_face_down(s, p, "bad-chomp")

    def _chomp(self, s, winner, card) -> int:
        """The winner takes what her ``card`` can chomp, her own card and the
        set-aside cards; the rest go back to the players who turned them over."""
        took = 0
        for p, k in s["table"].items():
            if p == winner or chomps(card, k):
                _put(s["discard"][winner], k)
                took += 1
            else:
                _put(s["discard"][p], k)
        for item in s["pot"]:
            owner = item["owner"]
            if (item["why"] == "tie" and s["rules"]["tie_round_cards"] == "chompable"
                    and owner != winner and owner not in s["eliminated"]
                    and not chomps(card, item["card"])):
                _put(s["discard"][owner], item["card"])
            else:
                _put(s["discard"][winner], item["card"])
                took += 1
        s["table"], s["pot"] = {}, []
        return took

    def _take_all(self, s, winner) -> int:
        """Every card on the table and set aside goes to ``winner``."""
        cards = list(s["table"].values()) + [item["card"] for item in s["pot"]]
        for card in cards:
            _put(s["discard"][winner], card)
        s["table"], s["pot"] = {}, []
        return len(cards)

    def _set_aside(self, s, why):
        s["pot"] += [{"owner": p, "card": k, "why": why, "face_down": False}
                     for p, k in s["table"].items()]
        s["table"] = {}

    def _put_face_down(self, s, p, why) -> bool:
        """Put the top card of p's pile face down in the centre; False if p has none.

        Nobody sees it, so unless the pile is known to hold only one kind of
        card the tracker forgets which seen cards are in that pile (they
        become unseen again): sound, at the cost of a little knowledge."""
        self._refill(s, p)
        pile = s["pile"][p]
        if not _size(pile):
            return False
        if not pile["unknown"] and len(pile["known"]) == 1:
            card = next(iter(pile["known"]))
            _take(pile, card)
        else:
            for k, n in pile["known"].items():
                s["unseen"][k] += n
                pile["unknown"] += n
            pile["known"] = {}
            pile["unknown"] -= 1
            card = None
        s["pot"].append({"owner": p, "card": card, "why": why, "face_down": True})
        return True

    def _refill(self, s, p):
        """When p's pile has run out, her shuffled discard pile becomes it."""
        if not _size(s["pile"][p]) and _size(s["discard"][p]):
            s["pile"][p], s["discard"][p] = s["discard"][p], _stack()

    def _last(self, s, result, winner=None, bad=(), tied=()) -> dict:
        """What the round showed and how it ended (the view's ``last_round``)."""
        return {"round": s["round"], "cards": dict(s["table"]), "result": result,
                "winner": winner, "took": 0, "bad_chomps": list(bad), "tied": list(tied)}

    def _end_round(self, s, last, next_):
        """Piles refilled, the washed up out, the end or Underwater War, the next reveal."""
        s["table"], s["race"], s["last"] = {}, None, last
        alive = []
        for p in self._active(s):
            self._refill(s, p)
            if self._hand(s, p):
                alive.append(p)
            else:                   # "If all your cards get chomped up ... you're washed up"
                s["eliminated"][p] = s["round"]
        s["round"] += 1
        if len(alive) <= 1:         # the last one in takes what is left; none: a draw
            self._game_over(s, alive)
            return
        if len(alive) == 2 and s["mode"] == "multi" and not s["pot"]:
            if s["rules"]["two_player_end"] == "count":
                a, b = (self._hand(s, p) for p in alive)
                s["winner"] = alive[0] if a > b else alive[1] if b > a else None
                s["phase"], s["next"] = "over", None
                return
            s["mode"] = "underwater_war"
        if next_ == "war":          # "each player places 2 cards face down and 1 card face up"
            for p in alive:
                for _ in range(min(2, self._hand(s, p) - 1)):
                    self._put_face_down(s, p, "war")
                self._refill(s, p)
        s["phase"], s["next"] = "reveal", next_

    # -- reading the state ----------------------------------------------
    def _active(self, s) -> list[str]:
        return [p for p in s["players"] if p not in s["eliminated"]]

    def _hand(self, s, p) -> int:
        return _size(s["pile"][p]) + _size(s["discard"][p])

    def chance_outcomes(self, s) -> list[tuple[dict, Fraction]]:
        """The cards that can come up next, with exact probabilities (see the
        module docstring): whole reveals when there are at most
        :data:`MAX_REVEALS` combinations and nobody has turned a card over
        yet, else the next player's ``turn`` (in seating order)."""
        if s["phase"] != "reveal":
            return []
        piles = self._next_piles(s)
        waiting = [p for p in self._active(s) if p not in s["table"]]
        if not s["table"]:
            total = 1
            for p in waiting:
                total *= len(_odds(piles[p], s["unseen"]))
            if total <= MAX_REVEALS:
                return self._reveal_outcomes(waiting, piles, s["unseen"])
        p = waiting[0]
        return [({"type": "turn", "player": p, "card": k}, q)
                for k, q in _odds(piles[p], s["unseen"]).items()]

    @staticmethod
    def _reveal_outcomes(players, piles, unseen) -> list[tuple[dict, Fraction]]:
        """Every whole reveal with its probability: the product, player by
        player in seating order, of each card's odds given the cards before
        it (a seen card is taken before an unseen one, as :meth:`_turn_over`)."""
        level = [((), unseen, 1, 1)]       # cards so far, unseen left, odds as num/den
        for p in players:
            pile, known, grown = piles[p], piles[p]["known"], []
            for combo, left, num, den in level:
                weights, total = _weights(pile, left)
                for k, w in weights.items():
                    after = left
                    if not known.get(k):
                        after = dict(left)
                        after[k] -= 1
                    grown.append((combo + (k,), after, num * w, den * total))
            level = grown
        return [({"type": "reveal", "cards": dict(zip(players, combo))}, Fraction(num, den))
                for combo, _, num, den in level]

    def _next_piles(self, s) -> dict:
        """The pile each player in will turn her next card from (her discard
        pile if the pile ran out)."""
        return {p: s["pile"][p] if _size(s["pile"][p]) else s["discard"][p]
                for p in self._active(s)}

    def _can_turn_over(self, s) -> dict[str, list[str]]:
        """The cards each player in may turn over next, one player at a time
        (two players cannot both turn over the last unseen Eel)."""
        return {p: [k for k in RANK if pile["known"].get(k) or (pile["unknown"] and s["unseen"][k])]
                for p, pile in self._next_piles(s).items()}

    def host_events(self, s) -> list[dict]:
        """The console's buttons: while cards are turned over, one ``turn``
        per player still to turn one and per creature that can be on top of
        her pile (seating order, then the food chain: one tap a card, in any
        order); after an Ink Out, a Bad Chomp for each of its players, in
        case one slapped; during a race, its verdicts."""
        if s["phase"] != "reveal":
            return self.legal_events(s)
        out = [{"type": "turn", "player": p, "card": k}
               for p, cards in self._can_turn_over(s).items() if p not in s["table"]
               for k in cards]
        if self._inked(s):
            out += [{"type": "race", "reason": "ink-out", "winner": None, "loser": None,
                     "tied": [], "false_starts": [], "ineligible": [p]}
                    for p in s["last"]["cards"] if p not in s["eliminated"]]
        return out

    def race_request(self, s) -> RaceRequest | None:
        if s["phase"] != "race":
            return None
        race = s["race"]
        return RaceRequest("first-press", tuple(race["eligible"]), race["reason"],
                           announced=True, players=tuple(race["players"]), auto_start=True,
                           info={"round": s["round"], "mode": s["mode"],
                                 "lowest": race["lowest"], "cards": dict(s["table"]),
                                 # a wrong slap just after the winning one is
                                 # still a Bad Chomp (docs/rules-notes.md)
                                 "out_of_turn_ms": BAD_CHOMP_AFTER_MS})

    def _held(self, s, p) -> int:
        return self._hand(s, p) + (p in s["table"])

    def scores(self, s) -> dict[str, int]:
        """Cards each player holds: pile, discard pile and her card on the table."""
        return {p: self._held(s, p) for p in s["players"]}

    def current_player(self, s) -> str | None:
        return None                 # everyone turns over together

    def finished(self, s) -> bool:
        return s["phase"] == "over"

    def ranking(self, s) -> list[list[str]]:
        """Players in by cards held, then the washed up, the later out the better."""
        def key(p):
            if p in s["eliminated"]:
                return (0, s["eliminated"][p])
            return (1, self._held(s, p))
        return rank_by(s["players"], key)

    def public_view(self, s) -> dict:
        race = s["race"] or {}
        eligible = race.get("eligible", [])
        return {
            "mode": s["mode"],
            "round": s["round"],
            "phase": s["phase"],
            "next": s["next"],
            "status": self._status(s),
            "players": [{
                "name": p,
                "pile": _size(s["pile"][p]),
                "discard": _size(s["discard"][p]),
                "cards": self._held(s, p),
                "card": s["table"].get(p),
                "may_chomp": p in eligible,
                "eliminated": p in s["eliminated"],
                "eliminated_round": s["eliminated"].get(p),
            } for p in s["players"]],
            "revealed": dict(s["table"]),
            "lowest": race.get("lowest"),
            "may_chomp": list(eligible),
            "feeding_frenzy": race.get("reason") == "feeding-frenzy",
            "ink_out": self._inked(s),          # the last round's cards, inked, wait aside
            "race": self.race_request(s).to_json() if race else None,
            "set_aside": [{"owner": i["owner"], "card": None if i["face_down"] else i["card"],
                           "face_down": i["face_down"], "why": i["why"]} for i in s["pot"]],
            "set_aside_count": len(s["pot"]),
            "out_of_play": s["box"],
            "deck": dict(s["deck"]),
            "cards": {k: {"name": c["name"], "rank": c["rank"]} for k, c in CREATURES.items()},
            "deck_size": s["size"],
            "last_round": copy.deepcopy(s["last"]),
            "finished": s["phase"] == "over",
            "winner": s["winner"],
            "rules": dict(s["rules"]),
        }

    def host_view(self, s) -> dict:
        """The public view plus what the tracker has worked out about the
        face-down cards: seen cards in each pile, creatures never seen yet."""
        view = self.public_view(s)
        view["unseen"] = {k: n for k, n in s["unseen"].items() if n}
        view["known"] = {p: {"pile": dict(s["pile"][p]["known"]),
                             "discard": dict(s["discard"][p]["known"])} for p in s["players"]}
        view["set_aside_cards"] = [i["card"] for i in s["pot"]]
        view["may_turn_over"] = self._can_turn_over(s) if s["phase"] == "reveal" else {}
        return view

    def _status(self, s) -> str:
        if s["phase"] == "over":
            alive = self._active(s)
            if s["winner"] and len(alive) == 1:
                return f"{s['winner']} has all the cards and wins"
            if s["winner"]:
                return f"{s['winner']} has the most cards and wins"
            return "A draw"
        race = s["race"]
        if race:
            if race["reason"] == "feeding-frenzy":
                return "Feeding Frenzy! The first to press takes all the cards"
            if race["reason"] == "ink-out":
                return "Ink Out! No one may chomp: a press is a Bad Chomp"
            if not race["eligible"]:
                return "No one can chomp: a press is a Bad Chomp"
            return (f"Chomp! {', '.join(race['eligible'])} may chomp the "
                    f"{_name(race['lowest'])}")
        status = {
            "tie": "Tie! Each player plays another card; the winner takes the tie round",
            "ink-out": "Ink Out! Each player plays another card; the winner takes the inked cards",
            "war": "War! Two cards face down each, now turn one face up",
            "next-card": "Octopus! Each turns over the next card; the higher takes all",
        }.get(s["next"])
        if status:
            return status
        war, pot = s["mode"] == "underwater_war", len(s["pot"])
        if pot:     # whole sentences: each is one message for the pages' languages
            return (f"Underwater War: turn over your top cards ({pot} cards in the centre go "
                    f"to the winner)" if war else
                    f"turn over your top cards ({pot} cards in the centre go to the winner)")
        return "Underwater War: turn over your top cards" if war else "turn over your top cards"

    def describe(self, ev: dict) -> str:
        if ev.get("type") == "reveal" and isinstance(ev.get("cards"), dict):
            return "turned over: " + ", ".join(
                f"{p} {CREATURES[k]['name'] if isinstance(k, str) and k in CREATURES else k}"
                for p, k in ev["cards"].items())
        if ev.get("type") == "turn":
            k = ev.get("card")
            return f"{ev.get('player')} turns over " + (
                CREATURES[k]["name"] if isinstance(k, str) and k in CREATURES else str(k))
        if ev.get("type") == "race":
            head = {"feeding-frenzy": "Feeding Frenzy! ", "ink-out": "Ink Out! "}.get(
                ev.get("reason"), "")
            if ev.get("winner"):
                line = f"{ev['winner']} chomps"
            elif ev.get("tied"):
                line = "tie: " + ", ".join(ev["tied"])
            else:
                line = "nobody chomps"
            if ev.get("ineligible"):
                line += "; Bad Chomp: " + ", ".join(ev["ineligible"])
            if ev.get("false_starts"):
                line += "; false start: " + ", ".join(ev["false_starts"])
            return head + line
        return super().describe(ev)

    def check_invariants(self, s) -> None:
        """Every card in one place; seen and unseen cards add up to the deck."""
        places = [s["pile"][p] for p in s["players"]] + [s["discard"][p] for p in s["players"]]
        total = sum(map(_size, places)) + len(s["table"]) + len(s["pot"]) + s["box"]
        assert total == s["size"], f"{total} cards in play, the deck has {s['size']}"
        seen, unknown = Counter(), s["box"]
        for stack in places:
            assert all(n > 0 for n in stack["known"].values()) and stack["unknown"] >= 0, stack
            seen.update(stack["known"])
            unknown += stack["unknown"]
        seen.update(s["table"].values())
        for item in s["pot"]:
            if item["card"] is None:
                unknown += 1
            else:
                seen[item["card"]] += 1
        for k, n in s["deck"].items():
            assert s["unseen"][k] >= 0 and seen[k] + s["unseen"][k] == n, (k, seen[k], s["unseen"])
        assert sum(s["unseen"].values()) == unknown, "unseen creatures != unseen cards"
        for p in s["eliminated"]:
            assert not self._hand(s, p) and p not in s["table"], f"{p} is washed up with cards"
        if s["phase"] == "race":
            assert set(s["table"]) == set(s["race"]["players"])
        elif s["phase"] == "reveal":              # some may have turned a card over already
            assert set(s["table"]) < set(self._active(s)) and s["race"] is None
        else:
            assert not s["table"] and s["race"] is None
        if s["phase"] == "reveal":
            assert len(self._active(s)) >= 2
            assert all(self._hand(s, p) for p in self._active(s) if p not in s["table"])
        if s["mode"] == "underwater_war" and s["phase"] != "over":
            assert len(self._active(s)) == 2
