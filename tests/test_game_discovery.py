"""A new game is one file (issue 19): nothing else is edited.

Two ways in, both found without a list: a module dropped into the
``companion.games`` package (a temporary copy of the package, run in a fresh
interpreter so the real tree is untouched) and a distribution that declares
the ``companion.games`` entry point (a ``.dist-info`` with its
``entry_points.txt`` put on ``sys.path``, as ``pip install`` would leave it).
Each game is played through the web app with the host's PIN: started from the
console's API, events logged, the scoreboard's state read back. A module that
fails to import is recorded and refused by name, never a crash.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from companion import games
from companion.games import GameLoadError, game_errors, game_names, get_game, reset_games
from tests.kit.helpers import fake_distribution

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent

#: The whole of a new game: the toy game's one file (Coin race, ``coinrace``).
COIN_RACE = (TESTS / "kit" / "toygame.py").read_text()

#: What the web app is asked, in the copy or here: the games it lists, a game
#: started, three flips logged, and the scoreboard's state.
PLAY = '''
def play(host, client, game):
    listed = [g["name"] for g in client.get("/api/games").json]
    r = host.post("/api/host/new-game", json={"game": game, "options": {"target": 2},
                  "players": [{"name": "ana"}, {"name": "bo"}]})
    assert r.status_code == 200, r.json
    for _ in range(2):
        for event in ({"type": "flip", "side": "heads"},
                      {"type": "race", "reason": "grab", "winner": "ana"}):
            r = host.post("/api/host/event", json={"event": event})
            assert r.status_code == 200, r.json
    state = client.get("/api/state").json
    return {"listed": listed, "game": state["game"], "title": state["title"],
            "scores": state["scores"], "finished": state["finished"],
            "ranking": state["ranking"], "info": client.get(f"/api/games/{game}").json}
'''
namespace: dict = {}
exec(PLAY, namespace)
play = namespace["play"]


def check_played(got: dict, game: str) -> None:
    assert game in got["listed"] and "chope" in got["listed"]
    assert got["game"] == game and got["title"] == "Coin race"
    assert got["scores"] == {"ana": 2, "bo": 0}
    assert got["finished"] and got["ranking"] == [["ana"], ["bo"]]
    assert got["info"]["settings"][0]["name"] == "target"


# -- a module dropped into the package -----------------------------------------
def test_a_module_dropped_into_the_package_is_played_through_the_web_app(tmp_path):
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "companion", copy / "companion",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "companion" / "games" / "coinrace.py").write_text(COIN_RACE)
    (copy / "companion" / "games" / "halfbuilt.py").write_text("import no_such_library\n")
    script = PLAY + textwrap.dedent(f'''
        import json, sys
        import companion
        from companion.games import game_errors
        from companion.table.session import TableSession
        from companion.record.store import Store
        from tests.kit.web import HostClient, make_app

        assert companion.__file__.startswith({str(copy)!r}), companion.__file__
        store = Store({str(tmp_path / "table.db")!r})
        session = TableSession(store)
        session.resume()
        app = make_app(session)
        client = app.test_client()
        got = play(HostClient(client), client, "coinrace")
        got["errors"] = game_errors()
        refused = HostClient(client).post("/api/host/new-game", json={{
            "game": "halfbuilt", "players": [{{"name": "ana"}}, {{"name": "bo"}}]}})
        got["refused"] = [refused.status_code, refused.json]
        app.extensions["companion"].close()
        store.close()
        print(json.dumps(got))
    ''')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(copy), str(ROOT)]))
    run = subprocess.run([sys.executable, "-c", script], cwd=copy, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    check_played(got, "coinrace")
    # the half-built module: not listed, its error recorded, refused by name
    assert "halfbuilt" not in got["listed"]
    assert "no_such_library" in got["errors"]["halfbuilt"]
    status, answer = got["refused"]
    assert status == 400 and "halfbuilt" in answer["error"] and "no_such_library" in answer["error"]


# -- a distribution with the entry point ---------------------------------------
@pytest.fixture
def distribution(tmp_path, monkeypatch):
    """Install (by hand, as pip would leave it) a distribution declaring two
    games in the ``companion.games`` entry-point group: a working one and one
    whose module fails to import."""
    fake_distribution(
        tmp_path, "tc-coin-game",
        {"tc_coin_game": COIN_RACE, "tc_broken_game": "raise RuntimeError('half-built tracker')\n"},
        {games.ENTRY_POINT_GROUP: {"coinrace": "tc_coin_game:CoinRace",
                                   "broken": "tc_broken_game"}})
    monkeypatch.syspath_prepend(str(tmp_path))
    reset_games()                       # scanned again, with the new distribution
    yield
    reset_games()
    for name in ("tc_coin_game", "tc_broken_game"):
        sys.modules.pop(name, None)


def test_an_entry_point_game_is_played_through_the_web_app(distribution, host, client):
    assert "coinrace" in game_names() and "chope" in game_names()
    check_played(play(host, client, "coinrace"), "coinrace")


def test_a_game_that_fails_to_import_is_recorded_not_a_crash(distribution, host, client):
    assert "broken" in game_names()              # found, not loaded yet
    listed = [g["name"] for g in client.get("/api/games").json]
    assert "coinrace" in listed and "broken" not in listed
    assert "half-built tracker" in game_errors()["broken"]
    assert "broken" not in game_names()
    with pytest.raises(GameLoadError, match="broken.*tc_broken_game.*half-built tracker"):
        get_game("broken")
    r = host.post("/api/host/new-game", json={"game": "broken",
                                              "players": [{"name": "ana"}, {"name": "bo"}]})
    assert r.status_code == 400 and "half-built tracker" in r.json["error"]
    assert get_game("chope").title == "Chope!"       # the others still load


def test_a_game_module_must_be_named_after_its_game(tmp_path, monkeypatch):
    """A module found in the package holds the game of its own name: a
    mismatch is a recorded error naming the rule, not a silent no-show."""
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "misnamed.py").write_text(COIN_RACE)
    monkeypatch.setattr(games, "__path__", [*games.__path__, str(folder)])
    reset_games()
    try:
        assert "misnamed" in game_names()
        with pytest.raises(GameLoadError, match="one Game subclass whose name is 'misnamed'"):
            get_game("misnamed")
    finally:
        monkeypatch.undo()
        reset_games()
        sys.modules.pop("companion.games.misnamed", None)
