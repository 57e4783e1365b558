"""Benchmark: glitches on the Pico box's buzzer inputs that become presses.

``pico_glitch_presses``: 10,000 glitches, widths log-uniform from 0.1 to
500 us, each at a random phase against the capture's tick, run through the
firmware's own capture program in rp2040-pio-emulator and its words through
the firmware's own core with its minimum hold (hardware/glitch.py; six
buzzers, glitches on each in turn). Goal: 0. ``pico_glitch_release_presses``:
the same, each a release glitch while its buzzer is held (no release, no new
press). Goal: 0. Run: ``python -m bench pico_glitch`` (about a minute).
"""

from __future__ import annotations

from hardware import glitch


def run() -> list[tuple[str, float, str]]:
    reported, n = glitch.glitch_presses(10_000, seed=1)
    held, m = glitch.glitch_presses(2_000, seed=2, held=True)
    return [("pico_glitch_presses", reported, f"edges from {n} glitches of 0.1-500 us"),
            ("pico_glitch_release_presses", held, f"edges from {m} release glitches while held")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value} {unit}")
