"""The league's pure parts, without a broker: the wire (URLs, ids, topics),
the password hashes Mosquitto reads, what the publisher lets out of a table,
and the league store's views (duplicates, gaps, standings, records)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from companion.league.app import LeagueSubscriber
from companion.league.config import acl_text, check_password, passwd_line
from companion.league.publisher import public_state
from companion.league.store import LeagueStore
from companion.league.topics import (BrokerURL, LeagueError, Topics, check_table_id, dumps,
                                     loads)
from tests.kit.league import STORE, event, finished
from tests.kit.league import store_result as result


@pytest.fixture
def league():
    store = LeagueStore(":memory:")
    yield store
    store.close()


def race(order, winner=None, loser=None, kind="first-press", announced=False, arm=0,
         virtual_players=()):
    return {"type": "race", "reason": "chope", "kind": kind, "winner": winner, "loser": loser,
            "tied": [], "announced": announced, "virtual": bool(virtual_players),
            "virtual_players": list(virtual_players),
            "spec": {"kind": kind, "eligible": [p for p, _ in order], "arm_ns": arm},
            "order": [{"player": p, "t_ns": t} for p, t in order]}


# -- the wire ----------------------------------------------------------------
@pytest.mark.parametrize("bad", ["", "a/b", "t+", "#", "with space", "x" * 33, "-lead", None])
def test_a_table_id_that_could_break_out_of_its_topic_is_refused(bad):
    with pytest.raises(LeagueError, match="table id"):
        check_table_id(bad)


@pytest.mark.parametrize("url, why", [("http://h:1", "scheme"), ("h:1883", "mqtt://"),
                                      ("mqtt://u:p@h:1", "credentials"),
                                      ("mqtt://h:99999", "port"), ("mqtt://h/x", "path")])
def test_a_bad_broker_url_says_what_is_wrong(url, why):
    with pytest.raises(LeagueError, match=why):
        BrokerURL.parse(url)


def test_topics_are_parsed_back_and_anything_else_is_not_a_league_topic():
    t = Topics("night")
    assert t.parse(t.state("t1")) == ("t1", "state", None)
    assert t.parse(t.game("t1", 12)) == ("t1", "game", 12)
    for other in ("tabletop/t1/event", "night/t1", "night/t1/event/x", "night/t1/game/x",
                  "night/t1/secret"):
        assert t.parse(other) is None


def test_payloads_carry_the_wire_version_and_anything_else_is_refused():
    assert loads(dumps({"a": 1})) == {"v": 1, "a": 1}
    for bad in (b"not json", b"[1]", b'{"v": 2}', b"\xff"):
        with pytest.raises(LeagueError):
            loads(bad)


@pytest.mark.skipif(shutil.which("mosquitto_passwd") is None, reason="mosquitto not installed")
def test_password_hashes_are_the_ones_mosquitto_passwd_makes(tmp_path):
    path = tmp_path / "pw"
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(path), "t1", "s3cret"], check=True)
    line = path.read_text().strip()
    assert check_password(line, "s3cret") and not check_password(line, "s3cre")
    mine = passwd_line("t1", "s3cret")
    assert mine.split("$")[:3] == line.split("$")[:3]        # t1:, 7, 101 rounds
    assert check_password(mine, "s3cret")


def test_the_acl_lets_each_table_write_only_its_own_tree_and_the_league_only_read():
    text = acl_text(["t1", "t2"], cafes={"cafe1": ["t3"]})
    blocks = [b.strip().splitlines() for b in text.split("\n\n")[1:]]
    mine = ["topic write tabletop/{0}/event", "topic write tabletop/{0}/state",
            "topic write tabletop/{0}/status", "topic write tabletop/{0}/game/+",
            "topic read tabletop/{0}/mark", "topic read tabletop/_league/{0}/pairing"]
    # the league writes the marks and the convention's pairings; each table reads its own
    assert blocks == [["user league", "topic read tabletop/#", "topic write tabletop/+/mark",
                       "topic write tabletop/_league/+/pairing"],
                      ["user t1", *[m.format("t1") for m in mine]],
                      ["user t2", *[m.format("t2") for m in mine]],
                      ["# the bridge from café broker cafe1", "user cafe1",
                       *[m.format("t3") for m in mine]]]


def test_the_state_sent_to_the_league_hides_scores_while_the_game_hides_them():
    snap = {"game": "tropichaos", "hides_scores": True, "finished": False,
            "scores": {"ana": 7}, "ranking": [["ana"]], "players": [
                {"name": "ana", "colour": "red", "buzzer": "b1"}],
            "race": None, "faults": [{"message": "stuck"}], "view": {"secret": 1}}
    out = public_state(snap)
    assert out["scores"] is None and out["ranking"] is None
    assert out["players"] == [{"name": "ana", "colour": "red"}]
    assert "view" not in out and "faults" not in out
    assert public_state({**snap, "finished": True})["scores"] == {"ana": 7}


# -- the league store ------------------------------------------------------------
def test_a_duplicate_delivery_is_harmless(league):
    assert league.add_event("t1", event(5, 0))
    assert not league.add_event("t1", event(5, 0))
    assert league.add_event("t2", event(5, 0))        # same id, other table: its own event
    assert league.event_ids("t1") == [5] and league.event_ids("t2") == [5]


def test_a_missing_event_shows_as_a_gap_until_it_arrives(league):
    league.add_event("t1", event(4, 3, since=3))
    league.add_event("t1", event(9, 7, since=3))
    assert league.gaps("t1") == [7]
    league.add_event("t1", event(7, 4, since=3))
    assert league.gaps("t1") == []


def test_the_table_id_comes_from_the_topic_not_the_payload(league):
    sub = LeagueSubscriber(league, "mqtt://127.0.0.1:1")
    payload = dumps({k: v for k, v in event(3, 0).items() if k != "v"} | {"table": "t9"})
    assert sub.handle("tabletop/t1/event", payload) == "event"
    assert league.event_ids("t1") == [3] and league.event_ids("t9") == []


@pytest.mark.parametrize("topic, payload", [
    ("tabletop/t1/event", b"{"), ("tabletop/t1/event", dumps({"id": "3"})),
    ("tabletop/t1/event", dumps({"id": -1, "prev": 0, "game_id": 1, "game": "g",
                                 "event": {}})),
    ("tabletop/t1/game/2", dumps({"finished": True})), ("elsewhere/t1/event", b"{}")])
def test_a_malformed_message_is_refused_and_counted_never_a_crash(league, topic, payload):
    sub = LeagueSubscriber(league, "mqtt://127.0.0.1:1")
    assert sub.handle(topic, payload) is None
    assert sub.rejected == 1 and league.tables() == [] or league.event_ids("t1") == []


def test_a_newer_state_wins_and_an_older_one_arriving_late_does_not(league):
    league.set_state("t1", {"sent_ns": 20, "game": "chomp"})
    league.set_state("t1", {"sent_ns": 10, "game": "chope"})
    assert league.tables()[0]["game"] == "chomp"


def test_standings_order_wins_then_opponents_beaten_then_fewer_games(league):
    # game 1: ana first, bo and cy share second; game 2: bo first, ana second
    finished(league, "t1", 1, [["ana"], ["bo", "cy"]], {"ana": 9, "bo": 4, "cy": 4})
    finished(league, "t2", 1, [["bo"], ["ana"]], {"bo": 3, "ana": 1})
    # game 3: dee and eve tie for first (their game's tiebreaks could not split them)
    finished(league, "t3", 1, [["dee", "eve"]], {"dee": 5, "eve": 5})
    table = [(p["rank"], p["name"], p["wins"], p["beaten"], p["places"])
             for p in league.standings()]
    assert table == [(1, "ana", 1, 2, [1, 2]), (2, "bo", 1, 1, [2, 1]),
                     (3, "dee", 1, 0, [1]), (3, "eve", 1, 0, [1]), (5, "cy", 0, 0, [2])]
    assert league.export_csv().splitlines()[1] == "1,ana,2,1,2,10,1 2"


def test_a_game_played_again_after_an_undone_ending_leaves_the_standings(league):
    finished(league, "t1", 1, [["ana"], ["bo"]], {}, version=9)
    assert [p["name"] for p in league.standings()] == ["ana", "bo"]
    league.set_result("t1", 1, {"v": 1, "store": STORE, "finished": False, "version": 10,
                                "game": "chope", "players": ["ana", "bo"], "sent_ns": 2})
    assert league.standings() == []
    league.set_result("t1", 1, result(1, [["ana"], ["bo"]], {}, version=9))   # late, stale
    assert league.standings() == []


def test_records_fastest_reactions_from_go_and_closest_finishes_from_the_edges(league):
    us = 1000
    league.add_event("t1", event(1, 0, ev=race([("ana", 180_000 * us), ("bo", 181_500 * us)],
                                               winner="ana", announced=True)))
    league.add_event("t1", event(2, 1, ev=race([("bo", 140_000 * us), ("ana", 900_000 * us)],
                                               winner="bo", announced=True)))
    league.add_event("t2", event(1, 0, ev=race([("cy", 5 * us), ("dee", 9 * us)], loser="dee",
                                               kind="last-press")))
    # a phone's tap is only millisecond-accurate: never a record
    league.add_event("t2", event(2, 1, ev=race([("eve", 1 * us), ("cy", 2 * us)], winner="eve",
                                               announced=True, virtual_players=["eve"])))
    # an undone race does not count
    league.add_event("t3", event(1, 0, ev=race([("fay", 10 * us), ("gus", 10 * us + 1)],
                                               winner="fay")))
    league.add_event("t3", event(2, 1, ev={"type": "undo"}))
    rec = league.records()
    assert [(r["player"], r["reaction_us"]) for r in rec["reactions"]] == [
        ("cy", 2), ("bo", 140_000), ("ana", 180_000), ("bo", 181_500), ("ana", 900_000)]
    assert [(f["table"], f["first"], f["second"], f["margin_us"]) for f in rec["finishes"]] == [
        ("t2", "dee", "cy", 4), ("t1", "ana", "bo", 1_500), ("t1", "bo", "ana", 760_000)]


def test_the_json_export_holds_every_event_and_the_view(league):
    league.add_event("t1", event(1, 0))
    data = json.loads(json.dumps(league.export_json()))
    assert data["format"] == "tabletop-companion-league"
    assert [e["id"] for e in data["events"]] == [1]
    assert set(data) >= {"tables", "standings", "results", "records"}
