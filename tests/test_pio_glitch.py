"""No glitch is a press (issue 32, 3): the firmware's capture program in the
PIO emulator (rp2040-pio-emulator) on a pin trace, its words through the
firmware's own core (hardware/glitch.py). A buzzer low for 0.1 to 500 us is
no press, a release that short while held is nothing, and a real press is
reported once held the minimum, stamped at its leading edge as before."""

from __future__ import annotations

import random

import pytest

from hardware import glitch as G

pytest.importorskip("pioemu")


def test_no_glitch_of_0_1_to_500_us_from_idle_is_a_press():
    """Before the minimum hold, every glitch the capture sampled (all but
    some of the shortest) was a press and a release."""
    reported, n = G.glitch_presses(240, seed=3)
    assert (reported, n) == (0, 240)


def test_glitches_of_the_edge_widths_are_sampled_yet_none_is_a_press():
    """The widths at the ends: 0.1 us (sampled only when it spans a
    sample), 1 us, 499 and 500 us (always sampled): the capture saw them,
    the core dropped them."""
    core = G.Core()
    segs = []
    for k, w in enumerate([0.1] * 30 + [1.0, 10.0, 100.0, 499.0, 500.0] * 6):
        at = 3_000 + (k * 37) % 1_000
        segs.append(((k + 1) * G.SPACING_TICKS, [(at, k % 6, 0), (at + round(w * 1000), k % 6, 1)],
                     6 + int(w) + 1))
    words = G._run(core, segs)
    sampled_low = sum(1 for _, smp in words if smp & 0x3F != 0x3F)
    assert sampled_low >= 30                    # the long ones and a few of the 0.1 us
    assert core.records == []


def test_a_release_glitch_while_held_is_no_release_and_no_new_press():
    reported, n = G.glitch_presses(120, seed=4, held=True)
    assert (reported, n) == (0, 120)


def test_a_real_bouncing_press_is_stamped_at_its_leading_edge_once_held():
    core, early, truth = G.pressed([(0, 100_000, 40_000), (3, 300_000, 50_000),
                                    (5, 500_000, 25_000)], random.Random(5))
    assert early == []                          # nothing before the minimum hold is over
    for bit, down, up in truth:
        assert core.edges(bit) == [(down, True), (up, False)]   # one press, one release, as stamped


def test_the_minimum_hold_is_a_setting_from_1_to_5_ms():
    assert G.Core(3_000).box.min_hold == 3_000
    assert G.Core(200).box.min_hold == 1_000 and G.Core(60_000).box.min_hold == 5_000
    # a press held 3.5 ms: a press with a 3 ms hold, a glitch with 5 ms
    for hold, want in ((3_000, 1), (5_000, 0)):
        core = G.Core(hold)
        G._run(core, [(10_000, [(3_000, 2, 0), (3_503_000, 2, 1)], 3_600)])
        core.feed(30_000, [], 30_000)
        assert len([e for e in core.edges(2) if e[1]]) == want
