"""Issue 29's figures H and I, played by simulated people on the real table
session (tracker, referee, arming, store in memory), on a clock the bench
moves (no sleeping), with a fixed seed.

The people: a reaction is 150 ms + a log-normal (median 195 ms above that,
sigma 0.69: median ~345 ms, p99 ~1.1 s); every edge reaches the Pi 0.05 to
1.5 ms after its stamp (fed in delivery order, each buzzer's edges in their
own order); 20 % of presses (and, in Food Poisoning, of releases) bounce: 2
or 4 extra edges 1 ms apart ending at the new level; 12 % of releases are
followed by a press 5 to 30 ms later. The truth is computed here from what
each person meant to do, with the rules as docs/rules-notes.md writes them.

**H. Chomp!'s Bad Chomps** (``chomp_*``): whole games of 3 to 5 players,
each card picked from what the tracker offers (weighted by the deck) and
logged by the host, the reveal race starting by itself (3 s countdown).
Each player who may chomp slaps at GO + a reaction; each player who may not
slaps with chance 0.15 at GO + a reaction (a Bad Chomp); 3 % of the
players jump the countdown first (a false start, 30 to 600 ms before GO).
Every other game runs with a 3 ms tie window (ties do happen there). The
rule (rules-notes, "Bad Chomps", "False starts"): the winner is the first
press at or after GO by a player who may chomp and pressed nothing before
GO; presses within the tie window of the first make a tie. A player who may
not chomp and slaps at or after GO, at most 500 ms after the first counted
press (with none counted: by the deadline, GO + 5 s), must be charged: in the
verdict's ``ineligible`` and in the tracker's ``last_round.bad_chomps``.
A slap of hers later than that belongs to no round and must not be charged,
nor a false start only (``false_start_is_bad_chomp`` is off by default);
a false starter who slaps again after GO has "pressed after GO" and is
charged, as the notes say ("pressed only before GO" is the false start).
Not counted, as not clear: a slap of such a player within 10 ms of GO or of
the window's end (a press settling inside a release's debounce window is
stamped at its last bounce, up to 4 ms late: the notes' debounce rule,
``chomp_bad_chomps_unclear``). Ink Out slaps are logged by hand on the host
console (no buzzer race), so they are not simulated; a Feeding Frenzy has
no player who may not chomp (only its winner is checked).

**I. Food Poisoning** (``food_poisoning_*``): Hawker Wars with 2, 3 or 4
players as tests/test_food_poisoning.py sets it up; the card turns up (the
host logs it), everyone grabs their buzzer at a reaction after it, the host
taps Start 0 to 20 s after the card (the first round 0 s, the second 20 s),
GO 3 s later. Each player lets go at GO + a reaction, or 25 % of them much
later (1.5 to 30 s); 8 % let go 0.5 to 250 ms before GO (a false start),
40 % of those grabbing again 5 to 30 ms later; 2 % never grab. The rule
(rules-notes, "Food Poisoning" and "Races"): a player not holding at GO
lets go at GO; otherwise her first release at or after GO counts; the
earliest loses; several at the same time (within the tie window, 0) tie
and nobody loses. A round is not counted when a re-grab lies within 10 ms
of GO (its stamp may move by the bounce, as above:
``food_poisoning_unclear``). Each round after the first undoes the last
round's race and card and logs the card again on the same table (setting
up a game costs ~17 ms), a fresh table every 50 rounds.
"""

from __future__ import annotations

import math
import random

from companion.games import get_game
from companion.races.edges import ButtonEdge, Edge
from companion.record.store import Store
from companion.table.session import TableSession
from tests.kit.helpers import Clock, run_until
from tests.kit.moments import hawker_dealt

MS = 1_000_000
S = 1_000 * MS
SEED = 29
CHOMP_ROUNDS = 2_000
POISONING_ROUNDS = 2_000
START_AFTER_S_MAX = 20
BOUNCE_P = 0.20
AGAIN_P = 0.12
#: presses this close to a boundary are not counted (see the docstring)
UNCLEAR_NS = 10 * MS

CHOMP = get_game("chomp")
CHOMP_COUNTS = CHOMP.default_options()["counts"]
CHOMP_NAMES = ("ana", "bo", "cy", "di", "ed")
BAD_CHOMP_P = 0.15
FALSE_START_P = 0.03
TIE_WINDOW_US = 3_000
BAD_CHOMP_AFTER_NS = 500 * MS       # companion.games.chomp.BAD_CHOMP_AFTER_MS, the rule

POISONING_NAMES = ("ana", "bo", "cy", "di")
COUNTDOWN_NS = 3 * S
LET_GO_EARLY_P = 0.08
REGRAB_P = 0.40
HOLD_LONG_P = 0.25
NEVER_GRAB_P = 0.02
ROUNDS_PER_TABLE = 50


class People:
    """The people at the table and their buzzers, from one seeded generator."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def react(self) -> int:
        return int((150 + self.rng.lognormvariate(math.log(195), 0.69)) * MS)

    def ms(self, lo: float, hi: float) -> int:
        return int(self.rng.uniform(lo, hi) * MS)

    def burst(self, t: int, pressed: bool, bounce_p: float = BOUNCE_P) -> list:
        """A change at ``t`` as the pin sees it: ``(t_ns, pressed)`` edges,
        bouncing (2 or 4 extra edges 1 ms apart, ending at ``pressed``)."""
        out = [(t, pressed)]
        if self.rng.random() < bounce_p:
            out += [(t + i * MS, pressed == (i % 2 == 0))
                    for i in range(1, self.rng.choice((2, 4)) + 1)]
        return out

    def slap(self, t: int) -> tuple[list, list[int]]:
        """A slap at ``t``: the raw edges, and the presses meant (the slap,
        and 12 % of the time another 5-30 ms after letting go)."""
        up = t + self.ms(60, 250)
        raw, presses = self.burst(t, True) + [(up, False)], [t]
        if self.rng.random() < AGAIN_P:
            again = up + self.ms(5, 30)
            presses.append(again)
            raw += self.burst(again, True) + [(again + self.ms(60, 250), False)]
        return raw, presses

    def deliveries(self, raw: dict, make) -> list[tuple[int, object]]:
        """Every buzzer's raw edges as ``(arrival, edge)`` sorted by arrival
        (ties in the order made): 0.05-1.5 ms after the stamp, one buzzer's
        in their order."""
        out = []
        for who, edges in raw.items():
            last = 0
            for t, pressed in sorted(edges):
                last = max(last, t + int(self.rng.uniform(0.05, 1.5) * MS))
                out.append((last, make(who, pressed, t)))
        out.sort(key=lambda d: d[0])
        return out


def races_logged(t: TableSession) -> list[dict]:
    return [e for _, e in t._log if e["type"] == "race"]


# -- H. Chomp!'s Bad Chomps ----------------------------------------------------

#: a round whose race logged no verdict: a wrong winner, nobody charged
NO_VERDICT = {"winner": "(no verdict)", "tied": [], "ineligible": []}


def chomp_table(rng: random.Random, games: int) -> tuple[TableSession, Clock, int]:
    """A new Chomp! game of 3 to 5 players; its clock and tie window (ns)."""
    clock = Clock()
    tie_us = TIE_WINDOW_US if games % 2 else 0
    t = TableSession(Store(":memory:"), clock=clock, settings={"tie_window_us": tie_us})
    t.new_game("chomp", [{"name": n} for n in CHOMP_NAMES[:rng.choice((3, 4, 5))]])
    return t, clock, tie_us * 1_000


def chomp_reveal(t: TableSession, clock: Clock, rng: random.Random) -> None:
    """The host logs one round's cards, a tap each, in a random order: each a
    card the tracker offers, weighted by how many the deck holds."""
    offered = [e for e in CHOMP.host_events(t.state) if e["type"] == "turn"]
    for _ in range(len({e["player"] for e in offered})):
        offered = [e for e in CHOMP.host_events(t.state) if e["type"] == "turn"]
        p = rng.choice(sorted({e["player"] for e in offered}))
        mine = [e for e in offered if e["player"] == p]
        ev = rng.choices(mine, [CHOMP_COUNTS[e["card"]] for e in mine])[0]
        clock.t += int(rng.uniform(0.3, 1.0) * S)
        t.log(ev)


def chomp_plan(people: People, req, go: int) -> tuple[dict, dict]:
    """Who slaps when: the raw edges and the presses meant, per player."""
    rng, raw, meant = people.rng, {}, {}
    for p in req.players:
        raw[p], meant[p] = [], []
        if rng.random() < FALSE_START_P:               # jumps the countdown
            r, m = people.slap(go - people.ms(30, 600))
            raw[p] += r
            meant[p] += m
        if p in req.eligible or rng.random() < BAD_CHOMP_P:
            at = go + people.react()
            if raw[p]:                                 # after her false start's edges
                at = max(at, max(e[0] for e in raw[p]) + people.ms(30, 80))
            r, m = people.slap(at)
            raw[p] += r
            meant[p] += m
    return raw, meant


def chomp_truth(req, meant: dict, go: int, deadline: int, tie_ns: int) -> dict:
    """The round as the rule has it (docs/rules-notes.md, Chomp!)."""
    counted = sorted((meant[p][0], p) for p in req.eligible
                     if meant[p] and go <= meant[p][0] <= deadline)
    close = [p for t, p in counted if t - counted[0][0] <= tie_ns] if counted else []
    end = counted[0][0] + BAD_CHOMP_AFTER_NS if counted else deadline
    end = min(end, deadline)
    out = {"winner": close[0] if len(close) == 1 else None,
           "tied": sorted(close) if len(close) > 1 else [],
           "bad": set(), "after_win": 0, "late": 0, "unclear": set()}
    for p in req.players:
        if p in req.eligible:
            continue
        after = [t for t in meant[p] if t >= go]
        if any(abs(t - go) < UNCLEAR_NS for t in meant[p]) or \
                (after and abs(after[0] - end) < UNCLEAR_NS):
            out["unclear"].add(p)
        elif after and after[0] <= end:
            out["bad"].add(p)
            out["after_win"] += bool(counted) and after[0] > counted[0][0]
        elif after:
            out["late"] += 1
    return out


def chomp_round(t: TableSession, clock: Clock, people: People, tie_ns: int) -> dict | None:
    """One reveal race played and judged; its tally, or None (no race)."""
    req = CHOMP.race_request(t.state)
    race = t.snapshot()["race"]
    if req is None or race is None:
        return None                                    # an Ink Out: nothing to race
    go, deadline = race["go_ns"], race["deadline_ns"]
    raw, meant = chomp_plan(people, req, go)
    todo = people.deliveries(raw, lambda p, pressed, ts: Edge(p, pressed, ts))
    before = len(races_logged(t))
    run_until(t, clock, max([deadline + S] + [d[0] + 100 * MS for d in todo]), todo)
    truth = chomp_truth(req, meant, go, deadline, tie_ns)
    logged = races_logged(t)
    ev = logged[-1] if len(logged) > before else NO_VERDICT
    took = set(CHOMP.public_view(t.state)["last_round"].get("bad_chomps") or [])
    charged = set(ev["ineligible"]) & took
    return {"rounds": 1, "bad_chomps": len(truth["bad"]),
            "bad_chomps_uncharged": len(truth["bad"] - charged),
            "bad_chomps_wrongly_charged": len((set(ev["ineligible"]) | took)
                                              - truth["bad"] - truth["unclear"]),
            "wrong_winner": (ev["winner"], sorted(ev["tied"] or [])) != (truth["winner"],
                                                                       truth["tied"]),
            "bad_chomps_after_win": truth["after_win"], "slaps_too_late": truth["late"],
            "bad_chomps_unclear": len(truth["unclear"]), "ties": bool(truth["tied"])}


def chomp_bench(rounds: int, rng: random.Random) -> dict:
    people, tally, games = People(rng), {}, 0
    t, clock, tie_ns = chomp_table(rng, games)
    while tally.get("rounds", 0) < rounds:
        if CHOMP.finished(t.state) or t.state["phase"] == "race":   # (no verdict: new table)
            games += 1
            t, clock, tie_ns = chomp_table(rng, games)
        chomp_reveal(t, clock, rng)
        got = chomp_round(t, clock, people, tie_ns)
        for k, v in (got or {}).items():
            tally[k] = tally.get(k, 0) + v
    return tally


# -- I. Food Poisoning ---------------------------------------------------------

def hawker_table(names, clock: Clock) -> TableSession:
    """Hawker Wars set up and dealt as tests/test_food_poisoning.py does, up
    to the turn's event check (the card is logged by :func:`poisoning_card`)."""
    t = TableSession(Store(":memory:"), clock=clock)
    hawker_dealt(t, names)
    return t


def poisoning_card(t: TableSession, again: bool) -> None:
    """The Food Poisoning card turns up (``again``: the last round's race and
    card undone first)."""
    if again:
        t.undo()                                      # the last round's race
        t.undo()                                      # and its card
    t.log({"type": "event_check", "event": "food-poisoning"})
    req = t.host_snapshot()["race_request"]
    assert req["kind"] == "first-release" and req["reason"] == "food-poisoning", req


def let_go(people: People, card: int, go: int) -> tuple[list, list]:
    """One player: grab at the card, maybe let go early, let go: raw edges and
    the changes meant, ``(t_ns, pressed)``."""
    rng = people.rng
    if rng.random() < NEVER_GRAB_P:
        return [], []
    grab = card + people.react()
    raw, meant = people.burst(grab, True), [(grab, True)]
    early = go - people.ms(0.5, 250)
    holding = True
    if rng.random() < LET_GO_EARLY_P and early > grab + 30 * MS:
        raw += people.burst(early, False)
        meant.append((early, False))
        holding = rng.random() < REGRAB_P
        if holding:
            again = early + people.ms(5, 30)
            raw += people.burst(again, True)
            meant.append((again, True))
    if holding:
        at = go + (people.ms(1_500, 30_000) if rng.random() < HOLD_LONG_P else people.react())
        at = max(at, meant[-1][0] + 30 * MS)
        raw += people.burst(at, False)
        meant.append((at, False))
        if rng.random() < AGAIN_P:                    # grabs again, lets go again
            again = at + people.ms(5, 30)
            raw += people.burst(again, True) + people.burst(again + people.ms(100, 600), False)
    return raw, meant


def poisoning_truth(meant: dict, go: int, tie_ns: int = 0) -> tuple[str | None, list, bool]:
    """Loser, tied and whether the round is clear, by the rule: not holding at
    GO is letting go at GO, else the first release at or after GO (the one
    who lets go first "lets go" at GO when she was not holding then)."""
    released, clear = [], True
    for p, changes in meant.items():
        before = [pressed for t, pressed in changes if t < go]
        clear = clear and not any(pressed and abs(t - go) < UNCLEAR_NS
                                  for t, pressed in changes[1:])
        if not (before and before[-1]):
            released.append((go, p))
            continue
        released += [(t, p) for t, pressed in changes if t >= go and not pressed][:1]
    released.sort()
    close = sorted(p for t, p in released if t - released[0][0] <= tie_ns) if released else []
    return (close[0] if len(close) == 1 else None), (close if len(close) > 1 else []), clear


def poisoning_round(t: TableSession, clock: Clock, names, people: People,
                    start_after_ns: int, again: bool, tally: dict) -> tuple[bool | None, bool]:
    """One Food Poisoning: (wrong, or None for no verdict at all; clear);
    ``tally`` counts its ties and whether it was decided at GO."""
    clock.t += 2 * S
    poisoning_card(t, again)
    card = clock.t
    start, go = card + start_after_ns, card + start_after_ns + COUNTDOWN_NS
    raw, meant = {}, {}
    for i, p in enumerate(names):
        raw[str(i + 1)], meant[p] = let_go(people, card, go)
    todo = people.deliveries(raw, lambda b, pressed, ts: ButtonEdge(b, pressed, ts))
    before = len(races_logged(t))
    todo = run_until(t, clock, start, todo)
    t.start_race()
    assert t.snapshot()["race"]["go_ns"] == go
    run_until(t, clock, max([go + 2 * S] + [d[0] + 100 * MS for d in todo]), todo)
    loser, tied, clear = poisoning_truth(meant, go)
    logged = races_logged(t)
    if len(logged) == before:
        return None, clear                            # no verdict at all
    ev = logged[-1]
    if clear:
        at_go = any(o["t_ns"] == go for o in ev.get("order") or ())
        for key, n in (("ties", bool(tied)), ("decided_at_go", at_go)):
            tally[key] = tally.get(key, 0) + n
    return (ev["loser"], sorted(ev["tied"])) != (loser, tied), clear


def poisoning_bench(rounds: int, rng: random.Random) -> dict:
    people = People(rng)
    tally = {"rounds": 0, "wrong": 0, "unclear": 0, "start_after_s_max": 0.0, "ties": 0,
             "decided_at_go": 0}
    tables: dict[int, list] = {}                     # players -> [table, clock, rounds]
    for n in range(rounds):
        k = rng.choice((2, 3, 4))
        if n % ROUNDS_PER_TABLE == 0 or k not in tables:
            clock = Clock()
            tables[k] = [hawker_table(POISONING_NAMES[:k], clock), clock, 0]
        t, clock, played = tables[k]
        after = {0: 0, 1: START_AFTER_S_MAX * S}.get(n, int(rng.uniform(0, START_AFTER_S_MAX) * S))
        wrong, clear = poisoning_round(t, clock, POISONING_NAMES[:k], people, after,
                                       played > 0, tally)
        tables[k][2] += 1
        if wrong is None:                             # no verdict: a fresh table next time
            tables.pop(k)
            wrong = True
        tally["start_after_s_max"] = max(tally["start_after_s_max"], after / S)
        if not clear:
            tally["unclear"] += 1
            continue
        tally["rounds"] += 1
        tally["wrong"] += wrong
    return tally


def run():
    rng = random.Random(SEED)
    chomp = chomp_bench(CHOMP_ROUNDS, rng)
    for key in ("bad_chomps_uncharged", "bad_chomps_wrongly_charged", "bad_chomps",
                "rounds", "wrong_winner", "bad_chomps_after_win", "slaps_too_late",
                "bad_chomps_unclear", "ties"):
        yield f"chomp_{key}", chomp.get(key, 0), "count"
    food = poisoning_bench(POISONING_ROUNDS, rng)
    yield "food_poisoning_wrong", food["wrong"], "count"
    yield "food_poisoning_rounds", food["rounds"], "count"
    yield "food_poisoning_start_after_s_max", food["start_after_s_max"], "s"
    yield "food_poisoning_unclear", food["unclear"], "count"
    yield "food_poisoning_decided_at_go", food["decided_at_go"], "count"
    yield "food_poisoning_ties", food["ties"], "count"
