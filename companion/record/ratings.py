"""Ratings and seasons: a rating per game per player across nights.

Every finished game's final ranking (the store's summary, ``ranking``: the
players best first in groups of the tied) updates its players' ratings in
that game with OpenSkill's Plackett-Luce model (a Bayesian rating for any
number of players, ties included; ``openskill`` on PyPI, MIT): each player
has a skill ``mu`` and an uncertainty ``sigma``, and the rating shown is the
conservative ``mu - 3 sigma`` (openskill's ``ordinal``), which rises as a
player wins and as the companion grows sure of them. Games are rated in the
order they started; a game with fewer than two ranked players rates nobody.

A season is a span of nights the host names (``start`` to ``end``, local
dates, ``end`` None while it runs): read for one season, ratings start
fresh at its first game and statistics count only its nights.

>>> games = [Finished(1, "chope", "2025-06-01", (("ana",), ("bo",))),
...          Finished(2, "chope", "2025-06-02", (("ana",), ("bo",)))]
>>> r = rate(games)["chope"]
>>> r["ana"]["rating"] > r["bo"]["rating"], r["ana"]["games"], r["ana"]["wins"]
(True, 2, 2)
>>> check_season("Summer", "2025-06-01", None)
('Summer', '2025-06-01', None)
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Iterable

from openskill.models import PlackettLuce

from .reflexes import night_of, query
from .store import Store

#: a season's name: what a host types, kept short enough for a dropdown
SEASON_NAME_MAX = 40
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Finished:
    """One finished game as the ratings read it."""

    game_id: int
    game: str
    night: str                              # local date it started, YYYY-MM-DD
    ranking: tuple[tuple[str, ...], ...]    # best first, the tied together


class SeasonError(ValueError):
    """A season the host described wrongly: the message says what, ``field``
    which of ``name``, ``start``, ``end``."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def check_season(name, start, end) -> tuple[str, str, str | None]:
    """``(name, start, end)`` cleaned, or :class:`SeasonError`: a name of 1
    to 40 characters, ``start`` a date ``YYYY-MM-DD``, ``end`` empty or such
    a date not before ``start``."""
    if not isinstance(name, str) or not name.strip():
        raise SeasonError("a season needs a name", "name")
    name = " ".join(name.split())
    if len(name) > SEASON_NAME_MAX:
        raise SeasonError(f"a season's name is at most {SEASON_NAME_MAX} characters",
                          "name")
    start = _date(start, "start")
    end = None if end in (None, "") else _date(end, "end")
    if end is not None and end < start:
        raise SeasonError("a season cannot end before it starts", "end")
    return name, start, end


def _date(text, field: str) -> str:
    ok = isinstance(text, str) and _DATE.fullmatch(text)
    try:
        ok = ok and date.fromisoformat(text)
    except ValueError:
        ok = False
    if ok:
        return text
    if field == "start":
        raise SeasonError("a season's first night must be a date (YYYY-MM-DD)", field)
    raise SeasonError("a season's last night must be empty or a date (YYYY-MM-DD)", field)


def in_season(night: str, season: dict | None) -> bool:
    """Whether a night (``YYYY-MM-DD``) is in ``season`` (None: every night)."""
    if season is None:
        return True
    return season["start"] <= night and (season["end"] is None or night <= season["end"])


def finished_games(store: Store) -> list[Finished]:
    """Every finished game with its ranking, oldest first (a light read: the
    summary's ``ranking`` only, through SQLite's ``json_extract``)."""
    rows = query(store, "SELECT id, game, created, json_extract(summary, '$.ranking') "
                        "FROM games WHERE finished IS NOT NULL ORDER BY created, id")
    out = []
    for gid, game, created, ranking in rows:
        groups = _groups(ranking)
        if groups:
            out.append(Finished(gid, game, night_of(created), groups))
    return out


def _groups(text) -> tuple[tuple[str, ...], ...]:
    try:
        got = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return ()
    if not isinstance(got, list):
        return ()
    seen: set[str] = set()
    out = []
    for grp in got:
        names = tuple(n for n in (grp if isinstance(grp, list) else ())
                      if isinstance(n, str) and n not in seen)
        seen.update(names)
        if names:
            out.append(names)
    return tuple(out)


def rate(games: Iterable[Finished], season: dict | None = None) -> dict[str, dict[str, dict]]:
    """``{game: {player: {"rating","mu","sigma","games","wins"}}}`` after
    every game of ``games`` (in order) in ``season``; ``rating`` is the
    conservative ``mu - 3 sigma``, every number rounded to 0.01."""
    state, _ = _run(games, season)
    return {g: {p: _shown(s) for p, s in sorted(players.items(), key=_best)}
            for g, players in sorted(state.items())}


def history(games: Iterable[Finished], player: str,
            season: dict | None = None) -> dict[str, list[tuple[str, float]]]:
    """``{game: [(night, rating), ...]}``: ``player``'s rating in each game
    at the end of every night they played it, oldest first."""
    _, nights = _run(games, season, player)
    return {g: sorted(pts.items()) for g, pts in sorted(nights.items())}


_MODEL = PlackettLuce()
_MODEL_LOCK = threading.Lock()


@dataclass
class _Player:
    rating: object
    games: int = 0
    wins: int = 0


def _run(games, season, follow: str | None = None):
    state: dict[str, dict[str, _Player]] = {}
    nights: dict[str, dict[str, float]] = {}
    for g in games:
        if not in_season(g.night, season) or sum(len(grp) for grp in g.ranking) < 2:
            continue
        table = state.setdefault(g.game, {})
        for name in (n for grp in g.ranking for n in grp):
            if name not in table:
                table[name] = _Player(_MODEL.rating(name=name))
        teams = [[table[n].rating] for grp in g.ranking for n in grp]
        ranks = [i for i, grp in enumerate(g.ranking, start=1) for _ in grp]
        with _MODEL_LOCK:
            rated = _MODEL.rate(teams, ranks=ranks)
        for (r,), name in zip(rated, (n for grp in g.ranking for n in grp)):
            p = table[name]
            p.rating, p.games = r, p.games + 1
            p.wins += name in g.ranking[0]
        if follow in table and any(follow in grp for grp in g.ranking):
            nights.setdefault(g.game, {})[g.night] = _shown(table[follow])["rating"]
    return state, nights


def _shown(p: _Player) -> dict:
    r = p.rating
    return {"rating": round(r.ordinal(), 2), "mu": round(r.mu, 2), "sigma": round(r.sigma, 2),
            "games": p.games, "wins": p.wins}


def _best(item) -> tuple:
    name, p = item
    return (-p.rating.ordinal(), name.casefold())


@dataclass
class RatingCache:
    """The finished games, read again only when one more has finished (or
    a finished game was played on: its summary cleared), and what was
    derived from them (:meth:`derive`), kept until then."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    key: tuple | None = None
    games: list[Finished] = field(default_factory=list)
    derived: dict = field(default_factory=dict)

    def finished(self, store: Store) -> list[Finished]:
        key = query(store, "SELECT COUNT(*), MAX(id), MAX(finished), SUM(finished % 1000003) "
                           "FROM games WHERE finished IS NOT NULL")[0]
        with self.lock:
            if key != self.key:
                self.games, self.key = finished_games(store), key
                self.derived.clear()
            return self.games

    def derive(self, store: Store, key, fn: Callable[[list[Finished]], object]):
        """``fn(finished games)``, computed again only when they changed."""
        games = self.finished(store)
        with self.lock:
            if key in self.derived:
                return self.derived[key]
        out = fn(games)
        with self.lock:
            if len(self.derived) > 64:      # a page per player and season: keep a few
                self.derived.clear()
            self.derived[key] = out
        return out


__all__ = ["Finished", "RatingCache", "SEASON_NAME_MAX", "SeasonError", "check_season",
           "finished_games", "history", "in_season", "rate"]
