"""The edge-source seam: what a buzzer source is, and how one is chosen.

Modelled on gpiozero's pin factories: one small base class,
:class:`EdgeSource`, that every kind of buzzer hardware subclasses (GPIO pins,
gpiozero's mock pins, a Raspberry Pi Pico on USB serial, ...); a registry of
sources by name, filled without a list: every subclass with a ``name`` that a
module of this package declares (read from its text, imported only when
chosen) and every ``companion.sources`` entry point of an installed
distribution (gpiozero's ``gpiozero_pin_factories``); and one function, :func:`open_source`, that is the only
place the choice is made (``--source`` flag, else ``COMPANION_SOURCE``, else
auto-detection).

A source turns its hardware into :class:`~companion.races.edges.ButtonEdge` values
(buzzer ids, never player names: who sits at which buzzer is the session's
business) stamped on the Pi's monotonic clock, and reports them through one
:class:`SourceSink` along with faults (:class:`SourceFault`) and its
connection state and clock quality (:class:`SourceStatus`).

Writing a source
----------------

A new source is one module in this package (or an entry point elsewhere);
nothing else is edited. A subclass **must**:

* set ``name`` (its registry name, a string constant in the class body) and ``precision_ns`` (how finely it can
  time an edge: 1 000 for the kernel's GPIO stamps);
* call ``super().__init__(buzzers, pinmap, **options)`` and claim its
  hardware in ``__init__`` (raise :class:`SourceUnavailable` with one line
  saying what is missing and what to use instead);
* call :meth:`EdgeSource._emit` with a :class:`ButtonEdge` for every raw
  change, stamped with :meth:`now_ns`'s clock (from any thread: the sink
  only queues);
* release its hardware in :meth:`close` (and call ``super().close()``).

A subclass **may** override:

* :meth:`detect` (classmethod): True when this machine has the hardware,
  for auto-detection (default False: chosen by name only);
* :meth:`start` / :meth:`stop` (call super) to begin and end the flow of
  edges, e.g. to report buttons already held at start;
* :meth:`now_ns` when its stamps are on another clock than
  ``time.monotonic_ns`` (a mock clock a test sets);
* :meth:`status` for its connection state and clock quality; report changes
  (lost link, reconnection, a new error bound) with :meth:`_report_status`
  and problems (a stuck button, a gap in sequence numbers, a corrupt frame,
  an overflowing queue) with :meth:`_report_fault`;
* :meth:`send_cue` (with ``drives_cue = True``) when the hardware sounds the
  announced-race cue itself, on the clock its presses are stamped with: the
  buzzer box's :class:`~companion.buzzers.feedback.Feedback` then asks it for
  each step of the countdown ahead of time (``cue_lead_ns``), and the source
  reports when the cue really switched with :meth:`_report_cue` (a
  :class:`CueStamp`): the table arms the race at its GO, so presses before
  the cue are false starts judged on the hardware's own clock. :meth:`cue`
  is the blocking form (the self-test's);
* :meth:`send_leds` (with ``drives_leds = True``) when the buzzers' LEDs are
  the hardware's own (a Pico box lights them on the host's command): the
  feedback lights the winner and blinks false starters through it instead
  of gpiozero pins. :meth:`set_leds` is the blocking form.

The defaults are "no such hardware": :meth:`cue` returns None,
:meth:`send_cue`, :meth:`send_leds` and :meth:`set_leds` return False.

>>> class Tapper(EdgeSource):
...     name = "tapper"
...     precision_ns = 1_000_000
...     def tap(self, buzzer, t_ns):
...         self._emit(ButtonEdge(buzzer, True, t_ns))
>>> got = []
>>> src = Tapper(["1", "2"])
>>> src.start(got.append)                  # a bare callable takes the edges only
>>> src.tap("2", 5_000)
>>> got
[ButtonEdge(buzzer='2', pressed=True, t_ns=5000)]
>>> src.close()
"""

from __future__ import annotations

import ast
import importlib
import logging
import os
import pkgutil
import time
from importlib.metadata import entry_points
from pathlib import Path
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterable, Protocol, runtime_checkable

from ..races.edges import BuzzerId, ButtonEdge

log = logging.getLogger(__name__)

#: Environment variable naming the source when no ``--source`` is given.
ENV_VAR = "COMPANION_SOURCE"
#: The order auto-detection tries the registered sources in.
AUTO_ORDER = ("pico", "gpio", "mock")
#: Fault kinds sources report (others are allowed; these are understood).
FAULT_KINDS = ("stuck", "cleared", "gap", "corrupt", "overflow", "disconnected",
               "incompatible")


class SourceError(ValueError):
    """A source that cannot be chosen (unknown name, bad option)."""


class SourceUnavailable(RuntimeError):
    """A known source whose hardware or library is missing on this machine.
    The message is one line saying what is missing and what to use instead."""


@dataclass(frozen=True, slots=True)
class SourceFault:
    """Something a source noticed that is not an edge.

    ``kind``: ``stuck`` (a button held too long at the source), ``cleared``
    (a stuck button let go), ``gap`` (edges lost, e.g. a skipped sequence
    number), ``corrupt`` (a frame that failed its check), ``overflow`` (the
    hardware's queue overflowed), ``disconnected`` (the link went away),
    ``incompatible`` (hardware this companion cannot talk to, e.g. a box
    with other firmware). ``buzzer`` names the buzzer when the fault is one
    button's; ``t_ns`` when it is known.
    """

    kind: str
    message: str
    buzzer: str | None = None
    t_ns: int | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message, "buzzer": self.buzzer,
                "t_ns": self.t_ns}


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """A source's connection state and the quality of its clock.

    ``precision_ns``: the resolution of an edge stamp. ``error_bound_ns``:
    how far a stamp may be from the Pi's monotonic clock (None: the stamps
    are on that clock itself, as GPIO's are; a serial source with its own
    clock reports its synchronisation error). ``detail``: a line for people
    (``"/dev/ttyACM0, firmware 1.2"``). ``away``: the box is lent out on
    purpose (an update, the self-test: ``companion pico``), not lost.
    """

    source: str
    connected: bool
    precision_ns: int
    error_bound_ns: int | None = None
    detail: str = ""
    away: bool = False

    def to_json(self) -> dict:
        return {"source": self.source, "connected": self.connected,
                "precision_ns": self.precision_ns, "error_bound_ns": self.error_bound_ns,
                "detail": self.detail, "away": self.away}


@dataclass(frozen=True, slots=True)
class CueStamp:
    """When a source's own cue (LED and piezo) really switched: ``on``, at
    ``t_ns`` on the clock of its edge stamps. ``at_ns`` is the time it was
    asked for (None: "now"), so the table can tell the GO of the race it
    scheduled from a blip or an older countdown's cue."""

    on: bool
    t_ns: int
    at_ns: int | None = None

    def to_json(self) -> dict:
        return {"on": self.on, "t_ns": self.t_ns, "at_ns": self.at_ns}


@runtime_checkable
class SourceSink(Protocol):
    """Where a source reports. Called from the source's own thread (lgpio's,
    a serial reader's): an implementation only queues and returns.

    A sink may also have ``cue(stamp)`` for a :class:`CueStamp` (sources
    that drive the cue report through it; a sink without it never hears)."""

    def edge(self, edge: ButtonEdge) -> None: ...
    def fault(self, fault: SourceFault) -> None: ...
    def status(self, status: SourceStatus) -> None: ...


class CallbackSink:
    """A sink from a plain callable that takes edges; faults and status
    changes are logged (and kept in ``faults`` / ``statuses``)."""

    def __init__(self, on_edge: Callable[[ButtonEdge], object]):
        self.on_edge = on_edge
        self.faults: list[SourceFault] = []
        self.statuses: list[SourceStatus] = []
        self.cues: list[CueStamp] = []

    def edge(self, edge: ButtonEdge) -> None:
        self.on_edge(edge)

    def cue(self, stamp: CueStamp) -> None:
        self.cues[-99:] = [*self.cues[-99:], stamp]

    def fault(self, fault: SourceFault) -> None:
        log.warning("buzzer source fault (%s): %s", fault.kind, fault.message)
        if len(self.faults) < 1000:
            self.faults.append(fault)

    def status(self, status: SourceStatus) -> None:
        self.statuses[-99:] = [*self.statuses[-99:], status]


def as_sink(sink) -> SourceSink:
    """``sink`` itself if it is a :class:`SourceSink`, else a
    :class:`CallbackSink` around a callable."""
    if isinstance(sink, SourceSink):
        return sink
    if callable(sink):
        return CallbackSink(sink)
    raise TypeError(f"a sink must be a SourceSink or a callable, not {type(sink).__name__}")


class Device:
    """What every device the table reads shares, buzzer sources
    (:class:`EdgeSource`) and cameras (``companion.camera.FrameSource``):
    a registry ``name``, auto-detection, the clock it stamps with, and
    release by :meth:`close` (also as a context manager)."""

    #: The registry name of this kind of device.
    name: ClassVar[str] = "device"

    @classmethod
    def detect(cls) -> bool:
        """True when this machine has this device's hardware (auto-detection)."""
        return False

    def now_ns(self) -> int:
        """Now on the clock this device stamps with."""
        return time.monotonic_ns()

    def stop(self) -> None:
        """Stop reporting (the hardware stays claimed until :meth:`close`)."""

    def close(self) -> None:
        """Release the hardware. Safe to call twice."""
        self.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class EdgeSource(Device):
    """Base class of every buzzer source (see the module docstring for what a
    subclass must and may override).

    ``buzzers`` are the buzzer ids this source reports (distinct, non-empty
    strings). ``pinmap`` is for sources whose buzzers are wired to pins;
    others ignore it.
    """

    #: The registry name of this kind of source.
    name: ClassVar[str] = "source"
    #: How finely an edge stamp resolves, in nanoseconds.
    precision_ns: ClassVar[int] = 1_000
    #: The source sounds the announced-race cue itself (:meth:`send_cue`).
    drives_cue: ClassVar[bool] = False
    #: How long before a cue step the feedback should ask for it at most
    #: (the hardware then switches it on its own clock at the asked time).
    cue_lead_ns: ClassVar[int] = 0
    #: The buzzers' LEDs are the source's own (:meth:`send_leds`).
    drives_leds: ClassVar[bool] = False

    def __init__(self, buzzers: Iterable[str], pinmap=None, **options):
        ids = tuple(buzzers)
        for b in ids:
            if not isinstance(b, str) or not b:
                raise SourceError(f"a buzzer id must be a non-empty string, not {b!r}")
        if len(set(ids)) != len(ids):
            raise SourceError(f"buzzer ids must be distinct: {', '.join(ids)}")
        if options:
            raise SourceError(f"the {self.name} source takes no option "
                              f"{', '.join(sorted(options))}")
        self.buzzers: tuple[BuzzerId, ...] = tuple(BuzzerId(b) for b in ids)
        self._sink: SourceSink | None = None

    @property
    def players(self) -> tuple[BuzzerId, ...]:
        """The buzzer ids (the name older callers use)."""
        return self.buzzers

    # -- the flow of edges --------------------------------------------------

    def start(self, sink) -> None:
        """Report to ``sink`` (a :class:`SourceSink`, or a callable taking
        edges) from now on, beginning with :meth:`status`."""
        self._sink = as_sink(sink)
        self._report_status(self.status())

    def stop(self) -> None:
        """Stop reporting (the hardware stays claimed until :meth:`close`)."""
        self._sink = None

    # -- clock and state ------------------------------------------------------

    def status(self) -> SourceStatus:
        """The connection state and clock quality now."""
        return SourceStatus(self.name, True, self.precision_ns)

    # -- the source's own cue and lights (may override) --------------------------

    def send_cue(self, on: bool, at_ns: int | None = None) -> bool:
        """Ask the hardware to switch its cue (LED and piezo) ``on`` or off at
        ``at_ns`` on :meth:`now_ns`'s clock (None or a time already past:
        now), without waiting; when it really switched is reported through
        the sink as a :class:`CueStamp`. True when the hardware took the
        request; False when it cannot keep that time (no link, a clock not
        yet synchronised for a time ahead) or has no cue: here, always."""
        return False

    def cue(self, on: bool, at_ns: int | None = None, timeout_s: float = 2.0) -> int | None:
        """:meth:`send_cue` and wait: the time the cue really switched, on the
        edges' clock, or None (no answer, or no hardware cue: here)."""
        return None

    def send_leds(self, on: dict[str, bool]) -> bool:
        """Light (True) or darken the source's own LEDs of the named buzzers,
        without waiting. False: not sent (no link, no LEDs: here)."""
        return False

    def set_leds(self, on: dict[str, bool]) -> bool:
        """:meth:`send_leds` and wait for the hardware to confirm."""
        return False

    # -- for subclasses: report -------------------------------------------------

    def _emit(self, edge: ButtonEdge) -> None:
        sink = self._sink
        if sink is not None:
            sink.edge(edge)

    def _report_fault(self, fault: SourceFault) -> None:
        sink = self._sink
        if sink is not None:
            sink.fault(fault)
        else:
            log.warning("buzzer source fault (%s): %s", fault.kind, fault.message)

    def _report_status(self, status: SourceStatus) -> None:
        sink = self._sink
        if sink is not None:
            sink.status(status)

    def _report_cue(self, stamp: CueStamp) -> None:
        report = getattr(self._sink, "cue", None)
        if report is not None:
            report(stamp)


class NoSource(EdgeSource):
    """No hardware buzzers: phones' virtual buzzers only. Reports nothing."""

    name = "none"
    precision_ns = 1_000_000

    def __init__(self, buzzers: Iterable[str] = (), pinmap=None, **options):
        super().__init__((), None)

    def status(self) -> SourceStatus:
        return SourceStatus(self.name, False, self.precision_ns, detail="no hardware buzzers")


# ---------------------------------------------------------------------------
# The registry

#: The entry-point group other distributions declare their sources in
#: (``[project.entry-points."companion.sources"]``, ``name = "module:Class"``).
ENTRY_POINT_GROUP = "companion.sources"

_REGISTRY: dict[str, type[EdgeSource] | str] = {}
_ERRORS: dict[str, str] = {}
_entry_points_read = False


def register_source(name: str, cls: type[EdgeSource] | str) -> None:
    """Make a source available by ``name``: a class, or ``"module:Class"``
    imported only when chosen (so a missing optional library makes only that
    source unavailable). Registering a name again replaces it."""
    if not isinstance(name, str) or not name or not name.replace("-", "").isalnum():
        raise SourceError(f"a source name must be a word, not {name!r}")
    if isinstance(cls, str):
        if ":" not in cls:
            raise SourceError(f"a lazy source must be 'module:Class', not {cls!r}")
    elif not (isinstance(cls, type) and issubclass(cls, EdgeSource)):
        raise SourceError(f"{cls!r} is not an EdgeSource subclass")
    _REGISTRY[name] = cls


def declared_sources(folder: Path | None = None, package: str = __package__,
                     base: str = "EdgeSource") -> dict[str, str]:
    """``{name: "module:Class"}`` for every :class:`EdgeSource` subclass (or
    subclass of the class named ``base``: the camera's ``FrameSource``) with a
    ``name`` that the modules of ``package`` (this one: its ``folder``)
    declare, read from their source text: nothing is imported, so an
    optional source's library is imported only when that source is chosen.
    A new source is one module here; no list to edit. ``none`` comes first,
    the others by name."""
    folder = Path(__file__).parent if folder is None else folder
    classes: dict[str, tuple[str, list[str], str | None]] = {}
    for mod in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        path = folder / f"{mod.name}.py"
        if mod.ispkg or not path.is_file():
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except (OSError, SyntaxError, ValueError) as exc:
            _ERRORS[f"{package}.{mod.name}"] = f"{type(exc).__name__}: {exc}"
            log.warning("buzzer sources: cannot read %s: %s", path, exc)
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                         for b in node.bases]
                classes.setdefault(node.name, (mod.name, bases, _class_name_attr(node)))

    def is_source(cls: str, seen: frozenset = frozenset()) -> bool:
        if cls == base:
            return True
        return cls in classes and cls not in seen and any(
            is_source(b, seen | {cls}) for b in classes[cls][1])

    found = {value: f"{package}.{mod}:{cls}" for cls, (mod, _, value) in classes.items()
             if value and cls != base and is_source(cls)}
    return dict(sorted(found.items(), key=lambda kv: (kv[0] != "none", kv[0])))


def _class_name_attr(node: ast.ClassDef) -> str | None:
    """The string a class body assigns to ``name``, if any."""
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and \
                isinstance(stmt.value.value, str) and \
                any(isinstance(t, ast.Name) and t.id == "name" for t in stmt.targets):
            return stmt.value.value
    return None


def _read_entry_points() -> None:
    """Register the sources other distributions declare (once, on first use);
    a name already taken keeps its source, and a broken declaration is
    recorded in :func:`source_errors`, never a crash."""
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    try:
        found = list(entry_points(group=ENTRY_POINT_GROUP))
    except Exception as exc:  # noqa: BLE001 - a broken distribution must not stop the table
        log.warning("could not read the %s entry points: %s", ENTRY_POINT_GROUP, exc)
        return
    for ep in found:
        if ep.name in _REGISTRY:
            log.warning("buzzer source %r: entry point %s ignored, the name is taken",
                        ep.name, ep.value)
            continue
        try:
            register_source(ep.name, ep.value)
        except SourceError as exc:
            _ERRORS[ep.name] = f"entry point {ep.name} = {ep.value}: {exc}"
            log.warning("%s", _ERRORS[ep.name])


def source_names() -> list[str]:
    """Every registered source name, in registration order."""
    _read_entry_points()
    return list(_REGISTRY)


def source_errors() -> dict[str, str]:
    """Sources (or their declarations) that failed to load so far: the error."""
    _read_entry_points()
    return dict(_ERRORS)


def source_class(name: str) -> type[EdgeSource]:
    """The class registered as ``name``; :class:`SourceError` if unknown,
    :class:`SourceUnavailable` if its module cannot be imported here."""
    _read_entry_points()
    try:
        entry = _REGISTRY[name]
    except KeyError:
        raise SourceError(f"unknown source {name!r}; the buzzer sources are "
                          f"{', '.join(['auto', *source_names()])}") from None
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        try:
            entry = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            _ERRORS[name] = f"{entry}: {type(exc).__name__}: {exc}"
            raise SourceUnavailable(f"the {name} buzzer source is not available here "
                                    f"({exc}); try --source mock") from exc
        _REGISTRY[name] = entry
    return entry


def _detects(name: str) -> bool:
    try:
        return bool(source_class(name).detect())
    except (SourceError, SourceUnavailable):
        return False
    except Exception:       # a broken probe must not stop the table
        log.exception("detecting the %s buzzer source failed", name)
        return False


def choose_source(name: str | None = None) -> str:
    """The source name to use: ``name`` (a ``--source`` flag), else the
    ``COMPANION_SOURCE`` environment variable, else the first of
    :data:`AUTO_ORDER` whose hardware is detected. ``"auto"`` or empty means
    not chosen. An unknown name is a :class:`SourceError`."""
    _read_entry_points()
    for given in (name, os.environ.get(ENV_VAR)):
        given = (given or "").strip()
        if given and given != "auto":
            if given not in _REGISTRY:
                source_class(given)            # raises the clear error
            return given
    for candidate in (*AUTO_ORDER, *[n for n in _REGISTRY if n not in AUTO_ORDER]):
        if candidate in _REGISTRY and candidate != "none" and _detects(candidate):
            return candidate
    return "none"


def open_source(name: str | None, buzzers: Iterable[str], pinmap=None,
                **options) -> EdgeSource:
    """Open the buzzer source chosen by :func:`choose_source` for ``buzzers``.
    ``options`` go to the source's constructor (``pin_factory`` for gpio and
    mock, ``port`` for pico...). The one place a source is chosen."""
    chosen = choose_source(name)
    cls = source_class(chosen)
    return cls(buzzers, pinmap, **options)


# The sources this package's modules declare, found by reading them (no list).
for _name, _path in declared_sources().items():
    register_source(_name, NoSource if _name == NoSource.name else _path)
del _name, _path

__all__ = ["Device", "EdgeSource", "SourceSink", "SourceFault", "SourceStatus", "CueStamp", "SourceError",
           "SourceUnavailable", "CallbackSink", "NoSource", "register_source", "source_names",
           "source_class", "source_errors", "declared_sources", "choose_source", "open_source",
           "ENV_VAR", "AUTO_ORDER", "ENTRY_POINT_GROUP",
           "FAULT_KINDS"]
