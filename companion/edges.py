"""The one value every buzzer source produces."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Edge:
    """One change of one buzzer, stamped on the Pi's monotonic clock.

    ``t_ns`` is an integer count of nanoseconds (never a float), ``pressed``
    is True for a press and False for a release.

    >>> Edge("ana", True, 1_500_000)
    Edge(player='ana', pressed=True, t_ns=1500000)
    """

    player: str
    pressed: bool
    t_ns: int

    def to_json(self) -> dict:
        return {"player": self.player, "edge": "press" if self.pressed else "release",
                "t_ns": self.t_ns}

    @classmethod
    def from_json(cls, obj: dict) -> "Edge":
        """Inverse of :meth:`to_json`; raises ValueError naming the bad field."""
        if not isinstance(obj, dict):
            raise ValueError("an edge must be a JSON object")
        player = obj.get("player")
        if not isinstance(player, str) or not player:
            raise ValueError("'player' must be a non-empty string")
        kind = obj.get("edge")
        if kind not in ("press", "release"):
            raise ValueError(f"'edge' must be 'press' or 'release', not {kind!r}")
        t_ns = obj.get("t_ns")
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise ValueError("'t_ns' must be an integer number of nanoseconds")
        if t_ns < 0:
            raise ValueError("'t_ns' must not be negative")
        return cls(player, kind == "press", t_ns)
