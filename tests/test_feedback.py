"""Buzzer LEDs and the start cue, checked on mock pin states.

Issue #2: each buzzer's LED lights for a winner, blinks for a loser or a
false start; the cue counts down an announced start (short blips, then a long
GO exactly when presses start to count).
"""

from __future__ import annotations

import dataclasses
import logging

import pytest
from gpiozero import LED, PWMLED, Buzzer, TonalBuzzer

from companion.buzzers.feedback import (OFF, CueStep, Feedback, FeedbackSettings, LedCue,
                                        countdown_plan, fault_cue, verdict_cues)
from companion.buzzers.mock import ClockedMockFactory
from companion.buzzers.pinmap import parse_pinmap
from companion.races.edges import Edge
from tests.kit.helpers import toggles, wait_for
from companion.races.referee import FIRST_PRESS, FIRST_RELEASE, LAST_PRESS, MS, Fault, Referee, Verdict

S = 1_000 * MS
T0 = 100 * S
PLAYERS = ("ana", "bo", "cy")
FAST = FeedbackSettings(win_ns=2 * S, blink_on_s=0.01, blink_off_s=0.01, blink_n=3,
                        tie_on_s=0.01, tie_off_s=0.01, stuck_on_s=0.01, stuck_off_s=0.01)


@pytest.fixture
def factory():
    f = ClockedMockFactory(start_ns=T0)
    yield f
    f.close()
    f.reset()


@pytest.fixture
def fb(factory):
    feedback = Feedback.from_pinmap(PLAYERS, pin_factory=factory, settings=FAST,
                                    clock=lambda: factory.clock_ns)
    yield feedback
    feedback.close()


def state(dev) -> bool:
    return bool(dev.pin.state)


# ---------------------------------------------------------------------------
# Pure decisions


def test_the_winner_lights_solid_and_a_false_starter_blinks():
    cues = verdict_cues(Verdict(FIRST_PRESS, winner="ana", false_starts=["bo"],
                                ineligible=["cy"]), FAST)
    assert cues["ana"] == LedCue("on", on_ns=FAST.win_ns)
    assert cues["bo"].mode == "blink" and cues["bo"].n == FAST.blink_n
    assert cues["cy"].mode == "blink"          # a press by an ineligible player (Bad Chomp)


def test_the_loser_of_a_last_press_or_first_release_race_blinks():
    for kind in (LAST_PRESS, FIRST_RELEASE):
        cues = verdict_cues(Verdict(kind, loser="bo"), FAST)
        assert list(cues) == ["bo"] and cues["bo"].mode == "blink"


def test_a_tie_pulses_the_tied_players_and_lights_no_winner():
    cues = verdict_cues(Verdict(FIRST_PRESS, tied=["ana", "cy"]), FAST)
    assert set(cues) == {"ana", "cy"}
    assert all(c.mode == "blink" and c.n == FAST.tie_n for c in cues.values())


def test_players_a_verdict_does_not_concern_are_left_alone():
    assert verdict_cues(Verdict(FIRST_PRESS, winner="ana", order=[("ana", 1), ("bo", 2)])) \
        .keys() == {"ana"}


def test_a_stuck_buzzer_flickers_until_cleared():
    assert fault_cue(Fault("ana", "stuck", 0)).mode == "blink"
    assert fault_cue(Fault("ana", "stuck", 0)).n is None
    assert fault_cue(Fault("ana", "cleared", 0)) == OFF


def test_countdown_is_three_short_blips_then_a_long_go_at_the_arm_time():
    st = FeedbackSettings()
    plan = countdown_plan(T0, st)
    ons = [s for s in plan if s.on]
    assert [(s.t_ns, s.what, s.count) for s in ons] == [
        (T0 - 3 * S, "blip", 3), (T0 - 2 * S, "blip", 2), (T0 - S, "blip", 1), (T0, "go", 0)]
    offs = [s for s in plan if not s.on]
    assert [o.t_ns - i.t_ns for i, o in zip(ons, offs)] == [st.blip_ns] * 3 + [st.go_ns]
    assert st.go_ns > st.blip_ns
    assert plan == sorted(plan)


def test_a_countdown_with_no_blips_is_just_go():
    plan = countdown_plan(T0, FeedbackSettings(countdown_blips=0))
    assert plan == [CueStep(T0, True, "go", "A5", 0), CueStep(T0 + 800 * MS, False, "go", None, 0)]


# ---------------------------------------------------------------------------
# On mock pins


def test_devices_come_from_the_pin_map(fb):
    assert set(fb.leds) == set(PLAYERS)
    assert all(type(led) is LED for led in fb.leds.values())
    assert isinstance(fb.cue_led, LED) and isinstance(fb.piezo, Buzzer)
    assert not any(state(led) for led in fb.leds.values())


def test_winner_led_solid_for_its_time_then_off(factory, fb):
    fb.on_verdict(Verdict(FIRST_PRESS, winner="bo"))
    assert state(fb.leds["bo"]) and not state(fb.leds["ana"])
    assert fb.next_deadline() == T0 + FAST.win_ns
    fb.poll(T0 + FAST.win_ns - 1)
    assert state(fb.leds["bo"])
    fb.poll(T0 + FAST.win_ns)
    assert not state(fb.leds["bo"])


def test_a_new_cue_is_not_cut_short_by_an_old_timer(factory, fb):
    fb.on_verdict(Verdict(FIRST_PRESS, winner="bo"))
    factory.clock_ns = T0 + S
    fb.on_verdict(Verdict(FIRST_PRESS, winner="bo"))
    fb.poll(T0 + FAST.win_ns)             # the first timer: stale
    assert state(fb.leds["bo"])
    fb.poll(T0 + S + FAST.win_ns)
    assert not state(fb.leds["bo"])


def test_loser_led_blinks_in_the_background(factory):
    slow = dataclasses.replace(FAST, blink_on_s=0.25, blink_off_s=0.25)   # 1.5 s of blinks
    fb = Feedback.from_pinmap(PLAYERS, pin_factory=factory, settings=slow,
                              clock=lambda: factory.clock_ns)
    try:
        fb.on_verdict(Verdict(LAST_PRESS, loser="cy"))
        pin = fb.leds["cy"].pin
        assert toggles(pin) < 2 * FAST.blink_n       # returned while the LED still blinks
        assert wait_for(lambda: toggles(pin) >= 2 * FAST.blink_n)
        assert wait_for(lambda: not state(fb.leds["cy"]))      # and ends dark
        assert not state(fb.leds["ana"])
    finally:
        fb.close()


def test_referee_events_drive_the_leds(factory, fb):
    ref = Referee(PLAYERS, stuck_ns=S)
    fb.attach(ref)
    assert fb in ref.listeners
    ref.feed(Edge("ana", True, T0))
    ref.poll(T0 + S + 1)                   # ana stuck
    assert wait_for(lambda: toggles(fb.leds["ana"].pin) >= 4)
    ref.feed(Edge("ana", False, T0 + 2 * S))
    assert not state(fb.leds["ana"])
    fb.detach()
    assert fb not in ref.listeners


def test_countdown_drives_cue_led_and_piezo_at_the_planned_ticks(factory, fb):
    arm = T0 + 3 * S
    fb.on_verdict(Verdict(FIRST_PRESS, winner="ana"))
    plan = fb.countdown(arm)
    assert not state(fb.leds["ana"])               # a new race clears the LEDs
    for step in plan:
        factory.clock_ns = step.t_ns
        fb.poll(step.t_ns)
        assert state(fb.cue_led) is step.on
        assert state(fb.piezo) is step.on
    # the pin's own record, stamped on the mock ticks: blips of 100 ms one
    # second apart, then GO for 800 ms starting exactly at the arm time
    states = fb.cue_led.pin.states
    gaps = [round(s.timestamp * 1e3) for s in states[2:]]
    assert [bool(s.state) for s in states[1:]] == [True, False] * 4
    assert gaps == [100, 900, 100, 900, 100, 900, 800]
    assert round(fb.cue_led.pin._last_change * 1e9) == arm + FAST.go_ns


def test_a_new_countdown_replaces_the_running_one(factory, fb):
    fb.countdown(T0 + 3 * S)
    fb.poll(T0)
    assert state(fb.cue_led)
    fb.countdown(T0 + 10 * S)
    fb.poll(T0 + 3 * S)                 # the old GO: ignored
    assert not state(fb.cue_led)
    fb.poll(T0 + 10 * S)
    assert state(fb.cue_led)


def test_tonal_piezo_plays_the_blip_and_go_tones(factory):
    pm = parse_pinmap("""
        [[player]]
        button = 17
        led = 27
        [cue]
        piezo = 18
        piezo_kind = "tonal"
    """)
    fb = Feedback.from_pinmap(["ana"], pm, pin_factory=factory, clock=lambda: factory.clock_ns)
    try:
        assert isinstance(fb.piezo, TonalBuzzer) and fb.cue_led is None
        fb.countdown(T0 + 3 * S)
        fb.poll(T0)
        assert fb.piezo.tone.frequency == pytest.approx(440.0)
        fb.poll(T0 + 3 * S)
        assert fb.piezo.tone.frequency == pytest.approx(880.0)
        fb.poll(T0 + 4 * S)
        assert fb.piezo.tone is None
    finally:
        fb.close()


def test_pwm_leds_when_the_pin_map_asks(factory):
    pm = parse_pinmap('led_kind = "pwm"\n[[player]]\nbutton = 17\nled = 27\n')
    fb = Feedback.from_pinmap(["ana"], pm, pin_factory=factory, clock=lambda: factory.clock_ns)
    try:
        assert isinstance(fb.leds["ana"], PWMLED)
        fb.on_verdict(Verdict(FIRST_PRESS, winner="ana"))
        assert fb.leds["ana"].value == 1
        fb.on_verdict(Verdict(FIRST_PRESS, loser=None, false_starts=["ana"]))
        assert wait_for(lambda: toggles(fb.leds["ana"].pin) >= 2)
    finally:
        fb.close()


def test_a_broken_led_never_reaches_the_referee(fb, caplog):
    fb.leds["ana"].close()
    with caplog.at_level(logging.ERROR, logger="companion.buzzers.feedback"):
        fb("verdict", Verdict(FIRST_PRESS, winner="ana"))     # must not raise
    assert "feedback failed" in caplog.text


def test_close_releases_the_pins(factory):
    fb = Feedback.from_pinmap(PLAYERS, pin_factory=factory)
    fb.close()
    LED(27, pin_factory=factory).close()        # the pin is free again


def test_a_countdown_shorter_than_the_blips_plays_only_the_blips_still_ahead():
    st = FeedbackSettings()
    plan = countdown_plan(10 * st.blip_interval_ns, st, now_ns=10 * st.blip_interval_ns
                          - st.blip_interval_ns - 1)
    blips = [s for s in plan if s.what == "blip" and s.on]
    assert [s.count for s in blips] == [1]
    assert plan[-2].what == "go" and plan[-2].t_ns == 10 * st.blip_interval_ns
