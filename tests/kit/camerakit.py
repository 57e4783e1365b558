"""The camera in the console's tests: a camera the test holds cards under,
and Chope!'s faces drawn and taught (tests/kit/cardscenes.py draws them)."""

from __future__ import annotations

import functools
import threading
import time

import cv2
import numpy as np

from companion.camera.base import Frame, FrameSource
from companion.camera.faces import teach
from companion.camera.recognise import Look, find_card, straighten
from tests.kit.cardscenes import draw_faces, felt, photo_of

MS = 1_000_000


class HeldCamera(FrameSource):
    """A camera over the table that shows what the test puts under it
    (:meth:`show`: a card held up, or the bare felt), 20 frames a second,
    stamped on the monotonic clock as a webcam's are. A card held up is in
    the next frame at once (as a webcam's next exposure would be), not up
    to a frame's time later: a test waiting for frames of it waits less."""

    name = "held"
    #: the time between two frames (20 frames a second)
    PERIOD_S = 0.05

    def __init__(self, **options):
        super().__init__(**options)
        self.image = felt(1)
        self._lock = threading.Lock()
        self._shown = threading.Event()

    def show(self, image) -> None:
        with self._lock:
            self.image = image
        self._shown.set()

    def frames(self):
        while not self.stopping:
            with self._lock:
                image = self.image
            yield Frame(time.monotonic_ns(), image)
            self._shown.wait(self.PERIOD_S)      # a frame's time, or a new card held up
            self._shown.clear()


def chope_faces(names, seed: int = 0) -> dict:
    """A face for each Chope! card, each with art of its own (drawn once
    per process and read-only: every test gets the same faces)."""
    return dict(_faces(tuple(names), seed))


@functools.lru_cache(maxsize=8)
def _faces(names: tuple, seed: int) -> dict:
    faces = draw_faces(list(names), seed=seed)
    for face in faces.values():
        face.setflags(write=False)
    return faces


#: each face's photo (:func:`held_photo`), by the face's id, with the face
_PHOTOS: dict[int, tuple] = {}


def held_photo(face):
    """The host holding ``face`` flat under the camera (cardscenes'
    ``photo_of(face)``: the same picture each time), made once per face
    (one takes tens of milliseconds) and read-only, so no one who is handed
    it can change it for the next."""
    got = _PHOTOS.get(id(face))
    if got is None or got[0] is not face:
        photo = photo_of(face)
        photo.setflags(write=False)
        got = _PHOTOS[id(face)] = (face, photo)
    return got[1]


def teach_all(folder, faces: dict) -> None:
    """Every face taught in ``folder`` as the console would (one photo each)."""
    for name, face in faces.items():
        teach(folder, name, held_photo(face))


def looks_of(faces: dict) -> dict:
    """``{name: Look}`` of each face as teaching it would keep it (its photo
    held under the camera, found and straightened), without a folder."""
    out = {}
    for name, face in faces.items():
        photo = held_photo(face)
        out[name] = Look.of(straighten(photo, find_card(photo)))
    return out


def lay_card(frame, face, centre, angle: float = 0.0):
    """``frame`` with ``face`` lying flat at ``centre`` (84 x 117 px, as
    cardscenes' cards, turned ``angle`` degrees): a card laid on a
    player's spot, seen from straight above."""
    small = cv2.resize(face, (84, 117), interpolation=cv2.INTER_AREA)
    h, w = frame.shape[:2]
    m = cv2.getRotationMatrix2D((42, 58.5), angle, 1.0)
    m[:, 2] += (centre[0] - 42, centre[1] - 58.5)
    card = cv2.warpAffine(small, m, (w, h))
    mask = cv2.warpAffine(np.full((117, 84), 255, np.uint8), m, (w, h)) > 127
    out = frame.copy()
    out[mask] = card[mask]
    return out


__all__ = ["HeldCamera", "chope_faces", "held_photo", "lay_card", "looks_of", "teach_all"]
