"""Race arming, pure: when a race starts, which presses belong to it, when it ends.

DESIGN.md, "Arming": the host logs a card seconds after it was flipped, so
the log cannot be the start signal of a race that is already over.

* **Unannounced races** (a Chope! table card or Mynah): every accepted edge
  is recorded as it happens; presses closer together than the quiet gap form
  a *burst*. When the host logs the card, the earliest burst that began
  within the claim window before now, and after the presses of the races
  already decided, becomes the card's race: armed at the burst's first
  press (so nobody false-starts), with every edge from there on. With no
  such burst the race is armed now and waits for presses.
* **Announced races** (a Chomp! reveal, Food Poisoning): the companion calls
  the start: GO comes after a countdown; presses before GO are false starts.
  When the buzzer box sounds the cue itself (a Pico box), it reports the
  time it really sounded GO, on the clock of its presses; the race is armed
  again there (:func:`arm_at_cue`), so a press between the scheduled GO and
  the box's GO is a false start, judged on the box's clock. Until that
  stamp arrives the race runs on the scheduled GO.

Each race has a *window* from its arm time to its deadline: a press decides
only a race whose window it fell in; a burst is claimable while its claim
window drains. Presses outside every window are strays, kept in the log of
edges but never used by a later card.

Nothing here reads a clock, takes a lock or touches the store: time comes in
as integer nanoseconds (``now_ns``) and the session supplies the recorded
edges and the log's race events.

>>> s = ArmingSettings.from_settings({"quiet_gap_ms": 1500, "claim_window_ms": 10000,
...     "wait_ms": 5000, "countdown_ms": 3000, "announced_wait_ms": 5000,
...     "tie_window_us": 0, "lockout_ms": None})
>>> edges = [Edge("bo", True, 2 * S), Edge("bo", False, 2 * S + 60 * MS)]
>>> arm_unannounced(edges, [], now_ns=4 * S, settings=s).arm_ns == 2 * S
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

from .edges import Edge
from .referee import RaceSpec

MS = 1_000_000
US = 1_000
S = 1_000 * MS

#: How many of the log's latest effective events are searched for the
#: presses of the races already decided (a burst must begin after them).
RECENT_RACE_EVENTS = 30
#: A box's GO stamp that does not say which GO it was asked for belongs to
#: the race whose scheduled GO is at most this far from it (a countdown's
#: blips are a second apart, its GO 900 ms after the last blip ends).
CUE_MATCH_NS = 100 * MS


@dataclass(frozen=True)
class ArmingSettings:
    """The session's timing settings, as integer nanoseconds."""

    quiet_gap_ns: int           # a burst ends after this long without a press
    claim_window_ns: int        # a logged card takes a burst that began at most this long ago
    wait_ns: int                # unannounced race: deadline after the arm time
    countdown_ns: int           # announced race: default countdown before GO
    announced_wait_ns: int      # announced race: deadline after GO
    tie_window_ns: int = 0      # presses this close to the first are a tie
    lockout_ns: int | None = None   # a false starter may come back after this
    late_ns: int = 2_000 * MS   # presses this soon after a race's window closed are late: strays
    confirm_ns: int = 6_000 * MS    # a claimed burst older than this asks the host first
    flipper_arms: bool = False  # the flipper's own press marks the flip and arms the race

    @classmethod
    def from_settings(cls, settings: dict) -> "ArmingSettings":
        """From the session's settings dict (``*_ms``, ``tie_window_us``)."""
        lockout = settings.get("lockout_ms")
        return cls(quiet_gap_ns=int(settings["quiet_gap_ms"]) * MS,
                   claim_window_ns=int(settings["claim_window_ms"]) * MS,
                   wait_ns=int(settings["wait_ms"]) * MS,
                   countdown_ns=int(settings["countdown_ms"]) * MS,
                   announced_wait_ns=int(settings["announced_wait_ms"]) * MS,
                   tie_window_ns=int(settings["tie_window_us"]) * US,
                   lockout_ns=None if lockout is None else int(lockout) * MS,
                   late_ns=int(settings.get("late_ms", 2_000) or 0) * MS,
                   # none: a burst's age alone never asks the host
                   confirm_ns=int(settings.get("confirm_ms", 6_000)
                                  or settings["claim_window_ms"]) * MS,
                   flipper_arms=bool(settings.get("flipper_arms", False)))

    @property
    def horizon_ns(self) -> int:
        """How long a recorded edge can still matter to a card logged later:
        a burst that began a claim window ago, its quiet gaps, and the race it
        may become. Older edges may be forgotten."""
        return self.claim_window_ns + 2 * self.quiet_gap_ns + self.wait_ns + self.late_ns


@dataclass(frozen=True)
class Arming:
    """How a race is armed: its window, its GO, and the burst it takes.

    ``arm_ns`` is when presses start to count (GO for an announced race, the
    first press of the claimed burst or now for an unannounced one);
    ``deadline_ns`` ends the race's window; ``burst`` holds the recorded
    edges the race takes (empty for an announced race or no claimed burst).
    """

    announced: bool
    arm_ns: int
    deadline_ns: int
    burst: tuple[Edge, ...] = ()
    #: why the host must confirm the claimed burst first (None: no need)
    confirm: str | None = None
    #: the flipper whose press armed the race (flipper arming), else None
    flipper: str | None = None
    #: where the race's window began (the claimed burst may hold false
    #: starts before ``arm_ns`` when the flipper armed it)
    start_ns: int | None = None
    #: the GO the companion scheduled, once ``arm_ns`` is the buzzer box's
    #: own stamp of the GO it sounded (None: armed at the scheduled GO)
    scheduled_ns: int | None = None

    @property
    def go_ns(self) -> int:
        return self.arm_ns

    @property
    def window(self) -> "RaceWindow":
        return RaceWindow(self.arm_ns if self.start_ns is None else self.start_ns,
                          self.deadline_ns)


@dataclass(frozen=True)
class RaceWindow:
    """The span of time in which a press can decide a race (both ends included)."""

    start_ns: int
    end_ns: int

    def __contains__(self, t_ns: int) -> bool:
        return self.start_ns <= t_ns <= self.end_ns

    def remaining_ns(self, now_ns: int) -> int:
        """How much of the window is left at ``now_ns`` (0 once it closed)."""
        return max(0, self.end_ns - max(now_ns, self.start_ns))


# ---------------------------------------------------------------------------
# bursts and claiming


def bursts(edges: Iterable[Edge], quiet_gap_ns: int) -> list[list[Edge]]:
    """The recorded edges grouped into bursts, oldest first.

    A burst starts at a press that comes more than ``quiet_gap_ns`` after the
    previous press; releases belong to the burst they fall in; edges before
    the first press belong to no burst. Edges are taken in the referee's
    canonical order (by time, a release before a press at the same
    nanosecond), so the bursts never depend on the order edges arrived in.

    >>> [len(b) for b in bursts([Edge("a", True, 0), Edge("b", True, 2 * S)], S)]
    [1, 1]
    """
    out: list[list[Edge]] = []
    last_press: int | None = None
    for e in sorted(edges, key=_canonical):
        if e.pressed and (last_press is None or e.t_ns - last_press > quiet_gap_ns):
            out.append([])
        if e.pressed:
            last_press = e.t_ns
        if out:
            out[-1].append(e)
    return out


def _canonical(e: Edge) -> tuple[int, bool, str]:
    return (e.t_ns, e.pressed, e.player)


def _int(t) -> bool:
    return isinstance(t, int) and not isinstance(t, bool)


def race_close_ns(event: dict, quiet_gap_ns: int) -> int | None:
    """When a logged race's window closed: a quiet gap after its last press
    (the runner-ups of a decided race still belong to it), never after its
    deadline; its deadline (or arm time) when nobody pressed."""
    spec = event.get("spec") if isinstance(event.get("spec"), dict) else {}
    deadline = spec.get("deadline_ns") if _int(spec.get("deadline_ns")) else None
    presses = [e.get("t_ns") for e in event.get("edges") or ()
               if isinstance(e, dict) and e.get("edge", "press") == "press" and _int(e.get("t_ns"))]
    if presses:
        close = max(presses) + quiet_gap_ns
        return close if deadline is None else min(close, max(deadline, max(presses)))
    if deadline is not None:
        return deadline
    return spec.get("arm_ns") if _int(spec.get("arm_ns")) else None


def claimed_floor(events: Sequence[dict], now_ns: int, horizon_ns: int,
                  settings: "ArmingSettings | None" = None) -> int | None:
    """The time after which a burst a new card claims must begin, from the
    races in ``events`` (the log's effective events) within ``horizon_ns``
    before ``now_ns``: after their arm times and presses (one burst never
    decides two cards) and, given ``settings``, after each race's window
    closed plus ``late_ns`` (presses just after a race closed are late
    presses for it: strays, never the next card's). May lie after ``now_ns``
    (a race closed a moment ago: nothing is claimable yet)."""
    low = now_ns - horizon_ns
    floor = None
    for ev in events[-RECENT_RACE_EVENTS:]:
        if not isinstance(ev, dict) or ev.get("type") != "race" \
                or not isinstance(ev.get("spec"), dict):
            continue
        times = [ev["spec"].get("arm_ns")] + [e.get("t_ns") for e in ev.get("edges") or ()
                                              if isinstance(e, dict)]
        times = [t for t in times if _int(t) and low <= t <= now_ns]
        if settings is not None and times:
            close = race_close_ns(ev, settings.quiet_gap_ns)
            if close is not None:
                times.append(close + settings.late_ns)
        for t in times:
            if floor is None or t > floor:
                floor = t
    return floor


@dataclass(frozen=True)
class Claim:
    """The burst a logged card takes: its edges (that burst and every edge
    after it) and, when it looks like it belongs to something else, why the
    host must confirm it first."""

    edges: tuple[Edge, ...]
    confirm: str | None = None

    @property
    def start_ns(self) -> int | None:
        return self.edges[0].t_ns if self.edges else None


def find_claim(edges: Iterable[Edge], now_ns: int, settings: ArmingSettings,
               floor_ns: int | None = None, previous_log_ns: int | None = None) -> Claim:
    """Which recorded edges a card logged at ``now_ns`` claims.

    A burst is claimable when it began within the claim window before
    ``now_ns`` (not in the future) and after ``floor_ns``. It needs the
    host's confirmation when it began before the previous card was logged
    (``previous_log_ns``) or more than ``confirm_ns`` before this log. The
    earliest claimable burst that needs no confirmation is taken (an older
    doubtful one becomes a stray); failing that, the earliest doubtful one,
    flagged. Every edge from the taken burst on comes with it (a slow
    player's press in a later burst still counts)."""
    all_bursts = bursts(edges, settings.quiet_gap_ns)
    ok = [i for i, b in enumerate(all_bursts)
          if b[0].t_ns <= now_ns and now_ns - b[0].t_ns <= settings.claim_window_ns
          and (floor_ns is None or b[0].t_ns > floor_ns)]
    if not ok:
        return Claim(())

    def doubt(start: int) -> str | None:
        if previous_log_ns is not None and start < previous_log_ns:
            return "the presses began before the previous card was logged"
        if now_ns - start > settings.confirm_ns:
            return (f"the presses began {(now_ns - start) / S:.1f} s before this card "
                    f"was logged")
        return None
    pick = next((i for i in ok if doubt(all_bursts[i][0].t_ns) is None), ok[0])
    taken = tuple(e for later in all_bursts[pick:] for e in later)
    return Claim(taken, doubt(taken[0].t_ns))


def claim(edges: Iterable[Edge], now_ns: int, settings: ArmingSettings,
          floor_ns: int | None = None) -> tuple[Edge, ...]:
    """The edges :func:`find_claim` takes (no previous log known); ()."""
    return find_claim(edges, now_ns, settings, floor_ns).edges


def claim_windows(edges: Iterable[Edge], now_ns: int, settings: ArmingSettings,
                  floor_ns: int | None = None) -> list[dict]:
    """The bursts a card logged now could still claim, oldest first, each
    ``{"start_ns", "closes_ns", "closes_in_ms", "players"}`` (the players who
    pressed in it): what the host console shows draining."""
    out = []
    for b in bursts(edges, settings.quiet_gap_ns):
        start = b[0].t_ns
        closes = start + settings.claim_window_ns
        if start <= now_ns <= closes and (floor_ns is None or start > floor_ns):
            players = list(dict.fromkeys(e.player for e in b if e.pressed))
            out.append({"start_ns": start, "closes_ns": closes,
                        "closes_in_ms": (closes - now_ns) // MS, "players": players})
    return out


def forget_before(edges: Sequence[Edge], newest_ns: int, settings: ArmingSettings) -> int:
    """How many of the oldest recorded ``edges`` (in arrival order) are past
    the horizon once an edge at ``newest_ns`` came: they can be dropped."""
    cut = newest_ns - settings.horizon_ns
    n = 0
    for e in edges:
        if e.t_ns >= cut:
            break
        n += 1
    return n


# ---------------------------------------------------------------------------
# arming


def arm_unannounced(edges: Iterable[Edge], race_events: Sequence[dict], now_ns: int,
                    settings: ArmingSettings, previous_log_ns: int | None = None,
                    flipper: str | None = None) -> Arming:
    """Arm an unannounced race for a card logged at ``now_ns``: at the first
    press of the burst it claims (see :func:`find_claim`), else at
    ``now_ns``; its deadline is the arm time + ``wait_ns``.

    With ``settings.flipper_arms`` and a ``flipper`` (the player who turned
    the card and may not race), the flipper's latest press in the window
    marks the flip: the race is armed there, presses of others before it
    (back to the window's start) are false starts, and no burst is claimed.
    Without such a press the race is armed as above."""
    edges = list(edges)
    floor = claimed_floor(race_events, now_ns, settings.claim_window_ns + settings.wait_ns,
                          settings)
    if settings.flipper_arms and flipper is not None:
        low = now_ns - settings.claim_window_ns
        if floor is not None:
            low = max(low, floor + 1)
        marks = [e.t_ns for e in edges
                 if e.player == flipper and e.pressed and low <= e.t_ns <= now_ns]
        if marks:
            mark = max(marks)
            taken = tuple(e for e in sorted(edges, key=_canonical)
                          if e.t_ns >= low and e.player != flipper)
            return Arming(False, mark, mark + settings.wait_ns, taken, None, flipper, low)
    got = find_claim(edges, now_ns, settings, floor, previous_log_ns)
    arm = got.start_ns if got.edges else now_ns
    return Arming(False, arm, arm + settings.wait_ns, got.edges, got.confirm)


def strays(edges: Iterable[Edge], race_events: Sequence[dict], after_ns: int | None,
           before_ns: int, settings: ArmingSettings) -> list[Edge]:
    """The presses after ``after_ns`` and before ``before_ns`` that no race
    took: after every recent race's window (and its late span), so not the
    runner-ups of a race. What a card armed at ``before_ns`` leaves behind."""
    floor = claimed_floor(race_events, before_ns, settings.horizon_ns, settings)
    low = after_ns if floor is None else max(floor, after_ns if after_ns is not None else floor)
    return [e for e in sorted(edges, key=_canonical) if e.pressed and e.t_ns < before_ns
            and (low is None or e.t_ns > low)]


def press_window(t_ns: int, race_events: Sequence[dict], settings: ArmingSettings,
                 live_window: "RaceWindow | None" = None) -> dict:
    """Which window a press at ``t_ns`` fell in, for the pages: ``race`` (the
    live race's window, or the last race's before it closed: a runner-up),
    ``late`` (just after a race closed: a stray), else ``open`` (a card
    logged before ``closes_ns`` may claim it)."""
    if live_window is not None and t_ns in live_window:
        return {"window": "race", "closes_ns": live_window.end_ns}
    for ev in reversed(list(race_events[-RECENT_RACE_EVENTS:])):
        if not isinstance(ev, dict) or ev.get("type") != "race" \
                or not isinstance(ev.get("spec"), dict):
            continue
        arm = ev["spec"].get("arm_ns")
        close = race_close_ns(ev, settings.quiet_gap_ns)
        if _int(arm) and close is not None and arm <= t_ns:
            if t_ns <= close:
                return {"window": "race", "closes_ns": close}
            if t_ns <= close + settings.late_ns:
                return {"window": "late", "closes_ns": None}
        break
    return {"window": "open", "closes_ns": t_ns + settings.claim_window_ns}


def arm_announced(now_ns: int, settings: ArmingSettings, countdown_ns: int | None = None,
                  wait_ns: int | None = None) -> Arming:
    """Arm an announced race started at ``now_ns``: GO after the countdown
    (``countdown_ns``, default the setting), deadline GO + ``wait_ns``
    (a race request's own wait, default ``announced_wait_ns``)."""
    countdown = settings.countdown_ns if countdown_ns is None else countdown_ns
    if countdown < 0:
        raise ValueError("a countdown cannot be negative")
    go = now_ns + countdown
    wait = settings.announced_wait_ns if wait_ns is None else wait_ns
    return Arming(True, go, go + wait)


def request_wait_ns(info: Any) -> int | None:
    """A race request's own ``info["wait_ms"]`` as ns (None: the setting)."""
    wait = info.get("wait_ms") if isinstance(info, dict) else None
    if wait is None:
        return None
    if isinstance(wait, bool) or not isinstance(wait, int) or wait < 0:
        raise ValueError(f"the race request's wait_ms must be a non-negative integer, "
                         f"not {wait!r}")
    return wait * MS


def race_spec(request, arming: Arming, settings: ArmingSettings, players: Sequence[str],
              debounce_ns: int) -> RaceSpec:
    """The referee's :class:`RaceSpec` for a game's race request armed as
    ``arming``; a request's ``info["tie_window_us"]`` overrides the setting.
    Raises :class:`companion.referee.RaceError` for a race the referee
    cannot run."""
    tie = settings.tie_window_ns
    if isinstance(request.info, dict) and "tie_window_us" in request.info:
        tie = int(request.info["tie_window_us"]) * US
    return RaceSpec(request.kind, players=tuple(request.players) or tuple(players),
                    eligible=tuple(request.eligible), arm_ns=arming.arm_ns,
                    deadline_ns=arming.deadline_ns, tie_window_ns=tie,
                    debounce_ns=debounce_ns, lockout_ns=settings.lockout_ns)


# ---------------------------------------------------------------------------
# countdown -> GO


def phase(decided: bool, announced: bool, go_ns: int, now_ns: int) -> str:
    """The live race's phase at ``now_ns``: ``countdown`` before an announced
    GO, ``decided`` once it has a verdict, else ``live``."""
    if decided:
        return "decided"
    if announced and now_ns < go_ns:
        return "countdown"
    return "live"


def arm_at_cue(armed: Arming, cue_ns: int, asked_ns: int | None = None) -> Arming | None:
    """An announced race armed again at ``cue_ns``, the time the buzzer box
    really sounded its GO (its own stamp, on the clock of the presses);
    None when the stamp is not this race's GO.

    It is when ``asked_ns`` (the time the cue was asked for) is the race's
    scheduled GO; a stamp that does not say must lie within
    :data:`CUE_MATCH_NS` of it. A race armed from a stamp already, or an
    unannounced one, takes none. The window keeps its length: the deadline
    moves with GO.

    >>> a = Arming(True, 10 * S, 15 * S)
    >>> b = arm_at_cue(a, 10 * S + 3 * MS, asked_ns=10 * S)
    >>> (b.arm_ns - 10 * S, b.deadline_ns - 15 * S, b.scheduled_ns == 10 * S)
    (3000000, 3000000, True)
    >>> arm_at_cue(a, 9 * S, asked_ns=9 * S) is None        # a blip, not GO
    True
    """
    if isinstance(cue_ns, bool) or not isinstance(cue_ns, int):
        raise ValueError(f"a cue stamp must be integer nanoseconds, not {cue_ns!r}")
    if not armed.announced or armed.scheduled_ns is not None:
        return None
    go = armed.arm_ns
    if asked_ns is not None:
        if asked_ns != go:
            return None
    elif abs(cue_ns - go) > CUE_MATCH_NS:
        return None
    return replace(armed, arm_ns=cue_ns, deadline_ns=armed.deadline_ns + (cue_ns - go),
                   scheduled_ns=go)


def logged_go(events: Sequence[dict], asked_ns: int | None) -> int | None:
    """The scheduled GO of the last logged event when it is an announced race
    armed at that GO and asked for at ``asked_ns`` (its box's stamp came after
    the verdict); else None."""
    if asked_ns is None or not events:
        return None
    ev = events[-1]
    if not isinstance(ev, dict) or ev.get("type") != "race" or not ev.get("announced") \
            or "scheduled_go_ns" in ev or not isinstance(ev.get("spec"), dict):
        return None
    arm = ev["spec"].get("arm_ns")
    return arm if _int(arm) and arm == asked_ns else None


def rearm_live(live, arm_ns: int, deadline_ns: int | None) -> None:
    """Judge the undecided :class:`~companion.referee.LiveRace` ``live``
    again from its own edges with a new arm time and deadline (the GO the
    box sounded). The same object, so whoever holds it sees the verdict;
    its spec keeps everything else (players, eligibility, tie window)."""
    if live.verdict is not None:
        raise ValueError("a decided race cannot be armed again")
    edges = list(live.edges)
    live.__init__(replace(live.spec, arm_ns=arm_ns, deadline_ns=deadline_ns), live.hold_ns)
    for e in edges:
        live.feed(e)


def go_in_ms(go_ns: int, now_ns: int) -> int:
    """Whole milliseconds left to GO (0 once it has passed)."""
    return max(0, (go_ns - now_ns) // MS)


__all__ = ["Arming", "ArmingSettings", "Claim", "RaceWindow", "arm_announced", "arm_at_cue",
           "arm_unannounced", "CUE_MATCH_NS", "logged_go", "rearm_live", "bursts", "claim",
           "claim_windows", "claimed_floor", "find_claim", "forget_before", "go_in_ms", "phase", "press_window", "race_close_ns", "race_spec",
           "request_wait_ns", "strays"]
