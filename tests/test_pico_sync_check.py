"""Clock sync kept as a check (issue 32, item 6): the four-timestamp exchange.

A box of firmware 1.2 on is asked with SYNC_HELD_REQUEST and answers with
the tick it read the request at (t2) and how long it held the reply (t3 -
t2); the Pi takes the hold out of the round trip (t1, t2, t4 - hold), so a
reply that waits in the box's loop and USB queue no longer shifts the clock
by half its wait. An older box is asked the old way. Driven through the
real source on a recorded stream with exact times (no port)."""

from __future__ import annotations

import random
import statistics

import pytest

from companion.buzzers.base import CallbackSink
from companion.buzzers.pico import PicoSource
from companion.pico import protocol as P
from tests.kit.pico import Wire, usb_leg

BASE_NS = 7_000_000_000          # the Pi's time at the box's tick 0
T0 = 10_000_000_000


def hello(firmware) -> P.Hello:
    inputs = tuple(P.Input(i, P.ROLE_BUZZER, i + 1, i + 2) for i in range(6))
    return P.Hello(0, 1, firmware, 1_000_000, 1, 0, 0, 20_000, 0, inputs, (), None)


class Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        return self.t


def source(firmware):
    clock = Clock()
    src = PicoSource.offline(["1", "2"], hello(firmware), clock=clock)
    src.link = Wire(clock)
    src.start(CallbackSink(lambda e: None))
    return src, clock


def requests(src):
    """The sync requests the source sent the box."""
    return [m for _, m in src.link.of((P.SyncRequest, P.SyncHeldRequest))]


def true_ns(tick: int) -> int:
    return BASE_NS + tick * 1_000


def exchange(src, clock, rng, seq, hold_ns, wait_ns=0):
    """One sync exchange: the request's way out, the box's read (after
    ``wait_ns`` in its loop), the hold, the way back."""
    src._send_sync()
    req = requests(src)[-1]
    t1 = clock.t
    t2_ns = t1 + usb_leg(rng) + wait_ns
    tick = (t2_ns - BASE_NS) // 1_000
    t4 = t2_ns + hold_ns + usb_leg(rng)
    if isinstance(req, P.SyncHeldRequest):
        reply = P.SyncHeld(seq, req.token, tick, hold_ns // 1_000)
    else:
        reply = P.SyncReply(seq, req.token, tick)
    src.feed(P.encode(reply), t4)
    clock.t = t4 + 125_000_000
    return tick


def offset_errors(firmware, seed=5, n=160):
    """The fitted map's error at each exchange's tick, after the first 40,
    with the box holding every reply 0.3-1 ms (its loop, the mark's trip
    through the PIO, the USB queue)."""
    src, clock = source(firmware)
    rng = random.Random(seed)
    errs = []
    for k in range(n):
        hold = 300_000 + int(rng.random() * 700_000)
        tick = exchange(src, clock, rng, k + 1, hold)
        if k >= 40:
            errs.append(src.sync.to_ns(tick) - true_ns(tick))
    return errs, src


def test_a_box_of_firmware_1_2_is_asked_for_held_replies_an_older_one_the_old_way():
    new, _ = source((1, 2, 0))
    old, _ = source((1, 0, 0))
    new._send_sync()
    old._send_sync()
    assert [type(m) for m in requests(new)] == [P.SyncHeldRequest]
    assert [type(m) for m in requests(old)] == [P.SyncRequest]


def test_the_hold_is_taken_out_of_the_round_trip():
    held, src = offset_errors((1, 2, 0))
    plain, _ = offset_errors((1, 0, 0))          # the same box, asked the old way
    assert src.sync.exchanges == 160
    # the old reply's midpoint sits half the hold late: ~+330 us, always
    assert statistics.median(plain) > 250_000
    assert abs(statistics.median(held)) < 50_000
    assert max(abs(e) for e in held) < 150_000


def test_a_reply_held_longer_than_its_round_trip_is_not_believed():
    src, clock = source((1, 2, 0))
    src._send_sync()
    req = requests(src)[-1]
    t1 = clock.t
    src.feed(P.encode(P.SyncHeld(1, req.token, 5_000, 3_000)), t1 + 2_000_000)   # 3 ms > 2 ms
    assert src.sync.exchanges == 0 and src.counters["sync_refused"] == 1
    assert not src.sync.synced


@pytest.mark.parametrize("token", [0x0D03, 0x030D0000, 0x0D0D0D0D])
def test_no_held_request_carries_mpremotes_interrupt(token):
    msg, wire = P.encode_command(P.SyncHeldRequest(1, token), lambda: 2)
    assert P.INTERRUPT not in wire
    assert P.Decoder().feed(wire[1:]) == [msg]
