"""The clock model (companion/pico/clocksync.py): the box's ticks on the Pi's
monotonic clock, from NTP-style exchanges over a jittery USB link, with an
error bound that holds, and stamps whose order is the ticks' order."""

from __future__ import annotations

import random

import pytest

from companion.pico.clocksync import ClockSync, SlewedClock

HZ = 1_000_000
S = 1_000_000_000


class Box:
    """A box whose crystal runs ``ppm`` fast, started at Pi time ``t0``."""

    def __init__(self, ppm: float, t0: int = 7 * S, tick0: int = 123_456):
        self.ppm, self.t0, self.tick0 = ppm, t0, tick0

    def tick(self, t_ns: int) -> int:
        return self.tick0 + int((t_ns - self.t0) * (1 + self.ppm * 1e-6) * HZ // S)

    def true_ns(self, tick: int) -> float:
        return self.t0 + (tick - self.tick0) * S / HZ / (1 + self.ppm * 1e-6)


def usb_leg(rng: random.Random) -> int:
    """One direction of a full-speed USB exchange: 0.25-2 ms, jittery, a tail."""
    return int(250_000 + rng.random() * 1_000_000 + rng.expovariate(1 / 200_000))


def exchange(box: Box, t: int, rng: random.Random) -> tuple[int, int, int]:
    up, down = usb_leg(rng), usb_leg(rng)
    return t, box.tick(t + up), t + up + down


def test_one_exchange_puts_the_tick_at_the_midpoint_with_half_the_round_trip_as_bound():
    c = ClockSync(HZ)
    assert not c.synced and c.error_bound_ns() is None
    assert c.add_exchange(10 * S, 5_000, 10 * S + 2_000_000)
    assert c.to_ns(5_000) == 10 * S + 1_000_000
    assert c.error_bound_ns(5_000) == 1_000_000
    assert c.to_ns(6_000) - c.to_ns(5_000) == 1_000_000       # nominal 1 us a tick
    assert c.to_tick(c.to_ns(7_000)) == 7_000


@pytest.mark.parametrize("ppm", [-100, 0, 100])
def test_drift_of_100_ppm_is_fitted_and_the_error_stays_inside_the_bound(ppm):
    rng = random.Random(ppm)
    box = Box(ppm)
    c = ClockSync(HZ)
    t = box.t0 + S
    settled = []
    for i in range(960):                  # two minutes of exchanges, 8 a second
        c.add_exchange(*exchange(box, t, rng))
        t += S // 8
        probe = box.tick(t - S // 16)     # an edge between two exchanges
        err = abs(c.to_ns(probe) - box.true_ns(probe))
        assert err <= c.error_bound_ns(probe) + 1
        if i >= 160:                      # after the first twenty seconds
            settled.append(err)
    assert abs(c.ppm - ppm) < 10
    settled.sort()
    assert settled[len(settled) * 99 // 100] < 100_000
    probe = box.tick(t)
    assert abs(c.to_ns(probe) - box.true_ns(probe)) < 100_000


def test_slow_round_trips_do_not_pull_the_estimate():
    box = Box(0)
    c = ClockSync(HZ)
    t = box.t0
    for i in range(20):
        c.add_exchange(t, box.tick(t + 300_000), t + 600_000)     # quick, symmetric
        t += S // 4
    before = c.to_ns(box.tick(t))
    for i in range(20):       # slow and lopsided: the reply sat 9 ms in a queue
        c.add_exchange(t, box.tick(t + 500_000), t + 9_500_000)
        t += S // 4
    assert abs(c.to_ns(box.tick(t)) - box.true_ns(box.tick(t))) < 20_000
    assert abs(before - box.true_ns(box.tick(t - 5 * S))) < 5 * S


@pytest.mark.parametrize("sent, received, why", [
    (10 * S, 10 * S - 1, "received before sent"),
    (10 * S, 10 * S + 60_000_000, "slower than max_rtt"),
])
def test_impossible_exchanges_are_rejected(sent, received, why):
    c = ClockSync(HZ)
    assert not c.add_exchange(sent, 1_000, received), why
    assert c.rejected == 1 and not c.synced


def test_an_old_reply_arriving_late_is_not_used():
    c = ClockSync(HZ)
    assert c.add_exchange(S, 2_000_000, S + 500_000)
    assert not c.add_exchange(S, 1_999_000, S + 500_000)


def test_32_bit_ticks_extend_across_the_wrap_both_ways():
    c = ClockSync(HZ)
    assert c.extend(5) == 5                       # nothing known yet
    c.note_tick((3 << 32) + 0xFFFF_FF00)
    assert c.extend(0x10) == (4 << 32) + 0x10              # just after the wrap
    assert c.extend(0xFFFF_FE00) == (3 << 32) + 0xFFFF_FE00  # just before
    c.note_tick((4 << 32) + 0x20)
    assert c.extend(0xFFFF_FFF0) == (3 << 32) + 0xFFFF_FFF0  # a late record from before


def test_reset_forgets_a_restarted_box():
    c = ClockSync(HZ)
    c.add_exchange(S, 10_000_000, S + 500_000)
    c.reset()
    assert not c.synced
    assert c.add_exchange(2 * S, 1_000, 2 * S + 500_000)


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_a_bad_counter_rate_is_refused(bad):
    with pytest.raises(ValueError, match="tick_hz"):
        ClockSync(bad)


# ---------------------------------------------------------------------------
# The stamps edges get


def test_corrections_never_reorder_two_ticks_of_one_box():
    rng = random.Random(5)
    box = Box(100)
    c = ClockSync(HZ)
    m = SlewedClock(c)
    t = box.t0
    stamps = {}
    for i in range(200):
        sent, tick, received = exchange(box, t, rng)
        c.add_exchange(sent, tick, received)
        m.update(tick)
        for k in range(-3, 4):          # edges around the correction, 1 tick apart
            stamps[tick + k] = m.to_ns(tick + k)
        t += S // 4
    ticks = sorted(stamps)
    # stamps taken at different times, by different segments, still in tick order
    assert all(m.to_ns(a) < m.to_ns(b) for a, b in zip(ticks, ticks[1:]))
    assert all(stamps[a] < stamps[b] for a, b in zip(ticks, ticks[1:]) if b - a >= 1
               and abs(a - b) < 10)
    assert m.steps == 0


def test_equal_ticks_get_equal_stamps_through_every_correction():
    # two presses in one sample, stamped in two frames with clock
    # corrections between them (the fit moves, the map slews): one stamp,
    # for as long as the map keeps its segments (16 corrections, 2 s)
    box, rng = Box(90), random.Random(5)
    c = ClockSync(HZ)
    m = SlewedClock(c)
    t = box.t0
    stamps: dict[int, int] = {}
    for i in range(200):
        t += S // 8
        sent, tick, got = exchange(box, t, rng)
        if i % 7 == 3:
            got += 3_000_000                       # a slow reply: the fit moves
        c.add_exchange(sent, tick, got)
        m.update(tick)
        if c.synced:
            press = box.tick(t + S // 16)
            for earlier, stamp in stamps.items():   # stamped again after corrections
                if earlier >= m.segments[0][0]:
                    assert m.to_ns(earlier) == stamp, (i, earlier)
            stamps[press] = m.to_ns(press)
    assert len(stamps) > 150 and len(m.segments) == 16 and m.steps == 0


def test_the_slewed_map_converges_on_the_fit_and_reports_its_lag():
    box = Box(0)
    c = ClockSync(HZ)
    m = SlewedClock(c)
    t = box.t0
    c.add_exchange(t, box.tick(t + 1_900_000), t + 2_000_000)   # lopsided: 0.9 ms off
    m.update(box.tick(t + 2_000_000))
    for i in range(1, 40):
        t += S // 4
        c.add_exchange(t, box.tick(t + 100_000), t + 200_000)
        m.update(box.tick(t + 200_000))
    probe = box.tick(t)
    assert abs(m.to_ns(probe) - box.true_ns(probe)) < 10_000
    assert m.error_bound_ns(probe) >= abs(m.to_ns(probe) - box.true_ns(probe))


def test_a_large_offset_is_stepped_not_slewed():
    c = ClockSync(HZ)
    m = SlewedClock(c)
    c.add_exchange(S, 1_000_000, S + 200_000)
    m.update(1_000_000)
    c.reset()
    c.add_exchange(50 * S, 2_000_000, 50 * S + 200_000)     # a restarted box
    m.update(2_000_000)
    assert m.steps == 1 and abs(m.to_ns(2_000_000) - (50 * S + 100_000)) <= 1


# ---------------------------------------------------------------------------
# The floor of the bench's simulation (issue 21: pico_sync_error_us_p99, goal 20)


def test_the_bench_simulation_keeps_20_us_out_of_reach_even_for_an_oracle():
    """Why ``pico_sync_error_us_p99`` stays above 20 us in the bench's own
    simulation (bench/bench_pico.py: each leg 0.25-1.25 ms uniform plus a
    capped 0.2 ms exponential tail, 8 exchanges a second, +-100 ppm, p99
    from 20 s to 120 s): an oracle told each box's true rate, which puts a
    tick midway between the tightest bounds of every exchange so far (the
    latest ``sent`` plus the quickest up leg, the earliest ``received``
    minus the quickest down leg, taken from different exchanges, which no
    regression on midpoints does), still misses 20 us at p99. A round trip
    within 0.1 ms of the quickest comes once in 12,000 exchanges (25 min), so
    "the quickest round trips" are too rare to fit, and midpoints weighted
    ideally by their round trip scatter by 208 us: 2 x 208 / sqrt(160) = 33 us
    at the newest exchange after 20 s. If the simulation changes so that
    this fails, the goal may be reachable: revisit ClockSync."""
    from tests.kit.pico import usb_leg as _leg

    BHZ, BS = 1_000_000, 1_000_000_000       # bench/bench_pico.py's box: a 1 MHz tick

    errs = []
    for seed in (1, 2, 3):
        for ppm in (100, -100):
            rng = random.Random(seed * 1000 + ppm)
            t0, tick0, speed = 5 * BS, 777, 1 + ppm * 1e-6
            ns_per_tick = BS / BHZ / speed                     # the oracle's knowledge
            lo = hi = None
            t = t0
            for i in range(120 * 8):
                up, down = _leg(rng), _leg(rng)
                k = tick0 + int((t + up - t0) * speed * BHZ // BS)
                base_lo, base_hi = t - k * ns_per_tick, t + up + down - k * ns_per_tick
                lo = base_lo if lo is None else max(lo, base_lo)
                hi = base_hi if hi is None else min(hi, base_hi)
                if i >= 20 * 8:
                    edge = tick0 + int((t + int(rng.random() * BS // 8) - t0) * speed * BHZ // BS)
                    truth = t0 + (edge - tick0) * ns_per_tick
                    errs.append(abs((lo + hi) / 2 + edge * ns_per_tick - truth))
                t += BS // 8
    errs.sort()
    p99_us = errs[len(errs) * 99 // 100] / 1000
    assert p99_us > 20, p99_us          # 29.3 today
