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

import json
import os
from pathlib import Path

ROW_KEYS = ("separation_ns", "trials", "min_us", "mean_us", "max_us", "sd_us", "ordered")


def path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "companion" / "pico-fairness.json"


def load(where: Path | None = None) -> dict | None:
    """The last certificate kept, as saved; None when there is none or the
    file cannot be read as one (a damaged file is not shown as a result)."""
    p = where or path()
    try:
        doc = json.loads(p.read_text())
        rows = [{k: r[k] for k in ROW_KEYS} for r in doc["rows"]]
        return {"date": str(doc["date"]), "where": str(doc.get("where", "")),
                "fair_separation_us": doc.get("fair_separation_us"), "rows": rows}
    except (OSError, ValueError, KeyError, TypeError):
        return None
