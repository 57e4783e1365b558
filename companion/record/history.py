"""History, statistics and export: pure functions of the store's games.

Everything here reads games the :class:`~companion.record.store.Store` already
holds (or stores an imported one); nothing depends on the running session,
so the web's history pages, ``companion`` commands and tests call these
directly. Only *effective* events count: an undone event never adds a win,
a race or a reaction time (:func:`effective_events`).

>>> from companion.record.store import Store
>>> player_stats(Store(":memory:"))
{'games': 0, 'finished': 0, 'players': {}}
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from typing import Iterable

from ..games import RulesError
from ..races.referee import FIRST_PRESS, LAST_PRESS
from .eventlog import effective_events, jsonable  # noqa: F401  (re-exported for session.py)
from .gamefile import header, parse_header, replay_lines
from .store import Store

US = 1_000

PALETTE = ["#e53935", "#1e88e5", "#43a047", "#fdd835", "#8e24aa", "#fb8c00", "#00acc1",
           "#6d4c41"]


def normalise_players(players: list) -> list[dict]:
    """Player dicts ``{"name","colour","buzzer"}`` from names or partial dicts;
    a player given a head start keeps it as ``handicap_ms`` (0 to 2000; 0 is
    none and is left out)."""
    if not isinstance(players, (list, tuple)):
        raise RulesError("players must be a list", "setup")
    out = []
    for i, p in enumerate(players):
        if isinstance(p, str):
            p = {"name": p}
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"].strip():
            raise RulesError(f"player {i + 1} needs a name", "setup")
        unknown = set(p) - {"name", "colour", "buzzer", "handicap_ms"}
        if unknown:
            raise RulesError(f"unknown player field(s) {sorted(unknown)}", "setup")
        colour = p.get("colour") or PALETTE[i % len(PALETTE)]
        buzzer = p.get("buzzer")
        if not isinstance(colour, str) or (buzzer is not None and not isinstance(buzzer, str)):
            raise RulesError(f"player {p['name']!r}: colour and buzzer must be strings", "setup")
        out.append({"name": p["name"], "colour": colour, "buzzer": buzzer or None})
        handicap = p.get("handicap_ms") or 0
        if isinstance(handicap, bool) or not isinstance(handicap, int) \
                or not 0 <= handicap <= 2000:
            raise RulesError(f"player {p['name']!r}: a handicap is a whole number of ms "
                             f"from 0 to 2000", "setup")
        if handicap:
            out[-1]["handicap_ms"] = handicap
    buzzers = [p["buzzer"] for p in out if p["buzzer"]]
    if len(set(buzzers)) != len(buzzers):
        raise RulesError("two players have the same buzzer", "setup")
    return out


# ---------------------------------------------------------------------------
# races, counted once


def race_tally(events: Iterable[dict]) -> dict[str, dict]:
    """Per player, over the effective ``race`` events of one game's log:
    ``{"races": n, "races_won": n, "races_lost": n, "reactions": [µs, ...]}``.

    ``races`` counts the races a player was eligible in; ``races_won`` /
    ``races_lost`` the verdict's winner / loser; ``reactions`` the time from
    GO to their counted press in announced press races (whole µs; a false
    start counts no reaction, as the referee counts no press for it)."""
    per: dict[str, dict] = {}

    def p(name: str) -> dict:
        if name not in per:
            per[name] = {"races": 0, "races_won": 0, "races_lost": 0, "reactions": []}
        return per[name]

    for race in effective_events(events):
        if race.get("type") != "race":
            continue
        spec = race.get("spec") if isinstance(race.get("spec"), dict) else {}
        for n in spec.get("eligible") or []:
            if isinstance(n, str):
                p(n)["races"] += 1
        if isinstance(race.get("winner"), str):
            p(race["winner"])["races_won"] += 1
        if isinstance(race.get("loser"), str):
            p(race["loser"])["races_lost"] += 1
        arm = spec.get("arm_ns")
        if (race.get("announced") and spec.get("kind") in (FIRST_PRESS, LAST_PRESS)
                and isinstance(arm, int) and not isinstance(arm, bool)):
            for o in race.get("order") or []:
                t = o.get("t_ns") if isinstance(o, dict) else None
                if isinstance(t, int) and not isinstance(t, bool) \
                        and isinstance(o.get("player"), str):
                    p(o["player"])["reactions"].append((t - arm) // US)
    return per


_NO_RACES = {"races": 0, "races_won": 0, "races_lost": 0, "reactions": []}


def player_stats(store: Store) -> dict:
    """``{"games": n, "finished": n, "players": {name: {...}}}`` where each
    player has ``games`` (played), ``finished`` (finished games played),
    ``wins`` (finished games where they ranked first, shared or not),
    ``points`` (sum of final scores), ``races`` (races they were eligible in),
    ``races_won`` (the race's winner), ``races_lost`` (its loser) and
    ``reaction_us``: ``{"count","mean","median","best"}`` over announced
    press races, the time from GO to their counted press (integers, µs).
    Only effective events count (undone ones do not)."""
    per: dict[str, dict] = {}
    reactions: dict[str, list[int]] = {}

    def p(name: str) -> dict:
        if name not in per:
            per[name] = {"games": 0, "finished": 0, "wins": 0, "points": 0, "races": 0,
                         "races_won": 0, "races_lost": 0}
            reactions[name] = []
        return per[name]

    games = store.list_games()
    for info in games:
        names = [q["name"] for q in info["players"]]
        for n in names:
            p(n)["games"] += 1
        summ = info["summary"] if info["finished"] else None
        if summ:
            scores = summ.get("scores") or {}
            ranking = summ.get("ranking") or []
            for n in names:
                s = p(n)
                s["finished"] += 1
                if isinstance(scores.get(n), int):
                    s["points"] += scores[n]
                if ranking and n in ranking[0]:
                    s["wins"] += 1
        for name, t in race_tally(e for _, e in store.events(info["id"])).items():
            s = p(name)
            for key in ("races", "races_won", "races_lost"):
                s[key] += t[key]
            reactions[name] += t["reactions"]
    for name, s in per.items():
        r = reactions[name]
        s["reaction_us"] = {"count": len(r),
                            "mean": sum(r) // len(r) if r else None,
                            "median": int(statistics.median_low(r)) if r else None,
                            "best": min(r) if r else None}
    return {"games": len(games), "finished": sum(1 for g in games if g["finished"]),
            "players": per}


CSV_COLUMNS = ["game_id", "game", "created", "finished_at", "status", "source", "player",
               "seat", "colour", "score", "rank", "won", "races", "races_won", "races_lost",
               "reactions", "mean_reaction_us", "best_reaction_us"]


def export_csv(store: Store) -> str:
    """The history as CSV: one row per player per game, oldest game first."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    games = sorted(store.list_games(), key=lambda g: g["id"])
    current = store.current_game()
    for info in games:
        summ = info["summary"] if info["finished"] else None
        status = ("finished" if info["finished"]
                  else "playing" if info["id"] == current else "unfinished")
        tally = race_tally(e for _, e in store.events(info["id"]))
        scores = (summ or {}).get("scores") or {}
        ranking = (summ or {}).get("ranking") or []
        for seat, pl in enumerate(info["players"], start=1):
            n = pl["name"]
            rank = next((i + 1 for i, grp in enumerate(ranking) if n in grp), None)
            t = tally.get(n, _NO_RACES)
            react = t["reactions"]
            w.writerow([info["id"], info["game"], info["created"], info["finished_at"] or "",
                        status, info["source"], n, seat, pl.get("colour") or "",
                        scores.get(n, "") if summ else "", rank or "",
                        "" if not summ else int(rank == 1), t["races"], t["races_won"],
                        t["races_lost"], len(react),
                        sum(react) // len(react) if react else "",
                        min(react) if react else ""])
    return buf.getvalue()


# ---------------------------------------------------------------------------
# game files


def export_game(store: Store, game_id: int) -> str:
    """The game as a game file (docs/game-file.md): the header (plus a
    ``"table"`` object: id, players with colours and buzzers, dates, source),
    then every logged event, undo and redo included (the audit trail)."""
    info = store.game_info(game_id)
    head = header(info["game"], [p["name"] for p in info["players"]], info["options"])
    head["table"] = {"id": info["id"], "players": info["players"], "created": info["created"],
                     "finished_at": info["finished_at"], "source": info["source"]}
    lines = [json.dumps(head, ensure_ascii=False)]
    lines += [json.dumps(ev, ensure_ascii=False) for _, ev in store.events(game_id)]
    return "\n".join(lines) + "\n"


def import_game(store: Store, text: str) -> int:
    """Store an exported game file as a new game of the history, after
    replaying it (:class:`~companion.record.gamefile.GameFileError` names a bad
    line; nothing is stored); finished if it ended, never made current."""
    lines = text.splitlines()
    rep = replay_lines(lines)   # GameFileError names the line
    objs = [json.loads(s) for s in (ln.strip() for ln in lines) if s and not s.startswith("#")]
    head, events = objs[0], objs[1:]
    game, names, options = parse_header(head)
    table = head.get("table") if isinstance(head.get("table"), dict) else {}
    players = table.get("players")
    try:
        players = normalise_players(players if isinstance(players, list) else names)
    except RulesError:
        players = normalise_players(names)
    if [p["name"] for p in players] != names:
        players = normalise_players(names)
    done = rep.game.finished(rep.state)
    return store.create_game(game, players, options, source="import", events=events,
                             summary=jsonable(rep.summary(), "summary") if done else None,
                             make_current=False)


__all__ = ["CSV_COLUMNS", "PALETTE", "effective_events", "export_csv", "export_game",
           "import_game", "jsonable", "normalise_players", "player_stats", "race_tally"]
