"""The Pico firmware's soak under the MicroPython unix port: simulated play
for ``seconds`` (firmware/sim/soak.py), and what its log shows (clock jumps,
invented edges, unreported losses); and the worst slam (firmware/sim/slam.py:
six buzzers within 1 ms, 20 bounces each, twice a second) and what it lost.
tests/test_pico_soak.py and bench/bench_pico.py run them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from companion.pico import protocol as P
from tests.kit.helpers import SLACK

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
MICROPYTHON = Path(sys.executable).with_name("micropython")
BUZZER_GPIO = list(range(2, 8))          # GP2..GP7: bits 0..5
ACTIVE_LOW = 0b111111
#: how long a test lets a simulated buzzer box (firmware/sim: MicroPython's
#: unix port on a pty) take to say hello; the product's 3 s is a real Pico's,
#: and a simulator starved beside four busy loops once took longer
HELLO_S = 3 * SLACK


def box_source(buzzers, box, **kw):
    """The table's :class:`~companion.buzzers.pico.PicoSource` on the port of
    ``box`` (firmware/sim/ptybox.SimBox), given :data:`HELLO_S` to say
    hello unless ``kw`` says otherwise."""
    from companion.buzzers.pico import PicoSource

    return PicoSource(buzzers, port=box.port, **{"connect_timeout_s": HELLO_S, **kw})


def run_soak(seconds: int, seed: int, out: Path, script: str = "soak.py", *extra: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([str(MICROPYTHON), "-X", "heapsize=32M", str(FIRMWARE / "sim" / script),
                        str(seconds), str(seed), str(out), *extra], capture_output=True, text=True,
                       timeout=60 + seconds * 2)
    assert r.returncode == 0, r.stderr[-3000:]
    log = json.loads((out / "log.json").read_text())
    log["wire"] = (out / "wire").read_bytes()
    for name in ("truth", "reads", "expect"):
        if (out / name).exists():
            lines = (out / name).read_text().splitlines()
            log[name] = [tuple(map(int, line.split())) for line in lines]
    return log


def run_slam(seconds: int, seed: int, out: Path, rebase_bits: int | None = None) -> dict:
    """firmware/sim/slam.py's run, checked: check()'s counts and the slam's
    own (``lost_edges``: leading edges of a burst the host never got as an
    edge with their stamp; ``overflows``: overflow faults)."""
    extra = () if rebase_bits is None else (str(rebase_bits),)
    log = run_soak(seconds, seed, out, "slam.py", *extra)
    res = check(log)
    num, den = log["rate"]
    got = set()
    overflows = 0
    for m in P.Decoder().feed(log["wire"]):
        if isinstance(m, P.Edges):
            for t, ch, lv in m.records:
                got.update((t, bit, lv >> bit & 1) for bit in range(6) if ch >> bit & 1)
        elif isinstance(m, P.Fault) and m.code == P.F_OVERFLOW:
            overflows += 1
    lost = sum(1 for t, gpio, lv in log["expect"]
               if ((t - log["t0"]) * num // den & 0xFFFF_FFFF, BUZZER_GPIO.index(gpio),
                   0 if lv else 1) not in got)
    res.update(lost_edges=lost, overflows=overflows, expected_edges=len(log["expect"]),
               slams=log["slams"], words=log["words"], max_local=log["max_local"],
               rebases=log["rebases"])
    return res


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


def usb_leg(rng) -> int:
    """One leg of the simulated USB link, in ns: 0.25-1.25 ms uniform plus a
    capped 0.2 ms exponential tail (bench/bench_pico.py's clock sync figure)."""
    return int(250_000 + rng.random() * 1_000_000 + min(rng.expovariate(1 / 200_000), 750_000))


class Wire:
    """The link of an offline source that keeps what the Pi sends the box."""

    path = "wire"

    def __init__(self, clock):
        self.clock = clock
        self.sent: list[tuple[int, object]] = []      # (Pi time, decoded frame)

    def write(self, data: bytes):
        frames = [m for m in P.Decoder().feed(data) if not isinstance(m, P.LinkFault)]
        assert len(frames) == 1, frames
        self.sent.append((self.clock(), frames[0]))
        return self.clock()

    def where(self):
        return self.path

    def drop(self):
        pass

    def close(self):
        pass

    def of(self, kind):
        return [(t, m) for t, m in self.sent if isinstance(m, kind)]
