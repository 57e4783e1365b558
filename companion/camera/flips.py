"""When a card was turned: it appears on the reveal spot and lies still (pure).

:class:`Spotter` takes the frames one by one (their time in integer ns and
the image: it reads no clock) and says when a new card has come to rest: a
card's outline (:func:`companion.camera.recognise.card_in`: what changed
since the pile as it lay before, light changes aside) found in
``still_frames`` frames in a row, its corners within ``still_px`` of where
they were in the first of them. The flip's time is that first frame's: the
first frame where the card lay in place. The card is then part of the pile
(the reference the next card is found against); a hand passing over it, or
the light changing, is no new card. A change of a card's shape with no
edge along half its outline in the frame is no card (``OUTLINED``: a card
taken away leaves the felt where it lay, a hand the spot it covered; a card
lying there has its border and its shadow all along). While nothing new
lies on the spot the reference follows the light; a spot that stays the
same for ``rebase_frames`` with no card found in it (a card taken away, the
pile squared) becomes the reference as it is. One frame whose outline is
off (a sleeve's edge found for the card's, JPEG noise) neither counts nor
restarts the card's run. A card one frame short of still settles then if
its face is already sure (``sure``: the watcher asks it). Once cards have
settled, an outline much smaller
than they were is no card (``AREA_LOW``: the part of a card a hand leaves
uncovered); a seat's spotter knows the size from the card its spot was
taught with.

A spotter can be given a ``region`` (a 0/255 mask as :func:`light` gives the
frame): only what changes inside it counts, and only a card found inside it
(:mod:`companion.camera.seats`: one spotter a player's spot, for the games
where everyone turns a card at once).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

from .recognise import (SCALE, Params, card_in, changed, difference, filled, light,
                        outlined, skin, straighten)

#: a card lies still when found this many frames in a row (133 ms at 30 fps) ...
STILL_FRAMES = 4
#: ... its corners within this many pixels of where they first lay
STILL_PX = 4.0
#: the spot is "as it lay" when less than this share of the frame changed
QUIET_SHARE = 0.005
#: a spot unchanged this many frames with no card found is the new reference
REBASE_FRAMES = 15
#: a card found lying still is not lost for this many frames in a row where it
#: was not found (a flicker, a shadow passing): they do not count, nor reset
RUN_GAP = 2
#: how far back a settled card's first frame in place is looked for
BACK_FRAMES = 24
#: ... a frame where at least this share of it looked as it lies now
BACK_SHARE = 0.75
#: ... past at most this many frames in a row where it did not (a hand over it)
BACK_GAP = 6
#: a card is found only with an edge along at least this share of its outline
OUTLINED = 0.5
#: ... and, once cards have settled, at least this share of their median
#: area (the camera is fixed: every card is the same size; the part of a
#: card a hand leaves uncovered is smaller). No upper bound: a sleeve's rim,
#: the keystone across the spot, a card turned on the pile all make real
#: cards a little bigger, and a card bigger than the last is no card's part
AREA_LOW = 0.8
#: the areas of this many cards settled last are kept
AREAS_KEPT = 5


@dataclass(frozen=True, eq=False)
class Settled:
    """A new card lies on the spot since ``t_ns`` (its first frame in
    place); ``face`` its straightened face, ``quad`` its outline, ``seen_ns``
    the frame that made it sure."""

    t_ns: int
    seen_ns: int
    quad: np.ndarray
    face: np.ndarray
    seat: str | None = None      # whose spot it lies on (companion.camera.seats)


class Spotter:
    """Frames in, :class:`Settled` cards out (see the module docstring)."""

    def __init__(self, still_frames: int = STILL_FRAMES, still_px: float = STILL_PX,
                 params: Params = Params(), rebase_frames: int = REBASE_FRAMES,
                 region=None, card_area: float | None = None, sure=None):
        if still_frames < 1:
            raise ValueError("still_frames must be at least 1")
        self.still_frames, self.still_px, self.params = still_frames, still_px, params
        self.rebase_frames = rebase_frames
        self.region = region                # the part of the frame looked at (None: all)
        #: ``sure(face) -> bool``: a card found still one frame short of
        #: ``still_frames`` settles then if its straightened face is sure
        #: (the watcher: its likeliest drawable face at the threshold)
        self.sure = sure
        self._area = None if region is None else max(1, int(np.count_nonzero(region)))
        self.reference = None               # the pile as it lay (light(frame))
        self._last = None                   # the frame before (light(frame))
        self._last_t = 0
        self._quiet = self._calm = None     # the last still frame; ... before the last stir
        self._same = 0                      # frames the spot stayed the same
        self._run: tuple[int, np.ndarray, int] | None = None   # (first t, quad, frames)
        self._other = None                  # the run before it, while one frame may be off
        self._lost = 0                      # frames in a row the run's card was not found
        self._recent: deque = deque(maxlen=BACK_FRAMES)         # (t_ns, lit) before this one
        #: the areas (pixels) of the cards that settled last (``card_area``: one
        #: known before any did, a seat's taught card)
        self._areas: deque = deque([card_area] if card_area else [], maxlen=AREAS_KEPT)

    def feed(self, t_ns: int, image) -> Settled | None:
        """The card that settled with this frame, if one did."""
        lit = light(image)
        last, self._last = self._last, lit
        if last is not None:
            self._recent.append((self._last_t, last))
        self._last_t = t_ns
        if self.reference is None:
            self.reference = self._calm = self._quiet = lit    # as the camera first saw it
            return None
        quiet = self._share(changed(lit, last)) < QUIET_SHARE
        self._same = self._same + 1 if quiet else 0
        if quiet:
            self._quiet = lit
        else:
            self._calm = self._quiet        # the spot as it lay before this stir
        quad = self._card(lit, image)
        if quad is None:
            self._lost += 1
            if self._lost > RUN_GAP:
                self._run = self._other = None
            if self._same >= self.rebase_frames:
                self.reference = lit        # nothing new: follow the light
            return None
        self._lost = 0
        run, other = self._run, self._other
        if run is not None and float(np.abs(quad - run[1]).max()) <= self.still_px:
            run = (run[0], run[1], run[2] + 1)
        elif other is not None and float(np.abs(quad - other[1]).max()) <= self.still_px:
            run, other = (other[0], other[1], other[2] + 1), run    # one frame off: back on
        else:
            run, other = (t_ns, quad, 1), run
        self._run, self._other = run, other
        face = None
        if run[2] < self.still_frames:
            if run[2] != self.still_frames - 1 or self.sure is None:
                return None
            face = straighten(image, quad)  # a frame sooner when its face is already sure
            if not self.sure(face):
                return None
        self._run = self._other = None
        self.reference = self._calm = self._quiet = lit    # the card is part of the pile now
        self._areas.append(_area(quad))
        return Settled(self.first_in_place(run[0], quad, lit), t_ns, quad,
                       straighten(image, quad) if face is None else face)

    def _card(self, lit, image):
        """The new card's outline: what changed since the pile as it lay
        when the last card settled; else (a card was missed, and lies in
        that change) since the spot last lay calm before this stir."""
        mask = self._within(changed(lit, self.reference))
        if self._share(mask) < QUIET_SHARE:
            self.reference = lit            # nothing new: follow the light
            return None
        quad = card_in(mask, self.params, image)
        if quad is None and self._calm is not self.reference:
            quad = card_in(self._within(changed(lit, self._calm)), self.params, image)
        if quad is None:                    # fingertips still on it: the hand cut off
            hand = skin(lit)
            if hand.any():
                cut = filled(cv2.bitwise_and(mask, cv2.bitwise_not(hand)))
                quad = card_in(cut, self.params, image)
        if quad is None:
            return None
        if self._areas and _area(quad) < AREA_LOW * float(np.median(self._areas)):
            return None                     # part of a card (a hand on the rest)
        if outlined(image, quad) < OUTLINED:
            return None                     # no card lies there: where one was taken away
        return quad

    def _within(self, mask):
        return mask if self.region is None else cv2.bitwise_and(mask, self.region)

    def _share(self, mask) -> float:
        """The share of the spot (the region) a change mask covers."""
        if self.region is None:
            return float(mask.mean()) / 255
        return np.count_nonzero(self._within(mask)) / self._area

    def first_in_place(self, t_ns: int, quad, lit) -> int:
        """The first frame the card lay where it lies now, back from ``t_ns``
        (when it was first found whole): the frames before it where at
        least BACK_SHARE of the card already looked as it does now (the
        flipper's fingertips still on its edge hide the card's outline,
        not the card)."""
        inside = np.zeros(lit.shape[:2], np.uint8)
        cv2.fillConvexPoly(inside, np.round(quad * SCALE).astype(np.int32), 255)
        inside = cv2.erode(inside, np.ones((5, 5), np.uint8)) > 0
        if not inside.any():
            return t_ns
        first, gap = t_ns, 0
        for t, old in reversed(self._recent):
            if t >= t_ns:
                continue
            if (difference(old, lit)[inside] <= 0.2).mean() >= BACK_SHARE:
                first, gap = t, 0
            else:
                gap += 1                    # a hand passing over it hides it a while
                if gap > BACK_GAP:
                    break
        return first


def _area(quad) -> float:
    return float(cv2.contourArea(np.asarray(quad, np.float32).reshape(-1, 1, 2)))


__all__ = ["Settled", "Spotter", "STILL_FRAMES", "STILL_PX"]
