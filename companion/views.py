"""What the pages see: the snapshots and race views, as pure functions.

The session owns the state; this module only turns a game, its replay and
the live race into the JSON the web and the terminal show
(docs/session-api.md): the public snapshot (every phone), the host's
snapshot (the console), a player's private page, the race view in every
phase, and the logged event as the public may see it. Nothing here reads a
clock (``now_ns`` comes in), takes a lock or touches the store, and no
function here knows a game by name: titles, verdict wording and the score
unit come from the game's own description (:class:`companion.games.RaceReason`).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterable

from .arming import go_in_ms, phase, race_close_ns
from .edges import Edge
from .eventlog import jsonable
from .games import Game
from .referee import RaceError, RaceSpec, judge

log = logging.getLogger(__name__)

US = 1_000
MS = 1_000_000

VERDICT_KEYS = ("kind", "winner", "loser", "tied", "order", "false_starts", "ineligible",
                "no_edge")

RACE_VIEW_KEYS = ("reason", "title", "kind", "phase", "announced", "go_ns", "go_in_ms",
                  "deadline_ns", "window_start_ns", "eligible", "order", "verdict", "text",
                  "virtual", "error", "confirm", "choices", "flipper")


def race_view(game: Game | None, reason, kind, phase, *, announced=False, go_ns=None,
              go_in_ms=None, deadline_ns=None, eligible=(), order=(), verdict=None,
              info=None, virtual=False, error=None, window_start_ns=None, confirm=None,
              flipper=None, choices=()) -> dict:
    """A race as the page sees it: every key of :data:`RACE_VIEW_KEYS`,
    always. ``title`` is the game's name for the race and ``text`` the
    verdict in the game's words (null until decided), so the page needs no
    per-game wording. ``window_start_ns`` .. ``deadline_ns`` is the race's
    window (the pages draw it draining); ``confirm`` says why the host must
    accept the claimed presses first (the verdict stays hidden until then)
    and ``choices`` the first presses it may start at (``{"t_ns",
    "player"}``, the default last); ``flipper`` the player whose press armed
    it (flipper arming)."""
    if confirm is not None:
        verdict = None
    title, text = reason, None
    if game is not None and isinstance(reason, str):
        try:
            rr = game.race_reason(reason)
            title = rr.title
            if verdict is not None:
                text = rr.word(verdict, info if isinstance(info, dict) else None)
        except Exception:  # a tracker's wording must never break the page
            log.exception("race wording failed")
    return {"reason": reason, "title": title, "kind": kind, "phase": phase,
            "announced": announced, "go_ns": go_ns, "go_in_ms": go_in_ms,
            "deadline_ns": deadline_ns,
            "window_start_ns": go_ns if window_start_ns is None else window_start_ns,
            "eligible": list(eligible), "order": list(order),
            "verdict": verdict, "text": text, "virtual": virtual, "error": error,
            "confirm": confirm, "choices": [dict(c) for c in choices], "flipper": flipper}


def order_json(order: Iterable[tuple[str, int]], go_ns: int | None = None) -> list[dict]:
    """A race's order ``[(player, t_ns)]`` for the page: offsets from the
    first counted edge (µs, float like the verdict's) and, when ``go_ns`` is
    given (announced races), the reaction from GO (whole µs)."""
    order = list(order)
    t0 = order[0][1] if order else 0
    out = []
    for p, t in order:
        item = {"player": p, "t_ns": t, "offset_us": (t - t0) / US}
        if go_ns is not None:
            item["reaction_us"] = (t - go_ns) // US
        out.append(item)
    return out


def live_race_view(game: Game, request, live, *, announced: bool, go_ns: int, now_ns: int,
                   virtual: bool = False, error: str | None = None,
                   window_start_ns: int | None = None, confirm: str | None = None,
                   flipper: str | None = None, choices=()) -> dict:
    """The race that is running (countdown, live, or decided and not yet
    logged): ``live`` is the referee's :class:`~companion.referee.LiveRace`."""
    v = live.verdict
    order = v.order if v is not None else live.order()
    return race_view(game, request.reason, live.spec.kind,
                     phase(v is not None, announced, go_ns, now_ns), announced=announced,
                     go_ns=go_ns, go_in_ms=go_in_ms(go_ns, now_ns),
                     deadline_ns=live.spec.deadline_ns, eligible=live.spec.eligible,
                     order=order_json(order, go_ns if announced else None),
                     verdict=None if v is None else v.to_json(), info=request.info,
                     virtual=virtual, error=error, window_start_ns=window_start_ns,
                     confirm=confirm, flipper=flipper, choices=choices)


def interrupted_race_view(game: Game, body: dict) -> dict:
    """The race that was running when the table lost power (the saved
    live-race row), with the presses recorded before the cut; never decided."""
    try:
        spec = RaceSpec.from_json(body["spec"])
        edges = [Edge.from_json(e) for e in body["edges"]]
        order = judge(spec, edges).order
    except (RaceError, ValueError, KeyError, TypeError):
        spec, order = None, []
    request = body.get("request") if isinstance(body.get("request"), dict) else {}
    return race_view(game, body.get("reason"), body.get("kind"), "interrupted",
                     announced=bool(body.get("announced", False)), go_ns=body.get("go_ns"),
                     go_in_ms=0, deadline_ns=spec.deadline_ns if spec else None,
                     eligible=spec.eligible if spec else (), order=order_json(order),
                     info=request.get("info"), virtual=bool(body.get("virtual")))


def pending_race_view(game: Game, request) -> dict:
    """A race the game waits for that is not running (before Start, after an
    undo or a restart)."""
    return race_view(game, request.reason, request.kind, "pending",
                     announced=request.announced, eligible=request.eligible,
                     info=request.info)


def runner_ups(event: dict, edges: Iterable[Edge], close_ns: int | None) -> list[dict]:
    """Presses that came in a decided race's window after its verdict (a
    runner-up 40 ms behind the winner, when the decision hold was 30 ms):
    eligible players' first presses after the last counted one, up to the
    race's close (``close_ns``), never after the deadline. They decided
    nothing; the race card shows them with their margins."""
    spec = event.get("spec") if isinstance(event.get("spec"), dict) else {}
    order = [o for o in event.get("order") or () if isinstance(o, dict)
             and isinstance(o.get("t_ns"), int)]
    if not order:
        return []
    eligible = set(spec.get("eligible") or ())
    deadline = spec.get("deadline_ns")
    recorded = {(e.get("player"), e.get("t_ns")) for e in event.get("edges") or ()
                if isinstance(e, dict)}
    seen = {o.get("player") for o in order}
    seen.update(event.get("false_starts") or ())
    t0, last = order[0]["t_ns"], max(o["t_ns"] for o in order)
    out = []
    for e in sorted(edges, key=lambda e: (e.t_ns, e.pressed, e.player)):
        if not e.pressed or e.t_ns <= last or (e.player, e.t_ns) in recorded:
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


def decided_race_view(game: Game, event: dict, info: dict | None = None,
                      edges: Iterable[Edge] = (), close_ns: int | None = None) -> dict:
    """The last logged race (shown until the next event); ``info`` is the
    race request's info at the time, for the verdict's wording. Presses of
    its window that came after the verdict (``edges``, the recent ones)
    join its order as runner-ups, so one card shows the whole race."""
    spec = event.get("spec") if isinstance(event.get("spec"), dict) else {}
    order = event.get("order") if isinstance(event.get("order"), list) else []
    verdict = {k: event.get(k) for k in VERDICT_KEYS if k in event}
    extra = runner_ups(event, edges, close_ns)
    if extra:
        verdict["order"] = list(order) + extra
    return race_view(game, event.get("reason"), event.get("kind", spec.get("kind")), "decided",
                     announced=bool(event.get("announced")), go_ns=spec.get("arm_ns"),
                     deadline_ns=spec.get("deadline_ns"), eligible=spec.get("eligible") or (),
                     order=list(order) + extra, verdict=verdict,
                     info=info, virtual=bool(event.get("virtual")),
                     flipper=event.get("armed_by"))


def table_race_view(game, replay, race, interrupted: dict | None, request, edges,
                    settings, now: int) -> dict | None:
    """The race a table shows now: the live race (``race``, a
    :class:`~companion.desk.DeskRace`), else the one interrupted by a
    restart, else the race the game waits for (``request()``, asked only
    then: the live race's view is on the verdict's path), else the last
    logged race with its late runner-ups from the recent ``edges``."""
    if race is not None:
        return live_race_view(game, race.request, race.live, announced=race.announced,
                              go_ns=race.go_ns, now_ns=now, virtual=bool(race.virtual),
                              error=race.error, window_start_ns=race.armed.window.start_ns,
                              confirm=race.confirm, flipper=race.armed.flipper,
                              choices=race.armed.choices if race.confirm else ())
    if interrupted is not None:
        return interrupted_race_view(game, interrupted)
    if replay is None:
        return None
    pending = request()
    if pending is not None:
        return pending_race_view(game, pending)
    if replay.events and replay.events[-1].get("type") == "race":
        info = None
        try:   # the request the race answered, for the verdict's wording
            before = game.race_request(replay.states[-2]) if len(replay.states) > 1 else None
            info = before.info if before is not None else None
        except Exception:  # noqa: BLE001 - wording only
            info = None
        last = replay.events[-1]
        return decided_race_view(game, last, info, edges=edges,
                                 close_ns=race_close_ns(last, settings))
    return None


def race_event(race, settings) -> dict:
    """The ``race`` event a decided :class:`~companion.desk.DeskRace` is
    logged as: its spec, edges and verdict, how it was armed, and when it
    stopped taking presses (``close_ns``)."""
    event = {"type": "race", "reason": race.request.reason, **race.live.record(),
             "announced": race.announced, "virtual": bool(race.virtual)}
    if race.armed.flipper is not None:
        event["armed_by"] = race.armed.flipper
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


def desk_extras(desk, now: int, settings) -> dict:
    """The snapshot's strays, the presses still waiting for a card, and the
    windows' settings."""
    return {"strays": desk.recent_strays(now) if desk else [],
            "waiting": desk.waiting(now) if desk else [],
            "windows_ms": {"before": settings.claim_window_ns // MS,
                           "after": settings.wait_ns // MS,
                           "runner_up": settings.runner_up_ns // MS}}


# ---------------------------------------------------------------------------
# events and lines


def public_event(game: Game | None, event: dict | None) -> dict | None:
    """The logged event as every phone may see it (no secret cards)."""
    if event is None or game is None or event.get("type") in ("undo", "redo"):
        return event
    try:
        return game.public_event(event)
    except Exception:  # a tracker bug must not leak or crash: show nothing
        log.exception("public_event failed")
        return {"type": event.get("type")}


def line(game: Game | None, event: dict) -> str:
    """A short human line for a logged event, in the game's words."""
    kind = event.get("type")
    if kind in ("undo", "redo"):
        return kind
    if kind == "race" and game is not None:
        try:    # the game's own wording: "Chope! Cy chopes it!"
            rr = game.race_reason(event.get("reason"))
            said = rr.word({k: event.get(k) for k in VERDICT_KEYS if k in event}, None)
            if said:
                return said if rr.title.lower() in said.lower() else f"{rr.title} {said}"
        except Exception:  # noqa: BLE001 - fall back on the plain line
            pass
        who = event.get("winner") or event.get("loser")
        what = "won by" if event.get("winner") else "lost by" if event.get("loser") else ""
        if who:
            return f"race ({event.get('reason')}) {what} {who}"
        if event.get("tied"):
            return f"race ({event.get('reason')}) tied: {', '.join(event['tied'])}"
        return f"race ({event.get('reason')}): nobody"
    try:
        return game.describe(event) if game else str(event)
    except Exception:  # a tracker's describe must never break the log
        return json.dumps(event)[:200]


def public_line(game: Game | None, event: dict) -> str:
    """The line of :func:`public_event`: what a public page may read."""
    return line(game, public_event(game, event) or {})


# ---------------------------------------------------------------------------
# snapshots


def current_faults(faults: Iterable[dict]) -> list[dict]:
    """The faults worth an alert: one line per buzzer (its latest), and none
    for a buzzer whose latest news is that it was released (``cleared``);
    faults naming no buzzer are kept (the last five)."""
    faults = [f for f in faults if isinstance(f, dict) and f.get("fault") != "stray"]
    latest: dict = {}
    loose = []
    for i, f in enumerate(faults):
        key = f.get("buzzer") or f.get("player")
        if key is None:
            loose.append(i)
        else:
            latest[key] = i
    keep = {i for i in latest.values() if faults[i].get("fault") != "cleared"}
    keep.update(loose[-5:])
    return [f for i, f in enumerate(faults) if i in keep]


def result(game: Game, state: Any) -> dict | None:
    """The end of a game, for every page: ``places`` (``{"place", "players",
    "scores", "shared"}``, best first; a shared place lists several players)
    and ``tiebreak`` (the players whose scores are equal but whose places
    differ: the game's ranking broke the tie). Null while the game runs. The
    breakdown of each score is the game's own (its view's players); the
    game's panel draws it."""
    if not game.finished(state):
        return None
    scores = game.scores(state)
    places, n = [], 1
    for group in game.ranking(state):
        group = list(group)
        places.append({"place": n, "players": group, "shared": len(group) > 1,
                       "scores": {p: scores.get(p) for p in group}})
        n += len(group)
    broken = []
    for a, b in zip(places, places[1:]):
        sa = {a["scores"][p] for p in a["players"]}
        sb = {b["scores"][p] for p in b["players"]}
        if sa & sb:
            broken.append({"places": [a["place"], b["place"]],
                           "players": a["players"] + b["players"], "score": min(sa & sb)})
    return {"places": places, "tiebreak": broken}


def buzzers_view(status) -> dict | None:
    """The latest status the buzzer source reported (null when never):
    ``{"source","connected","precision_us","error_bound_us","detail"}``."""
    if status is None:
        return None

    def us(ns):
        return None if ns is None else round(ns / US, 3)
    return {"source": getattr(status, "source", None),
            "connected": bool(getattr(status, "connected", False)),
            "precision_us": us(getattr(status, "precision_ns", None)),
            "error_bound_us": us(getattr(status, "error_bound_ns", None)),
            "detail": getattr(status, "detail", None)}


def empty_snapshot(faults: Iterable[dict] = (), buzzers: dict | None = None) -> dict:
    """The snapshot with no game at the table: every key, ``game`` null."""
    return {"game": None, "title": None, "game_title": None, "score_unit": None,
            "game_id": None, "version": 0, "players": [], "scores": {},
            "hides_scores": False, "current_player": None, "finished": False, "ranking": [],
            "view": None, "race": None, "faults": list(faults), "last_event": None,
            "can_undo": False, "can_redo": False, "buzzers": buzzers, "result": None,
            "strays": [], "waiting": []}


def snapshot(game: Game, replay, *, game_id: int, version: int, players: list[dict],
             race: dict | None, faults: Iterable[dict], last_event: dict | None,
             buzzers: dict | None = None) -> dict:
    """The public view (GET /api/state): scores, turn, the tracker's public
    view, the race, recent faults, the last event's public line."""
    st = replay.state
    return {"game": game.name, "title": game.title, "game_title": game.title,
            "score_unit": game.score_unit, "game_id": game_id, "version": version,
            "players": [dict(p) for p in players], "scores": game.scores(st),
            "hides_scores": game.hides_scores, "current_player": game.current_player(st),
            "finished": game.finished(st), "ranking": game.ranking(st),
            "view": game.public_view(st), "race": race, "faults": current_faults(faults),
            "last_event": None if last_event is None else public_line(game, last_event),
            "can_undo": bool(replay.events), "can_redo": bool(replay.undone),
            "buzzers": buzzers, "result": result(game, st)}


def host_extras(game: Game | None, replay, *, request, log_rows: list[tuple[int, dict]],
                settings: dict, windows: list[dict] | None = None) -> dict:
    """What the host console adds to the snapshot: the legal events, what
    undo and redo would change, the pending race request, the tracker's host
    view, the recent log, the settings and the bursts a card could claim.
    Log lines are the public ones: the host is usually a player too, and
    the tracker's host view is where a game shows what the host must see."""
    if game is None or replay is None:
        return {"legal_events": [], "undo": None, "redo": None, "race_request": None,
                "host_view": None, "log": [], "settings": dict(settings), "windows": []}
    st = replay.state
    return {
        "legal_events": [] if game.finished(st) else host_events(game, st),
        "undo": public_line(game, replay.events[-1]) if replay.events else None,
        "redo": public_line(game, replay.undone[-1][0]) if replay.undone else None,
        "race_request": None if request is None else request.to_json(),
        "host_view": game.host_view(st),
        "log": log_lines(game, log_rows)[-50:],
        "settings": dict(settings),
        "windows": list(windows or []),
    }


def host_events(game: Game, state) -> list[dict]:
    """The events the host console offers (:meth:`Game.host_events`: the
    legal events, or as far as public information allows in a game with
    hidden hands). The console must never show a hand just by listing what
    could be cooked from it."""
    return game.host_events(state)


def log_lines(game: Game, log_rows: list[tuple[int, dict]]) -> list[dict]:
    """The log as the console lists it: each event's public line, and for an
    undo or a redo the line of the event it took away or put back ("undo:
    flip Red Table"), so the host sees what an undo undid."""
    done: list[dict] = []
    undone: list[dict] = []
    out = []
    for i, e in log_rows:
        kind = e.get("type")
        text = None
        if kind == "undo" and done:
            undone.append(done.pop())
            text = f"undo: {public_line(game, undone[-1])}"
        elif kind == "redo" and undone:
            done.append(undone.pop())
            text = f"redo: {public_line(game, done[-1])}"
        elif kind not in ("undo", "redo"):
            done.append(e)
            undone.clear()
        out.append({"id": i, "type": kind, "line": text or public_line(game, e)})
    return out


def private_snapshot(game: Game, state: Any, player: str, version: int) -> dict:
    """What ``player``'s private page shows: their private view and the
    events they may log themselves."""
    return {"player": player, "view": game.private_view(state, player),
            "events": [] if game.finished(state) else game.private_events(state, player),
            "version": version}


__all__ = ["RACE_VIEW_KEYS", "VERDICT_KEYS", "buzzers_view", "current_faults",
           "decided_race_view", "log_lines", "result", "runner_ups",
           "empty_snapshot", "host_extras", "interrupted_race_view", "line",
           "live_race_view", "order_json", "pending_race_view", "private_snapshot",
           "public_event", "public_line", "race_view", "snapshot"]
