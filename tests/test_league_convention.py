"""A convention night end to end (issue 24): the league seats rounds from a
player list, each table learns its pairing over MQTT (a real Mosquitto,
the generated configuration), a table playing the wrong game or players is
told so, results come from the tables with nobody typing them, and the
next round is seated when every pod has finished. Also, without a broker:
the league's convention state survives a restart, another plan on the same
file is refused, and the table's notice reaches its pages' live stream."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from companion.league.__main__ import main as league_main
from companion.league.convention import Convention, same_players
from companion.league.store import LeagueStore
from companion.league.tableseat import TableSeat, seat_notice
from companion.league.topics import LeagueError, Topics
from tests.kit.helpers import wait_for
from tests.kit.league import (MS, PLAYERS, SERVED, SMALL_CHOPE, STORE, TABLES, Table,
                             get_json, hall_server, plan)
from tests.kit.league import convention_result as result
from tests.kit.mosquitto import MOSQUITTO, Broker

def finish_chope(session, players) -> list:
    """A small Chope! with ``players`` to its end (the Red Table choped
    0.8 ms ahead); the game's final ranking."""
    from companion.races.edges import ButtonEdge

    session.new_game("chope", list(players), SMALL_CHOPE)
    session.log({"type": "flip", "card": "food:laksa"})
    session.log({"type": "stop"})
    session.log({"type": "flip", "card": "food:satay"})
    session.log({"type": "keep"} if {"type": "keep"} in session.legal_events()
                else {"type": "stop"})
    session.log({"type": "flip", "card": "table:red"})
    first, second = session.snapshot()["race"]["eligible"][:2]
    t0 = session.clock()
    for who, ms in ((first, 100), (second, 100.8)):
        session.feed_edge(ButtonEdge(who, True, t0 + int(ms * MS)))
        session.feed_edge(ButtonEdge(who, False, t0 + int((ms + 80) * MS)))
    session.clock.t = t0 + 3000 * MS
    session.tick()
    snap = session.snapshot()
    assert snap["finished"], snap
    return snap["ranking"]


# -- without a broker ------------------------------------------------------------

def test_results_count_only_for_the_pods_game_players_and_a_later_game(tmp_path):
    store = LeagueStore(tmp_path / "league.db")
    result(store, "t1", 1, [["x"], ["y"]])          # a finished game from before the night
    sent = []
    conv = Convention(store, plan(), send=lambda t, p: sent.append((t, json.loads(p)))).open()
    r1 = conv.current
    assert r1.number == 1 and [len(p.players) for p in r1.pods] == [3, 3]
    assert conv.floors[1]["t1"] == {"store": STORE, "game": 1}
    pod1, pod2 = r1.pods
    # the wrong players, the wrong game, an old game id: none counts
    result(store, pod1.table, 2, [[pod1.players[0]], [pod2.players[0]], [pod1.players[1]]])
    result(store, pod1.table, 3, [[p] for p in pod1.players], game="chomp")
    conv.sweep()
    assert (1, pod1.table) not in conv.results and "not Chope!" in conv.refusals[pod1.table]
    # names as the table typed them (case, spaces) count for the pod's players
    typed = [[pod1.players[2].upper() + " "], [pod1.players[0].lower()], [pod1.players[1]]]
    result(store, pod1.table, 4, typed)
    conv.sweep()
    assert conv.results[(1, pod1.table)] == (4, ((pod1.players[2],), (pod1.players[0],),
                                                 (pod1.players[1],)))
    assert conv.current.number == 1                   # the other pod still plays
    # an ending undone while the round is on: taken back, then counted again
    store.set_result(pod1.table, 4, {"store": STORE, "finished": False, "game": "chope",
                                     "players": [], "version": 5, "sent_ns": 1})
    conv.sweep()
    assert (1, pod1.table) not in conv.results
    result(store, pod1.table, 4, typed, version=6)          # redone
    result(store, pod2.table, 1, [[p] for p in pod2.players])
    conv.sweep()
    assert conv.current.number == 2
    assert {t: f["game"] for t, f in conv.floors[2].items()} == {"t1": 4, "t2": 1, "t3": 0}
    last = {t: p for t, p in sent}
    assert last["tabletop/_league/t1/pairing"]["round"] == 2
    assert last["tabletop/_league/t3/pairing"]["players"] == []       # no pod at t3
    view = conv.view()
    assert view["round"] == 2 and view["history"][0]["pods"][0]["ranking"]
    assert [s["games"] for s in view["standings"]] == [1] * 6
    store.close()


def test_a_table_on_a_fresh_store_mid_round_has_its_pods_games_counted(tmp_path):
    """Issue 31: the round kept the highest game id of the table's store
    when it was seated and took only games above it from the table's store
    now; a table whose card was replaced starts again at game 1, so its pod
    showed 'waiting' and the round stalled."""
    store = LeagueStore(tmp_path / "league.db")
    for gid in range(1, 13):        # twelve games on t1's first card before the night
        result(store, "t1", gid, [["x"], ["y"]])
    conv = Convention(store, plan(), send=lambda t, p: None).open()
    pod = next(p for p in conv.current.pods if p.table == "t1")
    assert conv.pairing("t1")["floor"] == 12
    # the card is replaced: a fresh store, its games from 1
    result(store, "t1", 1, [[p] for p in pod.players], store_id="fedcba9876543210")
    conv.sweep()
    assert conv.results[(1, "t1")][0] == 1
    assert conv.pairing("t1")["floor"] == 0 and conv.pairing("t1")["counted"]
    store.close()


def test_a_restarted_league_carries_on_and_refuses_another_convention(tmp_path):
    db = tmp_path / "league.db"
    store = LeagueStore(db)
    conv = Convention(store, plan()).open()
    first = conv.current
    for i, pod in enumerate(first.pods):
        result(store, pod.table, i + 1, [[p] for p in pod.players])
    conv.sweep()
    second = conv.current
    store.close()
    store = LeagueStore(db)
    again = Convention(store, plan()).open()
    assert again.rounds == [first, second] and again.results == conv.results
    with pytest.raises(LeagueError, match="another convention"):
        Convention(store, plan(seed="8")).open()
    store.close()


def test_the_same_plan_seats_the_same_night():
    a = Convention(LeagueStore(":memory:"), plan()).open()
    b = Convention(LeagueStore(":memory:"), plan()).open()
    assert a.current == b.current


def test_plans_and_options_that_cannot_run_are_refused(tmp_path, capsys):
    with pytest.raises(LeagueError, match="unknown game"):
        plan(game="nope")
    with pytest.raises(LeagueError, match="listed twice"):
        plan(players=["ana", "ANA", "bo"])
    with pytest.raises(LeagueError, match="pod-size"):
        plan(target=7)
    with pytest.raises(LeagueError, match="cannot make a table"):
        plan(players=["solo"])
    with pytest.raises(LeagueError, match="once each"):
        plan(tables=["t1", "t1"])
    listing = tmp_path / "players.txt"
    listing.write_text("# the night\nana\n\n  bo  # late\n")
    errors = []

    class Err:
        def write(self, s):
            errors.append(s)

    base = ["serve", "--broker", "mqtt://127.0.0.1:1", "--db", str(tmp_path / "x.db")]
    assert league_main(base + ["--players", str(listing), "--game", "nope", "--tables", "t1"],
                       stderr=Err()) == 2
    assert "unknown game" in "".join(errors)
    errors.clear()
    assert league_main(base + ["--game", "chope", "--tables", "t1"], stderr=Err()) == 2
    assert "--players" in "".join(errors)
    errors.clear()
    assert league_main(base + ["--players", str(tmp_path / "none.txt"), "--game", "chope",
                               "--tables", "t1"], stderr=Err()) == 2
    assert "cannot read the player list" in "".join(errors)


def test_same_players_ignores_case_and_spaces_and_nothing_else():
    assert same_players(["Ana", "bo"], [" ana", "BO"]) == {" ana": "Ana", "BO": "bo"}
    assert same_players(["Ana", "bo"], ["ana"]) is None
    assert same_players(["Ana", "bo"], ["ana", "bo", "cy"]) is None
    assert same_players(["Ana", "bo"], ["ana", "ana"]) is None


def test_the_table_notice_says_what_to_start_and_warns_of_the_wrong_game():
    p = {"table": "t1", "round": 2, "rounds": 3, "game": "chope", "title": "Chope!",
         "players": ["ana", "bo", "cy"], "floor": 4, "counted": False, "done": False}
    assert seat_notice(None, {}) is None
    n = seat_notice(p, {"game": None})
    assert n["level"] == "info" and "Start Chope! with ana, bo, cy" in n["text"]
    old = {"game": "chomp", "game_id": 4, "players": [{"name": "x"}], "finished": True}
    assert seat_notice(p, old)["level"] == "info"          # the last round's game: not wrong
    ok = {"game": "chope", "game_id": 5, "players": [{"name": n} for n in ("CY", "ana", "bo")]}
    assert seat_notice(p, ok)["text"].endswith("playing.")
    wrong = {"game": "chomp", "title": "Chomp!", "game_id": 5,
             "players": [{"name": "ana"}, {"name": "bo"}]}
    n = seat_notice(p, wrong)
    assert n["level"] == "warn" and "Chomp! with ana, bo" in n["text"] and \
        "will not count" in n["text"]
    assert seat_notice(dict(p, players=[]), {})["text"] == "No pod at this table this round."
    assert "counted" in seat_notice(dict(p, counted=True), ok)["text"]
    over = dict(p, counted=True, counted_game=5, done=True)
    assert seat_notice(over, ok)["title"] == "Convention over"
    assert seat_notice(over, dict(ok, game_id=6)) is None        # the table plays on after
    assert seat_notice(dict(over, players=[], counted=False, counted_game=None),
                       {"game_id": 4})["title"] == "Convention over"


def test_a_notice_reaches_every_live_page_and_pages_that_connect_later():
    from companion.record.store import Store
    from companion.table.session import TableSession
    from companion.web.sse import Broker as SSE

    session = TableSession(Store(":memory:"))
    sse = SSE(session)
    live = sse.connect()
    sse.set_notice({"key": "league", "level": "warn", "title": "Round 1", "text": "no"})
    assert b"event: notice" in live.queue.get_nowait().frame
    later = sse.connect()
    first = next(sse.stream(later))
    assert b"event: notice" in first and b'"level":"warn"' in first
    sse.set_notice(None)
    assert b'"clear":true' in live.queue.get_nowait().frame
    assert b"event: notice" not in next(sse.stream(sse.connect()))
    sse.close()


# -- with Mosquitto ----------------------------------------------------------------

needs_broker = pytest.mark.skipif(not Path(MOSQUITTO).exists(), reason="no mosquitto")


class Seated(Table):
    """A table with its publisher and its seat (the notices it shows kept)."""

    def publish(self) -> "Seated":
        super().publish()
        self.notices: list = []
        self.seat = TableSeat(self.session, self.pub, self.notices.append).start()
        return self

    def close(self) -> None:
        if getattr(self, "seat", None) is not None:
            self.seat.close()
        super().close()


def _round_pods(league):
    return {p["table"]: p for p in get_json(league.url + "/api/league")["convention"]["pods"]}


@needs_broker
@pytest.mark.slow
def test_a_convention_night_over_mosquitto(tmp_path):
    from companion.league.app import LeagueServer

    broker = Broker(tmp_path / "broker", tables=TABLES).start()
    tables = [Seated(tmp_path, broker, t) for t in TABLES]
    league = LeagueServer(broker.url, tmp_path / "league.db", broker.creds("league"),
                          host="127.0.0.1", port=0, convention=plan(), **SERVED).open().start()
    try:
        for t in tables:
            t.publish()
        by = {t.table_id: t for t in tables}
        assert wait_for(lambda: all(t.seat.pairing for t in tables), timeout=10)
        pods = {p.table: p for p in league.convention.current.pods}
        assert set(pods) == {"t1", "t2"}
        assert by["t3"].notices[-1]["text"] == "No pod at this table this round."
        assert "Start Chope! with " + ", ".join(pods["t1"].players) in by["t1"].notices[-1]["text"]
        # t1 starts with the wrong players: told so at once, and the league page says so
        wrong = [pods["t1"].players[0], pods["t1"].players[1], pods["t2"].players[0]]
        finish_chope(by["t1"].session, wrong)
        assert by["t1"].notices[-1]["level"] == "warn"
        assert by["t1"].pub.flush(10)
        assert wait_for(lambda: _round_pods(league)["t1"]["status"] == "wrong", timeout=10)
        # nobody types a result: the pods' finished games are taken from the tables
        for table in ("t1", "t2"):
            finish_chope(by[table].session, pods[table].players)
            assert by[table].pub.flush(10)
        assert wait_for(lambda: league.convention.current.number == 2, timeout=10), (
            league.convention.results, league.convention.refusals,
            [(r["table"], r["game_id"], r["ranking"]) for r in league.store.results()])
        assert wait_for(lambda: all(t.seat.pairing["round"] == 2 for t in tables), timeout=10)
        view = get_json(league.url + "/api/league")["convention"]
        assert [h["round"] for h in view["history"]] == [1]
        assert all(p["ranking"] for p in view["history"][0]["pods"])
        # round 2 to the end
        pods = {p.table: p for p in league.convention.current.pods}
        for table, pod in pods.items():
            assert "Start Chope!" in by[table].notices[-1]["text"]
            finish_chope(by[table].session, pod.players)
            assert by[table].pub.flush(10)
        assert wait_for(lambda: league.convention.done, timeout=10)
        view = get_json(league.url + "/api/league")["convention"]
        assert view["done"] and sorted(s["name"] for s in view["standings"]) == sorted(PLAYERS)
        assert all(s["games"] == 2 for s in view["standings"])
        assert wait_for(lambda: by["t1"].notices[-1]["title"] == "Convention over", timeout=10)
        assert league.subscriber.status()["rejected"] == 0    # its own pairings are not "bad"
        with urllib.request.urlopen(league.url + "/", timeout=5) as r:
            assert b"Convention" in r.read()
    finally:
        league.close()
        for t in tables:
            t.close()
        broker.stop()


def _client(broker, user):
    import time

    from companion.league.client import mqtt_client
    from companion.league.topics import BrokerURL

    got = []
    c = mqtt_client(BrokerURL.parse(broker.url), broker.creds(user), f"acl-test-{user}", (1, 1))
    c.on_message = lambda cl, u, msg: got.append((msg.topic, msg.payload))
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    assert wait_for(c.is_connected, timeout=5)
    time.sleep(0.05)
    return c, got


@needs_broker
def test_a_table_cannot_write_a_pairing_nor_read_another_tables(tmp_path):
    """The ACL: only the league writes pairings; a table reads only its own."""
    broker = Broker(tmp_path / "broker", tables=TABLES).start()
    clients = []
    try:
        topics = Topics()
        t1, _ = _client(broker, "t1")
        lg, _ = _client(broker, "league")
        clients += [t1, lg]
        for t in ("t1", "t2"):
            lg.publish(topics.pairing(t), f"for-{t}".encode(), qos=1,
                       retain=True).wait_for_publish(5)
        # after the league's: a forged one, were it taken, would be what t2 gets
        t1.publish(topics.pairing("t2"), b"forged", qos=1, retain=True).wait_for_publish(5)
        t2, got = _client(broker, "t2")
        clients.append(t2)
        t2.subscribe([(topics.pairing("t1"), 1), (topics.pairing("t2"), 1)])
        assert wait_for(lambda: got, timeout=5)
        import time
        time.sleep(0.5)
        assert got == [(topics.pairing("t2"), b"for-t2")]
    finally:
        for c in clients:
            c.disconnect()
            c.loop_stop()
        broker.stop()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


@needs_broker
def test_companion_serve_shows_its_pairing_on_its_live_pages(tmp_path):
    """`companion serve --league ...`: the served table reads its pairing on
    its own league connection and every live page of it gets the notice."""
    from companion.app import TableServer
    from companion.league.app import LeagueServer

    broker = Broker(tmp_path / "broker", tables=TABLES).start()
    league = LeagueServer(broker.url, tmp_path / "league.db", broker.creds("league"),
                          host="127.0.0.1", port=0,
                          convention=plan(tables=["t1"], players=PLAYERS[:3]),
                          **SERVED).open().start()
    served = TableServer(host="127.0.0.1", port=0, db_path=tmp_path / "served.db", pin="246810",
                         source="mock", demo=True,
                         league={"url": broker.url, "table_id": "t1",
                                 "password_file": broker.files["secrets"]["t1"]})
    try:
        served.open().start()
        assert wait_for(lambda: served.seat.notice is not None, timeout=10)
        pod = league.convention.current.pods[0]
        with urllib.request.urlopen(served.url + "/events", timeout=5) as r:
            head = b""
            while b"event: notice" not in head:
                line = r.readline()
                assert line, head
                head += line
            head += r.readline()
        # the demo game (its own players) is not the pairing: a warning
        assert b'"level":"warn"' in head and b"Start Chope! with " + \
            ", ".join(pod.players).encode() in head
        served.session.new_game("chope", list(pod.players))
        assert wait_for(lambda: served.seat.notice["level"] == "info" and
                        served.seat.notice["text"].endswith("playing."), timeout=5)
    finally:
        served.close()
        league.close()
        broker.stop()
    assert served.seat is None


# -- the hall: the league page's live stream to many pages --------------------------

def _raw_page(port, version="1.0"):
    import socket

    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(f"GET /api/live HTTP/{version}\r\nHost: x\r\n\r\n".encode())
    return s


def _read_until(sock, marker: bytes, limit=1 << 20) -> bytes:
    buf = b""
    while marker not in buf and len(buf) < limit:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf


def test_every_page_gets_each_notice_over_http_1_0_and_chunked_1_1(tmp_path):
    import http.client

    league = hall_server(tmp_path)
    pages, conn = [], None
    try:
        pages = [_raw_page(league.port), _raw_page(league.port)]
        heads = [_read_until(p, b"event: hello\ndata: ") for p in pages]
        assert all(b" 200 " in h.split(b"\r\n")[0] and b"chunked" not in h for h in heads)
        conn = http.client.HTTPConnection("127.0.0.1", league.port, timeout=5)
        conn.request("GET", "/api/live")                 # HTTP/1.1: a chunked body
        resp = conn.getresponse()
        assert resp.getheader("Transfer-Encoding") == "chunked"
        lines = []
        while b"refresh_ms" not in b"".join(lines) and len(lines) < 50:
            lines.append(resp.readline())
        assert wait_for(lambda: league.hub.count == 3 and all(
            p.ready for p in league.hub._pages), timeout=5)
        league.hub.publish("event", {"table": "t1", "id": 7})
        league.hub.publish("state", {"table": "t1"})
        for raw in [_read_until(p, b"event: state") for p in pages]:
            assert b'event: event\ndata: {"table":"t1","id":7' in raw
        # http.client takes the chunks apart: a malformed one would raise here
        while not lines[-1].startswith(b"event: state") and len(lines) < 50:
            lines.append(resp.readline())
        assert any(ln.startswith(b'data: {"table":"t1","id":7') for ln in lines)
    finally:
        for p in pages:
            p.close()
        if conn is not None:
            conn.close()
        league.close()


def test_the_hall_is_full_at_its_limit_and_a_page_that_stops_reading_is_ended(tmp_path):
    import http.client

    league = hall_server(tmp_path, max_pages=2)
    league.hub.max_backlog = 64 * 1024
    pages = []
    try:
        stalled, reader = _raw_page(league.port), _raw_page(league.port)
        pages += [stalled, reader]
        for p in pages:
            _read_until(p, b"event: hello")
        assert wait_for(lambda: league.hub.count == 2, timeout=5)
        conn = http.client.HTTPConnection("127.0.0.1", league.port, timeout=5)
        conn.request("GET", "/api/live")
        assert conn.getresponse().status == 503          # a third page: the hall is full
        conn.close()
        big = "x" * 200_000
        for i in range(60):                              # ~12 MB: more than any socket buffers
            league.hub.publish("event", {"table": "t1", "id": i, "line": big})
            _read_until(reader, f'"id":{i},'.encode(), limit=1 << 24)
            if league.hub.ended_slow:
                break
        assert league.hub.ended_slow == 1 and wait_for(lambda: league.hub.count == 1, timeout=5)
        league.hub.publish("event", {"table": "t1", "id": 999})
        assert b'"id":999' in _read_until(reader, b'"id":999')
    finally:
        for p in pages:
            p.close()
        league.close()


def test_the_league_view_is_made_once_per_change_and_revalidates(tmp_path):
    league = hall_server(tmp_path)
    calls = []
    real = league.store.league
    league.store.league = lambda: calls.append(1) or real()
    try:
        url = league.url + "/api/league"
        with urllib.request.urlopen(url, timeout=5) as r:
            tag = r.headers["ETag"]
        for _ in range(5):
            get_json(url)
        assert len(calls) == 1
        req = urllib.request.Request(url, headers={"If-None-Match": tag})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=5)
        assert err.value.code == 304
        err.value.close()
        league.hub.publish("state", {"table": "t1"})      # something changed: made again
        get_json(url)
        assert len(calls) == 2
    finally:
        league.close()


# -- the pages, in a browser -----------------------------------------------------------

@pytest.mark.browser
def test_the_pairing_shows_on_the_scoreboard_and_the_host_console_and_the_league_page(
        tmp_path, live_server, phone):
    from tests.kit.browser import expect_text, log_in, shot

    t = live_server
    pairing = {"table": "t1", "round": 1, "rounds": 2, "game": "chope", "title": "Chope!",
               "players": ["Ana", "Bo", "Cy"], "floor": 0, "counted": False, "done": False}
    t.session.new_game("chomp", ["Ana", "Bo"])
    t.services.broker.set_notice(seat_notice(pairing, t.session.snapshot()))
    board = phone().new_page()
    errors = []
    board.on("pageerror", lambda exc: errors.append(str(exc)))
    board.goto(t.url + "/")
    expect_text(board, "#table-notice .notice.warn", "will not count")
    shot(board, "convention-board-wrong-game.png")
    host = phone().new_page()
    host.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(host.context, t)
    host.goto(t.url + "/host")
    host.wait_for_selector("#conn.live")
    expect_text(host, "#table-notice .notice.warn", "Start Chope! with Ana, Bo, Cy")
    shot(host, "convention-host-wrong-game.png")
    # the right game: the warning gives way, live, on both pages
    t.session.new_game("chope", ["Ana", "Bo", "Cy"], SMALL_CHOPE)
    t.services.broker.set_notice(seat_notice(pairing, t.session.snapshot()))
    for page in (board, host):
        expect_text(page, "#table-notice .notice.info", "Ana, Bo, Cy: playing")
        assert page.locator("#table-notice .notice.warn").count() == 0
    # the league page with the convention: pods, their states, the standings
    league = hall_server(tmp_path, convention=plan())
    try:
        conv = league.convention
        pod1, pod2 = conv.current.pods
        result(league.store, pod1.table, 1, [[p] for p in pod1.players])
        league.store.set_state(pod2.table, {"game": "chomp", "title": "Chomp!", "game_id": 1,
                                            "players": [{"name": "zed"}], "sent_ns": 1})
        conv.sweep()
        page = phone().new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(league.url + "/")
        expect_text(page, "#pods .pod.done .status", "result counted")
        expect_text(page, "#pods .pod.wrong", "Chomp! with zed: not this pod")
        expect_text(page, "#conv-standings tbody", pod1.players[0])
        shot(page, "convention-league-page.png")
    finally:
        league.close()
    assert errors == []


@pytest.mark.browser
def test_a_league_page_refused_by_a_full_hall_comes_back_when_there_is_room(tmp_path, phone):
    from playwright.sync_api import expect

    league = hall_server(tmp_path, max_pages=1)
    holder = None
    try:
        holder = _raw_page(league.port)
        _read_until(holder, b"event: hello")
        page = phone().new_page()
        page.goto(league.url + "/")
        expect(page.locator("#live")).to_have_text("reconnecting")      # 503: the hall is full
        holder.close()
        holder = None
        # back on its stream; this hall has no broker behind it, and the page
        # says so rather than "live" (issue 33: the league screen tells the truth)
        expect(page.locator("#live")).to_have_text("broker down", timeout=15_000)
        assert league.hub.count == 1
    finally:
        if holder is not None:
            holder.close()
        league.close()
