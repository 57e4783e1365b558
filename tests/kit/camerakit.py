"""The camera in the console's tests: a camera the test holds cards under,
and Chope!'s faces drawn and taught (tests/kit/cardscenes.py draws them)."""

from __future__ import annotations

import threading
import time

from companion.camera.base import Frame, FrameSource
from companion.camera.faces import teach
from tests.kit.cardscenes import draw_faces, felt, photo_of

MS = 1_000_000


class HeldCamera(FrameSource):
    """A camera over the table that shows what the test puts under it
    (:meth:`show`: a card held up, or the bare felt), 20 frames a second,
    stamped on the monotonic clock as a webcam's are."""

    name = "held"

    def __init__(self, **options):
        super().__init__(**options)
        self.image = felt(1)
        self._lock = threading.Lock()

    def show(self, image) -> None:
        with self._lock:
            self.image = image

    def frames(self):
        while not self.stopping:
            with self._lock:
                image = self.image
            yield Frame(time.monotonic_ns(), image)
            time.sleep(0.05)


def chope_faces(names, seed: int = 0) -> dict:
    """A face for each Chope! card, each with art of its own."""
    return draw_faces(list(names), seed=seed)


def teach_all(folder, faces: dict) -> None:
    """Every face taught in ``folder`` as the console would (one photo each)."""
    for name, face in faces.items():
        teach(folder, name, photo_of(face))


__all__ = ["HeldCamera", "chope_faces", "teach_all"]
