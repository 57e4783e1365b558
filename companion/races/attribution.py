"""Which card a press was for, when the table cannot see the flip (pure).

The companion hears of a card only when the host logs it, 0.1 to 2 s (and
sometimes much more) after it was turned; people react to it 0.15 to over a
second after the turn, miss it, slam twice and slam a card that is no race
at all. So a press is never simply "in" a card's window: this module weighs
every way the presses could have come about and takes a reading only when
one is overwhelmingly likely (docs/rules-notes.md, "Which card a press
belongs to").

The model, for one card C logged at ``log_ns`` (its flip time ``f`` unknown):

* ``f`` lies before the log by the host's lag: uniform over
  ``lag_lo_ns``..``lag_hi_ns`` with a tail to ``lag_tail_ns`` (a host who
  forgot the card and logs it after the next); and C was turned at least
  ``min_flip_gap_ns`` after the race card before it (whose flip is known
  only through its own first press).
* Each eligible player slams C with chance ``slam_p``, after a reaction of
  ``floor_ns`` + a log-normal (median ``median_ns``, ``sigma``): never
  sooner than ``floor_ns`` (the sprint-start rule: nobody reacts in under
  100 ms), often later than a second.
* Every other press of theirs is explained otherwise: the race before's
  (a late runner-up, a Mynah's slap), a card after C that is or may soon be
  logged, a second press just after their own (``double_*``), or a stray
  press on any card (``noise_per_s``).

Given ``f`` the players are independent, so the likelihood is a product of
small sums; ``f`` is integrated on a grid. The outcome (the winner of a
first-press card, the loser of a last-press one, or nobody) is taken when
its probability is at least ``threshold``; while a press still to come
could change it, the judge waits; otherwise the host is asked, with the
readings the presses allow (the likeliest first).

Nothing here reads a clock: time is integer nanoseconds, ``now`` an argument.

>>> p = People()
>>> react_pdf(p, 50 * MS) == 0.0          # faster than a human: impossible
True
>>> round(react_sf(p, p.floor_ns + p.median_ns), 2)
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Iterable

import numpy as np

from .edges import Edge

MS = 1_000_000
S = 1_000 * MS

FIRST, LAST = "first-press", "last-press"


@dataclass(frozen=True)
class People:
    """What the judge assumes of the people at the table (settings; see
    :meth:`from_settings`). Wider than the people really are on purpose:
    a model too narrow is sure where it should ask."""

    floor_ns: int = 100 * MS        # nobody reacts sooner
    median_ns: int = 235 * MS       # reaction above the floor: median ...
    sigma: float = 0.75             # ... and spread of its logarithm
    slam_p: float = 0.88            # a player slams a Table (first-press) they may race
    slap_p: float = 0.97            # a player slaps a Mynah (last-press): all must
    lag_lo_ns: int = 0              # the host logs a card this long after its flip ...
    lag_hi_ns: int = 2_600 * MS     # ... up to this, usually
    lag_tail_ns: int = 9_000 * MS   # ... or, now and then, up to this (a forgotten card)
    lag_tail_p: float = 0.3       # (a fifth log after the next flip; a few forget)
    min_flip_gap_ns: int = 600 * MS  # a card is turned this long after the one before
    double_ns: int = 300 * MS       # a second press this soon after one's own ...
    double_p: float = 0.2           # ... with this chance
    noise_per_s: float = 0.004      # a stray press, per player and second
    forgot_p: float = 0.03          # the host forgot the card before (logs it later)
    swap_p: float = 0.06            # the card logged next was turned before this one
    reflex_p: float = 0.1           # its flipper presses by reflex on a card they may not race
    threshold: float = 0.98         # how sure a reading must be to be taken
    mark_p: float = 0.9             # flipper arming: the flipper marks a card they turn ...
    mark_lo_ns: int = -50 * MS      # ... pressing from this long before it lies face up ...
    mark_hi_ns: int = 250 * MS      # ... to this long after
    mark_alt_per_s: float = 0.3     # a flipper's press explained otherwise (another card's mark)
    #: a card the camera saw turned is logged at its flip: the log lies this
    #: long at most after the moment its face could be seen (docs/camera.md)
    camera_lag_ns: int = 120 * MS

    @classmethod
    def from_settings(cls, settings: dict) -> "People":
        """From the session's settings (``race_sure_permille``,
        ``react_median_ms``, ``log_lag_ms``, ``claim_window_ms``: no card was
        turned longer than this before its log); a key it lacks keeps the
        default."""
        d = cls()
        sure = float(settings.get("race_sure_permille") or d.threshold * 1000) / 1000
        median = int(settings.get("react_median_ms") or (d.floor_ns + d.median_ns) // MS) * MS
        lag = int(settings.get("log_lag_ms") or d.lag_hi_ns // MS) * MS
        # a table's claim window bounds how long before its log a card was turned
        window = int(settings.get("claim_window_ms") or 0) * MS or None
        tail = max(d.lag_tail_ns, lag + S)
        if window is not None:
            tail = max(min(tail, window), 100 * MS)
        camera = int(settings.get("camera_lag_ms") or d.camera_lag_ns // MS) * MS
        return cls(median_ns=max(MS, median - d.floor_ns),
                   lag_hi_ns=min(max(lag, 100 * MS), tail - MS), lag_tail_ns=tail,
                   threshold=min(max(sure, 0.5), 0.99999), camera_lag_ns=max(camera, MS))

    def seen(self) -> "People":
        """The same people for a card the camera logged at its flip: the
        log lies 0 to ``camera_lag_ns`` after the flip (rarely up to twice
        that), and no card is forgotten or logged out of order.

        >>> p = People().seen()
        >>> (p.lag_hi_ns // MS, p.lag_tail_ns // MS, p.forgot_p, p.swap_p)
        (120, 240, 0.0, 0.0)
        """
        lag = self.camera_lag_ns
        return replace(self, lag_lo_ns=0, lag_hi_ns=lag, lag_tail_ns=2 * lag, lag_tail_p=0.02,
                       forgot_p=0.0, swap_p=0.0)


def react_pdf(p: People, r_ns: int) -> float:
    """Density (per second) of a reaction taking ``r_ns``."""
    x = (r_ns - p.floor_ns) / S
    if x <= 0:
        return 0.0
    z = (math.log(x) - math.log(p.median_ns / S)) / p.sigma
    return math.exp(-0.5 * z * z) / (x * p.sigma * math.sqrt(2 * math.pi))


def react_sf(p: People, r_ns: int) -> float:
    """Chance a reaction takes longer than ``r_ns``."""
    x = (r_ns - p.floor_ns) / S
    if x <= 0:
        return 1.0
    z = (math.log(x) - math.log(p.median_ns / S)) / p.sigma
    return 0.5 * math.erfc(z / math.sqrt(2))


def lag_pdf(p: People, lag_ns: int) -> float:
    """Density (per second) of the host logging a card ``lag_ns`` after its flip."""
    if lag_ns < p.lag_lo_ns or lag_ns > p.lag_tail_ns:
        return 0.0
    if lag_ns <= p.lag_hi_ns:
        return (1 - p.lag_tail_p) / ((p.lag_hi_ns - p.lag_lo_ns) / S)
    return p.lag_tail_p / ((p.lag_tail_ns - p.lag_hi_ns) / S)


@dataclass(frozen=True)
class Card:
    """The card being judged: its race's kind, who may race it, its log;
    with ``marks`` (setting ``flipper_arms``) its ``flipper`` presses their
    own buzzer as they turn it: evidence of when it was turned."""

    kind: str
    eligible: tuple[str, ...]
    log_ns: int
    flipper: str | None = None
    marks: bool = False


@dataclass(frozen=True)
class Before:
    """The race card logged before, as far as this card's judge needs it:
    its first counted press (``anchor_ns``: it was flipped a reaction
    before), who could race it, the presses it counted whose reading
    would not change its verdict if they were this card's (``movable``: a
    first-press race's runner-ups, a last-press race's last slap) and the
    ones that would (``fixed``)."""

    kind: str
    anchor_ns: int
    eligible: frozenset = frozenset()
    fixed: frozenset = frozenset()          # {(player, t_ns)}
    movable: frozenset = frozenset()        # {(player, t_ns)}

    @classmethod
    def of(cls, event: dict) -> "Before | None":
        """From a logged ``race`` event (its ``order`` and ``spec``)."""
        spec = event.get("spec") if isinstance(event.get("spec"), dict) else {}
        order = sorted(((o["player"], o["t_ns"]) for o in event.get("order") or ()
                        if isinstance(o, dict) and isinstance(o.get("player"), str)
                        and isinstance(o.get("t_ns"), int)), key=lambda x: x[1])
        kind = spec.get("kind") or event.get("kind") or FIRST
        anchor = order[0][1] if order else spec.get("arm_ns")
        if not isinstance(anchor, int) or isinstance(anchor, bool):
            return None
        elig = frozenset(spec.get("eligible") or ())
        if kind == LAST:
            fixed, movable = order[:-1], order[-1:]
        else:
            fixed, movable = order[:1], order[1:]
        return cls(kind, anchor, elig, frozenset(fixed), frozenset(movable))

    @property
    def owned(self) -> frozenset:
        return self.fixed | self.movable


@dataclass(frozen=True)
class Reading:
    """One way the card's race could have gone: its verdict (``winner`` of a
    first-press card, ``loser`` of a last-press one; both None: nobody),
    the press it turns on (``t_ns``, None when the loser never slapped or
    nobody pressed), how likely it is, and each player's press for this
    card under it (``presses``: ``{player: t_ns}``)."""

    player: str | None
    t_ns: int | None
    p: float
    presses: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Judgement:
    """What the judge makes of a card now: ``decided`` (take ``readings[0]``),
    ``ask`` (the host chooses among ``readings``, likeliest first) or
    ``wait`` (a press still to come, or a card still to be logged, could
    change it: look again at ``recheck_ns`` or at the next press)."""

    action: str
    readings: tuple[Reading, ...] = ()
    recheck_ns: int | None = None
    why: str = ""

    @property
    def best(self) -> Reading | None:
        return self.readings[0] if self.readings else None


@dataclass
class _Press:
    player: str
    t_ns: int
    alt: float          # density of every explanation but this card and the next
    own: float = 0.0    # how likely it is this card's (once judged)


def _alternatives(presses: dict[str, list[int]], before: Before | None,
                  p: People) -> dict[str, list[_Press]]:
    """Each candidate press with the density of its explanations other than
    this card and the card after it: a stray, a second press, the race
    before's (a late runner-up, a Mynah's slap)."""
    out: dict[str, list[_Press]] = {}
    for q, times in presses.items():
        got = []
        mine = sorted(t for (pl, t) in (before.owned if before else ()) if pl == q)
        free = before is not None and q in before.eligible and not mine
        first_after = next((t for t in times if before is not None and t > before.anchor_ns),
                           None)
        for i, x in enumerate(times):
            alt = p.noise_per_s
            earlier = [t for t in times[:i]] + [t for t in mine if t < x]
            if earlier and x - max(earlier) <= p.double_ns:
                alt += p.double_p / (p.double_ns / S)
            # the race before's: a press it counted that may move, or (for a
            # player it did not count) their first press after its anchor
            if before is not None and ((q, x) in before.movable
                                       or (free and x == first_after)):
                # the race before's: a reaction to a flip one reaction before its anchor
                alt += (p.slap_p if before.kind == LAST else p.slam_p) * _reacted(
                    p, x - before.anchor_ns)
            got.append(_Press(q, x, alt))
        out[q] = got
    return out


@lru_cache(maxsize=4096)
def _reacted(p: People, d_ns: int) -> float:
    """Density of a press ``d_ns`` after a first press that was itself a
    reaction to the same flip (both reactions over :func:`_react_grid`)."""
    return sum(w * react_pdf(p, d_ns + r) for r, w in _react_grid(p))


@lru_cache(maxsize=16)
def _react_grid(p: People) -> tuple[tuple[int, float], ...]:
    """A reaction's distribution as (r_ns, weight) points, weights summing to 1."""
    pts = [p.floor_ns + k * 20 * MS for k in range(1, 130)]
    ws = [react_pdf(p, r) for r in pts]
    tot = sum(ws) or 1.0
    return tuple((r, w / tot) for r, w in zip(pts, ws) if w / tot > 1e-5)


def _pdf(p: People, r_ns: np.ndarray) -> np.ndarray:
    """:func:`react_pdf` over an array of reaction times."""
    x = (r_ns - p.floor_ns) / S
    out = np.zeros_like(x, dtype=float)
    ok = x > 0
    z = (np.log(x[ok]) - math.log(p.median_ns / S)) / p.sigma
    out[ok] = np.exp(-0.5 * z * z) / (x[ok] * p.sigma * math.sqrt(2 * math.pi))
    return out


def _sf(p: People, r_ns: np.ndarray) -> np.ndarray:
    """:func:`react_sf` over an array of reaction times."""
    x = (r_ns - p.floor_ns) / S
    out = np.ones_like(x, dtype=float)
    ok = x > 0
    z = (np.log(x[ok]) - math.log(p.median_ns / S)) / p.sigma
    out[ok] = 0.5 * _erfc(z / math.sqrt(2))
    return out


def _erfc(z: np.ndarray) -> np.ndarray:
    """``math.erfc`` over an array, to a relative error under 1.2e-7 (the
    Chebyshev fit of Press et al., Numerical Recipes, 6.2 ``erfcc``): a
    probability the judge compares with its threshold needs no more, and a
    loop of ``math.erfc`` was a tenth of a judgement's time."""
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.5 * a)
    poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    r = t * np.exp(-a * a + poly)
    return np.where(z >= 0, r, 2.0 - r)


def _lag(p: People, lag_ns: np.ndarray) -> np.ndarray:
    """:func:`lag_pdf` over an array."""
    inside = (lag_ns >= p.lag_lo_ns) & (lag_ns <= p.lag_tail_ns)
    usual = (1 - p.lag_tail_p) / ((p.lag_hi_ns - p.lag_lo_ns) / S)
    tail = p.lag_tail_p / ((p.lag_tail_ns - p.lag_hi_ns) / S)
    return np.where(inside, np.where(lag_ns <= p.lag_hi_ns, usual, tail), 0.0)


def _lag_sf(p: People, lag_ns: np.ndarray) -> np.ndarray:
    """Chance the host has not logged a card ``lag_ns`` after its flip yet."""
    usual = (1 - p.lag_tail_p) / ((p.lag_hi_ns - p.lag_lo_ns) / S)
    tail = p.lag_tail_p / ((p.lag_tail_ns - p.lag_hi_ns) / S)
    lag_s = np.clip(lag_ns, p.lag_lo_ns, p.lag_tail_ns)
    done = np.where(lag_s <= p.lag_hi_ns, (lag_s - p.lag_lo_ns) / S * usual,
                    (1 - p.lag_tail_p) + (lag_s - p.lag_hi_ns) / S * tail)
    return np.clip(1 - done, 0.0, 1.0)


def _mark_pdf(p: People, d_ns: np.ndarray) -> np.ndarray:
    """Density (per second) of the flipper's mark ``d_ns`` after the flip."""
    inside = (d_ns >= p.mark_lo_ns) & (d_ns <= p.mark_hi_ns)
    return inside / ((p.mark_hi_ns - p.mark_lo_ns) / S)


def _marked(p: People, marks: list[int], fc: np.ndarray) -> np.ndarray:
    """How much likelier the flipper's presses ``marks`` are with the card
    turned at each of ``fc`` than with no mark of it among them: one of
    them marks it (``mark_p``), every other is explained otherwise (another
    card's mark, a stray: ``mark_alt_per_s``); or the flipper forgot."""
    out = np.full(len(fc), 1 - p.mark_p)
    for m in marks:
        out += p.mark_p * _mark_pdf(p, m - fc) / p.mark_alt_per_s
    return out


#: the chance that the card after is a race card, when it is logged but
#: not yet applied (its kind unknown here), and when it is not logged yet
NEXT_RACE_P = 0.5
#: how far after this card the next one is turned, at most (the unlogged
#: next card's flip is spread evenly up to here)
NEXT_SPAN_NS = 6 * S
NEXT_STEP_NS = 80 * MS
FLIP_STEP_NS = 25 * MS
TAIL_STEP_NS = 75 * MS
#: a card turned this long before the window's earliest flip has no press in it
REACH_NS = 2_500 * MS
#: the judge waits for a press to come at most this long after the card's log
MAX_WAIT_NS = 8 * S


def judge(card: Card, edges: Iterable[Edge], now: int, people: People | None = None,
          before: Before | None = None, next_log_ns: int | None = None,
          exclude: Iterable[tuple[str, int]] = (), players: Iterable[str] = ()) -> Judgement:
    """Judge ``card`` from the recorded ``edges`` (presses of every player,
    any order) at ``now``: see :class:`Judgement`. ``before`` is the race
    card logged before it, ``next_log_ns`` the log of the card after it
    (None: none logged yet: one may be turned and not logged); ``exclude``
    presses taken otherwise; ``players`` everyone at the table (those who
    may not race this card still show when the next was turned).

    >>> c = Card(FIRST, ("bo", "cy"), log_ns=2 * S)
    >>> j = judge(c, [Edge("bo", True, S + 300 * MS), Edge("cy", True, S + 500 * MS)], 5 * S)
    >>> (j.action, j.best.player)
    ('decided', 'bo')
    """
    p = people or People()
    lo = card.log_ns - p.lag_tail_ns
    hi = min(card.log_ns - p.lag_lo_ns, now)
    everyone = list(dict.fromkeys([*card.eligible, *players]))
    taken = (set(before.fixed) if before else set()) | set(exclude)
    presses: dict[str, list[int]] = {q: [] for q in everyone}
    for e in sorted(edges, key=lambda e: (e.t_ns, e.pressed, e.player)):
        if e.pressed and e.player in presses and (e.player, e.t_ns) not in taken \
                and lo + p.floor_ns <= e.t_ns <= now:
            presses[e.player].append(e.t_ns)
    alts = _alternatives(presses, before, p)
    if hi < lo:
        return Judgement("wait", (), now + 100 * MS, "the card is not turned yet")
    fc, prior_c = _flips(card, before, lo, hi, p)
    marker = card.flipper if card.marks and card.flipper in presses else None
    if marker is not None and marker not in card.eligible:
        prior_c = prior_c * _marked(p, presses[marker], fc)     # a Table: the mark's own evidence
    fn, w0 = _other_card(fc, prior_c, next_log_ns, lo, now, p)
    s = p.slap_p if card.kind == LAST else p.slam_p
    # a Mynah's flipper: their mark is also their slap (no reaction: as they turn it)
    terms = {q: _terms(q in card.eligible, alts[q], fc, fn, s, now, p, q == marker)
             for q in everyone}
    like = w0.copy()
    for q in everyone:
        like *= terms[q][4]
    z = like.sum()
    if not z > 0:
        return Judgement("wait", (), now + 100 * MS, "no reading fits yet")
    judged = list(card.eligible)
    if card.kind == LAST:
        mass, open_share = _last(judged, alts, terms, like, s)
    else:
        mass, open_share = _first(judged, alts, terms, like, s)
    readings = sorted((Reading(k[0], k[1], m / z) for k, m in mass.items()), key=lambda r: -r.p)
    for q in judged:        # how likely each press is this card's (for the record)
        a0, a, b, sb, tot = terms[q]
        weight = like / tot
        for x, ai, bi in zip(alts[q], a, b):
            x.own = float(ai @ weight @ (sb - bi) / z)
    unlogged = 0.0 if next_log_ns is not None else float(like[:, :-1].sum() / z)
    # the latest press that may be this card's: a card logged later may still explain it
    latest = max((x.t_ns for q in judged for x in alts[q] if x.own >= 0.01), default=None)
    return _decide(card, readings, open_share / z, unlogged, latest, now, p, alts)


def _flips(card: Card, before: Before | None, lo: int, hi: int, p: People):
    """The grid of the card's flip times (every 25 ms where the host usually
    logs, every 75 ms in the tail) and each one's prior weight."""
    usual = card.log_ns - p.lag_hi_ns
    fine = np.arange(hi, max(lo, usual) - 1, -FLIP_STEP_NS, dtype=np.int64)[::-1]
    coarse = np.arange(fine[0] - TAIL_STEP_NS if len(fine) else hi, lo - 1, -TAIL_STEP_NS,
                       dtype=np.int64)[::-1]
    fc = np.concatenate([coarse, fine])
    dt = np.concatenate([np.full(len(coarse), TAIL_STEP_NS / S),
                         np.full(len(fine), FLIP_STEP_NS / S)])
    prior = _lag(p, card.log_ns - fc) * dt
    if before is not None:      # turned after the race card before it
        prior = prior * _sf(p, before.anchor_ns + p.min_flip_gap_ns - fc)
    return fc, prior


def _other_card(fc, prior_c, next_log_ns: int | None, lo: int, now: int, p: People):
    """The other card's flip grid and the joint prior of both flips: the
    card logged next (turned after this one, or before it when logged out
    of order), or one not logged yet (turned after it, or forgotten and
    turned before it); the last column: no other race card."""
    if next_log_ns is not None:
        top = min(next_log_ns - p.lag_lo_ns, now)
        fn = np.arange(top, lo - REACH_NS - 1, -NEXT_STEP_NS, dtype=np.int64)[::-1]
        after = fn[None, :] >= fc[:, None] + p.min_flip_gap_ns
        earlier = fn[None, :] <= fc[:, None] - p.min_flip_gap_ns
        logged = _lag(p, next_log_ns - fn)[None, :] * (NEXT_STEP_NS / S)
        forgot = earlier * p.forgot_p * (NEXT_STEP_NS / NEXT_SPAN_NS)
        w_race = prior_c[:, None] * (logged * after + logged * earlier * p.swap_p + forgot) \
            * NEXT_RACE_P
        w_none = prior_c * (logged * after).sum(axis=1) * (1 - NEXT_RACE_P)
    else:
        fn = np.arange(now, lo - REACH_NS - 1, -NEXT_STEP_NS, dtype=np.int64)[::-1]
        after = (fn[None, :] >= fc[:, None] + p.min_flip_gap_ns) \
            & (fn[None, :] <= fc[:, None] + NEXT_SPAN_NS)
        earlier = fn[None, :] <= fc[:, None] - p.min_flip_gap_ns
        not_yet = _lag_sf(p, now - fn)[None, :]
        w_race = prior_c[:, None] * (NEXT_STEP_NS / NEXT_SPAN_NS) * NEXT_RACE_P \
            * (after * not_yet + earlier * p.forgot_p)
        w_none = prior_c * np.clip(1 - w_race.sum(axis=1) / np.maximum(prior_c, 1e-300),
                                   0.0, 1.0)
    return fn, np.concatenate([w_race, w_none[:, None]], axis=1)


def _terms(eligible: bool, presses: list[_Press], fc, fn, s: float, now: int, p: People,
           marker: bool = False):
    """One player's sums, over every pair of flip times: ``a0`` (no press
    of theirs for this card so far), ``a`` (each press for it), ``b`` and
    ``sb`` the same for the other card, and ``total`` their likelihood (at
    most one press a card), each press's other explanations divided out.
    ``marker``: the flipper of a card they race, whose press for it is
    their mark (``mark_p``) or else a reaction."""
    # a player who may not race it (its flipper) may still press by reflex
    sq = s if eligible else p.reflex_p
    if marker and eligible:
        m = p.mark_p
        a0 = (1 - sq) + sq * ((1 - m) * _sf(p, now - fc) + m * (now - fc < p.mark_hi_ns))
        a = [sq * ((1 - m) * _pdf(p, x.t_ns - fc) + m * _mark_pdf(p, x.t_ns - fc)) / x.alt
             for x in presses]
    else:
        a0 = (1 - sq) + sq * _sf(p, now - fc)
        a = [sq * _pdf(p, np.full_like(fc, x.t_ns) - fc) / x.alt for x in presses]
    sn = p.slam_p        # the other card's kind is unknown: a Table's chance
    b0 = np.concatenate([(1 - sn) + sn * _sf(p, now - fn), [1.0]])
    b = [np.concatenate([sn * _pdf(p, np.full_like(fn, x.t_ns) - fn) / x.alt, [0.0]])
         for x in presses]
    sb = b0 + sum(b) if b else b0
    total = _low_rank(a0 + sum(a) if a else a0, sb, a, b)
    return a0, a, b, sb, total


def _low_rank(u, v, xs, ys) -> np.ndarray:
    """``outer(u, v)`` less ``outer(x, y)`` for each ``x`` of ``xs`` and
    ``y`` of ``ys``, as one matrix product (rank ``1 + len(xs)``): one
    array written, where the outer products made one each and a pass to
    subtract (a quarter of the time at the judge's grids)."""
    if not len(xs):
        return np.outer(u, v)
    return np.column_stack([u, *(-x for x in xs)]) @ np.vstack([v, *ys])


class _Lazy:
    """``f(k)``, each computed once, when first read (``lazy[k]``)."""

    def __init__(self, f):
        self.f, self.got = f, {}

    def __getitem__(self, k: int):
        if k not in self.got:
            self.got[k] = self.f(k)
        return self.got[k]


def _suffix(arrs: list, init) -> list:
    """``out[k]`` = ``init`` + sum of ``arrs[k:]`` (``out[len]`` = ``init``)."""
    out = [init]
    for a in reversed(arrs):
        out.append(out[-1] + a)
    return out[::-1]


def _prefix(arrs: list, init) -> list:
    """``out[k]`` = ``init`` + sum of ``arrs[:k]``."""
    out = [init]
    for a in arrs:
        out.append(out[-1] + a)
    return out


def _first(judged, alts, terms, like, s):
    """The first-press outcomes' masses, and the share still open (nobody
    has slammed this card yet, somebody may)."""
    mass = {}
    never = np.ones_like(like)
    nothing = np.ones_like(like)
    later = {}      # r -> (times, [P(r's press for this card is later than times[k] or none)])
    for r in judged:
        a0, a, b, sb, tot = terms[r]
        never *= (1 - s) * sb / tot
        nothing *= np.outer(a0, sb) / tot
        sa = _suffix(a, a0)
        keep = _Lazy(lambda k, sa=sa, a=a, b=b, sb=sb, tot=tot:
                     _low_rank(sa[k], sb, a[k:], b[k:]) / tot)
        later[r] = ([x.t_ns for x in alts[r]], keep)
    _press_masses(judged, alts, terms, like, later, _after, mass)
    mass[(None, None)] = float((like * never).sum())
    return mass, float((like * (nothing - never)).sum())


def _press_masses(judged, alts, terms, like, others, index, mass) -> None:
    """Each press's mass as the one the verdict turns on: it is its
    player's press for this card, and every other player's is where
    ``others[r][1][index(times, t)]`` says (later for a first press,
    sooner for a last)."""
    for q in judged:
        a0, a, b, sb, tot = terms[q]
        weight = like / tot
        for i, x in enumerate(alts[q]):
            if not a[i].any():
                continue
            share = weight
            for r in judged:
                if r != q:
                    times, arr = others[r]
                    share = share * arr[index(times, x.t_ns)]
            mass[(q, x.t_ns)] = float(a[i] @ share @ (sb - b[i]))


def _after(times: list[int], t: int) -> int:
    """The index of the first of the sorted ``times`` later than ``t``."""
    k = 0
    while k < len(times) and times[k] <= t:
        k += 1
    return k


def _last(judged, alts, terms, like, s):
    """The last-press outcomes' masses (the loser), and the share still
    open: two or more players have not slapped yet and one of them may (one
    player who has not slapped is the last, whether they slap later or not)."""
    mass = {}
    pressed, none, never, sooner = {}, {}, {}, {}
    for r in judged:
        a0, a, b, sb, tot = terms[r]
        parts = [np.outer(ai, sb - bi) / tot for ai, bi in zip(a, b)]
        pre = _prefix(parts, np.zeros_like(like))
        pressed[r] = pre[-1]
        sooner[r] = ([x.t_ns for x in alts[r]], pre)
        none[r] = np.outer(a0, sb) / tot
        never[r] = (1 - s) * sb / tot
    _press_masses(judged, alts, terms, like, sooner, _before, mass)
    for q in judged:
        share = like * none[q]
        for r in judged:
            if r != q:
                share = share * pressed[r]
        mass[(q, None)] = float(share.sum())
    all_pressed = np.ones_like(like)
    pressed_or_never = np.ones_like(like)
    for r in judged:
        all_pressed = all_pressed * pressed[r]
        pressed_or_never = pressed_or_never * (pressed[r] + never[r])
    one_none = np.zeros_like(like)
    one_never = np.zeros_like(like)
    for q in judged:
        rest = np.ones_like(like)
        for r in judged:
            if r != q:
                rest = rest * pressed[r]
        one_none += none[q] * rest
        one_never += never[q] * rest
    two_none = 1 - all_pressed - one_none
    two_never = pressed_or_never - all_pressed - one_never
    # two or more never slapped: a tie for last (the game's siam_tie says who loses)
    mass[(None, None)] = float((like * np.clip(two_never, 0, None)).sum())
    return mass, float((like * np.clip(two_none - two_never, 0, None)).sum())


def _before(times: list[int], t: int) -> int:
    """How many of the sorted ``times`` are earlier than ``t``."""
    k = 0
    while k < len(times) and times[k] < t:
        k += 1
    return k


def _decide(card, readings, open_p, unlogged, latest, now, p, alts) -> Judgement:
    """Decided, wait or ask, from the readings' probabilities."""
    by: dict[str | None, float] = {}
    for r in readings:
        by[r.player] = by.get(r.player, 0.0) + r.p
    if by:
        top = max(by, key=by.get)
        if by[top] >= p.threshold:
            best = max((r for r in readings if r.player == top), key=lambda r: r.p)
            return Judgement("decided", (_with_presses(Reading(top, best.t_ns, by[top]),
                                                       card, alts),))
    patient = now < card.log_ns + MAX_WAIT_NS
    if open_p > 1 - p.threshold and patient:
        return Judgement("wait", tuple(readings), now + 100 * MS,
                         "a press may still come for this card")
    if unlogged > 1 - p.threshold and latest is not None and now < latest + p.lag_hi_ns \
            and patient:
        return Judgement("wait", tuple(readings), latest + p.lag_hi_ns,
                         "a press may be for a card not logged yet")
    keep = tuple(_with_presses(r, card, alts) for r in readings if r.p >= 0.003)[:4]
    return Judgement("ask", keep, None, "the presses allow more than one reading")


def _with_presses(r: Reading, card: Card, alts: dict[str, list[_Press]]) -> Reading:
    """The reading with each player's press for this card under it (for
    the race's record and the runner-ups): of the presses the reading
    allows, the likeliest to be this card's; for a Table's runner-up only
    one more likely this card's than not. A tie for last keeps two or more
    players without a press (the least likely this card's are let go)."""
    chosen: dict[str, _Press] = {}
    for q in card.eligible:
        if q == r.player or (r.player is None and card.kind == FIRST):
            continue        # nobody slammed this Table
        ok = [x for x in alts.get(q, ()) if r.t_ns is None
              or (x.t_ns > r.t_ns if card.kind == FIRST else x.t_ns < r.t_ns)]
        if card.kind == FIRST or r.player is None:      # a runner-up; a tie for last
            ok = [x for x in ok if x.own > 0.5]
        if ok:
            chosen[q] = max(ok, key=lambda x: x.own)
    if card.kind == LAST and r.player is None:
        while chosen and len(card.eligible) - len(chosen) < 2:
            del chosen[min(chosen, key=lambda q: chosen[q].own)]
    presses = {r.player: r.t_ns} if r.player is not None and r.t_ns is not None else {}
    presses.update((q, x.t_ns) for q, x in chosen.items())
    return Reading(r.player, r.t_ns, r.p, presses)


# ---------------------------------------------------------------------------
# the host's slips: two cards logged in the other order than they were turned


@dataclass(frozen=True)
class Turned:
    """A card as one order of the log has it: its race's ``kind`` (None: no
    race, a Food card), who may race it and its ``flipper`` in that order
    (they differ across a turn), when the host logged it, and the verdict
    the table gave it (``winner``: its first slam ``(player, t_ns)``;
    ``nobody``: nobody slammed it; neither: not weighed, a Mynah)."""

    kind: str | None
    eligible: tuple[str, ...] = ()
    log_ns: int = 0
    flipper: str | None = None
    winner: tuple[str, int] | None = None
    nobody: bool = False


@dataclass(frozen=True)
class OrderCheck:
    """How likely the two cards were turned the other way round
    (``swapped_p``), and how likely the verdicts the table gave them in the
    logged order are (``as_judged_p``)."""

    swapped_p: float
    as_judged_p: float

    def doubtful(self, p: "People") -> bool:
        """Whether the host is offered the swap: the other order is
        plausible (``SWAP_ASK_P``) or the verdicts as logged are unlikely
        while the other order is possible (the presses fit it)."""
        low = 1 - p.threshold
        return self.swapped_p >= SWAP_ASK_P or (self.as_judged_p <= JUDGED_DOUBT_P
                                                and self.swapped_p >= low)


#: the other order is offered from this likely on ...
SWAP_ASK_P = 0.2
#: ... or when the verdicts as logged are at most this likely
JUDGED_DOUBT_P = 0.2
ORDER_STEP_NS = 40 * MS
#: ... and every this long where the host's lag is in its tail (a forgotten card)
ORDER_TAIL_STEP_NS = 120 * MS


def order_check(logged: tuple[Turned, Turned], swapped: tuple[Turned, Turned],
                edges: Iterable[Edge], now: int, people: People | None = None,
                before: Before | None = None, exclude: Iterable[tuple[str, int]] = (),
                players: Iterable[str] = ()) -> OrderCheck:
    """Weigh two cards logged one after the other: ``logged`` as the log has
    them (the first turned first), ``swapped`` the same two the other way
    round (each with who may race it then). Both flips are integrated on a
    grid, each from its own log by the host's lag, every press explained as
    in :func:`judge` (one press a card a player, a reaction, a reflex of its
    flipper, or a stray, a second press, the race before's).

    >>> blue = Turned(FIRST, ("bo", "cy"), log_ns=3_900 * MS)
    >>> green = Turned(FIRST, ("bo", "cy"), log_ns=3_500 * MS, winner=("bo", 2_800 * MS))
    >>> slams = [Edge("cy", True, 300 * MS), Edge("bo", True, 2_800 * MS)]
    >>> check = order_check((green, blue), (Turned(FIRST, ("bo", "cy"), 3_500 * MS),
    ...                      Turned(FIRST, ("bo", "cy"), 3_900 * MS)), slams, 5 * S)
    >>> check.doubtful(People())
    True
    """
    p = people or People()
    taken = (set(before.fixed) if before else set()) | set(exclude)
    everyone = list(dict.fromkeys([q for c in (*logged, *swapped) for q in c.eligible]
                                  + [c.flipper for c in logged if c.flipper] + list(players)))
    lo = min(c.log_ns for c in logged) - p.lag_tail_ns + p.floor_ns
    presses: dict[str, list[int]] = {q: [] for q in everyone}
    for e in sorted(edges, key=lambda e: (e.t_ns, e.pressed, e.player)):
        if e.pressed and e.player in presses and (e.player, e.t_ns) not in taken \
                and lo <= e.t_ns <= now:
            presses[e.player].append(e.t_ns)
    # the table asks again on every change of state, often at the same instant
    return _order_weigh(tuple(logged), tuple(swapped),
                        tuple((q, tuple(ts)) for q, ts in presses.items()), now, p, before)


@lru_cache(maxsize=256)
def _order_weigh(logged: tuple[Turned, Turned], swapped: tuple[Turned, Turned],
                 presses: tuple, now: int, p: People, before: Before | None) -> OrderCheck:
    """:func:`order_check` from each player's presses in range (``presses``:
    ``((player, (t_ns, ...)), ...)``): the same inputs give the same check."""
    alts = _alternatives({q: list(ts) for q, ts in presses}, before, p)
    rows = _Rows(alts, before, now, p)
    z_a = _pair_z(logged, rows, False)
    z_b = _pair_z(swapped, rows, False)
    # the verdicts held change the weighing only where a card's winner (or
    # nobody) was judged: else the logged order's likelihood as it is
    held = any(c.kind == FIRST and (c.nobody or c.winner is not None) for c in logged)
    judged = _pair_z(logged, rows, True) if held else z_a
    total = (1 - p.swap_p) * z_a + p.swap_p * z_b
    if not total > 0:
        return OrderCheck(0.0, 1.0)
    return OrderCheck(p.swap_p * z_b / total, (1 - p.swap_p) * judged / total)


class _Rows:
    """What the three weighings of one order check share: each log's flip
    grid (its prior, and the chance a reaction to a flip there is still to
    come), and each player's reaction densities over it (press x flip),
    their other explanations divided out."""

    def __init__(self, alts: dict[str, list[_Press]], before: Before | None, now: int,
                 p: People):
        self.alts, self.before, self.now, self.p = alts, before, now, p
        self._grids: dict[int, tuple] = {}
        #: each player's term (see :func:`_pair_terms`) by what it depends on
        self.terms: dict[tuple, object] = {}

    def grid(self, card: Turned) -> tuple:
        """``(flips, prior, sf)`` of a card logged at ``card.log_ns``."""
        got = self._grids.get(card.log_ns)
        if got is None:
            f, w = _turn_grid(card, self.before, self.now, self.p)
            got = self._grids[card.log_ns] = (f, w, _sf(self.p, self.now - f))
        return got

    def pdf(self, q: str, card: Turned) -> np.ndarray:
        """``q``'s reaction densities: a press (row) after each flip of the
        grid (kept by :func:`_turn_pdf`)."""
        hi = min(card.log_ns - self.p.lag_lo_ns, self.now)
        return _turn_pdf(tuple(x.t_ns for x in self.alts[q]), card.log_ns, hi, self.p)


def _pair_z(cards: tuple[Turned, Turned], rows: _Rows, as_judged: bool) -> float:
    """The likelihood of every press with ``cards[0]`` turned first (its
    verdicts held as judged when ``as_judged``)."""
    (f1, w1, _), (f2, w2, _) = rows.grid(cards[0]), rows.grid(cards[1])
    if not len(f1) or not len(f2):
        return 0.0
    like = (f2[None, :] >= f1[:, None] + rows.p.min_flip_gap_ns).astype(float)
    u, v = w1, w2                   # the factors alike to every pair: like * u (x) v
    for q in rows.alts:
        term = _pair_terms(q, cards, rows, as_judged)
        if isinstance(term, tuple):
            u, v = u * term[0], v * term[1]
        elif term is not None:
            like *= term
    return float(u @ like @ v)


def _turn_grid(card: Turned, before: Before | None, now: int, p: People):
    """A card's flip times (every 40 ms where the host usually logs, every
    120 ms in the lag's tail) and their prior."""
    hi = min(card.log_ns - p.lag_lo_ns, now)
    return _turn_prior(card.log_ns, hi, None if before is None else before.anchor_ns, p)


#: the table weighs the same cards again and again as presses come and its
#: state changes: what does not depend on ``now`` is kept (read-only arrays)
@lru_cache(maxsize=256)
def _turn_times(log_ns: int, hi: int, p: People) -> tuple[np.ndarray, np.ndarray]:
    """The flip times of a card logged at ``log_ns`` (the latest ``hi``)
    and their prior from the host's lag alone."""
    usual = log_ns - p.lag_hi_ns
    fine = np.arange(hi, usual - 1, -ORDER_STEP_NS, dtype=np.int64)[::-1]
    start = (fine[0] if len(fine) else hi + ORDER_TAIL_STEP_NS) - ORDER_TAIL_STEP_NS
    coarse = np.arange(start, log_ns - p.lag_tail_ns - 1, -ORDER_TAIL_STEP_NS,
                       dtype=np.int64)[::-1]
    f = np.concatenate([coarse, fine])
    step = np.concatenate([np.full(len(coarse), ORDER_TAIL_STEP_NS / S),
                           np.full(len(fine), ORDER_STEP_NS / S)])
    return _frozen(f), _frozen(_lag(p, log_ns - f) * step)


@lru_cache(maxsize=256)
def _turn_prior(log_ns: int, hi: int, anchor_ns: int | None, p: People):
    """:func:`_turn_grid`: turned after the race card before (flipped by
    its ``anchor_ns``) when there is one."""
    f, prior = _turn_times(log_ns, hi, p)
    if anchor_ns is not None:
        prior = _frozen(prior * _sf(p, anchor_ns + p.min_flip_gap_ns - f))
    return f, prior


@lru_cache(maxsize=1024)
def _turn_pdf(ts: tuple[int, ...], log_ns: int, hi: int, p: People) -> np.ndarray:
    """Reaction densities: each press of ``ts`` (a row) after each flip of
    the card's grid."""
    f = _turn_times(log_ns, hi, p)[0]
    return _frozen(_pdf(p, np.array(ts, dtype=np.int64)[:, None] - f[None, :]))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _chance(p: People, card: Turned, q: str) -> float:
    """How likely ``q`` presses for ``card`` at all."""
    if card.kind is None:
        return 0.0
    if q in card.eligible:
        return p.slap_p if card.kind == LAST else p.slam_p
    return p.reflex_p if q == card.flipper else 0.0


def _allowed(card: Turned, q: str, xs: list[_Press], as_judged: bool):
    """Which of ``q``'s presses may be ``card``'s (indices) and whether none
    may: every one, unless the card's verdict is held (its winner's press is
    its first slam, nobody's before it; nobody slammed: none)."""
    every = (range(len(xs)), True)
    if not as_judged or card.kind != FIRST:
        return every
    if card.nobody:
        return (), True
    if card.winner is None:
        return every
    who, t = card.winner
    if q == who:
        return [i for i, x in enumerate(xs) if x.t_ns == t], False
    return [i for i, x in enumerate(xs) if x.t_ns > t], True


def _pair_terms(q: str, cards: tuple[Turned, Turned], rows: _Rows, as_judged: bool):
    """One player's sum over the pairs of flip times: none or one press for
    each card, never the same press for both. None when the player may press
    for neither card (every pair of flip times is alike to them), and a pair
    of factors (one for each card's flip) when no press may be both cards'."""
    p = rows.p
    chances = (_chance(p, cards[0], q), _chance(p, cards[1], q))
    if not chances[0] and not chances[1]:
        return None
    xs = rows.alts[q]
    allowed = [_allowed(card, q, xs, as_judged) for card in cards]
    # the weighings as logged and as judged differ only for some players
    key = (q, cards[0].log_ns, cards[1].log_ns, chances,
           tuple((tuple(keep), none) for keep, none in allowed))
    got = rows.terms.get(key)
    if got is not None:
        return got
    alt = np.array([x.alt for x in xs], dtype=float)
    sides = []
    for card, s, (keep, none) in zip(cards, chances, allowed):
        a0 = (1 - s) + s * rows.grid(card)[2]
        a = s * rows.pdf(q, card) / alt[:, None]   # press x flip
        keep = list(keep)
        total = (a0 if none else np.zeros_like(a0)) + a[keep].sum(axis=0)
        sides.append((a, set(keep), total))
    (a1, k1, t1), (a2, k2, t2) = sides
    both = sorted(k1 & k2)
    # no press may be both cards': one factor a card; else the pairs' sums
    # less each press taken for both, as one product of rank 1 + len(both)
    got = (t1, t2) if not both else _low_rank(t1, t2, a1[both], a2[both])
    rows.terms[key] = got
    return got


def describe(j: Judgement) -> str:
    """A line for the log and the tests."""
    rs = ", ".join(f"{r.player}@{r.t_ns}:{r.p:.4f}" for r in j.readings)
    return f"{j.action} [{rs}] {j.why}".strip()


__all__ = ["FIRST", "LAST", "Before", "Card", "Judgement", "OrderCheck", "People", "Reading",
           "Turned", "describe", "judge", "lag_pdf", "order_check", "react_pdf", "react_sf"]
