"""``companion buzz``: buzzer races in a terminal, no network needed.

Shows every press and release as it happens (with its offset from GO, or
from the first press of a burst), the live order of a race and its verdict.
On a Pi it reads the real buzzers (``source="gpio"``); anywhere else the
buzzers are gpiozero mock pins driven from the keyboard:

====================  ===================================================
``1`` .. ``6``        tap that buzzer (press, release 80 ms later)
``!@#$%^``            hold that buzzer down, or let go of it (shift+digit)
``g``                 announced first-press race (countdown, then GO)
``l``                 announced last-press race
``r``                 announced first-release race (hold first!)
``q``                 quit
====================  ===================================================

When standard input is not a terminal (a script, a pipe), commands are read
one line at a time; with mock buzzers the session then runs on a virtual
clock, so a script is exact and repeatable. Scripts may also use ``dN``
(press buzzer N and hold), ``uN`` (let go), ``wMS`` (wait MS milliseconds)
and ``#`` comments::

    $ printf 'g\\nw3120\\n2\\nw15\\n1\\nw400\\n' | companion buzz --players ana,bo

Only the standard library talks to the terminal (termios cbreak mode).
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time

from gpiozero.exc import GPIOZeroError

from .buzzers.base import SourceUnavailable, choose_source, open_source
from .buzzers.feedback import Feedback, FeedbackSettings, countdown_plan
from .buzzers.mock import HOLD_KEYS, ClockedMockFactory, KeyboardBuzzers, MockSource
from .buzzers.pinmap import PinMapError, load_pinmap
from .buzzers.runner import BuzzerRunner
from .races.referee import FIRST_PRESS, FIRST_RELEASE, LAST_PRESS, MS, US, RaceError, RaceSpec, Referee

RACE_KEYS = {"g": FIRST_PRESS, "l": LAST_PRESS, "r": FIRST_RELEASE}
#: Edges further apart than this start a new burst (offsets restart at +0).
BURST_GAP_NS = 1_000 * MS
#: Where the virtual clock starts (any value works; 1 s reads well).
VIRTUAL_START_NS = 1_000 * MS


def _ms(ns: int) -> str:
    return f"{ns / MS:+.3f} ms"


def describe_verdict(v) -> str:
    """One human line for a verdict, e.g. ``first-press: winner ana by 12.000 ms``."""
    head = f"{v.kind}: "
    if v.kind == FIRST_PRESS:
        if v.winner is not None:
            head += f"winner {v.winner}"
            if len(v.order) > 1:
                head += f" by {(v.order[1][1] - v.order[0][1]) / MS:.3f} ms"
        elif v.tied:
            head += "tie between " + ", ".join(v.tied) + ": no winner"
        else:
            head += "no winner (no counted press)"
    else:
        if v.loser is not None:
            head += f"loser {v.loser}"
            if len(v.order) > 1 and v.loser not in v.no_edge:
                if v.kind == LAST_PRESS:
                    a, b = v.order[-1], v.order[-2]
                else:
                    a, b = v.order[1], v.order[0]
                head += f" by {(a[1] - b[1]) / MS:.3f} ms"
            elif v.loser in v.no_edge:
                head += " (no " + ("press" if v.kind == LAST_PRESS else "release") + ")"
        elif v.tied:
            head += "tie between " + ", ".join(v.tied) + ": no loser"
        else:
            head += "no loser"
    extra = []
    if v.false_starts:
        extra.append("false start: " + ", ".join(v.false_starts))
    if v.ineligible:
        extra.append("ineligible: " + ", ".join(v.ineligible))
    return head + "".join(f"; {x}" for x in extra)


class BuzzView:
    """Prints the referee's events (a referee listener) and the countdown
    (a runner pollable)."""

    def __init__(self, out, referee: Referee, stuck_ns: int):
        self.out = out
        self.referee = referee
        self.stuck_ns = stuck_ns
        self._lock = threading.Lock()
        self._steps: list[tuple[int, str]] = []
        self._burst_start: int | None = None
        self._last_edge: int | None = None
        self.races = 0

    def write(self, line: str) -> None:
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def __call__(self, kind: str, payload) -> None:
        try:
            getattr(self, "_on_" + kind, lambda p: None)(payload)
        except Exception as exc:  # the display must never stop the referee
            self.write(f"(display error: {exc!r})")

    def _live(self):
        race = self.referee.race
        return race if race is not None and race.verdict is None else None

    def _on_edge(self, e) -> None:
        what = "press  " if e.pressed else "release"
        race = self._live()
        if race is not None:
            arm = race.spec.arm_ns
            d = e.t_ns - arm
            note = ""
            if e.pressed and d < 0 and race.spec.kind != FIRST_RELEASE:
                note = "  false start!"
            elif e.pressed and e.player not in race.spec.eligible:
                note = "  (not eligible)"
            self.write(f"{what}  {e.player:<8} GO{_ms(d)}{note}")
            self._burst_start = None
        else:
            if (self._burst_start is None or self._last_edge is None
                    or e.t_ns - self._last_edge > BURST_GAP_NS):
                self._burst_start = e.t_ns
            self.write(f"{what}  {e.player:<8} {_ms(e.t_ns - self._burst_start)}")
        self._last_edge = e.t_ns

    def _on_order(self, race) -> None:
        order = race.order()
        if not order:
            return
        t0 = order[0][1]
        self.write("order    " + ", ".join(f"{p} ({_ms(t - t0)})" for p, t in order))

    def _on_verdict(self, race) -> None:
        self.write("verdict  " + describe_verdict(race.verdict))

    def _on_fault(self, f) -> None:
        if f.kind == "stuck":
            self.write(f"fault    {f.player} stuck: held over {self.stuck_ns / MS:.0f} ms, "
                       f"ignored until released")
        else:
            self.write(f"fault    {f.player} released: back in play")

    def announce(self, kind: str, arm_ns: int, now_ns: int, settings: FeedbackSettings) -> None:
        self.races += 1
        self.write(f"race     {kind}: GO in {(arm_ns - now_ns) / MS / 1000:.3f} s")
        self._steps = [(s.t_ns, "cue      " + ("GO!" if s.what == "go" else str(s.count)))
                       for s in countdown_plan(arm_ns, settings) if s.on]

    def poll(self, now_ns: int) -> None:
        while self._steps and self._steps[0][0] <= now_ns:
            self.write(self._steps.pop(0)[1])

    def next_deadline(self) -> int | None:
        return self._steps[0][0] if self._steps else None


class _Session:
    """One ``companion buzz`` run: the source, referee, runner, feedback, view."""

    def __init__(self, players, source_kind, pinmap, debounce_ns, tie_window_ns, hold_ns,
                 stuck_ns, countdown_ns, deadline_ns, out, pin_factory, virtual):
        self.players = tuple(players)
        self.tie_window_ns = tie_window_ns
        self.debounce_ns = debounce_ns
        self.countdown_ns = countdown_ns
        self.deadline_ns = deadline_ns
        self.virtual = virtual
        blips = 3 if countdown_ns > 0 else 0
        self.settings = FeedbackSettings(countdown_blips=blips,
                                         blip_interval_ns=countdown_ns // 3 if blips else 0)
        self.closers = []
        self.runner = None
        self.feedback = None
        try:
            pm = load_pinmap(pinmap)
            self.factory = None
            self.keyboard = None
            options = {}
            if source_kind == "mock":
                factory = pin_factory or ClockedMockFactory(
                    start_ns=VIRTUAL_START_NS if virtual else None)
                if pin_factory is None:
                    self.closers.append(lambda: (factory.close(), factory.reset()))
                self.factory = factory
                options["pin_factory"] = factory
            elif pin_factory is not None:
                options["pin_factory"] = pin_factory
            self.source = open_source(source_kind, self.players, pm, **options)
            self.closers.insert(0, self.source.close)
            if isinstance(self.source, MockSource):
                self.keyboard = KeyboardBuzzers(self.source)
            self.referee = Referee(self.players, debounce_ns=debounce_ns, stuck_ns=stuck_ns,
                                   hold_ns=hold_ns)
            self.view = BuzzView(out, self.referee, stuck_ns)
            self.referee.listeners.append(self.view)
            box_pins = getattr(self.source, "pin_factory", None)
            if box_pins is not None:
                self.feedback = Feedback.from_pinmap(
                    self.players, pm, pin_factory=box_pins, settings=self.settings,
                    clock=self.source.now_ns)
                self.closers.insert(0, self.feedback.close)
            pollables = [self.view] + ([self.keyboard] if self.keyboard else [])
            self.runner = BuzzerRunner(self.source, self.referee, feedback=self.feedback,
                                       pollables=pollables)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.runner is not None:
            self.runner.stop()
        for fn in self.closers:
            fn()
        self.closers = []

    # -- commands -------------------------------------------------------------

    def arm(self, kind: str) -> None:
        """Start a race counted down from now (through the runner's one way
        in: the race and its announcement are one change)."""
        self.runner.call(self._arm, kind)

    def _arm(self, kind: str) -> None:
        now = self.source.now_ns()
        arm = now + self.countdown_ns
        spec = RaceSpec(kind, self.players, arm_ns=arm, deadline_ns=arm + self.deadline_ns,
                        tie_window_ns=self.tie_window_ns, debounce_ns=self.debounce_ns)
        self.runner.start_race(spec, announced=True)    # the box counts down to GO
        self.view.announce(kind, arm, now, self.settings)

    def key(self, ch: str) -> bool:
        """Act on one key; False to quit."""
        if ch == "q":
            return False
        if ch in RACE_KEYS:
            self.arm(RACE_KEYS[ch])
        elif ch.isdigit() or ch in HOLD_KEYS:
            if self.keyboard is None:
                self.view.write("(keys 1-6 drive mock buzzers; these are real ones: press them)")
            elif self.runner.call(self.keyboard.key, ch) is None:
                self.view.write(f"(no buzzer on key {ch!r}: {len(self.players)} players)")
        elif ch in "?h":
            self.view.write(help_text(len(self.players), self.keyboard is not None))
        elif not ch.isspace():
            self.view.write(f"(unknown key {ch!r}; ? for help)")
        return True

    def drive(self, player_no: str, pressed: bool) -> None:
        if self.keyboard is None:
            self.view.write("(dN/uN drive mock buzzers only)")
            return
        player = self.keyboard.player_for(player_no)
        if player is None:
            self.view.write(f"(no buzzer {player_no!r})")
            return
        kb = self.keyboard
        self.runner.call(kb.hold if pressed else kb.let_go, player)

    def token(self, tok: str) -> bool:
        """Act on one word of a script line; False to quit."""
        if tok[0] in "du" and tok[1:].isdigit():
            self.drive(tok[1:], tok[0] == "d")
        elif tok[0] == "w" and tok[1:].isdigit():
            self.wait(int(tok[1:]) * MS)
        else:
            for ch in tok:
                if not self.key(ch):
                    return False
        return True

    # -- time -------------------------------------------------------------------

    def wait(self, ns: int) -> None:
        if self.virtual:
            self.advance_to(self.factory.clock_ns + ns)
        else:
            time.sleep(ns / 1e9)

    def advance_to(self, t_ns: int) -> None:
        """Virtual clock: run every deadline up to ``t_ns`` at its own time."""
        f, run = self.factory, self.runner
        run.pump(f.clock_ns)        # feed what the keys just did, so its deadlines count
        guard = False
        while True:
            dl = run.next_deadline()
            if dl is None or dl > t_ns:
                break
            now = f.clock_ns
            if dl > now:
                step, guard = dl, False
            else:   # a deadline that stays in the past: step on, never spin
                step, guard = now + (MS if guard else 1), True
            if step > t_ns:
                break
            f.clock_ns = step
            run.pump(step)
        f.clock_ns = max(f.clock_ns, t_ns)
        run.pump(f.clock_ns)

    def settle(self, limit_ns: int = 60_000 * MS) -> None:
        """End of input: let the deadlines pending (a race, a tap) play out."""
        if self.virtual:
            end = self.factory.clock_ns + limit_ns
            while True:
                dl = self.runner.next_deadline()
                if dl is None or dl > end:
                    break
                before = self.factory.clock_ns
                self.advance_to(max(dl, before))
                if self.factory.clock_ns == before and self.runner.next_deadline() == dl:
                    self.advance_to(before + MS)
            return
        race = self.referee.race
        end = time.monotonic() + limit_ns / 1e9
        while (race is not None and race.verdict is None and time.monotonic() < end):
            time.sleep(0.01)


def help_text(n: int, mock: bool) -> str:
    keys = f"1-{n} tap a buzzer, {HOLD_KEYS[:n]} hold/let go, " if mock else ""
    return (f"keys: {keys}g first-press race, l last-press race, "
            f"r first-release race, q quit")


def run_buzz(players: list[str], source: str | None = "auto", pinmap=None, debounce_ms: int = 20,
             tie_window_us: int = 0, hold_ms: int = 30, stuck_ms: int = 10_000,
             stdin=None, stdout=None, *, stderr=None, countdown_ms: int = 3_000,
             deadline_ms: int = 5_000, pin_factory=None, virtual_time: bool | None = None) -> int:
    """Run the terminal mode until ``q`` or the end of input; the exit status.

    ``source`` is a buzzer source name (``gpio``, ``mock``, ``pico``) or
    ``auto``/None (:func:`~companion.buzzers.base.choose_source`). With mock
    buzzers and a non-terminal ``stdin``, time is virtual unless
    ``virtual_time=False``. ``pin_factory`` is gpiozero's (tests, demos).
    """
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    players = [p for p in players if p]
    try:
        source = _buzz_source(source, players)
        _check_durations(debounce_ms=debounce_ms, tie_window_us=tie_window_us,
                         hold_ms=hold_ms, stuck_ms=stuck_ms, countdown_ms=countdown_ms,
                         deadline_ms=deadline_ms)
    except ValueError as exc:           # SourceError too: an unknown source
        err.write(f"companion buzz: {exc}\n")
        return 2
    interactive = _is_tty(stdin)
    virtual = (source == "mock" and not interactive) if virtual_time is None else virtual_time
    if virtual and source != "mock":
        err.write("companion buzz: virtual time needs mock buzzers\n")
        return 2
    try:
        s = _Session(players, source, pinmap, debounce_ms * MS, tie_window_us * US, hold_ms * MS,
                     stuck_ms * MS, countdown_ms * MS, deadline_ms * MS, out, pin_factory, virtual)
    except (PinMapError, RaceError, ValueError, OSError, GPIOZeroError, SourceUnavailable) as exc:
        err.write(f"companion buzz: {exc}\n")
        return 2
    try:
        _play(s, source, stdin, interactive, virtual)
    finally:
        s.close()
    return 0


def _buzz_source(source: str | None, players: list[str]) -> str:
    """The source to open for ``players``; ValueError if they cannot race on it."""
    source = choose_source(source)
    if source == "none":
        raise ValueError("buzz needs buzzers: --source none has none")
    if not players or len(set(players)) != len(players):
        raise ValueError("give one or more distinct player names")
    if source == "mock" and len(players) > 6:
        raise ValueError("mock buzzers are keys 1-6: at most 6 players")
    return source


def _check_durations(**durations) -> None:
    for name, v in durations.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer")


def _play(s: _Session, source: str, stdin, interactive: bool, virtual: bool) -> None:
    """Greet, run the buzzers on the keys or lines of ``stdin``, then sum up."""
    how = {"gpio": "real buzzers (GPIO)", "mock": "mock buzzers"}.get(
        source, f"{source} buzzers")
    mode = "virtual time" if virtual else "real time"
    s.view.write(f"companion buzz: {', '.join(s.players)} on {how}, {mode}")
    s.view.write(help_text(len(s.players), s.keyboard is not None))
    s.runner.start(thread=not virtual)
    if virtual:
        s.runner.pump()
    try:
        if interactive:
            _keys(s, stdin)
        else:
            _lines(s, stdin)
    except KeyboardInterrupt:
        pass
    s.runner.stop()
    s.runner.pump()         # what the buzzers sent before the end
    errors = len(s.runner.errors)
    s.view.write(f"bye: {s.view.races} race(s), {len(s.referee.faults)} fault(s)"
                 + (f", {errors} error(s)" if errors else ""))


def _is_tty(f) -> bool:
    try:
        return f.isatty() and f.fileno() >= 0
    except (AttributeError, ValueError, OSError):
        return False


def _lines(s: _Session, stdin) -> None:
    for line in stdin:
        line = line.split("#", 1)[0]
        for tok in line.split():
            if not s.token(tok):
                return
    s.settle()


def _keys(s: _Session, stdin) -> None:
    import termios
    import tty

    fd = stdin.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        while True:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            data = os.read(fd, 32).decode("utf-8", "ignore")
            if not data:
                return
            for ch in data:
                if not s.key(ch):
                    return
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
