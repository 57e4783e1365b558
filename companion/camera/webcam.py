"""Any V4L2 (USB) webcam, through OpenCV (``opencv-python-headless``).

Each frame is stamped on the monotonic clock as it is grabbed (V4L2's own
buffer stamp is not exposed by OpenCV): the stamp is late by the camera's
exposure and transfer, a steady few tens of ms at most that ``latency_ns``
takes off (docs/camera.md, "Placing the camera")."""

from __future__ import annotations

import glob
import time
from typing import Iterator

from .base import CameraError, CameraUnavailable, Frame, FrameSource


class WebcamSource(FrameSource):
    """``device``: the V4L2 index (0: /dev/video0) or a path."""

    name = "webcam"

    def __init__(self, device: int | str = 0, width: int = 640, height: int = 480,
                 fps: int = 30, latency_ns: int = 0, **options):
        super().__init__(**options)
        try:
            import cv2
        except ImportError as exc:
            raise CameraUnavailable("the webcam needs OpenCV (pip install "
                                    "opencv-python-headless); try --camera clip") from exc
        if isinstance(device, str) and device.isdigit():
            device = int(device)
        self.cap = cv2.VideoCapture(device, cv2.CAP_V4L2)
        if not self.cap.isOpened():
            raise CameraUnavailable(f"no webcam at {device!r} (is it plugged in? "
                                    f"ls /dev/video*); try --camera clip")
        self.cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        self.cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        self.cap.set(cv2.CAP_PROP_FPS, fps)
        self.cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)     # the newest frame, not a queue of old ones
        if latency_ns < 0:
            raise CameraError("latency_ns cannot be negative")
        self.latency_ns = latency_ns

    @classmethod
    def detect(cls) -> bool:
        return bool(glob.glob("/dev/video[0-9]*"))

    def frames(self) -> Iterator[Frame]:
        while not self.stopping:
            ok = self.cap.grab()
            t = time.monotonic_ns() - self.latency_ns
            if not ok:
                raise CameraUnavailable("the webcam stopped giving frames")
            ok, image = self.cap.retrieve()
            if ok:
                yield Frame(t, image)

    def close(self) -> None:
        super().close()
        self.cap.release()


__all__ = ["WebcamSource"]
