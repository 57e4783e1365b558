"""The Raspberry Pi Camera Module, through picamera2 (Debian's
``python3-picamera2`` on Raspberry Pi OS; not on PyPI's wheels for other
machines, so it is imported only when this camera is chosen).

A frame's stamp is libcamera's ``SensorTimestamp`` (the start of its
exposure, from the kernel's buffer stamp, nanoseconds on the monotonic
clock): the same clock as the buzzers' edges. Should a kernel stamp it on
another clock (more than a second away from ``time.monotonic_ns()`` at
the first frame), the stamp on arrival is used instead, and said in the log."""

from __future__ import annotations

import logging
import os
import time
from typing import Iterator

from .base import CameraUnavailable, Frame, FrameSource

log = logging.getLogger(__name__)
S = 1_000_000_000


class PiCameraSource(FrameSource):
    """``size`` (width, height) of the frames, ``fps`` the frame rate."""

    name = "picamera"

    def __init__(self, size: tuple[int, int] = (640, 480), fps: int = 30, **options):
        super().__init__(**options)
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise CameraUnavailable("no picamera2 here (a Raspberry Pi with its Camera Module: "
                                    "apt install python3-picamera2); try --camera webcam") from exc
        try:
            self.cam = Picamera2()
        except (IndexError, RuntimeError) as exc:
            raise CameraUnavailable(f"no Camera Module found ({exc}); try --camera webcam") \
                from exc
        config = self.cam.create_video_configuration(
            main={"size": tuple(size), "format": "BGR888"},
            controls={"FrameDurationLimits": (S // 1000 // fps, S // 1000 // fps)})
        self.cam.configure(config)
        self._own_clock: bool | None = None

    @classmethod
    def detect(cls) -> bool:
        return os.path.exists("/dev/media0") and os.path.exists("/proc/device-tree/model")

    def frames(self) -> Iterator[Frame]:
        self.cam.start()
        try:
            while not self.stopping:
                request = self.cam.capture_request()
                try:
                    arrived = time.monotonic_ns()
                    image = request.make_array("main")
                    stamp = request.get_metadata().get("SensorTimestamp")
                finally:
                    request.release()
                yield Frame(self._stamp(stamp, arrived), image)
        finally:
            self.cam.stop()

    def _stamp(self, stamp, arrived: int) -> int:
        if self._own_clock is None:
            self._own_clock = not isinstance(stamp, int) or abs(arrived - stamp) > S
            if self._own_clock:
                log.warning("the camera's stamps are not on the monotonic clock: "
                            "frames are stamped on arrival")
        return arrived if self._own_clock else stamp

    def close(self) -> None:
        super().close()
        self.cam.close()


__all__ = ["PiCameraSource"]
