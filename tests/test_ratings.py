"""Ratings and seasons (issue 35, item 3): an OpenSkill rating per game per
player from each finished game's final ranking, seasons the host names
(stored in SQLite, schema 6, set from the console with the PIN and the CSRF
token), the statistics and ratings read one season at a time."""

from __future__ import annotations

import sqlite3

import pytest

from companion.games import register_game, unregister_game
from companion.record.ratings import (Finished, RatingCache, SeasonError, check_season,
                                      finished_games, history, rate)
from companion.record.store import MIGRATIONS, SCHEMA_VERSION, SeasonNameTaken, Store
from companion.table.session import TableSession
from companion.record.reflexes import night_of
from tests.kit.nights import fill
from tests.kit.toygame import CoinRace
from tests.kit.web import HostClient, make_app

JUNE = "2025-06-{:02d}"


def night(i: int, game: str = "chope", ranking=(("ana",), ("bo",))) -> Finished:
    return Finished(i, game, JUNE.format(i), tuple(tuple(g) for g in ranking))


def test_the_winner_rates_above_and_ties_rate_alike():
    games = [night(i, ranking=(("ana",), ("bo", "cy"))) for i in range(1, 6)]
    r = rate(games)["chope"]
    assert list(r) == ["ana", "bo", "cy"]               # best first
    assert r["ana"]["rating"] > r["bo"]["rating"] == r["cy"]["rating"]
    assert r["ana"]["wins"] == 5 and r["bo"]["wins"] == 0 and r["cy"]["games"] == 5
    assert r["ana"]["rating"] == pytest.approx(r["ana"]["mu"] - 3 * r["ana"]["sigma"], abs=0.02)


def test_each_game_is_rated_apart_and_a_lone_player_rates_nobody():
    games = [night(1, "chope"), night(2, "chomp", (("bo",), ("ana",))), night(3, "chomp", (("ana",),))]
    r = rate(games)
    assert r["chope"]["ana"]["rating"] > r["chope"]["bo"]["rating"]
    assert r["chomp"]["bo"]["rating"] > r["chomp"]["ana"]["rating"]
    assert r["chomp"]["ana"]["games"] == 1              # the one-player game counted nothing


def test_a_players_rating_night_by_night_climbs_as_they_keep_winning():
    games = [night(i) for i in range(1, 9)]
    pts = history(games, "ana")["chope"]
    assert [n for n, _ in pts] == [JUNE.format(i) for i in range(1, 9)]
    assert all(a < b for (_, a), (_, b) in zip(pts, pts[1:]))
    assert pts[-1][1] == rate(games)["chope"]["ana"]["rating"]


def test_a_season_rates_only_its_nights_from_scratch():
    games = [night(i, ranking=(("bo",), ("ana",))) for i in range(1, 11)]
    games += [night(i) for i in range(11, 14)]
    whole = rate(games)["chope"]
    season = {"id": 1, "name": "late", "start": JUNE.format(11), "end": None}
    late = rate(games, season)["chope"]
    assert whole["bo"]["rating"] > whole["ana"]["rating"]
    assert late["ana"]["rating"] > late["bo"]["rating"] and late["ana"]["games"] == 3
    closed = dict(season, end=JUNE.format(12))
    assert rate(games, closed)["chope"]["ana"]["games"] == 2


@pytest.mark.parametrize("args, field", [
    (("", "2025-06-01", None), "name"), (("x" * 41, "2025-06-01", None), "name"),
    (("S", "2025-6-1", None), "start"), (("S", "2025-02-30", None), "start"),
    (("S", "2025-06-01", "junk"), "end"), (("S", "2025-06-02", "2025-06-01"), "end"),
])
def test_a_wrong_season_is_refused_naming_its_field(args, field):
    with pytest.raises(SeasonError) as got:
        check_season(*args)
    assert got.value.field == field


def test_only_finished_games_with_a_ranking_are_read():
    store = Store(":memory:")
    fill(store, 100, per_game=50, finished=True)         # two finished games
    fill(store, 50, per_game=50)                          # one still playing
    gid = store.create_game("chope", [{"name": "x"}], {}, summary={"ranking": "nonsense"},
                            make_current=False)
    got = finished_games(store)
    assert len(got) == 2 and gid not in {g.game_id for g in got}
    assert all(len(sum(g.ranking, ())) == 4 for g in got)
    cache = RatingCache()
    first = cache.finished(store)
    assert cache.finished(store) is first                 # nothing finished since: not read again
    fill(store, 50, per_game=50, finished=True, seed=9)
    assert len(cache.finished(store)) == 3


# ---------------------------------------------------------------------------
# the store: schema 6


def test_a_version_5_store_gains_the_seasons_table(tmp_path):
    path = tmp_path / "v5.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for v, step in enumerate(MIGRATIONS[:5]):
        conn.execute("BEGIN")
        step(conn)
        conn.execute(f"PRAGMA user_version = {v + 1}")
        conn.execute("COMMIT")
    conn.close()
    with Store(path) as s:
        assert s.migrated_from == 5 and s.schema_version() == SCHEMA_VERSION == 6
        added = s.add_season("Summer", "2025-06-01", None)
        assert added["name"] == "Summer" and added["end"] is None
        with pytest.raises(SeasonNameTaken):
            s.add_season("Summer", "2025-07-01", "2025-07-31")
        assert [x["name"] for x in s.seasons()] == ["Summer"]
    with Store(path) as s:                                # kept
        assert s.seasons()[0]["start"] == "2025-06-01"
        assert s.remove_season(added["id"]) and not s.remove_season(added["id"])
        assert s.seasons() == []


# ---------------------------------------------------------------------------
# the web: the console's seasons, the pages of one season


@pytest.fixture
def table():
    store = Store(":memory:")
    fill(store, 300, per_game=50, finished=True)          # six nights from 2025-06-15
    app = make_app(TableSession(store))
    return app, store


def test_seasons_need_the_host_and_the_csrf_token(table):
    app, store = table
    guest = app.test_client()
    token = {"X-CSRF-Token": guest.get("/api/csrf").json["csrf"]}
    body = {"name": "June", "start": "2025-06-01", "end": None}
    assert guest.post("/api/host/seasons", json=body, headers=token).status_code == 401
    host = HostClient(app.test_client())
    assert host.client.post("/api/host/seasons", json=body).status_code == 403   # no token
    assert store.seasons() == []
    r = host.post("/api/host/seasons", body)
    assert r.status_code == 200 and [s["name"] for s in r.json["seasons"]] == ["June"]
    again = host.post("/api/host/seasons", body)
    assert again.status_code == 400 and again.json["field"] == "name"
    bad = host.post("/api/host/seasons", {"name": "J", "start": "2025-06-09", "end": "2025-06-01"})
    assert bad.status_code == 400 and bad.json["field"] == "end"
    sid = r.json["season"]["id"]
    gone = {"id": sid}
    assert guest.post("/api/host/seasons/delete", json=gone, headers=token).status_code == 401
    assert host.post("/api/host/seasons/delete", gone).json["seasons"] == []
    assert host.post("/api/host/seasons/delete", gone).status_code == 404
    assert host.post("/api/host/seasons/delete", {"id": "x"}).status_code == 400


def test_the_statistics_and_ratings_of_one_season(table):
    app, store = table
    c = app.test_client()
    everything = c.get("/api/stats").get_json()
    start = night_of(store.list_games()[-3]["created_ns"])     # the third night on
    assert everything["races"] == 300
    s = store.add_season("Late June", start, None)
    one = c.get(f"/api/stats?season={s['id']}").get_json()
    assert one["season"]["name"] == "Late June" and one["races"] == 200
    assert all(p["games"] == 4 for p in one["ratings"]["coinrace"].values())
    assert all(p["games"] == 6 for p in everything["ratings"]["coinrace"].values())
    html = c.get(f"/stats?season={s['id']}").get_data(as_text=True)
    assert "Season Late June" in html and 'id="ratings"' in html
    assert html.count('class="plays"') == 1 and html.count("createPlay.html?data=") == 4
    assert c.get("/stats?season=999").status_code == 404
    page = c.get(f"/stats/player/Cy?season={s['id']}").get_data(as_text=True)
    assert page.count('class="dot"') == 4 + 4             # 4 nights of reactions, 4 of ratings


@pytest.fixture
def coinrace():
    name = register_game(CoinRace)
    yield name
    unregister_game(name)


def test_a_game_finished_at_the_table_moves_the_ratings(coinrace):
    session = TableSession(Store(":memory:"))
    app = make_app(session)
    session.new_game(coinrace, ["ana", "bo"], {"target": 1})
    assert app.test_client().get("/api/stats").get_json()["ratings"] == {}
    session.log({"type": "flip", "side": "heads"})
    session.log({"type": "race", "reason": "grab", "winner": "bo"})
    assert session.snapshot()["finished"]
    r = app.test_client().get("/api/stats").get_json()["ratings"]["coinrace"]
    assert list(r) == ["bo", "ana"] and r["bo"]["wins"] == 1 and r["ana"]["games"] == 1
