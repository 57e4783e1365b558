"""The league's test harness: a table publishing to a broker
(:class:`Table`, its buzzer clock moved by the test), small games played
to the end, the league server, the league store's messages made by hand,
and a convention's plan. The broker itself is :mod:`tests.kit.mosquitto`."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from companion.league.app import LeagueServer
from companion.league.convention import Plan
from companion.league.publisher import LeaguePublisher
from companion.league.topics import Credentials
from companion.races.edges import ButtonEdge
from companion.record.store import Store
from companion.table.session import TableSession

MS = 1_000_000
TABLES = ["t1", "t2", "t3"]
SMALL_CHOPE = {"tables": {"red": 1, "blue": 0, "green": 0}, "mynahs": 0,
               "foods": {"laksa": {"kind": "main", "copies": 1},
                         "satay": {"kind": "side", "copies": 1}},
               "favourite_cards": ["laksa", "satay"]}
#: a store id of the league's made-up messages
STORE = "0123456789abcdef"
#: a convention's players
PLAYERS = ["Ana", "bo", "cy", "di", "ed", "flo"]
#: a league server as the tests start it (``LeagueServer(..., **SERVED)``):
#: room for 16 live pages, not the product's 500 (each is a waitress worker
#: thread started by ``open`` and joined by ``close``: 532 threads cost a
#: server about 0.4 s, and no test here opens more than a few pages; the
#: hall's limits are tested with their own ``max_pages``), and the marks
#: published within 0.1 s of a change rather than 1 s (what a table's
#: ``delivered()`` waits for; the heartbeat of every mark keeps its period)
SERVED = {"max_pages": 16, "mark_every_s": 0.1}


class TableClock:
    """The table's buzzer clock, moved by the test."""

    def __init__(self):
        self.t = 10 ** 9

    def __call__(self) -> int:
        return self.t


class Table:
    """One table: store and session on a temp file, with its publisher."""

    def __init__(self, root: Path, broker, table_id: str, user: str | None = None,
                 creds: Credentials | None = None):
        self.clock = TableClock()
        self.path = root / f"{table_id}.db"
        self.store = Store(self.path)
        self.session = TableSession(self.store, clock=self.clock)
        self.session.resume()
        self.broker, self.table_id = broker, table_id
        self.creds = creds or broker.creds(user or table_id)
        self.pub: LeaguePublisher | None = None

    def publish(self) -> "Table":
        self.pub = LeaguePublisher(self.session, self.store, self.broker.url, self.table_id,
                                   self.creds, reconnect_s=(1, 1)).start()
        return self

    def press(self, presses, start=None) -> None:
        """Buzzer presses at ``start`` + offset (ms), then the race settles."""
        t0 = self.clock.t if start is None else start
        for player, offset_ms in presses:
            t = t0 + int(offset_ms * MS)
            self.session.feed_edge(ButtonEdge(player, True, t))
            self.session.feed_edge(ButtonEdge(player, False, t + 80 * MS))
        self.clock.t = t0 + 3000 * MS
        self.session.tick()

    def ids(self) -> list[int]:
        return sorted(i for g in self.store.list_games() for i, _ in self.store.events(g["id"]))

    def close(self) -> None:
        if self.pub is not None:
            self.pub.close()
        self.store.close()


def play_chope(table: Table, favourites=False) -> str:
    """A small Chope! to the end: the Red Table is choped 0.8 ms ahead of
    the other eligible player; returns who choped it."""
    s = table.session
    s.new_game("chope", ["ana", "bo", "cy"], {**SMALL_CHOPE, "favourite_food": favourites})
    s.log({"type": "flip", "card": "food:laksa"})
    s.log({"type": "stop"})
    s.log({"type": "flip", "card": "food:satay"})
    s.log({"type": "keep"} if {"type": "keep"} in s.legal_events() else {"type": "stop"})
    s.log({"type": "flip", "card": "table:red"})
    first, second = s.snapshot()["race"]["eligible"]
    table.press([(first, 100), (second, 100.8)])
    assert s.snapshot()["finished"]
    return first


def play_coinrace(table: Table, reactions=((("ana", 150), ("bo", 150.7)),)) -> None:
    """Announced races (countdown, GO): reaction times from GO."""
    s = table.session
    s.new_game("coinrace", ["ana", "bo"], {"target": len(reactions)})
    for presses in reactions:
        s.log({"type": "flip", "side": "heads"})
        s.start_race(countdown_ms=0)
        table.press(presses)


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def league_server(tmp_path, broker, db=None) -> LeagueServer:
    return LeagueServer(broker.url, db or tmp_path / "league.db", broker.creds("league"),
                        host="127.0.0.1", port=0, **SERVED).open().start()


def hall_server(tmp_path, **kw):
    """A league server with no broker behind it (its subscriber retries
    quietly): only its pages are under test."""
    return LeagueServer("mqtt://127.0.0.1:9", tmp_path / "league.db", host="127.0.0.1",
                        port=0, **{**SERVED, **kw}).open().start()



# -- the league store's messages, made by hand -----------------------------------

def event(eid, prev, game_id=1, ev=None, game="chope", since=0, players=("ana", "bo"),
          seq=None, store=STORE):
    ev = ev or {"type": "flip", "card": "food:laksa"}
    return {"v": 1, "table": "x", "store": store, "id": eid, "prev": prev, "since": since,
            "seq": seq or eid - since, "game_id": game_id, "game": game, "title": game,
            "players": list(players), "type": ev["type"], "event": ev, "line": ev["type"],
            "logged_ns": eid, "sent_ns": 1}


def store_result(game_id, ranking, scores, version=9, game="chope", events=None, hidden=True,
           store=STORE):
    """A finished game's result; ``hidden``: the league cannot replay it, so
    holding its events (``events`` of them, the last one ``version``) counts."""
    players = [p for g in ranking for p in g]
    return {"v": 1, "store": store, "game_id": game_id, "game": game, "title": game,
            "finished": True, "version": version, "players": [{"name": p} for p in players],
            "events": events or 1, "hidden": hidden, "options": {}, "sent_ns": 1,
            "summary": {"ranking": ranking, "scores": scores, "players": players}}


def finished(league, table, game_id, ranking, scores, version=9, **kw):
    """A result the league counts: one event of the game held, then its result."""
    league.add_event(table, event(version, 0, game_id=game_id,
                                  players=[p for g in ranking for p in g]))
    return league.set_result(table, game_id, store_result(game_id, ranking, scores, version, **kw))



# -- a convention ------------------------------------------------------------------

def plan(**kw) -> Plan:
    return Plan.make(kw.pop("players", PLAYERS), kw.pop("game", "chope"),
                     kw.pop("tables", TABLES), **{"rounds": 2, "seed": "7", "target": 3, **kw})


def convention_result(store, table, gid, ranking, game="chope", version=None, store_id=STORE):
    """A finished game the league counts: its last event (id ``version``)
    held, then its result (its events hide something, so holding them is
    what counts: no replay of these made-up rankings); ``store_id``: the
    table's store it was played on."""
    names = [n for g in ranking for n in g]
    version = version or gid
    store.add_event(table, {"store": store_id, "id": version, "prev": 0, "since": 0, "seq": 1,
                            "game_id": gid, "game": game, "players": names, "type": "x",
                            "event": {"type": "x"}, "sent_ns": 1})
    held = len(store.rows("SELECT 1 FROM events WHERE table_id = ? AND store = ? AND game_id = ?",
                           (table, store_id, gid)))
    store.set_result(table, gid, {"store": store_id, "finished": True, "game": game,
                                  "players": names, "version": version, "events": held,
                                  "hidden": True, "sent_ns": 1,
                                  "summary": {"ranking": ranking, "scores": {},
                                              "players": names}})
