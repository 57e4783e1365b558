"""The statistics pages: every player's reflexes over every night.

``/stats`` (the table: each player's reaction spread, head-to-head records,
suggested head starts), ``/stats/player/<name>`` (one player: histogram,
trend across nights, record against each opponent) and ``/api/stats`` (the
same figures as JSON). Read from the store by :mod:`companion.record.reflexes`;
the plots are drawn by the server (:mod:`companion.web.charts`, SVG
templates). Public: what a table's players see of each other at the table.
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template

from ..record.history import PALETTE
from ..record.reflexes import (ReflexCache, by_night, head_to_head, histogram,
                               player_colours, reactions_by_player, suggest_handicaps,
                               summary)
from . import charts
from .api import services
from .policy import PUBLIC, allow

bp = Blueprint("stats", __name__)
BIN_MS = 50


def _cache() -> ReflexCache:
    return current_app.extensions.setdefault("companion_reflexes", ReflexCache())


def table_figures() -> dict:
    """Everything ``/stats`` and ``/api/stats`` show."""
    store = services().session.store
    colours = player_colours(store)
    return _cache().derive(store, ("table", tuple(colours)),
                           lambda races: _table(races, colours))


def _table(races, colours: dict[str, str]) -> dict:
    reactions = reactions_by_player(races)
    names = sorted(set(colours) | set(reactions), key=str.casefold)
    players = {n: summary(reactions.get(n, ())) for n in names}
    h2h = head_to_head(races)
    return {"races": len(races), "timed_races": sum(1 for r in races if r.reactions),
            "players": players, "colours": colours, "names": names,
            "suggested_handicap_ms": suggest_handicaps(reactions),
            "head_to_head": [{"player": a, "opponent": b, "won": n}
                             for (a, b), n in sorted(h2h.items())]}


def player_figures(name: str) -> dict | None:
    """Everything ``/stats/player/<name>`` shows; None for a stranger."""
    store = services().session.store
    colours = player_colours(store)
    return _cache().derive(store, ("player", name), lambda races: _player(races, name, colours))


def _player(races, name: str, colours: dict[str, str]) -> dict | None:
    mine = reactions_by_player(races).get(name, [])
    if name not in colours and not mine:
        return None
    h2h = head_to_head(races)
    opponents = sorted({b for a, b in h2h if a == name} | {a for a, b in h2h if b == name},
                       key=str.casefold)
    return {"name": name, "colour": colours.get(name, PALETTE[0]), "summary": summary(mine),
            "histogram": histogram(mine, BIN_MS), "nights": by_night(races, name),
            "record": [{"opponent": o, "won": h2h.get((name, o), 0),
                        "lost": h2h.get((o, name), 0)} for o in opponents if o != name]}


@bp.get("/stats")
@allow(PUBLIC)
def table_page():
    f = table_figures()
    rows = [(n, f["players"][n], f["colours"].get(n, PALETTE[0])) for n in f["names"]]
    matrix = {(h["player"], h["opponent"]): h["won"] for h in f["head_to_head"]}
    return render_template("stats/table.html", f=f, spread_chart=charts.spread_plot(rows),
                           matrix=matrix)


@bp.get("/stats/player/<path:name>")
@allow(PUBLIC)
def player_page(name: str):
    f = player_figures(name)
    if f is None:
        return render_template("stats/unknown.html", name=name), 404
    trend = [(night, s["median"]) for night, s in f["nights"] if s["median"] is not None]
    return render_template("stats/player.html", f=f, bin_ms=BIN_MS,
                           hist=charts.histogram_plot(f["histogram"], BIN_MS),
                           trend=charts.trend_plot(trend) if trend else None)


@bp.get("/api/stats")
@allow(PUBLIC)
def api_table():
    f = table_figures()
    return {k: f[k] for k in ("races", "timed_races", "players", "suggested_handicap_ms",
                              "head_to_head")}
