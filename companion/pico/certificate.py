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
``max_us``, ``sd_us``, ``ordered``).

>>> load(Path("/nonexistent/pico-fairness.json")) is None
True
"""

from __future__ import annotations

import datetime
import json
import math
import os
import stat
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
    if fair != fair_separation_us(rows):
        raise ValueError("fair_separation_us is not what its rows give")
    return {"date": doc["date"], "where": doc.get("where", "")[:200],
            "fair_separation_us": fair, "rows": rows}
