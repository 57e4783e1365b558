"""``companion buzz``: presses, live order and verdicts in a terminal.

Driven by a scripted (non-tty) stdin, mock buzzers run on a virtual clock,
so the output is exact; a pty checks the keyboard (cbreak) mode."""

from __future__ import annotations

import io
import os
import threading
import time

import pytest

from companion.buzzers.mock import ClockedMockFactory
from companion.races.referee import FIRST_PRESS, FIRST_RELEASE, LAST_PRESS, Verdict
from companion.terminal import describe_verdict, run_buzz
from tests.kit.helpers import wait_for

PLAYERS = ["ana", "bo", "cy"]
HEADER = [
    "companion buzz: ana, bo, cy on mock buzzers, virtual time",
    "keys: 1-3 tap a buzzer, !@# hold/let go, g first-press race, l last-press race, "
    "r first-release race, q quit",
]
COUNTDOWN = ["cue      3", "cue      2", "cue      1", "cue      GO!"]


def buzz(script: str, players=PLAYERS, **kw) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    rc = run_buzz(players, source="mock", stdin=io.StringIO(script), stdout=out, stderr=err, **kw)
    return rc, out.getvalue().splitlines(), err.getvalue()


def test_a_first_press_race_shows_presses_order_and_verdict():
    rc, lines, err = buzz("""
        g          # announced first-press race: GO 3 s from now
        w3120 2    # bo taps 120 ms after GO
        w15 1      # ana 15 ms later
        w400 q
    """)
    assert rc == 0 and err == ""
    assert lines == HEADER + ["race     first-press: GO in 3.000 s"] + COUNTDOWN + [
        "press    bo       GO+120.000 ms",
        "order    bo (+0.000 ms)",
        "press    ana      GO+135.000 ms",
        "order    bo (+0.000 ms), ana (+15.000 ms)",
        "verdict  first-press: winner bo by 15.000 ms",
        "release  bo       +0.000 ms",
        "release  ana      +15.000 ms",
        "bye: 1 race(s), 0 fault(s)",
    ]


def test_a_press_before_go_is_a_false_start_and_cannot_win():
    rc, lines, _ = buzz("g w2500 3 w700 1 w1000")
    assert "press    cy       GO-500.000 ms  false start!" in lines
    assert "verdict  first-press: winner ana; false start: cy" in lines


def test_presses_within_the_tie_window_tie():
    rc, lines, _ = buzz("g w3100 1 w0 2 w500", tie_window_us=1000)
    assert "verdict  first-press: tie between ana, bo: no winner" in lines


def test_a_last_press_race_names_the_slowest():
    _, lines, _ = buzz("l w3050 1 w20 3 w10 2 w500")
    assert lines[-8:] == [
        "order    ana (+0.000 ms), cy (+20.000 ms)",
        "press    bo       GO+80.000 ms",
        "order    ana (+0.000 ms), cy (+20.000 ms), bo (+30.000 ms)",
        "verdict  last-press: loser bo by 10.000 ms",      # all pressed: decided after the hold
        "release  ana      +0.000 ms",
        "release  cy       +20.000 ms",
        "release  bo       +30.000 ms",
        "bye: 1 race(s), 0 fault(s)",
    ]


def test_a_player_who_never_presses_loses_a_last_press_race_at_the_deadline():
    _, lines, _ = buzz("l w3050 1 w20 3", deadline_ms=2000)
    assert "verdict  last-press: loser bo (no press)" in lines


def test_a_first_release_race_everyone_holds_then_lets_go():
    _, lines, _ = buzz("""
        d1 d2 d3      # everyone holds their buzzer (Food Poisoning)
        r w3200
        u2 w10 u1 u3  # bo lets go first
        w200
    """)
    assert "release  bo       GO+200.000 ms" in lines
    assert "verdict  first-release: loser bo by 10.000 ms" in lines


def test_presses_outside_a_race_show_offsets_within_the_burst():
    _, lines, _ = buzz("1 w30 2 w2000 3")
    assert lines[2:6] == ["press    ana      +0.000 ms", "press    bo       +30.000 ms",
                          "release  ana      +80.000 ms", "release  bo       +110.000 ms"]
    assert "press    cy       +0.000 ms" in lines       # a new burst


def test_a_stuck_buzzer_is_reported_and_ignored_until_released():
    _, lines, _ = buzz("d1 w2500 g w3100 2 w300 u1 w100", stuck_ms=2000)
    assert "fault    ana stuck: held over 2000 ms, ignored until released" in lines
    assert "verdict  first-press: winner bo" in lines
    assert "fault    ana released: back in play" in lines
    assert lines[-1] == "bye: 1 race(s), 2 fault(s)"


def test_bounces_are_debounced_but_a_second_tap_counts():
    _, lines, _ = buzz("1 w10 1 w200 1")
    # the second tap is inside the 80 ms hold of the first: one press, one release
    assert [ln.split()[0] for ln in lines[2:-1]] == ["press", "release", "press", "release"]


def test_q_stops_reading_and_unknown_keys_are_explained():
    _, lines, _ = buzz("x 7 q 1 2 3")
    assert "(unknown key 'x'; ? for help)" in lines
    assert "(no buzzer on key '7': 3 players)" in lines
    assert not any(ln.startswith("press") for ln in lines)


def test_end_of_input_lets_the_running_race_finish():
    _, lines, _ = buzz("g w3100 1")
    assert "verdict  first-press: winner ana" in lines


@pytest.mark.parametrize("kwargs, message", [
    ({"players": []}, "one or more distinct"),
    ({"players": ["a", "a"]}, "distinct"),
    ({"players": list("abcdefg")}, "at most 6"),
    ({"debounce_ms": -1}, "debounce_ms"),
    ({"source": "smoke-signals"}, "unknown source"),
])
def test_bad_options_exit_2_with_a_message(kwargs, message):
    kw = {"players": PLAYERS, **kwargs}
    players = kw.pop("players")
    source = kw.pop("source", "mock")
    err = io.StringIO()
    rc = run_buzz(players, source=source, stdin=io.StringIO(""), stdout=io.StringIO(),
                  stderr=err, **kw)
    assert rc == 2 and message in err.getvalue()


def test_a_bad_pin_map_exits_2(tmp_path):
    bad = tmp_path / "box.toml"
    bad.write_text("[[player]]\nbutton = 2\n")
    err = io.StringIO()
    assert run_buzz(PLAYERS, source="mock", pinmap=bad, stdin=io.StringIO(""),
                    stdout=io.StringIO(), stderr=err) == 2
    assert "I2C" in err.getvalue()


def test_gpio_source_off_a_pi_exits_2(mocker, monkeypatch):
    mocker.patch("companion.buzzers.gpio.on_a_pi", return_value=False)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    err = io.StringIO()
    assert run_buzz(PLAYERS, source="gpio", stdin=io.StringIO(""), stdout=io.StringIO(),
                    stderr=err) == 2
    assert "no GPIO here" in err.getvalue()


def test_gpio_source_in_line_mode_runs_in_real_time():
    f = ClockedMockFactory()
    try:
        out = io.StringIO()
        rc = run_buzz(PLAYERS, source="gpio", stdin=io.StringIO("1\nq\n"), stdout=out,
                      stderr=io.StringIO(), pin_factory=f)
        lines = out.getvalue().splitlines()
        assert rc == 0
        assert lines[0] == "companion buzz: ana, bo, cy on real buzzers (GPIO), real time"
        assert "(keys 1-6 drive mock buzzers; these are real ones: press them)" in lines
    finally:
        f.close()
        f.reset()


def test_describe_verdict():
    assert describe_verdict(Verdict(FIRST_PRESS)) == "first-press: no winner (no counted press)"
    assert describe_verdict(Verdict(LAST_PRESS, tied=["a", "b"])) == \
        "last-press: tie between a, b: no loser"
    assert describe_verdict(Verdict(FIRST_RELEASE, loser="a", order=[("a", 0), ("b", 2_000_000)])) \
        == "first-release: loser a by 2.000 ms"
    assert describe_verdict(Verdict(FIRST_PRESS, winner="a", ineligible=["c"])) == \
        "first-press: winner a; ineligible: c"


class _Out(io.StringIO):
    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def write(self, s):
        with self.lock:
            return super().write(s)

    def text(self):
        with self.lock:
            return self.getvalue()


def test_keyboard_mode_on_a_terminal():
    termios = pytest.importorskip("termios")
    master, slave = os.openpty()
    stdin = os.fdopen(slave, "r", closefd=False)
    before = termios.tcgetattr(slave)
    out = _Out()
    result = []
    t = threading.Thread(target=lambda: result.append(
        run_buzz(["ana", "bo"], source="mock", stdin=stdin, stdout=out, stderr=io.StringIO())))
    t.start()
    try:
        assert wait_for(lambda: not termios.tcgetattr(slave)[3] & termios.ICANON)  # cbreak
        os.write(master, b"2")
        assert wait_for(lambda: "release  bo" in out.text())       # tapped: released 80 ms later
        os.write(master, b"!")
        assert wait_for(lambda: "press    ana" in out.text())
        time.sleep(0.03)                                        # past the debounce window
        os.write(master, b"!")
        assert wait_for(lambda: "release  ana" in out.text())
        os.write(master, b"q")
        t.join(5)
        assert not t.is_alive() and result == [0]
        assert out.text().rstrip().endswith("bye: 0 race(s), 0 fault(s)")
        assert termios.tcgetattr(slave) == before               # the terminal is restored
    finally:
        if t.is_alive():
            os.write(master, b"q")
            t.join(5)
        stdin.close()
        os.close(master)
        os.close(slave)
