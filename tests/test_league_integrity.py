"""The league trusts nothing a table sends beyond its own table (issue 24).

The hostile probe of issue 24, reproduced against a real Mosquitto with the
generated configuration: a table's password used with the league's client
id, a 64 MiB message, a state ``sent_ns`` of 2**62, a result with no events
behind it, a malformed result; then a table restarted on a fresh store.
Each bad message is refused and logged, counted on that table's card only,
and nothing else changes (the page, the exports, the other tables)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from companion.league.store import LeagueStore
from companion.league.subscriber import LeagueSubscriber
from companion.league.topics import MAX_MESSAGE_BYTES, Topics, dumps
from tests.kit.helpers import wait_for
from tests.kit.league import (SMALL_CHOPE, Table, event, get_json, league_server, play_chope,
                             play_coinrace)
from tests.kit.mosquitto import NEEDS_MOSQUITTO, Broker

pytestmark = NEEDS_MOSQUITTO
TOPICS = Topics()
STORE = "0123456789abcdef"


class Intruder:
    """A raw MQTT client with someone's password and any client id."""

    def __init__(self, broker: Broker, user: str, client_id: str):
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                                  protocol=mqtt.MQTTv5)
        self.client.username_pw_set(user, broker.creds(user).password)
        self.acks: list[bool] = []
        self.connected = threading.Event()
        self.client.on_connect = lambda c, u, f, rc, p=None: (not rc.is_failure
                                                              and self.connected.set())
        self.client.on_publish = lambda c, u, mid, rc, p: self.acks.append(rc.is_failure)
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert self.connected.wait(10)

    def publish(self, topic: str, payload: bytes, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_a_tables_password_with_the_leagues_client_id_cannot_knock_the_league_off(
        tmp_path, broker):
    """The probe lost 295 of t2's events this way; now the broker binds a
    client id to its user, so t1's password can only knock t1 itself off."""
    league = league_server(tmp_path, broker)
    t2 = Table(tmp_path, broker, "t2").publish()
    try:
        assert wait_for(lambda: league.subscriber.connected, timeout=10)
        gid = t2.session.new_game("chope", ["ana", "bo", "cy"], SMALL_CHOPE)
        stop = threading.Event()

        def play():
            i = 0
            while not stop.is_set():
                t2.store.append(gid, {"type": "stop"} if i % 2 else
                                {"type": "flip", "card": "food:laksa"})
                t2.session.tick()
                i += 1
                time.sleep(0.005)
        player = threading.Thread(target=play)
        player.start()
        try:
            for client_id in ("tabletop-league-league", "league", "tabletop-table-t2") * 2:
                intruder = Intruder(broker, "t1", client_id)
                time.sleep(0.3)
                intruder.close()
        finally:
            stop.set()
            player.join()
        assert league.subscriber.disconnects == 0 and league.subscriber.connected
        assert t2.pub.flush(15)
        assert wait_for(lambda: league.store.event_ids("t2") == t2.ids(), timeout=30), (
            len(league.store.event_ids("t2")), len(t2.ids()))
        assert league.store.missing("t2") == 0
    finally:
        t2.close()
        league.close()


def test_a_64_mib_message_is_refused_and_the_league_carries_on(tmp_path, broker):
    league = league_server(tmp_path, broker)
    intruder = Intruder(broker, "t1", "t1")
    t2 = Table(tmp_path, broker, "t2").publish()
    try:
        huge = dumps({"store": STORE, "id": 1, "prev": 0, "since": 0, "seq": 1, "game_id": 1,
                      "game": "chope", "players": ["ana"], "event": {"pad": "x" * 2**26},
                      "sent_ns": time.time_ns()})
        intruder.publish(TOPICS.event("t1"), huge)
        t2.session.new_game("chope", ["ana", "bo"], SMALL_CHOPE)
        t2.session.log({"type": "flip", "card": "food:laksa"})
        assert t2.pub.flush(15)
        assert wait_for(lambda: league.store.event_ids("t2") == t2.ids(), timeout=15)
        # the broker refused it (a failed acknowledgement, or the connection cut)
        assert wait_for(lambda: intruder.acks == [True] or not intruder.client.is_connected(),
                        timeout=15), intruder.acks
        assert league.store.event_ids("t1") == []
        with urllib.request.urlopen(league.url + "/export.json", timeout=5) as r:
            exported = r.read()
        assert len(exported) < 100_000
    finally:
        intruder.close()
        t2.close()
        league.close()
    # and the league refuses one on its own too (a broker set up without the limit)
    store = LeagueStore(":memory:")
    sub = LeagueSubscriber(store, "mqtt://127.0.0.1:1")
    assert sub.handle(TOPICS.event("t1"), b"{" + b" " * MAX_MESSAGE_BYTES + b"}") is None
    assert sub.rejected == 1 and store.tables()[0]["refused"] == 1
    assert "limit" in store.tables()[0]["refused_why"]
    store.close()


def test_a_state_from_2_to_the_62_is_refused_and_cannot_freeze_the_card(tmp_path, broker):
    league = league_server(tmp_path, broker)
    t1 = Table(tmp_path, broker, "t1").publish()
    intruder = Intruder(broker, "t1", "t1")
    try:
        t1.session.new_game("chope", ["ana", "bo"], SMALL_CHOPE)
        assert t1.pub.flush(10)
        assert wait_for(lambda: (league.store.tables() or [{}])[0].get("game") == "chope", 10)
        intruder.publish(TOPICS.state("t1"), dumps({"game": "chomp", "players": [],
                                                    "sent_ns": 2**62}), retain=True)
        assert wait_for(lambda: league.store.tables()[0]["refused"] == 1, timeout=10)
        assert league.store.tables()[0]["game"] == "chope"
        # a table clock a few hours ahead is taken, but held as the league's now
        ahead = time.time_ns() + 3 * 3600 * 10**9
        intruder.publish(TOPICS.state("t1"), dumps({"game": "chomp", "players": [],
                                                    "sent_ns": ahead}))
        assert wait_for(lambda: league.store.tables()[0]["game"] == "chomp", timeout=10)
        t1.session.new_game("chope", ["ana", "bo", "cy"], SMALL_CHOPE)   # the table moves on
        assert wait_for(lambda: league.store.tables()[0]["game"] == "chope" and len(
            league.store.tables()[0]["players"]) == 3, timeout=10), league.store.tables()
    finally:
        intruder.close()
        t1.close()
        league.close()


def test_a_result_without_its_events_or_malformed_is_not_counted_and_the_exports_hold(
        tmp_path, broker, coinrace):
    league = league_server(tmp_path, broker)
    t1 = Table(tmp_path, broker, "t1").publish()
    intruder = Intruder(broker, "t2", "t2")
    try:
        play_coinrace(t1, ((("ana", 150), ("bo", 150.7)),))
        assert t1.pub.flush(10)
        assert wait_for(lambda: len(league.store.results()) == 1, timeout=10)
        assert league.store.results()[0]["checked"] == "replayed"
        forged = {"store": STORE, "game": "coinrace", "title": "x", "version": 40,
                  "finished": True, "players": [{"name": "zed"}, {"name": "yan"}],
                  "events": 3, "hidden": False, "options": {}, "sent_ns": time.time_ns(),
                  "summary": {"ranking": [["zed"], ["yan"]], "scores": {"zed": 9, "yan": 0}}}
        intruder.publish(TOPICS.game("t2", 5), dumps(forged), retain=True)     # no events
        bad = {**forged, "summary": {"ranking": "zed", "scores": {"zed": "lots"}}}
        intruder.publish(TOPICS.game("t2", 6), dumps(bad), retain=True)        # malformed
        intruder.publish(TOPICS.game("t2", 7), b'{"v":1,"finished":true}', retain=True)
        assert wait_for(lambda: league.subscriber.rejected == 2, timeout=10), (
            league.subscriber.status())
        time.sleep(0.3)
        assert [p["name"] for p in league.store.standings()] == ["ana", "bo"]
        cards = {t["table"]: t for t in get_json(league.url + "/api/league")["tables"]}
        assert cards["t2"]["refused"] == 2 and cards["t1"]["refused"] == 0
        with urllib.request.urlopen(league.url + "/export.csv", timeout=5) as r:
            assert r.status == 200 and "zed" not in r.read().decode()
        with urllib.request.urlopen(league.url + "/export.json", timeout=5) as r:
            assert r.status == 200
        # t1's own result, sent again with another ranking: its replay disagrees
        info = t1.store.game_info(1)
        mine = json.loads(league.store.rows("SELECT claim FROM games WHERE table_id = 't1'")
                          [0][0])
        mine["summary"]["ranking"] = list(reversed(mine["summary"]["ranking"]))
        t1_intruder = Intruder(broker, "t1", "t1-forger")
        try:
            t1_intruder.publish(TOPICS.game("t1", 1), dumps(
                {k: v for k, v in mine.items() if k != "v"}))
            assert wait_for(lambda: league.store.results() == [], timeout=10)
        finally:
            t1_intruder.close()
        assert info["summary"]["ranking"] != mine["summary"]["ranking"]
    finally:
        intruder.close()
        t1.close()
        league.close()


def test_a_table_restarted_on_a_fresh_store_has_its_new_game_reach_the_standings(
        tmp_path, broker):
    league = league_server(tmp_path, broker)
    t1 = Table(tmp_path, broker, "t1").publish()
    try:
        first = play_chope(t1)
        assert t1.pub.flush(10)
        assert wait_for(lambda: len(league.store.results()) == 1, timeout=10)
        old_store = t1.pub.store_id
        t1.close()
        for suffix in ("", "-wal", "-shm"):            # a fresh SD card, the same table id
            p = t1.path.with_name(t1.path.name + suffix)
            if p.exists():
                p.unlink()
        t1 = Table(tmp_path, broker, "t1").publish()
        assert t1.pub.store_id != old_store
        second = play_chope(t1)             # its game 1 again, event 1 again
        assert t1.pub.flush(10)
        assert wait_for(lambda: len(league.store.results()) == 2, timeout=15), (
            league.store.results(), league.store.tables())
        assert [(r["game_id"], r["store"] == old_store) for r in league.store.results()] == [
            (1, True), (1, False)]
        wins = {p["name"]: p["wins"] for p in league.store.standings()}
        assert sum(wins.values()) == 2 and wins[first] >= 1 and wins[second] >= 1
        assert league.store.event_ids("t1") == t1.ids()       # the new store's, from 1
        assert t1.ids()[0] == 1
        assert league.store.missing("t1") == 0
    finally:
        t1.close()
        league.close()


def test_events_missing_are_counted_as_events_not_gaps():
    store = LeagueStore(":memory:")
    try:
        for eid in (1, 2, 6):
            store.add_event("t1", event(eid, eid - 1 if eid < 6 else 5))
        assert store.missing("t1") == 3                  # 3, 4 and 5: one gap, 3 events
        assert store.mark("t1")["upto"] == 2 and store.mark("t1")["ahead"]
        store.add_event("t1", event(4, 3))
        assert store.missing("t1") == 2
        store.add_event("t1", event(3, 2))
        store.add_event("t1", event(5, 4))
        assert store.missing("t1") == 0 and store.mark("t1")["upto"] == 6
        assert store.tables()[0]["gaps"] == 0
    finally:
        store.close()


@pytest.mark.parametrize("field, value", [
    ("sent_ns", 2**62), ("id", 2**63), ("id", "3"), ("prev", 9), ("seq", 0),
    ("players", ["x" * 65]), ("players", "ana"), ("event", []), ("store", "../etc"),
    ("game", 7), ("line", "x" * 501), ("logged_ns", -1)])
def test_every_field_of_an_event_is_checked(field, value):
    store = LeagueStore(":memory:")
    sub = LeagueSubscriber(store, "mqtt://127.0.0.1:1")
    try:
        msg = {**event(4, 3, since=0), "sent_ns": time.time_ns(), field: value}
        msg.pop("v")
        assert sub.handle(TOPICS.event("t1"), dumps(msg)) is None
        assert sub.rejected == 1 and store.event_ids("t1") == []
        assert store.tables()[0]["refused"] == 1
        ok = {**event(4, 3, since=0), "sent_ns": time.time_ns()}
        ok.pop("v")
        assert sub.handle(TOPICS.event("t1"), dumps(ok)) == "event"   # the next one is fine
        assert store.event_ids("t1") == [4]
    finally:
        store.close()


def test_the_leagues_own_topics_heard_back_are_neither_stored_nor_refused():
    store = LeagueStore(":memory:")
    sub = LeagueSubscriber(store, "mqtt://127.0.0.1:1")
    try:
        assert sub.handle(TOPICS.mark("t1"), dumps({"store": STORE, "since": 0, "upto": 3})) \
            is None
        assert sub.handle("tabletop/_league/t1/pairing", b'{"v":1}') is None
        assert sub.rejected == 0 and store.tables() == []
    finally:
        store.close()


def test_event_ids_far_ahead_of_the_tables_own_version_leave_nothing_missing(tmp_path):
    """Issue 31: a table's own password published two far-ahead event ids
    and left its card at '929,455 event(s) missing' for good. An id beyond
    the version the table's own state reports is none it logged: it is not
    counted missing and no gap is asked for; the real gaps still are."""
    from companion.league.store import LeagueStore
    from tests.kit.league import STORE

    store = LeagueStore(tmp_path / "league.db")
    now = time.time_ns()

    def event(eid, prev, seq):
        store.add_event("t1", {"store": STORE, "id": eid, "prev": prev, "since": 0, "seq": seq,
                               "game_id": 1, "game": "chope", "players": ["ana", "bo"],
                               "type": "flip", "event": {"type": "flip"}, "sent_ns": now})

    def state(version):
        assert store.set_state("t1", {"game": "chope", "players": [], "game_id": 1,
                                      "version": version, "sent_ns": time.time_ns()})

    for eid in (1, 2, 3):
        event(eid, eid - 1, eid)
    state(3)
    event(929_455, 929_454, 929_455)            # forged, with the table's password
    event(929_456, 929_455, 929_456)
    assert store.missing("t1") == 0 and store.gaps("t1") == []
    event(5, 4, 5)                              # the table goes on; event 4 lost on the way
    state(5)
    assert store.missing("t1") == 1 and store.gaps("t1") == [4]
    store.close()
