"""The race desk: the live race, written once.

Every press, from a pin, a Pico box or a phone, reaches a verdict through
one desk: the referee (debounce, stuck buttons, the live race), the recorded
edges a logged card may claim, the arming (:mod:`companion.races.arming`), the
buzzer box's GO stamp, the race windows and the verdict. The table session
(:class:`companion.table.session.TableSession`) and the bare referee behind
``companion buzz`` and the hardware harness
(:class:`companion.buzzers.pipeline.RefereeConsumer`) both run their races
here; what differs between them is their :class:`DeskOwner`: where a race's
view goes, how it is saved, what the log says about the races before.

Nothing here reads a clock or touches a store: time comes in as integer
nanoseconds (``now``), and the owner is called with its lock held.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, Sequence

from . import arming, attribution
from .edges import Edge, VirtualEdge
from .referee import LiveRace, RaceSpec, Referee, earliest

log = logging.getLogger(__name__)

MS = 1_000_000
#: how many virtual edges are remembered as virtual (to mark race records)
VIRTUAL_MEMORY = 1024
#: how many (page, buzzer) sequence counters are kept (the oldest forgotten)
PAGES_REMEMBERED = 256


def N_(text: str) -> str:
    """Marks a sentence the pages show for the catalog (translated there)."""
    return text


#: why the judge asks the host (the pages translate them)
ASK_FIRST = N_("the presses cannot tell which was this card's first slam")
ASK_LAST = N_("the presses cannot tell who slapped this card last")


class DeskOwner(Protocol):
    """What the desk asks of whoever runs it (with that owner's lock held)."""

    def race_events(self) -> Sequence[dict]:
        """The log's effective events (the races before, for claims)."""

    def publish(self, kind: str, data: Any) -> None:
        """A transient update for the pages (``press``, ``race``)."""

    def race_view(self, now: int) -> dict | None:
        """The race as the pages see it now."""

    def fault(self, kind: str, message: str | None, player: str | None = None,
              t_ns: int | None = None) -> None:
        """A fault to record and show."""

    def record_stray(self, e: Edge, why: str) -> None:
        """Keep a stray press in the record (outside the lock, later)."""

    def persist(self, race: "DeskRace", durable: bool) -> None:
        """Save the live race (durably now, or soon off the edge path)."""

    def race_decided(self, race: "DeskRace", now: int) -> None:
        """Log a decided race."""

    def marks_flip(self, player: str) -> bool:
        """Whether ``player`` is the one who turns the next card (flipper arming)."""


def turned_by(req) -> str | None:
    """The player who turned the card (a Table's ``flipper``, who may not
    race it, or its ``info``'s: a Mynah's, who races it too): with flipper
    arming their press marks the flip."""
    who = getattr(req, "flipper", None) or (getattr(req, "info", None) or {}).get("flipper")
    return who if isinstance(who, str) else None


def in_order(edges) -> list[Edge]:
    """Edges in the referee's canonical order (by time, a release first)."""
    return sorted(edges, key=lambda e: (e.t_ns, e.pressed, e.player))


@dataclass
class DeskRace:
    """The live race: what was asked for (``request``, None for a bare
    referee's race), how it was armed, the referee's LiveRace, and what of
    it was saved and published."""

    request: Any
    live: LiveRace
    armed: arming.Arming
    version: int = 0            # the game's version when the race began
    record: dict = field(default_factory=dict)   # the saved row without its edges
    phase_sent: str = ""
    persisted: int = 0          # edges of live.edges already in edges_json
    edges_json: list = field(default_factory=list)
    seen: int = 0               # edges checked for virtual presses
    error: str | None = None    # the tracker refused the verdict
    virtual: set = field(default_factory=set)
    logged_ns: int | None = None    # when the host logged the card (unannounced)
    confirmed: bool = False     # the host answered the card's question
    cut_ns: int | None = None   # the next card was logged then: no press after it is ours
    awaits_cue: bool = False    # announced: the box's stamp of GO is still to come
    #: the race judge (companion.races.attribution) holds the verdict: a press still
    #: to come, or a card still to be logged, could change it
    judging: bool = False
    recheck_ns: int | None = None   # ... look again then
    judged: bool = False        # the race was rebuilt on the judge's reading: log it
    #: the readings the host was asked to choose from, by their choice's t_ns
    readings: dict = field(default_factory=dict)
    #: the host said which of this card and the next was turned first (the
    #: swap they took): the judge weighs no other order
    order_known: bool = False
    #: the camera saw the card turned: its log time is its flip time
    #: (docs/camera.md; the judge assumes a lag of ~0, People.seen)
    camera: bool = False

    @property
    def confirm(self) -> str | None:
        """Why the host must answer first (None: no need)."""
        return None if self.confirmed else self.armed.confirm

    @property
    def announced(self) -> bool:
        return self.armed.announced

    @property
    def go_ns(self) -> int:
        return self.armed.go_ns

    @property
    def kind(self) -> str:
        return self.live.spec.kind


class RaceDesk:
    """The referee, the recorded edges and the live race of one table."""

    def __init__(self, owner: DeskOwner, settings: arming.ArmingSettings, referee: Referee):
        self.owner = owner
        self.settings = settings
        self.referee = referee
        referee.listeners.append(self._on_referee)
        self.race: DeskRace | None = None
        self.edges: deque[Edge] = deque()
        self._virtual: set = set()
        self._virtual_fifo: deque = deque()
        self._decided: LiveRace | None = None
        self.dirty = False
        self.polled_at: int | None = None
        self.strays: deque = deque(maxlen=20)
        self.stray_mark: int | None = None      # presses up to here are classified
        #: the last sequence number per (page, virtual buzzer), the pages
        #: seen most recently last (at most PAGES_REMEMBERED)
        self.press_seq: OrderedDict[tuple[str | None, str], int] = OrderedDict()
        #: how much longer an announced race holds its verdict for the buzzer
        #: box's stamp of GO (None: the source sounds no cue of its own)
        self.cue_wait_ns: int | None = None

    def close(self) -> None:
        """Let go of the referee (a new game brings its own desk)."""
        if self._on_referee in self.referee.listeners:
            self.referee.listeners.remove(self._on_referee)
        self.drop()

    # -- edges in --------------------------------------------------------

    def feed(self, e: Edge, virtual: bool = False) -> None:
        """One edge of a seated player, from any source."""
        if virtual:
            key = (e.player, e.t_ns, e.pressed)
            self._virtual.add(key)
            self._virtual_fifo.append(key)
            while len(self._virtual_fifo) > VIRTUAL_MEMORY:
                self._virtual.discard(self._virtual_fifo.popleft())
        self.referee.feed(e)
        self.progress(e.t_ns)
        race = self.race
        if race is not None and race.judging and e.pressed:
            race.recheck_ns = e.t_ns      # a press may settle it: at the next poll

    def feed_virtual(self, v: VirtualEdge) -> None:
        """A phone's on-screen buzzer (``v.pressed`` None: a tap). ``v.seq``
        is the page's increasing number (by one) for this buzzer's changes:
        a change older than the last one applied is dropped (a press arriving
        after its own release would hold the buzzer down: stuck); a release
        whose press has not arrived is taken as a tap, so the press counts.
        Each page (``v.page``) keeps its own numbers: a page that sends a
        number far ahead (a forged one, a clock a minute fast) drops only
        its own later changes, never another page's."""
        pressed, player = v.pressed, v.player
        if v.seq is not None:
            key = (v.page, player)
            last = self.press_seq.get(key)
            if last is not None and v.seq <= last:
                return          # overtaken by a later change: dropped
            if pressed is False and (last is None or v.seq > last + 1) \
                    and not self.referee.level(player):
                pressed = None  # its press is still on the way: a tap, now
            self.press_seq[key] = v.seq
            self.press_seq.move_to_end(key)
            while len(self.press_seq) > PAGES_REMEMBERED:
                self.press_seq.popitem(last=False)
        edges = ([Edge(player, True, v.t_ns), Edge(player, False, v.t_ns + 1)]
                 if pressed is None else [Edge(player, bool(pressed), v.t_ns)])
        for e in edges:
            self.feed(e, virtual=True)

    def _on_referee(self, kind: str, payload) -> None:
        """Referee listener (the owner's lock is held)."""
        if kind == "edge":
            e: Edge = payload
            self.edges.append(e)
            for _ in range(arming.forget_before(self.edges, e.t_ns, self.settings)):
                self.edges.popleft()
            data = {"player": e.player, "pressed": e.pressed, "t_ns": e.t_ns,
                    "virtual": (e.player, e.t_ns, e.pressed) in self._virtual}
            if e.pressed:
                data.update(self.press_window(e))
            self.owner.publish("press", data)
        elif kind == "order":
            self.dirty = True
        elif kind == "verdict":
            self._decided = payload
        elif kind == "fault":
            self.owner.fault(payload.kind, None, payload.player, payload.t_ns)

    def press_window(self, e: Edge) -> dict:
        """Which window a press fell in (``race``, ``mark``, ``open``)."""
        race = self.race
        live = race.armed.window if race is not None else None
        got = arming.press_window(e.t_ns, self.owner.race_events(), self.settings, live)
        if got["window"] == "race" and race is None:
            self.dirty = True       # a runner-up of the last race: its card shows it live
        elif got["window"] == "open" and self.settings.flipper_arms:
            try:
                if self.owner.marks_flip(e.player):
                    got["window"] = "mark"     # the flipper marks the flip
            except Exception:  # noqa: BLE001 - a tracker bug must not drop the press
                log.exception("current_player failed")
        return got

    # -- the clock -------------------------------------------------------

    def progress(self, now: int, log_decided: bool = True) -> DeskRace | None:
        """Publish the live race's progress (and hand its new presses to be
        saved); a race the referee decided is weighed by the judge first
        (a card's unannounced race), then logged now, or
        (``log_decided=False``) returned for the caller to log once the
        verdict has gone out."""
        decided, self._decided = self._decided, None
        race = self.race
        held = False
        if decided is not None and race is not None and decided is race.live \
                and self.needs_judge(race):
            held = not self.judge(race, now)
            race = self.race            # a rebuild begins a new race
        if race is not None:
            self._note_virtual(race)
            if len(race.live.edges) != race.persisted:
                self.owner.persist(race, False)
            phase = arming.phase(race.live.verdict is not None, race.announced, race.go_ns, now)
            if self.dirty or phase != race.phase_sent:
                race.phase_sent = phase
                self.owner.publish("race", self.owner.race_view(now))
        elif self.dirty:
            self.owner.publish("race", self.owner.race_view(now))   # a late runner-up, live
        self.dirty = False
        if held or decided is None or race is None or decided is not race.live:
            return None
        if not log_decided:
            return race
        self.owner.race_decided(race, now)
        return None

    def poll(self, now: int) -> DeskRace | None:
        """Settle debounces, find stuck buttons, move a countdown to GO,
        decide, weigh a held verdict again: the race to log now (for the
        caller to log once the verdict is out), else None. Cheap when idle."""
        ref = self.referee
        at = ref.next_deadline()
        race = self.race
        phase_due = race is not None and race.phase_sent == "countdown" and now >= race.go_ns
        judge_due = (race is not None and race.judging and race.recheck_ns is not None
                     and now >= race.recheck_ns)
        if (at is None or now < at) and not phase_due and not judge_due:
            return None
        self.polled_at = now
        ref.poll(now)
        got = self.progress(now, log_decided=False)
        if got is None and judge_due and self.race is race:
            got = self.rejudge(now)
        return got

    def next_deadline(self, retry_ns: int) -> int | None:
        """The earliest time :meth:`poll` has work (a debounce, a stuck
        buzzer, GO, a verdict); one a poll already passed without doing it
        comes back ``retry_ns`` after that poll, never in the past again."""
        times = [self.referee.next_deadline()]
        race = self.race
        if race is not None and race.phase_sent == "countdown":
            times.append(race.go_ns)
        if race is not None and race.judging:
            times.append(race.recheck_ns)
        at = earliest(times)
        if at is not None and self.polled_at is not None and at <= self.polled_at:
            return self.polled_at + retry_ns
        return at

    # -- starting and stopping races ----------------------------------------

    def begin(self, request, armed: arming.Arming, now: int, players, version: int = 0,
              logged_ns: int | None = None, confirmed: bool = False,
              spec: RaceSpec | None = None) -> DeskRace:
        """Run a race armed as ``armed``: the game's ``request`` (its spec from
        the arming), or a bare ``spec``; saved durably now, once."""
        if spec is None:
            spec = arming.race_spec(request, armed, self.settings, players,
                                    self.referee.debounce_ns)
        spec = self.referee.with_handicaps(spec)    # the table's head starts, recorded
        self.drop()
        live = self.referee.start(spec)
        record = {"kind": spec.kind, "announced": armed.announced, "go_ns": armed.go_ns,
                  "spec": spec.to_json()}
        if request is not None:
            record.update(reason=request.reason, request=request.to_json())
        race = DeskRace(request, live, armed, version, record, logged_ns=logged_ns,
                        confirmed=confirmed)
        self.race = race
        for e in armed.burst:
            live.feed(e)
        self._note_virtual(race)
        self.owner.persist(race, True)
        race.phase_sent = arming.phase(live.verdict is not None, armed.announced, armed.go_ns,
                                       now)
        self.owner.publish("race", self.owner.race_view(now))
        return race

    def arm_card(self, request, logged_ns: int, now: int) -> arming.Arming:
        """How the race of a card logged at ``logged_ns`` is armed at ``now``."""
        return arming.arm_unannounced(self.edges, self.owner.race_events(), logged_ns,
                                      self.settings, request.eligible, now, request.kind)

    def take_card(self, request, logged_ns: int, now: int, players, version: int) -> None:
        """A card logged at ``logged_ns`` (armed ``now``) takes the presses that
        are its own; the presses before them no card took become strays."""
        armed = self.arm_card(request, logged_ns, now)
        if request.kind in (attribution.FIRST, attribution.LAST):
            # the claim only proposes: the judge asks, when the presses allow
            # more than one reading, once the race has its verdict; the
            # presses it leaves become strays then (_settle_strays)
            armed = replace(armed, confirm=None, choices=())
            # presses older than any flip this card may have had: strays now
            self._settle_strays(min(logged_ns - self.settings.people.lag_tail_ns,
                                    armed.window.start_ns if armed.burst else logged_ns))
        else:
            self._settle_strays(armed.window.start_ns if armed.burst else logged_ns)
        self.begin(request, armed, now, players, version, logged_ns=logged_ns)

    def _settle_strays(self, cut: int) -> None:
        """The presses since the last card's before ``cut`` that no card
        took become strays."""
        if self.stray_mark is not None and cut <= self.stray_mark:
            return
        for e in arming.strays(self.edges, self.owner.race_events(), self.stray_mark, cut,
                               self.settings):
            self.stray(e, "unclaimed")
        self.stray_mark = cut

    def start_announced(self, request, countdown_ns: int | None, now: int, players,
                        version: int = 0, spec: RaceSpec | None = None) -> DeskRace:
        """An announced race: GO after the countdown; with a box that sounds
        GO itself, no verdict until its stamp (or the cue wait)."""
        if spec is not None:
            armed = arming.Arming(True, spec.arm_ns, spec.deadline_ns or spec.arm_ns)
        else:
            armed = arming.arm_announced(now, self.settings, countdown_ns,
                                         arming.request_wait_ns(request.info))
        race = self.begin(request, armed, now, players, version, spec=spec)
        if self.cue_wait_ns:
            # a press before the box's GO may reach us before the box's stamp
            # of GO does: no verdict until the stamp (or the wait)
            race.awaits_cue = True
            race.live.hold_ns = self.referee.hold_ns + self.cue_wait_ns
        return race

    def drop(self) -> bool:
        """Stop the live race (nothing logged); whether there was one."""
        race, self.race = self.race, None
        if race is not None and self.referee.race is race.live:
            self.referee.race = None
        return race is not None

    def cut(self, at_ns: int) -> None:
        """The open unannounced race takes no press after ``at_ns`` (the next
        card's log): its deadline moves there, so it is decided now."""
        race = self.race
        if race is None or race.announced or race.cut_ns is not None:
            return
        if race.live.verdict is not None:
            if race.judging:            # the judge now knows when the next card came
                race.cut_ns = at_ns
                race.recheck_ns = at_ns
            return
        race.cut_ns = at_ns
        deadline = max(race.armed.arm_ns, at_ns)
        if race.live.spec.deadline_ns is None or deadline < race.live.spec.deadline_ns:
            arming.rearm_live(race.live, race.live.spec.arm_ns, deadline)
            race.armed = replace(race.armed, deadline_ns=deadline)
            race.record = {**race.record, "spec": race.live.spec.to_json()}
            self.dirty = True

    # -- the host's answers ------------------------------------------------

    def confirm(self, accept: bool, t_ns: int | None, now: int) -> bool:
        """The host's answer to the live race's question: accept (with
        ``t_ns``, one of its choices, the press it starts at), or race again
        from now. True when the race has its verdict and is to be logged."""
        race = self.race
        if accept and race.readings:
            reading = race.readings.get(t_ns) if t_ns is not None else \
                max(race.readings.values(), key=lambda r: r.p)
            if reading is None:
                raise ValueError("that press is not one the host was asked about")
            self.rebuild(race, reading, now, confirmed=True)
            return False
        if accept and t_ns is not None and t_ns != race.armed.arm_ns:
            if t_ns not in {c["t_ns"] for c in race.armed.choices}:
                raise ValueError("that press is not one the host was asked about")
            taken = arming.segment(in_order(self.edges), t_ns, race.kind, self.settings)
            self.begin(race.request, arming.Arming(False, t_ns, t_ns + self.settings.wait_ns,
                                                   taken),
                       now, race.live.spec.players, race.version, logged_ns=race.logged_ns,
                       confirmed=True)
            return False
        if accept:
            race.confirmed = True
            return race.live.verdict is not None
        for e in race.armed.burst:
            if e.pressed and e.t_ns < now:
                self.stray(e, "rejected")
        self.begin(race.request, arming.Arming(False, now, now + self.settings.wait_ns), now,
                   race.live.spec.players, race.version, logged_ns=race.logged_ns,
                   confirmed=True)
        return False

    def use_presses(self, request, t_ns: int, now: int, players, version: int) -> None:
        """The host's tap on a stray: the card waiting for an unannounced race
        takes the presses from ``t_ns`` on, as if they had been its own."""
        taken = arming.segment(in_order(self.edges), t_ns, request.kind, self.settings)
        if not any(e.pressed and e.t_ns == t_ns for e in taken):
            raise ValueError("no press was recorded at that time (it may be too old)")
        logged = self.race.logged_ns if self.race is not None else None
        self.begin(request, arming.Arming(False, t_ns, t_ns + self.settings.wait_ns, taken),
                   now, players, version, logged_ns=logged, confirmed=True)
        self.strays = deque((x for x in self.strays if x["t_ns"] < t_ns),
                            maxlen=self.strays.maxlen)

    # -- the race judge ------------------------------------------------------

    def flip_mark(self, race: DeskRace) -> tuple[str, int] | None:
        """With flipper arming, the flipper's press that marked the decided
        ``race``'s card: their latest press from 3 s before its first counted
        press to 150 ms after it (a mark may follow the card's fastest slam),
        for the record (``armed_by``, ``mark_ns``) and the players'
        reaction times; None without one."""
        who = turned_by(race.request) if self.settings.flipper_arms else None
        v = race.live.verdict
        if who is None or v is None or not v.order:
            return None
        first = min(t for _, t in v.order)
        marks = [e.t_ns for e in self.edges if e.player == who and e.pressed
                 and first - 3_000 * MS <= e.t_ns <= first + 150 * MS]
        return (who, max(marks)) if marks else None

    def needs_judge(self, race: DeskRace) -> bool:
        """Whether the judge weighs this decided race before it is logged: a
        card's unannounced race the host has not answered for."""
        if not (race.request is not None and not race.announced and not race.confirmed
                and not race.judged and race.logged_ns is not None
                and race.kind in (attribution.FIRST, attribution.LAST)):
            return False
        # presses all long after the card's log (a table with a long wait_ms):
        # no other card's, as far as the judge can see; the window rules
        v = race.live.verdict
        late = race.logged_ns + attribution.MAX_WAIT_NS
        return v is None or not v.order or min(t for _, t in v.order) <= late

    def judge(self, race: DeskRace, now: int) -> bool:
        """Weigh the decided ``race`` (companion.races.attribution): True when its
        verdict is the one reading the presses allow (log it); else the race
        is rebuilt on that reading, waits for a press or a log that may
        change it, or asks the host."""
        spec = race.live.spec
        card = attribution.Card(spec.kind, tuple(spec.eligible), race.logged_ns,
                                flipper=turned_by(race.request), marks=self.settings.flipper_arms)
        events = self.owner.race_events()
        prior = arming.last_race(events)
        before = attribution.Before.of(prior) if prior is not None else None
        people = self.settings.people
        if race.order_known:        # the host said the next card came after it
            people = replace(people, swap_p=0.0, forgot_p=0.0)
        if race.camera:             # logged at its flip, as the camera saw it
            people = people.seen()
        # weighed as things stood a delivery margin ago: an edge stamped
        # since may still be on its way (a press 0.1 ms before the one seen
        # first, reaching the Pi 1.5 ms later, is the first slam)
        settled = now - self.referee.delivery_margin_ns
        got = attribution.judge(card, self.edges, settled, people, before,
                                race.cut_ns, exclude=arming.taken_before(events, prior),
                                players=tuple(spec.players))
        log.debug("judge %s", attribution.describe(got))
        if got.action == "decided":
            reading = got.best
            self._settle_strays(min(reading.presses.values(), default=race.logged_ns))
            if self._agrees(race, reading):
                race.judging, race.judged = False, True
                self.dirty = True
                return True
            self.rebuild(race, reading, now, confirmed=False)
            return False
        if got.action == "wait":
            if not race.judging:
                self.dirty = True
            race.judging, race.recheck_ns = True, got.recheck_ns
            return False
        self.ask(race, got.readings, now)
        return False

    def order_check(self, logged, swapped, now: int, events: Sequence[dict],
                    players) -> attribution.OrderCheck:
        """Weigh two cards logged one after the other (``logged``, as the log
        has them) against the other order (``swapped``), from the presses
        recorded here (:func:`attribution.order_check`); ``events``: the
        log's effective events before the first of them."""
        prior = arming.last_race(events)
        before = attribution.Before.of(prior) if prior is not None else None
        return attribution.order_check(logged, swapped, self.edges, now, self.settings.people,
                                       before, arming.taken_before(events, prior),
                                       players=tuple(players))

    def rejudge(self, now: int) -> DeskRace | None:
        """Weigh the held race again (its recheck time came, or a press)."""
        race = self.race
        race.recheck_ns = None
        if race.live.verdict is None or not self.needs_judge(race):
            race.judging = False
            return None
        if self.judge(race, now):
            race.judging = False
            self.dirty = True
            return race
        return self.progress(now, log_decided=False)

    def _agrees(self, race: DeskRace, reading: attribution.Reading) -> bool:
        """Whether the live race is the judge's reading: its verdict, and for
        a Mynah the same slaps (each but the last is the Mynah's for good: a
        later card's judge never weighs it again)."""
        v = race.live.verdict
        if v is None or v.tied:
            return False
        if race.kind == attribution.LAST:   # every slap but the last is the Mynah's for good
            return v.loser == reading.player and set(v.order) == set(reading.presses.items())
        # a Table's runner-ups stay open to the next card's judge: the winner's press is enough
        return v.winner == reading.player and (reading.player, reading.t_ns) in set(v.order)

    def rebuild(self, race: DeskRace, reading: attribution.Reading, now: int,
                confirmed: bool) -> None:
        """Run the card's race again on ``reading``: each player's press for
        this card (with its release), nothing after ``now``."""
        ordered = in_order(self.edges)
        burst: list[Edge] = []
        for player, t in reading.presses.items():
            burst.append(Edge(player, True, t))
            up = next((e for e in ordered if e.player == player and not e.pressed
                       and e.t_ns > t), None)
            if up is not None and up.t_ns <= now:
                burst.append(up)
        burst.sort(key=lambda e: (e.t_ns, e.pressed, e.player))
        presses = [e.t_ns for e in burst if e.pressed]
        arm = min(presses) if presses else now
        armed = arming.Arming(False, arm, max(now, arm), tuple(burst))
        cut, logged = race.cut_ns, race.logged_ns
        new = self.begin(race.request, armed, now, race.live.spec.players, race.version,
                         logged_ns=logged, confirmed=confirmed)
        new.cut_ns, new.judged = cut, True

    def ask(self, race: DeskRace, readings, now: int) -> None:
        """Hold the verdict for the host's one tap among ``readings``."""
        choices, by_t = [], {}
        top = max(readings, key=lambda r: r.p, default=None)
        for r in sorted(readings, key=lambda r: (r.t_ns is None, r.t_ns or 0)):
            t = r.t_ns if r.t_ns is not None else now
            while t in by_t:
                t += 1
            by_t[t] = r
            choice = {"t_ns": t, "player": r.player}
            if r is top:
                choice["likely"] = True         # the likeliest: the default
            if r.player is None:
                choice["nobody"] = True         # nobody slammed it: discarded
            if race.kind == attribution.LAST:
                choice["last"] = True
                if r.t_ns is None:
                    choice["never"] = True
            choices.append(choice)
        why = ASK_LAST if race.kind == attribution.LAST else ASK_FIRST
        race.readings = by_t
        race.judging, race.recheck_ns = False, None
        race.armed = replace(race.armed, confirm=why, choices=tuple(choices))
        self.dirty = True

    # -- the buzzer box's GO -------------------------------------------------

    def cue_sounded(self, t_ns: int, at_ns: int | None, now: int) -> int | None:
        """The box sounded its cue at ``t_ns`` (asked for ``at_ns``): the
        live announced race whose GO it is arms there (the same LiveRace).
        Returns the scheduled GO when the stamp came too late (the race was
        decided on it already: a fault for the owner), else None."""
        race = self.race
        if race is None:
            return arming.logged_go(self.owner.race_events(), at_ns)
        armed = arming.arm_at_cue(race.armed, t_ns, at_ns)
        if armed is None:
            return None
        if race.live.verdict is not None or race.live is not self.referee.race:
            return race.go_ns
        race.live.hold_ns = self.referee.hold_ns     # the stamp is here: the usual hold
        deadline = armed.deadline_ns if race.live.spec.deadline_ns is not None else None
        arming.rearm_live(race.live, armed.arm_ns, deadline)
        race.armed = armed
        race.awaits_cue = False
        race.record = {**race.record, "go_ns": armed.go_ns, "spec": race.live.spec.to_json(),
                       "scheduled_go_ns": armed.scheduled_ns}
        self.owner.persist(race, False)     # at GO: no disk wait under the lock
        self.dirty = True
        self.progress(now)
        return None

    # -- what the pages see --------------------------------------------------

    def stray(self, e: Edge, why: str) -> None:
        """A press no race took: shown briefly, kept in the record."""
        if any(x["player"] == e.player and x["t_ns"] == e.t_ns for x in self.strays):
            return
        self.strays.append({"player": e.player, "t_ns": e.t_ns, "why": why})
        self.owner.record_stray(e, why)

    def recent_strays(self, now: int) -> list[dict]:
        horizon = self.settings.claim_window_ns + self.settings.wait_ns
        return [dict(x) for x in self.strays if now - x["t_ns"] <= horizon]

    def waiting(self, now: int) -> list[dict]:
        """The presses a card logged now could still claim (none while a
        race runs), each with its claim window draining."""
        if self.race is not None:
            return []
        events = self.owner.race_events()
        prior = arming.prior_race(events, self.edges, self.settings)
        return arming.claim_windows(self.edges, now, self.settings, prior)

    def _note_virtual(self, race: DeskRace) -> None:
        edges = race.live.edges
        for e in edges[race.seen:]:
            if (e.player, e.t_ns, e.pressed) in self._virtual:
                race.virtual.add(e.player)
        race.seen = len(edges)


__all__ = ["DeskOwner", "DeskRace", "RaceDesk", "in_order", "turned_by"]
