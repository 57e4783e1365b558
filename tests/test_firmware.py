"""The box's firmware logic, run under the real MicroPython unix port.

Each test runs a short script in ``micropython`` with the firmware and the
stand-ins for ``machine`` and ``rp2`` (firmware/sim/) on its path, on a
simulated board whose clock the script sets. What the box sends is decoded
here with the Pi's own codec, so every test also checks that the two ends
agree on the wire."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from companion.pico import protocol as P
from companion.races.edges import Edge
from companion.races.referee import debounce

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
VECTORS = ROOT / "tests" / "vectors" / "pico_frames.json"
MICROPYTHON = Path(os.sys.executable).with_name("micropython")

pytestmark = pytest.mark.skipif(not MICROPYTHON.exists(), reason="no MicroPython unix port")

PRELUDE = """
import sys, json
from simboard import board
import usbcdc
board.fixed_now = 998_000              # the pull-ups settle 2 ms; sampling starts at 1 s
import boxhw, boxcore, boxconfig as C, boxproto as P
cdc = usbcdc.Cdc()
def _sleep_ms(ms):
    board.fixed_now += 1000 * ms
def new_hw(**kw):
    h = boxhw.Hardware(usb=boxhw.Usb(*usbcdc.ports(cdc)), sleep_ms=_sleep_ms, **kw)
    h.ticks_us = lambda: board.now_us() & 0x3FFFFFFF      # the board's clock
    return h
hw = new_hw()
sent = []
box = boxcore.Box(hw, C, 7)
def at(us):
    board.fixed_now = us
    box.poll()
    sent.append(cdc.host_take())
def run_to(us, step=1000):
    t = board.fixed_now
    while t < us:
        t = min(t + step, us)
        at(t)
GPIO = {n: g for role, n, g in C.INPUTS if role == 1}
def press(n, us): board.schedule(us, GPIO[n], 0)
def release(n, us): board.schedule(us, GPIO[n], 1)
fr = P.Framer()
def command(ftype, payload):
    cdc.host_send(fr.frame(ftype, payload))
def done(**extra):
    sent.append(cdc.host_take())
    out = {"wire": b"".join(sent).hex(), "blocked_us": cdc.blocked_us,
           "short_writes": cdc.short_writes}
    out.update(extra)
    print(json.dumps(out))
"""


def run_mp(body: str, timeout: float = 60, prelude: bool = True) -> dict:
    script = (PRELUDE if prelude else "") + textwrap.dedent(body)
    env = dict(os.environ, MICROPYPATH=f"{FIRMWARE / 'sim'}:{FIRMWARE}")
    r = subprocess.run([str(MICROPYTHON), "-X", "heapsize=16M", "-c", script], capture_output=True, text=True,
                       env=env, timeout=timeout, cwd=FIRMWARE)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    if r.stderr:
        print(r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def frames(out: dict) -> list:
    got = P.Decoder().feed(bytes.fromhex(out["wire"]))
    assert not [f for f in got if isinstance(f, P.LinkFault)], got
    return got


def records(msgs) -> list[tuple[int, int, int]]:
    return [r for m in msgs if isinstance(m, P.Edges) for r in m.records]


# ---------------------------------------------------------------------------
# The wire: the same known answers as the Pi's codec


def test_the_firmware_codec_gives_the_known_answer_frames():
    out = run_mp(f"""
        vec = json.load(open({str(VECTORS)!r}))
        res = {{"crc": [P.crc16(bytes.fromhex(v["data"])) for v in vec["crc16_ccitt_false"]],
               "cobs": [P.cobs_encode(bytes.fromhex(v["raw"])).hex() for v in vec["cobs"]],
               "uncobs": [P.cobs_decode(bytes.fromhex(v["enc"])).hex() for v in vec["cobs"]],
               "frames": [], "commands": [], "bad": []}}
        for v in vec["frames"]:
            f = v["fields"]; t = v["type"]
            g = P.Framer(); g.seq = f["seq"]
            if t == "hello":
                w = g.hello(f["firmware"], f["tick_hz"], f["boot_id"], f["tick"], f["flags"],
                            f["debounce_us"], f["stuck_ms"], [i[1:] for i in f["inputs"]],
                            f["leds"], f["piezo"])
            elif t == "edges": w = g.edges(f["records"])
            elif t == "heartbeat": w = g.heartbeat(f["tick"], f["levels"], f["overflows"], f["tx_dropped"], f["rx_corrupt"])
            elif t == "fault": w = g.fault(f["code"], f["input"], f["tick_lo"], f["count"])
            elif t == "sync-reply": w = g.sync_reply(f["token"], f["tick"])
            elif t == "sync-held": w = g.sync_held(g.reserve(), f["token"], f["tick"], f["held_us"])
            elif t == "ack": w = g.ack(f["acked_seq"], f["acked_type"], f["status"], f["tick"])
            elif t == "trial": w = g.trial(f["trial"], f["first"], f["second"], f["separation_ns"], f["tick"])
            else:
                u = P.Unframer()
                cmds = u.feed(bytes.fromhex(v["wire"]))
                res["commands"].append([v["name"], [[c[0], c[1], c[2].hex()] for c in cmds], u.corrupt])
                continue
            res["frames"].append([v["name"], w.hex()])
        for v in vec["bad"]:
            u = P.Unframer()
            res["bad"].append([v["name"], len(u.feed(bytes.fromhex(v["wire"]) + b"\\x00")), u.corrupt])
        print(json.dumps(res))
    """)
    vec = json.loads(VECTORS.read_text())
    assert out["crc"] == [v["crc"] for v in vec["crc16_ccitt_false"]]
    assert out["cobs"] == [v["enc"] for v in vec["cobs"]]
    assert out["uncobs"] == [v["raw"] for v in vec["cobs"]]
    wires = {v["name"]: v["wire"] for v in vec["frames"]}
    assert len(out["frames"]) == 12
    for name, wire in out["frames"]:
        assert wire == wires[name], name
    assert len(out["commands"]) == 9
    for name, cmds, corrupt in out["commands"]:
        expect = P.Decoder().feed(bytes.fromhex(wires[name]))[0]
        body = P.frame_body(expect)
        assert cmds == [[body[1], expect.seq, body[4:-2].hex()]] and corrupt == 0, name
    for name, n, corrupt in out["bad"]:
        assert (n, corrupt) == (0, 1), name


# ---------------------------------------------------------------------------
# Edges


def test_the_box_says_hello_first_after_a_lone_delimiter():
    out = run_mp("""
        box.start(); at(1_001_000)
        done()
    """)
    wire = bytes.fromhex(out["wire"])
    assert wire[0] == 0
    hello = frames(out)[0]
    assert isinstance(hello, P.Hello) and hello.tick_hz == 1_000_000
    assert [(i.role, i.number) for i in hello.inputs][:6] == [(1, n) for n in range(1, 7)]
    assert hello.protocol == P.PROTOCOL_VERSION and hello.boot_id == 7


def test_buzzers_changing_in_one_sample_share_one_record_and_one_tick():
    out = run_mp("""
        press(1, 1_500_000); press(3, 1_500_000); press(2, 1_500_001)
        run_to(1_600_000)
        done()
    """)
    recs = records(frames(out))
    assert recs[0] == (500_000, 0b101, 0b101)          # one sample, one stamp
    assert recs[1] == (500_001, 0b010, 0b111)          # a microsecond later: its own
    assert len(recs) == 2


def test_the_counter_is_extended_past_its_22_bit_wrap():
    out = run_mp("""
        for k in range(1, 7):      # a press every 3 s for 18 s: past four wraps of 4.19 s
            press(1, 1_000_000 + 3_000_000 * k); release(1, 1_000_000 + 3_000_000 * k + 100_000)
        run_to(20_000_000, step=50_000)
        done()
    """)
    msgs = frames(out)
    presses = [t for t, ch, lv in records(msgs) if ch & 1 and lv & 1]
    assert presses == [3_000_000 * k for k in range(1, 7)]
    beats = [m.tick for m in msgs if isinstance(m, P.Heartbeat)]
    assert len(beats) >= 70 and beats == sorted(beats) and beats[-1] > 1 << 22


def test_a_press_scheduled_behind_a_word_already_sampled_changes_the_pin_then():
    """The simulated board never samples out of time order, as the PIO
    cannot: a press a test asks for at a moment the board has already
    sampled past (its command reached the board late, on a loaded machine)
    changes the pin when the board gets to it, and the board says so. A
    word stamped behind the last would read to the box as a whole 4.19 s
    wrap later (how a late-GO test's false start once came out a win)."""
    out = run_mp("""
        press(1, 2_000_000)
        run_to(2_001_000)
        press(2, 1_999_500)                  # behind buzzer 1's word, asked late
        run_to(2_300_000)
        done(late=board.late, gpio=GPIO[2])
    """)
    presses = [(t, ch) for t, ch, lv in records(frames(out)) if ch & lv & 0b11]
    assert presses == [(1_000_000, 0b01), (1_002_000, 0b10)]
    assert out["late"] == [[1_999_500, 2_002_000, out["gpio"]]]


def _raw_bounces():
    # (buzzer, pressed, us): a bouncy press, a short tap, a release storm
    ev = [(1, True, 1_100_000), (1, False, 1_100_300), (1, True, 1_100_700),
          (1, False, 1_101_200), (1, True, 1_101_500),
          (1, False, 1_200_000), (1, True, 1_200_400), (1, False, 1_200_900),
          (2, True, 1_300_000), (2, False, 1_305_000),          # a 5 ms tap
          (3, True, 1_400_000), (3, False, 1_400_100), (3, True, 1_419_000),
          (3, False, 1_425_000), (3, True, 1_426_000)]
    return ev


def test_debounce_is_the_referees_leading_edge_debounce_with_a_minimum_hold():
    """Buzzers 1 and 2 as the referee's Debouncer has them (the first edge
    of a burst keeps its stamp, the level at the window's end is reported
    with its own). Buzzer 3's 100 us press is shorter than the minimum hold
    (issue 32, 3): no press; its press 19 ms later is, and the 1 ms release
    while it is held is nothing."""
    ev = _raw_bounces()
    lines = "\n".join(f"{'press' if p else 'release'}({b}, {t})" for b, p, t in ev)
    out = run_mp(lines + "\nrun_to(1_600_000, step=500)\ndone()\n")
    got_edges = sorted((t, b + 1, bool(lv >> b & 1)) for t, ch, lv in records(frames(out))
                       for b in range(6) if ch >> b & 1)
    want = debounce([Edge(str(b), p, t * 1000) for b, p, t in ev if b != 3], 20_000_000)
    want_edges = sorted((e.t_ns // 1000 - 1_000_000, int(e.player), e.pressed)
                        for es in want.values() for e in es)
    assert [e for e in got_edges if e[1] != 3] == want_edges
    assert (100_000, 1, True) in got_edges and (300_000, 2, True) in got_edges
    assert [e for e in got_edges if e[1] == 3] == [(419_000, 3, True)]


def test_raw_mode_reports_every_sampled_change():
    ev = _raw_bounces()
    lines = "\n".join(f"{'press' if p else 'release'}({b}, {t})" for b, p, t in ev)
    out = run_mp("command(P.CONFIG, bytes([P.CONFIG_RAW]) + bytes(8))\nat(1_000_100)\n"
                 + lines + "\nrun_to(1_600_000, step=500)\ndone()\n")
    msgs = frames(out)
    acks = [m for m in msgs if isinstance(m, P.Ack)]
    assert acks[0].acked_type == P.CONFIG and acks[0].status == P.ACK_OK
    n = sum(bin(ch & 0x3F).count("1") for _, ch, _ in records(msgs))
    assert n == len(ev)


# ---------------------------------------------------------------------------
# Clock sync, cue, commands


def test_a_sync_request_is_answered_with_the_pio_stamp_of_the_mark():
    out = run_mp("""
        at(1_200_000)
        command(P.SYNC_REQUEST, (0xCAFE).to_bytes(4, "little"))
        at(1_234_567)
        at(1_235_000)
        done()
    """)
    replies = [m for m in frames(out) if isinstance(m, P.SyncReply)]
    assert replies == [P.SyncReply(replies[0].seq, 0xCAFE, 234_567)]


def test_a_held_sync_request_says_when_it_was_read_and_how_long_the_reply_was_held():
    """Firmware 1.2's four timestamps: t2 is the PIO tick when the box read
    the request, t3 - t2 how long it kept the reply (the mark's round trip
    through the PIO, the next loop, the queue): 433 us here, built into the
    reply as it goes out."""
    out = run_mp("""
        at(1_200_000)
        command(P.SYNC_HELD_REQUEST, (0xBEEF).to_bytes(4, "little"))
        at(1_234_567)
        at(1_235_000)
        command(P.SYNC_REQUEST, (0xCAFE).to_bytes(4, "little"))   # an old Pi's, as before
        at(1_240_000)
        at(1_241_000)
        done()
    """)
    msgs = frames(out)
    held = [m for m in msgs if isinstance(m, P.SyncHeld)]
    assert [(m.token, m.tick, m.held_us) for m in held] == [(0xBEEF, 234_567, 433)]
    assert [(m.token, m.tick) for m in msgs if isinstance(m, P.SyncReply)] == [(0xCAFE, 240_000)]
    seqs = [m.seq for m in msgs if not isinstance(m, P.LinkFault)]
    assert seqs == sorted(seqs) and not [m for m in msgs if isinstance(m, P.LinkFault)]


def test_held_replies_share_one_mark_each_from_its_own_read():
    out = run_mp("""
        at(1_200_000)
        command(P.SYNC_HELD_REQUEST, (1).to_bytes(4, "little"))
        at(1_300_000)                     # read: the mark toggles
        board.fixed_now = 1_300_200       # another, read 200 us later while the mark is out
        box.command((P.SYNC_HELD_REQUEST, 0, (3).to_bytes(4, "little")))
        at(1_301_000)
        done()
    """)
    held = {m.token: m for m in frames(out) if isinstance(m, P.SyncHeld)}
    assert (held[1].tick, held[1].held_us) == (300_000, 1_000)
    assert (held[3].tick, held[3].held_us) == (300_200, 800)


def test_the_cue_is_acknowledged_with_the_stamp_of_its_own_edge():
    out = run_mp("""
        at(1_100_000)
        command(P.SET_CUE, bytes([1]) + (0).to_bytes(8, "little"))
        at(1_150_000)
        at(1_150_100)
        command(P.SET_CUE, bytes([0]) + (400_000).to_bytes(8, "little"))   # off at tick 400000
        run_to(1_500_000, step=700)
        done(cue=board.levels[10])
    """)
    msgs = frames(out)
    acks = [m for m in msgs if isinstance(m, P.Ack) and m.acked_type == P.SET_CUE]
    assert [a.tick for a in acks][0] == 150_000
    assert 400_000 <= acks[1].tick <= 400_700          # fired by the box's own clock
    cue_bit = 1 << 8
    cue_recs = [(t, lv & cue_bit) for t, ch, lv in records(msgs) if ch & cue_bit]
    assert cue_recs == [(150_000, cue_bit), (acks[1].tick, 0)]
    assert out["cue"] == 0


def test_leds_follow_the_host_and_bad_commands_are_refused_with_a_fault():
    out = run_mp("""
        at(1_100_000)
        command(P.SET_LEDS, bytes([0b000101, 0b000001]))
        command(P.SET_LEDS, bytes([0b1000000, 0]))          # a 7th LED does not exist
        command(P.PULSE, bytes(9))                          # zero-width pulses
        at(1_100_500)
        done(leds=[board.levels[g] for n, g in C.LEDS])
    """)
    msgs = frames(out)
    acks = [(m.acked_type, m.status) for m in msgs if isinstance(m, P.Ack)]
    assert acks == [(P.SET_LEDS, P.ACK_OK), (P.SET_LEDS, P.ACK_BAD_ARGS),
                    (P.PULSE, P.ACK_BAD_ARGS)]
    assert out["leds"] == [1, 0, 0, 0, 0, 0]
    assert [m.code for m in msgs if isinstance(m, P.Fault)] == [P.F_BAD_COMMAND] * 2


def test_garbage_and_a_ctrl_c_byte_from_the_host_are_counted_not_obeyed():
    out = run_mp("""
        at(1_100_000)
        cdc.host_send(b"\\x03\\x03garbage\\x00")
        command(P.SYNC_REQUEST, bytes([3, 3, 3, 3]))     # 0x03 inside a real frame is data
        run_to(1_400_000)
        done(corrupt=box.unframer.corrupt)
    """)
    msgs = frames(out)
    assert [m.token for m in msgs if isinstance(m, P.SyncReply)] == [0x03030303]
    assert out["corrupt"] == 1
    assert [m.rx_corrupt for m in msgs if isinstance(m, P.Heartbeat)][-1] == 1


# ---------------------------------------------------------------------------
# Faults


def test_a_host_that_does_not_read_never_blocks_the_loop_nor_cuts_a_frame():
    # MicroPython's USB serial: poll says writable with one byte free, and a
    # write that does not fit waits 500 ms and returns short (usbcdc.py)
    out = run_mp("""
        at(1_100_000)
        cdc.reading = False
        t = 1_200_000
        for k in range(30):                  # 3 s of presses nobody reads
            press(1, t); release(1, t + 50_000); t += 100_000
        run_to(4_300_000)
        cdc.reading = True
        press(2, 4_400_000)
        run_to(4_600_000)
        done(dropped=box.tx_dropped)
    """)
    assert out["blocked_us"] == 0 and out["short_writes"] == 0     # never waited
    msgs = P.Decoder().feed(bytes.fromhex(out["wire"]))
    assert not [m for m in msgs if isinstance(m, P.LinkFault) and m.kind != "gap"]  # none cut
    assert out["dropped"] > 0
    drops = [m for m in msgs if isinstance(m, P.Fault) and m.code == P.F_TX_DROPPED]
    assert sum(d.count for d in drops) == out["dropped"]
    assert records(msgs)[-1][1:] == (0b10, 0b10)         # the loop went on


def test_an_overflow_is_reported_and_invents_no_edge():
    out = run_mp("""
        at(1_100_000)
        press(5, 1_199_990)                  # buzzer 5's press is lost in the flood:
        t = 1_200_000
        for i in range(hw.ring_words // 2 + 22):   # the ring and 44 more changes
            press(4, t); release(4, t + 1); t += 2     # before the next drain
        at(t + 1_000)
        run_to(1_400_000)
        done()
    """)
    msgs = frames(out)
    faults = [m for m in msgs if isinstance(m, P.Fault) and m.code == P.F_OVERFLOW]
    assert faults[0].input == P.NO_INPUT and faults[0].count > 0
    assert (4, 1) in [(f.input, f.count) for f in faults]      # buzzer 5 (bit 4): now pressed
    # no press of buzzer 5 with a stamp: its time is unknown
    assert not [r for r in records(msgs) if r[1] & 0b10000]
    heart = [m for m in msgs if isinstance(m, P.Heartbeat)][-1]
    assert heart.overflows == 1 and heart.levels & 0b10000


def test_a_buzzer_held_past_the_stuck_time_is_reported_and_cleared_on_release():
    out = run_mp("""
        command(P.CONFIG, bytes([0]) + (20_000).to_bytes(4, "little") + (500).to_bytes(4, "little"))
        at(1_050_000)
        press(6, 1_100_000); release(6, 1_900_000)
        run_to(2_000_000, step=5_000)
        done()
    """)
    faults = [(m.code, m.input) for m in frames(out) if isinstance(m, P.Fault)]
    assert faults == [(P.F_STUCK, 5), (P.F_CLEARED, 5)]


def test_ctrl_c_is_data_while_the_box_plays_and_nothing_is_written_to_flash():
    out = run_mp("""
        import main, builtins
        calls = []
        class Mp:
            def kbd_intr(self, c):
                calls.append((c, board.fixed_now))
        main.micropython = Mp()
        opened = []
        real_open = builtins.open
        def no_open(*a, **k):
            opened.append(a)
            return real_open(*a, **k)
        builtins.open = no_open
        box.start()
        def step():
            board.fixed_now += 1000
            if board.fixed_now == 1_050_000:
                cdc.host_send(b"\x03")
            return board.fixed_now < 1_100_000
        main.run(hw=hw, box=box, keep_going=step, watchdog=False)
        builtins.open = real_open
        done(calls=calls, opened=len(opened))
    """)
    assert [c for c, _ in out["calls"]] == [-1, 3]      # Ctrl-C off for the whole loop
    assert out["calls"][1][1] >= 1_100_000
    assert out["opened"] == 0                           # no file opened while playing


def test_the_box_repeats_its_hello_while_nobody_talks_to_it_and_stops_when_someone_does():
    out = run_mp("""
        box.start()
        run_to(4_100_000, step=10_000)
        n = len(b"".join(sent))
        command(P.SYNC_REQUEST, bytes(4))
        for k in range(8):                   # a host syncing 8 times a second
            run_to(4_200_000 + 125_000 * k, step=5_000)
            command(P.SYNC_REQUEST, bytes([k, 0, 0, 0]))
        done(split=n)
    """)
    msgs = P.Decoder().feed(bytes.fromhex(out["wire"]))
    hellos = [m for m in msgs if isinstance(m, P.Hello)]
    assert len(hellos) == 1 + 3                 # at start, then once a second from 2 s on
    later = P.Decoder().feed(bytes.fromhex(out["wire"])[out["split"]:])
    assert not [m for m in later if isinstance(m, P.Hello)]


def test_mpremotes_interrupt_gets_in_first_time_after_stray_bytes():
    # ModemManager's AT probe, then half a companion frame, then what
    # mpremote's enter_raw_repl writes: CR Ctrl-C, CR Ctrl-A (in one chunk)
    out = run_mp("""
        import main
        cdc.host_send(b"AT\\r")
        cdc.host_send(b"\\x00" + fr.frame(P.SYNC_REQUEST, bytes(4))[:5])   # the Pi's way
        def step():
            board.fixed_now += 1000
            if board.fixed_now == 1_010_000:
                cdc.host_send(b"\\r\\x03\\r\\x01")
            return board.fixed_now < 1_500_000
        box2 = main.run(hw=hw, box=box, keep_going=step)
        done(escape=box2.escape, at=board.fixed_now, left=bytes(cdc.rx).hex(),
             wdt=board.wdt_enabled)
    """)
    assert out["escape"] is True and out["at"] <= 1_011_000      # at once
    assert bytes.fromhex(out["left"]) == b"\r\x01"     # mpremote's Ctrl-A is the REPL's
    assert out["wdt"] is False                        # an update is not cut by a reset


def test_an_exception_in_the_loop_restarts_the_box_and_the_watchdog_is_fed():
    out = run_mp("""
        import main
        errors = []
        real_read = hw.read
        def bad_read():
            if board.fixed_now == 1_200_000:
                raise KeyError("a bug")
            return real_read()
        hw.read = bad_read
        def step():
            board.fixed_now += 1000
            return board.fixed_now < 1_400_000 and not board.wdt_check()
        main.run(hw=hw, box=box, keep_going=step, errors=errors)
        done(errors=errors, wdt=board.wdt_enabled, bit=board.wdt_check(),
             timeout=board.wdt_timeout_ms)
    """)
    hellos = [m for m in frames(out) if isinstance(m, P.Hello)]
    assert len(hellos) == 2 and hellos[0].boot_id != hellos[1].boot_id   # started afresh
    assert out["errors"] == ["KeyError('a bug',)"] or "a bug" in out["errors"][0]
    assert out["wdt"] is True and out["bit"] is False and out["timeout"] <= 8388


def test_the_status_led_is_lit_while_the_host_is_listening():
    out = run_mp("""
        led = []
        at(1_100_000); led.append(board.levels[C.STATUS_LED])
        command(P.SYNC_REQUEST, bytes(4))
        at(1_200_000); led.append(board.levels[C.STATUS_LED])
        run_to(3_100_000, step=50_000); led.append(board.levels[C.STATUS_LED])
        run_to(3_300_000, step=50_000); led.append(board.levels[C.STATUS_LED])
        done(led=led)
    """)
    assert out["led"] == [0, 1, 1, 0]          # dark 2 s after the host last spoke


def test_holding_buzzer_1_at_power_up_keeps_the_repl():
    # pins leave reset pulled down; the pull-up takes tens of us to raise GP2
    out = run_mp("""
        from simboard import board
        import main, boxconfig as C
        free = main.hold_to_skip()
        board.schedule(board.now_us(), C.INPUTS[0][2], 0)
        held = main.hold_to_skip()
        print('{"free": %s, "held": %s}' % ("true" if free else "false", "true" if held else "false"))
    """, prelude=False)
    assert out["free"] is False and out["held"] is True


# ---------------------------------------------------------------------------
# The hardware as unkind as it is: a DMA that laps the drain, its count,
# the counter's true rate


def test_a_dma_that_laps_the_drain_mid_way_never_shifts_the_clock():
    # the DMA writes the ring from its own thread at the edge rate while the
    # drain reads it (simboard.start_dma), and each word costs the drain
    # 20 us as on a Pico: a bounce storm on all six buzzers, a change every
    # 15 us for 90 ms (6000 words), a little faster than the drain, laps the
    # 256-word ring in the middle of a drain, again and again
    out = run_mp("""
        import time
        board.fixed_now = None
        board.ppm = 0
        hw = boxhw.Hardware(usb=boxhw.Usb(*usbcdc.ports(cdc)))
        box = boxcore.Box(hw, C, 7)
        box.flags = P.CONFIG_RAW
        changes = []
        level = [1] * 6
        for i in range(6_000):
            b = (i * 7) % 6
            level[b] ^= 1
            changes.append((15 * i, C.INPUTS[b][2], level[b]))
        for b in range(6):          # and all released a while later
            changes.append((100_000, C.INPUTS[b][2], 1))
        t0 = board.now_us() + 1_000_000
        changes = [(t0 + t, g, lv) for t, g, lv in changes]
        board.schedule_many(changes)
        late = board.now_us() - t0
        board.start_dma(5)
        word = box.word
        def slow_word(hi, lo):               # the Pico's per-word cost (tens of us)
            t = time.ticks_us()
            while time.ticks_diff(time.ticks_us(), t) < 20:
                pass
            word(hi, lo)
        box.word = slow_word
        start = board.t0
        end = t0 + 700_000
        while board.now_us() < end:
            box.poll()
            got = cdc.host_take()
            if got:             # (a quiet machine polls so often that a list of
                sent.append(got)    # every empty take outgrew the 16 MB heap)
        board.stop_dma()
        truth = [(board.counter(t), g, lv) for t, g, lv in changes]
        done(truth=truth, now=board.counter(board.now_us()), words=board.words, late=late)
    """, timeout=120)
    assert out["late"] < 0                    # the storm comes while the drain runs
    msgs = P.Decoder().feed(bytes.fromhex(out["wire"]))
    assert not [m for m in msgs if isinstance(m, P.LinkFault) and m.kind != "gap"]
    bit = {g: b for b, g in enumerate(range(2, 12))}      # GP2..GP11: bits 0..9
    real = {(t, bit[g], lv) for t, g, lv in out["truth"]}
    recs = records(msgs)
    assert recs
    invented = [(t, b) for t, ch, lv in recs for b in range(6) if ch >> b & 1
                and (t, b, 0 if lv >> b & 1 else 1) not in real]      # active low
    assert not invented[:5]
    ticks = [t for t, _, _ in recs] + [m.tick for m in msgs if isinstance(m, P.Heartbeat)]
    assert max(ticks) <= out["now"]                      # no 2**22 (4.19 s) jump
    overflow = [m for m in msgs if isinstance(m, P.Fault) and m.code == P.F_OVERFLOW]
    assert overflow                                      # the laps were seen and said
    last = [m for m in msgs if isinstance(m, P.Heartbeat)][-1]
    assert last.levels & 0b111111 == 0                   # all released, as they are


def test_the_simulated_dma_channel_is_the_datasheets():
    # RP2040 datasheet 2.5: writing the count sets only the next trigger's, a
    # trigger is ignored while the channel runs, clearing EN pauses it (BUSY
    # stays high, words wait in the 8-word FIFO), an abort "clears the
    # transfer counter", a count of 0 stops it; RP2350: mode 0x1 re-triggers
    # itself, 0xF never counts, other modes are reserved
    out = run_mp("""
        import rp2
        got = {}
        def pulse(n):                        # n words from the sampler, now
            t = board.now_us()
            for i in range(n):
                board.schedule(t, 2, board.levels[2] ^ 1)
                t += 1
                board.fixed_now = t
                board.advance()
        board.fixed_now = 2_000_000
        dma = hw.dma
        c0 = board.dma_count
        dma.count = 5                        # RELOAD only
        pulse(2)
        got["reload_only"] = c0 - board.dma_count
        dma.config(count=7, trigger=True)    # running: the trigger does nothing
        got["trigger_running"] = c0 - board.dma_count
        dma.config(ctrl=dma.pack_ctrl(enable=False))
        w = board.written
        pulse(9)
        got["paused"] = [board.written - w, board.dma_active, len(board.fifo), board.stall_flag]
        board.stall_flag = False
        dma.config(ctrl=hw.ctrl)
        got["resumed"] = board.written - w
        dma.active(0)
        w = board.written
        pulse(3)
        got["aborted"] = [dma.count, dma.active(), board.written - w]
        dma.active(1)                        # RELOAD (7) into the counter, the 3 waiting go
        got["retriggered"] = [dma.count, board.written - w]
        pulse(5)                             # 4 go, the 5th waits
        got["ran_out"] = [dma.count, dma.active(), len(board.fifo)]
        board.chip = "rp2350"
        modes = []
        for mode in (0x1, 0xF, 0x2):
            board.fifo = []
            dma.active(0)
            try:
                dma.config(count=mode << 28 | 3, trigger=True)
            except ValueError:
                modes.append("refused")
                continue
            pulse(7)
            modes.append([dma.count & 0x0FFFFFFF, dma.count >> 28, dma.active()])
        got["modes"] = modes
        done(**got)
    """)
    assert out["reload_only"] == 2
    assert out["trigger_running"] == 2
    assert out["paused"] == [0, True, 8, True]            # the 9th word is lost: RXSTALL
    assert out["resumed"] == 8
    assert out["aborted"] == [0, False, 0]
    assert out["retriggered"] == [4, 3]
    assert out["ran_out"] == [0, False, 1]
    assert out["modes"] == [[2, 1, True], [3, 15, True], "refused"]


def _long_night(chip: str, skip_to: str) -> dict:
    """Presses before and after a jump of the DMA's count as if millions of
    words had gone by (simboard.dma_skip; the drain skips them too)."""
    return run_mp(f"""
        board.chip = "{chip}"
        board.fixed_now = 998_000
        hw = new_hw(chip_name="{chip}")
        box = boxcore.Box(hw, C, 7)
        t = 1_100_000
        truth = []
        def presses(t, k):
            for i in range(k):
                n = i % 6 + 1
                press(n, t); release(n, t + 40_000)
                truth.extend([t, t + 40_000]); t += 100_000
            return t
        t = presses(t, 5)
        run_to(t)
        full = board.dma_reload & 0x0FFFFFFF if board.chip == "rp2350" else board.dma_reload
        left = board.dma_count
        target = full // 2 - 3 if "{skip_to}" == "half" else 5
        n = left - target
        board.dma_skip(n)
        box.read = (box.read + n) & 0xFFFF
        t = presses(t + 100_000, 15)
        run_to(t + 300_000)
        done(truth=[board.counter(x) for x in truth], now=board.counter(board.now_us()),
             aborts=board.dma_aborts, left=board.dma_count, full=full)
    """)


@pytest.mark.parametrize("chip,skip_to", [("rp2040", "half"), ("rp2350", "half"),
                                          ("rp2350", "end")])
def test_the_dma_is_set_up_once_and_a_long_night_loses_nothing(chip, skip_to):
    # the old firmware re-armed the channel once half its count was spent:
    # DMA.active(0) is an abort, which clears the count, so it counted the
    # words never written as written (an overflow of ~65,000 words, edges
    # read from a stale ring, a clock step). Past that point, and (RP2350)
    # past the end of its count, every press and release arrives as it was
    out = _long_night(chip, skip_to)
    msgs = frames(out)
    assert out["aborts"] == 0
    assert not [m for m in msgs if isinstance(m, P.Fault)]
    recs = records(msgs)
    assert [t for t, _, _ in recs] == out["truth"]               # 40: no more, no less
    beats = [m.tick for m in msgs if isinstance(m, P.Heartbeat)]
    assert beats == sorted(beats) and beats[-1] <= out["now"]
    if skip_to == "end":
        assert out["left"] > out["full"] - 1000              # it re-triggered itself
    if chip == "rp2040":
        assert out["full"] == 2**32 - 2**16                   # 11 years at 12 words a second


def test_the_capture_allocates_nothing_from_the_ring_to_a_record():
    # a garbage collection pause is what a slam must never meet: the drain
    # of six buzzers bouncing 20 times each (the words copied out of the
    # ring, the counter extended, the bounces debounced, the six presses
    # recorded) and a rebase of the local ticks in the middle of it run with
    # the heap locked (the mark's and the faults' frames are built elsewhere)
    out = run_mp("""
        import micropython, gc
        rebase_at = getattr(boxcore, "REBASE_AT", 1 << 28)
        at(1_050_000)
        k = (rebase_at - box.tick) // (1 << 22)
        box.tick += k << 22                  # as if the box had run ~67 s per k
        rem = rebase_at - box.tick           # the local tick reaches REBASE_AT in rem us
        run_to(1_050_000 + rem - 30_000)
        board.fixed_now += 10_000
        box.drain(hw.ticks_us())             # the mark's last word, its frames
        start = board.fixed_now + 5_000
        truth, changes = [], []
        for b in range(6):
            t = start + 150 * b
            truth.append(t)
            lv = 0
            for i in range(41):
                changes.append((t, GPIO[b + 1], lv))
                lv ^= 1
                t += 300 + 7 * b
        board.schedule_many(sorted(changes))
        board.fixed_now = start + 20_000
        board.advance()
        gc.collect()
        now = hw.ticks_us()
        failed = None
        micropython.heap_lock()
        try:
            box.drain(now)
        except MemoryError as e:
            failed = e                       # (its repr would allocate)
        finally:
            micropython.heap_unlock()
        failed = failed and repr(failed)
        epoch = getattr(box, "epoch", None)
        run_to(board.fixed_now + 100_000)
        done(failed=failed, epoch=epoch, offset=k << 22,
             truth=[board.counter(t) for t in truth])
    """)
    assert out["failed"] is None
    assert out["epoch"] == 1                                  # it rebased in there
    presses = [t for t, ch, lv in records(frames(out)) if ch & lv & 0b111111]
    assert presses == [(t + out["offset"]) & 0xFFFF_FFFF for t in out["truth"]]


def test_a_loop_stalled_past_a_wrap_and_a_rebase_keeps_the_press_stamp():
    # the loop stops 5 s (more than the counter's 4.19 s wrap): the coarse
    # timer places the next word, the box says `timebase`, and the jump
    # carries the local tick past REBASE_AT: the press is stamped as it was
    out = run_mp("""
        rebase_at = getattr(boxcore, "REBASE_AT", 1 << 28)
        at(1_050_000)
        k = (rebase_at - box.tick) // (1 << 22)
        box.tick += k << 22
        t1 = board.fixed_now
        press(2, t1 + 4_900_000)
        at(t1 + 5_000_000)
        run_to(t1 + 5_300_000)
        done(offset=k << 22, press=board.counter(t1 + 4_900_000),
             epoch=getattr(box, "epoch", None))
    """)
    msgs = frames(out)
    assert [m.count for m in msgs if isinstance(m, P.Fault) and m.code == P.F_TIMEBASE]
    (t, _, _), = [r for r in records(msgs) if r[1] & 0b10]
    assert t == (out["press"] + out["offset"]) & 0xFFFF_FFFF
    assert out["epoch"] == 1
    beats = [m.tick for m in msgs if isinstance(m, P.Heartbeat)]
    assert beats == sorted(beats) and beats[-1] & 0xFFFF_FFFF > t


@pytest.mark.parametrize("sysclk", [125_000_000, 150_000_000, 133_000_000])
def test_the_box_announces_the_rate_its_counter_really_runs_at(sysclk):
    # the state machine's divider is 16.8 fixed point (rp2_pio.c); the
    # board's counter runs at what that divider gives
    out = run_mp(f"""
        board.sysclk = {sysclk}
        board.fixed_now = 998_000
        hw = new_hw()
        box = boxcore.Box(hw, C, 7)
        box.start()
        press(1, 11_000_000)                 # 10 s after the counter started
        run_to(11_100_000, step=20_000)
        done()
    """)
    msgs = frames(out)
    hz = [m for m in msgs if isinstance(m, P.Hello)][0].tick_hz
    (t, _, _), = [r for r in records(msgs) if r[1] & 1]
    assert abs(t - hz * 10) <= 1                         # the stated rate, to a tick in 10 s
    if sysclk in (125_000_000, 150_000_000):
        assert hz == 1_000_000                           # an integer divider: exactly 1 MHz


def test_the_fairness_driver_drives_every_ordered_pair_each_trial_after_its_marker():
    """Issue 32, 2: the driver drove buzzer 1 then 2 only, and sent no
    marker (the Pi framed trials by time). Now trial k drives the k-th
    ordered pair of the asked buzzers in turn, and its marker comes before
    its stamps and after every earlier trial's."""
    out = run_mp("""
        command(P.CONFIG, bytes([P.CONFIG_RAW]) + bytes(8))
        at(1_010_000)
        command(P.CERTIFY, (3_000).to_bytes(4, "little") + (3).to_bytes(2, "little") + bytes([0b10110]))
        command(P.CERTIFY, (100).to_bytes(4, "little") + (1).to_bytes(2, "little") + bytes([3]))  # too close
        command(P.CERTIFY, (3_000).to_bytes(4, "little") + (1).to_bytes(2, "little") + bytes([1]))  # one buzzer
        command(P.CERTIFY, (3_000).to_bytes(4, "little") + (1).to_bytes(2, "little") + bytes([0x41]))  # not a buzzer
        run_to(1_200_000, step=500)
        done(levels=[board.levels[g] for g in range(2, 8)])
    """)
    msgs = frames(out)
    acks = [(m.acked_type, m.status) for m in msgs if isinstance(m, P.Ack)]
    assert acks.count((P.CERTIFY, P.ACK_BAD_ARGS)) == 3 and acks[-1] == (P.CERTIFY, P.ACK_OK)
    pairs = [(a, b) for a in (1, 2, 4) for b in (1, 2, 4) if a != b]
    trials, falls = [], []
    for m in msgs:
        if isinstance(m, P.TrialMark):
            trials.append(m)
            falls.append([])
        elif isinstance(m, P.Edges) and falls:          # presses after a marker: its trial's
            falls[-1] += [(t, bit) for t, ch, lv in m.records for bit in range(6)
                          if ch >> bit & lv >> bit & 1]
    assert [(m.trial, m.first, m.second, m.separation_ns) for m in trials] == [
        (k, *pairs[k % 6], 3_000) for k in range(18)]
    for m, got in zip(trials, falls):
        assert [b for _, b in got] == [m.first, m.second]             # this trial's, and only
        assert got[1][0] - got[0][0] == 3 and got[0][0] >= m.tick      # 3 us, to the tick
    assert out["levels"] == [1] * 6                                    # let go: pulled up again
