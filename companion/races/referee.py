"""The race referee: pure functions and small state machines from edges to verdicts.

Nothing here reads a clock: time comes in with the edges (integer nanoseconds
on the Pi's monotonic clock) and with ``now_ns`` arguments, so a recorded race
can be judged again later and gives the same verdict (photo finish).

The three race kinds (docs/rules-notes.md, "Races"):

* ``first-press``: each eligible player's first press at or after the arm
  time counts; the earliest wins; anyone within the tie window of the
  earliest makes it a tie (no winner, ``tied`` lists them all).
* ``last-press``: the latest counted press loses; a player with no counted
  press by the deadline (or the end of the input) is later than any press;
  several such players, or the latest two within the tie window: no loser.
* ``first-release``: each eligible player's first release at or after the
  arm time; a player not holding at the arm time releases at the arm time;
  the earliest release loses.

Presses before the arm time are false starts: that player's presses do not
count in that race, unless ``lockout_ns`` is set, in which case they count
again from ``lockout_ns`` after their last early press. Presses by players
who are not eligible are listed in ``ineligible`` and never count (with
``out_of_turn_ns`` set, in a ``first-press`` race, only those up to that long
after the first counted press; with no counted press, up to the deadline).

A handicap (``handicap_ns``: a head start per player, for a child racing
adults) is taken off that player's counted press before the verdict, in the
two press races: their press counts as that much earlier (or, in a
``last-press`` race, less late). False starts, lockouts and deadlines stay on
the real stamps (a head start never lets anyone press before GO), the
verdict's ``order`` keeps the real stamps, in the handicapped order, and a
handicap of 0 is no handicap (the spec and the verdict are those without).

>>> spec = RaceSpec("first-press", players=("ana", "bo"), arm_ns=1_000)
>>> judge(spec, [Edge("bo", True, 5_000), Edge("ana", True, 7_000)]).winner
'bo'
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from .edges import Edge

FIRST_PRESS = "first-press"
LAST_PRESS = "last-press"
FIRST_RELEASE = "first-release"
KINDS = (FIRST_PRESS, LAST_PRESS, FIRST_RELEASE)

MS = 1_000_000
US = 1_000
DEFAULT_DEBOUNCE_NS = 20 * MS
#: A time no clock reaches (a "not scheduled" that stays an integer).
NEVER = 1 << 63
#: How long a live race waits after the deciding edge before it publishes the
#: final verdict, on top of the tie window: it covers the GPIO library's
#: event delivery delay (an edge is stamped by the kernel, then delivered to
#: Python a little later; an earlier edge of another player may still be on
#: its way).
DEFAULT_HOLD_NS = 30 * MS
#: How late an edge may reach the referee after its stamp (the source's
#: delivery delay: up to ~2 ms on bare pins). A debounce decision (the end of
#: a burst's window) is taken only once the clock is past the burst's stamp
#: + the window + this margin, so a bounce edge stamped inside the window
#: but delivered late still lands in it (docs/rules-notes.md, Debounce).
DEFAULT_DELIVERY_MARGIN_NS = 2 * MS
#: A race request's usual out-of-turn window (``RaceSpec.out_of_turn_ns``):
#: Chomp!'s Bad Chomp just after the winning slap (docs/rules-notes.md).
DEFAULT_OUT_OF_TURN_NS = 500 * MS


def earliest(times: Iterable[int | None]) -> int | None:
    """The earliest of ``times`` that is set (a deadline), or None."""
    return min((t for t in times if t is not None), default=None)


class RaceError(ValueError):
    """A race specification or edge that cannot be judged."""


@dataclass(frozen=True)
class RaceSpec:
    """What a race is: its kind, who takes part, and its timing settings.

    ``eligible`` defaults to every player; ``arm_ns`` to 0 (no false starts
    possible); ``deadline_ns`` to none (the end of the input).
    ``out_of_turn_ns`` (None: not set): in a ``first-press`` race, a press
    by a player who is not eligible is listed in ``ineligible`` when it comes
    at most this long after the first counted press (with none counted: by
    the deadline), and the live race waits that long (plus its hold) for one
    while such a player has not pressed yet. Unset, the live race does not
    wait for them (Chope!'s flipper).
    """

    kind: str
    players: tuple[str, ...]
    eligible: tuple[str, ...] | None = None
    arm_ns: int = 0
    deadline_ns: int | None = None
    tie_window_ns: int = 0
    debounce_ns: int = DEFAULT_DEBOUNCE_NS
    lockout_ns: int | None = None
    out_of_turn_ns: int | None = None
    #: per player, a head start taken off their counted press (press races);
    #: given as a dict or pairs, kept as sorted ``(player, ns)`` pairs, 0s out
    handicap_ns: tuple[tuple[str, int], ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise RaceError(f"unknown race kind {self.kind!r}; one of {', '.join(KINDS)}")
        players = tuple(self.players)
        if not players or len(set(players)) != len(players):
            raise RaceError("a race needs one or more distinct players")
        object.__setattr__(self, "players", players)
        eligible = players if self.eligible is None else tuple(self.eligible)
        unknown = [p for p in eligible if p not in players]
        if unknown:
            raise RaceError(f"eligible player(s) {unknown} are not in the race")
        object.__setattr__(self, "eligible", eligible)
        for name in ("arm_ns", "tie_window_ns", "debounce_ns"):
            _check_ns(name, getattr(self, name))
        for name in ("deadline_ns", "lockout_ns", "out_of_turn_ns"):
            if getattr(self, name) is not None:
                _check_ns(name, getattr(self, name))
        object.__setattr__(self, "handicap_ns", _handicaps(self.handicap_ns, players))

    def handicaps(self) -> dict[str, int]:
        """The head starts, ``{player: ns}`` (empty: none, or a release race)."""
        return dict(self.handicap_ns) if self.kind != FIRST_RELEASE else {}

    def to_json(self) -> dict:
        out = {"kind": self.kind, "players": list(self.players),
               "eligible": list(self.eligible), "arm_ns": self.arm_ns,
               "deadline_ns": self.deadline_ns, "tie_window_ns": self.tie_window_ns,
               "debounce_ns": self.debounce_ns, "lockout_ns": self.lockout_ns}
        if self.out_of_turn_ns is not None:
            out["out_of_turn_ns"] = self.out_of_turn_ns
        if self.handicap_ns:
            out["handicap_ns"] = dict(self.handicap_ns)
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "RaceSpec":
        if not isinstance(obj, dict):
            raise RaceError("a race spec must be a JSON object")
        known = {"kind", "players", "eligible", "arm_ns", "deadline_ns", "tie_window_ns",
                 "debounce_ns", "lockout_ns", "out_of_turn_ns", "handicap_ns"}
        extra = set(obj) - known
        if extra:
            raise RaceError(f"unknown race spec key(s) {sorted(extra)}")
        return cls(**obj)


def _check_ns(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RaceError(f"{name} must be a non-negative integer number of nanoseconds")


#: the longest head start a race takes (a child against an adult: ~200 ms)
MAX_HANDICAP_NS = 2_000 * MS


def _handicaps(given, players: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """``handicap_ns`` checked: sorted ``(player, ns)`` pairs of the race's
    players, each 0 to :data:`MAX_HANDICAP_NS`; the zeros left out."""
    try:
        pairs = list(given.items()) if isinstance(given, dict) else [tuple(x) for x in given]
        if any(len(x) != 2 for x in pairs):
            raise TypeError
    except TypeError:
        raise RaceError("handicap_ns must map players to nanoseconds") from None
    for p, ns in pairs:
        if p not in players:
            raise RaceError(f"handicap for {p!r}, who is not in the race")
        _check_ns("handicap_ns", ns)
        if ns > MAX_HANDICAP_NS:
            raise RaceError(f"a handicap is at most {MAX_HANDICAP_NS // MS} ms")
    if len({p for p, _ in pairs}) != len(pairs):
        raise RaceError("one handicap per player")
    return tuple(sorted((p, ns) for p, ns in pairs if ns))


@dataclass
class Verdict:
    """The outcome of one race. ``order`` holds the counted edges in time
    order as ``(player, t_ns)``; offsets are from the first counted edge."""

    kind: str
    winner: str | None = None
    loser: str | None = None
    tied: list[str] = field(default_factory=list)
    order: list[tuple[str, int]] = field(default_factory=list)
    false_starts: list[str] = field(default_factory=list)
    ineligible: list[str] = field(default_factory=list)
    no_edge: list[str] = field(default_factory=list)
    #: the head starts taken off counted presses, ``{player: ns}`` (non-zero)
    handicaps: dict[str, int] = field(default_factory=dict)

    def counted_ns(self, player: str, t_ns: int) -> int:
        """When ``player``'s press at ``t_ns`` counts: less their head start."""
        return t_ns - self.handicaps.get(player, 0)

    def to_json(self) -> dict:
        if self.handicaps:
            return self._handicapped_json()
        t0 = self.order[0][1] if self.order else 0
        return {
            "kind": self.kind,
            "winner": self.winner,
            "loser": self.loser,
            "tied": list(self.tied),
            "order": [{"player": p, "t_ns": t, "offset_ns": t - t0,
                       "offset_us": (t - t0) / US} for p, t in self.order],
            "false_starts": list(self.false_starts),
            "ineligible": list(self.ineligible),
            "no_edge": list(self.no_edge),
        }

    def _handicapped_json(self) -> dict:
        """As without handicaps, plus ``handicap_ns``; each order item's
        offset is from the first counted press, head starts taken off, and
        carries its ``handicap_ns``."""
        t0 = self.counted_ns(*self.order[0]) if self.order else 0
        order = []
        for p, t in self.order:
            c = self.counted_ns(p, t)
            item = {"player": p, "t_ns": t, "offset_ns": c - t0, "offset_us": (c - t0) / US}
            if p in self.handicaps:
                item["handicap_ns"] = self.handicaps[p]
            order.append(item)
        return {"kind": self.kind, "winner": self.winner, "loser": self.loser,
                "tied": list(self.tied), "order": order,
                "false_starts": list(self.false_starts), "ineligible": list(self.ineligible),
                "no_edge": list(self.no_edge), "handicap_ns": dict(self.handicaps)}


# ---------------------------------------------------------------------------
# Debounce


class Debouncer:
    """Leading-edge debounce of one buzzer.

    The first edge of a burst is the event and keeps its own timestamp; the
    edges of the same buzzer within ``window_ns`` of it are ignored. If the
    level at the end of the window differs from the accepted edge (a tap
    shorter than the window), the last ignored edge is accepted as it was
    stamped, so a short tap is a press and a release, never a stuck press.
    Applying it twice gives the same edges as applying it once.

    Everything is decided on the stamps: an edge is inside a window by its
    ``t_ns``, whenever it arrives. Edges must be fed in time order (one
    buzzer's edges come through one queue; :func:`judge` sorts them first);
    edges of one window fed out of order are harmless (the latest stamp is
    the one kept). :meth:`settle` with a clock time says whether the window
    has ended on that clock: the :class:`Referee` passes its clock minus the
    delivery margin, so an edge stamped inside the window that arrives late
    is still inside it.
    """

    __slots__ = ("window", "start", "level", "pending")

    def __init__(self, window_ns: int = DEFAULT_DEBOUNCE_NS):
        self.window = window_ns
        self.start: int | None = None      # t_ns of the accepted edge of the burst
        self.level: bool = False           # the debounced level
        self.pending: Edge | None = None   # last ignored edge of the burst

    def feed(self, edge: Edge) -> list[Edge] | tuple:
        """The edges this raw edge makes final (often none, at most two)."""
        start = self.start
        if start is not None and edge.t_ns - start < self.window:
            p = self.pending
            if p is None or edge_order(edge) >= edge_order(p):
                self.pending = edge
            return ()          # a bounce: the common case, so no allocation
        out = self.settle()
        if out and edge.t_ns - self.start < self.window:
            self.pending = edge
            return out
        self.start = edge.t_ns
        self.level = edge.pressed
        self.pending = None
        out.append(edge)
        return out

    def settle(self, now_ns: int | None = None) -> list[Edge]:
        """At the end of a burst's window (``now_ns`` past it, or ``None``
        for the end of the input): the settling edge, if the level changed."""
        p = self.pending
        if p is None or (now_ns is not None and now_ns - self.start < self.window):
            return []
        self.pending = None
        if p.pressed == self.level:
            return []
        self.start = p.t_ns
        self.level = p.pressed
        return [p]

    def settles_at(self) -> int | None:
        """When a pending settle becomes final, if one is pending."""
        return None if self.pending is None else self.start + self.window


def edge_order(e: Edge) -> tuple[int, bool]:
    """The canonical order of one buzzer's edges: by time, release first."""
    return (e.t_ns, e.pressed)


def debounce(edges: Iterable[Edge], window_ns: int) -> dict[str, list[Edge]]:
    """Sort and debounce raw edges; the accepted edges per player, in time order.

    One buzzer cannot change twice in the same nanosecond; if the input says
    it did, a release sorts before a press so the result never depends on
    the order the edges arrived in."""
    per: dict[str, list[Edge]] = {}
    for e in sorted(edges, key=edge_order):
        per.setdefault(e.player, []).append(e)
    out: dict[str, list[Edge]] = {}
    for player, raw in per.items():
        d = Debouncer(window_ns)
        acc: list[Edge] = []
        for e in raw:
            acc.extend(d.feed(e))
        acc.extend(d.settle())
        out[player] = acc
    return out


# ---------------------------------------------------------------------------
# Judging


def judge(spec: RaceSpec, edges: Iterable[Edge]) -> Verdict:
    """Judge a race from raw edges (any order); the same input always gives
    the same verdict."""
    edges = list(edges)
    for e in edges:
        if e.player not in spec.players:
            raise RaceError(f"edge from unknown player {e.player!r}")
    return verdict_from_debounced(spec, debounce(edges, spec.debounce_ns))


def verdict_from_debounced(spec: RaceSpec, per: dict[str, list[Edge]]) -> Verdict:
    """The verdict from already-debounced edges per player (each in time order)."""
    timed = _release_time if spec.kind == FIRST_RELEASE else _press_time
    eligible = set(spec.eligible)
    v = Verdict(spec.kind, handicaps=spec.handicaps())
    counted: list[tuple[int, str]] = []
    real: dict[str, int] = {}
    for player in spec.players:
        t = timed(spec, player, per.get(player, ()), player in eligible, v)
        if t is not None:
            real[player] = t
            counted.append((v.counted_ns(player, t), player))
    counted.sort()
    v.order = [(p, real[p]) for _, p in counted]
    if spec.kind == FIRST_PRESS and spec.out_of_turn_ns is not None and counted \
            and v.ineligible:
        # out of turn: this race's only up to its window after the first press
        last = real[counted[0][1]] + spec.out_of_turn_ns
        v.ineligible = [p for p in v.ineligible
                        if _first_press_from(per.get(p, ()), spec.arm_ns) <= last]
    _decide(v, counted, spec.tie_window_ns)
    return v


def _first_press_from(edges, arm: int) -> int:
    """The first press at or after ``arm`` (there is one)."""
    return next(e.t_ns for e in edges if e.pressed and e.t_ns >= arm)


def _release_time(spec: RaceSpec, player: str, edges, eligible: bool,
                  v: Verdict) -> int | None:
    """When ``player``'s release counts in a first-release race, or None
    (then ``v`` lists them: ineligible, or no edge)."""
    arm, deadline = spec.arm_ns, spec.deadline_ns
    if not eligible:
        if any(not e.pressed and e.t_ns >= arm and (deadline is None or e.t_ns <= deadline)
               for e in edges):
            v.ineligible.append(player)
        return None
    t = _first_release(edges, arm, deadline)
    if t is None:
        v.no_edge.append(player)
    return t


def _press_time(spec: RaceSpec, player: str, edges, eligible: bool,
                v: Verdict) -> int | None:
    """When ``player``'s press counts in a press race, or None (then ``v``
    lists them: ineligible, or no edge). A press before the arm is a false
    start (listed in ``v``); with a lockout the player may press again once
    it has passed, without one they are out of this race."""
    arm, deadline = spec.arm_ns, spec.deadline_ns
    early = [e.t_ns for e in edges if e.pressed and e.t_ns < arm]
    if early:
        v.false_starts.append(player)
    if not eligible:
        if any(e.pressed and e.t_ns >= arm and (deadline is None or e.t_ns <= deadline)
               for e in edges):
            v.ineligible.append(player)
        return None
    start = arm
    if early:
        if spec.lockout_ns is None:
            v.no_edge.append(player)
            return None
        start = max(arm, early[-1] + spec.lockout_ns)
    t = next((e.t_ns for e in edges if e.pressed and e.t_ns >= start), None)
    if t is not None and deadline is not None and t > deadline:
        t = None
    if t is None:
        v.no_edge.append(player)
    return t


def _decide(v: Verdict, counted: list[tuple[int, str]], w: int) -> None:
    """The winner, loser or tie of ``v`` from the counted edges (time order)
    and the players with none: edges within ``w`` of the deciding one tie."""
    if v.kind == LAST_PRESS:
        if len(v.no_edge) == 1:
            v.loser = v.no_edge[0]
        elif len(v.no_edge) > 1:
            v.tied = list(v.no_edge)
        elif counted:
            t_last = counted[-1][0]
            close = [p for t, p in counted if t_last - t <= w]
            if len(close) == 1:
                v.loser = close[0]
            else:
                v.tied = close
    elif counted:
        t0 = counted[0][0]
        close = [p for t, p in counted if t - t0 <= w]
        if len(close) > 1:
            v.tied = close
        elif v.kind == FIRST_PRESS:
            v.winner = close[0]
        else:
            v.loser = close[0]


def _first_release(edges, arm: int, deadline: int | None) -> int | None:
    """First release at or after ``arm``; ``arm`` itself if not holding then."""
    holding = False
    for e in edges:
        if e.t_ns < arm:
            holding = e.pressed
            continue
        break
    if not holding:
        return arm
    for e in edges:
        if e.t_ns >= arm and not e.pressed:
            return e.t_ns if deadline is None or e.t_ns <= deadline else None
    return None


# ---------------------------------------------------------------------------
# Live races


class LiveRace:
    """A race judged as its (debounced) edges arrive.

    Feed it edges with :meth:`feed`; it keeps the provisional order of
    counted edges at once (for the live page) and, once :meth:`decides_at`
    has passed on the caller's clock, :meth:`poll` returns the final verdict,
    exactly the one :func:`judge` gives for the same edges.

    ``hold_ns`` is the decision hold after the deciding edge (on top of the
    tie window), long enough to cover the event delivery delay.

    >>> race = LiveRace(RaceSpec("first-press", ("ana", "bo"), arm_ns=0, tie_window_ns=0))
    >>> race.feed(Edge("ana", True, 100))
    True
    >>> race.poll(100 + DEFAULT_HOLD_NS) is not None
    True
    """

    def __init__(self, spec: RaceSpec, hold_ns: int = DEFAULT_HOLD_NS):
        self.spec = spec
        self.hold_ns = hold_ns
        self.edges: list[Edge] = []          # every edge fed, as fed
        self.per: dict[str, list[Edge]] = {}
        self.in_order = True
        self.provisional: list[tuple[int, str]] = []   # (t_ns, player), counted
        self._seen: set[str] = set()
        self._eligible = frozenset(spec.eligible)
        #: players of a first-press race who may not take part and have not
        #: pressed since the arm time: a press of theirs may still be listed
        #: (the referee takes out the stuck ones: they cannot press)
        self.waits_for = {p for p in spec.players if p not in self._eligible} \
            if spec.kind == FIRST_PRESS and spec.out_of_turn_ns is not None else set()
        self._waited_until: int | None = None   # the latest press that ended a wait
        self.verdict: Verdict | None = None
        if spec.kind == FIRST_RELEASE:
            self._recount()

    def feed(self, edge: Edge) -> bool:
        """Take one debounced edge; True if the provisional order changed."""
        if self.verdict is not None:
            return False
        self.edges.append(edge)
        if edge.player in self.waits_for and edge.pressed and edge.t_ns >= self.spec.arm_ns:
            self.waits_for.discard(edge.player)
            # the verdict comes no sooner than this press's own hold: were it
            # taken at the winning slap's, a press out of turn made after it
            # would be cut out of the verdict it ended the wait for
            self._waited_until = max(self._waited_until or edge.t_ns, edge.t_ns)
        lst = self.per.get(edge.player)
        if lst is None:
            lst = self.per[edge.player] = []
        elif lst[-1].t_ns > edge.t_ns:
            self.in_order = False
            insort(lst, edge, key=lambda e: e.t_ns)
            self._recount()
            return True
        lst.append(edge)
        p = edge.player
        if self.spec.kind == FIRST_RELEASE:
            if p not in self._eligible:
                return False
            before = self.provisional
            self._recount()
            return self.provisional != before
        if p in self._seen or p not in self._eligible:
            return False
        spec = self.spec
        if spec.handicap_ns:    # a head start may put this press before others
            before = self.provisional
            self._recount()
            return self.provisional != before
        if not edge.pressed or edge.t_ns < spec.arm_ns:
            return False
        if spec.deadline_ns is not None and edge.t_ns > spec.deadline_ns:
            return False
        if any(e.pressed and e.t_ns < spec.arm_ns for e in lst):
            # false starter: let the full rule (lockout) decide
            self._recount()
            return True
        self._seen.add(p)
        insort(self.provisional, (edge.t_ns, p))
        return True

    def _recount(self) -> None:
        v = verdict_from_debounced(self.spec, self.per)
        self.provisional = [(t, p) for p, t in v.order]
        self._seen = {p for _, p in self.provisional}

    def decides_at(self) -> int | None:
        """The clock time at which the verdict can no longer change, or None
        if that depends on edges not yet seen (and there is no deadline)."""
        spec, hold = self.spec, self.hold_ns
        dl = None if spec.deadline_ns is None else spec.deadline_ns + hold
        if spec.kind == LAST_PRESS:
            if len(self._seen) == len(spec.eligible) and self.provisional:
                return max(t for t, _ in self.provisional) + hold
            return dl
        if self.provisional:
            first = self.provisional[0][0]
            t = self._head_start_wait(first) + spec.tie_window_ns + hold
            if self.waits_for:      # a press out of turn may still be this race's
                t = max(t, first + spec.out_of_turn_ns + hold)
            elif self._waited_until is not None:    # the last of them came: its hold
                t = max(t, min(self._waited_until, first + spec.out_of_turn_ns) + hold)
            return t if dl is None else min(t, dl)
        return dl

    def _head_start_wait(self, first: int) -> int:
        """Where a first-press race's tie window starts: its first counted
        press (stamped ``first``), or with head starts, when a player with
        one who has not pressed yet could still press and count as early as
        that press (never before that press's own stamp)."""
        h = self.spec.handicaps()
        if not h:
            return first
        p0 = self.provisional[0][1]
        counted = first - h.get(p0, 0)
        pending = max((h.get(p, 0) for p in self.spec.eligible if p not in self._seen),
                      default=0)
        return max(first, counted + pending)

    #: how late an edge may arrive after its stamp (the referee's delivery
    #: margin): the verdict taken at the decision time leaves out the edges
    #: stamped in the last ``margin_ns`` of the hold, which may or may not
    #: have arrived yet (they cannot change the outcome, only the order's
    #: tail), so the verdict never depends on how late an edge was
    margin_ns: int = 0

    def poll(self, now_ns: int) -> Verdict | None:
        """The final verdict if ``now_ns`` is past the decision time."""
        if self.verdict is None:
            at = self.decides_at()
            if at is not None and now_ns >= at:
                self.finish(at - min(self.margin_ns, self.hold_ns))
        return self.verdict

    def finish(self, until_ns: int | None = None) -> Verdict:
        """Decide now: the verdict from everything fed (stamped by
        ``until_ns``, if given; None: the end of the input)."""
        if self.verdict is None:
            per = self.per if until_ns is None else {
                p: [e for e in lst if e.t_ns <= until_ns] for p, lst in self.per.items()}
            self.verdict = verdict_from_debounced(self.spec, per)
        return self.verdict

    def order(self) -> list[tuple[str, int]]:
        """The provisional order, ``(player, t_ns)`` earliest first."""
        return [(p, t) for t, p in self.provisional]

    def record(self) -> dict:
        """The race as the log keeps it: spec, edges and verdict."""
        out = {"spec": self.spec.to_json(), "edges": [e.to_json() for e in self.edges]}
        if self.verdict is not None:
            out.update(self.verdict.to_json())
        return out


# ---------------------------------------------------------------------------
# The buzzer front: debounce, stuck buttons, fan-out


@dataclass(frozen=True)
class Fault:
    """A recorded buzzer fault: ``kind`` is ``stuck`` or ``cleared``."""

    player: str
    kind: str
    t_ns: int

    def to_json(self) -> dict:
        return {"player": self.player, "fault": self.kind, "t_ns": self.t_ns}


class Referee:
    """The table's buzzer front and race runner (pure: time comes in).

    Raw edges from any source go to :meth:`feed`; they are debounced per
    buzzer, a buzzer held longer than ``stuck_ns`` becomes a :class:`Fault`
    and is ignored until it is released (the others play on), and the
    accepted edges go to the live race, if one is running, and to every
    listener (a listener that raises is recorded in :attr:`errors`). Call :meth:`poll` with the source's clock now and then (a few
    times per decision hold) to settle bursts, detect stuck buttons and
    publish verdicts.

    Listeners are called as ``listener(kind, payload)`` with kind ``edge``
    (an accepted :class:`Edge`), ``order`` (the live race's provisional
    order), ``verdict`` (the :class:`LiveRace`, decided) or ``fault``.
    """

    def __init__(self, players: Iterable[str], debounce_ns: int = DEFAULT_DEBOUNCE_NS,
                 stuck_ns: int = 10_000 * MS, hold_ns: int = DEFAULT_HOLD_NS,
                 delivery_margin_ns: int = DEFAULT_DELIVERY_MARGIN_NS):
        self.players = tuple(players)
        self.debounce_ns = debounce_ns
        _check_ns("delivery_margin_ns", delivery_margin_ns)
        #: how late an edge may arrive after its stamp: debounce decisions
        #: (and a verdict whose hold is shorter) wait this long on the clock
        self.delivery_margin_ns = delivery_margin_ns
        self.stuck_ns = stuck_ns
        self.hold_ns = hold_ns
        self._deb = {p: Debouncer(debounce_ns) for p in self.players}
        self._down_since: dict[str, int] = {}
        self._stuck_due = NEVER     # when the next held buzzer becomes stuck
        self.stuck: set[str] = set()
        self.faults: list[Fault] = []
        self.race: LiveRace | None = None
        self._now = 0               # the latest clock time seen (a poll, a stamp)
        self.listeners: list[Callable[[str, object], None]] = []
        self.errors: list[str] = []
        #: the table's head starts, ``{player: ns}``: every race started here
        #: whose spec gives none takes them (:meth:`with_handicaps`)
        self.handicap_ns: dict[str, int] = {}

    def with_handicaps(self, spec: RaceSpec) -> RaceSpec:
        """``spec`` with the table's head starts (for its players), unless it
        has its own or the table has none."""
        h = {p: ns for p, ns in self.handicap_ns.items() if p in spec.players and ns}
        if spec.handicap_ns or not h:
            return spec
        return replace(spec, handicap_ns=h)

    def level(self, player: str) -> bool:
        return self._deb[player].level

    def start(self, spec: RaceSpec) -> LiveRace:
        """Run ``spec`` as the live race; an unfinished one is decided now
        and its verdict published first."""
        old = self.race
        if old is not None and old.verdict is None:
            old.finish()
            self._race_decided(old, old.spec.arm_ns)
        spec = replace(spec, debounce_ns=self.debounce_ns) if spec.debounce_ns != self.debounce_ns else spec
        spec = self.with_handicaps(spec)
        if spec.kind == FIRST_RELEASE:
            self._holding_is_the_game(spec)
        if self.stuck:
            spec = replace(spec, eligible=tuple(p for p in spec.eligible if p not in self.stuck))
        race = self.race = LiveRace(spec, self.hold_ns)
        if spec.kind == FIRST_RELEASE:
            # the race must know who is already holding at the arm time
            for p, t in sorted(self._down_since.items(), key=lambda i: i[1]):
                if p not in self.stuck:
                    race.feed(Edge(p, True, t))
        return race

    def _holding_is_the_game(self, spec: RaceSpec) -> None:
        """A first-release race starts: its players who are holding their
        buzzer are playing it (Food Poisoning: they grabbed it when the card
        appeared, maybe long before Start), not stuck. A buzzer the stuck
        timer flagged while it was held is cleared and races; one that is
        still down the stuck time after the verdict is flagged again."""
        for p in sorted(self.stuck & set(spec.players)):
            if p in self._down_since and self._deb[p].level:
                self.stuck.discard(p)
                self._fault(Fault(p, "cleared", self._now))
        self._reschedule_stuck()

    def _race_decided(self, race: LiveRace, now_ns: int) -> None:
        if race.spec.kind == FIRST_RELEASE:
            # holding on was the point: the stuck timer starts again now
            for p in self._down_since:
                self._down_since[p] = max(self._down_since[p], now_ns)
            self._reschedule_stuck()
        self._emit("verdict", race)

    def feed(self, edge: Edge) -> None:
        d = self._deb.get(edge.player)
        if d is None:
            raise RaceError(f"edge from unknown player {edge.player!r}")
        if edge.t_ns > self._now:
            self._now = edge.t_ns
        for e in d.feed(edge):
            self._accept(e)
        if edge.t_ns >= self._stuck_due:
            self._check_stuck(edge.t_ns)

    def poll(self, now_ns: int) -> None:
        # every edge stamped before now - margin has arrived: the windows
        # that ended by then are settled (on the stamps), not later ones
        if now_ns > self._now:
            self._now = now_ns
        settled_by = now_ns - self.delivery_margin_ns
        for d in self._deb.values():
            if d.pending is not None:
                for e in d.settle(settled_by):
                    self._accept(e)
        self._check_stuck(now_ns)
        race = self.race
        if race is not None and race.verdict is None:
            race.waits_for -= self.stuck        # a stuck buzzer cannot press
            race.margin_ns = self.delivery_margin_ns
            if race.poll(now_ns - self._race_wait(race)) is not None:
                self._race_decided(race, now_ns)

    def _race_wait(self, race: LiveRace) -> int:
        """How much longer than its own hold a race waits for late edges: the
        hold covers the delivery margin already unless it is shorter."""
        return max(0, self.delivery_margin_ns - race.hold_ns)

    def next_deadline(self) -> int | None:
        """The earliest clock time at which :meth:`poll` has work to do."""
        margin = self.delivery_margin_ns
        times = [None if d.pending is None else d.settles_at() + margin
                 for d in self._deb.values()]
        race = self.race
        if not self._holding_race() and self._stuck_due != NEVER:
            times.append(self._stuck_due)
        if race is not None and race.verdict is None:
            race.waits_for -= self.stuck
            at = race.decides_at()
            times.append(None if at is None else at + self._race_wait(race))
        return earliest(times)

    def _accept(self, e: Edge) -> None:
        p = e.player
        if p in self.stuck:
            if not e.pressed:
                self.stuck.discard(p)
                self._down_since.pop(p, None)
                self._fault(Fault(p, "cleared", e.t_ns))
            return
        if e.pressed:
            self._down_since[p] = e.t_ns
            if e.t_ns + self.stuck_ns < self._stuck_due:
                self._stuck_due = e.t_ns + self.stuck_ns
        else:
            since = self._down_since.pop(p, None)
            if since is not None and since + self.stuck_ns == self._stuck_due:
                self._reschedule_stuck()
        race = self.race
        changed = race is not None and race.verdict is None and race.feed(e)
        self._emit("edge", e)
        if changed:
            self._emit("order", race)

    def _holding_race(self) -> bool:
        race = self.race
        return race is not None and race.verdict is None and race.spec.kind == FIRST_RELEASE

    def _check_stuck(self, now_ns: int) -> None:
        if self._holding_race():
            return  # holding on is the point of a first-release race
        for p, since in list(self._down_since.items()):
            if p not in self.stuck and now_ns - since >= self.stuck_ns:
                self.stuck.add(p)
                self._fault(Fault(p, "stuck", now_ns))
        self._reschedule_stuck()

    def _reschedule_stuck(self) -> None:
        """When the next buzzer held now would become stuck (exact)."""
        self._stuck_due = min((t + self.stuck_ns for p, t in self._down_since.items()
                               if p not in self.stuck), default=NEVER)

    def _fault(self, f: Fault) -> None:
        self.faults.append(f)
        self._emit("fault", f)

    def _emit(self, kind: str, payload) -> None:
        # a failing listener (a closed page, a broken LED) must not cost the
        # race an edge nor the other listeners their update
        for fn in list(self.listeners):
            try:
                fn(kind, payload)
            except Exception as exc:  # noqa: BLE001 - recorded, never raised
                self.errors.append(f"{kind} listener {fn!r} failed: {exc!r}")
