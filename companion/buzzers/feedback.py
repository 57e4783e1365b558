"""Lights and sounds on the buzzer box: each buzzer's LED and the start cue.

What to show is decided by pure functions (:func:`verdict_cues`,
:func:`fault_cue`, :func:`countdown_plan`) from a verdict, a fault or an arm
time; :class:`Feedback` only drives gpiozero devices with the result. It is
attached one way, to what the pipeline feeds (a table session or a bare
referee), and never blocks: blinking is gpiozero's ``blink(background=True)``,
and timed steps (the countdown, the winner's light going out) run from
:meth:`Feedback.poll` on the buzzers' clock, which the
:class:`~companion.buzzers.pipeline.Pipeline` calls.

* winner: LED solid for ``win_ns``;
* loser, false start, ineligible press: LED blinks;
* tie: the tied players' LEDs pulse twice, slowly;
* stuck buzzer: LED flickers until it is released (whether the referee
  found it or the source reported it: a Pico box's own stuck timer);
* announced start: the cue blips ``countdown_blips`` times, one a second,
  then sounds a long GO exactly at the arm time.

A source that drives its own cue or LEDs (a Pico box: ``drives_cue``,
``drives_leds``) gets the same decisions: the LEDs go through its
``send_leds`` (a blink is a timed series of on/off commands, all changes of
one moment in one command), and each step of the countdown is asked of the
box ahead of its time (``cue_lead_ns``) with the time it is for, so the box
sounds GO on its own clock; the box's stamp of GO then arms the race
(:meth:`companion.table.session.TableSession.cue_sounded`).

>>> plan = countdown_plan(10_000_000_000)
>>> [(s.t_ns, s.on, s.what) for s in plan][-2:]
[(10000000000, True, 'go'), (10800000000, False, 'go')]
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

from ..races.referee import MS, Fault, Verdict
from ..table.events import Countdown, NewState, TableEvent, VerdictLogged
from ..table.events import Fault as TableFault

log = logging.getLogger(__name__)

S = 1_000 * MS


@dataclass(frozen=True)
class FeedbackSettings:
    """Timings of the lights and the cue (nanoseconds unless ``_s``)."""

    win_ns: int = 3 * S
    blink_on_s: float = 0.15
    blink_off_s: float = 0.15
    blink_n: int = 8
    tie_on_s: float = 0.5
    tie_off_s: float = 0.5
    tie_n: int = 2
    stuck_on_s: float = 0.05
    stuck_off_s: float = 0.45
    countdown_blips: int = 3
    blip_interval_ns: int = 1 * S
    blip_ns: int = 100 * MS
    go_ns: int = 800 * MS
    blip_tone: str = "A4"
    go_tone: str = "A5"

    @property
    def countdown_ns(self) -> int:
        """How long before the arm time the countdown starts."""
        return self.countdown_blips * self.blip_interval_ns


# ---------------------------------------------------------------------------
# Pure decisions


@dataclass(frozen=True)
class LedCue:
    """What one buzzer LED does: ``on`` (for ``on_ns``, None: until changed),
    ``blink`` (``on_s``/``off_s``, ``n`` times; None: until changed) or ``off``."""

    mode: str
    on_ns: int | None = None
    on_s: float = 0.0
    off_s: float = 0.0
    n: int | None = None


OFF = LedCue("off")


def verdict_cues(verdict: Verdict, settings: FeedbackSettings = FeedbackSettings()
                 ) -> dict[str, LedCue]:
    """The LED cue of each player a verdict concerns (players absent: no change).

    >>> v = Verdict("first-press", winner="ana", false_starts=["bo"])
    >>> {p: c.mode for p, c in verdict_cues(v).items()}
    {'bo': 'blink', 'ana': 'on'}
    """
    st = settings
    blink = LedCue("blink", on_s=st.blink_on_s, off_s=st.blink_off_s, n=st.blink_n)
    cues: dict[str, LedCue] = {}
    for p in verdict.tied:
        cues[p] = LedCue("blink", on_s=st.tie_on_s, off_s=st.tie_off_s, n=st.tie_n)
    for p in (*verdict.false_starts, *verdict.ineligible):
        cues[p] = blink
    if verdict.loser is not None:
        cues[verdict.loser] = blink
    if verdict.winner is not None:
        cues[verdict.winner] = LedCue("on", on_ns=st.win_ns)
    return cues


def fault_cue(fault, settings: FeedbackSettings = FeedbackSettings()) -> LedCue | None:
    """A stuck buzzer flickers until released; a cleared one goes dark. The
    referee's :class:`~companion.races.referee.Fault` or a source's
    :class:`~companion.buzzers.base.SourceFault` (anything with ``kind``);
    other kinds (a gap, an overflow) leave the LED alone: None."""
    return fault_kind_cue(fault.kind, settings)


def fault_kind_cue(kind: str, settings: FeedbackSettings = FeedbackSettings()) -> LedCue | None:
    """:func:`fault_cue` of a fault's kind (a table's fault event names it)."""
    if kind == "stuck":
        return LedCue("blink", on_s=settings.stuck_on_s, off_s=settings.stuck_off_s, n=None)
    if kind == "cleared":
        return OFF
    return None


@dataclass(frozen=True, order=True)
class CueStep:
    """One change of the cue at ``t_ns``: on (with ``tone`` for a tonal
    piezo) or off. ``what`` is ``blip`` or ``go``; ``count`` counts down."""

    t_ns: int
    on: bool
    what: str = "blip"
    tone: str | None = None
    count: int = 0


def countdown_plan(arm_ns: int, settings: FeedbackSettings = FeedbackSettings(),
                   now_ns: int | None = None) -> list[CueStep]:
    """The cue for an announced start: short blips one interval apart, then
    a long GO that starts exactly at ``arm_ns``. Blips that would start
    before ``now_ns`` (a countdown shorter than the blips) are left out, so
    a short countdown never plays its blips all at once."""
    st = settings
    steps = []
    for k in range(st.countdown_blips, 0, -1):
        t = arm_ns - k * st.blip_interval_ns
        if now_ns is not None and t < now_ns:
            continue
        steps.append(CueStep(t, True, "blip", st.blip_tone, k))
        steps.append(CueStep(t + st.blip_ns, False, "blip", None, k))
    steps.append(CueStep(arm_ns, True, "go", st.go_tone, 0))
    steps.append(CueStep(arm_ns + st.go_ns, False, "go", None, 0))
    return steps


def _s_to_ns(seconds: float) -> int:
    return int(round(seconds * 1_000_000_000))


# ---------------------------------------------------------------------------
# Driving the devices


class Feedback:
    """The buzzer box: drives each buzzer's LED and the cue from a table's
    verdicts, faults and announced starts.

    ``leds`` maps buzzer ids to gpiozero ``LED``/``PWMLED`` (buzzers without
    one are skipped); ``cue_led`` is an ``LED`` and ``piezo`` a ``Buzzer`` or
    ``TonalBuzzer`` (either may be None). ``clock`` is the buzzers' clock
    (``source.now_ns``). ``source``: an edge source that drives its own LEDs
    (``drives_leds``: they are used for its buzzers instead of ``leds``)
    and/or its own cue (``drives_cue``: used instead of ``cue_led`` and
    ``piezo``); :meth:`for_source` picks.

    One way in: :meth:`attach` to what judges the races. A pipeline does it
    for its consumer (:class:`~companion.buzzers.pipeline.Pipeline`'s
    ``feedback=``), and polls :meth:`poll` when :meth:`next_deadline` is due.
    The consumer is

    * a table (:class:`~companion.table.session.TableSession`, anything with
      ``subscribe_events``): the box hears it one way, its stream of typed
      events (:mod:`companion.table.events`, :meth:`on_event`): a
      :class:`~companion.table.events.VerdictLogged` lights the winner (a
      verdict the game refused is never logged, and lights nothing), a
      :class:`~companion.table.events.Countdown` plays the cue, a
      :class:`~companion.table.events.Fault` flickers a stuck buzzer (the
      referee's or the source's), a :class:`~companion.table.events.NewState`
      carries the seating (player names to buzzers). It never reads the
      pages' JSON and listens to no referee;
    * a :class:`~companion.buzzers.pipeline.RefereeConsumer` (no game, no
      log): its referee's verdicts and faults, its race updates' countdowns
      and the source's faults (:meth:`on_source_fault`, from the pipeline);
    * a bare :class:`~companion.races.referee.Referee` (buzzer ids are the player
      names): its verdicts and faults.

    Every call into the devices holds one lock: events arrive on whichever
    thread published them, a bare referee's verdicts on whichever fed the
    deciding edge.

    >>> from companion.buzzers.mock import ClockedMockFactory
    >>> f = ClockedMockFactory(start_ns=0)
    >>> fb = Feedback.from_pinmap(["ana", "bo"], pin_factory=f, clock=lambda: f.clock_ns)
    >>> fb.on_verdict(Verdict("first-press", winner="ana"))
    >>> fb.leds["ana"].is_lit
    True
    >>> f.clock_ns = 3_000_000_000; fb.poll(f.clock_ns); fb.leds["ana"].is_lit
    False
    >>> fb.close()
    """

    def __init__(self, leds: Mapping[str, object] | None = None, cue_led=None, piezo=None, *,
                 settings: FeedbackSettings | None = None,
                 clock: Callable[[], int] = time.monotonic_ns, owns_devices: bool = False,
                 source=None):
        self.source = source
        self._source_cue = bool(getattr(source, "drives_cue", False))
        self._source_led_ids = (frozenset(source.buzzers)
                                if getattr(source, "drives_leds", False) else frozenset())
        #: the source's LEDs as last asked for (buzzer id -> lit)
        self.source_lit: dict[str, bool] = {}
        self._led_out: dict[str, bool] = {}
        self._batch = 0
        self.leds = dict(leds or {})
        self.cue_led = cue_led
        self.piezo = piezo
        self.settings = settings or FeedbackSettings()
        self.clock = clock
        self.owns_devices = owns_devices
        #: the referee of the races shown (a table's: for information only,
        #: its verdicts come as logged events)
        self.referee = None
        self.consumer = None            # what it was attached to (None: a bare referee)
        self._table = False             # attached to a table's stream of events
        self._seat: dict[str, str] | None = None   # player name -> buzzer id; None: same
        self._unsubscribe: Callable[[], None] | None = None
        self._go: int | None = None
        self._lock = threading.RLock()
        self._steps: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._gen: dict[str, int] = {}
        self._cue_gen = 0

    @property
    def leds_by_buzzer(self) -> dict:
        """The LED devices by buzzer id (the same dict as ``leds``)."""
        return self.leds

    @classmethod
    def from_pinmap(cls, players, pinmap=None, *, pin_factory=None,
                    settings: FeedbackSettings | None = None,
                    clock: Callable[[], int] | None = None) -> "Feedback":
        """Create the devices of a pin map (the default one if None) for
        ``players`` on ``pin_factory``; they are closed with :meth:`close`."""
        from gpiozero import LED, PWMLED, Buzzer, TonalBuzzer

        from .gpio import ticks_to_ns
        from .pinmap import PinMap, load_pinmap

        pm = pinmap if isinstance(pinmap, PinMap) else load_pinmap(pinmap)
        slots = pm.for_players(players)
        led_cls = PWMLED if pm.led_kind == "pwm" else LED
        made: list = []
        try:
            leds = {}
            for p, s in slots.items():
                if s.led is not None:
                    leds[p] = led_cls(s.led, pin_factory=pin_factory)
                    made.append(leds[p])
            cue_led = None if pm.cue_led is None else LED(pm.cue_led, pin_factory=pin_factory)
            made.append(cue_led)
            piezo = None
            if pm.piezo is not None:
                piezo = (TonalBuzzer(pm.piezo, pin_factory=pin_factory) if pm.piezo_kind == "tonal"
                         else Buzzer(pm.piezo, pin_factory=pin_factory))
        except BaseException:
            for d in made:
                if d is not None:
                    d.close()
            raise
        if clock is None:
            factory = next(iter(leds.values())).pin_factory if leds else pin_factory
            if factory is not None:
                clock = lambda: ticks_to_ns(factory.ticks())  # noqa: E731
            else:
                clock = time.monotonic_ns
        return cls(leds, cue_led, piezo, settings=settings, clock=clock, owns_devices=True)

    @classmethod
    def for_source(cls, source, pinmap=None, *, pin_factory=None,
                   settings: FeedbackSettings | None = None,
                   clock: Callable[[], int] | None = None) -> "Feedback | None":
        """The box's feedback for ``source``: its own LEDs and cue when it
        drives them (a Pico box), else gpiozero devices from the pin map on
        ``pin_factory`` (default: the source's own ``pin_factory``); None when
        there is neither (no lights to drive)."""
        clock = clock or source.now_ns
        if getattr(source, "drives_leds", False) or getattr(source, "drives_cue", False):
            return cls(settings=settings, clock=clock, source=source)
        factory = pin_factory or getattr(source, "pin_factory", None)
        if factory is None:
            return None
        return cls.from_pinmap(list(source.buzzers),
                               pinmap if pinmap is not None else getattr(source, "pinmap", None),
                               pin_factory=factory, settings=settings, clock=clock)

    # -- attaching: the one way in ------------------------------------------

    def attach(self, target) -> "Feedback":
        """Show what ``target`` decides: a pipeline consumer (a session or a
        :class:`~companion.buzzers.pipeline.RefereeConsumer`) or a bare
        referee. Replaces any earlier attachment."""
        self.detach()
        if hasattr(target, "listeners"):            # a bare Referee
            with self._lock:
                self._seat = None
                self._follow(target)
            return self
        self.consumer = target
        events = getattr(target, "subscribe_events", None)
        if events is not None:                      # a table: its one stream
            self._table = True
            self._seat_table(getattr(target, "players", None) or [])
            self._unsubscribe = events(self.on_event)
            return self
        self.sync()
        subscribe = getattr(target, "subscribe", None)
        if subscribe is not None:
            self._unsubscribe = subscribe(self.on_update)
        return self

    def detach(self) -> None:
        """Stop following (the devices stay as they are)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._lock:
            self._follow(None)
            self.referee = None
            self.consumer = None
            self._table = False

    def _follow(self, referee) -> None:
        old = self.referee
        if old is referee:
            return
        if old is not None and self in old.listeners:
            old.listeners.remove(self)
        self.referee = referee
        if referee is not None:
            referee.listeners.append(self)

    def _seat_table(self, seating) -> None:
        """A table's seating (``{player: buzzer}`` or its players' list):
        each player's LED is their buzzer's (their name: a phone-only player)."""
        pairs = (seating.items() if isinstance(seating, Mapping) else
                 [(p.get("name"), p.get("buzzer")) for p in seating if isinstance(p, dict)])
        referee = getattr(self.consumer, "referee", None)
        with self._lock:
            self._seat = {name: buzzer or name for name, buzzer in pairs if name}
            self.referee = referee

    def on_event(self, event: TableEvent) -> None:
        """One event of the table's stream (see the class's docstring)."""
        try:
            if isinstance(event, NewState):
                self._seat_table(event.seating)
            elif isinstance(event, VerdictLogged):
                if event.verdict is not None:
                    self.on_verdict(event.verdict)
            elif isinstance(event, Countdown):
                if event.go_ns is not None and event.go_ns != self._go:
                    with self._lock:
                        self._go = event.go_ns
                        self.countdown(event.go_ns)
            elif isinstance(event, TableFault):
                cue = fault_kind_cue(event.fault, self.settings)
                if cue is None:
                    return
                if event.buzzer is not None:
                    self.show_buzzer(event.buzzer, cue)
                elif event.player is not None:
                    self.show(event.player, cue)
        except Exception:  # a broken LED must not stop the table
            log.exception("feedback failed on %s", type(event).__name__)

    def sync(self) -> None:
        """Follow a referee consumer's referee and seating (each buzzer is
        its player). A table's seating comes with its events instead."""
        consumer = self.consumer
        if consumer is None or self._table:
            return
        # read the consumer before taking our lock: the consumer's own lock
        # may be held by a thread that is about to call us with a verdict
        referee = getattr(consumer, "referee", None)
        seat = {}
        for p in list(getattr(consumer, "players", None) or []):
            if isinstance(p, dict) and p.get("name"):
                seat[p["name"]] = p.get("buzzer") or p["name"]
        with self._lock:
            self._seat = seat
            self._follow(referee)

    def on_update(self, update: dict) -> None:
        """A :class:`~companion.buzzers.pipeline.RefereeConsumer`'s race
        update: count down an announced start. (A table is heard through
        :meth:`on_event`.)"""
        kind = update.get("type") if isinstance(update, dict) else None
        data = update.get("data") or {} if kind else {}
        if kind == "state":
            self.sync()
            race = data.get("race") if isinstance(data, dict) else None
        elif kind == "race":
            race = data.get("race", data) if isinstance(data, dict) else None
        else:
            return
        if (isinstance(race, dict) and race.get("announced") and race.get("phase") == "countdown"
                and isinstance(race.get("go_ns"), int) and race["go_ns"] != self._go):
            with self._lock:
                self._go = race["go_ns"]
                self.countdown(race["go_ns"])

    def __call__(self, kind: str, payload) -> None:
        """The referee listener: verdicts and faults."""
        try:
            if kind == "verdict":
                verdict = payload.verdict if hasattr(payload, "verdict") else payload
                if verdict is not None:
                    self.on_verdict(verdict)
            elif kind == "fault":
                self.on_fault(payload)
        except Exception:  # a broken LED must not stop the referee
            log.exception("feedback failed on %s", kind)

    def on_verdict(self, verdict: Verdict) -> None:
        with self._lock, self._batched():
            for player, cue in verdict_cues(verdict, self.settings).items():
                self.show(player, cue)

    def on_fault(self, fault: Fault) -> None:
        """A referee's fault (its player's LED)."""
        cue = fault_cue(fault, self.settings)
        if cue is not None:
            self.show(fault.player, cue)

    def on_source_fault(self, fault) -> None:
        """A fault the source reports itself (a
        :class:`~companion.buzzers.base.SourceFault`: a buzzer id, not a
        player): a stuck buzzer the box found flickers, a cleared one goes
        dark; faults of no buzzer, or of other kinds, change nothing. A
        table reports the source's faults in its own stream (its
        :class:`~companion.table.events.Fault`): then this does nothing."""
        buzzer = getattr(fault, "buzzer", None)
        if self._table or not isinstance(buzzer, str):
            return
        cue = fault_cue(fault, self.settings)
        if cue is not None:
            try:
                self.show_buzzer(buzzer, cue)
            except Exception:   # a broken LED must not stop the pipeline
                log.exception("feedback failed on a source fault")

    # -- the LEDs -----------------------------------------------------------

    def buzzer_of(self, player: str) -> str | None:
        """The buzzer ``player`` is seated at (None: none)."""
        seat = self._seat
        return player if seat is None else seat.get(player)

    def show(self, player: str, cue: LedCue, now_ns: int | None = None) -> None:
        """Put ``player``'s LED into ``cue`` (replacing whatever it did)."""
        buzzer = self.buzzer_of(player)
        if buzzer is not None:
            self.show_buzzer(buzzer, cue, now_ns)

    def show_buzzer(self, buzzer: str, cue: LedCue, now_ns: int | None = None) -> None:
        """Put the LED of buzzer ``buzzer`` into ``cue``."""
        if buzzer in self._source_led_ids:
            with self._lock, self._batched():
                self._show_source(buzzer, cue, self.clock() if now_ns is None else now_ns)
            return
        led = self.leds.get(buzzer)
        if led is None:
            return
        with self._lock:
            gen = self._gen[buzzer] = self._gen.get(buzzer, 0) + 1
            if cue.mode == "on":
                led.on()
                if cue.on_ns is not None:
                    now = self.clock() if now_ns is None else now_ns
                    self._at(now + cue.on_ns, lambda: self._off_if(buzzer, gen))
            elif cue.mode == "blink":
                led.blink(on_time=cue.on_s, off_time=cue.off_s, n=cue.n, background=True)
            else:
                led.off()

    def _off_if(self, buzzer: str, gen: int) -> None:
        if self._gen.get(buzzer) == gen:
            if buzzer in self._source_led_ids:
                self._light(buzzer, False)
            else:
                self.leds[buzzer].off()

    def clear(self) -> None:
        """Every buzzer LED off (a new race is coming)."""
        with self._lock, self._batched():
            for buzzer in [*self.leds, *sorted(self._source_led_ids)]:
                self.show_buzzer(buzzer, OFF)

    # -- the source's own LEDs ------------------------------------------------

    def _show_source(self, buzzer: str, cue: LedCue, now: int) -> None:
        # callers hold self._lock inside a batch
        gen = self._gen[buzzer] = self._gen.get(buzzer, 0) + 1
        if cue.mode == "on":
            self._light(buzzer, True)
            if cue.on_ns is not None:
                self._at(now + cue.on_ns, lambda: self._off_if(buzzer, gen))
        elif cue.mode == "blink":
            on_ns, off_ns = _s_to_ns(cue.on_s), _s_to_ns(cue.off_s)
            self._blink(buzzer, gen, now, on_ns, off_ns, cue.n)
        else:
            self._light(buzzer, False)

    def _blink(self, buzzer: str, gen: int, t: int, on_ns: int, off_ns: int,
               left: int | None) -> None:
        """One blink from ``t`` (on, then off ``on_ns`` later), and the next
        one ``off_ns`` after that while ``left`` lasts (None: until changed)."""
        if self._gen.get(buzzer) != gen or left == 0:
            return
        self._light(buzzer, True)
        self._at(t + max(1, on_ns), lambda: self._off_if(buzzer, gen))
        nxt = None if left is None else left - 1
        if nxt != 0:
            at = t + max(1, on_ns) + max(1, off_ns)
            self._at(at, lambda: self._blink(buzzer, gen, at, on_ns, off_ns, nxt))

    def _light(self, buzzer: str, lit: bool) -> None:
        if self.source_lit.get(buzzer) != lit:
            self.source_lit[buzzer] = lit
            self._led_out[buzzer] = lit
        if not self._batch:
            self._flush_leds()

    @contextmanager
    def _batched(self) -> Iterator["Feedback"]:
        """Changes of the source's LEDs made inside go out as one command."""
        self._batch += 1
        try:
            yield self
        finally:
            self._batch -= 1
            if not self._batch:
                self._flush_leds()

    def _flush_leds(self) -> None:
        out, self._led_out = self._led_out, {}
        if out and self.source is not None:
            try:
                if not self.source.send_leds(out):
                    log.debug("the source did not take the LED command %s", out)
            except Exception:
                log.exception("the source's LEDs failed")

    # -- the cue ------------------------------------------------------------

    def countdown(self, arm_ns: int) -> list[CueStep]:
        """Clear the LEDs and play the countdown cue so that GO is at
        ``arm_ns``; returns the plan. A new countdown replaces one running.

        A source that drives its own cue is asked for each step up to its
        ``cue_lead_ns`` ahead (never more than half the gap since the step
        before: its hardware may keep only one step waiting), with the time
        the step is for; it sounds the step on its own clock."""
        with self._lock:
            self.clear()
            self._cue_gen += 1
            gen = self._cue_gen
            self.cue(False)
            now = self.clock()
            plan = countdown_plan(arm_ns, self.settings, now)
            prev = now
            for step in plan:
                if self._source_cue:
                    lead = min(int(getattr(self.source, "cue_lead_ns", 0) or 0),
                               max(0, (step.t_ns - prev) // 2))
                    self._at(max(now, step.t_ns - lead),
                             lambda s=step: self._source_cue_if(s, gen))
                    prev = step.t_ns
                else:
                    self._at(step.t_ns, lambda s=step: self._cue_if(s, gen))
            return plan

    def _cue_if(self, step: CueStep, gen: int) -> None:
        if gen == self._cue_gen:
            self.cue(step.on, step.tone)

    def _source_cue_if(self, step: CueStep, gen: int) -> None:
        """Ask the source for ``step`` on its own clock; if it cannot keep a
        time ahead (its clock is not synchronised yet), ask again at the
        step's own time, for "now"."""
        if gen != self._cue_gen:
            return
        try:
            ok = self.source.send_cue(step.on, step.t_ns)
        except Exception:
            log.exception("the source's cue failed")
            return
        if not ok and self.clock() < step.t_ns:
            self._at(step.t_ns, lambda: self._source_cue_if(step, gen))

    def cue(self, on: bool, tone: str | None = None) -> None:
        """Cue LED and piezo on (a tonal piezo at ``tone``) or off; the
        source's own cue, now, when it drives one."""
        if self._source_cue:
            try:
                self.source.send_cue(bool(on))
            except Exception:
                log.exception("the source's cue failed")
            return
        if self.cue_led is not None:
            self.cue_led.value = bool(on)
        p = self.piezo
        if p is None:
            return
        if hasattr(p, "play"):  # TonalBuzzer
            if on:
                p.play(tone or self.settings.blip_tone)
            else:
                p.stop()
        else:
            p.value = bool(on)

    # -- timed steps --------------------------------------------------------

    def _at(self, t_ns: int, fn: Callable[[], None]) -> None:
        # callers hold self._lock
        heapq.heappush(self._steps, (t_ns, next(self._seq), fn))

    def poll(self, now_ns: int) -> None:
        """Run the steps due by ``now_ns``, in time order."""
        steps = self._steps
        if not steps or steps[0][0] > now_ns:
            return
        with self._lock, self._batched():
            while steps and steps[0][0] <= now_ns:
                _, _, fn = heapq.heappop(steps)
                try:
                    fn()
                except Exception:
                    log.exception("feedback step failed")

    def next_deadline(self) -> int | None:
        steps = self._steps
        return steps[0][0] if steps else None

    def close(self) -> None:
        self.detach()
        with self._lock:
            self._steps.clear()
        if self.owns_devices:
            for dev in (*self.leds.values(), self.cue_led, self.piezo):
                if dev is not None:
                    dev.close()
