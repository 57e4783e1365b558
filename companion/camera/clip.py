"""A recorded clip as a camera: a video file, or a folder of frames with their times.

As gpiozero's MockFactory stands in for pins, a clip stands in for the camera
in tests and demos, and any recorded clip can be replayed against a game
with its buzzer presses beside it (docs/camera.md, "The clip format"):

* a **video file** (anything OpenCV's FFmpeg reads: ``.avi``, ``.mp4``...)
  and its frame rate (``fps``; default the file's own): frame *i* is at
  *i* / fps;
* a **folder of frames**: images (``.png``, ``.jpg``) and ``times.csv``, one
  line a frame, ``file,t_ns`` (a header line ``file,t_ns`` first), the
  frame's time in integer ns on any clock; the frames in that order.

The clip's times are offset to the table's clock: its first frame is at
``start_ns`` (default: now when the frames start). ``realtime``: wait for
each frame's time on the clock (a demo, a replay beside the buzzers);
otherwise as fast as they can be read (tests, the benchmark).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Iterator

from .base import CameraError, Frame, FrameSource

S = 1_000_000_000


def read_times(folder: Path) -> list[tuple[Path, int]]:
    """The frames of a folder clip and their times (CameraError naming the
    first bad line)."""
    path = folder / "times.csv"
    if not path.is_file():
        raise CameraError(f"{folder}: a frame folder needs times.csv (file,t_ns a line)")
    out: list[tuple[Path, int]] = []
    with path.open(newline="", encoding="utf-8") as f:
        for n, row in enumerate(csv.reader(f), 1):
            if n == 1 and row == ["file", "t_ns"]:
                continue
            try:
                name, t = row
                t_ns = int(t)
            except ValueError:
                raise CameraError(f"{path}:{n}: expected file,t_ns, not {row!r}") from None
            if out and t_ns < out[-1][1]:
                raise CameraError(f"{path}:{n}: the times must not go back")
            out.append((folder / name, t_ns))
    if not out:
        raise CameraError(f"{path}: no frames")
    return out


def write_times(folder: Path, times: list[tuple[str, int]]) -> None:
    """Write ``times.csv`` for frames already saved in ``folder``."""
    with (folder / "times.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["file", "t_ns"])
        w.writerows(times)


class ClipSource(FrameSource):
    """A recorded clip (``path``: a video file or a frame folder)."""

    name = "clip"

    def __init__(self, path=None, fps: float | None = None, start_ns: int | None = None,
                 realtime: bool = False, clock=None, **options):
        super().__init__(**options)
        if path is None:
            raise CameraError("the clip camera needs path=... (a video file or a frame folder)")
        self.path = Path(path)
        if not self.path.exists():
            raise CameraError(f"no clip at {self.path}")
        if fps is not None and not fps > 0:
            raise CameraError(f"fps must be positive, not {fps!r}")
        self.fps, self.start_ns, self.realtime = fps, start_ns, realtime
        self.live = realtime
        self._clock = clock or time.monotonic_ns

    def now_ns(self) -> int:
        return self._clock()

    def frames(self) -> Iterator[Frame]:
        import cv2

        first = self.now_ns() if self.start_ns is None else self.start_ns
        for t, image in (self._folder(cv2) if self.path.is_dir() else self._video(cv2)):
            at = first + t
            if self.realtime:
                while not self.stopping and (left := at - self.now_ns()) > 0:
                    time.sleep(min(0.01, left / S))     # one reading: never negative
            if self.stopping:
                return
            yield Frame(at, image)

    def _folder(self, cv2) -> Iterator[tuple[int, object]]:
        times = read_times(self.path)
        t0 = times[0][1]
        for file, t in times:
            image = cv2.imread(str(file), cv2.IMREAD_COLOR)
            if image is None:
                raise CameraError(f"cannot read the frame {file}")
            yield t - t0, image

    def _video(self, cv2) -> Iterator[tuple[int, object]]:
        cap = cv2.VideoCapture(str(self.path))
        if not cap.isOpened():
            raise CameraError(f"cannot read the video {self.path}")
        try:
            fps = self.fps or cap.get(cv2.CAP_PROP_FPS)
            if not fps or fps <= 0:
                raise CameraError(f"{self.path}: no frame rate in the file: give fps")
            i = 0
            while True:
                ok, image = cap.read()
                if not ok:
                    return
                yield round(i * S / fps), image
                i += 1
        finally:
            cap.release()


__all__ = ["ClipSource", "read_times", "write_times"]
