"""Mock buzzers on gpiozero's MockFactory, with a clock a test controls.

:class:`ClockedMockFactory` is a MockFactory whose ``ticks()`` is a settable
clock (or the real monotonic clock when unset); its pins stamp their changes
on it. :class:`MockSource` is the real :class:`~companion.buzzers.gpio.GpioSource`
on such a factory, with ``press``/``release`` helpers that set the tick and
drive the pin, so a test exercises the very code that runs on a Pi.

>>> src = MockSource(["ana", "bo"], start_ns=1_000_000_000)
>>> edges = []
>>> src.start(edges.append)
>>> src.press("bo", 1_000_250_000); src.release("bo", 1_080_250_000)
>>> [(e.buzzer, e.pressed, e.t_ns) for e in edges]
[('bo', True, 1000250000), ('bo', False, 1080250000)]
>>> src.close()
"""

from __future__ import annotations

import time
from typing import Iterable

from gpiozero.pins.mock import MockFactory, MockPWMPin, PinState

from ..races.referee import MS
from .gpio import GpioSource, NS_PER_S


class ClockedMockPin(MockPWMPin):
    """A mock pin (PWM-capable, so PWMLED and TonalBuzzer work) that stamps
    its changes with its factory's ``ticks()``."""

    def _change_state(self, value):
        if self._state != value:
            t = self.factory.ticks()
            self._state = value
            self.states.append(PinState(t - self._last_change, value))
            self._last_change = t
            return True
        return False

    def clear_states(self):
        self._last_change = self.factory.ticks()
        self.states = [PinState(0.0, self._state)]


class ClockedMockFactory(MockFactory):
    """gpiozero's MockFactory with a clock you set: ``clock_ns`` (integer
    nanoseconds), or None to follow the real monotonic clock."""

    def __init__(self, revision=None, pin_class=ClockedMockPin, start_ns: int | None = None):
        super().__init__(revision=revision, pin_class=pin_class)
        self.clock_ns = start_ns

    def ticks(self):
        t = self.clock_ns
        return time.monotonic() if t is None else t / NS_PER_S

    def advance(self, ns: int) -> int:
        """Move the set clock forward by ``ns``; returns the new ``clock_ns``."""
        if self.clock_ns is None:
            raise ValueError("the clock follows real time; set clock_ns first")
        self.clock_ns += ns
        return self.clock_ns


class MockSource(GpioSource):
    """A :class:`GpioSource` on mock pins. ``press(buzzer, t_ns)`` and
    ``release(buzzer, t_ns)`` set the factory's clock to ``t_ns`` (if given)
    and drive the button's pin low or high, as a real button would.

    ``pin_factory`` defaults to a new :class:`ClockedMockFactory` (closed
    with the source) starting at ``start_ns`` (None: real time).
    """

    name = "mock"
    precision_ns = 1

    def __init__(self, buzzers, pinmap=None, *, pin_factory=None, start_ns: int | None = None):
        own = pin_factory is None
        factory = ClockedMockFactory(start_ns=start_ns) if own else pin_factory
        try:
            super().__init__(buzzers, pinmap, pin_factory=factory)
        except BaseException:
            if own:
                factory.close()
            raise
        self._own_factory = own

    @classmethod
    def detect(cls) -> bool:
        """Mock pins work anywhere: the last resort of auto-detection."""
        return True

    def pin(self, buzzer: str):
        """The mock pin of buzzer ``buzzer``'s button."""
        try:
            return self.buttons[buzzer].pin
        except KeyError:
            raise KeyError(f"no buzzer {buzzer!r}") from None

    def _set_clock(self, t_ns: int | None) -> None:
        if t_ns is None:
            return
        if not isinstance(self.pin_factory, ClockedMockFactory):
            raise TypeError("t_ns needs a ClockedMockFactory; with a plain MockFactory "
                            "patch gpiozero.pins.mock.monotonic instead")
        self.pin_factory.clock_ns = t_ns

    def press(self, buzzer: str, t_ns: int | None = None) -> None:
        """Press buzzer ``buzzer`` (at ``t_ns`` on the mock clock, or now)."""
        pin = self.pin(buzzer)
        self._set_clock(t_ns)
        pin.drive_low()

    def release(self, buzzer: str, t_ns: int | None = None) -> None:
        """Let go of buzzer ``buzzer`` (at ``t_ns``, or now)."""
        pin = self.pin(buzzer)
        self._set_clock(t_ns)
        pin.drive_high()

    def tap(self, buzzer: str, t_ns: int, hold_ns: int = 80 * MS) -> None:
        """Press at ``t_ns`` and release ``hold_ns`` later (moves the clock)."""
        self.press(buzzer, t_ns)
        self.release(buzzer, t_ns + hold_ns)

    def bounce(self, buzzer: str, pressed: bool, t_ns: int, offsets_ns: Iterable[int]) -> None:
        """A bouncy change: the pin goes to ``pressed`` at ``t_ns`` and toggles
        again at each of ``offsets_ns`` after it (an even count of toggles
        leaves it at ``pressed``)."""
        level = pressed
        self.press(buzzer, t_ns) if level else self.release(buzzer, t_ns)
        for off in sorted(offsets_ns):
            level = not level
            self.press(buzzer, t_ns + off) if level else self.release(buzzer, t_ns + off)

    def close(self) -> None:
        super().close()
        if self._own_factory:
            self.pin_factory.close()
            self.pin_factory.reset()


#: Shifted digits on a US keyboard: hold (or let go of) buzzer 1..6.
HOLD_KEYS = "!@#$%^"


class KeyboardBuzzers:
    """Drive a :class:`MockSource` from keys, for the terminal demo.

    A digit ``1``..``6`` taps that buzzer: press now, release ``tap_ns``
    later (on a later :meth:`poll`). A shifted digit (``!@#$%^``) presses and
    keeps holding, or lets go if held. Acts on the source's clock, so it is a
    pollable for :class:`~companion.buzzers.runner.BuzzerRunner`.
    """

    def __init__(self, source: MockSource, tap_ns: int = 80 * MS):
        self.source = source
        self.tap_ns = tap_ns
        self._release_at: dict[str, int] = {}
        self.held: set[str] = set()

    def player_for(self, key: str) -> str | None:
        """The player a key drives, or None."""
        players = self.source.players
        if key.isdigit() and 1 <= int(key) <= len(players):
            return players[int(key) - 1]
        i = HOLD_KEYS.find(key) if len(key) == 1 else -1
        if 0 <= i < len(players):
            return players[i]
        return None

    def key(self, key: str) -> tuple[str, str] | None:
        """Act on one key; returns ``(player, "tap"|"hold"|"let go")`` or None."""
        player = self.player_for(key)
        if player is None:
            return None
        if key in HOLD_KEYS:
            if player in self.held:
                self.let_go(player)
                return player, "let go"
            self.hold(player)
            return player, "hold"
        self.tap(player)
        return player, "tap"

    def tap(self, player: str) -> None:
        now = self.source.now_ns()
        if player not in self.held:
            self.source.press(player)
        self._release_at[player] = now + self.tap_ns

    def hold(self, player: str) -> None:
        self._release_at.pop(player, None)
        self.held.add(player)
        self.source.press(player)

    def let_go(self, player: str) -> None:
        self._release_at.pop(player, None)
        self.held.discard(player)
        self.source.release(player)

    def poll(self, now_ns: int) -> None:
        for player, t in list(self._release_at.items()):
            if t <= now_ns:
                del self._release_at[player]
                if player not in self.held:
                    self.source.release(player)

    def next_deadline(self) -> int | None:
        return min(self._release_at.values(), default=None)
