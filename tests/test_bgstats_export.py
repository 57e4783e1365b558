"""The BG Stats export (issue 35, item 3): a finished game of each kind as a
play in BG Stats' documented import format, validated against that format's
JSON Schema (tests/schemas/bgstats_play.schema.json, written from BG Stats'
page "Push plays to BG Stats from other apps or websites")."""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest

from companion.games import get_game
from companion.record import bgstats
from companion.record.gamefile import header
from companion.record.history import import_game
from companion.record.store import Store
from companion.table.session import TableSession
from tests.kit.conformance import play_random
from tests.kit.web import make_app

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "bgstats_play.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
KINDS = ["chope", "chopote", "chomp", "hawker", "tropichaos"]


def test_the_schema_is_a_schema_and_refuses_what_the_format_does_not_allow():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    good = {"sourceName": "x", "sourcePlayId": "1", "playDate": "2025-06-01 20:00:00",
            "game": {"name": "Chope!"}, "players": [{"name": "ana", "rank": 1, "score": 3,
                                                     "winner": True}]}
    assert VALIDATOR.is_valid(good)
    for broken in ({**good, "playDate": "2025-06-01T20:00:00Z"},
                   {**good, "game": {}},
                   {**good, "players": [{"name": "ana", "rank": 0, "score": 3, "winner": True}]},
                   {**good, "players": [{"name": "ana", "rank": 1, "score": "3", "winner": True}]},
                   {**good, "extra": 1}):
        assert not VALIDATOR.is_valid(broken), broken


def finished_game(store: Store, kind: str, seed: int) -> int:
    """A random game of ``kind`` played to its end, stored as a game file."""
    game = get_game(kind)
    rng = random.Random(seed)
    players = ["Ana", "Bo", "Cy"][:max(2, min(3, game.max_players))]
    rep = play_random(kind, players, {}, rng)
    lines = [json.dumps(header(kind, players, rep.options))]
    lines += [json.dumps(e) for e in rep.events]
    return import_game(store, "\n".join(lines) + "\n")


@pytest.mark.parametrize("kind", KINDS)
def test_a_finished_game_of_each_kind_is_a_play_the_schema_accepts(kind):
    store = Store(":memory:")
    gid = finished_game(store, kind, seed=35)
    info = store.game_info(gid)
    assert info["finished"]
    play = bgstats.play(info)
    errors = sorted(VALIDATOR.iter_errors(play), key=str)
    assert errors == [], [e.message for e in errors]
    assert play["game"]["name"] == get_game(kind).title and play["game"]["sourceGameId"] == kind
    ranking = info["summary"]["ranking"]
    by_name = {p["name"]: p for p in play["players"]}
    assert list(by_name) == [p["name"] for p in info["players"]]
    assert {n for n, p in by_name.items() if p["winner"]} == set(ranking[0])
    for i, group in enumerate(ranking, start=1):
        assert all(by_name[n]["rank"] == i for n in group)
    assert all(by_name[n]["score"] == s for n, s in info["summary"]["scores"].items())
    link = bgstats.import_link(info)
    assert link.startswith(bgstats.CREATE_PLAY_URL)
    assert json.loads(unquote(link[len(bgstats.CREATE_PLAY_URL):])) == play


def test_the_download_and_the_links_on_the_statistics_page():
    store = Store(":memory:")
    done = [finished_game(store, k, seed=7) for k in ("chope", "chomp")]
    playing = store.create_game("chope", [{"name": "Ana"}, {"name": "Bo"}], {},
                                make_current=False)
    client = make_app(TableSession(store)).test_client()
    r = client.get(f"/stats/bgstats/{done[0]}.json")
    assert r.status_code == 200 and "attachment" in r.headers["Content-Disposition"]
    assert VALIDATOR.is_valid(r.get_json()) and r.get_json()["game"]["name"] == "Chope!"
    assert client.get(f"/stats/bgstats/{playing}.json").status_code == 404
    assert client.get("/stats/bgstats/999.json").status_code == 404
    html = client.get("/stats").get_data(as_text=True)
    for gid in done:
        assert f'href="/stats/bgstats/{gid}.json"' in html
    assert html.count("app.bgstatsapp.com/createPlay.html?data=") == 2
