"""Never behind the camera: a frame handed on only when it is the newest.

A live camera delivers ~30 frames a second whatever the Pi is doing; when
looking at a frame takes longer than that (a loaded core), handing every
frame on would queue them, and each card would be logged later and later.
:class:`Newest` keeps one frame waiting: a frame that comes while the last
is still being looked at replaces the one waiting (counted in
:attr:`Newest.skipped`), so the one looked at next is always the newest,
with its own stamp (a card's flip time is its frame's, however late it is
looked at). A clip replayed as fast as it can be read is not live: every
frame is looked at, in order, so its logs are the same every run.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

log = logging.getLogger(__name__)


class Newest:
    """Frames in (:meth:`put`, the source's thread), the newest of them out to
    ``handle`` on a thread of its own; the frames it had no time for skipped."""

    def __init__(self, handle: Callable[[Any], object], name: str = "camera-look"):
        self.handle = handle
        self.skipped = 0
        self.handled = 0
        self._waiting: Any = None
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, frame) -> None:
        """The newest frame: it replaces one still waiting (skipped)."""
        with self._cond:
            if self._waiting is not None:
                self.skipped += 1
            self._waiting = frame
            self._cond.notify()

    def idle(self) -> bool:
        """No frame waiting (the last one put has been taken)."""
        with self._cond:
            return self._waiting is None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._waiting is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                frame, self._waiting = self._waiting, None
            try:
                self.handle(frame)
            except Exception:  # noqa: BLE001 - the camera must not take the table down
                log.exception("camera: a frame could not be looked at")
            self.handled += 1


__all__ = ["Newest"]
