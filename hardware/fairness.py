"""The Pico box's fairness certificate: who pressed first, to what separation?

A second PIO state machine (``boxpio.DRIVER_SOURCE``) pulls two buzzer inputs
low at a known separation (output enable against the pull-up, released by
switching back to input; never driven high), while the capture program
(``boxpio.SOURCE``) stamps them. Here both run in rp2040-pio-emulator from
the firmware's own PIO text: the driver once per separation (its pin trace:
when each pin goes low, to the system clock cycle), the trace then fed to the
capture program at its 25 MHz (a fifth of 125 MHz), each trial at a random
phase against the capture's tick. For each separation it prints, in the
manner of GP2040-CE's latency table, the stamped separation's min, mean, max
and standard deviation and the share of trials ordered correctly (B stamped
after A; the same stamp is a tie, not a win), and the smallest separation
ordered right every time::

    python -m hardware.fairness                  # 1000 trials from 0.3 us to 10 us
    python -m hardware.fairness --long           # and 20 us to 1 ms (slower)

On a real box the same driver runs on the real pins (``certify_box``: the
box's CERTIFY command, the stamps read back through the pico source), and
the certificate is kept with its date (``save`` / ``last``)::

    python -m hardware.selftest --real --fairness      # on the box; saved
    python -m hardware.selftest --fairness --last      # the last one, with its date
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from companion.pico import certificate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))
import boxpio  # noqa: E402

SYSCLK = 125_000_000
DIV = SYSCLK // boxpio.SM_FREQ                     # system cycles per capture cycle (5)
CYCLE_NS = 1_000_000_000 // SYSCLK                 # 8 ns
MASK22 = (1 << 22) - 1
IDLE = 0b0001111111          # buttons and self-test input pulled up; outputs low
SHORT_NS = (300, 500, 1_000, 2_000, 5_000, 10_000)
LONG_NS = (20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000)
GAP_CYCLES = 250                                   # released to the next trial (2 us)


@dataclass(frozen=True)
class Row:
    separation_ns: int
    trials: int
    min_us: float
    mean_us: float
    max_us: float
    sd_us: float
    ordered: float           # share of trials with B stamped after A

    def line(self) -> str:
        return (f"{self.separation_ns / 1000:9.1f} us {self.trials:6d} {self.min_us:8.1f} "
                f"{self.mean_us:9.2f} {self.max_us:8.1f} {self.sd_us:7.2f} "
                f"{100 * self.ordered:8.1f}%")


def driver_trace(cycles: int) -> tuple[int, int, int]:
    """The driver program for a separation of ``cycles`` system cycles, run
    in the emulator: (A low, B low, both released), in system cycles from
    its start."""
    import adafruit_pioasm              # the emulation's tools (the test extra)
    from pioemu import State, emulate
    prog = adafruit_pioasm.Program(boxpio.DRIVER_SOURCE).assembled
    state = State(transmit_fifo=deque([boxpio.driver_word(cycles)]))
    a = b = None
    end = None
    for before, after in emulate(prog, stop_when=lambda op, s: s.clock > cycles + 5_000,
                                 initial_state=state, set_base=0, set_count=2):
        if a is None and after.pin_directions & 1:
            a = after.clock
        if b is None and after.pin_directions & 2:
            b = after.clock
        if b is not None and after.pin_directions == 0:
            end = after.clock
            break
    return a, b, end


def capture(trials: list[tuple[int, int, int]], total: int) -> list[tuple[int, int]]:
    """The capture program over a trace of trials (A low, B low, release, in
    system cycles): the words it pushed, as (sample, tick)."""
    import adafruit_pioasm
    from pioemu import clock_cycles_reached, emulate
    prog = adafruit_pioasm.Program(boxpio.SOURCE)
    k = 0

    def pins(clock: int) -> int:
        nonlocal k
        t = clock * DIV
        while k < len(trials) and t >= trials[k][2]:
            k += 1
        v = IDLE
        if k < len(trials):
            a, b, _ = trials[k]
            if t >= a:
                v &= ~1
            if t >= b:
                v &= ~2
        return v

    pins.__annotations__ = {"clock": int}          # how pioemu tells the kind of source
    words = []
    for _, after in emulate(prog.assembled, stop_when=clock_cycles_reached(total // DIV + 200),
                            input_source=pins, shift_isr_right=False,
                            wrap_target=boxpio.WRAP_TARGET, wrap_top=boxpio.WRAP):
        while after.receive_fifo:
            w = after.receive_fifo.popleft()
            words.append((w >> 22, (-(w & MASK22)) & MASK22))
    return words


def certify_separation(separation_ns: int, trials: int, rng: random.Random) -> Row:
    cycles = separation_ns // CYCLE_NS
    a0, b0, end0 = driver_trace(cycles)
    assert b0 - a0 == cycles, (separation_ns, b0 - a0)
    trace = []
    t = 300                                        # the capture's first sample is pushed
    for _ in range(trials):
        t += rng.randrange(boxpio.CYCLES_PER_TICK * DIV)     # a random phase
        trace.append((t + a0, t + b0, t + end0))
        t += end0 + GAP_CYCLES
    words = capture(trace, t)
    # each trial: the first word with A low, the first with B low, after it
    stamped = []
    a_tick = None
    prev = IDLE
    for sample, tick in words:
        fell = prev & ~sample
        if fell & 1:
            a_tick = tick
        if fell & 2 and a_tick is not None:
            stamped.append(tick - a_tick)
            a_tick = None
        prev = sample
    assert len(stamped) == trials, (separation_ns, len(stamped), trials)
    return row(separation_ns, stamped, boxpio.tick_hz(SYSCLK))


def row(separation_ns: int, stamped: list[int], tick_hz: int) -> Row:
    """A table row from stamped separations (B - A, in ticks)."""
    us = [s * 1_000_000 / tick_hz for s in stamped]
    return Row(separation_ns, len(us), min(us), statistics.fmean(us), max(us),
               statistics.pstdev(us), sum(1 for s in stamped if s > 0) / len(us))


def certify_box(src, separations_ns=SHORT_NS, trials: int = 1000) -> list[Row]:
    """The certificate from a real box (a pico source in raw mode)."""
    rows = []
    for s in separations_ns:
        stamped = src.certify(s, trials)
        if not stamped:
            raise RuntimeError(f"the box did not run the fairness driver at {s} ns "
                               f"(older firmware?)")
        rows.append(row(s, stamped, src.hello.tick_hz))
    return rows


def certificate_path() -> Path:
    """Where the certificate is kept (companion/pico/certificate.py: the host
    console reads it from there)."""
    return certificate.path()


def save(rows: list[Row], where: str, path: Path | None = None) -> Path:
    """Keep the certificate with its date (UTC) and where it came from."""
    path = path or certificate_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "where": where, "fair_separation_us": fair_separation_us(rows),
           "rows": [r.__dict__ for r in rows]}
    path.write_text(json.dumps(doc, indent=1))
    return path


def last(path: Path | None = None) -> str | None:
    """The last certificate kept, as text with its date (None: none yet)."""
    path = path or certificate_path()
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    rows = [Row(**r) for r in doc["rows"]]
    return f"certificate of {doc['date']} ({doc['where']}):\n" + table(rows)


def certify(separations_ns=SHORT_NS, trials: int = 1000, seed: int = 1) -> list[Row]:
    rng = random.Random(seed)
    return [certify_separation(s, trials, rng) for s in separations_ns]


def fair_separation_us(rows: list[Row]) -> float | None:
    """The smallest separation ordered right in every trial, with every
    larger one also right every time (the console checks a kept
    certificate against the same rule)."""
    return certificate.fair_separation_us([r.__dict__ for r in rows])


def table(rows: list[Row]) -> str:
    head = (" separation trials   min us   mean us   max us   sd us  ordered\n")
    body = "\n".join(r.line() for r in rows)
    fair = fair_separation_us(rows)
    tail = (f"\nordered right every time from {fair:g} us" if fair is not None
            else "\nno separation ordered right every time")
    return head + body + tail


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hardware.fairness", description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--long", action="store_true", help="also 20 us to 1 ms (slower)")
    args = ap.parse_args(argv)
    seps = SHORT_NS + (LONG_NS if args.long else ())
    trials = max(1, args.trials)
    rows = [certify_separation(s, trials if s <= 10_000 else max(1, trials // 10),
                               random.Random(s)) for s in seps]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
