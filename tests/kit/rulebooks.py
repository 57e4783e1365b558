"""Each game's rulebook for the conformance test (tests/test_conformance.py,
the suite's one random-play loop): house rules and component data drawn its
own way (``options(rng, players)``) and its final scores straight from the
rulebook, written from the rulebook and not from the tracker
(``check(rep)``). :data:`HOOKS` maps a game's name to the pair; a game not
listed plays with random declared settings and the generic checks only.
The games' own test modules use these models too."""

from __future__ import annotations

import itertools
import json

from companion.games import get_game
from companion.games.chope import DATA as CHOPE_DATA
from companion.games.chopote import DATA as CHOPOTE_DATA
from companion.games.hawker import DATA as HAWKER_DATA
from companion.record.gamefile import Replay, header, replay_lines
from tests.kit.conformance import random_settings

CHOPE, CHOMP, CHOPOTE, HAWKER = (get_game(g) for g in ("chope", "chomp", "chopote", "hawker"))


# -- Chope! ---------------------------------------------------------------------------

def chope_rulebook_scores(rep, players):
    """Final scores straight from the rulebook's Scoring section, with a brute
    force over how many own-colour and other tables get a Main and how many
    of them a Side; holdings from the final scoreboard, favourites from the log."""
    opts = {**CHOPE.default_options(), **rep.options}
    kinds = {f: info["kind"] for f, info in opts["foods"].items()}
    favourite = {e["player"]: e["food"] for e in rep.events if e["type"] == "favourite"}
    out = {}
    for pl in CHOPE.public_view(rep.state)["players"]:
        tables, food = pl["tables"], pl["food"]
        own = tables.count(f"table:{pl['colour']}")
        mains = sum(kinds[f.split(":", 1)[1]] == "main" for f in food)
        sides = len(food) - mains
        best = None
        for a, b in itertools.product(range(own + 1), range(len(tables) - own + 1)):
            if a + b > mains:
                continue
            for sd in range(min(sides, a + b) + 1):
                pts = len(food) if opts["unmatched_food_scores"] else a + b + sd
                pts += a if opts["own_colour_bonus"] == "matched" else own
                pts -= len(tables) - a - b
                best = pts if best is None else max(best, pts)
        if opts["favourite_food"]:
            best += food.count(f"food:{favourite[pl['name']]}")
        out[pl["name"]] = best
    return out


def chope_options(rng, players):
    """Random house rules, colours and a smaller random deck (faster games)."""
    opts = {s.name: rng.choice(s.choices if s.kind == "choice" else (False, True))
            for s in CHOPE.settings if s.kind in ("bool", "choice")}
    colours = rng.sample(list(CHOPE_DATA["tables"]), len(players))
    opts["colours"] = dict(zip(players, colours))
    opts["starting_player"] = rng.choice(players)
    if rng.random() < 0.05:
        return opts                                    # the full 92-card deck
    opts["tables"] = {c: rng.randint(0, 3) for c in CHOPE_DATA["tables"]}
    opts["mynahs"] = rng.randint(0, 4)
    foods = rng.sample(sorted(CHOPE_DATA["foods"]), rng.randint(6, 12))
    opts["foods"] = {f: {**CHOPE_DATA["foods"][f], "copies": rng.randint(1, 3)} for f in foods}
    opts["favourite_cards"] = rng.sample(foods, 6)
    return opts


def chope_check(rep):
    """A random game's final scores are the rulebook's."""
    assert CHOPE.scores(rep.state) == chope_rulebook_scores(rep, rep.players)


# -- Chomp! -----------------------------------------------------------------------------

CHOMP_FOOD_CHAIN = {"shark": 6, "seal": 5, "big-fish": 4, "little-fish": 3, "shrimp": 2,
                    "plankton": 1}
CHOMP_DEFAULTS = CHOMP.default_options()


class ChompTable:
    """Chomp! played with real cards (a pile's top is its end), from the
    rulebook and the readings in docs/rules-notes.md (Chomp!), sharing no code with the
    tracker. With ``deck=None`` the cards are face-down "?" tokens and the
    identities come from the logged reveals."""

    def __init__(self, players, options, deck=None, rng=None):
        self.rules = {**CHOMP_DEFAULTS, **options}
        cards = deck or ["?"] * sum(self.rules["counts"].values())
        each = len(cards) // len(players)
        self.players, self.rng = list(players), rng
        self.pile = {p: cards[i * each:(i + 1) * each] for i, p in enumerate(players)}
        self.discard = {p: [] for p in players}
        self.centre = []                          # (owner, card, why)
        self.table, self.out, self.round = {}, {}, 1
        self.war, self.over, self.reason = len(players) == 2, False, None

    def hand(self, p):
        return len(self.pile[p]) + len(self.discard[p])

    def cards(self):
        return {p: self.hand(p) + (p in self.table) for p in self.players}

    def alive(self):
        return [p for p in self.players if p not in self.out]

    def top(self, p):
        if not self.pile[p]:
            self.pile[p], self.discard[p] = self.discard[p], []
            if self.rng:
                self.rng.shuffle(self.pile[p])
        return self.pile[p].pop() if self.pile[p] else None

    def turn_over(self, logged=None):
        self.table = {p: self.top(p) for p in self.alive()}
        if logged:
            assert set(logged) == set(self.table), (sorted(logged), self.alive())
            self.table = {p: logged[p].replace("_", "-") for p in self.table}
        turned = dict(self.table)
        up = set(turned.values())
        if "eel" in up:
            self.reason = "feeding-frenzy"
        elif self.war and "octopus" in up:
            self.finish_round("octopus")
        elif self.war:
            (a, x), (b, y) = self.table.items()
            if CHOMP_FOOD_CHAIN[x] == CHOMP_FOOD_CHAIN[y]:
                self.finish_round("war")
            else:
                self.collect(a if CHOMP_FOOD_CHAIN[x] > CHOMP_FOOD_CHAIN[y] else b, everything=True)
                self.finish_round()
        elif "octopus" in up:           # "no one can chomp and all cards played are set aside"
            self.finish_round("ink")
        else:
            self.reason = "chomp"
        return turned

    def may_chomp(self):
        if self.reason == "feeding-frenzy":
            return list(self.table)
        if self.reason == "ink-out":
            return []
        low = min(CHOMP_FOOD_CHAIN[k] for k in self.table.values())
        return [p for p, k in self.table.items() if CHOMP_FOOD_CHAIN[k] > low]

    def collect(self, winner, everything):
        mine = self.table[winner]
        for p, k in self.table.items():
            eats = everything or p == winner or CHOMP_FOOD_CHAIN.get(mine, 0) > CHOMP_FOOD_CHAIN.get(k, 99)
            self.discard[winner if eats else p].append(k)
        for owner, k, why in self.centre:
            back = (not everything and why == "tie" and owner != winner and owner not in self.out
                    and self.rules["tie_round_cards"] == "chompable"
                    and not CHOMP_FOOD_CHAIN.get(mine, 0) > CHOMP_FOOD_CHAIN.get(k, 99))
            self.discard[owner if back else winner].append(k)
        self.table, self.centre = {}, []

    def set_aside(self, why):
        self.centre += [(p, k, why) for p, k in self.table.items()]
        self.table = {}

    def late_ink_out(self, ev):
        """A slap in the Ink Out just set aside: the slapper's top card follows it."""
        bad = [p for p in ev.get("ineligible", ())]
        if self.rules["false_start_is_bad_chomp"]:
            bad += [p for p in ev.get("false_starts", ()) if p not in bad]
        for p in sorted(bad, key=self.players.index):
            penalty = self.top(p)
            if penalty is not None:
                self.centre.append((p, penalty, "bad"))
        for p in self.alive():
            if p not in self.table and not self.hand(p):
                self.out[p] = self.round - 1
        left = self.alive()
        if len(left) < 2:
            for p, k in self.table.items():
                self.discard[p].append(k)
            self.table = {}
            if left:
                self.discard[left[0]] += [k for _, k, _ in self.centre]
                self.centre = []
            self.over = True

    def race(self, ev):
        if self.reason is None and ev.get("reason") == "ink-out":
            return self.late_ink_out(ev)
        bad = []
        if not self.war:
            bad = [p for p in self.table if p in ev.get("ineligible", ())
                   or (self.rules["false_start_is_bad_chomp"] and p in ev.get("false_starts", ()))]
        for p in bad:
            self.centre.append((p, self.table.pop(p), "bad"))
            penalty = self.top(p)
            if penalty is not None:
                self.centre.append((p, penalty, "bad"))
        reason, self.reason = self.reason, None
        if ev.get("winner"):
            self.collect(ev["winner"], everything=reason == "feeding-frenzy")
        elif ev.get("tied"):
            self.set_aside("tie")
        elif reason == "ink-out":
            self.set_aside("ink")
        elif self.rules["no_chomp"] == "set_aside":
            self.set_aside("none")
        else:
            for p, k in self.table.items():
                self.discard[p].append(k)
            self.table = {}
        self.finish_round()

    def finish_round(self, then=None):
        self.set_aside(then)
        for p in self.alive():
            if not self.hand(p):
                self.out[p] = self.round
        self.round += 1
        left = self.alive()
        if len(left) < 2:
            if left:
                self.discard[left[0]] += [k for _, k, _ in self.centre]
                self.centre = []
            self.over = True
        elif len(left) == 2 and not self.war and not self.centre:
            self.over = self.rules["two_player_end"] == "count"
            self.war = not self.over
        elif then == "war":
            for p in left:
                for _ in range(min(2, self.hand(p) - 1)):
                    self.centre.append((p, self.top(p), "war"))

    def replay(self, events):
        turned = {}                     # this round's cards logged one player at a time
        for ev in events:
            if ev["type"] in ("reveal", "turn"):
                turned.update(ev["cards"] if ev["type"] == "reveal"
                              else {ev["player"]: ev["card"]})
                if set(turned) == set(self.alive()):
                    self.turn_over(turned)
                    turned = {}
            else:
                self.race(ev)
        return self


def chomp_card_counts(rep, players):
    """Chomp! has no points: a player's score is the cards she holds."""
    return ChompTable(players, rep.options).replay(rep.events).cards()


def chomp_options(rng, players):
    counts = {k: rng.randint(0, 3) for k in (*CHOMP_FOOD_CHAIN, "octopus", "eel")}
    counts["plankton"] += 2 * len(players)
    return {"counts": counts, "two_player_end": rng.choice(["count", "underwater_war"]),
            "false_start_is_bad_chomp": rng.random() < 0.3,
            "no_chomp": rng.choice(["return", "set_aside"]),
            "tie_round_cards": rng.choice(["all", "chompable"])}


def chomp_check(rep):
    """A random game conserves the cards and scores as the rulebook counts."""
    assert CHOMP.scores(rep.state) == chomp_card_counts(rep, rep.players)


# -- Hawker Wars ------------------------------------------------------------------------

def hawker_options(rng):
    return {"draws": rng.choice(["private", "private", "public"]),
            "poisoning_hold": rng.choice(["turn", "seconds"]),
            "event_shuffle": rng.choice(["random", "stacks"]),
            "copycat_bonus": rng.choice(["kept", "follows"]),
            "stop_trade": rng.choice(["market", "undone", "no"]),
            "repeat_actions": rng.random() < 0.8,
            "family_recipe_actions": rng.choice([1, 2]),
            "poisoning_loss": rng.choice(["discard", "box"]),
            "poisoning_chooser": rng.choice(["loser", "left"])}


def hawker_rulebook_scores(rep: Replay) -> dict:
    """Points from the cooked dishes, straight from the rulebook: dish points, +1 for a dish
    of one's own stall (the stall held when cooked; or now, with copycat_bonus follows)."""
    s = rep.state
    out = {}
    for p in rep.players:
        total = 0
        for d in s["cooked"][p]:
            total += HAWKER_DATA["dishes"][d["dish"]]["points"]
            stall = HAWKER_DATA["dishes"][d["dish"]]["stall"]
            if rep.options.get("copycat_bonus") == "follows":
                total += stall is not None and stall == s["stalls"][p]
            else:
                total += d["bonus"]
        out[p] = total
    return out


def hawker_check_game(rep: Replay) -> None:
    s = rep.state
    scores = HAWKER.scores(s)
    assert scores == hawker_rulebook_scores(rep)
    if s["winner"]:
        assert scores[s["winner"]] >= s["target"] and HAWKER.ranking(s)[0] == [s["winner"]]
    else:
        assert s["over"] == "no dishes"
    lines = [json.dumps(header("hawker", rep.players, rep.options))]
    lines += [json.dumps(e) for e in rep.events]
    again = replay_lines(lines)
    assert again.state == s
    assert HAWKER.public_view(again.state) == HAWKER.public_view(s)


def hawker_conformance_options(rng, players):
    return hawker_options(rng)


def hawker_check(rep: Replay) -> None:
    """Scores from the rulebook, the winner, the replay; the tracker's own
    draws never clashed."""
    hawker_check_game(rep)
    view = HAWKER.host_view(rep.state)
    assert not view["faults"] and not view["inconsistent"]


# -- Chopote ----------------------------------------------------------------------------

CHOPOTE_SHORT = {"track_length": 56, "corridor_length": 3,
                 "colours": CHOPOTE_DATA["board"]["colours"]}
CHOPOTE_BOARDS = [None, CHOPOTE_SHORT, {"track_length": 16, "corridor_length": 2,
                        "colours": [{"name": "red", "start": 0}, {"name": "blue", "start": 4},
                                    {"name": "yellow", "start": 8},
                                    {"name": "green", "start": 12}]}]


def chopote_options(rng, players):
    """Declared house rules, on the full board or a smaller one."""
    options = random_settings(CHOPOTE, rng, players)
    board = rng.choice(CHOPOTE_BOARDS)
    return {**options, "board": board} if board else options


def chopote_check(rep) -> None:
    """One winner, home with all four bottles: 4 points, ranked first."""
    s = rep.state
    winner = CHOPOTE.public_view(s)["winner"]
    assert CHOPOTE.scores(s)[winner] == 4 and CHOPOTE.ranking(s)[0] == [winner]
    assert sum(v == 4 for v in CHOPOTE.scores(s).values()) == 1
    last = [e for e in rep.events if e["type"] == "move"][-1]
    assert last["to"] == "home" and last["player"] == winner


#: game name -> (options(rng, players), check(rep))
HOOKS = {"chope": (chope_options, chope_check), "chomp": (chomp_options, chomp_check),
         "hawker": (hawker_conformance_options, hawker_check),
         "chopote": (chopote_options, chopote_check)}
