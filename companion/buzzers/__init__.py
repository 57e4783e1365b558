"""Buzzer sources, the pipeline to the referee, and the box's lights.

The seam between buzzer hardware and the table is :class:`EdgeSource`
(:mod:`companion.buzzers.base`), gpiozero pin-factory style: one small base
class, sources found by name (``gpio``, ``mock``, ``pico``, ``none``: each
module here that declares one, plus ``companion.sources`` entry points) and
chosen in one place, :func:`open_source`. Every source reports
:class:`~companion.races.edges.ButtonEdge` values, faults and its status through one
:class:`SourceSink`.

Importing this package never imports an optional source's library: the
``pico`` source is loaded only when chosen.
"""

from __future__ import annotations

from ..races.edges import ButtonEdge, BuzzerId, Edge
from .base import (AUTO_ORDER, ENV_VAR, CallbackSink, CueStamp, EdgeSource, NoSource, SourceError,
                   SourceFault, SourceSink, SourceStatus, SourceUnavailable, choose_source,
                   open_source, register_source, source_class, source_names)
from .gpio import GpioSource, on_a_pi
from .mock import ClockedMockFactory, MockSource
from .feedback import Feedback, FeedbackSettings
from .pipeline import Pipeline, RefereeConsumer
from .runner import BuzzerRunner

__all__ = ["Edge", "ButtonEdge", "BuzzerId", "CueStamp", "EdgeSource", "SourceSink", "SourceFault",
           "SourceStatus", "SourceError", "SourceUnavailable", "CallbackSink", "NoSource",
           "register_source", "source_names", "source_class", "choose_source", "open_source",
           "ENV_VAR", "AUTO_ORDER", "GpioSource", "MockSource", "ClockedMockFactory",
           "Feedback", "FeedbackSettings", "Pipeline", "RefereeConsumer", "BuzzerRunner", "on_a_pi"]
