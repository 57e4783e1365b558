"""The announced race's GO sounded by the Pico box, and its LEDs (issue 15).

docs/rules-notes.md, "Races": an announced race has "a countdown on the page and a
cue (LED/piezo) on the same clock as the buttons; presses before GO are
false starts". Issue 15: "The announced-race cue (LED, piezo) is driven by
the Pico, so GO and the presses are on one clock and false starts are judged
exactly; buzzer LEDs too, on the host's command."

So, with the real ``pico`` source: the box is asked for GO ahead of time and
sounds it on its own clock; the stamp it reports is where the race is armed;
a press after the scheduled GO but before the box's GO is a false start; a
press after the box's GO counts. The LEDs the box lights follow the verdict
(the winner's solid, a false starter's blinking) and the faults the box
itself reports (a stuck buzzer flickers). Sources without a cue (mock GPIO)
are unchanged: the race stays on the scheduled GO.

Two set-ups: the real source fed a recorded stream (``PicoSource.offline``:
exact ticks, a fake clock, every byte the Pi sends to the box decoded), and
the firmware's main loop under MicroPython on a simulated board behind a pty.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.kit.helpers import wait_for
from tests.kit.pico import Wire, box_source
from tests.kit.scene import on_time

from companion.races import arming
from companion.races.arming import Arming, arm_at_cue
from companion.buzzers.base import CallbackSink, CueStamp, EdgeSource, SourceFault
from companion.buzzers.feedback import Feedback, FeedbackSettings
from companion.buzzers.pico import PicoSource
from companion.buzzers.pipeline import CUE_WAIT_NS, Pipeline, RefereeConsumer
from companion.races.edges import ButtonEdge
from companion.games import register_game, unregister_game
from companion.pico import protocol as P
from companion.races.referee import FIRST_PRESS, RaceSpec, Referee
from companion.table.session import TableSession
from companion.record.store import Store
from tests.kit.toygame import CoinRace

MS = 1_000_000
S = 1_000 * MS
T0 = 100 * S                     # the Pi's clock at the start of each test
K0 = 1_000_000                   # the box's tick then (1 MHz)
NAMES = ["ana", "bo", "cy"]
BUZZERS = ["b1", "b2", "b3"]
SEATS = [{"name": n, "buzzer": b} for n, b in zip(NAMES, BUZZERS)]
FAST = FeedbackSettings(win_ns=2 * S, blink_on_s=0.05, blink_off_s=0.05, blink_n=3,
                        stuck_on_s=0.05, stuck_off_s=0.05)


@pytest.fixture(autouse=True)
def coin_race():
    name = register_game(CoinRace, "cuecoin", replace=True)
    yield name
    unregister_game(name)


class Clock:
    def __init__(self, t: int = T0):
        self.t = t

    def __call__(self) -> int:
        return self.t


def _hello() -> P.Hello:
    inputs = tuple(P.Input(i, P.ROLE_BUZZER, i + 1, i + 2) for i in range(6))
    leds = tuple((i + 1, 12 + i) for i in range(6))
    return P.Hello(0, 1, (1, 0, 0), 1_000_000, 1, 0, 0, 20_000, 0, inputs, leds, None)


class Table:
    """A session fed by a real, offline PicoSource through the one pipeline
    (no thread: each step advances the fake clock and pumps)."""

    def __init__(self, feedback=None, **settings):
        self.clock = Clock()
        self.src = PicoSource.offline(BUZZERS, _hello(), clock=self.clock)
        self.wire = self.src.link = Wire(self.clock)
        # the box's clock, fitted from one clean exchange: tick K0 at T0
        self.src.sync.add_exchange(T0 - 100_000, K0, T0 + 100_000)
        self.src.map.update(K0)
        self.session = TableSession(Store(":memory:"), clock=self.clock,
                                    settings=settings or None)
        self.session.new_game("cuecoin", SEATS, {})
        self.pipe = Pipeline(self.src, self.session, feedback=feedback)
        self.pipe.start(thread=False)
        self.seq = 0

    def tick_at(self, t_ns: int) -> int:
        """The box's tick at Pi time ``t_ns`` (its clock runs true here)."""
        return K0 + (t_ns - T0) // 1000

    def run(self, ms: int, step_ms: int = 1) -> None:
        for _ in range(ms // step_ms):
            self.clock.t += step_ms * MS
            self.pipe.pump()

    def until(self, t_ns: int) -> None:
        while self.clock.t < t_ns:
            self.clock.t = min(t_ns, self.clock.t + MS)
            self.pipe.pump()

    def _frame(self, msg) -> None:
        self.seq = (self.seq + 1) & 0xFFFF
        self.src.feed(P.encode(msg._replace(seq=self.seq)), self.clock.t)
        self.pipe.pump()

    def press(self, buzzer: int, t_ns: int, pressed: bool = True) -> None:
        """The box's edge record of buzzer ``buzzer`` (1..) at Pi time
        ``t_ns``, arriving now."""
        bit = 1 << (buzzer - 1)
        self.levels = getattr(self, "levels", 0)
        self.levels = (self.levels | bit) if pressed else (self.levels & ~bit)
        self._frame(P.Edges(0, ((self.tick_at(t_ns) & 0xFFFF_FFFF, bit, self.levels),)))

    def cue_sounded(self, cmd_seq: int, t_ns: int) -> None:
        """The box's ACK of cue command ``cmd_seq``: it sounded at ``t_ns``."""
        self._frame(P.Ack(0, cmd_seq, P.SET_CUE, P.ACK_OK, self.tick_at(t_ns)))

    def fault(self, code: int, buzzer: int, t_ns: int, count: int) -> None:
        self._frame(P.Fault(0, code, buzzer - 1, self.tick_at(t_ns) & 0xFFFF_FFFF, count))

    def led_commands(self, since_ns: int = 0) -> list[tuple[int, int, int]]:
        """(Pi time, mask, on) of every LED command sent to the box."""
        return [(t, m.mask, m.on) for t, m in self.wire.of(P.SetLeds) if t >= since_ns]

    def led_history(self, buzzer: int, since_ns: int = 0) -> list[tuple[int, bool]]:
        bit = 1 << (buzzer - 1)
        return [(t, bool(on & bit)) for t, mask, on in self.led_commands(since_ns)
                if mask & bit]

    def go_command(self, go_ns: int):
        """The cue command that asks for GO (on, at the tick of ``go_ns``)."""
        want = self.src.sync.to_tick(go_ns)
        got = [(t, m) for t, m in self.wire.of(P.SetCue) if m.on == 1 and m.at_tick == want]
        assert len(got) == 1, self.wire.of(P.SetCue)
        return got[0]

    def logged_races(self):
        return [e for _, e in self.session.store.events(self.session.game_id)
                if e.get("type") == "race"]

    def close(self):
        self.pipe.close()
        self.src.close()
        self.session.store.close()


@pytest.fixture
def table():
    t = Table(feedback=None)
    yield t
    t.close()


def start_announced(table: Table, countdown_ms: int = 3000) -> int:
    s = table.session
    s.log({"type": "flip", "side": "heads"})
    view = table.pipe.call(s.start_race, countdown_ms)
    assert view["phase"] == "countdown"
    return view["go_ns"]


# ---------------------------------------------------------------------------
# The race is armed at the GO the box sounded


def test_a_press_between_the_scheduled_go_and_the_box_go_is_a_false_start(table):
    go = start_announced(table)
    table.until(go - 250 * MS)
    assert [m.on for _, m in table.wire.of(P.SetCue)][-1] == 0    # GO not asked for yet
    table.until(go - 150 * MS)
    sent_at, cmd = table.go_command(go)
    # asked for ahead of time (the source's lead), for the tick of GO
    assert go - PicoSource.cue_lead_ns <= sent_at < go - 150 * MS
    table.until(go + 2 * MS)
    table.press(2, go + 1 * MS)             # bo: 1 ms after the scheduled GO
    race = table.session.snapshot()["race"]
    assert race["phase"] == "live" and race["go_ns"] == go    # no stamp yet: the plan
    assert [o["player"] for o in race["order"]] == ["bo"]     # provisionally ahead
    table.until(go + 4 * MS)
    table.cue_sounded(cmd.seq, go + 3 * MS)   # ... but the box sounded GO 3 ms late
    box_go = table.src.map.to_ns(table.tick_at(go + 3 * MS))
    assert abs(box_go - (go + 3 * MS)) <= 1_000
    race = table.session.snapshot()["race"]
    assert race["go_ns"] == box_go and race["order"] == []
    table.until(go + 6 * MS)
    table.press(1, go + 5 * MS)             # ana: 2 ms after the box's GO
    table.run(200)
    [logged] = table.logged_races()
    assert logged["winner"] == "ana" and logged["false_starts"] == ["bo"]
    assert logged["spec"]["arm_ns"] == box_go and logged["scheduled_go_ns"] == go
    assert logged["spec"]["deadline_ns"] - box_go == 5_000 * MS   # the window moved with GO
    assert table.session.state["scores"] == {"ana": 1, "bo": 0, "cy": 0}
    assert table.pipe.cues and table.pipe.cues[-1] == CueStamp(True, box_go, go)


def test_without_the_box_stamp_the_race_keeps_the_scheduled_go(table):
    go = start_announced(table, 1000)
    table.until(go + 2 * MS)
    table.press(2, go + 1 * MS)
    table.run(200)                           # no ACK comes (lost, unplugged...)
    assert table.logged_races() == []        # the verdict waits for the box's GO ...
    table.run(CUE_WAIT_NS // MS)
    [logged] = table.logged_races()          # ... for a while, then uses the plan
    assert logged["winner"] == "bo" and logged["false_starts"] == []
    assert logged["spec"]["arm_ns"] == go and "scheduled_go_ns" not in logged
    [fault] = [f for f in table.session.snapshot()["faults"] if f["fault"] == "cue"]
    assert "did not report when it sounded GO" in fault["message"]


def test_a_box_stamp_later_than_the_usual_hold_still_decides_the_false_start(table):
    """The box stalled across GO: bo's press (before the box's GO) reaches
    the Pi 150 ms before the box's stamp of GO does; the verdict waits."""
    go = start_announced(table, 1000)
    table.until(go - 150 * MS)
    _, cmd = table.go_command(go)
    table.until(go + 20 * MS)
    table.press(2, go + 10 * MS)
    table.run(150)                           # past a tie window and the usual hold
    assert table.logged_races() == []
    table.cue_sounded(cmd.seq, go + 100 * MS)
    table.until(go + 200 * MS)
    table.press(3, go + 190 * MS)
    table.run(200)
    [logged] = table.logged_races()
    assert logged["winner"] == "cy" and logged["false_starts"] == ["bo"]
    assert not [f for f in table.session.snapshot()["faults"] if f["fault"] == "cue"]


def test_a_press_after_the_box_go_wins_and_the_blips_do_not_arm_it(table):
    go = start_announced(table)
    table.until(go - 150 * MS)
    blips = [(t, m) for t, m in table.wire.of(P.SetCue) if m.on == 1]
    assert len(blips) == 4                   # three blips and GO, each asked for ahead
    for t, m in blips[:3]:                   # a blip's stamp is not GO
        table.cue_sounded(m.seq, T0 + (m.at_tick - K0) * 1000)
    assert table.session.snapshot()["race"]["go_ns"] == go
    _, cmd = table.go_command(go)
    table.until(go + 3 * MS)
    table.cue_sounded(cmd.seq, go + 2 * MS)
    table.until(go + 5 * MS)
    table.press(3, go + 4 * MS)              # cy, 2 ms after the box's GO
    table.run(200)
    [logged] = table.logged_races()
    box_go = table.src.map.to_ns(table.tick_at(go + 2 * MS))
    assert logged["winner"] == "cy" and logged["false_starts"] == []
    assert logged["order"][0]["player"] == "cy"
    stats = table.session.stats()["players"]["cy"]["reaction_us"]
    assert stats["best"] == (table.src.map.to_ns(table.tick_at(go + 4 * MS)) - box_go) // 1000


def test_a_box_go_that_comes_after_the_verdict_is_a_fault_not_a_new_verdict(table):
    go = start_announced(table, 1000)
    table.until(go - 150 * MS)
    _, cmd = table.go_command(go)
    table.until(go + 2 * MS)
    table.press(1, go + 1 * MS)
    table.run(200 + CUE_WAIT_NS // MS)       # decided on the scheduled GO
    table.cue_sounded(cmd.seq, go + 40 * MS)   # a box that stalled, heard from very late
    # the race was logged already: its verdict stands, and the host is told
    [logged] = table.logged_races()
    assert logged["winner"] == "ana" and logged["spec"]["arm_ns"] == go
    [fault] = [f for f in table.session.snapshot()["faults"]
               if f["fault"] == "cue" and "after the race was decided" in f["message"]]
    assert "+40.000 ms" in fault["message"]
    faults = len(table.session.snapshot()["faults"])
    table.cue_sounded(cmd.seq, go + 41 * MS)     # a stamp of nothing: no new fault
    assert len(table.session.snapshot()["faults"]) == faults


def test_a_late_box_go_while_the_verdict_is_out_is_recorded():
    s = TableSession(Store(":memory:"), clock=Clock())
    s.new_game("cuecoin", SEATS, {})
    s.log({"type": "flip", "side": "heads"})
    go = s.start_race(0)["go_ns"]
    live = s.desk.race.live
    live.finish()                            # decided, not yet logged
    s.cue_sounded(go + 40 * MS, go)
    faults = [f for f in s.snapshot()["faults"] if f.get("fault") == "cue"]
    assert faults and "after the race was decided" in faults[-1]["message"]
    assert s.desk.race.live.spec.arm_ns == go


def test_a_stamp_of_another_countdown_is_ignored(table):
    go = start_announced(table, 1000)
    table.session.cue_sounded(go + 3 * MS, go - 5 * S)     # asked for another time
    table.session.cue_sounded(go + 500 * MS)               # says nothing, far from GO
    assert table.session.snapshot()["race"]["go_ns"] == go
    with pytest.raises(ValueError, match="integer"):
        table.session.cue_sounded(1.5)


# ---------------------------------------------------------------------------
# The pure rule


def test_arm_at_cue_moves_go_and_the_deadline_once():
    a = Arming(True, 10 * S, 15 * S)
    b = arm_at_cue(a, 10 * S + 3 * MS, 10 * S)
    assert (b.arm_ns, b.deadline_ns, b.scheduled_ns) == (10 * S + 3 * MS, 15 * S + 3 * MS, 10 * S)
    assert arm_at_cue(b, 10 * S + 4 * MS, 10 * S) is None          # once
    assert arm_at_cue(Arming(False, 10 * S, 15 * S), 10 * S, 10 * S) is None  # unannounced
    assert arm_at_cue(a, 10 * S - 1 * MS).arm_ns == 10 * S - 1 * MS   # early is GO too
    assert arm_at_cue(a, 10 * S + arming.CUE_MATCH_NS + 1) is None
    with pytest.raises(ValueError):
        arm_at_cue(a, True)


def test_rearming_keeps_the_live_race_object_and_its_edges():
    from companion.races.edges import Edge
    from companion.races.referee import LiveRace
    race = LiveRace(RaceSpec(FIRST_PRESS, ("ana", "bo"), arm_ns=1000, deadline_ns=9000,
                             tie_window_ns=0))
    race.feed(Edge("bo", True, 1500))
    race.feed(Edge("ana", True, 2500))
    arming.rearm_live(race, 2000, 10_000)
    assert race.spec.arm_ns == 2000 and race.spec.deadline_ns == 10_000
    v = race.finish()
    assert v.winner == "ana" and v.false_starts == ["bo"]
    with pytest.raises(ValueError):
        arming.rearm_live(race, 3000, None)


# ---------------------------------------------------------------------------
# The LEDs on the box follow the verdict and the box's own faults


def test_the_box_lights_the_winner_and_blinks_the_false_starter():
    table = Table(feedback=None)
    try:
        table.pipe.feedback.settings = FAST
        go = start_announced(table, 1000)
        table.until(go - 150 * MS)
        _, cmd = table.go_command(go)
        cleared = table.led_commands()
        # a new race clears every LED in one command
        assert cleared and cleared[-1][1] == 0b111 and cleared[-1][2] == 0
        table.until(go + 2 * MS)
        table.press(2, go + 1 * MS)
        table.until(go + 4 * MS)
        table.cue_sounded(cmd.seq, go + 3 * MS)
        table.until(go + 6 * MS)
        table.press(1, go + 5 * MS)
        decided_from = table.clock.t
        table.run(100)
        [logged] = table.logged_races()
        assert logged["winner"] == "ana" and logged["false_starts"] == ["bo"]
        verdict_at = min(t for t, _, _ in table.led_commands(decided_from))
        table.run(FAST.win_ns // MS + 100, step_ms=5)
        ana = table.led_history(1, decided_from)
        bo = table.led_history(2, decided_from)
        # ana: on at the verdict, off after win_ns; bo: three blinks, then dark
        assert len(ana) == 2 and ana[0] == (verdict_at, True) and ana[1][1] is False
        assert 0 <= ana[1][0] - (verdict_at + FAST.win_ns) < 5 * MS
        assert [lit for _, lit in bo] == [True, False] * FAST.blink_n
        gaps = [b[0] - a[0] for a, b in zip(bo, bo[1:])]
        assert all(45 * MS <= g <= 55 * MS for g in gaps), gaps
        assert table.led_history(3, decided_from) == []          # cy is left alone
        # the winner's light and the false starter's first blink: one command
        first = [c for c in table.led_commands(decided_from) if c[0] == verdict_at]
        assert first[0][1] == 0b011 and first[0][2] == 0b011
    finally:
        table.close()


def test_a_stuck_buzzer_the_box_reports_flickers_until_cleared(table):
    table.pipe.feedback.settings = FAST
    t = table.clock.t
    table.fault(P.F_STUCK, 3, t, 10_000)
    table.run(400, step_ms=5)
    cy = table.led_history(3, t)
    assert len(cy) >= 6 and [lit for _, lit in cy[:4]] == [True, False, True, False]
    assert table.session.snapshot()["faults"][-1]["fault"] == "stuck"
    table.fault(P.F_CLEARED, 3, table.clock.t, 0)
    cleared_at = table.clock.t
    table.run(300, step_ms=5)
    after = table.led_history(3, cleared_at)
    assert after and after[-1][1] is False                  # dark at the clear ...
    assert table.led_history(3, cleared_at + 1) == []        # ... and it stays dark


def test_faults_of_no_buzzer_or_other_kinds_leave_the_leds_alone(table):
    t = table.clock.t
    table.pipe.fault(SourceFault("gap", "3 frames lost", t_ns=t))
    table.pipe.fault(SourceFault("overflow", "lost", buzzer="b1", t_ns=t))
    table.run(50)
    assert table.led_commands(t) == []


def test_set_leds_names_an_unknown_buzzer():
    src = PicoSource.offline(BUZZERS, _hello())
    src.link = Wire(src.clock)
    with pytest.raises(Exception, match="no buzzer 'b9'"):
        src.send_leds({"b9": True})
    assert src.send_leds({"b2": True}) and src.link.sent[-1][1].mask == 0b010


# ---------------------------------------------------------------------------
# Sources without a cue: unchanged


def test_a_source_without_a_cue_gets_no_box_feedback_and_the_scheduled_go():
    from gpiozero.pins.mock import MockFactory  # noqa: F401  (mock pins exist)
    from companion.buzzers.mock import ClockedMockFactory, MockSource
    factory = ClockedMockFactory(start_ns=T0)
    try:
        src = MockSource(BUZZERS, pin_factory=factory)
        assert not src.drives_cue and not src.drives_leds
        assert src.cue(True) is None and src.send_cue(True) is False
        assert src.send_leds({"b1": True}) is False
        s = TableSession(Store(":memory:"), clock=src.now_ns)
        s.new_game("cuecoin", SEATS, {})
        pipe = Pipeline(src, s)
        assert pipe.feedback is None                  # nothing of its own to drive
        s.log({"type": "flip", "side": "heads"})
        go = pipe.call(s.start_race, 0)["go_ns"]
        assert s.snapshot()["race"]["go_ns"] == go
        pipe.close()
        src.close()
    finally:
        factory.close()
        factory.reset()


def test_a_sink_without_cue_still_takes_a_cue_source():
    class Box(EdgeSource):
        name = "box"
        drives_cue = True

        def send_cue(self, on, at_ns=None):
            self._report_cue(CueStamp(bool(on), 5, at_ns))
            return True

    class Plain:                                   # the three methods, nothing more
        def __init__(self):
            self.edges = []

        def edge(self, e):
            self.edges.append(e)

        def fault(self, f):
            pass

        def status(self, s):
            pass

    box = Box(["1"])
    box.start(Plain())
    assert box.send_cue(True)                      # reported to nobody: no error
    rec = CallbackSink(lambda e: None)
    box.start(rec)
    box.send_cue(True, 7)
    assert rec.cues == [CueStamp(True, 5, 7)]


def test_a_referee_consumer_arms_at_the_box_go_too():
    clock = Clock()
    judge = RefereeConsumer(Referee(BUZZERS), clock=clock)
    race = judge.start_race(RaceSpec(FIRST_PRESS, tuple(BUZZERS), arm_ns=T0 + S,
                                     deadline_ns=T0 + 6 * S, tie_window_ns=0), announced=True)
    judge.feed_edge(ButtonEdge("b2", True, T0 + S + 1 * MS))
    judge.cue_sounded(T0 + S + 3 * MS, T0 + S)
    judge.feed_edge(ButtonEdge("b1", True, T0 + S + 5 * MS))
    judge.tick(T0 + 2 * S)
    assert race.verdict is not None                # the same LiveRace the caller holds
    assert race.verdict.winner == "b1" and race.verdict.false_starts == ["b2"]


# ---------------------------------------------------------------------------
# End to end: the firmware under MicroPython, joined by a pty

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "firmware" / "sim"))

needs_box = pytest.mark.skipif(not Path(sys.executable).with_name("micropython").exists(),
                               reason="no MicroPython unix port")


@pytest.fixture
def box(tmp_path):
    from ptybox import SimBox
    b = SimBox(tmp_path / "box")
    yield b
    b.close()


def _sleep_until(t_ns: int) -> None:
    left = t_ns - time.monotonic_ns()
    if left > 0:
        time.sleep(left / S)


def _late_go(scene, box, s, pipe, store):
    """One playing of the late GO (a scene of tests/kit/scene.py): the box's
    loop stalls across GO, bo presses 10 ms after the scheduled GO, ana 300
    ms after it. The race event, the scheduled GO and the box's stamp of its
    GO; a slip of the scene where the machine did not keep it (the stall
    began too late to straddle GO, the presses reached the board after it
    had sampled past their moment, or the box's stamp reached the table only
    after the race's wait for it: a playing that proves nothing either way)."""
    s.new_game("cuecoin", SEATS, {})
    s.log({"type": "flip", "side": "heads"})
    go = pipe.call(s.start_race, 600)["go_ns"]
    _sleep_until(go - 100 * MS)
    if time.monotonic_ns() > go - 30 * MS:
        scene.slip(f"the stall was asked {(time.monotonic_ns() - go) / MS:+.0f} ms from GO")
        return None
    box.stall(200)                            # the box's loop stops across GO
    box.press(2, go + 10 * MS)                # bo: after the scheduled GO ...
    box.press(1, go + 300 * MS)               # ana: well after the box's GO
    box.release(2, go + 350 * MS)
    box.release(1, go + 400 * MS)
    game = s.game_id
    assert wait_for(lambda: any(e.get("type") == "race" for _, e in store.events(game)), 5)
    race = [e for _, e in store.events(game) if e.get("type") == "race"][-1]
    stamps = [c for c in pipe.cues if c.on and c.at_ns == go]
    late = [(g, (at - asked) / MS) for g, asked, at in box.late(go) if asked >= go - S]
    if late:
        # the press commands reached the board after it had sampled past
        # them: it pressed when it got them (as a real PIO samples)
        scene.slip(f"the board pressed late: {late}")
        return None
    if not stamps or race["spec"]["arm_ns"] == go:
        # the box's GO came after the race's wait for it (a fault says so)
        scene.slip("the box's stamp of GO came after the race was decided")
        return None
    if stamps[-1].t_ns >= go + 300 * MS:
        # a starved box stretched its 200 ms stall past ana's press: hers
        # came before its GO too (seen once beside four busy loops)
        scene.slip(f"the box sounded GO {(stamps[-1].t_ns - go) / MS:+.0f} ms from the "
                   f"scheduled GO, after ana's press")
        return None
    return race, go, stamps[-1].t_ns


@pytest.mark.slow
@needs_box
def test_end_to_end_the_box_sounds_go_late_and_judges_the_false_start(box):
    """The box's loop stalls across GO, so it sounds GO late; a press in
    between is a false start on the box's clock, a press after it wins, and
    the LEDs on the board follow."""
    src = box_source(BUZZERS, box)
    store = Store(":memory:")
    pipe = None
    try:
        assert wait_for(lambda: (src.error_bound_ns() or 10**9) < 5 * MS, 8), src.status()
        for gpio in (12, 13, 14):                 # buzzers 1-3's LEDs on the board
            box.watch(gpio)
        s = TableSession(store, clock=src.now_ns, settings={"tie_window_us": 50_000})
        fb = Feedback.for_source(src, settings=FAST)
        pipe = Pipeline(src, s, feedback=fb).start()
        # played again when a busy machine did not keep it (its releases and
        # lights long gone: on_time waits seconds between playings)
        race, go, box_go = on_time(lambda scene: _late_go(scene, box, s, pipe, store))
        late = box_go - go
        assert late >= 15 * MS, late              # the stall made the box late
        assert race["spec"]["arm_ns"] == box_go and race["scheduled_go_ns"] == go, \
            (go, [(c.on, c.t_ns - go, None if c.at_ns is None else c.at_ns - go)
                  for c in pipe.cues], race["spec"]["arm_ns"] - go, src.cue_edges[-4:])
        assert race["false_starts"] == ["bo"] and race["winner"] == "ana", \
            (race["false_starts"], race["winner"], (box_go - go) / MS,
             [(p["player"], p["edge"], (p["t_ns"] - go) / MS) for p in race.get("edges", [])])
        # the stamp is when the cue pin really changed (the PIO's sample)
        slack = src.error_bound_ns() + 2 * MS
        assert src.cue_edges and any(abs(t - box_go) <= slack and on
                                     for t, on in src.cue_edges)
        # the board's LEDs in this playing: ana's lights, bo's blinks, cy's stays dark
        def lit(gpio):
            return [t for on, t in box.edges(gpio, box_go) if on and t > go - 100 * MS]
        assert wait_for(lambda: len(lit(13)) >= 2, 3), (   # (as above: say what came)
            [(on, (t - go) / MS) for on, t in box.edges(13, box_go)], (box_go - go) / MS,
            race["false_starts"], src.status())
        assert wait_for(lambda: lit(12), 3)
        assert lit(12)[0] > go + 300 * MS
        assert not lit(14)
    finally:
        if pipe is not None:
            pipe.close()
        src.close()
        store.close()


@pytest.mark.slow
@needs_box
def test_end_to_end_the_box_sounds_go_at_the_scheduled_time(box):
    src = box_source(BUZZERS, box)
    store = Store(":memory:")
    pipe = None
    try:
        assert wait_for(lambda: (src.error_bound_ns() or 10**9) < 5 * MS, 8), src.status()
        s = TableSession(store, clock=src.now_ns)
        s.new_game("cuecoin", SEATS, {})
        pipe = Pipeline(src, s).start()           # the box's own feedback, by default
        assert pipe.feedback is not None and pipe.feedback.source is src
        s.log({"type": "flip", "side": "heads"})
        go = pipe.call(s.start_race, 1500)["go_ns"]
        # (a failure says what came: the cues relative to GO, the link, the
        # box's late changes; seen twice in whole runs under load, not yet
        # reproduced alone)
        assert wait_for(lambda: any(c.on and c.at_ns == go for c in pipe.cues), 4), (
            [(c.on, (c.t_ns - go) / MS, None if c.at_ns is None else (c.at_ns - go) / MS)
             for c in pipe.cues], src.status(), box.late(go))
        box_go = [c for c in pipe.cues if c.on and c.at_ns == go][-1].t_ns
        # asked 1.5 s ahead, sounded by the box on its own clock when planned:
        # never before the plan (beyond the sync error); how late depends on
        # the simulated loop's scheduling (a figure, not a bound: a loaded
        # machine deschedules the simulated box)
        print(f"box GO - scheduled GO: {(box_go - go) / 1000:+.0f} us")
        assert box_go >= go - src.error_bound_ns() - MS, box_go - go
        assert wait_for(lambda: s.snapshot()["race"]["go_ns"] == box_go, 2)
        # the blip that went before it was sounded too, and armed nothing
        assert any(c.on and c.at_ns == go - S for c in pipe.cues)
    finally:
        if pipe is not None:
            pipe.close()
        src.close()
        store.close()
