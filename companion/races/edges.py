"""The values buzzer sources produce and referees judge.

Two kinds of edge, distinct in the types, because a buzzer is not a player:

* :class:`ButtonEdge` is what an edge *source* emits: ``buzzer`` is the id of
  the physical button (a :data:`BuzzerId`, e.g. ``"1"`` or ``"Ana"`` on a demo
  table). A source knows nothing about who sits at which button.
* :class:`Edge` is what the :class:`~companion.races.referee.Referee` and the
  session judge: ``player`` is a :data:`PlayerName`. The session maps each
  ButtonEdge to an Edge through the game's seating (buzzer id -> player).

Both are stamped on the Pi's monotonic clock in integer nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NewType

#: The id of one physical buzzer, as a source names it (a pin map slot id).
BuzzerId = NewType("BuzzerId", str)
#: The name of a player at the table, as the referee and the game name them.
PlayerName = NewType("PlayerName", str)


class _JsonEdge:
    """The JSON form both edges share: ``{<who>: ..., "edge": "press" |
    "release", "t_ns": int}``, where ``<who>`` is the class's ``WHO`` field."""

    __slots__ = ()
    WHO: ClassVar[str]

    def to_json(self) -> dict:
        return {self.WHO: getattr(self, self.WHO),
                "edge": "press" if self.pressed else "release", "t_ns": self.t_ns}

    @classmethod
    def from_json(cls, obj: dict):
        """Inverse of :meth:`to_json`; raises ValueError naming the bad field."""
        if not isinstance(obj, dict):
            raise ValueError("an edge must be a JSON object")
        who = obj.get(cls.WHO)
        if not isinstance(who, str) or not who:
            raise ValueError(f"'{cls.WHO}' must be a non-empty string")
        kind = obj.get("edge")
        if kind not in ("press", "release"):
            raise ValueError(f"'edge' must be 'press' or 'release', not {kind!r}")
        t_ns = obj.get("t_ns")
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise ValueError("'t_ns' must be an integer number of nanoseconds")
        if t_ns < 0:
            raise ValueError("'t_ns' must not be negative")
        return cls(who, kind == "press", t_ns)


@dataclass(frozen=True, slots=True)
class Edge(_JsonEdge):
    """One change of one player's buzzer, stamped on the Pi's monotonic clock.

    ``t_ns`` is an integer count of nanoseconds (never a float), ``pressed``
    is True for a press and False for a release.

    >>> Edge("ana", True, 1_500_000)
    Edge(player='ana', pressed=True, t_ns=1500000)
    """

    WHO: ClassVar[str] = "player"
    player: PlayerName
    pressed: bool
    t_ns: int


@dataclass(frozen=True, slots=True)
class ButtonEdge(_JsonEdge):
    """One change of one physical buzzer, as an edge source reports it.

    >>> e = ButtonEdge("2", True, 7_000)
    >>> e, ButtonEdge.from_json(e.to_json()) == e
    (ButtonEdge(buzzer='2', pressed=True, t_ns=7000), True)
    >>> e.as_edge("Bo")
    Edge(player='Bo', pressed=True, t_ns=7000)
    """

    WHO: ClassVar[str] = "buzzer"
    buzzer: BuzzerId
    pressed: bool
    t_ns: int

    def as_edge(self, player: str) -> Edge:
        """The same change, said of the player seated at this buzzer."""
        return Edge(PlayerName(player), self.pressed, self.t_ns)


@dataclass(frozen=True, slots=True)
class VirtualEdge:
    """A phone's on-screen buzzer, stamped when the server received it
    (millisecond accuracy): it goes through the same pipeline and desk as a
    pin's edge (the table's one way in, :meth:`companion.buzzers.pipeline.Pipeline.call`), marked
    virtual in the race record. ``pressed`` None is a tap (press and
    release); ``seq`` is the page's increasing number (by one) for this
    buzzer's changes, to put overtaken requests back in order; ``page`` the
    page that sent it (its kind and the id it drew when it loaded): each
    page's numbers are its own, so no page can make another's presses look
    old.

    >>> VirtualEdge("Bo", None, 7_000, seq=3).source
    'virtual'
    """

    player: PlayerName
    pressed: bool | None
    t_ns: int
    seq: int | None = None
    page: str | None = None
    source: ClassVar[str] = "virtual"


__all__ = ["BuzzerId", "PlayerName", "Edge", "ButtonEdge", "VirtualEdge"]
