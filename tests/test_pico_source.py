"""The ``pico`` source's side of the first-night findings: the port named in
COMPANION_PICO_PORT, a frame of another version, a refused box, the stale
bytes a port gives when it opens, and commands that never carry mpremote's
interrupt. (Detection by USB ids: tests/test_pico_link.py.)"""

from __future__ import annotations

import os
import threading
import time
import tty

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.buzzers.base import CallbackSink
from companion.buzzers.pico import PicoSource
from companion.pico import protocol as P
from companion.pico import transport

BUZZERS = ["1", "2"]


def _hello(boot_id: int = 1, firmware=(1, 0, 0)) -> P.Hello:
    inputs = tuple(P.Input(i, P.ROLE_BUZZER, i + 1, i + 2) for i in range(6))
    leds = tuple((i + 1, 12 + i) for i in range(6))
    return P.Hello(0, 1, firmware, 1_000_000, boot_id, 0, 0, 20_000, 0, inputs, leds, None)


def _source():
    src = PicoSource.offline(BUZZERS, _hello())
    sink = CallbackSink(lambda e: None)
    src.start(sink)
    return src, sink


def _press(seq: int, tick: int) -> bytes:
    return P.encode(P.Edges(seq, ((tick, 0b1, 0b1),)))


def test_a_port_named_in_the_environment_is_used_when_no_pico_is_found(monkeypatch):
    master, slave = os.openpty()
    tty.setraw(slave)
    stop = threading.Event()

    def box():                       # says hello a few times a second
        while not stop.is_set():
            os.write(master, P.encode(_hello()))
            time.sleep(0.1)

    t = threading.Thread(target=box, daemon=True)
    t.start()
    monkeypatch.setattr(transport.serial.tools.list_ports, "comports", lambda: [])
    monkeypatch.setattr(transport, "STABLE_NAME", "/nonexistent/buzzerbox")
    monkeypatch.setenv(transport.ENV_PORT, os.ttyname(slave))
    try:
        assert PicoSource.detect()
        src = PicoSource(BUZZERS, connect_timeout_s=3)
        try:
            assert src.hello is not None and src.link.path == os.ttyname(slave)
        finally:
            src.close()
    finally:
        stop.set()
        t.join(1)
        os.close(master)
        os.close(slave)


def test_one_frame_of_another_version_is_damage_not_a_refusal():
    src, sink = _source()
    src.feed(P.encode(P.Heartbeat(1, 0, 0, 0, 0, 0), version=2), 0)
    assert not src.refused and src.status().connected
    src.feed(_press(2, 100), 0)
    assert src.counters["early"] == 1                  # the box's presses still count
    assert [f.kind for f in sink.faults] == ["corrupt"]


def test_a_refused_box_delivers_nothing_and_is_accepted_again_after_an_update():
    src, sink = _source()
    src._state(True, "port")
    src.feed(b"\x00" + P.encode(_hello(firmware=(2, 0, 0))), 0)
    assert src.refused and not src.status().connected
    src.feed(_press(1, 100), 0)
    assert src.counters["early"] == 0 and not src.held   # nothing reaches the table
    src._state(False, "unplugged")
    src._state(True, "port")                             # the box comes back updated
    assert not src.refused
    src.feed(b"\x00" + P.encode(_hello(boot_id=9)), 0)
    src.feed(_press(2, 200), 0)
    assert src.hello is not None and src.counters["early"] == 1
    assert [f.kind for f in sink.faults].count("incompatible") == 1


def test_the_stale_bytes_of_a_port_just_opened_are_no_fault_and_no_press():
    src, sink = _source()
    src._state(False, "unplugged")
    src._state(True, "port")
    stale = (P.encode(P.Heartbeat(5, 0, 0, 0, 0, 0))[7:] + _press(6, 100)
             + P.encode(P.Heartbeat(7, 0, 0, 0, 0, 0)))
    src.feed(stale[-256:], 0)
    assert not [f for f in sink.faults if f.kind == "corrupt"]
    assert src.counters["early"] == 0                     # the old press is not replayed
    src.feed(P.encode(_hello()), 0)
    assert src.hello is not None


_seqs = st.integers(0, 0xFFFF).map(lambda s: P.next_command_seq(s - 1))
_commands = st.one_of(
    st.builds(P.SyncRequest, _seqs, st.integers(0, 0xFFFF_FFFF)),
    st.builds(P.SetCue, _seqs, st.integers(0, 1), st.integers(0, 2**32)),
    st.builds(P.Config, _seqs, st.integers(0, 1), st.integers(0, 10**6),
              st.integers(0, 2**24)),
    st.builds(P.Pulse, _seqs, st.integers(10, 10**6),
              st.integers(10, 10**7), st.integers(0, 255)),
    st.builds(P.SetLeds, _seqs, st.just(0x0D), st.just(0x01)),
)


@settings(max_examples=3000, deadline=None)
@given(_commands)
def test_no_command_to_the_box_holds_mpremotes_interrupt(msg):
    seq = [msg.seq]

    def next_seq():
        seq[0] = P.next_command_seq(seq[0])
        return seq[0]

    sent, wire = P.encode_command(msg, next_seq)
    assert P.INTERRUPT not in wire and wire[0] == 0
    assert P.Decoder().feed(wire) == [sent]
    assert type(sent) is type(msg)


def test_a_command_whose_payload_holds_cr_ctrl_c_is_nudged_by_a_tick():
    msg = P.SetCue(1, 1, 0x030D)                          # its tick is 0d 03 ...
    assert P.INTERRUPT in P.encode(msg)
    sent, wire = P.encode_command(msg, iter(range(2, 99)).__next__)
    assert P.INTERRUPT not in wire and 0 <= sent.at_tick - msg.at_tick <= 256
    far = P.SetCue(1, 1, 0x030D_1234)                     # 0d 03 in its middle bytes
    sent, wire = P.encode_command(far, iter(range(2, 99)).__next__)
    assert P.INTERRUPT not in wire and 0 < sent.at_tick - far.at_tick <= 0x10000   # 65 ms
