"""Which card lies on the reveal spot (pure: images in, answers out; no
clock, no file).

Three steps, each a function:

* :func:`find_card`: the card's outline in a frame: the edges (Canny), every
  closed contour, the four-cornered convex ones of a card's proportions and
  size; the largest that is really a rectangle (a card on a pile shows its
  own outline, sharpened by its shadow on the card below).
* :func:`straighten`: the card seen from above, upright (a fixed size; a
  card turned half round is tried both ways up when it is compared).
* :func:`rank`: compared with the taught faces (:class:`Look` each): the
  whole face (normalised cross-correlation of the colour-balanced image,
  light and colour casts taken out), its colours (a hue histogram), its
  features (ORB keypoints matched), and the printed corner, which alone
  tells apart two faces that share their art. Only the cards that can
  still be drawn are candidates; the answer is each candidate's share of
  the evidence (a softmax of the scores), so the best one's is the
  confidence the flip is logged with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import cv2
import numpy as np

#: the straightened face (width, height): a poker card's 63 x 88 proportions
FACE_W, FACE_H = 126, 176
#: a card's long side over its short side, and how far it may be off
ASPECT, ASPECT_TOL = 88 / 63, 0.3
#: the corner's share of the face's width and height
CORNER_W, CORNER_H = 0.26, 0.2
#: how the scores add up, and how sharply the best is preferred
WEIGHTS = {"face": 0.45, "colour": 0.15, "corner": 0.3, "features": 0.1}
TEMPERATURE = 0.025
#: two likeliest faces closer than this are told apart by their corners alone
#: (:func:`twins`), its verdict weighing this much
TWIN_GAP, TWIN_WEIGHT = 0.08, 0.3


@dataclass(frozen=True)
class Params:
    """What a card looks like in the frame: its area as a share of the
    frame's (the camera is fixed over the reveal spot)."""

    min_area: float = 0.02
    max_area: float = 0.5
    min_fill: float = 0.82     # the contour's area over its rotated rectangle's
    min_support: float = 0.8   # the share of its outline on an edge


def order_corners(pts) -> np.ndarray:
    """The four corners clockwise from the top-left of the card upright:
    the first side is a short one."""
    pts = np.asarray(pts, dtype=np.float32).reshape(4, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    pts = pts[np.argsort(ang)]              # clockwise on the image (y down)
    start = int(np.argmin(pts.sum(axis=1)))
    pts = np.roll(pts, -start, axis=0)
    if np.linalg.norm(pts[1] - pts[0]) > np.linalg.norm(pts[2] - pts[1]):
        pts = np.roll(pts, -1, axis=0)      # lying sideways: start on a short side
    return pts


def find_card(image, params: Params = Params(), reference=None) -> np.ndarray | None:
    """The outline of the card on top (4 x 2, :func:`order_corners`), or None.
    ``reference``: the spot before this card came (the pile as it lay): the
    card is what changed since, light changes aside (:func:`changed`); without
    one, the card is the largest closed outline of a card's shape with an edge
    all along it."""
    frame_area = image.shape[0] * image.shape[1]
    if reference is not None:
        return card_in(changed(light(image), light(reference)), params, image)
    grey = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (7, 7), 0)
    edges = cv2.morphologyEx(cv2.Canny(grey, 40, 120), cv2.MORPH_CLOSE,
                             np.ones((5, 5), np.uint8))
    contours, _ = cv2.findContours(edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    near = cv2.dilate(edges, np.ones((5, 5), np.uint8))   # an edge within 2 px
    best, best_key = None, None
    for c in contours:
        quad = _card_quad(c, frame_area, params)
        if quad is None:
            continue
        key = (round(_support(near, quad), 1), cv2.contourArea(quad))
        if key[0] >= params.min_support and (best_key is None or key > best_key):
            best, best_key = quad, key
    if best is None:                        # no clean outline: what stands out from
        table = np.empty_like(image)        # the table (its colour around the frame's edge)
        ring = np.concatenate([image[:6].reshape(-1, 3), image[-6:].reshape(-1, 3),
                               image[:, :6].reshape(-1, 3), image[:, -6:].reshape(-1, 3)])
        table[:] = np.median(ring, axis=0)
        return card_in(changed(light(image), light(table)), params, image)
    return order_corners(best)


def _support(edges, quad) -> float:
    """The share of the quad's outline that lies on an edge (the card on
    top has one all along; two cards of a pile together bridge a corner)."""
    pts = np.asarray(quad, dtype=np.float32).reshape(4, 2)
    h, w = edges.shape
    u = np.linspace(0, 1, 24, endpoint=False)[:, None]
    on = 0
    for k in range(4):
        seg = pts[k] + (pts[(k + 1) % 4] - pts[k]) * u
        x = np.clip(seg[:, 0].round().astype(int), 0, w - 1)
        y = np.clip(seg[:, 1].round().astype(int), 0, h - 1)
        on += int((edges[y, x] > 0).sum())
    return on / (4 * len(u))


#: the change is looked for at this fraction of the frame's size (speed; a
#: card is still ~40 x 60 pixels at 480 x 360)
SCALE = 0.5


def light(image) -> np.ndarray:
    """``image`` as :func:`changed` compares it: half size, a little
    blurred, float32."""
    small = cv2.resize(image, None, fx=SCALE, fy=SCALE, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0).astype(np.float32)


def difference(lit, reference_lit) -> np.ndarray:
    """How much each pixel differs from the reference beyond the light
    (both as :func:`light` gives them): the reference lit as the image is
    (each channel times the median of their ratios, so a lamp dimmed, a
    cloud or a colour change of the light is no change; clipped at 255 as
    the camera clips, so a card white in both is no change either), then
    the largest channel's difference over that prediction (+24: the dark
    table's noise)."""
    a, b = lit[::4, ::4].reshape(-1, 3), reference_lit[::4, ::4].reshape(-1, 3)
    gain = np.median(a / (b + 1.0), axis=0)
    pred = reference_lit * gain
    np.minimum(pred, 255.0, out=pred)
    d = cv2.absdiff(lit, pred)
    pred += 24.0
    d /= pred
    # the largest channel, pairwise: numpy's max over a last axis of 3 took
    # three times as long (most of a frame's look for a change)
    return np.maximum(np.maximum(d[..., 0], d[..., 1]), d[..., 2])


_DISC = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9))


def changed(lit, reference_lit, threshold: float = 0.2) -> np.ndarray:
    """Where an image differs from the reference more than the light does
    (both as :func:`light` gives them), a 0/255 mask: its holes filled (a
    card on a card like it differs only in places), then opened with a
    disc wider than a finger (a hand reaching onto the card is no part of
    it; specks go too)."""
    return filled((difference(lit, reference_lit) > threshold).astype(np.uint8) * 255)


def filled(mask) -> np.ndarray:
    """A mask of what changed closed, its holes filled, then opened with a
    disc wider than a finger (:func:`changed`)."""
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(mask, contours, -1, 255, -1)
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, _DISC)


def skin(lit) -> np.ndarray:
    """Where a hand may be in an image as :func:`light` gives it (a 0/255
    mask): skin's hue (red to orange), neither grey nor saturated like
    print, not dark; widened a little (the hand's blurred edge)."""
    hsv = cv2.cvtColor(np.clip(lit, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV)
    mask = cv2.inRange(hsv, (0, 80, 70), (22, 180, 255))
    return cv2.dilate(mask, np.ones((5, 5), np.uint8))


def card_in(mask, params: Params = Params(), image=None) -> np.ndarray | None:
    """The card's outline in a mask of what changed (the largest part of a
    card's shape), in the full frame's pixels, or None. ``image``: the
    frame, to snap each side onto the card's edge in it (:func:`snap`)."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    area = mask.shape[0] * mask.shape[1]
    largest = sorted(contours, key=cv2.contourArea, reverse=True)[:4]
    for c in largest:
        quad = _card_quad(c, area, params)
        if quad is not None:
            quad = order_corners(np.asarray(quad, np.float32).reshape(4, 2) / SCALE)
            return quad if image is None else snap(image, quad)
    if image is None:
        return None
    return _bitten(largest, area, params, image)


#: a change of a card's shape with a bite out of it (:func:`_bitten`) fills
#: at least this share of its least rectangle
BITTEN_FILL = 0.6


def _bitten(contours, area: float, params: Params, image) -> np.ndarray | None:
    """A card whose change has a bite out of it: where it lies on a card
    like it (a corner over the same tint, a copy of itself a little turned)
    it differs from the pile only in places. Its least rectangle is the
    card when, snapped onto the frame's edges (:func:`snap`), an edge runs
    along at least ``params.min_support`` of its outline (the card on top
    has one all along: its border, its shadow on the card below)."""
    loose = Params(params.min_area, params.max_area, BITTEN_FILL, params.min_support)
    edges = None
    for c in contours:
        if _card_quad(c, area, loose) is None:
            continue
        box = cv2.boxPoints(cv2.minAreaRect(cv2.convexHull(c))) / SCALE
        quad = snap(image, order_corners(box))
        if edges is None:
            edges = _edges(image)
        if _support(edges, quad) >= params.min_support:
            return quad
    return None


def _edges(image) -> np.ndarray:
    """The image's edges, widened 2 px (a 0/255 mask)."""
    grey = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    return cv2.dilate(cv2.Canny(grey, 40, 120), np.ones((5, 5), np.uint8))


def outlined(image, quad) -> float:
    """The share of ``quad``'s outline along an edge of ``image``: a card
    lying there has one nearly all along (its border, its shadow); the
    place a card was taken from, or a hand left, has none."""
    return _support(_edges(image), quad)


def snap(image, quad, reach: int = 5) -> np.ndarray:
    """``quad`` with each side moved (within ``reach`` px, along its normal)
    onto the strongest edge of ``image`` there, the corners where the
    sides meet: the change found at half size, and the card's shadow
    beside it, are a few pixels off its outline."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    gx, gy = cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1)
    h, w = grey.shape
    c = quad.mean(axis=0)
    offsets = np.arange(-reach, reach + 1, dtype=np.float32)
    lines = []
    for k in range(4):
        a, b = quad[k], quad[(k + 1) % 4]
        d = (b - a) / (np.linalg.norm(b - a) + 1e-9)
        n = np.array([d[1], -d[0]], np.float32)
        n = n if np.dot((a + b) / 2 - c, n) > 0 else -n          # outward
        u = np.linspace(0.15, 0.85, 20)[:, None]
        pts = a + (b - a) * u
        # every offset at once (a row each): the edge's strength along the
        # side there, the first strongest taken
        p = pts[None, :, :] + (offsets[:, None] * n)[:, None, :]
        x = np.clip(p[..., 0].round().astype(int), 0, w - 1)
        y = np.clip(p[..., 1].round().astype(int), 0, h - 1)
        g = np.median(np.abs(gx[y, x] * n[0] + gy[y, x] * n[1]), axis=1)
        lines.append((a + n * int(offsets[int(np.argmax(g))]), d))
    out = [_meet(lines[k - 1], lines[k]) for k in range(4)]
    if any(p is None for p in out):
        return quad
    out = np.array(out, np.float32)
    return out if float(np.abs(out - quad).max()) <= 2 * reach else quad


def _meet(l1, l2):
    """Where two lines (a point and a direction each) cross, or None."""
    (p, d), (q, e) = l1, l2
    m = np.array([[d[0], -e[0]], [d[1], -e[1]]], np.float32)
    if abs(float(np.linalg.det(m))) < 1e-6:
        return None
    t = np.linalg.solve(m, q - p)
    return p + d * t[0]


def _card_quad(contour, frame_area: float, params: Params):
    """The contour's four corners when it is a card's outline (its hull: a
    speck of the table touching it is no corner; the hull's points nearest
    the corners of its least rectangle), else None."""
    hull = cv2.convexHull(contour)
    area = cv2.contourArea(hull)
    if not params.min_area * frame_area <= area <= params.max_area * frame_area:
        return None
    rect = cv2.minAreaRect(hull)
    (w, h) = rect[1]
    if min(w, h) <= 0 or abs(max(w, h) / min(w, h) - ASPECT) > ASPECT_TOL:
        return None
    if min(cv2.contourArea(contour), area) / (w * h) < params.min_fill:
        return None
    box = cv2.boxPoints(rect)
    pts = hull.reshape(-1, 2).astype(np.float32)
    return np.array([pts[np.argmin(((pts - b) ** 2).sum(axis=1))] for b in box], np.float32)


def straighten(image, quad) -> np.ndarray:
    """The card inside ``quad`` seen from above, upright, FACE_W x FACE_H."""
    dst = np.array([[0, 0], [FACE_W - 1, 0], [FACE_W - 1, FACE_H - 1], [0, FACE_H - 1]],
                   dtype=np.float32)
    m = cv2.getPerspectiveTransform(np.asarray(quad, dtype=np.float32), dst)
    return cv2.warpPerspective(image, m, (FACE_W, FACE_H), flags=cv2.INTER_AREA)


def balanced(face) -> np.ndarray:
    """``face`` with its light and colour cast taken out: each channel to
    mean 0, spread 1 over the whole face (grey-world balance), float32."""
    f = face.astype(np.float32)
    mean = f.reshape(-1, 3).mean(axis=0)
    std = f.reshape(-1, 3).std(axis=0) + 1.0
    return (f - mean) / std


#: the printed corner on the straightened face (x0, y0, x1, y1): what is
#: taught, and the wider box it is looked for in (a card found a few pixels
#: off still shows its corner)
CORNER = (5, 5, 38, 31)
CORNER_SEARCH = (0, 0, 46, 39)
PAD = 6          # ... padded above and left (the edge repeated): a card found that far off
#: the face compared whole at this size; what is taught is cut by EDGE each side
SMALL, EDGE = (36, 50), 3


@dataclass
class Look:
    """What is compared of one face: the balanced face (small), its corner
    (grey, at both ends: the one at the bottom right turned upright), its
    hue histogram and its ORB descriptors."""

    small: np.ndarray
    corners: tuple
    hues: np.ndarray
    descriptors: np.ndarray | None

    @classmethod
    def of(cls, face) -> "Look":
        """The look of a straightened face (FACE_W x FACE_H, BGR)."""
        b = balanced(cv2.GaussianBlur(face, (3, 3), 0))
        small = cv2.resize(b, SMALL, interpolation=cv2.INTER_AREA)
        grey = b.mean(axis=2)
        x0, y0, x1, y1 = CORNER_SEARCH
        corners = tuple(cv2.copyMakeBorder(np.ascontiguousarray(g[y0:y1, x0:x1],
                                                                dtype=np.float32),
                                           PAD, 0, PAD, 0, cv2.BORDER_REPLICATE)
                        for g in (grey, cv2.rotate(grey, cv2.ROTATE_180)))
        hsv = cv2.cvtColor(face, cv2.COLOR_BGR2HSV)
        hues = cv2.calcHist([hsv], [0], (hsv[:, :, 1] > 60).astype(np.uint8), [18], [0, 180])
        hues = hues.ravel() / max(float(hues.sum()), 1.0)
        g8 = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)
        _, des = cv2.ORB_create(120, edgeThreshold=8, patchSize=15).detectAndCompute(g8, None)
        return cls(small, corners, hues, des)


def _match(area: np.ndarray, template: np.ndarray) -> float:
    """The best normalised correlation of ``template`` anywhere in ``area``."""
    return float(cv2.matchTemplate(area, template, cv2.TM_CCOEFF_NORMED).max())


def _corner(seen: "Look", taught: "Look") -> float:
    """How alike the printed corners are: the taught one looked for in each
    of the seen card's two (a finger or the glare on one leaves the other)."""
    x0, y0, x1, y1 = CORNER
    sx, sy = CORNER_SEARCH[0] - PAD, CORNER_SEARCH[1] - PAD
    best = 0.0
    for t in taught.corners:
        tpl = t[y0 - sy:y1 - sy, x0 - sx:x1 - sx]
        best = max(best, *(_match(c, tpl) for c in seen.corners))
    return best


def _face(seen: "Look", taught: "Look") -> float:
    return _match(seen.small, np.ascontiguousarray(taught.small[EDGE:-EDGE, EDGE:-EDGE]))


_MATCHER = cv2.BFMatcher(cv2.NORM_HAMMING, crossCheck=True)


def _features(a: np.ndarray | None, b: np.ndarray | None) -> float:
    if a is None or b is None or not len(a) or not len(b):
        return 0.0
    good = [m for m in _MATCHER.match(a, b) if m.distance < 40]
    return len(good) / min(len(a), len(b))


def similarity(seen: Look, taught: Look) -> float:
    """How alike two looks are, 1 for the same image (the weighted parts)."""
    colour = 1.0 - 0.5 * float(np.abs(seen.hues - taught.hues).sum())
    return (WEIGHTS["face"] * _face(seen, taught)
            + WEIGHTS["colour"] * colour
            + WEIGHTS["corner"] * _corner(seen, taught)
            + WEIGHTS["features"] * _features(seen.descriptors, taught.descriptors))


def scores(face, taught: dict[str, Look]) -> dict[str, float]:
    """Each taught face's similarity to ``face``, the better of both ways up."""
    ups = (Look.of(face), Look.of(cv2.rotate(face, cv2.ROTATE_180)))
    return {name: max(similarity(u, look) for u in ups) for name, look in taught.items()}


def _wncc(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    """Normalised correlation of ``a`` and ``b`` weighted by ``w``."""
    a, b = a - (a * w).sum() / w.sum(), b - (b * w).sum() / w.sum()
    d = float(np.sqrt((w * a * a).sum() * (w * b * b).sum()))
    return float((w * a * b).sum()) / d if d > 0 else 0.0


def twins(face, one: Look, other: Look) -> float:
    """Which of two faces (alike but for their corner) ``face`` is: the
    seen corners (both ends) against each, weighted to where the two differ
    (their marks' letters, not the box both print), each where it matches
    best; the mean of these votes, over 0 for ``one``."""
    x0, y0, x1, y1 = CORNER
    sx, sy = CORNER_SEARCH[0] - PAD, CORNER_SEARCH[1] - PAD
    seen = Look.of(face)
    votes = []
    for ta, tb in zip(one.corners, other.corners):
        ta, tb = (np.ascontiguousarray(t[y0 - sy:y1 - sy, x0 - sx:x1 - sx]) for t in (ta, tb))
        na, nb = ((t - t.mean()) / (t.std() + 1e-6) for t in (ta, tb))
        w = cv2.GaussianBlur(np.abs(na - nb), (5, 5), 0) + 0.05
        both = np.ascontiguousarray((ta + tb) / 2)
        for c in seen.corners:              # placed where the two alike match best
            r = cv2.matchTemplate(c, both, cv2.TM_CCOEFF_NORMED)
            y, x = np.unravel_index(int(r.argmax()), r.shape)
            patch = c[y:y + ta.shape[0], x:x + ta.shape[1]]
            votes.append(_wncc(patch, ta, w) - _wncc(patch, tb, w))
    return float(np.mean(votes))


def rank(face, taught: dict[str, Look], allowed: Iterable[str] | None = None,
         temperature: float = TEMPERATURE) -> list[tuple[str, float]]:
    """The candidates (taught faces, of ``allowed`` only when given), likeliest
    first, each with its share of the evidence (they add up to 1). A face
    not allowed that looks better than every allowed one halves the shares:
    the tracker and the camera disagree, so the host is asked."""
    got = scores(face, taught)
    allowed = None if allowed is None else set(allowed)
    names = [n for n in got if allowed is None or n in allowed]
    if not names:
        return []
    names.sort(key=lambda n: -got[n])
    if len(names) > 1 and got[names[0]] - got[names[1]] < TWIN_GAP:
        d = twins(face, taught[names[0]], taught[names[1]]) * TWIN_WEIGHT
        got = dict(got)
        got[names[0]] += d / 2
        got[names[1]] -= d / 2
    s = np.array([got[n] for n in names])
    w = np.exp((s - s.max()) / temperature)
    p = w / w.sum()
    outside = max((v for n, v in got.items() if n not in names), default=None)
    if outside is not None and outside > s.max():
        p = p * 0.5
    return sorted(zip(names, (float(x) for x in p)), key=lambda kv: -kv[1])


__all__ = ["FACE_W", "FACE_H", "Params", "Look", "order_corners", "find_card", "straighten",
           "balanced", "light", "changed", "card_in", "similarity", "scores", "rank"]
