"""Where the Pico box's last fairness certificate is kept, and reading it
back (an edge: it reads a file and the environment).

``python -m hardware.selftest --real --fairness`` measures the certificate
on the box and keeps it (``hardware/fairness.py``: ``save``); the host
console shows the last one with its date (``GET /api/host/certificate``).
The file is ``$XDG_STATE_HOME/companion/pico-fairness.json``, by default
``~/.local/state/companion/pico-fairness.json``: JSON with ``date`` (UTC,
ISO 8601), ``where`` (the box's port and firmware), ``fair_separation_us``
(the smallest separation ordered right every time, or null) and ``rows``
(per separation: ``separation_ns``, ``trials``, ``min_us``, ``mean_us``,
``max_us``, ``sd_us``, ``ordered``). Version 2 adds the judge's verdict
(:func:`judge`): ``certified`` (a refused one has a null
``fair_separation_us``), ``reasons`` and ``ties`` (per buzzer: the trials it
was driven first in and the stamps tied); a file without them is version 1,
from before the judge, shown with ``certified`` null.

>>> load(Path("/nonexistent/pico-fairness.json")) is None
True
"""

from __future__ import annotations

import bisect
import datetime
import json
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

ROW_KEYS = ("separation_ns", "trials", "min_us", "mean_us", "max_us", "sd_us", "ordered")
#: a certificate is a few hundred bytes; a larger file is not one
MAX_BYTES = 64 * 1024
MAX_ROWS = 64
#: no box resolves presses closer than a system clock cycle (5 ns at 200 MHz)
MIN_SEPARATION_NS = 5
#: a trial takes milliseconds: a million is a night's work
MAX_TRIALS = 1_000_000


def path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "companion" / "pico-fairness.json"


def fair_separation_us(rows: list[dict]) -> float | None:
    """The smallest separation ordered right in every trial, with every
    larger one also right every time (None: none)."""
    best = None
    for r in sorted(rows, key=lambda r: -r["separation_ns"]):
        if r["ordered"] < 1:
            break
        best = r["separation_ns"] / 1000
    return best


def load(where: Path | None = None) -> dict | None:
    """The last certificate kept, as saved; None when there is none or the
    file is not one: not a regular file (a FIFO would hang the console),
    over :data:`MAX_BYTES`, not JSON, a value of the wrong type, a
    separation no box resolves, more trials than a box runs, or a
    ``fair_separation_us`` its own rows do not give. A damaged or forged
    file is never shown as a result."""
    text = _read(where or path())
    if text is None:
        return None
    try:
        return _checked(json.loads(text))
    except (ValueError, KeyError, TypeError):
        return None


def _read(p: Path) -> str | None:
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        data = os.read(fd, MAX_BYTES + 1)
        return None if len(data) > MAX_BYTES else data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def _number(x, lo: float = -math.inf, hi: float = math.inf) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not lo <= x <= hi:
        raise ValueError(x)
    return x


def _row(r) -> dict:
    if not isinstance(r, dict):
        raise TypeError(r)
    out = {k: _number(r[k]) for k in ROW_KEYS}
    for key, lo, hi in (("separation_ns", MIN_SEPARATION_NS, 10**9), ("trials", 1, MAX_TRIALS)):
        if not isinstance(r[key], int) or not lo <= r[key] <= hi:
            raise ValueError(key)
    _number(r["ordered"], 0, 1)
    return out


def _checked(doc) -> dict:
    if not isinstance(doc, dict) or not isinstance(doc["date"], str) \
            or not isinstance(doc.get("where", ""), str):
        raise TypeError(doc)
    datetime.datetime.fromisoformat(doc["date"])
    rows = doc["rows"]
    if not isinstance(rows, list) or not 0 < len(rows) <= MAX_ROWS:
        raise ValueError("rows")
    rows = [_row(r) for r in rows]
    fair = doc.get("fair_separation_us")
    certified = doc.get("certified")             # version 2: the judge's verdict
    if certified is not None and not isinstance(certified, bool):
        raise TypeError("certified")
    if fair != (None if certified is False else fair_separation_us(rows)):
        raise ValueError("fair_separation_us is not what its rows and verdict give")
    reasons = doc.get("reasons", [])
    ties = doc.get("ties", {})
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons) \
            or not isinstance(ties, dict) or len(ties) > MAX_ROWS:
        raise TypeError("reasons or ties")
    return {"date": doc["date"], "where": doc.get("where", "")[:200],
            "fair_separation_us": fair, "rows": rows, "certified": certified,
            "reasons": [r[:300] for r in reasons[:MAX_REASONS]],
            "ties": {str(k)[:8]: int(_number(v, 0, MAX_TRIALS)) for k, v in ties.items()}}


# ---------------------------------------------------------------------------
# The judge: the driver's schedule against the box's stamps (pure: no clock,
# no I/O). Trials are framed by the schedule, never by sorting the stamps.

#: the box's fairness driver starts a trial every CERT_GAP_US plus the
#: separation (firmware/boxcore.py keeps the same number), on a fixed
#: schedule from the first trial
CERT_GAP_US = 3_000
#: how far a trial may start from its schedule (the box's loop is late by
#: up to about 1.3 ms in the simulated box) against the first trial; under
#: half the gap between trials, so no two trials' windows meet
BOX_WINDOW_NS = 1_450_000
MAX_REASONS = 12


@dataclass(frozen=True)
class Trial:
    """One trial of the driver: input bit ``first`` pulled low at ``at_ns``
    (from the run's first trial), bit ``second`` ``separation_ns`` later."""

    first: int
    second: int
    separation_ns: int
    at_ns: int


@dataclass(frozen=True)
class Verdict:
    """What the stamps say: ``certified`` only with no ``reasons``.
    ``stamped`` has each trial's stamped separation (second - first, in
    ticks; None: the trial is lost or spoiled), in the schedule's order;
    ``ties`` counts, per input bit, the trials it was driven first in and
    the stamps tied."""

    certified: bool
    reasons: tuple[str, ...]
    stamped: tuple[int | None, ...]
    ties: dict[int, int]


def box_schedule(pairs, separation_ns: int, trials_per_pair: int) -> list[Trial]:
    """The box's schedule for one CERTIFY run: ``trials_per_pair`` trials of
    each (first, second) in turn, one every CERT_GAP_US plus the separation."""
    period = (CERT_GAP_US + separation_ns // 1000) * 1000
    order = [p for p in pairs for _ in range(trials_per_pair)]
    return [Trial(a, b, separation_ns, k * period) for k, (a, b) in enumerate(order)]


class _Faults:
    """Counts of each kind of fault with its first example."""

    def __init__(self):
        self.kinds: dict[str, list] = {}

    def add(self, kind: str, example: str) -> None:
        self.kinds.setdefault(kind, [0, example])[0] += 1

    def reasons(self) -> list[str]:
        return [f"{what} ({n}x; first: {ex})" for what, (n, ex) in self.kinds.items()]


def _name(trial: Trial, k: int) -> str:
    return (f"trial {k}: buzzer bit {trial.second} {trial.separation_ns / 1000:g} us after "
            f"bit {trial.first}")


def _framed(schedule: list[Trial], stamps, tick_hz: int, window_ns: int, faults: _Faults):
    """:func:`_frame` with the earliest stamp in whichever of the first few
    trials frames the most trials with a stamp of each driven buzzer, in
    any order (the order is what is judged; the earliest on a tie): a
    first trial lost must not shift every trial onto its neighbour's."""
    def whole(first: int) -> int:
        got = _frame(schedule, stamps, tick_hz, window_ns, _Faults(), first)
        return sum(1 for t, g in zip(schedule, got)
                   if sorted(b for _, b in g) == sorted((t.first, t.second)))
    best = max(range(min(4, len(schedule))), key=lambda k: (whole(k), -k))
    return _frame(schedule, stamps, tick_hz, window_ns, faults, best)


def _frame(schedule: list[Trial], stamps, tick_hz: int, window_ns: int, faults: _Faults,
           first: int = 0):
    """Each trial's stamps: a stamp belongs to the trial whose window (its
    driven times, widened by ``window_ns``) holds it, counted from the
    earliest stamp (trial ``first``'s); a stamp in no window is a stray, one earlier than the one before
    it is out of order."""
    got: list[list[tuple[int, int]]] = [[] for _ in schedule]
    if not stamps:
        return got
    to_tick = lambda ns: ns * tick_hz / 1e9  # noqa: E731
    w = to_tick(window_ns)
    t0 = min(t for t, _ in stamps) - to_tick(schedule[first].at_ns)   # trial 0's start
    starts = [t0 + to_tick(t.at_ns) - w for t in schedule]
    prev = None
    for tick, bit in stamps:
        if prev is not None and tick < prev:
            faults.add("stamps out of order", f"tick {tick} sent after tick {prev}")
        prev = tick
        k = bisect.bisect_right(starts, tick) - 1
        if k < 0 or tick > starts[k] + 2 * w + to_tick(schedule[k].separation_ns):
            faults.add("a stamp in no trial's window (a drifting clock or a trial off "
                       "its schedule)", f"bit {bit} at tick {tick}")
            continue
        got[k].append((tick, bit))
    return got


def _score(trial: Trial, got, d: float, k: int, faults: _Faults) -> int | None:
    """The trial's stamped separation (second - first, ticks), or None when
    its stamps are not one press of each driven buzzer."""
    bits = [b for _, b in got]
    stray = sorted(set(bits) - {trial.first, trial.second})
    if stray:
        faults.add("a buzzer stamped that was not driven (swapped or crossed ids)",
                   f"{_name(trial, k)}: bit {stray[0]} stamped")
        return None
    n1, n2 = bits.count(trial.first), bits.count(trial.second)
    if not n1 or not n2:
        faults.add("a trial lost (a driven buzzer not stamped)", _name(trial, k))
        return None
    if n1 > 1 or n2 > 1:
        faults.add("a press stamped more than once", _name(trial, k))
        return None
    s = (next(t for t, b in got if b == trial.second) - next(t for t, b in got if b == trial.first))
    if s < 0:
        faults.add("the buzzer driven second stamped first",
                   f"{_name(trial, k)}: stamped {s} ticks apart")
    elif abs(s - d) > 1:
        faults.add("a stamped separation more than a tick off the driven one",
                   f"{_name(trial, k)}: stamped {s} ticks, driven {d:g}")
    return s


def _late(schedule, stamped, tick_hz, faults: _Faults) -> None:
    """A buzzer whose stamps run late (or early) against the others: the
    mean of (stamped - driven) over its trials, as the second buzzer, and
    of its negation as the first."""
    err: dict[int, list[float]] = {}
    for t, s in zip(schedule, stamped):
        if s is not None:
            e = s - t.separation_ns * tick_hz / 1e9
            err.setdefault(t.second, []).append(e)
            err.setdefault(t.first, []).append(-e)
    means = sorted(((sum(es) / len(es), bit) for bit, es in err.items()), key=lambda m: -abs(m[0]))
    if means and abs(means[0][0]) >= 1:
        mean, bit = means[0]
        faults.add("a buzzer stamped late against the others",
                   f"bit {bit} {mean:+.1f} ticks on average over {len(err[bit])} trials")


def _tie_bias(schedule, stamped, faults: _Faults) -> None:
    """Ties must not lean: at one separation, a pair tied as often with
    either buzzer driven first (a binomial allowance)."""
    n: dict[tuple, list[int]] = {}
    for t, s in zip(schedule, stamped):
        c = n.setdefault((t.separation_ns, t.first, t.second), [0, 0])
        c[0] += 1
        c[1] += s == 0
    for (sep, a, b), (na, ta) in n.items():
        if a > b or (sep, b, a) not in n:
            continue
        nb, tb = n[(sep, b, a)]
        p = (ta + tb) / (na + nb)
        allow = 4 * math.sqrt(p * (1 - p) * (1 / na + 1 / nb)) + 2 / min(na, nb)
        if abs(ta / na - tb / nb) > allow:
            faults.add("ties lean toward one buzzer",
                       f"{sep / 1000:g} us: bit {a} first tied {ta}/{na}, "
                       f"bit {b} first tied {tb}/{nb}")


def judge(schedule: list[Trial], stamps, tick_hz: int, bits, window_ns: int) -> Verdict:
    """The driver's ``schedule`` against the box's press ``stamps`` ((tick,
    input bit), in the order the box sent them): certified only when every
    ordered pair of ``bits`` was driven at every separation, every trial has
    one stamp of each driven buzzer in its window, in the driven order and
    within one tick of the driven separation, no buzzer runs late, and ties
    do not lean."""
    faults = _Faults()
    seps = sorted({t.separation_ns for t in schedule})
    driven = {(t.separation_ns, t.first, t.second) for t in schedule}
    missing = [(s, a, b) for s in seps for a in bits for b in bits
               if a != b and (s, a, b) not in driven]
    if not schedule or missing:
        faults.add("ordered pairs of buzzers never driven",
                   ", ".join(f"{a}->{b} at {s / 1000:g} us" for s, a, b in missing[:4])
                   or "no trials")
    got = _framed(schedule, stamps, tick_hz, window_ns, faults) if schedule else []
    stamped = tuple(_score(t, g, t.separation_ns * tick_hz / 1e9, k, faults)
                    for k, (t, g) in enumerate(zip(schedule, got)))
    _late(schedule, stamped, tick_hz, faults)
    _tie_bias(schedule, stamped, faults)
    ties: dict[int, int] = {b: 0 for b in bits}
    for t, s in zip(schedule, stamped):
        if s == 0:
            ties[t.first] = ties.get(t.first, 0) + 1
    reasons = tuple(faults.reasons()[:MAX_REASONS])
    return Verdict(not reasons, reasons, stamped, ties)


def rows(schedule: list[Trial], verdict: Verdict, tick_hz: int) -> list[dict]:
    """The table per separation (ROW_KEYS): every trial driven counts, a
    lost one as not ordered; ``ordered`` is the share stamped in the driven
    order."""
    out = []
    for sep in sorted({t.separation_ns for t in schedule}):
        ss = [s for t, s in zip(schedule, verdict.stamped) if t.separation_ns == sep]
        us = [s * 1_000_000 / tick_hz for s in ss if s is not None] or [0.0]
        mean = sum(us) / len(us)
        sd = math.sqrt(sum((u - mean) ** 2 for u in us) / len(us))
        out.append({"separation_ns": sep, "trials": len(ss), "min_us": min(us),
                    "mean_us": mean, "max_us": max(us), "sd_us": sd,
                    "ordered": sum(1 for s in ss if s is not None and s > 0) / len(ss)})
    return out


def merge(verdicts: list[Verdict]) -> Verdict:
    """One verdict from the runs' (one run a separation)."""
    kinds: dict[str, str] = {}            # one reason a kind: the first run's
    for r in (r for v in verdicts for r in v.reasons):
        kinds.setdefault(r.split(" (")[0], r)
    reasons = tuple(kinds.values())[:MAX_REASONS]
    ties: dict[int, int] = {}
    for v in verdicts:
        for b, n in v.ties.items():
            ties[b] = ties.get(b, 0) + n
    return Verdict(bool(verdicts) and not reasons, reasons or (() if verdicts else ("no runs",)),
                   tuple(s for v in verdicts for s in v.stamped), ties)
