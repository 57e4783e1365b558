"""The camera seam: what a frame source is, and how one is chosen.

The same pattern as the buzzer sources (:mod:`companion.buzzers.base`): one
small base class, :class:`FrameSource`; every subclass with a ``name`` that a
module of this package declares is found by reading the module's text (its
library, OpenCV or picamera2, is imported only when it is chosen); and one
function, :func:`open_camera`, is the only place the choice is made
(``--camera`` flag, else ``COMPANION_CAMERA``, else auto-detection: the
first of ``picamera``, ``webcam`` whose ``detect()`` is true).

A source yields :class:`Frame` values: an image (a BGR ``numpy`` array, as
OpenCV has them) stamped in integer nanoseconds on the clock of the
buzzers' edges (the Pi's monotonic clock; a recorded clip's frames at their
own times, offset to that clock). :meth:`FrameSource.frames` is the whole
contract; :meth:`FrameSource.start` runs it on a thread of its own, handing
each frame to a callable.

>>> class Grey(FrameSource):
...     name = "grey"
...     def frames(self):
...         import numpy as np
...         for i in range(3):
...             yield Frame(i * 33_000_000, np.zeros((4, 4, 3), np.uint8))
>>> [f.t_ns for f in Grey().frames()]
[0, 33000000, 66000000]
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator

from ..buzzers.base import Device, declared_sources

log = logging.getLogger(__name__)

#: Environment variable naming the camera when no ``--camera`` is given.
ENV_VAR = "COMPANION_CAMERA"
#: The order auto-detection tries the cameras in.
AUTO_ORDER = ("picamera", "webcam")


class CameraError(ValueError):
    """A camera that cannot be chosen (unknown name, bad option, bad clip)."""


class CameraUnavailable(RuntimeError):
    """A known camera whose hardware or library is missing here: one line
    saying what is missing and what to use instead."""


@dataclass(frozen=True, slots=True, eq=False)
class Frame:
    """One image (BGR, ``uint8``, height x width x 3) and when it was
    exposed, in ns on the clock of the buzzers' edges."""

    t_ns: int
    image: Any


class FrameSource(Device):
    """Base class of every camera (see the module docstring).

    A subclass sets ``name`` and overrides :meth:`frames` (and :meth:`close`
    to release its device); it may override :meth:`detect`, :meth:`now_ns`.
    Options nobody took are refused here (:class:`CameraError`)."""

    name: ClassVar[str] = "camera"
    #: frames come at the camera's pace whatever the reader does (a clip
    #: read as fast as it can be is not live: every frame is looked at)
    live: bool = True

    def __init__(self, **options):
        if options:
            raise CameraError(f"the {self.name} camera takes no option "
                              f"{', '.join(sorted(options))}")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    def frames(self) -> Iterator[Frame]:
        """Every frame, in order, until the source ends or :meth:`stop`."""
        return iter(())

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def start(self, on_frame: Callable[[Frame], object]) -> None:
        """Hand every frame to ``on_frame`` on a thread of the source's own;
        an exception there is recorded in :attr:`error` and ends it (the
        camera never stops the table)."""
        self._stop.clear()

        def run() -> None:
            try:
                for frame in self.frames():
                    if self._stop.is_set():
                        break
                    on_frame(frame)
            except Exception as exc:  # noqa: BLE001 - the camera must not take the table down
                log.exception("camera %s stopped", self.name)
                self.error = f"{type(exc).__name__}: {exc}"

        self._thread = threading.Thread(target=run, name=f"camera-{self.name}", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread (a clip's end); True when it is over."""
        t = self._thread
        if t is not None:
            t.join(timeout)
        return t is None or not t.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)


_REGISTRY: dict[str, type[FrameSource] | str] = {}


def register_camera(name: str, cls: type[FrameSource] | str) -> None:
    """Make a camera available by ``name``: a class or ``"module:Class"``."""
    if not isinstance(name, str) or not name.replace("-", "").isalnum():
        raise CameraError(f"a camera name must be a word, not {name!r}")
    _REGISTRY[name] = cls


def camera_names() -> list[str]:
    return list(_REGISTRY)


def camera_class(name: str) -> type[FrameSource]:
    """The class registered as ``name`` (CameraError if unknown,
    CameraUnavailable if its module cannot be imported here)."""
    try:
        entry = _REGISTRY[name]
    except KeyError:
        raise CameraError(f"unknown camera {name!r}; the cameras are "
                          f"{', '.join(['auto', *camera_names()])}") from None
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        try:
            entry = getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            raise CameraUnavailable(f"the {name} camera is not available here ({exc}); "
                                    f"try --camera clip with a recorded clip") from exc
        _REGISTRY[name] = entry
    return entry


def choose_camera(name: str | None = None) -> str | None:
    """The camera to use: ``name``, else ``COMPANION_CAMERA``, else the first
    of :data:`AUTO_ORDER` detected here; None: no camera (``"none"``)."""
    for given in (name, os.environ.get(ENV_VAR)):
        given = (given or "").strip()
        if given == "none":
            return None
        if given and given != "auto":
            camera_class(given)
            return given
    for candidate in AUTO_ORDER:
        try:
            if camera_class(candidate).detect():
                return candidate
        except (CameraError, CameraUnavailable):
            continue
    return None


def open_camera(name: str | None, **options) -> FrameSource | None:
    """Open the camera :func:`choose_camera` picks (None: none), with
    ``options`` for its constructor (``path`` and ``fps`` for a clip,
    ``device`` for a webcam). The one place a camera is chosen."""
    chosen = choose_camera(name)
    return None if chosen is None else camera_class(chosen)(**options)


def parse_camera(spec: str | None) -> tuple[str, dict] | None:
    """``companion serve --camera SPEC`` as ``(name, options)`` for
    :func:`open_camera`; None: no camera. SPEC is ``none``, ``auto``,
    ``picamera``, ``webcam`` or ``webcam:N`` (``/dev/videoN``, or a device
    path), or a recorded clip: a video file or a folder of frames
    (docs/camera.md, "The clip format"), played at its own pace
    (``realtime``). None or empty: ``COMPANION_CAMERA``, else no camera.
    CameraError says what is wrong: an unknown name, a clip that is not there."""
    spec = (spec or os.environ.get(ENV_VAR) or "none").strip()
    name, _, arg = spec.partition(":")
    if spec == "none":
        return None
    if spec == "auto":
        chosen = choose_camera("auto")
        return None if chosen is None else (chosen, {})
    if name == "webcam" and (not arg or arg.isdigit() or arg.startswith("/dev/")):
        return "webcam", ({} if not arg else {"device": int(arg) if arg.isdigit() else arg})
    if name in _REGISTRY and name not in ("clip", "webcam") and not arg:
        return name, {}
    path = Path(arg if name == "clip" and arg else spec).expanduser()
    if path.exists() or "/" in spec or path.suffix:
        if not path.exists():
            raise CameraError(f"no clip at {path} (a video file, or a folder of frames "
                              f"with times.csv: docs/camera.md)")
        return "clip", {"path": str(path), "realtime": True}
    raise CameraError(f"unknown camera {spec!r}: picamera, webcam, webcam:N (/dev/videoN), "
                      f"a clip (a video file or a folder of frames), auto or none")


for _name, _path in declared_sources(Path(__file__).parent, __package__,
                                     base="FrameSource").items():
    register_camera(_name, _path)
del _name, _path

__all__ = ["Frame", "FrameSource", "CameraError", "CameraUnavailable", "ENV_VAR", "AUTO_ORDER",
           "register_camera", "camera_names", "camera_class", "choose_camera", "open_camera",
           "parse_camera"]
