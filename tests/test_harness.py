"""The hardware harness: the same checks on mock pins (here) as on real ones."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from companion.buzzers.mock import ClockedMockFactory
from companion.buzzers.pinmap import load_pinmap
from companion.races.edges import ButtonEdge as Edge
from companion.races.referee import MS

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:       # hardware/ is not an installed package
    sys.path.insert(0, str(ROOT))

from hardware.harness import analyse_press, mock_press, run  # noqa: E402


@pytest.fixture
def factory():
    f = ClockedMockFactory(start_ns=1_000 * MS)
    yield f
    f.close()
    f.reset()


def harness(*argv, **kw):
    out = io.StringIO()
    rc = run(list(argv), stdin=io.StringIO(""), stdout=out, **kw)
    return rc, out.getvalue()


def test_the_harness_passes_on_mock_pins(monkeypatch):
    monkeypatch.delenv("COMPANION_REAL_PINS", raising=False)
    rc, text = harness()
    assert rc == 0, text
    assert "(mock pins)" in text
    assert "summary: 20 checks, 20 passed, 0 failed" in text
    assert "[PASS] slot 1 button GPIO17 (J8 pin 11) at rest: released (pulled high)" in text
    assert "[PASS] slot 6 press: 4 bounce(s) over 1.500 ms; release 2 bounce(s) over 0.900 ms; " \
           "held 120.000 ms" in text
    assert "[PASS] cue piezo GPIO18 (J8 pin 12) (active): driven" in text
    assert "FAIL" not in text


def test_a_dead_button_fails_its_press(factory):
    def press(source, player, t0):
        if player != "slot2":
            mock_press(source, player, t0)
    rc, text = harness("--players", "3", pin_factory=factory, press=press)
    assert rc == 1
    assert "[FAIL] slot 2 press: no edge on GPIO22 (J8 pin 15)" in text
    assert "[PASS] slot 3 press" in text
    assert "summary: 11 checks, 10 passed, 1 failed" in text


def test_crossed_buttons_are_caught(factory):
    def press(source, player, t0):      # slot 1's wire goes to slot 2's button
        mock_press(source, "slot2" if player == "slot1" else player, t0)
    rc, text = harness("--players", "2", pin_factory=factory, press=press)
    assert rc == 1
    assert "[FAIL] slot 1 press: edges came from slot 2: buttons swapped or crossed?" in text


def test_bounce_longer_than_the_debounce_window_fails(factory):
    def press(source, player, t0):      # a worn switch: chatter for 45 ms
        source.bounce(player, True, t0, [k * 1_500_000 for k in range(1, 31)])
        source.bounce(player, False, t0 + 200 * MS, [])
    rc, text = harness("--players", "1", pin_factory=factory, press=press)
    assert rc == 1
    assert re.search(r"\[FAIL\] slot 1 press: \d+ bursts?, \d+ debounced edges", text)


def test_a_button_never_released_fails(factory):
    rc, text = harness("--players", "1", pin_factory=factory,
                       press=lambda source, player, t0: source.press(player, t0))
    assert rc == 1 and "pressed but never released" in text


def test_analyse_press_counts_bounces_and_hold():
    t = 5_000 * MS
    edges = [Edge("a", True, t), Edge("a", False, t + 200_000), Edge("a", True, t + 500_000),
             Edge("a", False, t + 90 * MS), Edge("a", True, t + 90 * MS + 100_000),
             Edge("a", False, t + 90 * MS + 300_000)]
    r = analyse_press(edges, 20 * MS)
    assert (r.bursts, r.press_bounces, r.press_bounce_ns) == (2, 2, 500_000)
    assert (r.release_bounces, r.release_bounce_ns, r.held_ns) == (2, 300_000, 90 * MS)
    assert r.accepted == 2
    assert analyse_press([], 20 * MS).bursts == 0


def test_bad_options_exit_2():
    rc, text = harness("--players", "9")
    assert rc == 2 and "--players must be 1 to 6" in text
    rc, text = harness("--pinmap", "/nonexistent/pinmap.toml")
    assert rc == 2 and "cannot read pin map" in text


class _Builder(io.StringIO):
    """Plays the builder at the bench: presses each buzzer when asked."""

    def __init__(self, factory, answers):
        super().__init__()
        self.factory = factory
        self.slots = load_pinmap().slots
        self.answers = answers

    def write(self, s):
        m = re.match(r"-> press and release buzzer (\d+)", s)
        if m:
            pin = self.factory.pin(self.slots[int(m[1]) - 1].button)

            def press():
                time.sleep(0.05)
                pin.drive_low()
                time.sleep(0.001)
                pin.drive_high()      # a bounce
                pin.drive_low()
                time.sleep(0.05)
                pin.drive_high()
            threading.Thread(target=press, daemon=True).start()
        return super().write(s)


def test_real_pin_mode_is_interactive(monkeypatch):
    """--real on a pin factory that follows real time: the harness waits for
    each press and asks about each light."""
    monkeypatch.setenv("COMPANION_REAL_PINS", "1")
    f = ClockedMockFactory()
    try:
        out = _Builder(f, None)
        answers = io.StringIO("y\ny\nn\ny\n")      # slot 1 LED, slot 2 LED, cue LED, piezo
        rc = run(["--players", "2", "--timeout", "3"], stdin=answers, stdout=out, pin_factory=f)
        text = out.getvalue()
        assert "(real pins)" in text
        assert "Is buzzer 1's LED lit? [Y/n]" in text
        assert re.search(r"\[PASS\] slot 1 press: 2 bounce\(s\)", text), text
        assert "[PASS] slot 2 press" in text
        assert "[FAIL] cue LED GPIO12 (J8 pin 32): check the LED's polarity" in text
        assert rc == 1
    finally:
        f.close()
        f.reset()


def test_real_pin_mode_times_out_without_a_press(monkeypatch):
    f = ClockedMockFactory()
    try:
        out = io.StringIO()
        rc = run(["--real", "--players", "1", "--timeout", "0.2"], stdin=io.StringIO("y\n" * 4),
                 stdout=out, pin_factory=f)
        assert rc == 1 and "[FAIL] slot 1 press: no edge on GPIO17" in out.getvalue()
    finally:
        f.close()
        f.reset()


@pytest.mark.parametrize("cmd", [["-m", "hardware.harness"], ["hardware/harness.py"]])
def test_the_harness_runs_from_the_command_line(cmd):
    env = {k: v for k, v in os.environ.items() if k != "COMPANION_REAL_PINS"}
    p = subprocess.run([sys.executable, "-W", "error", *cmd, "--players", "2"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "summary: 8 checks, 8 passed, 0 failed" in p.stdout
