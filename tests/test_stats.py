"""The statistics pages (issue 35, item 2): reaction times where the start is
known, anticipations, head-to-head, the trend across nights, suggested head
starts; /stats, /stats/player/<name> and /api/stats."""

from __future__ import annotations

import statistics

import pytest

from companion.games import register_game, unregister_game
from companion.record.eventlog import effective_events
from companion.record.reflexes import (ReflexCache, effective_ids, head_to_head, read_game,
                                       suggest_handicaps, summary)
from companion.record.store import Store
from companion.table.session import TableSession
from companion.web import create_app
from tests.kit.helpers import Clock, press, run
from tests.kit.nights import fill
from tests.kit.toygame import CoinRace


def test_effective_ids_follow_undo_and_redo_as_the_log_does():
    kinds = ["race", "flip", "undo", "undo", "redo", "race", "undo", "flip", "redo", "race"]
    events = [{"type": k, "n": i} for i, k in enumerate(kinds)]
    want = [e["n"] for e in effective_events(events)]
    assert effective_ids(list(enumerate(kinds))) == want


def test_an_undone_race_never_counts():
    store = Store(":memory:")
    fill(store, 100, per_game=50, undo_every=10)     # 10 races undone
    races = ReflexCache().races(store)
    assert len(races) == 100
    logged = sum(1 for g in store.list_games() for _, e in store.events(g["id"])
                 if e.get("type") == "race")
    assert logged == 110
    want = sum(len(e["order"]) for g in store.list_games()
               for e in effective_events(ev for _, ev in store.events(g["id"]))
               if e.get("type") == "race")
    assert sum(len(r.reactions) for r in races) == want


def test_summary_figures():
    r = [300_000, 90_000, 250_000, 270_000, 500_000, 410_000, 60_000, 280_000]
    s = summary(r)
    assert s["count"] == 8 and s["median"] == statistics.median_low(r)
    assert s["best"] == 60_000 and s["anticipations"] == 2
    assert s["p10"] <= s["p25"] <= s["median"] <= s["p75"] <= s["p90"]
    assert s["spread"] == s["p75"] - s["p25"]
    assert summary([])["median"] is None and summary([])["count"] == 0


def test_suggested_head_starts_are_the_median_differences():
    got = suggest_handicaps({"ana": [260_000, 270_000, 280_000],
                             "cy": [450_000, 467_000, 480_000], "zed": []})
    assert got == {"ana": 0, "cy": 195}


def test_head_to_head_counts_winners_and_losers():
    store = Store(":memory:")
    fill(store, 50, undo_every=0)
    races = ReflexCache().races(store)
    h = head_to_head(races)
    wins = {p: sum(1 for r in races if r.winner == p) for p in ("Ana", "Bo", "Cy", "Dee")}
    for p, n in wins.items():       # a winner is ahead of the 3 others
        assert sum(v for (a, _), v in h.items() if a == p) == 3 * n


@pytest.fixture
def coinrace():
    name = register_game(CoinRace)
    yield name
    unregister_game(name)


def test_a_table_race_with_a_known_start_gives_reactions(coinrace):
    clock = Clock()
    s = TableSession(Store(":memory:"), clock=clock)
    s.new_game(coinrace, [{"name": "ana", "buzzer": "b1"}, {"name": "cy", "buzzer": "b2"}])
    s.log({"type": "flip", "side": "heads"})
    s.start_race(0)
    run(s, clock, 5)
    clock.advance(265)
    press(s, clock, "b1")
    run(s, clock, 200)
    races = read_game(s.store, s.game_id)
    assert len(races) == 1 and races[0].winner == "ana"
    assert races[0].reactions == (("ana", 270_000),)


@pytest.fixture
def stats_client():
    store = Store(":memory:")
    fill(store, 400, per_game=50)
    app = create_app({"PIN": "test-pin-1", "TESTING": True}, session=TableSession(store))
    return app.test_client()


def test_the_table_page_plots_every_player(stats_client):
    resp = stats_client.get("/stats")
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    assert html.count('class="plot"') == 1 and html.count('class="box"') == 4
    for name in ("Ana", "Bo", "Cy", "Dee"):
        assert f'href="/stats/player/{name}"' in html
    assert "<script" not in html.split("</head>")[1].replace('<script id="tc-i18n"', "")


def test_the_api_gives_the_figures_and_suggests_head_starts(stats_client):
    data = stats_client.get("/api/stats").get_json()
    assert data["races"] == 400 and data["timed_races"] == 400
    sugg = data["suggested_handicap_ms"]
    assert sugg["Ana"] == 0 and 150 <= sugg["Cy"] <= 240       # 465 - 270 = 195 ms
    assert all(p["count"] == 400 for p in data["players"].values())


def test_a_players_page_has_its_histogram_trend_and_record(stats_client):
    html = stats_client.get("/stats/player/Cy").get_data(as_text=True)
    assert 'class="trend"' in html and html.count('class="dot"') == 8      # 8 nights
    assert 'class="bar"' in html and "Head to head" in html
    assert stats_client.get("/stats/player/Nobody").status_code == 404


def test_the_pages_speak_french(stats_client):
    html = stats_client.get("/stats", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    body = html.split("</head>")[1]
    assert '<html lang="fr">' in html and "<h1>Réflexes</h1>" in body
    assert "Temps de réaction" in body and "Reaction times" not in body
