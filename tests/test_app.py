"""The one pipeline and the application assembly.

The same :class:`~companion.buzzers.pipeline.Pipeline` judges mock pin
presses for a bare referee (``companion buzz``, the harness) and for the table
session (``companion serve``); when nothing is due it sleeps until woken
instead of waking on a fixed period; :class:`companion.app.TableServer` builds,
serves and closes the whole table."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from contextlib import contextmanager

import pytest

from companion.buzzers.feedback import Feedback, FeedbackSettings
from companion.buzzers.mock import ClockedMockFactory, MockSource
from companion.buzzers.pipeline import Pipeline, RefereeConsumer
from companion.races.referee import FIRST_PRESS, MS, RaceSpec, Referee
from tests.kit.helpers import wait_for

BUZZERS = ["1", "2", "3"]
SEATS = [{"name": "Ana", "buzzer": "1"}, {"name": "Bo", "buzzer": "2"},
         {"name": "Cy", "buzzer": "3"}]


@pytest.fixture
def pins():
    f = ClockedMockFactory()            # follows the real monotonic clock
    yield f
    f.close()
    f.reset()


@pytest.fixture
def chope(store):
    """A table session playing Chope! with Ana, Bo and Cy at buzzers 1, 2, 3."""
    from companion.table.session import TableSession

    session = TableSession(store)
    session.new_game("chope", SEATS)
    return session


@contextmanager
def piped(consumer, pins, **kw):
    """Mock buzzers 1-3 on ``pins`` and a running pipeline to ``consumer``."""
    src = MockSource(BUZZERS, pin_factory=pins)
    pipe = Pipeline(src, consumer, **kw).start()
    try:
        yield src, pipe
    finally:
        pipe.close()
        src.close()


def decided(session) -> bool:
    return (session.snapshot()["race"] or {}).get("phase") == "decided"


class Counting:
    """A consumer wrapper that counts ticks (and passes everything on)."""

    def __init__(self, inner):
        self.inner = inner
        self.clock = inner.clock
        self.ticks = 0
        self.idle = threading.Event()      # the pipeline asked and nothing is due: it sleeps

    def feed_edge(self, edge):
        self.inner.feed_edge(edge)

    def tick(self, *now):
        self.ticks += 1
        self.inner.tick(*now)

    def next_deadline(self):
        deadline = self.inner.next_deadline()
        if deadline is None:
            self.idle.set()
        return deadline

    def subscribe(self, fn):
        sub = getattr(self.inner, "subscribe", None)
        return sub(fn) if sub else (lambda: None)

    @property
    def referee(self):
        return self.inner.referee

    @property
    def players(self):
        return self.inner.players


# ---------------------------------------------------------------------------
# One pipeline, two consumers


def test_one_pipeline_judges_for_a_bare_referee(pins):
    src = MockSource(BUZZERS, pin_factory=pins)
    ref = Referee(BUZZERS, hold_ns=10 * MS)
    judge = RefereeConsumer(ref, clock=src.now_ns)
    pipe = Pipeline(src, judge).start()
    try:
        race = pipe.call(judge.start_race, RaceSpec(FIRST_PRESS, BUZZERS, arm_ns=src.now_ns()))
        src.press("3")
        time.sleep(0.002)
        src.press("1")
        assert wait_for(lambda: race.verdict is not None, 2)
        assert race.verdict.winner == "3"
        # the verdict may come before the second press is fed (a loaded machine)
        assert wait_for(lambda: pipe.edges_fed == 2, 2) and not pipe.errors
    finally:
        pipe.close()
        src.close()


def test_the_same_pipeline_judges_for_the_table_session(pins, chope):
    with piped(chope, pins) as (src, pipe):
        chope.log({"type": "flip", "card": "table:red"})     # Ana flips a Table: Bo and Cy race
        src.press("3")                                        # buzzer 3 is Cy's
        assert wait_for(lambda: decided(chope), 3)
        assert chope.snapshot()["race"]["verdict"]["winner"] == "Cy"
        assert not pipe.errors


def test_the_box_lights_the_winner_under_either_consumer(pins, store):
    from companion.table.session import TableSession

    fast = FeedbackSettings(win_ns=10_000 * MS)
    for make in ("referee", "session"):
        src = MockSource(BUZZERS, pin_factory=pins)
        fb = Feedback.from_pinmap(BUZZERS, pin_factory=pins, settings=fast, clock=src.now_ns)
        if make == "referee":
            consumer = RefereeConsumer(Referee(BUZZERS, hold_ns=10 * MS), clock=src.now_ns)
        else:
            consumer = TableSession(store)
            consumer.new_game("chope", SEATS)
        pipe = Pipeline(src, consumer, feedback=fb).start()
        try:
            if make == "referee":
                pipe.call(consumer.start_race, RaceSpec(FIRST_PRESS, BUZZERS,
                                                        arm_ns=src.now_ns()))
            else:
                consumer.log({"type": "flip", "card": "table:red"})
            src.press("2")
            assert wait_for(lambda: bool(fb.leds["2"].pin.state), 3), make
            assert not fb.leds["3"].pin.state
        finally:
            pipe.close()                # closes the box with it
            src.close()


# ---------------------------------------------------------------------------
# Sleeping until something is due


def _ticks_over(pipe, consumer, seconds=1.0) -> int:
    assert consumer.idle.wait(5)       # started up and gone to sleep
    before = consumer.ticks
    time.sleep(seconds)
    return consumer.ticks - before


def test_an_idle_session_pipeline_sleeps_instead_of_polling(pins, chope):
    consumer = Counting(chope)
    with piped(consumer, pins) as (src, pipe):
        assert _ticks_over(pipe, consumer) <= 3


def test_an_idle_referee_pipeline_sleeps_too(pins):
    consumer = Counting(RefereeConsumer(Referee(BUZZERS), clock=time.monotonic_ns))
    with piped(consumer, pins) as (src, pipe):
        assert _ticks_over(pipe, consumer) <= 3


def test_a_race_started_from_another_thread_wakes_the_sleeping_pipeline(pins, chope):
    """The host's request thread starts the race: the pipeline, asleep with
    no deadline, must still decide it on time."""
    consumer = Counting(chope)
    with piped(consumer, pins) as (src, pipe):
        assert consumer.idle.wait(5)   # asleep with no deadline
        t = threading.Thread(target=chope.log, args=({"type": "flip", "card": "table:red"},))
        t.start()
        t.join()
        src.press("2")
        assert wait_for(lambda: decided(chope))  # asleep for good, it would never decide
        assert chope.snapshot()["race"]["verdict"]["winner"] == "Bo"


# ---------------------------------------------------------------------------
# The application


def _get_json(port: int, path: str):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_the_table_opens_serves_and_closes(tmp_path):
    from companion.app import TableServer

    table = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin="2468",
                  short_pin=True, players=["Ana", "Bo"], source="mock", demo=True, threads=8)
    table.open()
    try:
        assert table.port != 0 and table.source.name == "mock"
        assert table.pipeline.consumer is table.session and table.feedback is not None
        table.start()
        status, state = _get_json(table.port, "/api/state")
        assert status == 200
        assert [p["name"] for p in state["players"]] == ["Ana", "Bo"]
        assert wait_for(lambda: table.pipeline.running, 2)
    finally:
        table.close()
    assert table.pipeline is None and table.server is None and table.store is None
    with socket.socket() as s:                      # the port is free again
        s.bind(("127.0.0.1", table.port))
    assert not [t for t in threading.enumerate() if t.name in ("companion-web",
                                                                "companion-pipeline")]


def test_companion_serve_hands_every_option_to_the_table_in_one_config(monkeypatch):
    """One parser, one TableConfig: what `companion serve` is given (race
    settings and the league included) is what the table is built from."""
    import companion.app
    from companion.app import TableServer
    from companion.cli import main
    from companion.tableconfig import TableConfig

    got = []
    monkeypatch.setattr(companion.app, "serve", lambda table: got.append(table) or 0)
    assert main(["serve", "--host", "127.0.0.1", "--port", "0", "--db", "x.db",
                 "--pin-file", "pin.txt", "--short-pin", "--players", "Ana, Bo,",
                 "--source", "mock", "--no-demo", "--pinmap", "p.toml", "--threads", "8",
                 "--set", "lockout_ms=300", "--set", "auto_start=no",
                 "--league", "mqtt://league:1883", "--table-id", "t1",
                 "--league-password-file", "pw"]) == 0
    expected = TableConfig(
        host="127.0.0.1", port=0, db_path="x.db", pin_file="pin.txt", short_pin=True,
        players=["Ana", "Bo"], source="mock", demo=False, pinmap="p.toml", threads=8,
        settings={"lockout_ms": 300, "auto_start": False},
        league={"url": "mqtt://league:1883", "table_id": "t1", "user": None,
                "password_file": "pw", "ca_file": None})
    assert got == [expected]
    table = TableServer(expected, port=9)               # a keyword overrides one field
    assert table.table == TableConfig(**{**expected.__dict__, "port": 9})
    assert table.session_settings == expected.settings
    assert table.league_options == expected.league and table.allow_short_pin
    assert not hasattr(companion.app, "main")     # no second parser to drift


def test_a_table_opened_but_never_run_releases_its_port(tmp_path):
    from companion.app import TableServer

    table = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin="2468",
                  short_pin=True, source="none", demo=False, threads=4)
    table.open()
    port = table.port
    assert table.source.name == "none" and table.feedback is None
    table.close()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_a_table_stops_with_live_pages_open(tmp_path):
    from companion.app import TableServer

    table = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin="2468",
                  short_pin=True, source="mock", threads=16).open().start()
    conns = []
    try:
        for _ in range(3):
            c = http.client.HTTPConnection("127.0.0.1", table.port, timeout=5)
            c.request("GET", "/events")
            assert c.getresponse().status == 200
            conns.append(c)
        closer = threading.Thread(target=table.close)
        closer.start()
        assert wait_for(lambda: not closer.is_alive())   # the open streams do not hold it
    finally:
        for c in conns:
            c.close()
        table.close()


def test_a_table_on_a_pico_box_drives_the_box_s_own_leds_and_cue(tmp_path):
    """No LED or piezo on the Pi's pins: the pipeline gives the session the
    box's own feedback, and the session waits for the box's stamp of GO."""
    import sys
    from pathlib import Path

    from companion.app import TableServer
    from companion.buzzers.pipeline import CUE_WAIT_NS

    if not Path(sys.executable).with_name("micropython").exists():
        pytest.skip("no MicroPython unix port")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware" / "sim"))
    from ptybox import SimBox

    with SimBox(tmp_path / "box") as box:
        table = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "t.db"), pin="2468",
                      short_pin=True, players=["Ana", "Bo"], source="pico",
                      source_options={"port": box.port}, threads=4)
        table.open()
        try:
            assert table.source.name == "pico"
            fb = table.pipeline.feedback
            assert fb is not None and fb.source is table.source and fb.leds == {}
            assert table.session.cue_wait_ns == CUE_WAIT_NS
        finally:
            table.close()
        assert fb.consumer is None                      # closed with the pipeline
