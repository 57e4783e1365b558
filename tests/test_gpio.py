"""The GPIO path on gpiozero's MockFactory: pins driven at controlled ticks,
through the referee's debounce and the live race, to the verdict and the LEDs.

The edge contract (docs/architecture.md): edges are stamped with the kernel's timestamp (the pin factory's
ticks) as integer nanoseconds; debounce is leading-edge; a buzzer held too
long is a recorded fault and ignored until released, the others play on; a
verdict depends only on the timestamps.
"""

from __future__ import annotations

import threading
import time

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPin
from hypothesis import given, settings, strategies as st

from companion.buzzers.feedback import Feedback, FeedbackSettings
from companion.buzzers.gpio import GpioSource, ticks_to_ns
from companion.buzzers.mock import ClockedMockFactory, MockSource
from companion.buzzers.pinmap import PinMapError, load_pinmap
from companion.buzzers.runner import BuzzerRunner, open_source
from companion.buzzers.base import CallbackSink
from companion.races.edges import ButtonEdge
from tests.kit.helpers import toggles, wait_for
from companion.races.referee import (FIRST_PRESS, FIRST_RELEASE, LAST_PRESS, MS, RaceSpec, Referee,
                               judge)

S = 1_000 * MS
T0 = 10 * S
PLAYERS = ("ana", "bo", "cy")
FAST = FeedbackSettings(win_ns=2 * S, blink_on_s=0.01, blink_off_s=0.01, blink_n=3)


@pytest.fixture
def factory():
    f = ClockedMockFactory(start_ns=T0)
    yield f
    f.close()
    f.reset()


@pytest.fixture
def source(factory):
    src = MockSource(PLAYERS, pin_factory=factory)
    yield src
    src.close()


@pytest.fixture
def table(factory, source):
    """A buzzer table on mock pins: source, referee, feedback, runner (pumped by hand)."""
    ref = Referee(PLAYERS, debounce_ns=20 * MS, stuck_ns=2 * S, hold_ns=30 * MS)
    fb = Feedback.from_pinmap(PLAYERS, pin_factory=factory, settings=FAST,
                              clock=source.now_ns).attach(ref)
    run = BuzzerRunner(source, ref, pollables=[fb])
    run.start(thread=False)
    events = []
    ref.listeners.append(lambda kind, p: events.append((kind, p)))
    yield run, ref, fb, events
    run.stop()
    fb.close()


def lit(fb, player):
    return bool(fb.leds[player].pin.state)


# ---------------------------------------------------------------------------
# The source


def test_a_press_is_an_edge_stamped_with_the_pin_factory_tick(factory, source):
    edges = []
    source.start(edges.append)
    source.press("bo", T0 + 1_234_567)
    source.release("bo", T0 + 81_234_567)
    assert edges == [ButtonEdge("bo", True, T0 + 1_234_567), ButtonEdge("bo", False, T0 + 81_234_567)]
    assert all(isinstance(e.t_ns, int) for e in edges)


def test_buttons_are_active_low_with_pull_ups_and_no_gpiozero_debounce(source):
    for player in PLAYERS:
        pin = source.pin(player)
        assert pin.pull == "up"
        assert pin.bounce is None
        assert pin.state == 1 and not source.is_pressed(player)
    source.pin("ana").drive_low()
    assert source.is_pressed("ana")


def test_players_take_the_pin_map_slots_in_order(source):
    pm = load_pinmap()
    assert [source.pin_of(p) for p in PLAYERS] == [s.button for s in pm.slots[:3]]
    assert source.pin("cy").info.name == f"GPIO{pm.slots[2].button}"


def test_stock_mock_factory_with_patched_monotonic(mocker):
    """The gpiozero way: patch gpiozero.pins.mock.monotonic to set the tick."""
    f = MockFactory(pin_class=MockPin)
    clock = mocker.patch("gpiozero.pins.mock.monotonic", return_value=12.345678)
    try:
        src = GpioSource(PLAYERS, pin_factory=f)
        edges = []
        src.start(edges.append)
        clock.return_value = 12.5
        src.buttons["cy"].pin.drive_low()
        assert edges == [ButtonEdge("cy", True, 12_500_000_000)]
        assert src.now_ns() == 12_500_000_000
        src.close()
    finally:
        f.close()
        f.reset()


def test_now_is_on_the_clock_edges_are_stamped_with(factory, source):
    factory.clock_ns = 42 * S + 17
    assert source.now_ns() == 42 * S + 17
    edges = []
    source.start(edges.append)
    source.press("ana")
    assert edges[0].t_ns == source.now_ns()


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**50))
def test_lgpio_ticks_round_trip_to_the_kernel_nanosecond(ns):
    # lgpio hands gpiozero ticks = kernel_ns / 1e9; we get the nanosecond back
    assert ticks_to_ns(ns / 1_000_000_000) == ns


def test_a_repeated_level_from_a_lost_edge_is_dropped(source):
    edges = []
    source.start(edges.append)
    button = source.buttons["ana"]
    button._pin_changed(11.0, 0)      # falling: press
    button._pin_changed(11.001, 0)    # another falling: the rising between was lost
    button._pin_changed(11.002, 1)
    assert [(e.pressed, e.t_ns) for e in edges] == [(True, 11 * S), (False, 11_002_000_000)]
    assert source.dropped == 1


def test_a_buzzer_held_at_start_is_reported_as_held_from_now(factory, source):
    source.press("bo", T0 - S)
    edges = []
    factory.clock_ns = T0
    source.start(edges.append)
    assert edges == [ButtonEdge("bo", True, T0)]


def test_no_edges_before_start_or_after_stop(source):
    edges = []
    source.press("ana", T0)
    source.start(edges.append)
    source.stop()
    source.release("ana", T0 + S)
    assert edges == [ButtonEdge("ana", True, T0)]


def test_close_releases_the_pins(factory):
    a = MockSource(PLAYERS, pin_factory=factory)
    a.close()
    b = MockSource(PLAYERS, pin_factory=factory)   # would raise GPIOPinInUse
    b.close()


def test_more_players_than_slots_is_a_clear_error(factory):
    with pytest.raises(PinMapError, match="7 players but the pin map"):
        MockSource([f"p{i}" for i in range(7)], pin_factory=factory)


def test_pigpio_factory_is_refused():
    class PiGPIOFactory:      # stands in for gpiozero.pins.pigpio.PiGPIOFactory
        pass
    with pytest.raises(ValueError, match="wrap"):
        GpioSource(PLAYERS, pin_factory=PiGPIOFactory())


def test_open_source_picks_mock_off_a_pi(mocker):
    mocker.patch("companion.buzzers.gpio.on_a_pi", return_value=False)
    mocker.patch.dict("os.environ", {"COMPANION_SOURCE": ""})
    src = open_source("auto", PLAYERS)
    try:
        assert isinstance(src, MockSource)
    finally:
        src.close()
    with pytest.raises(ValueError):
        open_source("carrier-pigeon", PLAYERS)


def test_mock_source_without_a_clocked_factory_refuses_t_ns():
    f = MockFactory()
    try:
        src = MockSource(PLAYERS, pin_factory=f)
        with pytest.raises(TypeError, match="ClockedMockFactory"):
            src.press("ana", 5)
        src.close()
    finally:
        f.close()
        f.reset()


# ---------------------------------------------------------------------------
# End to end: pins -> debounce -> live race -> verdict -> LEDs


def test_first_press_race_end_to_end(factory, source, table):
    run, ref, fb, events = table
    arm = T0 + 3 * S
    run.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=arm))
    source.press("bo", arm - 200 * MS)                 # false start
    source.release("bo", arm - 120 * MS)
    source.press("cy", arm + 180_250_000)
    source.press("ana", arm + 180_262_000)              # 12 us later
    run.pump(arm + 180_262_000)
    assert ref.race.verdict is None                     # still within the hold
    assert ref.race.order() == [("cy", arm + 180_250_000), ("ana", arm + 180_262_000)]
    run.pump(arm + 180_250_000 + 30 * MS)
    v = ref.race.verdict
    assert v.winner == "cy" and v.false_starts == ["bo"]
    assert [k for k, _ in events].count("verdict") == 1
    assert lit(fb, "cy") and not lit(fb, "ana")
    assert wait_for(lambda: toggles(fb.leds["bo"].pin) >= 4)   # the false starter blinks
    source.release("cy", arm + 300 * MS)
    source.release("ana", arm + 310 * MS)
    run.pump(arm + 180_250_000 + 30 * MS + FAST.win_ns)
    assert not lit(fb, "cy")                            # the winner's light goes out


def test_the_live_verdict_equals_the_photo_finish(factory, source, table):
    run, ref, fb, events = table
    spec = RaceSpec(LAST_PRESS, PLAYERS, arm_ns=T0 + S, tie_window_ns=0)
    run.start_race(spec)
    raw = []                                            # what the pins emitted
    inner = source._sink
    source._sink = CallbackSink(lambda e: (raw.append(e.as_edge(e.buzzer)), inner.edge(e)))
    for who, dt in (("ana", 100), ("cy", 130), ("bo", 175)):
        source.tap(who, T0 + S + dt * MS)
    run.pump(T0 + 2 * S)
    assert ref.race.verdict.loser == "bo"
    assert ref.race.verdict.to_json() == judge(spec, raw).to_json()
    assert wait_for(lambda: toggles(fb.leds["bo"].pin) >= 4)


def test_edges_delivered_out_of_order_are_judged_by_their_timestamps(source, table):
    run, ref, fb, events = table
    run.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=T0))
    source._emit(ButtonEdge("ana", True, T0 + 50 * MS))
    source._emit(ButtonEdge("bo", True, T0 + 49 * MS))        # stamped earlier, delivered later
    run.pump(T0 + 50 * MS)
    run.pump(T0 + 49 * MS + 30 * MS)
    assert ref.race.verdict.winner == "bo"


def test_a_stuck_button_is_a_fault_and_the_others_still_play(factory, source, table):
    run, ref, fb, events = table
    source.press("ana", T0)                             # a buzzer jammed down
    run.pump(T0)
    run.pump(T0 + 2 * S + 1)
    faults = [p for k, p in events if k == "fault"]
    assert [(f.player, f.kind) for f in faults] == [("ana", "stuck")]
    assert ref.faults == faults
    assert wait_for(lambda: toggles(fb.leds["ana"].pin) >= 2)   # it flickers

    arm = T0 + 3 * S
    run.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=arm))
    assert ref.race.spec.eligible == ("bo", "cy")
    source.press("bo", arm + 300 * MS)
    source.press("cy", arm + 200 * MS)
    run.pump(arm + 300 * MS)
    run.pump(arm + 230 * MS + 100 * MS)
    assert ref.race.verdict.winner == "cy"
    assert lit(fb, "cy")
    source.release("cy", arm + 400 * MS)
    source.release("bo", arm + 450 * MS)

    source.release("ana", arm + 5 * S)                   # unjammed
    run.pump(arm + 5 * S)
    assert [(f.player, f.kind) for f in ref.faults][-1] == ("ana", "cleared")
    assert "ana" not in ref.stuck
    assert not lit(fb, "ana")
    run.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=arm + 6 * S))
    source.press("ana", arm + 6 * S + 10 * MS)
    run.pump(arm + 6 * S + 10 * MS + 30 * MS)
    assert ref.race.verdict.winner == "ana"             # back in play


def test_a_stuck_button_does_not_block_the_others_edges(factory, source, table):
    run, ref, fb, events = table
    source.press("ana", T0)
    run.pump(T0 + 3 * S)
    edges_before = sum(1 for k, _ in events if k == "edge")
    source.tap("bo", T0 + 4 * S)
    source.tap("cy", T0 + 5 * S)
    run.pump(T0 + 6 * S)
    accepted = [p for k, p in events if k == "edge"][edges_before:]
    assert [(e.player, e.pressed) for e in accepted] == [
        ("bo", True), ("bo", False), ("cy", True), ("cy", False)]


def _race_through_pins(presses, bounces, kind=FIRST_PRESS, tie_window_ns=0):
    """Run a race on fresh mock pins; ``presses`` is {player: (press_t, release_t)},
    ``bounces`` is {player: (press_offsets, release_offsets)}."""
    f = ClockedMockFactory(start_ns=T0)
    src = MockSource(PLAYERS, pin_factory=f)
    try:
        ref = Referee(PLAYERS, debounce_ns=20 * MS, hold_ns=30 * MS)
        run = BuzzerRunner(src, ref)
        run.start(thread=False)
        arm = T0 + S
        race = run.start_race(RaceSpec(kind, PLAYERS, arm_ns=arm, tie_window_ns=tie_window_ns))
        schedule = []
        for p, (tp, tr) in presses.items():
            on, off = bounces.get(p, ((), ()))
            schedule.append((tp, p, True, on))
            schedule.append((tr, p, False, off))
        for t, p, pressed, offs in sorted(schedule, key=lambda x: x[0]):
            src.bounce(p, pressed, t, offs)
            run.pump(t)
        run.pump(arm + 10 * S)
        edges = [e for p in PLAYERS for e in race.per.get(p, [])]
        return race.verdict.to_json(), sorted((e.t_ns, e.player, e.pressed) for e in edges)
    finally:
        src.close()
        f.close()
        f.reset()


def test_a_bounce_storm_changes_neither_verdict_nor_timestamps():
    arm = T0 + S
    presses = {"ana": (arm + 120 * MS, arm + 400 * MS),
               "bo": (arm + 119 * MS, arm + 380 * MS),
               "cy": (arm + 150 * MS, arm + 500 * MS)}
    storm = {p: ([k * 150_000 for k in range(1, 41)],       # 40 toggles over 6 ms
                 [k * 230_000 for k in range(1, 31)]) for p in PLAYERS}
    clean = _race_through_pins(presses, {})
    bouncy = _race_through_pins(presses, storm)
    assert bouncy == clean
    assert clean[0]["winner"] == "bo"
    assert [t for t, p, pressed in clean[1] if p == "bo" and pressed] == [arm + 119 * MS]


@settings(max_examples=25, deadline=None)
@given(
    times=st.lists(st.integers(min_value=50, max_value=400), min_size=3, max_size=3),
    storms=st.lists(st.lists(st.integers(min_value=1, max_value=19_000_000), max_size=12,
                             unique=True), min_size=6, max_size=6),
    kind=st.sampled_from([FIRST_PRESS, LAST_PRESS, FIRST_RELEASE]),
)
def test_any_bounce_shorter_than_the_debounce_window_is_harmless(times, storms, kind):
    arm = T0 + S
    presses = {}
    bounces = {}
    for i, (p, ms) in enumerate(zip(PLAYERS, times)):
        tp = arm + ms * MS + i * 7_000      # distinct, microsecond-spaced
        presses[p] = (tp, tp + 300 * MS)
        on, off = storms[2 * i], storms[2 * i + 1]
        # an even number of toggles: the bounce ends at the new level
        bounces[p] = (on[: len(on) // 2 * 2], off[: len(off) // 2 * 2])
    assert _race_through_pins(presses, bounces, kind) == _race_through_pins(presses, {}, kind)


# ---------------------------------------------------------------------------
# The runner


def test_an_edge_from_an_unknown_player_is_recorded_not_fatal(source, table):
    run, ref, fb, events = table
    run.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=T0))
    source._emit(ButtonEdge("zed", True, T0 + MS))
    source.press("ana", T0 + 2 * MS)
    assert run.pump(T0 + 2 * MS) == 1
    assert len(run.errors) == 1 and run.errors[0].edge.buzzer == "zed"
    assert "unknown player" in run.errors[0].message
    run.pump(T0 + 40 * MS)
    assert ref.race.verdict.winner == "ana"


def test_a_failing_pollable_does_not_stop_the_runner(source, table):
    run, ref, fb, events = table

    class Broken:
        def poll(self, now_ns):
            raise RuntimeError("boom")

        def next_deadline(self):
            return None

    run.pollables.append(Broken())
    source.press("ana", T0)
    assert run.pump(T0) == 1
    assert "boom" in run.errors[0].message


def test_the_runner_thread_publishes_verdicts_in_real_time():
    f = ClockedMockFactory()                    # follows the real monotonic clock
    src = MockSource(PLAYERS, pin_factory=f)
    ref = Referee(PLAYERS, hold_ns=10 * MS)
    fb = Feedback.from_pinmap(PLAYERS, pin_factory=f, settings=FAST, clock=src.now_ns).attach(ref)
    done = threading.Event()
    ref.listeners.append(lambda kind, p: done.set() if kind == "verdict" else None)
    run = BuzzerRunner(src, ref, pollables=[fb])
    try:
        with run:
            assert run.running
            run.start_race(RaceSpec(FIRST_PRESS, PLAYERS, arm_ns=src.now_ns()))
            src.press("cy")
            time.sleep(0.002)
            src.press("ana")
            assert done.wait(2.0)
            assert ref.race.verdict.winner == "cy"
            assert wait_for(lambda: lit(fb, "cy"))
        assert not run.running
    finally:
        fb.close()
        src.close()
        f.close()
        f.reset()


def test_the_runner_thread_never_spins_on_a_deadline_in_the_past():
    """During a first-release race the referee keeps a held buzzer's stuck
    deadline although it does not check it: the runner must sleep anyway."""
    f = ClockedMockFactory()
    src = MockSource(PLAYERS, pin_factory=f)
    ref = Referee(PLAYERS, stuck_ns=1 * MS, hold_ns=10 * S)
    run = BuzzerRunner(src, ref, min_sleep_s=0.002)
    calls = []
    pump = run.pump
    run.pump = lambda now_ns=None: (calls.append(1), pump(now_ns))[1]
    try:
        src.press("ana")
        with run:
            run.start_race(RaceSpec(FIRST_RELEASE, PLAYERS, arm_ns=src.now_ns()))
            time.sleep(0.2)
        assert len(calls) < 150            # 0.2 s at >= 2 ms a sleep, not a busy loop
    finally:
        src.close()
        f.close()
        f.reset()


def test_device_pin_factory_is_left_alone(source):
    # everything here passes pin_factory explicitly: no global default is made
    assert Device.pin_factory is None or not isinstance(Device.pin_factory, ClockedMockFactory)


def test_a_wall_clock_edge_stamp_is_moved_onto_the_monotonic_clock():
    """Kernels before 5.7 stamp GPIO events with CLOCK_REALTIME."""
    import time as _time

    from companion.buzzers.mock import ClockedMockFactory

    factory = ClockedMockFactory(start_ns=None)
    src = GpioSource(["ana"], pin_factory=factory)
    try:
        offset = _time.time_ns() - _time.monotonic_ns()
        mono = _time.monotonic_ns()
        got = src._monotonic_ns((mono + offset) / 1e9)
        assert abs(got - mono) < 5_000_000          # within the float's precision and the call
        assert src._monotonic_ns(mono / 1e9) == round(mono / 1e9 * 1e9)
    finally:
        src.close()


def test_wait_until_wakes_at_the_deadline_not_before():
    import threading as _threading
    import time as _time

    from companion.buzzers.runner import wait_until

    wake = _threading.Event()
    late = []
    for _ in range(5):
        deadline = _time.monotonic_ns() + 3_000_000
        wait_until(deadline, _time.monotonic_ns, wake, 0.05)
        late.append(_time.monotonic_ns() - deadline)
    assert min(late) >= 0                       # never early: a verdict is never premature
    wake.set()                                  # a wake-up (an edge) cuts the wait short:
    waiter = _threading.Thread(target=wait_until,  # an hour's deadline, over at once
                               args=(_time.monotonic_ns() + 3600 * 10**9, _time.monotonic_ns,
                                     wake, 0.05))
    waiter.start()
    assert wait_for(lambda: not waiter.is_alive())
