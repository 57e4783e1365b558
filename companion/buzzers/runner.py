"""The buzzer loop: one thread between an edge source and the referee.

The source's callback (lgpio's thread on a Pi, the caller's thread on mock
pins) only puts the raw edge in a queue, like an interrupt handler that
stamps and returns. The runner thread takes edges off the queue, feeds them
to the :class:`~companion.referee.Referee` and polls it on the source's
clock when :meth:`~companion.referee.Referee.next_deadline` is due (and the
"pollables": feedback steps, keyboard taps), so bursts settle, stuck buttons
are caught and verdicts are published on time. Everything that touches the
referee holds :attr:`BuzzerRunner.lock`.

>>> from companion.referee import Referee, RaceSpec
>>> from companion.buzzers.mock import MockSource
>>> src = MockSource(["ana", "bo"], start_ns=0)
>>> ref = Referee(src.players)
>>> run = BuzzerRunner(src, ref)
>>> _ = run.start(thread=False)             # a test drives it with pump()
>>> race = run.start_race(RaceSpec("first-press", src.players, arm_ns=0))
>>> src.press("bo", 5_000_000); src.press("ana", 7_000_000)
>>> run.pump(100_000_000)
2
>>> race.verdict.winner
'bo'
>>> run.stop(); src.close()
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Callable, Iterable, Protocol

from ..edges import ButtonEdge, Edge
from ..referee import LiveRace, RaceSpec, Referee, earliest
from .base import EdgeSource, open_source  # noqa: F401  (re-exported)
from .gpio import on_a_pi  # noqa: F401

log = logging.getLogger(__name__)

NS_PER_S = 1_000_000_000
#: How long before a deadline a waiting thread stops sleeping and spins:
#: an OS sleep can overshoot by a few hundred microseconds on a busy Pi,
#: and a verdict should not wait for the scheduler.
SPIN_NS = 400_000


def wait_until(deadline_ns: int | None, clock: Callable[[], int], wake: threading.Event,
               idle_s: float, min_sleep_s: float = 0.0) -> None:
    """Block until ``deadline_ns`` on ``clock`` (None: ``idle_s``), or until
    ``wake`` is set. Sleeps most of the way, then spins the last
    :data:`SPIN_NS`, so the caller runs within microseconds of the deadline.
    A deadline already past waits ``min_sleep_s`` (never a busy loop)."""
    if deadline_ns is None:
        wake.wait(idle_s)
        return
    left = deadline_ns - clock()
    if left <= 0:
        if min_sleep_s:
            wake.wait(min_sleep_s)
        return
    if left > SPIN_NS:
        if wake.wait(min((left - SPIN_NS) / NS_PER_S, idle_s)) or left - SPIN_NS > idle_s * NS_PER_S:
            return
    while clock() < deadline_ns and not wake.is_set():
        pass


def deadline_loop(step: Callable[[], object], next_deadline: Callable[[], int | None],
                  clock: Callable[[], int], wake: threading.Event, stop: threading.Event, *,
                  idle_s: float, min_sleep_s: float,
                  on_error: Callable[[Exception], None]) -> None:
    """The loop of a thread that keeps time for the table: run ``step``,
    then sleep until ``next_deadline()`` (see :func:`wait_until`) or until
    ``wake`` is set, until ``stop`` is set. A failing step goes to
    ``on_error`` (called inside the ``except``) and the loop goes on: the
    table's clock must never stop."""
    while not stop.is_set():
        deadline = None
        try:
            step()
            deadline = next_deadline()
        except Exception as exc:
            on_error(exc)
        wait_until(deadline, clock, wake, idle_s, min_sleep_s)
        wake.clear()


class Pollable(Protocol):
    def poll(self, now_ns: int) -> None: ...
    def next_deadline(self) -> int | None: ...


@dataclass(frozen=True)
class RunnerError:
    """Something the runner refused or survived: a bad edge or a failure."""

    message: str
    edge: Edge | None = None


class BuzzerRunner:
    """Own a source and a referee; feed edges, poll on time, never crash.

    ``pollables`` are extra objects with ``poll(now_ns)`` and
    ``next_deadline()`` on the same clock (e.g. a
    :class:`~companion.buzzers.feedback.Feedback`). The thread sleeps until
    the earliest deadline, at least ``min_sleep_s`` and at most ``idle_s``.
    Without a thread (``start(thread=False)``) call :meth:`pump` yourself.
    """

    def __init__(self, source: EdgeSource, referee: Referee, *,
                 pollables: Iterable[Pollable] = (), idle_s: float = 0.05,
                 min_sleep_s: float = 0.001, max_errors: int = 1000):
        self.source = source
        self.referee = referee
        self.pollables = list(pollables)
        self.idle_s = idle_s
        self.min_sleep_s = min_sleep_s
        self.lock = threading.RLock()
        self.errors: list[RunnerError] = []
        self.max_errors = max_errors
        self.edges_fed = 0
        self._q: queue.SimpleQueue[Edge] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False

    # -- lifecycle ----------------------------------------------------------

    def start(self, thread: bool = True) -> "BuzzerRunner":
        """Start taking edges from the source (and the thread, if asked)."""
        if self._started:
            return self
        self._started = True
        self._stopping.clear()
        self.source.start(self._put)
        if thread:
            self._thread = threading.Thread(target=self._run, name="buzzer-runner", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and the source's flow of edges (the source stays open)."""
        self._stopping.set()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        self._thread = None
        if self._started:
            self.source.stop()
        self._started = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- the source's side: called from any thread ----------------------------

    def _put(self, edge: Edge) -> None:
        self._q.put(edge)
        self._wake.set()

    def wake(self) -> None:
        """Make the thread look at its deadlines again now."""
        self._wake.set()

    # -- work ---------------------------------------------------------------

    def pump(self, now_ns: int | None = None) -> int:
        """Poll the pollables, feed every queued edge, poll the referee at
        ``now_ns`` (default: the source's now). Returns the edges fed."""
        with self.lock:
            now = self.source.now_ns() if now_ns is None else now_ns
            for p in self.pollables:
                try:
                    p.poll(now)
                except Exception as exc:
                    self._error(f"{type(p).__name__}.poll failed: {exc!r}", exc=True)
            n = self._drain()
            try:
                self.referee.poll(now)
            except Exception as exc:
                self._error(f"referee.poll failed: {exc!r}", exc=True)
            return n

    def _drain(self) -> int:
        n = 0
        while True:
            try:
                edge = self._q.get_nowait()
            except queue.Empty:
                return n
            try:
                self.referee.feed(edge.as_edge(edge.buzzer) if isinstance(edge, ButtonEdge)
                                  else edge)
            except ValueError as exc:   # RaceError: unknown player, bad edge
                self._error(f"edge refused: {exc}", edge)
            except Exception as exc:
                self._error(f"feeding {edge} failed: {exc!r}", edge, exc=True)
            else:
                n += 1
                self.edges_fed += 1

    def _error(self, message: str, edge: Edge | None = None, exc: bool = False) -> None:
        if exc:
            log.exception(message)
        else:
            log.warning(message)
        if len(self.errors) < self.max_errors:
            self.errors.append(RunnerError(message, edge))

    def next_deadline(self) -> int | None:
        """The earliest time the referee or a pollable has work to do."""
        with self.lock:
            return earliest([self.referee.next_deadline(),
                             *(p.next_deadline() for p in self.pollables)])

    def _run(self) -> None:
        deadline_loop(self.pump, self.next_deadline, self.source.now_ns, self._wake,
                      self._stopping, idle_s=self.idle_s, min_sleep_s=self.min_sleep_s,
                      on_error=lambda exc: self._error(f"runner loop: {exc!r}", exc=True))

    # -- commands from other threads -----------------------------------------

    def start_race(self, spec: RaceSpec) -> LiveRace:
        """Start ``spec`` as the live race. Edges already queued are fed first,
        so a press from before this call cannot land in the new race."""
        with self.lock:
            self._drain()
            race = self.referee.start(spec)
        self.wake()
        return race

    def call(self, fn: Callable, *args, **kwargs):
        """Run ``fn`` holding the referee lock, then wake the thread."""
        with self.lock:
            out = fn(*args, **kwargs)
        self.wake()
        return out


