"""Game nights in a store, for the statistics tests and bench: games of
announced first-press races with known GOs, drawn like tests/kit/pacesim.py
draws reactions (a floor + a log-normal), with undone races among them."""

from __future__ import annotations

import math
import random

from companion.record.store import Store

MS = 1_000_000
DAY_NS = 86_400 * 1_000_000_000
#: each player's reaction: floor ms, log-normal median ms (pacesim's way)
PEOPLE = {"Ana": (100, 170), "Bo": (120, 200), "Cy": (150, 315), "Dee": (100, 240)}


def race_event(rng: random.Random, players, go_ns: int, sigma: float = 0.3) -> dict:
    """One announced first-press race as the table logs it."""
    order = []
    for p in players:
        floor, median = PEOPLE.get(p, (100, 200))
        t = go_ns + int((floor + rng.lognormvariate(math.log(median), sigma)) * MS)
        if rng.random() < 0.03:
            t = go_ns + rng.randrange(20, 99) * MS       # an anticipation
        order.append((t, p))
    order.sort()
    t0 = order[0][0]
    spec = {"kind": "first-press", "players": list(players), "eligible": list(players),
            "arm_ns": go_ns, "deadline_ns": go_ns + 5_000 * MS, "tie_window_ns": 0,
            "debounce_ns": 20 * MS, "lockout_ns": None}
    return {"type": "race", "reason": "grab", "spec": spec, "kind": "first-press",
            "winner": order[0][1], "loser": None, "tied": [],
            "order": [{"player": p, "t_ns": t, "offset_ns": t - t0, "offset_us": (t - t0) / 1e3}
                      for t, p in order],
            "false_starts": [], "ineligible": [], "no_edge": [], "announced": True,
            "virtual": False}


def _ended(events, players) -> dict:
    """A game's summary: its players ranked by the races they won."""
    wins = {p: 0 for p in players}
    for e in events:
        if e.get("type") == "race":
            wins[e["winner"]] += 1       # the undone ones too: a toy score
    ranking: list[list[str]] = []
    for p in sorted(players, key=lambda p: -wins[p]):
        if ranking and wins[ranking[-1][0]] == wins[p]:
            ranking[-1].append(p)
        else:
            ranking.append([p])
    return {"scores": wins, "ranking": ranking, "finished": True}


def fill(store: Store, races: int, per_game: int = 50, seed: int = 35,
         players=("Ana", "Bo", "Cy", "Dee"), first_night_ns: int = 1_750_000_000 * 10**9,
         undo_every: int = 25, finished: bool = False) -> int:
    """``races`` effective races in games of ``per_game``, a game a night;
    every ``undo_every``-th race is logged twice with an undo between (the
    undone one never counts); ``finished``: each game ends, its players
    ranked by the races they won (their score). Returns the number of games."""
    rng = random.Random(seed)
    games = 0
    left = races
    while left > 0:
        n = min(per_game, left)
        events, go = [], 100 * 10**9
        for i in range(n):
            events.append({"type": "flip", "side": "heads"})
            if undo_every and i % undo_every == undo_every - 1:
                events += [race_event(rng, players, go), {"type": "undo"}]
            events.append(race_event(rng, players, go))
            go += 10 * 10**9
        store.create_game("coinrace", [{"name": p} for p in players], {},
                          created_ns=first_night_ns + games * DAY_NS, events=events,
                          make_current=False, summary=_ended(events, players) if finished
                          else None)
        games += 1
        left -= n
    return games
