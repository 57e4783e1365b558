"""Small helpers shared by the hardware-facing tests."""

from __future__ import annotations

import time


def wait_for(cond, timeout=5.0, step=0.002):
    """Poll ``cond`` until it is true or ``timeout`` seconds pass; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())


def toggles(pin):
    """How many times a gpiozero MockPin changed level (from its history)."""
    return sum(1 for a, b in zip(pin.states, pin.states[1:]) if bool(a.state) != bool(b.state))
