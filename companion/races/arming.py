"""Race arming, pure: when a race starts, which presses belong to it, when it ends.

The host logs a card seconds after it was flipped, so the log cannot be the
start signal of a race that is already over (docs/rules-notes.md, "Which card
a press belongs to"):

* **Unannounced races** (a Chope! Table or Mynah): every accepted edge is
  recorded as it happens. A first-press race is over at its verdict plus
  ``runner_up_ns`` (its runner-ups); a last-press race once every eligible
  player pressed (or at its deadline); no race takes a press after the next
  card's log. A logged card takes the first press the race before it does
  not own (:class:`Prior`), within the claim window before its log: cards
  take presses in the order they were logged. Where a runner-up of the race
  before could have been this card's first press and the readings differ,
  or the press is older than ``confirm_ns``, the claim carries the
  question and its ``choices`` for the host: never a silent pick.
* **Announced races** (a Chomp! reveal, Food Poisoning): the companion calls
  the start: GO comes after a countdown; presses before GO are false starts.
  When the buzzer box sounds the cue itself (a Pico box), it reports the
  time it really sounded GO, on the clock of its presses; the race is armed
  again there (:func:`arm_at_cue`), so a press between the scheduled GO and
  the box's GO is a false start, judged on the box's clock. Until that
  stamp arrives the race runs on the scheduled GO.

Nothing here reads a clock, takes a lock or touches the store: time comes in
as integer nanoseconds and the session supplies the recorded edges and the
log's race events.

>>> s = ArmingSettings.from_settings({"quiet_gap_ms": 1500, "claim_window_ms": 10000,
...     "wait_ms": 5000, "countdown_ms": 3000, "announced_wait_ms": 5000,
...     "tie_window_us": 0, "lockout_ms": None})
>>> edges = [Edge("bo", True, 2 * S), Edge("bo", False, 2 * S + 60 * MS)]
>>> arm_unannounced(edges, [], log_ns=4 * S, settings=s).arm_ns == 2 * S
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

from .attribution import People
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
    """The session's timing settings, as integer nanoseconds; the defaults
    are a table's (the one place they are written:
    companion.table.settings.DEFAULT_SETTINGS reads them from here)."""

    quiet_gap_ns: int = 1_500 * MS      # the console groups presses this close as one burst
    claim_window_ns: int = 10_000 * MS  # a logged card takes a press at most this long before it
    wait_ns: int = 5_000 * MS           # unannounced race: deadline after the arm time
    countdown_ns: int = 3_000 * MS      # announced race: default countdown before GO
    announced_wait_ns: int = 5_000 * MS  # announced race: deadline after GO
    tie_window_ns: int = 0      # presses this close to the first are a tie
    lockout_ns: int | None = None   # a false starter may come back after this
    #: a first-press race keeps the presses this soon after its first one
    #: (runner-ups); later ones belong to whatever card is logged next
    runner_up_ns: int = 600 * MS
    #: two cards' first presses are never closer than this (a card is
    #: flipped, seen and slammed): a runner-up this late may be the next card's
    min_gap_ns: int = 250 * MS
    confirm_ns: int = 2_500 * MS    # a claimed press older than this asks the host first
    #: the host logs a card at most this long after its first slam: a press
    #: longer before a card's log cannot have been that card's first slam
    log_lag_ns: int = 2_600 * MS
    flipper_arms: bool = False  # the flipper's own press marks the flip (the judge's evidence)
    #: whom the race judge assumes at the table (companion.races.attribution)
    people: People = People()
    @classmethod
    def from_settings(cls, settings: dict) -> "ArmingSettings":
        """From the session's settings dict (``*_ms``, ``tie_window_us``); a
        key it lacks keeps the default."""
        d = cls()

        def ms(key: str, default_ns: int) -> int:
            return int(settings.get(key, default_ns // MS)) * MS
        lockout = settings.get("lockout_ms")
        claim_window = ms("claim_window_ms", d.claim_window_ns)
        return cls(quiet_gap_ns=ms("quiet_gap_ms", d.quiet_gap_ns),
                   claim_window_ns=claim_window, wait_ns=ms("wait_ms", d.wait_ns),
                   countdown_ns=ms("countdown_ms", d.countdown_ns),
                   announced_wait_ns=ms("announced_wait_ms", d.announced_wait_ns),
                   tie_window_ns=int(settings.get("tie_window_us", 0)) * US,
                   lockout_ns=None if lockout is None else int(lockout) * MS,
                   runner_up_ns=ms("runner_up_ms", d.runner_up_ns),
                   min_gap_ns=ms("min_gap_ms", d.min_gap_ns),
                   log_lag_ns=ms("log_lag_ms", d.log_lag_ns),
                   # none (0): a press's age alone never asks the host
                   confirm_ns=ms("confirm_ms", d.confirm_ns) or claim_window,
                   flipper_arms=bool(settings.get("flipper_arms", d.flipper_arms)),
                   people=People.from_settings(settings))

    @property
    def horizon_ns(self) -> int:
        """How long a recorded edge can still matter to a card logged later:
        a burst that began a claim window ago, its quiet gaps, and the race it
        may become. Older edges may be forgotten."""
        return self.claim_window_ns + 2 * self.quiet_gap_ns + self.wait_ns + self.runner_up_ns


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
    #: where the race's window began (None: at ``arm_ns``)
    start_ns: int | None = None
    #: the GO the companion scheduled, once ``arm_ns`` is the buzzer box's
    #: own stamp of the GO it sounded (None: armed at the scheduled GO)
    scheduled_ns: int | None = None
    #: when the host must choose: the first presses the race could start at
    choices: tuple[dict, ...] = ()

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


def _spec(event: dict) -> dict:
    return event["spec"] if isinstance(event.get("spec"), dict) else {}


def _counted(event: dict) -> list[tuple[str, int]]:
    """A logged race's counted presses ``(player, t_ns)``, earliest first."""
    return sorted(((o["player"], o["t_ns"]) for o in event.get("order") or ()
                   if isinstance(o, dict) and isinstance(o.get("player"), str)
                   and _int(o.get("t_ns"))), key=lambda x: x[1])


def race_close_ns(event: dict, settings: "ArmingSettings") -> int | None:
    """When a logged race stopped taking presses (docs/rules-notes.md,
    "Which card a press belongs to"): the ``close_ns`` it was logged with;
    for an older record, a first-press (or first-release) race closes
    ``runner_up_ns`` after its first counted press, a last-press race at its
    last counted press once every eligible player pressed; either at its
    deadline when that did not happen."""
    if _int(event.get("close_ns")):
        return event["close_ns"]
    spec = _spec(event)
    counted = _counted(event)
    deadline = spec.get("deadline_ns") if _int(spec.get("deadline_ns")) else None
    if counted and spec.get("kind") == "last-press":
        if len(counted) >= len(spec.get("eligible") or ()):
            return counted[-1][1]
    elif counted:
        close = counted[0][1] + settings.runner_up_ns
        return close if deadline is None else min(close, max(deadline, counted[0][1]))
    if deadline is not None:
        return deadline
    return spec.get("arm_ns") if _int(spec.get("arm_ns")) else None


@dataclass(frozen=True)
class Prior:
    """The last logged race, as the next card's claim sees it: its first
    counted press (``anchor_ns``, else its arm time), when it stopped taking
    presses (``close_ns``), the presses that are its own (counted, runner-ups
    and the ineligible ones of its window: ``own``) and its runner-ups (every
    eligible player's first press after the first counted one: one of them
    may have been the next card's first press)."""

    kind: str
    anchor_ns: int
    close_ns: int
    own: frozenset = frozenset()            # {(player, t_ns)}
    runner_ups: tuple[Edge, ...] = ()

    @classmethod
    def of(cls, event: dict, edges: Iterable[Edge], settings: "ArmingSettings",
           until_ns: int | None = None) -> "Prior | None":
        """The prior of a logged race ``event`` given the recorded ``edges``
        (its runner-ups came after it was logged) for a card logged at
        ``until_ns`` (no press after the next card's log is an earlier
        card's); None for a record with no times."""
        spec = _spec(event)
        close = race_close_ns(event, settings)
        counted = _counted(event)
        anchor = counted[0][1] if counted else spec.get("arm_ns")
        if close is None or not _int(anchor):
            return None
        if until_ns is not None:
            close = max(anchor, min(close, until_ns))
        kind = spec.get("kind") or event.get("kind") or "first-press"
        counted = [(p, t) for p, t in counted if t <= close]
        own = set(counted)
        players = {p for p, _ in counted}
        late: list[Edge] = [Edge(p, True, t) for p, t in counted[1:]]
        for e in sorted(edges, key=_canonical):
            if not e.pressed or e.t_ns <= anchor or e.t_ns > close or (e.player, e.t_ns) in own:
                continue
            if kind == "last-press":
                own.add((e.player, e.t_ns))         # everyone's slap, up to the last
            elif e.player not in players:
                # a runner-up, or its flipper's reflex: its own, unless it was
                # the next card's first press (see _doubtful_starts)
                players.add(e.player)
                own.add((e.player, e.t_ns))
                late.append(e)
            # else: a second press by the same player: the next card's
        late.sort(key=_canonical)
        return cls(kind, anchor, close, frozenset(own), tuple(late))

    def may_start_next(self, e: Edge, settings: "ArmingSettings") -> bool:
        """Whether press ``e``, not this race's own, may be the next card's
        first press: after the race closed, yes; inside its window only
        ``min_gap_ns`` or more after the race's press before it (a card is
        never flipped, seen and slammed sooner: closer, it is this race's
        noise, e.g. its flipper's reflex)."""
        if e.t_ns > self.close_ns or self.kind != "first-press":
            return True
        before = [t for _, t in self.own if t < e.t_ns] + [self.anchor_ns]
        return e.t_ns - max(before) >= settings.min_gap_ns

    def takes(self, e: Edge) -> bool:
        """Whether press ``e`` is this race's own (never a later card's)."""
        if e.t_ns <= self.anchor_ns:
            return True
        if e.t_ns > self.close_ns:
            return False
        return self.kind == "last-press" or (e.player, e.t_ns) in self.own


def last_race(events: Sequence[dict]) -> dict | None:
    """The latest ``race`` event among the log's recent effective events."""
    for ev in reversed(list(events[-RECENT_RACE_EVENTS:])):
        if isinstance(ev, dict) and ev.get("type") == "race" and isinstance(ev.get("spec"), dict):
            return ev
    return None


def taken_before(events: Sequence[dict], last: dict | None) -> set[tuple[str, int]]:
    """The presses the log's recent races counted, but the ``last`` one's:
    each is its card's, never a later card's (the last race's presses are
    weighed by the judge: a late runner-up may have been the next card's)."""
    out: set[tuple[str, int]] = set()
    for ev in list(events[-RECENT_RACE_EVENTS:]):
        if ev is last or not isinstance(ev, dict) or ev.get("type") != "race":
            continue
        out.update((p, t) for p, t in _counted(ev))
    return out


def prior_race(events: Sequence[dict], edges: Iterable[Edge], settings: "ArmingSettings",
               until_ns: int | None = None) -> Prior | None:
    """:meth:`Prior.of` the last logged race, if any."""
    ev = last_race(events)
    return None if ev is None else Prior.of(ev, edges, settings, until_ns)


@dataclass(frozen=True)
class Claim:
    """The presses a logged card takes: from its first press on (every edge
    after it comes too; the referee judges them) and, when the log cannot
    tell which card they were for, why the host must choose (``confirm``)
    and what they choose from (``choices``: the first presses the card's
    race could start at, each ``{"t_ns", "player"}``, the default last)."""

    edges: tuple[Edge, ...]
    confirm: str | None = None
    choices: tuple[dict, ...] = ()

    @property
    def start_ns(self) -> int | None:
        return self.edges[0].t_ns if self.edges else None


def claimable(edges: Iterable[Edge], log_ns: int, settings: ArmingSettings,
              prior: Prior | None = None, now_ns: int | None = None) -> list[Edge]:
    """The presses a card logged at ``log_ns`` may start at, earliest first:
    within the claim window before its log (and up to ``now_ns``, when the
    card is armed later than it was logged: it waited behind a race), and
    not the ``prior`` race's own presses."""
    now = log_ns if now_ns is None else max(now_ns, log_ns)
    low = log_ns - settings.claim_window_ns
    return [e for e in sorted(edges, key=_canonical)
            if e.pressed and low <= e.t_ns <= now and not (prior and prior.takes(e))]


def find_claim(edges: Iterable[Edge], log_ns: int, settings: ArmingSettings,
               prior: Prior | None = None, eligible: Iterable[str] | None = None,
               now_ns: int | None = None, kind: str | None = None) -> Claim:
    """Which recorded edges a card logged at ``log_ns`` claims: those from
    the first press it may start at (:func:`claimable`) on.

    * A press more than ``confirm_ns`` before the log needs the host's tap;
      with a fresher claimable press there too, the host chooses between
      the two when they would give different verdicts (a slow host's slam,
      or a stray), else the fresher one is taken and the older left (strays).
    * After a first-press race, a runner-up of it that came ``min_gap_ns``
      or more after that race's press before it (its first press or an
      earlier runner-up), by a player who may win this card, could have
      been this card's first press: the host chooses (``choices``, one
      tap); it is never picked silently.

    A first-press card (``kind``) takes its presses up to ``runner_up_ns``
    after its first one: later ones are the next card's.
    """
    ordered = sorted(edges, key=_canonical)
    cands = [c for c in claimable(ordered, log_ns, settings, prior, now_ns)
             if prior is None or prior.may_start_next(c, settings)]
    pick = next((e for e in cands if log_ns - e.t_ns <= settings.confirm_ns), None)
    confirm = None
    if pick is None and cands:
        pick = cands[0]
        confirm = (f"the presses began {(log_ns - pick.t_ns) / S:.1f} s before this card "
                   f"was logged")
    elig = None if eligible is None else set(eligible)
    starts = _doubtful_starts(cands, pick, prior, log_ns, elig, settings)
    older = [c for c in cands if pick is not None and c.t_ns < pick.t_ns]
    if not starts and older and confirm is None:
        # an older press, left for a fresher one: this card's slam if the
        # host was slow to log it; asked about unless the verdict is the same
        starts = [older[-1], pick]
    if len(starts) > 1 and pick is not None and eligible is not None \
            and kind in ("first-press", "last-press") \
            and len({_outcome(ordered, x, kind, elig, settings) for x in starts}) == 1:
        starts = []     # whichever press it starts at, this card's verdict is the same
    if starts:
        first = starts[0]
        if prior is not None and prior.anchor_ns < first.t_ns <= prior.close_ns + settings.runner_up_ns:
            confirm = (f"{first.player}'s press {(first.t_ns - prior.anchor_ns) / MS:.0f} ms "
                       f"after the last race's first press may have been for this card")
        else:
            confirm = (f"{first.player}'s press {(log_ns - first.t_ns) / S:.1f} s before this "
                       f"card was logged may have been its first")
        choices = tuple({"t_ns": e.t_ns, "player": e.player} for e in starts)
        return Claim(segment(ordered, first.t_ns, kind, settings), confirm, choices)
    if pick is None:
        return Claim(())
    return Claim(segment(ordered, pick.t_ns, kind, settings), confirm,
                 ({"t_ns": pick.t_ns, "player": pick.player},) if confirm else ())


def _doubtful_starts(cands: list[Edge], pick: Edge | None, prior: Prior | None, log_ns: int,
                     elig: set | None, settings: ArmingSettings) -> list[Edge]:
    """The presses a card's race could start at when the log cannot tell
    (earliest first; [] when it can): after a first-press race, its
    runner-ups that came ``min_gap_ns`` or more after its press before them
    (they may have been this card's first press), then ``pick``; and when
    ``pick`` itself lies in that race's window (a press it did not count:
    its flipper's, a second press), the next press after it too: such a
    pick is always asked about, even alone (its card's own slam may still
    be to come)."""
    if prior is None or prior.kind != "first-press":
        return []
    alts, last = [], prior.anchor_ns      # the race before's latest press so far
    for e in prior.runner_ups:
        if (e.t_ns - last >= settings.min_gap_ns and log_ns - e.t_ns <= settings.log_lag_ns
                and (elig is None or e.player in elig)
                and (pick is None or e.t_ns < pick.t_ns)):
            alts.append(e)
        last = e.t_ns
    if pick is not None and pick.t_ns <= prior.close_ns:
        after = next((e for e in cands if e.t_ns > pick.t_ns), None)
        return alts + [pick] + ([after] if after is not None else [])
    return alts + [pick] if alts and pick is not None else alts


def _outcome(edges: Sequence[Edge], start: Edge, kind: str, eligible: set,
             settings: ArmingSettings) -> tuple | None:
    """The verdict a race of ``kind`` starting at ``start_ns`` would give
    from the recorded presses: for a first-press race its winner (final
    once pressed); for a last-press race its loser once every eligible
    player pressed, else None (not known yet: a unique value, so it asks)."""
    firsts: dict[str, int] = {}
    start_ns = start.t_ns
    for e in segment(edges, start_ns, kind, settings):
        if e.pressed and e.player in eligible and e.player not in firsts:
            firsts[e.player] = e.t_ns
    if kind == "first-press":
        return ("winner", min(firsts, key=firsts.get) if firsts else None)
    if len(firsts) < len(eligible):
        return ("open", start_ns)
    return ("loser", max(firsts, key=firsts.get))


def segment(edges: Sequence[Edge], start_ns: int, kind: str | None,
            settings: ArmingSettings) -> tuple[Edge, ...]:
    """The recorded ``edges`` (canonical order) a race starting at
    ``start_ns`` takes: all from there on (cards take presses in order: once
    a card's race started, no later press is an earlier card's), for a
    first-press race only up to ``runner_up_ns`` after its start (later
    presses are the next card's)."""
    end = start_ns + settings.runner_up_ns if kind == "first-press" else None
    return tuple(e for e in edges if e.t_ns >= start_ns and (end is None or e.t_ns <= end))


def claim(edges: Iterable[Edge], log_ns: int, settings: ArmingSettings,
          prior: Prior | None = None) -> tuple[Edge, ...]:
    """The edges :func:`find_claim` takes; ()."""
    return find_claim(edges, log_ns, settings, prior).edges


def claim_windows(edges: Iterable[Edge], now_ns: int, settings: ArmingSettings,
                  prior: Prior | None = None) -> list[dict]:
    """The bursts a card logged now could still claim, oldest first, each
    ``{"start_ns", "closes_ns", "closes_in_ms", "players"}`` (the players who
    pressed in it): what the host console shows draining."""
    free = claimable(edges, now_ns, settings, prior)
    out = []
    for b in bursts(free, settings.quiet_gap_ns):
        start = b[0].t_ns
        closes = start + settings.claim_window_ns
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


def arm_unannounced(edges: Iterable[Edge], race_events: Sequence[dict], log_ns: int,
                    settings: ArmingSettings, eligible: Iterable[str] | None = None,
                    now_ns: int | None = None, kind: str | None = None) -> Arming:
    """Arm an unannounced race for a card logged at ``log_ns`` (and armed at
    ``now_ns``, later when it waited behind another race): at the first press
    it claims (:func:`find_claim`), else at its log; its deadline is the arm
    time + ``wait_ns``. (With ``settings.flipper_arms`` the flipper's press
    is the race judge's evidence of when the card was turned:
    :mod:`companion.races.attribution`.)"""
    edges = sorted(edges, key=_canonical)
    prior = prior_race(race_events, edges, settings, until_ns=log_ns)
    now = log_ns if now_ns is None else max(log_ns, now_ns)
    got = find_claim(edges, log_ns, settings, prior, eligible, now, kind)
    arm = got.start_ns if got.edges else log_ns
    return Arming(False, arm, arm + settings.wait_ns, got.edges, got.confirm,
                  choices=got.choices)


def strays(edges: Iterable[Edge], race_events: Sequence[dict], after_ns: int | None,
           before_ns: int, settings: ArmingSettings) -> list[Edge]:
    """The presses after ``after_ns`` and before ``before_ns`` that no race
    took (not the last race's own, runner-ups included): what a card armed
    at ``before_ns`` leaves behind."""
    edges = sorted(edges, key=_canonical)
    prior = prior_race(race_events, edges, settings)
    return [e for e in edges if e.pressed and e.t_ns < before_ns
            and (after_ns is None or e.t_ns > after_ns) and not (prior and prior.takes(e))]


def press_window(t_ns: int, race_events: Sequence[dict], settings: ArmingSettings,
                 live_window: "RaceWindow | None" = None) -> dict:
    """Which window a press at ``t_ns`` fell in, for the pages: ``race`` (the
    live race's window, or the last race's before it closed: a runner-up),
    else ``open`` (the next card logged before ``closes_ns`` may claim it)."""
    if live_window is not None and t_ns in live_window:
        return {"window": "race", "closes_ns": live_window.end_ns}
    ev = last_race(race_events)
    if ev is not None:
        arm, close = _spec(ev).get("arm_ns"), race_close_ns(ev, settings)
        if _int(arm) and close is not None and arm <= t_ns <= close:
            return {"window": "race", "closes_ns": close}
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
    ``arming``; a request's ``info["tie_window_us"]`` overrides the setting,
    and its ``info["out_of_turn_ms"]`` asks for presses of those who may not
    race to be listed that long after the first (Chomp!'s Bad Chomps).
    Raises :class:`companion.races.referee.RaceError` for a race the referee
    cannot run."""
    info = request.info if isinstance(request.info, dict) else {}
    tie = settings.tie_window_ns
    if "tie_window_us" in info:
        tie = int(info["tie_window_us"]) * US
    extra = {}
    if "out_of_turn_ms" in info:
        extra["out_of_turn_ns"] = int(info["out_of_turn_ms"]) * MS
    return RaceSpec(request.kind, players=tuple(request.players) or tuple(players),
                    eligible=tuple(request.eligible), arm_ns=arming.arm_ns,
                    deadline_ns=arming.deadline_ns, tie_window_ns=tie,
                    debounce_ns=debounce_ns, lockout_ns=settings.lockout_ns, **extra)


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
    """Judge the undecided :class:`~companion.races.referee.LiveRace` ``live``
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
           "claim_windows", "claimable", "taken_before", "find_claim", "last_race", "prior_race", "Prior", "forget_before", "go_in_ms", "phase", "press_window", "race_close_ns", "race_spec",
           "request_wait_ns", "strays"]
