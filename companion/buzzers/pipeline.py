"""The one edge-to-verdict loop: a buzzer source, a consumer and the box.

``companion serve``, ``companion buzz``, the hardware harness and the
benchmarks all run this same :class:`Pipeline`:

* the source's callback (lgpio's thread on a Pi, a serial reader's, the
  caller's on mock pins) only queues what it reports and wakes the pipeline,
  like an interrupt handler that stamps and returns;
* one pipeline thread takes edges, faults and status changes off the queue,
  hands them to the *consumer*, ticks it, polls the feedback (LEDs, cue), then
  sleeps until the earliest deadline any of them has (spinning the last
  :data:`SPIN_NS`, so a verdict is published within microseconds of its
  time). With nothing due it sleeps until woken: no fixed-period wake-up.

A *consumer* (:class:`Consumer`) is what judges the edges: the table's
:class:`~companion.table.session.TableSession` under ``serve``, a bare
:class:`~companion.races.referee.Referee` wrapped in :class:`RefereeConsumer`
elsewhere. Anything that changes a consumer's deadlines from another thread
(a host starting a race) must wake the pipeline: the pipeline subscribes to
a consumer's updates when it has ``subscribe``, and :meth:`Pipeline.call`
wakes it too.

>>> from companion.races.referee import Referee, RaceSpec
>>> from companion.buzzers.mock import MockSource
>>> src = MockSource(["ana", "bo"], start_ns=0)
>>> judge = RefereeConsumer(Referee(src.buzzers), clock=src.now_ns)
>>> pipe = Pipeline(src, judge).start(thread=False)   # a test drives it with pump()
>>> race = pipe.call(judge.start_race, RaceSpec("first-press", src.buzzers, arm_ns=0))
>>> src.press("bo", 5_000_000); src.press("ana", 7_000_000)
>>> pipe.pump(100_000_000)
2
>>> race.verdict.winner
'bo'
>>> pipe.close(); src.close()
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, runtime_checkable

from ..races.edges import ButtonEdge, Edge
from ..races.referee import LiveRace, RaceSpec, Referee, earliest
from .base import CueStamp, EdgeSource, SourceFault, SourceStatus

log = logging.getLogger(__name__)

NS_PER_S = 1_000_000_000
#: How long before a deadline a waiting thread stops sleeping and spins:
#: an OS sleep can overshoot by a few hundred microseconds on a busy Pi,
#: and a verdict should not wait for the scheduler.
SPIN_NS = 400_000
#: How long an announced race on a source that sounds its own cue holds its
#: verdict, past the usual hold, for the source's stamp of GO: a press
#: stamped before the box's GO can arrive before that stamp (its frames come
#: in the order the box sampled them, so a press after GO never can).
CUE_WAIT_NS = 300_000_000


def wait_until(deadline_ns: int | None, clock: Callable[[], int], wake: threading.Event,
               idle_s: float | None = None, min_sleep_s: float = 0.0) -> None:
    """Block until ``deadline_ns`` on ``clock`` or until ``wake`` is set.

    Sleeps most of the way, then spins the last :data:`SPIN_NS`, so the
    caller runs within microseconds of the deadline. No deadline: wait for
    ``wake`` (at most ``idle_s``, None: for ever). A deadline already past
    waits ``min_sleep_s`` (never a busy loop)."""
    if deadline_ns is None:
        wake.wait(idle_s)
        return
    left = deadline_ns - clock()
    if left <= 0:
        if min_sleep_s:
            wake.wait(min_sleep_s)
        return
    if left > SPIN_NS:
        sleep_s = (left - SPIN_NS) / NS_PER_S
        capped = idle_s is not None and sleep_s > idle_s
        if wake.wait(idle_s if capped else sleep_s) or capped:
            return
    while clock() < deadline_ns and not wake.is_set():
        pass


@runtime_checkable
class Consumer(Protocol):
    """What a pipeline feeds. ``clock`` returns now in nanoseconds on the
    clock edges are stamped with; :meth:`tick` does everything due now;
    :meth:`next_deadline` is when :meth:`tick` next has work (None: nothing
    until the next edge or command). Optional: ``source_fault(fault)``,
    ``source_status(status)``, ``cue_sounded(t_ns, at_ns)`` (the source's own
    cue switched on at ``t_ns``, asked for ``at_ns``: an announced race arms
    at the GO the box really sounded) and ``subscribe(fn) -> unsubscribe``."""

    clock: Callable[[], int]

    def feed_edge(self, edge: ButtonEdge) -> None: ...
    def tick(self) -> None: ...
    def next_deadline(self) -> int | None: ...


class Pollable(Protocol):
    """Something with timed steps on the pipeline's clock (a keyboard's
    pending releases, the box's lights)."""

    def poll(self, now_ns: int) -> None: ...
    def next_deadline(self) -> int | None: ...


@dataclass(frozen=True)
class PipelineError:
    """Something the pipeline refused or survived: a bad edge or a failure."""

    message: str
    edge: ButtonEdge | None = None


class _Report:
    """A fault or status change from the source, queued with the edges."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value):
        self.kind, self.value = kind, value


class _Command:
    """A call from another thread (a host's tap, a phone's press), queued
    with the edges: ``t_ns`` is when it came in, on the edges' clock."""

    __slots__ = ("fn", "args", "kwargs", "t_ns", "done", "result", "error")

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, t_ns: int):
        self.fn, self.args, self.kwargs, self.t_ns = fn, args, kwargs, t_ns
        self.done = threading.Event()
        self.result = self.error = None

    def run(self) -> None:
        try:
            self.result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:        # noqa: BLE001 - the caller re-raises it
            self.error = exc
        self.done.set()

    def answer(self):
        if self.error is not None:
            raise self.error
        return self.result


class Pipeline:
    """Own the flow from ``source`` to ``consumer``: feed, tick, poll, sleep.

    ``source`` may be None (no hardware buzzers: the pipeline still keeps
    the consumer's time). ``feedback`` is the buzzer box (a
    :class:`~companion.buzzers.feedback.Feedback`): the pipeline attaches it
    to the consumer (the one way LEDs and cue learn of verdicts, faults and
    countdowns), tells it the faults the source reports, and polls it. None:
    the source's own LEDs and cue when it drives them (a Pico box:
    :meth:`Feedback.for_source <companion.buzzers.feedback.Feedback.for_source>`),
    else none; False: none at all. ``pollables`` are more timed things on the same
    clock. ``min_sleep_s`` is the least wait after a deadline that stays in
    the past; ``idle_s`` caps a sleep (None: no cap, sleep until woken).

    The source sees the pipeline as its :class:`~companion.buzzers.base.SourceSink`.

    It is the table's one way in: edges, the source's reports and every
    command from another thread (:meth:`call`: a host's log, a phone's press,
    an answer) go into one queue and are applied by one thread, the
    pipeline's, in the order they came in. A command waits ``hold_ns``
    (the referee's delivery margin: default the consumer's
    ``delivery_margin_ns``) so that an edge stamped before it, still on its
    way from the source, is applied before it. Without a thread
    (``start(thread=False)``) the caller of :meth:`call` or :meth:`pump`
    applies the queue, in the same order, under :attr:`lock`.
    """

    def __init__(self, source: EdgeSource | None, consumer, *, feedback=None,
                 pollables: Iterable[Pollable] = (), min_sleep_s: float = 0.001,
                 idle_s: float | None = None, max_errors: int = 1000,
                 name: str = "companion-pipeline", hold_ns: int | None = None):
        self.source = source
        self.consumer = consumer
        self.clock: Callable[[], int] = consumer.clock
        if feedback is None and source is not None and (
                getattr(source, "drives_cue", False) or getattr(source, "drives_leds", False)):
            from .feedback import Feedback
            feedback = Feedback.for_source(source, clock=consumer.clock)
        self.feedback = feedback or None
        self.pollables: list = list(pollables)
        self.min_sleep_s = min_sleep_s
        self.idle_s = idle_s
        self.max_errors = max_errors
        self.name = name
        self.lock = threading.RLock()
        self.errors: list[PipelineError] = []
        self.edges_fed = 0
        self.ticks = 0
        self.faults: list[SourceFault] = []
        self.source_status: SourceStatus | None = None
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        #: taken off the queue, not applied yet: a command waiting out its
        #: hold, and what came in behind it
        self._pending: deque = deque()
        self.hold_ns = int(getattr(consumer, "delivery_margin_ns", 0) if hold_ns is None
                           else hold_ns)
        #: the thread applying the queue now (a command it runs that calls
        #: back in is applied at once, not queued behind itself)
        self._applying: int | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self._unsubscribe: Callable[[], None] | None = None
        self._on_fault = getattr(consumer, "source_fault", None)
        self._on_status = getattr(consumer, "source_status", None)
        self._on_cue = getattr(consumer, "cue_sounded", None)
        if (source is not None and getattr(source, "drives_cue", False)
                and self._on_cue is not None and hasattr(consumer, "cue_wait_ns")):
            # the consumer hears the box's GO: let its races wait for it
            consumer.cue_wait_ns = CUE_WAIT_NS
        self.cues: list[CueStamp] = []
        if self.feedback is not None:
            self.feedback.attach(consumer)

    # -- the source's side (SourceSink): any thread, queue and wake only ------

    def edge(self, edge: ButtonEdge) -> None:
        self._q.put(edge)
        self._wake.set()

    def fault(self, fault: SourceFault) -> None:
        self._q.put(_Report("fault", fault))
        self._wake.set()

    def status(self, status: SourceStatus) -> None:
        self._q.put(_Report("status", status))
        self._wake.set()

    def cue(self, stamp: CueStamp) -> None:
        self._q.put(_Report("cue", stamp))
        self._wake.set()

    def wake(self) -> None:
        """Make the thread look at its deadlines again now (any thread)."""
        self._wake.set()

    # -- lifecycle -------------------------------------------------------------

    def start(self, thread: bool = True) -> "Pipeline":
        """Take reports from the source (and start the thread, if asked;
        without one, call :meth:`pump` yourself)."""
        if self._started:
            return self
        self._started = True
        self._stopping.clear()
        subscribe = getattr(self.consumer, "subscribe", None)
        if subscribe is not None and self._unsubscribe is None:
            self._unsubscribe = subscribe(self._on_update)
        if thread:          # made before the way in opens: a call from now on waits for it
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        enter = getattr(self.consumer, "enter_through", None)
        if enter is not None:
            enter(self)         # the consumer's every change comes in here
        try:
            if self.source is not None:
                self.source.start(self)
        except BaseException:
            self._thread = None
            raise
        if thread:
            self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and the flow of reports (the source stays open)."""
        self._stopping.set()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        self._thread = None
        if self._started and self.source is not None:
            self.source.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        enter = getattr(self.consumer, "enter_through", None)
        if enter is not None and getattr(self.consumer, "way_in", None) is self:
            with self.lock:
                self._drain()       # what came in is applied before the way closes
            enter(None)
        self._started = False

    def close(self) -> None:
        """Stop and let go of the feedback (its devices close with it). The
        source and the consumer belong to whoever opened them."""
        self.stop()
        if self.feedback is not None:
            self.feedback.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _on_update(self, update) -> None:
        # the consumer published something (a race started, a setting
        # changed...): its deadlines may have moved
        self._wake.set()

    # -- work --------------------------------------------------------------------

    def pump(self, now_ns: int | None = None) -> int:
        """One step: poll the feedback and pollables, feed everything queued,
        tick the consumer. ``now_ns`` (tests, virtual time) is passed to the
        consumer's ``tick`` and the polls instead of its clock's now.
        Returns the edges fed."""
        with self.lock, self._applying_here():
            return self._pump(now_ns)

    @contextlib.contextmanager
    def _applying_here(self):
        """This thread applies the queue meanwhile (the lock held): a
        command it runs that calls back in runs at once."""
        before, self._applying = self._applying, threading.get_ident()
        try:
            yield
        finally:
            self._applying = before

    def _pump(self, now_ns: int | None) -> int:
        now = self.clock() if now_ns is None else now_ns
        fb = self.feedback
        if fb is not None:
            self._poll(fb, now)
        for p in self.pollables:
            self._poll(p, now)
        # the thread holds a command for its margin; a caller pumping by
        # hand (tests, virtual time) applies everything now
        n = self._drain(now if self._thread is threading.current_thread() else None)
        try:
            if now_ns is None:
                self.consumer.tick()
            else:
                self.consumer.tick(now_ns)
        except Exception as exc:
            self._error(f"{type(self.consumer).__name__}.tick failed: {exc!r}", exc=True)
        self.ticks += 1
        return n

    def _poll(self, p, now: int) -> None:
        try:
            p.poll(now)
        except Exception as exc:
            self._error(f"{type(p).__name__}.poll failed: {exc!r}", exc=True)

    def _drain(self, now: int | None = None) -> int:
        """Apply what came in, in its order: edges and reports at once, a
        command once its hold is over (``now``: None applies every command
        now), after the edges behind it that were stamped before it."""
        with self._applying_here():
            return self._apply_pending(now)

    def _apply_pending(self, now: int | None) -> int:
        pending, get = self._pending, self._q.get_nowait
        while True:
            try:
                pending.append(get())
            except queue.Empty:
                break
        n = 0
        while pending:
            item = pending[0]
            if type(item) is _Command:
                self._pull_forward(item.t_ns)
                if pending[0] is not item:
                    continue                # an edge stamped before it goes first
                if now is not None and now < item.t_ns + self.hold_ns:
                    return n                # the rest waits behind the command
                pending.popleft()
                item.run()
                continue
            pending.popleft()
            n += self._apply(item)
        return n

    def _pull_forward(self, t_ns: int) -> None:
        """Edges that came in behind the first command but were stamped
        before it go before it (a source is a moment late, a tap is not)."""
        pending = self._pending
        early = [x for x in list(pending)[1:] if isinstance(x, ButtonEdge | Edge)
                 and x.t_ns < t_ns]
        if early:
            for x in early:
                pending.remove(x)
            pending.extendleft(reversed(early))

    def _apply(self, item) -> int:
        if type(item) is _Report:
            self._report(item)
            return 0
        try:
            self.consumer.feed_edge(item)
        except ValueError as exc:   # RaceError: unknown buzzer, bad edge
            self._error(f"edge refused: {exc}", item)
        except Exception as exc:
            self._error(f"feeding {item} failed: {exc!r}", item, exc=True)
        else:
            self.edges_fed += 1
            return 1
        return 0

    def _report(self, item: _Report) -> None:
        if item.kind == "cue":
            stamp = item.value
            self.cues[:] = [*self.cues[-99:], stamp]
            if stamp.on and self._on_cue is not None:
                try:
                    self._on_cue(stamp.t_ns, stamp.at_ns)
                except Exception as exc:
                    self._error(f"cue_sounded failed: {exc!r}", exc=True)
            return
        if item.kind == "fault":
            fault = item.value
            self.faults[:] = [*self.faults[-99:], fault]
            fn = self._on_fault
            if fn is None:
                log.warning("buzzer source fault (%s): %s", fault.kind, fault.message)
            fb = self.feedback
            if fb is not None and getattr(fault, "buzzer", None) is not None:
                fb.on_source_fault(fault)
        else:
            self.source_status = item.value
            fn = self._on_status
        if fn is not None:
            try:
                fn(item.value)
            except Exception as exc:
                self._error(f"source_{item.kind} failed: {exc!r}", exc=True)

    def _error(self, message: str, edge: ButtonEdge | None = None, exc: bool = False) -> None:
        if exc:
            log.exception(message)
        else:
            log.warning(message)
        if len(self.errors) < self.max_errors:
            self.errors.append(PipelineError(message, edge))

    def next_deadline(self) -> int | None:
        """The earliest time the consumer, the feedback or a pollable has work."""
        with self.lock:
            fb = self.feedback
            held = self._pending[0] if self._pending else None
            return earliest([self.consumer.next_deadline(),
                             None if fb is None else fb.next_deadline(),
                             held.t_ns + self.hold_ns if type(held) is _Command else None,
                             *(p.next_deadline() for p in self.pollables)])

    def _run(self) -> None:
        stop, wake, clock = self._stopping, self._wake, self.clock
        while not stop.is_set():
            deadline = None
            try:
                self.pump()
                deadline = self.next_deadline()
            except Exception as exc:        # the table's clock must never stop
                self._error(f"pipeline loop: {exc!r}", exc=True)
            wait_until(deadline, clock, wake, self.idle_s, self.min_sleep_s)
            wake.clear()

    # -- commands from other threads -----------------------------------------------

    def call(self, fn: Callable, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` as the table's next change, on the
        pipeline's thread after everything that came in before it (and the
        edges stamped before it), and return what it returns or raise what
        it raises. Called from the thread applying the queue (a command that
        calls back in), it runs at once."""
        if self._applying == threading.get_ident():
            return fn(*args, **kwargs)
        cmd = _Command(fn, args, kwargs, self.clock())
        self._q.put(cmd)
        self._wake.set()
        while not cmd.done.wait(0.05 if self._thread is not None else 0):
            if self._thread is None:
                with self.lock:             # no thread: the caller applies the queue
                    self._drain()
        return cmd.answer()


class RefereeConsumer:
    """A bare :class:`~companion.races.referee.Referee` as a pipeline consumer, for
    ``companion buzz``, the hardware harness and the benchmarks: each buzzer
    id is a player name (the identity seating). Its races run on the same
    :class:`~companion.races.desk.RaceDesk` as a table's (start, countdown, the
    box's GO stamp, the verdict), with no game and no log behind them.

    ``clock`` is the source's (``source.now_ns``). Listeners of
    :meth:`subscribe` hear ``{"type": "race", "data": {"race": ...}}`` when
    a race starts or is armed at the box's GO, as the session's subscribers
    do, so the buzzer box counts down an announced start the same way under
    every command. Source faults are kept in ``source_faults`` and passed
    to ``on_source_fault``.
    """

    def __init__(self, referee: Referee, clock: Callable[[], int],
                 on_source_fault: Callable[[SourceFault], None] | None = None):
        from ..races.arming import ArmingSettings
        from ..races.desk import RaceDesk

        self.referee = referee
        self.clock = clock
        self.on_source_fault = on_source_fault
        self.source_faults: list[SourceFault] = []
        self.status: SourceStatus | None = None
        self._subscribers: list[Callable[[dict], None]] = []
        self.desk = RaceDesk(self, ArmingSettings(), referee)

    @property
    def players(self) -> list[dict]:
        """The seating, as the session lists it: each buzzer is its player."""
        return [{"name": p, "buzzer": p} for p in self.referee.players]

    def feed_edge(self, edge: ButtonEdge) -> None:
        # the identity seating: the buzzer id is the player's name
        self.desk.feed(Edge(edge.buzzer, edge.pressed, edge.t_ns))  # type: ignore[arg-type]

    def tick(self, now_ns: int | None = None) -> None:
        self.desk.poll(self.clock() if now_ns is None else now_ns)

    def next_deadline(self) -> int | None:
        return self.desk.next_deadline(0)

    def source_fault(self, fault: SourceFault) -> None:
        self.source_faults[:] = [*self.source_faults[-99:], fault]
        if self.on_source_fault is not None:
            self.on_source_fault(fault)

    def source_status(self, status: SourceStatus) -> None:
        self.status = status

    def start_race(self, spec: RaceSpec, announced: bool = False) -> LiveRace:
        """Start ``spec`` as the live race (call through :meth:`Pipeline.call`).
        ``announced``: the box counts down to its arm time."""
        from ..races.arming import Arming

        now = self.clock()
        if announced:
            race = self.desk.start_announced(None, None, now, spec.players, spec=spec)
        else:
            armed = Arming(False, spec.arm_ns, spec.deadline_ns or spec.arm_ns)
            race = self.desk.begin(None, armed, now, spec.players, spec=spec)
        return race.live

    def cue_sounded(self, t_ns: int, at_ns: int | None = None) -> None:
        """The box sounded its cue at ``t_ns`` (asked for ``at_ns``): the
        announced race whose GO it is arms there (the same LiveRace)."""
        self.desk.cue_sounded(t_ns, at_ns, self.clock())

    def subscribe(self, fn: Callable[[dict], None]) -> Callable[[], None]:
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            if fn in self._subscribers:
                self._subscribers.remove(fn)
        return unsubscribe

    # -- the desk's owner: no game, no log, nothing saved ----------------------

    def race_events(self) -> list:
        return []

    def race_view(self, now: int) -> dict | None:
        race = self.desk.race
        if race is None:
            return None
        view = {"kind": race.kind, "announced": race.announced,
                "phase": "countdown" if race.announced and race.armed.scheduled_ns is None
                and now < race.go_ns else "live", "go_ns": race.go_ns}
        if race.armed.scheduled_ns is not None:
            view["scheduled_go_ns"] = race.armed.scheduled_ns
        return view

    def publish(self, kind: str, data) -> None:
        if kind == "race" and data is not None:
            self._publish({"type": "race", "data": {"race": data}})

    def fault(self, kind, message, player=None, t_ns=None) -> None:
        pass    # the referee's faults reach its own listeners

    def record_stray(self, e, why) -> None:
        pass

    def persist(self, race, durable) -> None:
        pass

    def race_decided(self, race, now) -> None:
        pass    # the verdict is the referee's listeners' news

    def marks_flip(self, player) -> bool:
        return False

    def _publish(self, update: dict) -> None:
        for fn in list(self._subscribers):
            try:
                fn(update)
            except Exception:
                log.exception("a race listener failed")


__all__ = ["Pipeline", "RefereeConsumer", "Consumer", "Pollable", "PipelineError",
           "wait_until", "SPIN_NS", "CUE_WAIT_NS"]
