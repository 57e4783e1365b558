"""History, statistics and export (companion/record/history.py): pure functions of the store.

The games here are written straight into a store, as the table would have
logged them, so each figure can be checked by hand against
docs/session-api.md ("History").
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from companion import games
from companion.record.gamefile import GameFileError
from companion.games import Game, RulesError, rank_by
from companion.record.history import (CSV_COLUMNS, effective_events, export_csv, export_game,
                               import_game, normalise_players, player_stats, race_tally)
from companion.record.store import Store

MS = 1_000_000
GO = 50_000 * MS


class Coin(Game):
    """A toy game: ``win`` gives a player a point; the first to 2 wins."""

    name = "coin_history"
    title = "Coin"

    def _setup(self, players, options):
        return {"players": players, "points": {p: 0 for p in players}}

    def _apply(self, s, ev):
        if ev["type"] == "race":
            return s
        if ev["type"] != "win" or ev.get("player") not in s["players"]:
            raise RulesError("only 'win' by a player", "format")
        s["points"][ev["player"]] += 1
        return s

    def scores(self, s):
        return dict(s["points"])

    def current_player(self, s):
        return None

    def finished(self, s):
        return max(s["points"].values()) >= 2

    def ranking(self, s):
        return rank_by(s["players"], lambda p: s["points"][p])

    def public_view(self, s):
        return {"points": dict(s["points"])}


@pytest.fixture(autouse=True, scope="module")
def coin_registered():
    games.register_game(Coin, replace=True)
    yield
    games.unregister_game(Coin.name)


PLAYERS = [{"name": "ana", "colour": "#e53935", "buzzer": "1"},
           {"name": "bo", "colour": "#1e88e5", "buzzer": "2"}]


def announced_race(winner, presses, false_starts=(), eligible=("ana", "bo")):
    """An announced first-press race at GO, ``presses`` = {player: ms after GO}."""
    order = [{"player": p, "t_ns": GO + ms * MS} for p, ms in
             sorted(presses.items(), key=lambda i: i[1])]
    return {"type": "race", "reason": "grab", "announced": True, "winner": winner,
            "loser": None, "tied": [], "false_starts": list(false_starts),
            "spec": {"kind": "first-press", "eligible": list(eligible), "arm_ns": GO},
            "order": order}


def finished_game(store, *events):
    gid = store.create_game(Coin.name, PLAYERS, {})
    for ev in events:
        store.append(gid, ev)
    store.mark_finished(gid, {"scores": {"ana": 2, "bo": 1}, "ranking": [["ana"], ["bo"]]})
    return gid


def test_effective_events_drop_undone_ones_and_redo_puts_them_back():
    a, b, c = {"type": "a"}, {"type": "b"}, {"type": "c"}
    assert effective_events([a, b, {"type": "undo"}]) == [a]
    assert effective_events([a, b, {"type": "undo"}, {"type": "redo"}]) == [a, b]
    assert effective_events([a, {"type": "undo"}, c, {"type": "redo"}]) == [c]
    assert effective_events([{"type": "undo"}, {"type": "redo"}]) == []


def test_race_tally_counts_entries_wins_losses_and_reactions_from_go():
    events = [announced_race("bo", {"bo": 180, "ana": 240}),
              announced_race("ana", {"ana": 150}, false_starts=["bo"]),
              {"type": "race", "reason": "siam", "loser": "bo",
               "spec": {"kind": "last-press", "eligible": ["ana", "bo"], "arm_ns": GO},
               "order": [{"player": "ana", "t_ns": GO + 5 * MS}]}]     # unannounced
    t = race_tally(events)
    assert t["ana"]["races"] == 3 and t["bo"]["races"] == 3
    assert (t["ana"]["races_won"], t["bo"]["races_won"], t["bo"]["races_lost"]) == (1, 1, 1)
    assert sorted(t["ana"]["reactions"]) == [150_000, 240_000]   # µs, announced races only
    assert t["bo"]["reactions"] == [180_000]                   # a false start is no reaction


def test_an_undone_race_counts_for_nobody():
    t = race_tally([announced_race("bo", {"bo": 100}), {"type": "undo"}])
    assert t == {}


def test_player_stats_across_games():
    store = Store(":memory:")
    finished_game(store, {"type": "win", "player": "ana"},
                  announced_race("bo", {"bo": 200, "ana": 300}),
                  {"type": "win", "player": "bo"}, {"type": "win", "player": "ana"})
    other = store.create_game(Coin.name, PLAYERS, {})         # still playing
    store.append(other, announced_race("ana", {"ana": 100}))
    stats = player_stats(store)
    assert stats["games"] == 2 and stats["finished"] == 1
    ana, bo = stats["players"]["ana"], stats["players"]["bo"]
    assert (ana["games"], ana["finished"], ana["wins"], ana["points"]) == (2, 1, 1, 2)
    assert (bo["wins"], bo["points"], bo["races"], bo["races_won"]) == (0, 1, 2, 1)
    assert ana["reaction_us"] == {"count": 2, "mean": 200_000, "median": 100_000,
                                  "best": 100_000}
    assert bo["reaction_us"] == {"count": 1, "mean": 200_000, "median": 200_000,
                                 "best": 200_000}


def test_stats_of_an_empty_store():
    assert player_stats(Store(":memory:")) == {"games": 0, "finished": 0, "players": {}}


def test_csv_has_one_row_per_player_per_game_and_the_same_race_figures():
    store = Store(":memory:")
    first = finished_game(store, announced_race("bo", {"bo": 200, "ana": 300}),
                          {"type": "win", "player": "ana"})
    store.create_game(Coin.name, PLAYERS, {})
    rows = list(csv.DictReader(io.StringIO(export_csv(store))))
    assert list(rows[0]) == CSV_COLUMNS and len(rows) == 4
    bo = next(r for r in rows if r["game_id"] == str(first) and r["player"] == "bo")
    assert (bo["races"], bo["races_won"], bo["races_lost"], bo["reactions"]) == ("1", "1", "0",
                                                                               "1")
    assert bo["mean_reaction_us"] == bo["best_reaction_us"] == "200000"
    assert (bo["score"], bo["rank"], bo["won"], bo["seat"]) == ("1", "2", "0", "2")
    stats = player_stats(store)["players"]["bo"]
    assert int(bo["races_won"]) == stats["races_won"]            # one loop, one answer
    assert {r["status"] for r in rows if r["game_id"] != str(first)} == {"playing"}


def test_export_then_import_is_the_same_game_and_not_current():
    store = Store(":memory:")
    gid = finished_game(store, {"type": "win", "player": "ana"},
                        {"type": "win", "player": "bo"}, {"type": "undo"},
                        {"type": "win", "player": "bo"}, {"type": "win", "player": "ana"})
    text = export_game(store, gid)
    head = json.loads(text.splitlines()[0])
    assert head["game"] == Coin.name and head["table"]["players"] == PLAYERS
    new = import_game(store, text)
    assert store.current_game() == gid and new != gid
    info = store.game_info(new)
    assert info["source"] == "import" and info["finished"] and info["players"] == PLAYERS
    assert info["summary"]["scores"] == {"ana": 2, "bo": 1}
    assert export_game(store, new).splitlines()[1:] == text.splitlines()[1:]


def test_import_refuses_a_file_that_does_not_replay_and_stores_nothing():
    store = Store(":memory:")
    gid = finished_game(store, {"type": "win", "player": "ana"})
    text = export_game(store, gid) + json.dumps({"type": "win", "player": "zed"}) + "\n"
    with pytest.raises(GameFileError, match="line 3"):
        import_game(store, text)
    assert len(store.list_games()) == 1


def test_normalise_players_gives_colours_and_refuses_shared_buzzers():
    out = normalise_players(["ana", {"name": "bo", "buzzer": "2"}])
    assert out[0] == {"name": "ana", "colour": "#e53935", "buzzer": None}
    assert out[1]["buzzer"] == "2" and out[1]["colour"].startswith("#")
    with pytest.raises(RulesError, match="same buzzer"):
        normalise_players([{"name": "a", "buzzer": "1"}, {"name": "b", "buzzer": "1"}])
    with pytest.raises(RulesError, match="needs a name"):
        normalise_players([{"name": " "}])
    with pytest.raises(RulesError, match="unknown player field"):
        normalise_players([{"name": "a", "seat": 3}])
    with pytest.raises(RulesError):
        normalise_players("ana")
