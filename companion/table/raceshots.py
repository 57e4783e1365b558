"""The race as the table shows it, frozen: what the race code hands the views.

The race code (:mod:`companion.table.tableraces`) decides what a race *is*: the
``race`` event a decided race is logged as (:func:`race_event`), the
runners-up a logged race gathers after its verdict (:func:`runner_ups`),
the order of a race interrupted by a restart (judged once, when the table
resumes: :func:`interrupted_shot`). It hands :mod:`companion.table.views` one
frozen shot of the race (:class:`LiveShot`, :class:`InterruptedShot`,
:class:`PendingShot`, :class:`DecidedShot`); the views only format it for
the pages (``views.race_shot_view``). Pure: no clock, no store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..races.arming import race_close_ns
from ..races.edges import Edge
from ..races.referee import RaceError, RaceSpec, judge
from ..record.eventlog import jsonable

US = 1_000


@dataclass(frozen=True)
class LiveShot:
    """The race that is running (countdown, live, or decided and not yet
    logged). ``order`` is ``(player, t_ns)``, the verdict's once there is one."""

    reason: Any
    kind: str
    announced: bool
    go_ns: int
    deadline_ns: int | None
    eligible: tuple[str, ...]
    order: tuple[tuple[str, int], ...]
    verdict: dict | None = None
    info: dict | None = None
    virtual: bool = False
    error: str | None = None
    window_start_ns: int | None = None
    confirm: str | None = None
    choices: tuple[dict, ...] = ()
    #: the race judge holds the verdict (a press or a log may still change it)
    judging: bool = False
    logged_ns: int | None = None    # when the host logged the card
    card: str | None = None         # the card's id, for the question


@dataclass(frozen=True)
class InterruptedShot:
    """The race that was running when the table lost power (the saved live
    race), with the presses recorded before the cut, judged once."""

    reason: Any
    kind: Any
    announced: bool
    go_ns: int | None
    deadline_ns: int | None
    eligible: tuple[str, ...]
    order: tuple[tuple[str, int], ...]
    info: dict | None = None
    virtual: bool = False


@dataclass(frozen=True)
class PendingShot:
    """A race the game waits for that is not running."""

    reason: Any
    kind: str
    announced: bool
    eligible: tuple[str, ...]
    info: dict | None = None


@dataclass(frozen=True)
class DecidedShot:
    """The last logged race (shown until the next event) with the presses
    of its window that came after the verdict (``runner_ups``); ``info`` is
    the request it answered, for the verdict's wording."""

    event: dict
    info: dict | None = None
    runner_ups: tuple[dict, ...] = ()


RaceShot = LiveShot | InterruptedShot | PendingShot | DecidedShot


def live_shot(race) -> LiveShot:
    """The live :class:`~companion.races.desk.DeskRace` now."""
    live = race.live
    v = live.verdict
    return LiveShot(race.request.reason, live.spec.kind, race.announced, race.go_ns,
                    live.spec.deadline_ns, tuple(live.spec.eligible),
                    tuple(v.order if v is not None else live.order()),
                    verdict=None if v is None else v.to_json(), info=race.request.info,
                    virtual=bool(race.virtual), error=race.error,
                    window_start_ns=race.armed.window.start_ns, confirm=race.confirm,
                    choices=tuple(dict(c) for c in race.armed.choices) if race.confirm else (),
                    judging=race.judging, logged_ns=race.logged_ns,
                    card=(race.request.info or {}).get("card")
                    if isinstance(race.request.info, dict) else None)


def interrupted_shot(body: dict) -> InterruptedShot:
    """The saved live race ``body`` (the store's row), judged once."""
    try:
        spec = RaceSpec.from_json(body["spec"])
        edges = [Edge.from_json(e) for e in body["edges"]]
        order = tuple(judge(spec, edges).order)
    except (RaceError, ValueError, KeyError, TypeError):
        spec, order = None, ()
    request = body.get("request") if isinstance(body.get("request"), dict) else {}
    info = request.get("info")
    return InterruptedShot(body.get("reason"), body.get("kind"),
                           bool(body.get("announced", False)), body.get("go_ns"),
                           spec.deadline_ns if spec else None,
                           tuple(spec.eligible) if spec else (), order,
                           info=info if isinstance(info, dict) else None,
                           virtual=bool(body.get("virtual")))


def pending_shot(request) -> PendingShot:
    return PendingShot(request.reason, request.kind, request.announced,
                       tuple(request.eligible), request.info)


def decided_shot(event: dict, info: dict | None, edges: Iterable[Edge],
                 settings) -> DecidedShot:
    """The logged race ``event`` with its runners-up among the recent ``edges``."""
    extra = runner_ups(event, edges, race_close_ns(event, settings))
    return DecidedShot(event, info, tuple(extra))


def runner_ups(event: dict, edges: Iterable[Edge], close_ns: int | None) -> list[dict]:
    """Presses that came in a decided race's window after its verdict (a
    runner-up 40 ms behind the winner, when the decision hold was 30 ms):
    eligible players' first presses after the last counted one, up to the
    race's close (``close_ns``), never after the deadline; in a first-release
    race (first to let go loses), their first releases. They decided
    nothing; the race card shows them with their margins.

    A press the race recorded but left out of its verdict is one too: the
    verdict is taken on the stamps (``LiveRace.poll``), so a press stamped
    after the decision time that reached a busy table before the poll that
    decided is kept in the race's edges, counted by nobody."""
    spec = event.get("spec") if isinstance(event.get("spec"), dict) else {}
    order = [o for o in event.get("order") or () if isinstance(o, dict)
             and isinstance(o.get("t_ns"), int)]
    if not order:
        return []
    counts = spec.get("kind", event.get("kind")) != "first-release"     # a press, or a let-go
    eligible = set(spec.get("eligible") or ())
    deadline = spec.get("deadline_ns")
    seen = {o.get("player") for o in order}
    seen.update(event.get("false_starts") or ())
    t0, last = order[0]["t_ns"], max(o["t_ns"] for o in order)
    out = []
    for e in sorted(edges, key=lambda e: (e.t_ns, e.pressed, e.player)):
        if e.pressed != counts or e.t_ns <= last:
            continue
        if (isinstance(deadline, int) and e.t_ns > deadline) or close_ns is None \
                or e.t_ns > close_ns:
            break
        if e.player in seen or (eligible and e.player not in eligible):
            continue
        seen.add(e.player)
        last = e.t_ns
        out.append({"player": e.player, "t_ns": e.t_ns, "offset_us": (e.t_ns - t0) / US,
                    "after_verdict": True})
    return out


def race_event(race, settings) -> dict:
    """The ``race`` event a decided :class:`~companion.races.desk.DeskRace` is
    logged as: its spec, edges and verdict, how it was armed, and when it
    stopped taking presses (``close_ns``)."""
    event = {"type": "race", "reason": race.request.reason, **race.live.record(),
             "announced": race.announced, "virtual": bool(race.virtual)}
    if race.armed.scheduled_ns is not None:     # armed at the box's own GO
        event["scheduled_go_ns"] = race.armed.scheduled_ns
    if race.virtual:
        event["virtual_players"] = sorted(race.virtual)
    if race.confirmed:
        event["asked"] = True       # the host chose which presses were this card's
    close = race_close_ns(event, settings)
    if close is not None:
        event["close_ns"] = close if race.cut_ns is None else min(close, race.cut_ns)
    return jsonable(event)


__all__ = ["DecidedShot", "InterruptedShot", "LiveShot", "PendingShot", "RaceShot",
           "decided_shot", "interrupted_shot", "live_shot", "pending_shot", "race_event",
           "runner_ups"]
