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

import datetime
import json
import math
import os
import stat
from dataclasses import astuple, dataclass
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
# The judge: the trials asked for against the box's stream of trial markers
# and press stamps (pure: no clock, no I/O). Each trial's stamps are those
# between its marker and the next: the box sends a trial's marker after every
# earlier trial's stamps and before its own (firmware/boxcore.py: cert_step),
# so the framing never depends on when anything happened.

MAX_REASONS = 12


@dataclass(frozen=True)
class Trial:
    """One trial asked of the driver: input bit ``first`` pulled low, bit
    ``second`` ``separation_ns`` later."""

    first: int
    second: int
    separation_ns: int


@dataclass(frozen=True)
class Marker:
    """The box's word that trial ``trial`` starts (protocol.TrialMark):
    what it drives and ``tick``, its counter before it drove them."""

    trial: int
    first: int
    second: int
    separation_ns: int
    tick: int


@dataclass(frozen=True)
class Verdict:
    """What the stamps say: ``certified`` only with no ``reasons``.
    ``stamped`` has each trial's stamped separation (second - first, in
    ticks; None: the trial is lost or spoiled), in the trials' order;
    ``ties`` counts, per input bit, the trials it was driven first in and
    the stamps tied."""

    certified: bool
    reasons: tuple[str, ...]
    stamped: tuple[int | None, ...]
    ties: dict[int, int]


def ordered_pairs(bits) -> list[tuple[int, int]]:
    """Every ordered pair of input ``bits``, by first then second (the
    order the box's driver takes them in)."""
    bits = sorted(bits)
    return [(a, b) for a in bits for b in bits if a != b]


def trials(pairs, separation_ns: int, per_pair: int) -> list[Trial]:
    """The trials of one CERTIFY run: trial k drives the k-th of ``pairs``
    mod their number (the box's order), ``per_pair`` rounds."""
    pairs = list(pairs)
    return [Trial(*pairs[k % len(pairs)], separation_ns) for k in range(per_pair * len(pairs))]


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


def _frame(asked: list[Trial], stream, faults: _Faults):
    """Each asked trial's marker and stamps: the (tick, bit) stamps after
    its marker and before the next marker. A stamp before any marker, a
    marker out of turn or not what was asked, ticks going backwards: faults."""
    got: list[list[tuple[int, int]]] = [[] for _ in asked]
    marks: list[Marker | None] = [None] * len(asked)
    cur, last, prev = None, -1, None
    for item in stream:
        if isinstance(item, Marker):
            k = item.trial
            cur = k if last < k < len(asked) else None
            if cur is None:
                faults.add("a trial marker out of turn (repeated, backwards or beyond the run)",
                           f"marker {k} after {last}")
                continue
            last = k
            marks[k] = item
            if (item.first, item.second, item.separation_ns) != astuple(asked[k]):
                faults.add("a trial driven other than asked",
                           f"{_name(asked[k], k)}: the box drove bit {item.second} "
                           f"{item.separation_ns / 1000:g} us after bit {item.first}")
            continue
        tick, bit = item
        if prev is not None and tick < prev:
            faults.add("stamps out of order", f"tick {tick} sent after tick {prev}")
        prev = tick
        if cur is None:
            faults.add("a stamp outside any trial (before the first marker, or after a marker "
                       "out of turn: firmware before 1.1 sends no markers)",
                       f"bit {bit} at tick {tick}")
            continue
        got[cur].append((tick, bit))
    return got, marks


def _spans(marks: list[Marker | None], got, end_tick: int | None, faults: _Faults) -> None:
    """Every stamp of a trial lies between its marker's tick and the next
    marker's (or ``end_tick``, the box's counter when it said the run was
    done): a stamp elsewhere is on another clock, or the box held it back."""
    seen = [(k, m) for k, m in enumerate(marks) if m is not None]
    for i, (k, m) in enumerate(seen):
        hi = seen[i + 1][1].tick if i + 1 < len(seen) else end_tick
        for tick, bit in got[k]:
            if tick < m.tick or (hi is not None and tick > hi):
                faults.add("a stamp outside its trial's span (a clock that jumps or drifts, or "
                           "a stamp held back)",
                           f"trial {k}: bit {bit} at tick {tick}, the trial from tick {m.tick} "
                           f"to {hi}")


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
        faults.add("a trial lost (a driven buzzer not stamped, or no marker)", _name(trial, k))
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


def _late(asked, stamped, tick_hz, faults: _Faults) -> None:
    """A buzzer whose stamps run late (or early) against the others: the
    mean of (stamped - driven) over its trials, as the second buzzer, and
    of its negation as the first."""
    err: dict[int, list[float]] = {}
    for t, s in zip(asked, stamped):
        if s is not None:
            e = s - t.separation_ns * tick_hz / 1e9
            err.setdefault(t.second, []).append(e)
            err.setdefault(t.first, []).append(-e)
    means = sorted(((sum(es) / len(es), bit) for bit, es in err.items()), key=lambda m: -abs(m[0]))
    if means and abs(means[0][0]) >= 1:
        mean, bit = means[0]
        faults.add("a buzzer stamped late against the others",
                   f"bit {bit} {mean:+.1f} ticks on average over {len(err[bit])} trials")


def _tie_bias(asked, stamped, faults: _Faults) -> None:
    """Ties must not lean: at one separation, a pair tied as often with
    either buzzer driven first (a binomial allowance)."""
    n: dict[tuple, list[int]] = {}
    for t, s in zip(asked, stamped):
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


def judge(asked: list[Trial], stream, tick_hz: int, bits, end_tick: int | None = None
          ) -> Verdict:
    """The trials ``asked`` of the driver against the box's ``stream``, in
    the order the box sent it: :class:`Marker` values and press stamps
    (tick, input bit). Certified only when every ordered pair of ``bits``
    was asked at every separation, every trial's marker came in turn and
    says what was asked, its stamps (those before the next marker) are one
    of each driven buzzer, inside the trial's span (up to ``end_tick`` for
    the last), in the driven order and within one tick of the driven
    separation, no buzzer runs late, and ties do not lean."""
    faults = _Faults()
    seps = sorted({t.separation_ns for t in asked})
    driven = {(t.separation_ns, t.first, t.second) for t in asked}
    missing = [(s, a, b) for s in seps for a, b in ordered_pairs(bits) if (s, a, b) not in driven]
    if not asked or missing:
        faults.add("ordered pairs of buzzers never driven",
                   ", ".join(f"{a}->{b} at {s / 1000:g} us" for s, a, b in missing[:4])
                   or "no trials")
    got, marks = _frame(asked, stream, faults)
    _spans(marks, got, end_tick, faults)
    stamped = tuple(None if m is not None and (m.first, m.second) != (t.first, t.second)
                    else _score(t, g, t.separation_ns * tick_hz / 1e9, k, faults)
                    for k, (t, g, m) in enumerate(zip(asked, got, marks)))
    _late(asked, stamped, tick_hz, faults)
    _tie_bias(asked, stamped, faults)
    ties: dict[int, int] = {b: 0 for b in bits}
    for t, s in zip(asked, stamped):
        if s == 0:
            ties[t.first] = ties.get(t.first, 0) + 1
    reasons = tuple(faults.reasons()[:MAX_REASONS])
    return Verdict(not reasons, reasons, stamped, ties)


def rows(asked: list[Trial], verdict: Verdict, tick_hz: int) -> list[dict]:
    """The table per separation (ROW_KEYS): every trial driven counts, a
    lost one as not ordered; ``ordered`` is the share stamped in the driven
    order."""
    out = []
    for sep in sorted({t.separation_ns for t in asked}):
        ss = [s for t, s in zip(asked, verdict.stamped) if t.separation_ns == sep]
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
