"""Buzzers on the Pi's GPIO pins, through gpiozero.

Each buzzer is an arcade button from a GPIO to GND (active low, the Pi's
internal pull-up holds it high at rest). Every pin change becomes a raw
:class:`~companion.races.edges.ButtonEdge` stamped with the time the pin factory hands to
the change callback: with the lgpio factory that is the kernel's own edge
timestamp (CLOCK_MONOTONIC), so the Python delivery delay does not bias a
race. gpiozero's ``bounce_time`` stays off (lgpio's debounce reports an edge
late); the :class:`~companion.races.referee.Referee` does a leading-edge debounce.

>>> from companion.buzzers.mock import ClockedMockFactory
>>> factory = ClockedMockFactory(start_ns=1_000_000_000)
>>> src = GpioSource(["ana", "bo"], pin_factory=factory)
>>> edges = []
>>> src.start(edges.append)
>>> factory.clock_ns = 1_250_000_000
>>> src.buttons["bo"].pin.drive_low()          # bo presses (active low)
>>> edges
[ButtonEdge(buzzer='bo', pressed=True, t_ns=1250000000)]
>>> src.close()
"""

from __future__ import annotations

import logging
import os
import time
from importlib.util import find_spec
from typing import Callable

from gpiozero import Device, DigitalInputDevice

from ..races.edges import BuzzerId, ButtonEdge
from .base import EdgeSource, SourceUnavailable
from .pinmap import PinMap, load_pinmap

log = logging.getLogger(__name__)

NS_PER_S = 1_000_000_000
#: An edge stamped this far ahead of the monotonic clock is a wall-clock stamp.
REALTIME_GAP_NS = 365 * 24 * 3600 * NS_PER_S


def ticks_to_ns(ticks: float) -> int:
    """A pin factory's ticks (float seconds on the monotonic clock) as integer
    nanoseconds. Exact for clocks below 2**50 ns (13 days of uptime), within
    a few nanoseconds beyond: the float is gpiozero's, not ours."""
    return round(ticks * NS_PER_S)


class BuzzerInput(DigitalInputDevice):
    """One buzzer button: pull-up, active low, no gpiozero debounce, and every
    pin change handed to ``on_change(ticks, pressed)`` with the factory's
    timestamp. Otherwise a normal gpiozero input (``is_active``,
    ``wait_for_active``, ``when_activated`` all work)."""

    def __init__(self, pin=None, *, on_change: Callable[[float, bool], None] | None = None,
                 pin_factory=None):
        self._on_change = None
        super().__init__(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)
        self._on_change = on_change

    def _pin_changed(self, ticks, state):
        super()._pin_changed(ticks, state)
        fn = self._on_change
        if fn is not None:
            fn(ticks, bool(self._state_to_value(state)))

    def close(self):
        """Release the pin (and stop handing on changes)."""
        self._on_change = None
        super().close()


def on_a_pi() -> bool:
    """True where gpiozero's lgpio factory can work (lgpio and a gpiochip)."""
    return os.path.exists("/dev/gpiochip0") and find_spec("lgpio") is not None


def _default_factory():
    if not on_a_pi() and not os.environ.get("GPIOZERO_PIN_FACTORY"):
        raise SourceUnavailable("no GPIO here (needs lgpio and /dev/gpiochip0, or "
                                "GPIOZERO_PIN_FACTORY); use --source mock for pretend buzzers")
    Device.ensure_pin_factory()
    return Device.pin_factory


class GpioSource(EdgeSource):
    """Raw buzzer edges from GPIO pins, stamped by the pin factory.

    ``buzzers`` (ids) take the pin map's slots in order (first id, slot 1).
    ``pinmap`` is a :class:`~companion.buzzers.pinmap.PinMap`, a path, or
    None for the default map; ``pin_factory`` is gpiozero's (None: gpiozero's
    default, lgpio on a Pi). The buttons are claimed at construction and
    released by :meth:`close`; edges flow to the sink between :meth:`start`
    and :meth:`stop`.

    A change to the level the buzzer already has (an edge the kernel lost in
    a bounce storm leaves two alike in a row) is dropped and counted in
    ``dropped``: the first of the two is the real change.
    """

    name = "gpio"
    precision_ns = 1_000

    def __init__(self, buzzers, pinmap: PinMap | str | os.PathLike | None = None, *,
                 pin_factory=None):
        super().__init__(buzzers)
        self.pinmap = pinmap if isinstance(pinmap, PinMap) else load_pinmap(pinmap)
        self.slots = self.pinmap.for_players(self.buzzers)
        factory = pin_factory if pin_factory is not None else _default_factory()
        if type(factory).__name__ == "PiGPIOFactory":
            raise ValueError("the pigpio pin factory stamps edges with 32-bit microsecond ticks "
                             "that wrap every 72 minutes; use lgpio (GPIOZERO_PIN_FACTORY=lgpio)")
        self.pin_factory = factory
        self.buttons: dict[BuzzerId, BuzzerInput] = {}
        self._level: dict[BuzzerId, bool] = {}
        self.dropped = 0
        try:
            for buzzer, slot in self.slots.items():
                self.buttons[buzzer] = BuzzerInput(
                    slot.button, on_change=self._changer(buzzer), pin_factory=factory)
                self._level[buzzer] = self.buttons[buzzer].is_active
        except BaseException:
            self.close()
            raise

    @classmethod
    def detect(cls) -> bool:
        """A Pi with lgpio and a GPIO chip."""
        return on_a_pi()

    def _changer(self, buzzer: BuzzerId) -> Callable[[float, bool], None]:
        def changed(ticks: float, pressed: bool) -> None:
            if self._level.get(buzzer) == pressed:
                self.dropped += 1
                return
            self._level[buzzer] = pressed
            self._emit(ButtonEdge(buzzer, pressed, self._monotonic_ns(ticks)))
        return changed

    def _monotonic_ns(self, ticks: float) -> int:
        """The edge's stamp on the monotonic clock. Kernels before 5.7 stamp
        GPIO events with CLOCK_REALTIME; such a stamp (days ahead of the
        monotonic clock) is moved onto the monotonic clock."""
        t = ticks_to_ns(ticks)
        if t - self.now_ns() > REALTIME_GAP_NS:
            t -= time.time_ns() - time.monotonic_ns()
        return t

    def start(self, sink) -> None:
        """Send edges to ``sink``. A buzzer already held now is sent as a
        press stamped now, so the referee knows (and can call it stuck)."""
        super().start(sink)
        now = self.now_ns()
        for buzzer, button in self.buttons.items():
            if not button.closed and button.is_active:
                self._level[buzzer] = True
                self._emit(ButtonEdge(buzzer, True, now))

    def now_ns(self) -> int:
        """Now on the pin factory's clock, the one edges are stamped on."""
        return ticks_to_ns(self.pin_factory.ticks())

    def status(self):
        from .base import SourceStatus
        return SourceStatus(self.name, True, self.precision_ns,
                            detail=f"{type(self.pin_factory).__name__}, "
                                   f"{len(self.buttons)} buzzers")

    def pin_of(self, buzzer: str) -> int:
        """The BCM GPIO number of ``buzzer``'s button."""
        return self.slots[buzzer].button

    def is_pressed(self, buzzer: str) -> bool:
        return self.buttons[buzzer].is_active

    def close(self) -> None:
        super().close()
        for button in self.buttons.values():
            button.close()
