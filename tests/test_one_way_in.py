"""The table's one way in (issue 30; docs/architecture.md, "The walk of a
press"): a pin's edge, a buzzer box's edge, a phone's press and a host's log
all enter through the buzzer pipeline's one queue and are applied by its one
thread, in the order they came in; an edge stamped before a host's log but
still on its way when the log comes in is applied before it. Observed from
the table's typed event stream (each event names the thread that applied the
change), through the served table (``companion serve`` in a thread) and the
Flask client, which takes the same path."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from companion.buzzers.pipeline import Pipeline
from companion.races.edges import Edge
from companion.table.session import TableSession
from companion.record.store import Store
from tests.kit.helpers import MS, Clock, wait_for
from tests.kit.web import PIN, HostClient, csrf, make_app, start_table

PLAYERS = [{"name": "ana", "buzzer": "b1"}, {"name": "bo", "buzzer": "b2"}]


class Applied:
    """Where and in what order the table applies its changes: each edge the
    race desk takes (a pin's, a box's or a phone's) and each event appended
    to the game's log, with the thread that applied it. (The typed event
    stream would not tell: its events reach a subscriber on whichever
    thread is dispatching.)"""

    def __init__(self, session, monkeypatch):
        self.seen: list[tuple[str, str | None, str]] = []
        desk, gamelog = session.desk, session.gamelog
        for name, obj, what in (("feed", desk, "edge"), ("append", gamelog, "log")):
            monkeypatch.setattr(obj, name, self.wrap(getattr(obj, name), what))

    def wrap(self, fn, what: str):
        def applied(item, *args, **kwargs):
            who = getattr(item, "player", None) if what == "edge" else item.get("type")
            self.seen.append((what, who, threading.current_thread().name))
            return fn(item, *args, **kwargs)
        return applied

    def threads(self, what: str, who: str | None = None) -> set[str]:
        return {t for w, p, t in self.seen if w == what and (who is None or p == who)}

    def count(self, what: str, who: str) -> int:
        return sum(1 for w, p, _ in self.seen if (w, p) == (what, who))


def test_a_pin_press_a_phone_press_and_a_hosts_log_are_applied_on_the_pipelines_thread(
        tmp_path, monkeypatch):
    table = start_table(tmp_path)
    try:
        s, thread = table.session, table.pipeline.name
        assert s.way_in is table.pipeline                # the served table has one way in
        heard = Applied(s, monkeypatch)
        host, phone = HostClient(table.app.test_client()), table.app.test_client()
        r = host.post("/api/host/event", json={"event": {"type": "flip", "card": "food:laksa"}})
        assert r.status_code == 200, r.json
        table.source.press("Ana")                         # a pin (gpiozero's mock pin)
        table.source.release("Ana")
        assert wait_for(lambda: heard.count("edge", "Ana") == 2), heard.seen
        for pressed in (True, False):                     # a phone's on-screen buzzer
            r = phone.post("/api/press", json={"player": "Bo", "pressed": pressed},
                           headers=csrf(phone))
            assert r.status_code == 200, r.json
        assert wait_for(lambda: heard.count("edge", "Bo") == 2)
        assert heard.threads("edge", "Ana") == {thread}
        assert heard.threads("edge", "Bo") == {thread}
        assert heard.threads("log", "flip") == {thread}   # the host's log, applied there too
    finally:
        table.close()


def test_a_buzzer_box_press_takes_the_same_queue_and_thread(tmp_path, monkeypatch):
    from companion.app import TableServer

    if not Path(sys.executable).with_name("micropython").exists():
        pytest.skip("no MicroPython unix port")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware" / "sim"))
    from ptybox import SimBox

    with SimBox(tmp_path / "box") as box:
        table = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin=PIN,
                      short_pin=True, players=["Ana", "Bo"], source="pico",
                      source_options={"port": box.port}, threads=4, demo=True)
        table.open()
        table.start()
        try:
            s = table.session
            assert s.way_in is table.pipeline
            heard = Applied(s, monkeypatch)
            assert wait_for(lambda: table.source.error_bound_ns() is not None, timeout=30)
            box.press(1, table.source.now_ns() + 20 * MS)
            box.release(1, table.source.now_ns() + 120 * MS)
            assert wait_for(lambda: heard.count("edge", "Ana") == 2, timeout=30), heard.seen
            assert heard.threads("edge") == {table.pipeline.name}
        finally:
            table.close()


def chope_on(clock) -> TableSession:
    s = TableSession(Store(":memory:"), clock=clock)
    s.new_game("chope", PLAYERS)
    return s


@pytest.mark.parametrize("edge_before_log", [True, False])
def test_an_edge_still_on_its_way_goes_before_a_log_that_came_in_after_its_stamp(
        edge_before_log, monkeypatch):
    """The host logs a card at ``t``; Bo's press is stamped 1 ms before (or
    after) ``t`` but reaches the queue only while the log waits out the
    delivery margin: it is applied before the log when stamped before it,
    after it otherwise. The clock is the test's: nothing moves but by hand."""
    clock = Clock()
    s = chope_on(clock)
    pipe = Pipeline(None, s, name="way-in").start()
    heard = Applied(s, monkeypatch)
    try:
        t = clock.t
        logger = threading.Thread(target=s.log, args=({"type": "flip", "card": "table:red"},))
        logger.start()
        # the log is taken off the queue and held until t + the margin
        assert wait_for(lambda: pipe.next_deadline() == t + pipe.hold_ns)
        stamp = t - MS if edge_before_log else t + MS
        pipe.edge(Edge("b2", True, stamp))
        pipe.edge(Edge("b2", False, stamp + 80 * MS))
        assert not heard.seen                             # nothing applied while it is held
        clock.t = t + pipe.hold_ns
        pipe.wake()
        logger.join(timeout=30)
        assert not logger.is_alive()
        assert wait_for(lambda: heard.count("edge", "bo") == 2)
        kinds = [k for k, _, _ in heard.seen]
        first = kinds.index("edge") < kinds.index("log")
        assert first is edge_before_log, heard.seen

        def decided() -> bool:          # the clock moves on; the pipeline ticks
            clock.t += 5 * MS
            pipe.wake()
            return any(e.get("type") == "race" for _, e in s.store.events(s.game_id))
        assert wait_for(decided)
        race = [e for _, e in s.store.events(s.game_id) if e.get("type") == "race"][-1]
        # either way Bo's slam is the Red Table's, and not a false start
        assert race["winner"] == "bo" and race["spec"]["arm_ns"] == stamp
        assert not race["false_starts"]
        assert {th for _, _, th in heard.seen} == {"way-in"}
    finally:
        pipe.close()


def test_without_a_thread_the_flask_client_takes_the_same_queue(monkeypatch):
    """No ``companion serve``: the app makes its own thread-less pipeline and
    the request's thread applies the queue (same calls, same order)."""
    s = chope_on(Clock())
    app = make_app(s, DEMO=True)
    assert s.way_in is not None and s.way_in.running is False
    heard = Applied(s, monkeypatch)
    host = HostClient(app.test_client())
    r = host.post("/api/host/event", json={"event": {"type": "flip", "card": "table:red"}})
    assert r.status_code == 200, r.json
    phone = app.test_client()
    r = phone.post("/api/press", json={"player": "bo", "pressed": True}, headers=csrf(phone))
    assert r.status_code == 200, r.json
    assert [(k, p) for k, p, _ in heard.seen] == [("log", "flip"), ("edge", "bo")]
    assert {th for _, _, th in heard.seen} == {threading.current_thread().name}
