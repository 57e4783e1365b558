"""Every player's reflexes over every night: reaction times where the start is
known, anticipations, head-to-head records and suggested head starts.

A pure reading of the store's logs (docs/web.md, "Statistics"). A reaction
is the time from a race's known start to a player's counted press, in µs:
the start is known in an announced press race (Chomp!'s reveal: its GO) and
in a race whose card the flipper marked with their press (flipper arming: a
Chope! flip, ``armed_by`` and ``mark_ns``; a mark may come up to a quarter
second after the card lies face up, so such reactions err short).
Food Poisoning's GO starts a hold, not a reflex (the first to let go loses),
so it counts in the head-to-head records, not in the reaction times. Only
effective races count (an undone race never adds a reaction): the log's
undo and redo are followed on the events' kinds alone, and only the
effective races' bodies are read (SQLite's ``json_extract``), so a store of
10,000 races is read in tens of milliseconds; a game whose log has not
grown since the last reading is not read again (:class:`ReflexCache`).

>>> summary([250_000, 270_000, 300_000, 90_000])["anticipations"]
1
>>> suggest_handicaps({"adult": [270_000] * 5, "child": [465_000] * 5})
{'adult': 0, 'child': 195}
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterable

from ..races.referee import FIRST_PRESS, FIRST_RELEASE, LAST_PRESS
from .eventlog import effective_events
from .history import PALETTE
from .store import Store, StoreError

US = 1_000
#: a press this soon after GO was not a reaction to it (sprint starts: 100 ms)
ANTICIPATION_US = 100_000
#: head starts are suggested in steps of this many ms
HANDICAP_STEP_MS = 5


@dataclass(frozen=True)
class Race:
    """One effective race, as the statistics read it."""

    game_id: int
    night: str                  # the game's local date, YYYY-MM-DD
    kind: str
    winner: str | None
    loser: str | None
    eligible: tuple[str, ...]
    reactions: tuple[tuple[str, int], ...]      # (player, µs) where the start is known
    false_starts: tuple[str, ...] = ()


@dataclass
class ReflexCache:
    """Each game's races, read once per length of its log."""

    games: dict[int, tuple[int, list[Race]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: what was derived from the races, by key, with the logs' lengths then
    derived: dict[object, tuple[tuple, object]] = field(default_factory=dict)

    def derive(self, store: Store, key, fn: Callable[[list[Race]], object]):
        """``fn(races)``, computed again only when a log has grown since."""
        races = self.races(store)
        heads = tuple((gid, last) for gid, (last, _) in sorted(self.games.items()))
        with self.lock:
            got = self.derived.get(key)
            if got is not None and got[0] == heads:
                return got[1]
        out = fn(races)
        with self.lock:
            if len(self.derived) > 64:      # a page per player: keep a few
                self.derived.clear()
            self.derived[key] = (heads, out)
        return out

    def races(self, store: Store) -> list[Race]:
        """Every effective race of the store, oldest game first (the store's
        lock is held one query at a time: the table logs on meanwhile)."""
        with self.lock:
            heads = query(store, "SELECT g.id, g.created, MAX(e.id) FROM games g "
                                  "LEFT JOIN events e ON e.game_id = g.id GROUP BY g.id "
                                  "ORDER BY g.id")
            out: list[Race] = []
            for gone in set(self.games) - {h[0] for h in heads}:
                del self.games[gone]
            for gid, created, last in heads:
                got = self.games.get(gid)
                if got is None or got[0] != (last or 0):
                    got = self.games[gid] = (last or 0, read_game(store, gid, created))
                out += got[1]
            return out


def query(store: Store, sql: str, args: tuple = ()) -> list[tuple]:
    with store.locked():
        try:
            return store.conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"read failed: {exc}") from None


def player_colours(store: Store) -> dict[str, str]:
    """Each player's colour in the latest game they played (a light read:
    only the games' player lists)."""
    out: dict[str, str] = {}
    for (text,) in query(store, "SELECT players FROM games ORDER BY id DESC"):
        try:
            players = json.loads(text)
        except ValueError:
            continue
        for i, p in enumerate(players if isinstance(players, list) else ()):
            if isinstance(p, dict) and isinstance(p.get("name"), str):
                colour = p.get("colour")
                out.setdefault(p["name"], colour if isinstance(colour, str)
                               else PALETTE[i % len(PALETTE)])
    return out


def night_of(created_ns: int | None) -> str:
    """The local date a game was played (its night)."""
    if not created_ns:
        return "?"
    return datetime.fromtimestamp(created_ns / 1e9).strftime("%Y-%m-%d")


def effective_ids(rows: Iterable[tuple[int, str]]) -> list[int]:
    """The ids of the events the log's undo and redo leave in effect, from
    ``(id, kind)`` rows in log order (:func:`eventlog.effective_events`)."""
    return [eid for eid, _ in effective_events(rows, kind_of=lambda row: row[1])]


_RACE_FIELDS = ("SELECT id, json_extract(body, '$.spec.kind'), json_extract(body, '$.kind'), "
                "json_extract(body, '$.winner'), json_extract(body, '$.loser'), "
                "json_extract(body, '$.spec.eligible'), json_extract(body, '$.spec.arm_ns'), "
                "json_extract(body, '$.announced'), json_extract(body, '$.armed_by'), "
                "json_extract(body, '$.order'), json_extract(body, '$.false_starts'), "
                "json_extract(body, '$.mark_ns') "
                "FROM events WHERE game_id = ? AND kind = 'race' ORDER BY id")


def read_game(store: Store, game_id: int, created_ns: int | None = None) -> list[Race]:
    """The effective races of one game."""
    rows = query(store, "SELECT id, kind FROM events WHERE game_id = ? ORDER BY id",
                  (game_id,))
    keep = set(effective_ids(rows))
    night = night_of(created_ns)
    out = []
    for row in query(store, _RACE_FIELDS, (game_id,)):
        if row[0] in keep:
            race = _race(game_id, night, row)
            if race is not None:
                out.append(race)
    return out


def _names(text) -> tuple[str, ...]:
    try:
        got = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return ()
    return tuple(n for n in got if isinstance(n, str)) if isinstance(got, list) else ()


def _race(game_id: int, night: str, row) -> Race | None:
    _, spec_kind, kind, winner, loser, eligible, arm, announced, armed_by, order, fs, mark = row
    kind = spec_kind or kind
    if isinstance(mark, int) and not isinstance(mark, bool):
        arm = mark      # flipper arming: from the flipper's mark (the card turned then)
    if kind not in (FIRST_PRESS, LAST_PRESS, FIRST_RELEASE):
        return None
    reactions = []
    known = bool(announced) or isinstance(armed_by, str)
    if known and kind != FIRST_RELEASE and isinstance(arm, int) and isinstance(order, str):
        try:
            items = json.loads(order)
        except ValueError:
            items = []
        for o in items if isinstance(items, list) else ():
            t = o.get("t_ns") if isinstance(o, dict) else None
            p = o.get("player") if isinstance(o, dict) else None
            if isinstance(t, int) and not isinstance(t, bool) and isinstance(p, str) \
                    and t >= arm and p != armed_by:
                reactions.append((p, (t - arm) // US))
    return Race(game_id, night, kind, winner if isinstance(winner, str) else None,
                loser if isinstance(loser, str) else None, _names(eligible),
                tuple(reactions), _names(fs))


# ---------------------------------------------------------------------------
# the figures


def percentile(sorted_us: list[int], q: float) -> int:
    """The ``q`` (0-100) percentile of sorted values, nearest rank."""
    if not sorted_us:
        raise ValueError("no values")
    k = max(0, min(len(sorted_us) - 1, round(q / 100 * (len(sorted_us) - 1))))
    return sorted_us[k]


def summary(reactions_us: Iterable[int]) -> dict:
    """``{"count","median","p10","p25","p75","p90","spread","best",
    "anticipations"}`` (µs; ``spread`` the interquartile range; the others
    None with no reaction). Anticipations: presses under 100 ms after GO."""
    r = sorted(reactions_us)
    if not r:
        return {"count": 0, "median": None, "p10": None, "p25": None, "p75": None,
                "p90": None, "spread": None, "best": None, "anticipations": 0}
    q = {f"p{n}": percentile(r, n) for n in (10, 25, 75, 90)}
    return {"count": len(r), "median": int(statistics.median_low(r)), **q,
            "spread": q["p75"] - q["p25"], "best": r[0],
            "anticipations": sum(1 for x in r if x < ANTICIPATION_US)}


def reactions_by_player(races: Iterable[Race]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for race in races:
        for p, us in race.reactions:
            out.setdefault(p, []).append(us)
    return out


def suggest_handicaps(reactions: dict[str, list[int]]) -> dict[str, int]:
    """A head start per player (ms, in steps of 5): their median reaction
    less the fastest player's median; players with no reaction get none."""
    medians = {p: statistics.median_low(r) for p, r in reactions.items() if r}
    if not medians:
        return {}
    fastest = min(medians.values())
    step = HANDICAP_STEP_MS * 1000
    return {p: round((m - fastest) / step) * HANDICAP_STEP_MS for p, m in sorted(medians.items())}


def head_to_head(races: Iterable[Race]) -> dict[tuple[str, str], int]:
    """``{(a, b): n}``: how many races ``a`` came out of better than ``b``
    (a winner beats every other eligible player of the race; every other
    eligible player beats its loser)."""
    out: dict[tuple[str, str], int] = {}
    for race in races:
        if race.winner in race.eligible:
            for b in race.eligible:
                if b != race.winner:
                    out[(race.winner, b)] = out.get((race.winner, b), 0) + 1
        if race.loser in race.eligible:
            for a in race.eligible:
                if a != race.loser:
                    out[(a, race.loser)] = out.get((a, race.loser), 0) + 1
    return out


def by_night(races: Iterable[Race], player: str) -> list[tuple[str, dict]]:
    """``player``'s reaction summary per night, oldest first."""
    nights: dict[str, list[int]] = {}
    for race in races:
        for p, us in race.reactions:
            if p == player:
                nights.setdefault(race.night, []).append(us)
    return [(n, summary(r)) for n, r in sorted(nights.items())]


def histogram(reactions_us: Iterable[int], bin_ms: int = 50, top_ms: int = 1000) -> list[int]:
    """Counts per ``bin_ms`` bin from 0 to ``top_ms``; the last bin holds
    everything slower."""
    bins = [0] * (top_ms // bin_ms + 1)
    for us in reactions_us:
        bins[min(len(bins) - 1, max(0, us) // (bin_ms * 1000))] += 1
    return bins


__all__ = ["ANTICIPATION_US", "Race", "ReflexCache", "by_night", "effective_ids", "query",
           "head_to_head", "histogram", "percentile", "player_colours",
           "reactions_by_player", "read_game",
           "suggest_handicaps", "summary"]
