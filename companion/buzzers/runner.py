"""A referee on the pipeline: :class:`BuzzerRunner`, for a table with no session.

:class:`BuzzerRunner` is the one :class:`~companion.buzzers.pipeline.Pipeline`
with a bare :class:`~companion.races.referee.Referee` as its consumer (through
:class:`~companion.buzzers.pipeline.RefereeConsumer`: buzzer ids are the
player names). ``companion buzz``, the hardware harness and the benchmarks
use it; ``companion serve`` runs the same pipeline with the table session.

>>> from companion.races.referee import Referee, RaceSpec
>>> from companion.buzzers.mock import MockSource
>>> src = MockSource(["ana", "bo"], start_ns=0)
>>> ref = Referee(src.buzzers)
>>> run = BuzzerRunner(src, ref)
>>> _ = run.start(thread=False)             # a test drives it with pump()
>>> race = run.start_race(RaceSpec("first-press", src.buzzers, arm_ns=0))
>>> src.press("bo", 5_000_000); src.press("ana", 7_000_000)
>>> run.pump(100_000_000)
2
>>> race.verdict.winner
'bo'
>>> run.stop(); src.close()
"""

from __future__ import annotations

from typing import Iterable

from ..races.referee import LiveRace, RaceSpec, Referee
from .base import EdgeSource, open_source  # noqa: F401  (re-exported for older callers)
from .gpio import on_a_pi  # noqa: F401
from .pipeline import (SPIN_NS, Pipeline, PipelineError, Pollable, RefereeConsumer,  # noqa: F401
                       wait_until)


class BuzzerRunner(Pipeline):
    """A :class:`Pipeline` from ``source`` to ``referee`` on the source's
    clock. ``feedback`` is attached to the referee's verdicts and faults and
    polled; ``pollables`` are polled too (a keyboard's pending releases)."""

    def __init__(self, source: EdgeSource, referee: Referee, *, feedback=None,
                 pollables: Iterable[Pollable] = (), idle_s: float | None = None,
                 min_sleep_s: float = 0.001, max_errors: int = 1000,
                 name: str = "buzzer-runner"):
        self.referee = referee
        consumer = RefereeConsumer(referee, clock=source.now_ns)
        super().__init__(source, consumer, feedback=feedback, pollables=pollables,
                         idle_s=idle_s, min_sleep_s=min_sleep_s, max_errors=max_errors,
                         name=name)

    def start_race(self, spec: RaceSpec, announced: bool = False) -> LiveRace:
        """Start ``spec`` as the live race. Edges already queued are fed first,
        so a press from before this call cannot land in the new race.
        ``announced``: the box's cue counts down to the arm time."""
        return self.call(self.consumer.start_race, spec, announced)


__all__ = ["BuzzerRunner", "RefereeConsumer", "Pipeline", "wait_until",
           "SPIN_NS", "open_source", "on_a_pi"]
