"""The statistics pages: every player's reflexes and ratings over every night.

``/stats`` (the table: each player's reaction spread, head-to-head records,
suggested head starts, ratings per game, the finished games for BG Stats),
``/stats/player/<name>`` (one player: histogram, trend across nights,
record against each opponent, rating over nights) and ``/api/stats`` (the
same figures as JSON); ``?season=<id>`` reads one season. Read from the
store by :mod:`companion.record.reflexes` and :mod:`companion.record.ratings`;
the plots are drawn by the server (:mod:`companion.web.charts`, SVG
templates). Public: what a table's players see of each other at the table,
and each finished game as a BG Stats play (:mod:`companion.record.bgstats`),
so a player adds it to their own app from their own phone.
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, current_app, render_template, request

from ..record import bgstats
from ..record.history import PALETTE
from ..record.ratings import RatingCache, history, in_season, rate
from ..record.reflexes import (ReflexCache, by_night, head_to_head, histogram,
                               player_colours, reactions_by_player, suggest_handicaps,
                               summary)
from ..record.store import UnknownGameId
from . import charts
from .api import services
from .policy import PUBLIC, allow

bp = Blueprint("stats", __name__)
BIN_MS = 50
#: the finished games the statistics page offers to BG Stats, newest first
PLAYS_SHOWN = 20


def _cache() -> ReflexCache:
    return current_app.extensions.setdefault("companion_reflexes", ReflexCache())


def _rating_cache() -> RatingCache:
    return current_app.extensions.setdefault("companion_ratings", RatingCache())


def seasons() -> list[dict]:
    return services().session.store.seasons()


def chosen_season() -> dict | None:
    """The season ``?season=<id>`` names (None: every night); 404 for one
    the store does not have."""
    raw = request.args.get("season", "")
    if not raw:
        return None
    found = next((s for s in seasons() if str(s["id"]) == raw), None)
    if found is None:
        abort(404)
    return found


def _key(season: dict | None) -> tuple:
    return () if season is None else (season["id"], season["start"], season["end"])


def table_figures(season: dict | None = None) -> dict:
    """Everything ``/stats`` and ``/api/stats`` show (of one season, or all)."""
    store = services().session.store
    colours = player_colours(store)
    figures = _cache().derive(
        store, ("table", tuple(colours), _key(season)),
        lambda races: _table([r for r in races if in_season(r.night, season)], colours))
    ratings = _rating_cache().derive(store, ("rate", _key(season)),
                                     lambda games: rate(games, season))
    return dict(figures, ratings=ratings, season=season)


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


def player_figures(name: str, season: dict | None = None) -> dict | None:
    """Everything ``/stats/player/<name>`` shows; None for a stranger."""
    store = services().session.store
    colours = player_colours(store)
    figures = _cache().derive(
        store, ("player", name, _key(season)),
        lambda races: _player([r for r in races if in_season(r.night, season)], name, colours))
    if figures is None:
        return None
    cache = _rating_cache()
    rated = cache.derive(store, ("rate", _key(season)), lambda games: rate(games, season))
    mine = {g: players[name] for g, players in rated.items() if name in players}
    nights = cache.derive(store, ("history", name, _key(season)),
                          lambda games: history(games, name, season))
    return dict(figures, ratings=mine, rating_nights=nights, season=season)


def finished_plays(season: dict | None) -> list[dict]:
    """The newest finished games of the season, each with its BG Stats link."""
    store = services().session.store
    return _rating_cache().derive(store, ("plays", _key(season)),
                                  lambda games: _plays(store, games, season))


def _plays(store, games, season) -> list[dict]:
    games = [g for g in games if in_season(g.night, season)]
    out = []
    for g in reversed(games[-PLAYS_SHOWN:]):
        try:
            info = store.game_info(g.game_id)
        except UnknownGameId:
            continue
        out.append({"id": g.game_id, "night": g.night, "title": bgstats.play(info)["game"]["name"],
                    "winners": list(g.ranking[0]), "link": bgstats.import_link(info)})
    return out


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
    season = chosen_season()
    f = table_figures(season)
    rows = [(n, f["players"][n], f["colours"].get(n, PALETTE[0])) for n in f["names"]]
    matrix = {(h["player"], h["opponent"]): h["won"] for h in f["head_to_head"]}
    return render_template("stats/table.html", f=f, spread_chart=charts.spread_plot(rows),
                           matrix=matrix, seasons=seasons(), plays=finished_plays(season),
                           titles=_titles(f["ratings"]))


def _titles(games) -> dict[str, str]:
    from ..games import get_game

    out = {}
    for g in games:
        try:
            out[g] = get_game(g).title
        except KeyError:
            out[g] = g
    return out


@bp.get("/stats/player/<path:name>")
@allow(PUBLIC)
def player_page(name: str):
    season = chosen_season()
    f = player_figures(name, season)
    if f is None:
        return render_template("stats/unknown.html", name=name), 404
    trend = [(night, s["median"]) for night, s in f["nights"] if s["median"] is not None]
    rating_plots = {g: charts.rating_plot(pts) for g, pts in f["rating_nights"].items() if pts}
    return render_template("stats/player.html", f=f, bin_ms=BIN_MS,
                           hist=charts.histogram_plot(f["histogram"], BIN_MS),
                           trend=charts.trend_plot(trend) if trend else None,
                           rating_plots=rating_plots, seasons=seasons(),
                           titles=_titles(f["ratings"]))


@bp.get("/api/stats")
@allow(PUBLIC)
def api_table():
    f = table_figures(chosen_season())
    return {k: f[k] for k in ("races", "timed_races", "players", "suggested_handicap_ms",
                              "head_to_head", "ratings", "season")}


@bp.get("/api/seasons")
@allow(PUBLIC)
def api_seasons():
    """Every season the host named: ``[{"id","name","start","end"}]``."""
    return {"seasons": seasons()}


@bp.get("/stats/bgstats/<int:game_id>.json")
@allow(PUBLIC)
def bgstats_play(game_id: int):
    """A finished game as a BG Stats play (a download); 404 for a game that
    is not in the store or has not finished."""
    try:
        info = services().session.store.game_info(game_id)
        text = bgstats.play_json(info)
    except (UnknownGameId, ValueError):
        abort(404)
    return Response(text, mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="bgstats-play-{game_id}.json"'})
