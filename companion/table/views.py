"""What the pages see: the snapshots and race views, as pure functions.

The session owns the state; this module only turns a game, its replay and
the race code's frozen shot of the race (:mod:`companion.table.raceshots`) into
the JSON the web and the terminal show
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
from typing import Any, Callable, Iterable

from ..games import Game
from ..races.arming import go_in_ms, phase
from .raceshots import DecidedShot, InterruptedShot, LiveShot, PendingShot

log = logging.getLogger(__name__)

US = 1_000
MS = 1_000_000

VERDICT_KEYS = ("kind", "winner", "loser", "tied", "order", "false_starts", "ineligible",
                "no_edge", "handicap_ns")

RACE_VIEW_KEYS = ("reason", "title", "kind", "phase", "announced", "go_ns", "go_in_ms",
                  "deadline_ns", "window_start_ns", "eligible", "order", "verdict", "text",
                  "virtual", "error", "confirm", "choices", "flipper", "judging", "logged_ns",
                  "card")


def race_view(game: Game | None, reason, kind, phase, *, announced=False, go_ns=None,
              go_in_ms=None, deadline_ns=None, eligible=(), order=(), verdict=None,
              info=None, virtual=False, error=None, window_start_ns=None, confirm=None,
              flipper=None, choices=(), judging=False, logged_ns=None, card=None) -> dict:
    """A race as the page sees it: every key of :data:`RACE_VIEW_KEYS`,
    always. ``title`` is the game's name for the race and ``text`` the
    verdict in the game's words (null until decided), so the page needs no
    per-game wording. ``window_start_ns`` .. ``deadline_ns`` is the race's
    window (the pages draw it draining); ``confirm`` says why the host must
    accept the claimed presses first (the verdict stays hidden until then)
    and ``choices`` the first presses it may start at (``{"t_ns",
    "player"}``, the default last); ``flipper`` the player whose press armed
    it (flipper arming); ``judging`` that the race judge holds the verdict
    (hidden until it is sure, or asks), ``logged_ns`` when the host logged
    the card and ``card`` its id (the question names it)."""
    if confirm is not None or judging:
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
            "confirm": confirm, "choices": [dict(c) for c in choices], "flipper": flipper,
            "judging": bool(judging), "logged_ns": logged_ns, "card": card}


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


def live_race_view(game: Game, shot: LiveShot, now_ns: int) -> dict:
    """The race that is running (countdown, live, or decided and not yet
    logged), from its frozen :class:`~companion.table.raceshots.LiveShot`."""
    return race_view(game, shot.reason, shot.kind,
                     phase(shot.verdict is not None and not shot.judging, shot.announced,
                           shot.go_ns, now_ns),
                     announced=shot.announced, go_ns=shot.go_ns,
                     go_in_ms=go_in_ms(shot.go_ns, now_ns), deadline_ns=shot.deadline_ns,
                     eligible=shot.eligible,
                     order=order_json(shot.order, shot.go_ns if shot.announced else None),
                     verdict=shot.verdict, info=shot.info, virtual=shot.virtual,
                     error=shot.error, window_start_ns=shot.window_start_ns,
                     confirm=shot.confirm, choices=shot.choices,
                     judging=shot.judging, logged_ns=shot.logged_ns, card=shot.card)


def interrupted_race_view(game: Game, shot: InterruptedShot) -> dict:
    """The race that was running when the table lost power, with the presses
    recorded before the cut (judged once, at resume); never decided."""
    return race_view(game, shot.reason, shot.kind, "interrupted", announced=shot.announced,
                     go_ns=shot.go_ns, go_in_ms=0, deadline_ns=shot.deadline_ns,
                     eligible=shot.eligible, order=order_json(shot.order), info=shot.info,
                     virtual=shot.virtual)


def pending_race_view(game: Game, shot: PendingShot) -> dict:
    """A race the game waits for that is not running (before Start, after an
    undo or a restart)."""
    return race_view(game, shot.reason, shot.kind, "pending", announced=shot.announced,
                     eligible=shot.eligible, info=shot.info)


def decided_race_view(game: Game, shot: DecidedShot) -> dict:
    """The last logged race (shown until the next event); its runners-up
    (the race code found them) join its order, so one card shows the whole
    race."""
    event = shot.event
    spec = event.get("spec") if isinstance(event.get("spec"), dict) else {}
    order = event.get("order") if isinstance(event.get("order"), list) else []
    verdict = {k: event.get(k) for k in VERDICT_KEYS if k in event}
    extra = [dict(r) for r in shot.runner_ups]
    if extra:
        verdict["order"] = list(order) + extra
    return race_view(game, event.get("reason"), event.get("kind", spec.get("kind")), "decided",
                     announced=bool(event.get("announced")), go_ns=spec.get("arm_ns"),
                     deadline_ns=spec.get("deadline_ns"), eligible=spec.get("eligible") or (),
                     order=list(order) + extra, verdict=verdict,
                     info=shot.info, virtual=bool(event.get("virtual")),
                     flipper=event.get("armed_by"))


def race_shot_view(game: Game | None, shot, now_ns: int) -> dict | None:
    """The race view of a frozen shot of the race (None: no race to show)."""
    if isinstance(shot, LiveShot):
        return live_race_view(game, shot, now_ns)
    if isinstance(shot, InterruptedShot):
        return interrupted_race_view(game, shot)
    if isinstance(shot, PendingShot):
        return pending_race_view(game, shot)
    if isinstance(shot, DecidedShot):
        return decided_race_view(game, shot)
    return None


def desk_extras(strays: list[dict], waiting: list[dict], settings) -> dict:
    """The snapshot's strays, the presses still waiting for a card (both as
    the desk found them), and the windows' settings."""
    return {"strays": list(strays), "waiting": list(waiting),
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
            # the event's own fields fill the wording's ({stake}: Food Poisoning)
            info = {k: v for k, v in event.items()
                    if k not in VERDICT_KEYS and isinstance(v, (str, int, float))}
            verdict = {k: event.get(k) for k in VERDICT_KEYS if k in event}
            said = rr.word(verdict, info)
            if said:   # and what the penalties cost: "...; Bad Chomp: cy puts ..."
                said = "; ".join([said, *rr.penalties(verdict)])
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
    ``{"source","connected","precision_us","error_bound_us","detail","away"}``
    (``away``: lent out for an update, not lost)."""
    if status is None:
        return None

    def us(ns):
        return None if ns is None else round(ns / US, 3)
    return {"source": getattr(status, "source", None),
            "connected": bool(getattr(status, "connected", False)),
            "precision_us": us(getattr(status, "precision_ns", None)),
            "error_bound_us": us(getattr(status, "error_bound_ns", None)),
            "detail": getattr(status, "detail", None),
            "away": bool(getattr(status, "away", False))}


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
                settings: dict, windows: list[dict] | None = None,
                word: Callable[[int, dict], str] | None = None) -> dict:
    """What the host console adds to the snapshot: the legal events, what
    undo and redo would change, the pending race request, the tracker's host
    view, the recent log, the settings and the bursts a card could claim.
    Log lines are the public ones: the host is usually a player too, and
    the tracker's host view is where a game shows what the host must see
    (``word``: see :func:`log_lines`)."""
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
        "log": log_lines(game, log_rows, last=50, word=word),
        "settings": dict(settings),
        "windows": list(windows or []),
    }


def host_events(game: Game, state) -> list[dict]:
    """The events the host console offers (:meth:`Game.host_events`: the
    legal events, or as far as public information allows in a game with
    hidden hands). The console must never show a hand just by listing what
    could be cooked from it."""
    return game.host_events(state)


def log_lines(game: Game, log_rows: list[tuple[int, dict]], last: int | None = None,
              word: Callable[[int, dict], str] | None = None) -> list[dict]:
    """The log as the console lists it: each event's public line, and for an
    undo or a redo the line of the event it took away or put back ("undo:
    flip Red Table"), so the host sees what an undo undid. ``last``: only
    the last rows (the undo and redo stacks still follow the whole log, but
    only those rows are worded: a long game's log is not worded again on
    every change). ``word(id, event)``: an event's public line (default
    :func:`public_line`; the game's log keeps each one it worded).

    >>> rows = [(1, {"type": "note", "text": "a"}), (2, {"type": "undo"})]
    >>> [r["line"] for r in log_lines(None, rows)]
    ["{'type': 'note', 'text': 'a'}", "undo: {'type': 'note', 'text': 'a'}"]
    """
    if word is None:
        def word(_: int, e: dict) -> str:
            return public_line(game, e)
    done: list[tuple[int, dict]] = []
    undone: list[tuple[int, dict]] = []
    said = []                   # (id, kind, prefix, (id, event) of the event it words)
    for i, e in log_rows:
        kind = e.get("type")
        if kind == "undo" and done:
            undone.append(done.pop())
            said.append((i, kind, "undo: ", undone[-1]))
        elif kind == "redo" and undone:
            done.append(undone.pop())
            said.append((i, kind, "redo: ", done[-1]))
        else:
            if kind not in ("undo", "redo"):
                done.append((i, e))
                undone.clear()
            said.append((i, kind, "", (i, e)))
    if last is not None:
        said = said[-last:] if last > 0 else []
    return [{"id": i, "type": kind, "line": prefix + word(*worded)}
            for i, kind, prefix, worded in said]


def private_snapshot(game: Game, state: Any, player: str, version: int) -> dict:
    """What ``player``'s private page shows: their private view and the
    events they may log themselves."""
    return {"player": player, "view": game.private_view(state, player),
            "events": [] if game.finished(state) else game.private_events(state, player),
            "version": version}


__all__ = ["RACE_VIEW_KEYS", "VERDICT_KEYS", "buzzers_view", "current_faults",
           "decided_race_view", "log_lines", "result", "race_shot_view",
           "empty_snapshot", "host_extras", "interrupted_race_view", "line",
           "live_race_view", "order_json", "pending_race_view", "private_snapshot",
           "public_event", "public_line", "race_view", "snapshot"]
