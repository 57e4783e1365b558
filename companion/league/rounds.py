"""A convention's rounds: who sits at which table, and the standings.

Pure: no clock, no socket, no file. Everything is a function of the player
list, the rounds already played, their results and a seed, so a night's
pairings can be made again, identically, from what the league stored.

The games are for 2 to 6 players, so a round seats *pods* (one per table),
not pairs:

* :func:`pod_sizes`: how many pods and how big, as close to the target size
  as the game's range and the tables allow (a player left over sits out: a
  *bye*, which scores as a win);
* :func:`pair_round`: the round's pods. ``rotation`` (a small group, when the
  night has enough rounds for everyone to meet everyone) seats players so
  that nobody meets the same opponent again while someone new is left;
  ``swiss`` (a larger group) seats players of similar standing together and
  avoids repeat opponents where possible (fewest repeats first, then the
  closest standings). Ties are broken by a key drawn from the seed and the
  round's number, so the same seed gives the same night.
* :func:`standings`: points (a share of the opponents you finished above:
  first of four scores 1, second 2/3, third 1/3, last 0; a shared place
  splits), then the opponents' points as in Buchholz (per round, the mean
  of your pod's opponents' points, summed), then head-to-head among the
  players still tied; still equal: the same rank.

>>> r1 = pair_round(["ana", "bo", "cy", "di", "ed", "flo"], [], {}, number=1,
...                 size=(2, 6), target=3, tables=["t1", "t2"], seed=7)
>>> sorted(len(p.players) for p in r1.pods)
[3, 3]
>>> r1 == pair_round(["ana", "bo", "cy", "di", "ed", "flo"], [], {}, number=1,
...                  size=(2, 6), target=3, tables=["t1", "t2"], seed=7)
True
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from typing import Iterable, Mapping, Sequence

MODES = ("auto", "rotation", "swiss")
#: A bye scores as a game won.
BYE_POINTS = Fraction(1)
#: Passes of the swap search (each pass tries every swap once); it stops
#: earlier as soon as a pass improves nothing.
MAX_PASSES = 40
#: Rotation: seeded starting seatings tried; the best is kept.
ROTATION_STARTS = 12


class RoundsError(ValueError):
    """A convention that cannot be seated (too few players, bad sizes, a
    result that does not fit its pod)."""


@dataclass(frozen=True)
class Pod:
    """One table's players for a round, in seat order (the first starts)."""

    table: str
    players: tuple[str, ...]


@dataclass(frozen=True)
class Round:
    number: int
    mode: str
    pods: tuple[Pod, ...]
    byes: tuple[str, ...] = ()

    def pod_of(self, player: str) -> Pod | None:
        return next((p for p in self.pods if player in p.players), None)


@dataclass
class Standing:
    name: str
    points: Fraction = Fraction(0)
    buchholz: Fraction = Fraction(0)
    h2h: Fraction = Fraction(0)
    games: int = 0
    byes: int = 0
    places: list = field(default_factory=list)   # (round, place, pod size) per counted game
    rank: int = 0


# -- sizes ------------------------------------------------------------------

def check_players(players: Sequence[str]) -> list[str]:
    """The list as given; RoundsError for a blank or repeated name
    (names are compared ignoring case, as the tables' names are)."""
    out, seen = [], set()
    for p in players:
        if not isinstance(p, str) or not p.strip():
            raise RoundsError(f"player name {p!r} is blank or not text")
        key = p.strip().casefold()
        if key in seen:
            raise RoundsError(f"player {p.strip()!r} is listed twice")
        seen.add(key)
        out.append(p.strip())
    return out


def pod_sizes(n: int, size: tuple[int, int], target: int, tables: int | None = None
              ) -> list[int]:
    """Pod sizes for ``n`` players, largest first: each within ``size`` =
    (fewest, most) players, as close to ``target`` as possible, at most
    ``tables`` pods. Their sum is less than ``n`` only when nobody can seat
    everyone (the rest sit out).

    >>> pod_sizes(10, (2, 6), 4), pod_sizes(7, (3, 4), 4), pod_sizes(5, (3, 4), 4)
    ([4, 3, 3], [4, 3], [4])
    """
    lo, hi = size
    if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
        raise RoundsError(f"pod size range {size!r} must be two whole numbers, low <= high")
    if n < max(lo, 2):
        raise RoundsError(f"{n} player(s) cannot make a table: this game needs {max(lo, 2)}")
    if tables is not None and tables < 1:
        raise RoundsError("a round needs at least one table")
    target = min(max(target, lo), hi)
    seated = n if tables is None else min(n, tables * hi)
    while seated >= lo:
        k = -(-seated // target)
        k = max(k, -(-seated // hi))
        if tables is not None:
            k = min(k, tables)
        while k > 1 and seated < lo * k:
            k -= 1
        if lo * k <= seated <= hi * k:
            base, extra = divmod(seated, k)
            return [base + 1] * extra + [base] * (k - extra)
        seated -= 1
    raise RoundsError(f"{n} players cannot be seated in pods of {lo} to {hi}")


def choose_mode(n: int, rounds: int, target: int) -> str:
    """``rotation`` when ``rounds`` pods of ``target`` players can seat
    everyone with everyone (n - 1 <= rounds x (target - 1)), else ``swiss``."""
    return "rotation" if n - 1 <= rounds * max(target - 1, 1) else "swiss"


# -- results ------------------------------------------------------------------

def check_ranking(ranking, pod: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """``ranking`` (groups of names, best first, a group shares its place)
    if it ranks exactly the pod's players once each; RoundsError if not."""
    if not isinstance(ranking, (list, tuple)) or not all(
            isinstance(g, (list, tuple)) and g and all(isinstance(n, str) for n in g)
            for g in ranking):
        raise RoundsError("a ranking is a list of groups of names")
    names = [n for g in ranking for n in g]
    if sorted(names) != sorted(pod) or len(set(names)) != len(names):
        raise RoundsError(f"the ranking {names} does not rank the pod {sorted(pod)} once each")
    return tuple(tuple(g) for g in ranking)


def game_points(ranking: Sequence[Sequence[str]]) -> dict[str, Fraction]:
    """Each player's points for one game: the share of their opponents they
    finished above, a tie counting half.

    >>> {k: str(v) for k, v in game_points([["ana"], ["bo", "cy"], ["di"]]).items()}
    {'ana': '1', 'bo': '1/2', 'cy': '1/2', 'di': '0'}
    """
    n = sum(len(g) for g in ranking)
    out, above = {}, 0
    for group in ranking:
        below = n - above - len(group)
        for name in group:
            out[name] = (Fraction(below) + Fraction(len(group) - 1, 2)) / (n - 1) if n > 1 \
                else Fraction(0)
        above += len(group)
    return out


def _pairwise(ranking, a: str, b: str) -> Fraction:
    """a's score against b in one game: 1 above, 1/2 level, 0 below."""
    place = {n: i for i, g in enumerate(ranking) for n in g}
    return Fraction(1) if place[a] < place[b] else Fraction(1, 2) if place[a] == place[b] \
        else Fraction(0)


def standings(players: Sequence[str], rounds: Sequence[Round],
              results: Mapping[tuple[int, str], Sequence[Sequence[str]]]) -> list[Standing]:
    """Every player, best first (see the module doc). ``results`` maps
    (round number, table) to the ranking of that pod's counted game; a pod
    without one counts nothing yet."""
    rows = {p: Standing(p) for p in players}
    played: list[tuple[int, tuple, tuple]] = []       # (round, pod players, ranking)
    for rnd in rounds:
        for name in rnd.byes:
            if name in rows:
                rows[name].points += BYE_POINTS
                rows[name].byes += 1
        for pod in rnd.pods:
            ranking = results.get((rnd.number, pod.table))
            if ranking is None:
                continue
            played.append((rnd.number, pod.players, ranking))
            pts = game_points(ranking)
            place = 1
            for group in ranking:
                for name in group:
                    rows[name].points += pts[name]
                    rows[name].games += 1
                    rows[name].places.append((rnd.number, place, len(pod.players)))
                place += len(group)
    for _, pod, _ in played:
        for name in pod:
            others = [rows[o].points for o in pod if o != name]
            rows[name].buchholz += sum(others, Fraction(0)) / len(others)
    tied: dict[tuple, list[str]] = {}
    for r in rows.values():
        tied.setdefault((r.points, r.buchholz), []).append(r.name)
    for group in tied.values():
        if len(group) > 1:
            for _, pod, ranking in played:
                met = [p for p in pod if p in group]
                for a, b in combinations(met, 2):
                    rows[a].h2h += _pairwise(ranking, a, b)
                    rows[b].h2h += _pairwise(ranking, b, a)
    order = sorted(rows.values(), key=lambda r: (-r.points, -r.buchholz, -r.h2h,
                                                 r.name.casefold(), r.name))
    last = None
    for i, r in enumerate(order, start=1):
        key = (r.points, r.buchholz, r.h2h)
        if key != last:
            r.rank, last = i, key
        else:
            r.rank = order[i - 2].rank
    return order


def meetings(rounds: Iterable[Round]) -> Counter:
    """How many times each pair of players (a frozenset) shared a pod."""
    met: Counter = Counter()
    for rnd in rounds:
        for pod in rnd.pods:
            for a, b in combinations(pod.players, 2):
                met[frozenset((a, b))] += 1
    return met


def repeat_pairs(rnd: Round, before: Counter) -> int:
    """Pairs seated together in ``rnd`` who had met already."""
    return sum(1 for pod in rnd.pods for a, b in combinations(pod.players, 2)
               if before[frozenset((a, b))])


# -- pairing ------------------------------------------------------------------

class _Cost:
    """Costs of seatings: (repeat meetings: the pairs who met before, then
    how often, squared, so that nobody meets someone a third time while a
    second meeting would do; spread of
    standings, the pods' summed squared distance from their mean position,
    scaled to whole numbers). Tuples compare repeats first, so a seating
    never trades a repeat for closer standings."""

    def __init__(self, met: Counter, pos: Mapping[str, int] | None):
        self.met, self.pos = met, pos

    def total(self, pods: Sequence[Sequence[str]]) -> tuple[int, int]:
        scale = _lcm_sizes(pods)
        rep = sum(_repeat(self.met[frozenset((a, b))]) for pod in pods
                  for a, b in combinations(pod, 2))
        if self.pos is None:
            return rep, 0
        spread = 0
        for pod in pods:
            ps = [self.pos[p] for p in pod]
            spread += scale * sum(p * p for p in ps) - scale // len(ps) * sum(ps) ** 2
        return rep, spread


def _repeat(times: int) -> int:
    """A pair's cost for meeting again after ``times`` meetings: any repeat
    outweighs every difference in how often (the count of repeated pairs
    comes first), then the squares."""
    return ((1 << 40) + times * times) if times else 0


def _lcm_sizes(pods) -> int:
    from math import lcm
    return lcm(*(len(p) for p in pods)) if pods else 1


def _improve(pods: list[list[str]], cost: _Cost) -> list[list[str]]:
    """Swap players between pods while a swap lowers the cost (first
    improvement, in a fixed order: deterministic). Works on indices, with
    each swap's change computed from the two pods' sums."""
    names = sorted({p for pod in pods for p in pod})
    idx = {p: i for i, p in enumerate(names)}
    m = [[0] * len(names) for _ in names]
    for pair, times in cost.met.items():
        a, b = tuple(pair)
        if a in idx and b in idx:
            m[idx[a]][idx[b]] = m[idx[b]][idx[a]] = _repeat(times)
    pos = [cost.pos[p] if cost.pos is not None else 0 for p in names]
    ip = [[idx[p] for p in pod] for pod in pods]
    scale = _lcm_sizes(pods)
    sums = [sum(pos[x] for x in pod) for pod in ip]
    for _ in range(MAX_PASSES):
        better = False
        for i, j in combinations(range(len(ip)), 2):
            ki, kj = scale // len(ip[i]), scale // len(ip[j])
            for a in range(len(ip[i])):
                for b in range(len(ip[j])):
                    x, y = ip[i][a], ip[j][b]
                    mx, my = m[x], m[y]
                    rep = sum(my[z] - mx[z] for z in ip[i] if z != x) + \
                        sum(mx[z] - my[z] for z in ip[j] if z != y)
                    d = pos[y] - pos[x]
                    si, sj = sums[i] + d, sums[j] - d
                    spread = ki * (sums[i] ** 2 - si * si) + kj * (sums[j] ** 2 - sj * sj)
                    if (rep, spread) < (0, 0):
                        ip[i][a], ip[j][b] = y, x
                        sums[i], sums[j] = si, sj
                        better = True
        if not better:
            break
    return [[names[x] for x in pod] for pod in ip]


def _chunks(order: Sequence[str], sizes: Sequence[int]) -> list[list[str]]:
    out, i = [], 0
    for s in sizes:
        out.append(list(order[i:i + s]))
        i += s
    return out


def naive_round(players, rounds, results, *, number: int, size, target: int, tables,
                seed, mode: str = "auto", total_rounds: int | None = None) -> Round:
    """The seating :func:`pair_round` starts from, without avoiding repeats:
    Swiss pods cut straight from the standings; a rotation's first seeded
    shuffle. (The baseline its tests compare against.)"""
    return pair_round(players, rounds, results, number=number, size=size, target=target,
                      tables=tables, seed=seed, mode=mode, total_rounds=total_rounds,
                      _search=False)


def pair_round(players: Sequence[str], rounds: Sequence[Round],
               results: Mapping[tuple[int, str], Sequence[Sequence[str]]], *, number: int,
               size: tuple[int, int], target: int, tables: Sequence[str], seed,
               mode: str = "auto", total_rounds: int | None = None,
               _search: bool = True) -> Round:
    """Round ``number``'s pods, one per table in ``tables`` order (the first
    table gets the top pod), after ``rounds`` with ``results`` (see
    :func:`standings`). ``mode``: ``rotation``, ``swiss`` or ``auto``
    (:func:`choose_mode` with ``total_rounds``, default ``number``)."""
    players = check_players(players)
    if mode not in MODES:
        raise RoundsError(f"pairing {mode!r} must be one of {', '.join(MODES)}")
    tables = list(tables)
    if len(set(tables)) != len(tables):
        raise RoundsError("a table is listed twice")
    sizes = pod_sizes(len(players), size, target, len(tables))
    if mode == "auto":
        mode = choose_mode(len(players), total_rounds or number, max(sizes))
    rng = random.Random(f"tabletop-rounds:{seed}:{number}")
    tie = {p: rng.random() for p in players}
    table = standings(players, rounds, results)
    rank = {s.name: (-s.points, -s.buchholz, -s.h2h) for s in table}
    if mode == "swiss":
        order = sorted(players, key=lambda p: (rank[p], tie[p]))
    else:
        order = sorted(players, key=lambda p: tie[p])
    byes = _byes(order, rounds, len(players) - sum(sizes), tie)
    seated = [p for p in order if p not in byes]
    met = meetings(rounds)
    if mode == "swiss":
        pods = _chunks(seated, sizes)
        if _search:
            pods = _improve(pods, _Cost(met, {p: i for i, p in enumerate(seated)}))
    else:
        pods = _rotation(seated, sizes, met, rng, _search)
    firsts = Counter(r.pods[i].players[0] for r in rounds for i in range(len(r.pods)))
    if mode == "swiss":
        pos = {p: i for i, p in enumerate(seated)}
        pods.sort(key=lambda pod: min(pos[p] for p in pod))
    pods = [sorted(pod, key=lambda p: (firsts[p], tie[p])) for pod in pods]
    return Round(number, mode, tuple(Pod(t, tuple(pod)) for t, pod in zip(tables, pods)),
                 tuple(sorted(byes, key=lambda p: order.index(p))))


def _byes(order: list[str], rounds: Sequence[Round], count: int, tie) -> list[str]:
    """Who sits out: the fewest byes so far, then the lowest in ``order``."""
    if count <= 0:
        return []
    had = Counter(p for r in rounds for p in r.byes)
    pos = {p: i for i, p in enumerate(order)}
    return sorted(order, key=lambda p: (had[p], -pos[p]))[:count]


def _rotation(seated: list[str], sizes: list[int], met: Counter, rng: random.Random,
              search: bool) -> list[list[str]]:
    """Seeded shuffles, each improved by swaps; the fewest repeats wins (the
    first one found on a tie)."""
    cost = _Cost(met, None)
    best, best_cost = None, None
    for _ in range(ROTATION_STARTS if search else 1):
        order = list(seated)
        rng.shuffle(order)
        pods = _chunks(order, sizes)
        if search:
            pods = _improve(pods, cost)
        c = cost.total(pods)
        if best_cost is None or c < best_cost:
            best, best_cost = pods, c
    return best


__all__ = ["BYE_POINTS", "MODES", "Pod", "Round", "RoundsError", "Standing", "check_players",
           "check_ranking", "choose_mode", "game_points", "meetings", "naive_round",
           "pair_round", "pod_sizes", "repeat_pairs", "standings"]
