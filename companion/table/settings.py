"""The table's settings: the race timings and the referee's, with their defaults.

One dict of plain values (milliseconds, microseconds, flags) that a table
session runs with (docs/session-api.md, "Settings"): :data:`DEFAULT_SETTINGS`
lists every one and its default, :func:`table_settings` checks a table's
overrides against it. ``companion serve --set name=value`` changes one
(:mod:`companion.tableconfig` parses it); the race timings' defaults are
read from :class:`companion.races.arming.ArmingSettings`, where they are
written once.

>>> table_settings({"lockout_ms": 300})["lockout_ms"]
300
>>> try:
...     table_settings({"lockout": 300})
... except ValueError as e:
...     print(str(e).split(";")[0])
unknown session setting(s) ['lockout']
"""

from __future__ import annotations

from typing import Any

from ..races.arming import ArmingSettings
from ..races.referee import DEFAULT_HOLD_NS

MS = 1_000_000
_RACE = ArmingSettings()    # the race timings' defaults are written once, there
#: The table's settings and their defaults (docs/session-api.md, "Settings");
#: ``companion serve --set name=value`` changes one.
DEFAULT_SETTINGS: dict[str, Any] = {
    "debounce_ms": 20,          # leading-edge debounce per buzzer
    "hold_ms": DEFAULT_HOLD_NS // MS,  # decision hold after the deciding edge
    "stuck_ms": 10_000,         # a buzzer held longer is a fault
    "tie_window_us": 0,         # presses this close to the first are a tie
    "lockout_ms": None,         # a false starter may come back after this
    # the race timings (companion.races.arming.ArmingSettings holds their defaults)
    "quiet_gap_ms": _RACE.quiet_gap_ns // MS,          # the console groups presses as one burst
    "claim_window_ms": _RACE.claim_window_ns // MS,    # a card takes presses this far before its log
    "wait_ms": _RACE.wait_ns // MS,                    # ... and this after its arm time (deadline)
    "runner_up_ms": _RACE.runner_up_ns // MS,          # a first-press race keeps its runner-ups
    "min_gap_ms": _RACE.min_gap_ns // MS,              # two cards' first presses are never closer
    "confirm_ms": _RACE.confirm_ns // MS,              # an older claimed press asks the host
    "log_lag_ms": _RACE.log_lag_ns // MS,              # the host logs within this of the first slam
    "flipper_arms": _RACE.flipper_arms,                # the flipper's press marks the flip
    # the race judge (companion.races.attribution): how sure a reading must be to be
    # taken without asking the host, and the players' median reaction
    "race_sure_permille": round(_RACE.people.threshold * 1000),
    "react_median_ms": (_RACE.people.floor_ns + _RACE.people.median_ns) // MS,
    # a card the camera logged: its log lies at most this long after its face could be seen
    "camera_lag_ms": _RACE.people.camera_lag_ns // MS,
    "countdown_ms": _RACE.countdown_ns // MS,          # announced race: countdown before GO
    "announced_wait_ms": _RACE.announced_wait_ns // MS,  # announced race: deadline after GO
    "auto_start": False,        # start announced races as soon as the game asks for one
    "recent_faults": 20,        # faults kept for the page
}


def table_settings(overrides: dict | None = None) -> dict:
    """The defaults with ``overrides``; ValueError naming an unknown one."""
    unknown = set(overrides or {}) - set(DEFAULT_SETTINGS)
    if unknown:
        raise ValueError(f"unknown session setting(s) {sorted(unknown)}; known: "
                         f"{', '.join(DEFAULT_SETTINGS)}")
    return {**DEFAULT_SETTINGS, **(overrides or {})}


__all__ = ["DEFAULT_SETTINGS", "table_settings"]
