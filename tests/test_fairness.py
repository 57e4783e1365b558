"""The Pico box's fairness certificate in the PIO emulator (hardware/fairness.py):
the firmware's own driver and capture programs, the driver's pin trace fed
to the capture program at random phases."""

from __future__ import annotations

import pytest

import random

from hardware import fairness as F


def test_the_driver_pulls_the_pins_low_exactly_the_separation_apart_and_lets_go():
    for ns in (300, 1_000, 1_000_000):
        a, b, end = F.driver_trace(ns // F.CYCLE_NS)
        assert b - a == ns // F.CYCLE_NS and end > b


@pytest.mark.parametrize("first, second", [(0, 1), (1, 0), (5, 0), (2, 4), (4, 3)])
def test_the_driver_pulls_any_buzzer_first_and_any_other_second_and_no_third(first, second):
    """driver_trace raises if any pin but the two is ever driven (issue 32:
    the driver could pull only buzzer 1 then 2)."""
    a, b, end = F.driver_trace(1_000 // F.CYCLE_NS, first, second)
    assert b - a == 1_000 // F.CYCLE_NS and end > b


@pytest.mark.slow
def test_1000_trials_at_1_us_are_all_ordered_and_half_a_tick_is_a_coin_toss():
    rows = [F.certify_separation(500, 300, random.Random(1)),
            F.certify_separation(1_000, 1000, random.Random(2))]
    half, one = rows
    assert one.trials == 1000 and one.ordered == 1 and one.min_us == one.max_us == 1.0
    assert 0.3 < half.ordered < 0.7 and half.min_us == 0     # the rest tie: same stamp
    assert F.fair_separation_us(rows) == 1.0
    text = F.table(rows)
    assert "ordered right every time from 1 us" in text and "100.0%" in text


def test_a_certificate_is_kept_with_its_date_and_shown_again(tmp_path):
    rows = [F.Row(1_000, 10, 1.0, 1.0, 1.0, 0.0, 1.0), F.Row(500, 10, 0.0, 0.5, 1.0, 0.5, 0.5)]
    path = F.save(rows, "/dev/buzzerbox, firmware 1.0.0", tmp_path / "cert.json")
    text = F.last(path)
    assert text.startswith("certificate of 20") and "/dev/buzzerbox" in text
    assert "ordered right every time from 1 us" in text
    assert F.last(tmp_path / "none.json") is None
