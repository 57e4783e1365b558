"""A soak of the real firmware under the MicroPython unix port
(firmware/sim/soak.py): simulated play on six buzzers with bounce storms,
garbage collection pauses, a host that stops reading and a cable pulled and
put back. What the host read must show no clock jump, no invented edge, and
every change it did not get as an edge reported as a fault.

The test runs 60 simulated seconds; ``python -m bench pico`` (and
``PICO_SOAK_S=600``) run the ten minutes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from companion.pico import protocol as P

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
MICROPYTHON = Path(sys.executable).with_name("micropython")
BUZZER_GPIO = list(range(2, 8))          # GP2..GP7: bits 0..5
ACTIVE_LOW = 0b111111


def run_soak(seconds: int, seed: int, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([str(MICROPYTHON), "-X", "heapsize=32M", str(FIRMWARE / "sim" / "soak.py"),
                        str(seconds), str(seed), str(out)], capture_output=True, text=True,
                       timeout=60 + seconds * 2)
    assert r.returncode == 0, r.stderr[-3000:]
    log = json.loads((out / "log.json").read_text())
    log["wire"] = (out / "wire").read_bytes()
    for name in ("truth", "reads"):
        lines = (out / name).read_text().splitlines()
        log[name] = [tuple(map(int, line.split())) for line in lines]
    return log


def check(log: dict) -> dict:
    """What the host read against the truth: counts of clock jumps,
    invented edges and lost changes nobody reported."""
    num, den = log["rate"]
    t0 = log["t0"]

    def tick(t_us):
        return (t_us - t0) * num // den

    truth = {}                                          # (tick, bit, active) -> True
    for t, gpio, lv in log["truth"]:
        truth[(tick(t), BUZZER_GPIO.index(gpio), 0 if lv else 1)] = True
    wire = log["wire"]
    reads = log["reads"]
    cuts = sorted(set(log["opens"]))
    # the host's view, as the pico source has it: a reconnect skips to the
    # first delimiter and takes nothing but a hello until the box says one
    segments = []
    start = 0
    for c in cuts + [len(wire)]:
        segments.append((start, c))
        start = c
    jumps = invented = unreported = corrupt = 0
    last_tick = 0
    levels = 0                                           # buzzers as the host knows them
    excused = True                                       # a loss since the last heartbeat
    last_seq = None
    beats = edges = faults = 0
    for k, (a, b) in enumerate(segments):
        data = wire[a:b]
        if k:
            i = data.find(b"\x00")
            data = data[i + 1:] if i >= 0 else b""
            waiting = True
            excused = True
            last_seq = None
        else:
            waiting = False
        # the counter at the end of this segment's reads: no tick beyond it
        limit = max([c for off, c in reads if off <= b] or [0])
        for m in P.Decoder().feed(data):
            if isinstance(m, P.LinkFault):
                if m.kind == "corrupt":
                    corrupt += 1
                excused = True
                continue
            if waiting and not isinstance(m, P.Hello):
                continue
            waiting = False
            if last_seq is not None and m.seq != (last_seq + 1) & 0xFFFF:
                excused = True                           # frames the box dropped
            last_seq = m.seq
            if isinstance(m, P.Edges):
                for t, ch, lv in m.records:
                    edges += 1
                    if t > limit or t + (1 << 21) < last_tick:
                        jumps += 1
                    for bit in range(6):
                        if ch >> bit & 1:
                            active = lv >> bit & 1
                            if (t, bit, active) not in truth:
                                invented += 1
                            levels = (levels & ~(1 << bit)) | (active << bit)
            elif isinstance(m, P.Heartbeat):
                beats += 1
                if m.tick > limit or m.tick < last_tick:
                    jumps += 1
                last_tick = max(last_tick, m.tick)
                if (m.levels & 0x3F) != levels and not excused:
                    unreported += 1
                levels = m.levels & 0x3F
                excused = False
            elif isinstance(m, P.Fault):
                faults += 1
                if m.code in (P.F_OVERFLOW, P.F_TX_DROPPED, P.F_TIMEBASE):
                    excused = True
                if m.code == P.F_OVERFLOW and m.input < 6:
                    levels = (levels & ~(1 << m.input)) | ((1 if m.count else 0) << m.input)
            elif isinstance(m, P.Hello):
                excused = True
    return {"clock_jumps": jumps, "invented_edges": invented, "unreported_losses": unreported,
            "corrupt_after_open": corrupt, "heartbeats": beats, "edges": edges,
            "faults": faults, "pauses": log["pauses"], "stalls": log["stalls"],
            "unplugs": log["unplugs"], "storms": log["storms"]}


@pytest.mark.slow
@pytest.mark.skipif(not MICROPYTHON.exists(), reason="no MicroPython unix port")
def test_a_soak_of_simulated_play_keeps_the_clock_and_invents_nothing(tmp_path):
    seconds = int(os.environ.get("PICO_SOAK_S", "60"))
    res = check(run_soak(seconds, 21, tmp_path))
    assert res["pauses"] and res["stalls"] and res["unplugs"] and res["storms"], res
    assert res["heartbeats"] >= seconds * 3 and res["edges"] > seconds, res
    assert res["clock_jumps"] == 0, res
    assert res["invented_edges"] == 0, res
    assert res["unreported_losses"] == 0, res
    assert res["corrupt_after_open"] == 0, res
