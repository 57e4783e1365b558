"""Edge sources: the one seam between buzzer hardware and the referee.

Every source turns its hardware into :class:`~companion.edges.Edge` values on
the Pi's monotonic clock and hands them to a sink, gpiozero-style: one small
interface, a GPIO one, a mock one (gpiozero's MockFactory), a virtual one
(phones), chosen by configuration.
"""

from __future__ import annotations

import time
from typing import Callable

from ..edges import Edge

Sink = Callable[[Edge], None]


class EdgeSource:
    """Base class. Subclasses call ``self._emit(edge)`` for every raw edge.

    ``precision_ns`` says how well the source can time an edge (1 000 for
    the kernel's GPIO timestamps, 1 000 000 for a phone tap).
    """

    precision_ns = 1_000

    def __init__(self, players):
        self.players = tuple(players)
        self._sink: Sink | None = None

    def start(self, sink: Sink) -> None:
        self._sink = sink

    def stop(self) -> None:
        self._sink = None

    def now_ns(self) -> int:
        """Now on the clock this source stamps edges with."""
        return time.monotonic_ns()

    def _emit(self, edge: Edge) -> None:
        sink = self._sink
        if sink is not None:
            sink(edge)

    def close(self) -> None:
        self.stop()


# The public names, gpiozero-style (imported after EdgeSource, which they use).
from .gpio import GpioSource  # noqa: E402
from .mock import ClockedMockFactory, MockSource  # noqa: E402
from .feedback import Feedback, FeedbackSettings  # noqa: E402
from .runner import BuzzerRunner, open_source  # noqa: E402

__all__ = ["Edge", "EdgeSource", "Sink", "GpioSource", "MockSource", "ClockedMockFactory",
           "Feedback", "FeedbackSettings", "BuzzerRunner", "open_source"]
