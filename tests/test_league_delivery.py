"""End-to-end delivery (issue 24): a table counts an event delivered when the
*league* says it holds it, not when the broker acknowledged it.

A real Mosquitto with the generated configuration. The league publishes
each table's mark (the last event id up to which it holds every event,
retained, on a topic only the league writes and only that table reads);
the table's publisher re-sends from the mark whenever it lags behind what
the broker acknowledged: after a broker that lost acknowledged messages
(kill -9 with a stale persistence file), after the league's queue at the
broker was lost, after a gap."""

from __future__ import annotations

import threading

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from companion.league.app import LeagueServer
from companion.league.publisher import LeaguePublisher
from companion.league.topics import Topics, dumps
from tests.kit.helpers import wait_for
from tests.kit.league import SERVED, SMALL_CHOPE, Table, play_chope
from tests.kit.mosquitto import NEEDS_MOSQUITTO

pytestmark = NEEDS_MOSQUITTO
TOPICS = Topics()


def league(tmp_path, broker, **kw) -> LeagueServer:
    return LeagueServer(broker.url, tmp_path / "league.db", broker.creds("league"),
                        host="127.0.0.1", port=0, heartbeat_s=1.0, **SERVED, **kw).open().start()


def publish(table: Table, stall_s: float = 2.0) -> Table:
    table.pub = LeaguePublisher(table.session, table.store, table.broker.url, table.table_id,
                                table.creds, reconnect_s=(1, 1), stall_s=stall_s).start()
    return table


def log_some(table: Table, n: int) -> None:
    gid = table.store.current_game() or table.session.new_game(
        "chope", ["ana", "bo", "cy"], SMALL_CHOPE)
    for i in range(n):
        table.store.append(gid, {"type": "stop"} if i % 2 else
                           {"type": "flip", "card": "food:laksa"})
    table.session.tick()
    table.pub._wake.set()


def test_events_a_broker_acknowledged_then_lost_are_sent_again_from_the_leagues_mark(
        tmp_path, broker):
    lg = league(tmp_path, broker)
    t1 = publish(Table(tmp_path, broker, "t1"))
    try:
        log_some(t1, 5)
        assert t1.pub.delivered(15), t1.pub.status()
        lg.close()                      # the league is away: the broker queues for it
        stale = broker.save_copy()
        log_some(t1, 30)
        assert t1.pub.flush(10)         # acknowledged by the broker...
        broker.kill9(stale)             # ...which dies and comes back without them
        broker.start()
        lg = league(tmp_path, broker)
        assert wait_for(lambda: lg.store.event_ids("t1") == t1.ids(), timeout=30), (
            len(lg.store.event_ids("t1")), len(t1.ids()), t1.pub.status())
        assert t1.pub.delivered(10) and t1.pub.status()["rewinds"] >= 1
        assert lg.store.missing("t1") == 0
    finally:
        t1.close()
        lg.close()


def test_a_lost_league_session_is_repaired_from_the_mark_with_no_hand_reset(tmp_path, broker):
    """Someone with the league's password connects with a clean session while
    the league is away: the broker drops the league's queue. The tables see
    the league's mark stand still behind what the broker acknowledged and
    send again."""
    lg = league(tmp_path, broker)
    t1, t2 = publish(Table(tmp_path, broker, "t1")), publish(Table(tmp_path, broker, "t2"))
    try:
        log_some(t1, 3)
        log_some(t2, 3)
        assert t1.pub.delivered(15) and t2.pub.delivered(15)
        lg.close()
        log_some(t1, 40)
        log_some(t2, 40)
        assert t1.pub.flush(10) and t2.pub.flush(10)
        wiper = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="whatever",
                            protocol=mqtt.MQTTv5)
        wiper.username_pw_set("league", broker.creds("league").password)
        wiper.connect("127.0.0.1", broker.port, clean_start=True)
        wiper.loop_start()
        assert wait_for(wiper.is_connected, timeout=10)
        wiper.disconnect()
        wiper.loop_stop()
        lg = league(tmp_path, broker)
        for t in (t1, t2):
            assert wait_for(lambda: lg.store.event_ids(t.table_id) == t.ids(), timeout=30), (
                t.table_id, len(lg.store.event_ids(t.table_id)), len(t.ids()), t.pub.status())
        assert lg.store.missing("t1") == lg.store.missing("t2") == 0
    finally:
        t1.close()
        t2.close()
        lg.close()


def test_a_league_started_after_a_tables_game_gets_its_events_and_counts_its_result(
        tmp_path, broker):
    """The league's PC boots last: the table's game went out before any
    league listened, so the broker kept only its retained state, status and
    result, never its events. The league answers the table it has just heard
    of with a mark naming no store; the table sends its events again and the
    result counts. (It waited forever before: a table whose events the league
    held none of never got a mark.)"""
    t1 = publish(Table(tmp_path, broker, "t1"))
    lg = None
    try:
        winner = play_chope(t1)
        assert t1.pub.flush(10)
        lg = league(tmp_path, broker)
        assert wait_for(lambda: len(lg.store.results()) == 1, timeout=15), (
            lg.store.tables(), lg.store.event_ids("t1"), t1.pub.status())
        assert lg.store.event_ids("t1") == t1.ids()
        assert lg.store.missing("t1") == 0
        assert t1.pub.status()["rewinds"] >= 1
        assert [p["name"] for p in lg.store.standings() if p["wins"]] == [winner]
    finally:
        t1.close()
        if lg is not None:
            lg.close()


def test_only_the_league_writes_a_mark_and_a_table_reads_only_its_own(tmp_path, broker):
    lg = league(tmp_path, broker)
    t1, t2 = publish(Table(tmp_path, broker, "t1")), publish(Table(tmp_path, broker, "t2"))
    heard: list[str] = []
    refused = threading.Event()
    spy = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="t1", protocol=mqtt.MQTTv5)
    spy.username_pw_set("t1", broker.creds("t1").password)
    spy.on_message = lambda c, u, m: heard.append(m.topic)
    spy.on_publish = lambda c, u, mid, rc, p: rc.is_failure and refused.set()
    try:
        log_some(t1, 2)
        log_some(t2, 2)
        assert t1.pub.delivered(15) and t2.pub.delivered(15)
        t1.pub.close()
        t1.pub = None
        spy.connect("127.0.0.1", broker.port)
        spy.loop_start()
        assert wait_for(spy.is_connected, timeout=10)
        spy.subscribe(TOPICS.marks, qos=1)
        spy.publish(TOPICS.mark("t1"), dumps({"store": "x" * 16, "since": 0, "upto": 10**9}),
                    qos=1, retain=True)
        assert refused.wait(10)         # a table cannot move its own mark
        assert wait_for(lambda: TOPICS.mark("t1") in heard, timeout=10)
        assert TOPICS.mark("t2") not in heard
        assert lg.store.mark("t1")["upto"] == t1.ids()[-1]
    finally:
        spy.disconnect()
        spy.loop_stop()
        t1.close()
        t2.close()
        lg.close()


def test_a_gap_the_league_reports_is_filled_at_once(tmp_path, broker):
    """The league holds events beyond a hole (``ahead`` in its mark): the
    table sends again from the hole without waiting for the stall time."""
    lg = league(tmp_path, broker)
    t1 = publish(Table(tmp_path, broker, "t1"), stall_s=600)
    try:
        log_some(t1, 4)
        assert t1.pub.delivered(15)
        # drop two events on their way: the league never gets them
        original = lg.subscriber.handle
        dropped: list[int] = []

        def lossy(topic, payload):
            if topic.endswith("/event") and len(dropped) < 2:
                dropped.append(1)
                return None
            return original(topic, payload)
        lg.subscriber.handle = lossy
        log_some(t1, 6)
        assert wait_for(lambda: t1.pub.status()["rewinds"] >= 1, timeout=15), t1.pub.status()
        assert wait_for(lambda: lg.store.event_ids("t1") == t1.ids(), timeout=15)
        assert t1.pub.delivered(10)
    finally:
        t1.close()
        lg.close()



def test_a_result_the_league_never_got_is_sent_again_and_so_is_playing_again(
        tmp_path, broker):
    lg = league(tmp_path, broker)
    t1 = publish(Table(tmp_path, broker, "t1"), stall_s=1.0)
    original = lg.subscriber.handle
    dropped: list[str] = []

    def lossy(topic, payload):          # the first result and "playing again" vanish
        kind = b'"finished":true' in payload and "result" or "again"
        if "/game/" in topic and kind not in dropped:
            dropped.append(kind)
            return None
        return original(topic, payload)
    try:
        lg.subscriber.handle = lossy
        play_chope(t1)
        assert wait_for(lambda: len(lg.store.results()) == 1, timeout=20), (
            dropped, t1.pub.status())
        assert dropped == ["result"]
        t1.session.log({"type": "undo"})        # the ending undone: "playing again"
        assert wait_for(lambda: lg.store.results() == [], timeout=20), dropped
        assert dropped == ["result", "again"]
    finally:
        t1.close()
        lg.close()
