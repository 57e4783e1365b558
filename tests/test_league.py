"""The league over a real Mosquitto (issue 13), started by the fixtures on a
free loopback port with the configuration ``python -m companion.league
config`` writes: tables publish their durable logs, the league screen shows
them, outages lose nothing, nothing is duplicated, the ACL holds, and a
secret card never reaches the broker.

Tables are real :class:`Store` + :class:`TableSession` on temporary files,
driven through ``session.log`` and, for races, through buzzer edges on a
test clock (the session's own race path)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

from companion.league.store import LeagueStore
from companion.league.topics import Credentials, Topics
from tests.kit.helpers import wait_for
from tests.kit.league import (SMALL_CHOPE, TABLES, Table, get_json, league_server,
                             play_chope, play_coinrace)
from tests.kit.mosquitto import NEEDS_MOSQUITTO

pytestmark = NEEDS_MOSQUITTO


@pytest.fixture
def tables(tmp_path, broker):
    made = [Table(tmp_path, broker, t) for t in TABLES]
    yield made
    for t in made:
        t.close()


# ---------------------------------------------------------------------------


def test_three_tables_play_and_the_league_page_shows_all_three_and_the_standings(
        tmp_path, broker, tables, coinrace):
    league = league_server(tmp_path, broker)
    try:
        t1, t2, t3 = (t.publish() for t in tables)
        choper = play_chope(t1)
        play_coinrace(t2, ((("ana", 150), ("bo", 150.7)), (("ana", 210), ("bo", 260))))
        t3.session.new_game("chope", ["dee", "eve"], SMALL_CHOPE)
        t3.session.log({"type": "flip", "card": "food:laksa"})
        for t in tables:
            assert t.pub.flush(10), t.pub.status()
        store = league.store
        assert wait_for(lambda: all(store.event_ids(t.table_id) == t.ids() for t in tables)
                        and len(store.results()) == 2, timeout=10), (
            [(store.event_ids(t.table_id), t.ids()) for t in tables], store.results(),
            [t.session.snapshot()["finished"] for t in tables])
        view = get_json(league.url + "/api/league")
        by_id = {t["table"]: t for t in view["tables"]}
        assert sorted(by_id) == TABLES
        assert by_id["t1"]["title"] == "Chope!" and by_id["t1"]["finished"]
        assert by_id["t3"]["players"] == [{"name": "dee", "colour": "#e53935"},
                                          {"name": "eve", "colour": "#1e88e5"}]
        assert by_id["t3"]["current_player"] == t3.session.snapshot()["current_player"]
        assert by_id["t3"]["last_event"] == t3.session.snapshot()["last_event"]
        assert choper in by_id["t1"]["last_race"]
        assert all(t["online"] and t["gaps"] == 0 for t in view["tables"])
        # standings: each game's own ranking (with its tiebreaks), then the league's order
        results = {r["table"]: r for r in view["results"]}
        assert results["t1"]["ranking"] == t1.store.game_info(1)["summary"]["ranking"]
        assert "Table cards" in results["t1"]["tiebreak"]
        assert results["t2"]["ranking"][0] == ["ana", "bo"] or results["t2"]["scores"]
        standings = {p["name"]: p for p in view["standings"]}
        assert set(standings) == {"ana", "bo", "cy"}
        assert standings["ana"]["games"] == 2
        # ana won both races of the coin game (2-0); in Chope! whoever choped the
        # one Red Table wins; wins first, then opponents beaten
        assert standings["ana"]["wins"] >= 1 and standings["bo"]["wins"] == 0
        assert view["standings"][0]["name"] in ("ana", choper)
        assert standings["bo"]["rank"] > standings["ana"]["rank"]
        # race records: reactions from GO (announced races); closest finish 0.7 ms
        reactions = view["records"]["reactions"]
        assert reactions[0] == {"table": "t2", "game_id": 1, "game": "coinrace",
                                "player": "ana", "reaction_us": 150_000}
        assert [r["reaction_us"] for r in reactions] == sorted(r["reaction_us"] for r in reactions)
        finishes = view["records"]["finishes"]
        assert finishes[0]["margin_us"] == 700 and finishes[0]["first"] == "ana"
        assert any(f["table"] == "t1" and f["first"] == choper and f["margin_us"] == 800
                   for f in finishes)
        # the page, the exports; read-only
        with urllib.request.urlopen(league.url + "/", timeout=5) as r:
            assert b"Standings" in r.read()
        with urllib.request.urlopen(league.url + "/export.csv", timeout=5) as r:
            csv_text = r.read().decode()
        assert csv_text.splitlines()[0] == "rank,player,games,wins,beaten,points,places"
        assert any(line.split(",")[1] == choper for line in csv_text.splitlines()[1:4])
        exported = get_json(league.url + "/export.json")
        assert exported["format"] == "tabletop-companion-league"
        assert len(exported["events"]) == sum(len(t.ids()) for t in tables)
        req = urllib.request.Request(league.url + "/api/league", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=5)
        assert err.value.code == 405
        err.value.close()
    finally:
        league.close()


@pytest.mark.slow
def test_a_table_that_loses_the_broker_keeps_playing_and_the_league_catches_up_with_every_event(
        tmp_path, broker, tables):
    """The broker goes away (a clean restart); the table logs on; when it is
    back the league has every event exactly once, and the publisher's
    progress survives the table's own restart too."""
    league = league_server(tmp_path, broker)
    t1 = tables[0].publish()
    try:
        s = t1.session
        s.new_game("chope", ["ana", "bo", "cy"], SMALL_CHOPE)
        s.log({"type": "flip", "card": "food:laksa"})
        assert t1.pub.flush(10)
        broker.stop()
        assert wait_for(lambda: not t1.pub.status()["connected"], timeout=10)
        s.log({"type": "stop"})
        s.log({"type": "flip", "card": "food:satay"})
        s.log({"type": "undo"})
        s.log({"type": "flip", "card": "food:satay"})
        assert t1.pub.status()["pending"] == 4          # kept in the log, not lost
        # the table restarts while offline: its publisher resumes from the acked event
        acked = t1.pub.status()["acked"]
        t1.pub.close()
        t1.pub = None
        s.log({"type": "stop"})
        t1.publish()            # still offline: nothing can move its progress on yet
        assert t1.pub.status()["acked"] == acked
        broker.start()
        assert t1.pub.flush(15), t1.pub.status()
        assert wait_for(lambda: league.store.event_ids("t1") == t1.ids(), timeout=15), (
            league.store.event_ids("t1"), t1.ids())
        ids = league.store.event_ids("t1")
        assert len(ids) == len(set(ids)) == 6
        assert league.store.gaps("t1") == []
        rows = league.store.rows("SELECT type FROM events WHERE table_id='t1' ORDER BY event_id")
        assert [r[0] for r in rows] == ["flip", "stop", "flip", "undo", "flip", "stop"]
    finally:
        league.close()


def test_the_broker_keeps_the_league_queue_across_its_restart(tmp_path, broker, tables):
    """The league screen is away; tables play; the broker restarts; the
    league comes back and gets everything from the broker's saved queue."""
    league = league_server(tmp_path, broker)
    assert wait_for(lambda: league.subscriber.connected, timeout=10)
    league.close()                       # away, but its session stays at the broker
    t1 = tables[0].publish()
    t1.session.new_game("chope", ["ana", "bo", "cy"], SMALL_CHOPE)
    for ev in ({"type": "flip", "card": "food:laksa"}, {"type": "stop"},
               {"type": "flip", "card": "food:satay"}):
        t1.session.log(ev)
    assert t1.pub.flush(10)
    t1.pub.close()
    t1.pub = None
    broker.stop()
    broker.start()
    league = league_server(tmp_path, broker)
    try:
        assert wait_for(lambda: league.store.event_ids("t1") == t1.ids(), timeout=15)
        assert league.subscriber.duplicates == 0
    finally:
        league.close()


def test_the_league_app_restarts_and_rebuilds_its_view_from_its_store(
        tmp_path, broker, tables, coinrace):
    league = league_server(tmp_path, broker)
    t1, t2 = tables[0].publish(), tables[1].publish()
    play_chope(t1)
    play_coinrace(t2)
    assert t1.pub.flush(10) and t2.pub.flush(10)
    assert wait_for(lambda: len(league.store.results()) == 2, timeout=10)
    before = get_json(league.url + "/api/league")
    league.close()
    t2.session.new_game("coinrace", ["ana", "bo"], {"target": 1})
    t2.session.log({"type": "flip", "side": "tails"})     # while the league is away
    assert t2.pub.flush(10)
    # a new league process on the same file: the view is back before any message
    store = LeagueStore(tmp_path / "league.db")
    rebuilt = store.league()
    store.close()
    for key in ("standings", "results", "records"):
        assert rebuilt[key] == before[key], key
    league = league_server(tmp_path, broker)
    try:
        assert wait_for(lambda: league.store.event_ids("t2") == t2.ids(), timeout=15), (league.store.event_ids("t2"), t2.ids(), league.subscriber.status())
        # the table's state (its game) is its own message: it may come just after the events
        game_of_t2 = lambda: {t["table"]: t["game_id"]                  # noqa: E731
                              for t in get_json(league.url + "/api/league")["tables"]}.get("t2")
        assert wait_for(lambda: game_of_t2() == 2, timeout=15), game_of_t2()
        after = get_json(league.url + "/api/league")
        assert after["standings"] == before["standings"]
    finally:
        league.close()


def test_wrong_credentials_and_another_tables_topic_are_refused(tmp_path, broker, tables):
    league = league_server(tmp_path, broker)
    try:
        # a wrong password: the broker refuses the connection
        t1 = tables[0]
        t1.creds = Credentials("t1", "not-the-password")
        t1.session.new_game("chope", ["ana", "bo"], SMALL_CHOPE)
        t1.session.log({"type": "flip", "card": "food:laksa"})
        t1.publish()
        assert wait_for(lambda: t1.pub.status()["error"] is not None, timeout=10)
        assert "refused" in t1.pub.status()["error"]
        assert not t1.pub.status()["connected"] and t1.pub.status()["acked"] == 0
        # t2's credentials used to publish as t3: connected, but every message refused
        t3 = tables[2]
        t3.creds = broker.creds("t2")
        t3.session.new_game("chope", ["ana", "bo"], SMALL_CHOPE)
        t3.session.log({"type": "flip", "card": "food:laksa"})
        t3.publish()
        assert wait_for(lambda: t3.pub.status()["refused"] > 0, timeout=10), t3.pub.status()
        assert t3.pub.status()["acked"] == 0
        assert "not authorized" in t3.pub.status()["error"].lower()
        # the league's own user may read but never write
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        refused = threading.Event()
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="intruder",
                        protocol=mqtt.MQTTv5)
        c.username_pw_set("league", broker.creds("league").password)
        c.on_publish = lambda cl, ud, mid, rc, props: rc.is_failure and refused.set()
        c.connect("127.0.0.1", broker.port)
        c.loop_start()
        try:
            c.publish(Topics().event("t1"), b'{"v":1}', qos=1)
            assert refused.wait(10)
        finally:
            c.disconnect()
            c.loop_stop()
        time.sleep(0.3)
        assert league.store.event_ids("t1") == [] and league.store.event_ids("t3") == []
        assert league.subscriber.rejected == 0
    finally:
        league.close()


def test_a_chope_favourite_never_reaches_the_broker(tmp_path, broker, tables):
    """The wire check of the phones, on the broker: everything published,
    read raw as the league receives it, carries no My Favourite food."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    seen: list[bytes] = []
    sniffer = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="sniffer",
                          protocol=mqtt.MQTTv5)
    sniffer.username_pw_set("league", broker.creds("league").password)
    sniffer.on_message = lambda c, u, m: seen.append(bytes(m.payload))
    subscribed = threading.Event()
    sniffer.on_subscribe = lambda *a: subscribed.set()
    sniffer.on_connect = lambda c, *a: c.subscribe("#", qos=1)
    sniffer.connect("127.0.0.1", broker.port)
    sniffer.loop_start()
    try:
        assert subscribed.wait(10)
        t1 = tables[0].publish()
        s = t1.session
        s.new_game("chope", ["ana", "bo"], {**SMALL_CHOPE, "favourite_food": True})
        s.log({"type": "favourite", "player": "ana", "food": "laksa"})
        s.log({"type": "favourite", "player": "bo", "food": "satay"})
        assert t1.pub.flush(10)
        assert wait_for(lambda: sum(b'"favourite"' in p for p in seen) >= 2, timeout=10)
        for payload in seen:
            assert b"laksa" not in payload and b"satay" not in payload, payload
        events = [json.loads(p) for p in seen if b'"type":"favourite"' in p]
        assert [e["event"] for e in events] == [{"type": "favourite", "player": "ana"},
                                                {"type": "favourite", "player": "bo"}]
    finally:
        sniffer.disconnect()
        sniffer.loop_stop()


def test_the_league_command_writes_a_config_the_broker_runs_and_serve_refuses_bad_options(
        tmp_path, capsys):
    from companion.league.__main__ import main

    out = tmp_path / "cfg"
    assert main(["config", "--out", str(out), "--tables", "a1,a2", "--port", "18999"]) == 0
    assert (out / "mosquitto.conf").read_text().count("listener 18999") == 1
    assert oct((out / "secrets" / "a1.password").stat().st_mode & 0o777) == "0o600"
    before = (out / "secrets" / "a1.password").read_text()
    assert main(["config", "--out", str(out), "--tables", "a1,a2,a3"]) == 0
    assert (out / "secrets" / "a1.password").read_text() == before   # kept on a re-run
    assert "user a3\ntopic write tabletop/a3/event" in (out / "acl").read_text()
    err = []

    class W:
        def write(self, s):
            err.append(s)
    assert main(["config", "--out", str(out), "--tables", "a/1"], stderr=W()) == 2
    assert "table id" in "".join(err)
    assert main(["serve", "--broker", "http://x", "--db", str(tmp_path / "l.db")]) == 2
    assert "mqtt://" in capsys.readouterr().out


@pytest.mark.slow
def test_a_long_outage_larger_than_the_publish_window_arrives_whole_and_in_order(
        tmp_path, broker, tables):
    """An hour offline is a long log: more events than the publisher keeps
    in flight (its window) all arrive, once each, with no gap."""
    league = league_server(tmp_path, broker)
    t1 = tables[0]
    try:
        gid = t1.session.new_game("chope", ["ana", "bo", "cy"], SMALL_CHOPE)
        broker.stop()
        for i in range(450):        # the log as an outage leaves it (appended durably)
            t1.store.append(gid, {"type": "stop"} if i % 2 else
                            {"type": "flip", "card": "food:laksa"})
        t1.publish()
        assert t1.pub.window < 450
        time.sleep(0.5)
        assert t1.pub.status()["acked"] == 0 and t1.pub.status()["pending"] == 450
        broker.start()
        assert t1.pub.flush(30), t1.pub.status()
        # the wait is generous: the league reconnects with backoff and takes
        # 450 queued messages one durable write at a time (5 s on a quiet
        # machine, over 30 s once under a load average of 8)
        assert wait_for(lambda: league.store.event_ids("t1") == t1.ids(), timeout=90)
        assert league.store.gaps("t1") == [] and len(t1.ids()) == 450
    finally:
        league.close()


def test_companion_serve_with_league_publishes_the_table(tmp_path, broker):
    """`companion serve --league URL --table-id t1 --league-password-file F`:
    the served table's log reaches the league, and the banner says so."""
    from companion.app import TableServer

    league = league_server(tmp_path, broker)
    served = TableServer(host="127.0.0.1", port=0, db_path=tmp_path / "served.db", pin="246810",
                         source="mock", demo=True,
                         league={"url": broker.url, "table_id": "t1",
                                 "password_file": broker.files["secrets"]["t1"]})
    try:
        served.open().start()
        assert "League: table t1 -> " in served.banner()
        served.session.log({"type": "flip", "card": "food:laksa"})
        assert served.league.flush(10), served.league.status()
        ids = sorted(i for g in served.store.list_games() for i, _ in served.store.events(g["id"]))
        assert wait_for(lambda: league.store.event_ids("t1") == ids, timeout=10)
        view = get_json(league.url + "/api/league")
        assert [t["table"] for t in view["tables"]] == ["t1"]
        assert view["tables"][0]["title"] == "Chope!"
    finally:
        served.close()
        league.close()
    assert served.league is None                       # closed with the table


def test_serve_refuses_a_league_without_a_table_id(tmp_path):
    from companion.cli import main

    out = []

    class W:
        def write(self, s):
            out.append(s)

        def flush(self):
            pass
    rc = main(["serve", "--port", "0", "--db", str(tmp_path / "x.db"), "--pin", "246810",
               "--source", "mock", "--league", "mqtt://127.0.0.1:1"], stdout=W(), stderr=W())
    assert rc == 2
