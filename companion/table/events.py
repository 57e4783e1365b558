"""What a table tells the world: one stream of typed events.

The table session publishes every change as one of these, in order, outside
its lock (:class:`companion.table.outbox.Outbox`). Two kinds of listener follow
the same stream:

* the pages (the SSE broker, the league, the terminal): they read each
  event's :meth:`TableEvent.page_update`, the JSON update of
  docs/session-api.md ("Updates"); an event with none (a verdict logged:
  the state that follows carries it) is not theirs;
* the buzzer box's lights (:class:`companion.buzzers.feedback.Feedback`):
  they read the typed fields (who won a logged race, which buzzer is stuck,
  when GO is) and never the pages' JSON.

Pure data: frozen dataclasses, no clock, no I/O.

>>> from companion.races.referee import Verdict
>>> ev = VerdictLogged(7, eid=7, reason="table", verdict=Verdict("first-press", winner="bo"))
>>> ev.page_update() is None, ev.verdict.winner
(True, 'bo')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from ..races.referee import Verdict


@dataclass(frozen=True)
class TableEvent:
    """One change at the table, at the log's ``version``."""

    kind: ClassVar[str] = ""
    version: int

    def page_update(self) -> dict | None:
        """The pages' JSON update (None: nothing for the pages)."""
        return {"id": None, "type": self.kind, "version": self.version,
                "data": getattr(self, "data", None)}


@dataclass(frozen=True)
class NewState(TableEvent):
    """A new state of the table: an event logged (``eid``), or a new game, a
    resume, a player's colour or buzzer (``eid`` None). ``data`` is the full
    snapshot plus ``event`` and ``line``; ``seating`` each player's buzzer."""

    kind: ClassVar[str] = "state"
    eid: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    game_id: int | None = None
    seating: Mapping[str, str | None] = field(default_factory=dict)

    def page_update(self) -> dict:
        return {"id": self.eid, "type": "state", "version": self.version,
                "data": self.data}


@dataclass(frozen=True)
class RaceShown(TableEvent):
    """The race as the pages see it moved on (a phase, the provisional order,
    a verdict not yet logged, a late runner-up); ``data`` is its view."""

    kind: ClassVar[str] = "race"
    data: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RaceArmed(RaceShown):
    """A race began, or was armed again (at the buzzer box's own GO)."""

    announced: bool = False
    go_ns: int | None = None


@dataclass(frozen=True)
class Countdown(RaceArmed):
    """An announced race counting down: presses count from ``go_ns``."""


@dataclass(frozen=True)
class Press(TableEvent):
    """An accepted edge of a seated player (``data``: the pages' press)."""

    kind: ClassVar[str] = "press"
    player: str = ""
    pressed: bool = True
    t_ns: int = 0
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VerdictLogged(TableEvent):
    """A race the desk judged, accepted by the game and logged as ``eid``.
    A verdict the game refused is never one of these. The pages learn of
    it from the :class:`NewState` that follows."""

    kind: ClassVar[str] = "verdict"
    eid: int = 0
    reason: str | None = None
    verdict: Verdict | None = None

    def page_update(self) -> None:
        return None


@dataclass(frozen=True)
class Fault(TableEvent):
    """A fault: ``fault`` its kind (``stuck``, ``cleared``, ``race``, a
    source's kind...), the ``player`` and/or physical ``buzzer`` it concerns;
    ``data`` as the pages get it."""

    kind: ClassVar[str] = "fault"
    fault: str = ""
    player: str | None = None
    buzzer: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BuzzerStatus(TableEvent):
    """The buzzer source's new status (``data``: the snapshot's ``buzzers``)."""

    kind: ClassVar[str] = "buzzers"
    data: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Queued(TableEvent):
    """A host event waits behind the open race (``data``: event, line, queued)."""

    kind: ClassVar[str] = "queued"
    data: Mapping[str, Any] = field(default_factory=dict)


__all__ = ["BuzzerStatus", "Countdown", "Fault", "NewState", "Press", "Queued", "RaceArmed",
           "RaceShown", "TableEvent", "VerdictLogged"]
