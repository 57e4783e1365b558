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
import functools
import json
import math
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


@functools.cache
def driver_trace(cycles: int, first: int = 0, second: int = 1) -> tuple[int, int, int]:
    """The driver program for a separation of ``cycles`` system cycles
    pulling input bit ``first`` then ``second``, run in the emulator: (A
    low, B low, both released), in system cycles from its start. Raises if
    it ever drives another pin."""
    import adafruit_pioasm              # the emulation's tools (the test extra)
    from pioemu import State, emulate
    prog = adafruit_pioasm.Program(boxpio.DRIVER_SOURCE).assembled
    state = State(transmit_fifo=deque([boxpio.driver_word(cycles),
                                       boxpio.driver_pins(first, second)]))
    a = b = None
    end = None
    ma, mb = 1 << first, 1 << second
    for before, after in emulate(prog, stop_when=lambda op, s: s.clock > cycles + 5_000,
                                 initial_state=state, out_base=0,
                                 out_count=boxpio.DRIVER_PINS, wrap_top=len(prog) - 1):
        if after.pin_directions & ~(ma | mb):
            raise AssertionError(f"the driver drove pins {after.pin_directions:#x}")
        if a is None and after.pin_directions & ma:
            a = after.clock
        if b is None and after.pin_directions & mb:
            b = after.clock
        if b is not None and after.pin_directions == 0:
            end = after.clock
            break
    return a, b, end


def capture(trials: list[tuple[int, int, int]], total: int) -> list[tuple[int, int]]:
    """The capture program over a trace of trials (A low, B low, release, in
    system cycles; and optionally A's and B's input bits, else 0 and 1): the
    words it pushed, as (sample, tick)."""
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
            a, b, _, first, second = (trials[k] + (0, 1))[:5]
            if t >= a:
                v &= ~(1 << first)
            if t >= b:
                v &= ~(1 << second)
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


def _tick_at(t: int) -> int:
    """The capture's counter at system cycle ``t``, or a tick less (it
    ticks every CYCLES_PER_TICK of its cycles, DIV system cycles each)."""
    return max(0, (t // DIV - 2) // boxpio.CYCLES_PER_TICK - 1)


def emulated_run(separation_ns: int, pairs, per_pair: int, rng: random.Random):
    """One run of the driver in the emulator over ``pairs`` of input bits
    (first, second), ``per_pair`` rounds in the box's order, each trial at
    a random phase: (the trials asked, the box's stream, its counter at
    the end). The stream is what the firmware sends: each trial's marker
    (its counter before the driver starts) and then the press stamps the
    capture program pushed until the next trial's marker."""
    cycles = separation_ns // CYCLE_NS
    asked = certificate.trials(pairs, separation_ns, per_pair)
    trace, marks = [], []
    t = 300                                        # the capture's first sample is pushed
    for k, tr in enumerate(asked):
        a0, b0, end0 = driver_trace(cycles, tr.first, tr.second)
        assert b0 - a0 == cycles, (separation_ns, b0 - a0)
        t += rng.randrange(boxpio.CYCLES_PER_TICK * DIV)     # a random phase
        marks.append(certificate.Marker(k, tr.first, tr.second, separation_ns, _tick_at(t)))
        trace.append((t + a0, t + b0, t + end0, tr.first, tr.second))
        t += end0 + GAP_CYCLES
    stamps, prev = [], IDLE
    for sample, tick in capture(trace, t):
        fell = prev & ~sample
        stamps += [(tick, bit) for bit in range(6) if fell >> bit & 1]
        prev = sample
    stream, i = [], 0
    for k, m in enumerate(marks):
        stream.append(m)
        nxt = marks[k + 1].tick if k + 1 < len(marks) else math.inf
        while i < len(stamps) and stamps[i][0] < nxt:
            stream.append(stamps[i])
            i += 1
    return asked, stream, _tick_at(t)


def certify_separation(separation_ns: int, trials: int, rng: random.Random) -> Row:
    """Buzzers 1 then 2 only, ``trials`` times (a row of the table)."""
    asked, stream, end = emulated_run(separation_ns, [(0, 1)], trials, rng)
    hz = boxpio.tick_hz(SYSCLK)
    v = certificate.judge(asked, stream, hz, (0, 1), end)
    return Row(**certificate.rows(asked, v, hz)[0])


def all_pairs(bits=range(6)) -> list[tuple[int, int]]:
    """Every ordered pair of the buzzers' input bits, in the box's order."""
    return certificate.ordered_pairs(bits)


def row(separation_ns: int, stamped: list[int], tick_hz: int) -> Row:
    """A table row from stamped separations (B - A, in ticks)."""
    us = [s * 1_000_000 / tick_hz for s in stamped]
    return Row(separation_ns, len(us), min(us), statistics.fmean(us), max(us),
               statistics.pstdev(us), sum(1 for s in stamped if s > 0) / len(us))


def certify_box_verdict(src, separations_ns=SHORT_NS, trials: int = 1000):
    """The certificate from a real box (a pico source in raw mode): every
    ordered pair of the box's buzzers driven in turn, ``trials`` a
    separation shared among the pairs; the rows and the judge's verdict."""
    rows, verdicts = [], []
    hz = src.hello.tick_hz
    bits = sorted(src.bit_buzzer)
    pairs = all_pairs(bits)
    per_pair = -(-trials // len(pairs))
    for s in separations_ns:
        run = src.certify_run(s, per_pair, bits)
        if run is None:
            raise RuntimeError(f"the box did not run the fairness driver at {s} ns (firmware "
                               f"before 1.1 drives buzzers 1 and 2 only: update the box)")
        stream, end = run
        asked = certificate.trials(pairs, s, per_pair)
        v = certificate.judge(asked, stream, hz, bits, end)
        rows.append(Row(**certificate.rows(asked, v, hz)[0]))
        verdicts.append(v)
    return rows, certificate.merge(verdicts)


def certify_box(src, separations_ns=SHORT_NS, trials: int = 1000) -> list[Row]:
    """The rows of :func:`certify_box_verdict`."""
    return certify_box_verdict(src, separations_ns, trials)[0]


# ---------------------------------------------------------------------------
# Boxes for the judge: an honest one and deliberately unfair ones, each a
# function of the trials asked and a random source giving its stream as
# groups (a trial's marker or None, the stamps sent after it) and its
# counter at the end (times in ns; a 1 MHz tick like the box's)

BOX_TICK_HZ = 1_000_000
BOX_GAP_NS = 3_000_000            # firmware/boxcore.py: CERT_GAP_US between trials


def _tick(ns: float) -> int:
    return int(ns * BOX_TICK_HZ // 10**9)


def honest_box(asked, rng: random.Random, start_ns: int = 10**9, drift: float = 0.0,
               lower_wins: bool = False):
    """Each trial's marker, then its two presses stamped on a tick (a
    random phase: within a tick of the truth) in the order they happened,
    the driver starting 20 to 120 us after the marker; ``drift``: the
    stamps' clock runs that much fast against the markers'; ``lower_wins``:
    a tie goes to the lower bit."""
    groups, t0 = [], start_ns
    for k, t in enumerate(asked):
        at = t0 + 20_000 + rng.randrange(100_000)
        ta, tb = _tick(at * (1 + drift)), _tick((at + t.separation_ns) * (1 + drift))
        if lower_wins and ta == tb:
            ta, tb = (ta, tb + 1) if t.first < t.second else (ta + 1, tb)
        mark = certificate.Marker(k, t.first, t.second, t.separation_ns, _tick(t0))
        groups.append((mark, sorted([(ta, t.first), (tb, t.second)], key=lambda s: s[0])))
        t0 += BOX_GAP_NS + t.separation_ns
    return groups, _tick(t0)


def stream_of(groups) -> list:
    """The box's stream from its groups: each marker, then its stamps."""
    return [x for mark, stamps in groups for x in ([mark] if mark else []) + stamps]


def _each(box, f):
    """``box`` with each group's stamps passed through ``f(trial, stamps)``."""
    def unfair(asked, rng):
        groups, end = box(asked, rng)
        return [(m, f(k, st)) for k, (m, st) in enumerate(groups)], end
    return unfair


def _b_first(k, st):
    (ta, a), (_, b) = st
    return [(ta - 1, b), (ta, a)]


def _swap_groups(asked, rng):
    groups, end = honest_box(asked, rng)
    for k in range(0, len(groups) - 1, 97):
        (m1, s1), (m2, s2) = groups[k], groups[k + 1]
        groups[k], groups[k + 1] = (m1, s2), (m2, s1)
    return groups, end


UNFAIR_BOXES = {
    "b_always_a_tick_first": _each(honest_box, _b_first),
    "one_buzzer_5us_late": _each(honest_box, lambda k, st: sorted(
        [(tk + 5 * (b == 4), b) for tk, b in st], key=lambda s: s[0])),
    "ties_to_the_lower_buzzer": lambda asked, rng: honest_box(asked, rng, lower_wins=True),
    "10pct_of_trials_lost": _each(honest_box, lambda k, st: [] if k % 10 == 3 else st),
    "a_duplicated_stamp": _each(honest_box, lambda k, st: st + st[-1:] if k == 50 else st),
    "swapped_buzzer_ids": _each(honest_box, lambda k, st: [(tk, {1: 2, 2: 1}.get(b, b))
                                                           for tk, b in st]),
    "a_drifting_clock": lambda asked, rng: honest_box(asked, rng, drift=0.01),
    "separation_2_ticks_long": _each(honest_box, lambda k, st: [st[0], (st[1][0] + 2, st[1][1])]),
    "stamps_out_of_order": _swap_groups,
    "no_trial_markers": lambda asked, rng: ([(None, st) for _, st in honest_box(asked, rng)[0]],
                                            None),
}


def judge_box(box, separations_ns=SHORT_NS, per_pair: int = 4, seed: int = 1, bits=range(6)):
    """The judge's verdict on ``box`` (see UNFAIR_BOXES): one run a
    separation, every ordered pair of ``bits`` driven ``per_pair`` times."""
    rng = random.Random(seed)
    verdicts = []
    for s in separations_ns:
        asked = certificate.trials(all_pairs(bits), s, per_pair)
        groups, end = box(asked, rng)
        verdicts.append(certificate.judge(asked, stream_of(groups), BOX_TICK_HZ, list(bits), end))
    return certificate.merge(verdicts)


def certificate_path() -> Path:
    """Where the certificate is kept (companion/pico/certificate.py: the host
    console reads it from there)."""
    return certificate.path()


def save(rows: list[Row], where: str, path: Path | None = None,
         verdict: certificate.Verdict | None = None) -> Path:
    """Keep the certificate with its date (UTC) and where it came from;
    with the judge's ``verdict`` (version 2: certified or not, the reasons,
    the ties per buzzer), a refused one has no fair separation."""
    path = path or certificate_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "where": where, "fair_separation_us": fair_separation_us(rows, verdict),
           "rows": [r.__dict__ for r in rows]}
    if verdict is not None:
        doc.update(version=2, certified=verdict.certified, reasons=list(verdict.reasons),
                   ties={str(b + 1): n for b, n in sorted(verdict.ties.items())})
    path.write_text(json.dumps(doc, indent=1))
    return path


def last(path: Path | None = None) -> str | None:
    """The last certificate kept, as text with its date (None: none yet)."""
    path = path or certificate_path()
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    rows = [Row(**r) for r in doc["rows"]]
    tail = {True: "\nCERTIFIED", False: "\nREFUSED:\n" + "\n".join(
        f"  {r}" for r in doc.get("reasons", []))}.get(doc.get("certified"), "")
    return f"certificate of {doc['date']} ({doc['where']}):\n" + table(rows) + tail


def certify(separations_ns=SHORT_NS, trials: int = 1000, seed: int = 1, bits=range(6)):
    """The emulated certificate over every ordered pair of ``bits``,
    ``trials`` a separation shared among the pairs: (rows, verdict)."""
    rng = random.Random(seed)
    pairs = all_pairs(bits)
    hz = boxpio.tick_hz(SYSCLK)
    rows, verdicts = [], []
    for s in separations_ns:
        asked, stream, end = emulated_run(s, pairs, -(-trials // len(pairs)), rng)
        v = certificate.judge(asked, stream, hz, list(bits), end)
        rows.append(Row(**certificate.rows(asked, v, hz)[0]))
        verdicts.append(v)
    return rows, certificate.merge(verdicts)


def fair_separation_us(rows: list[Row], verdict: certificate.Verdict | None = None
                       ) -> float | None:
    """The smallest separation ordered right in every trial, with every
    larger one also right every time (the console checks a kept
    certificate against the same rule); None when the ``verdict`` refused."""
    if verdict is not None and not verdict.certified:
        return None
    return certificate.fair_separation_us([r.__dict__ for r in rows])


def table(rows: list[Row], verdict: certificate.Verdict | None = None) -> str:
    head = (" separation trials   min us   mean us   max us   sd us  ordered\n")
    body = "\n".join(r.line() for r in rows)
    fair = fair_separation_us(rows, verdict)
    tail = (f"\nordered right every time from {fair:g} us" if fair is not None
            else "\nno separation ordered right every time")
    if verdict is not None:
        tail += "\nties (driven first, stamped tied): " + ", ".join(
            f"buzzer {b + 1}: {n}" for b, n in sorted(verdict.ties.items()))
        tail += ("\nCERTIFIED" if verdict.certified
                 else "\nREFUSED:\n" + "\n".join(f"  {r}" for r in verdict.reasons))
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
