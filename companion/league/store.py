"""The league's own SQLite store: what it received, and the views built on it.

Everything the league shows is derived from three tables: the tables' last
states (retained messages), every event received (keyed by table id and
event id, so a duplicate delivery is a no-op), and each game's header and
result. A restarted league rebuilds its whole view from this file; the
broker's persistent session then hands it what was sent while it was away.

The views are pure functions of the rows:

* :meth:`LeagueStore.tables`: each table live: online, game, players, whose
  turn, scores, the last race, the last event's line, events received and
  any gap in the table's sequence (an event whose ``prev`` never arrived);
* :meth:`LeagueStore.standings`: across every finished game of the night,
  by player name (the league's reading, docs/league.md): most wins (first
  place, shared or not, after the game's own tiebreaks), then most
  opponents beaten (players ranked strictly below), then fewer games;
* :meth:`LeagueStore.results`: each finished game's ranking with its scores
  and the game's tiebreak rule, in the game's own words;
* :meth:`LeagueStore.records`: the night's fastest reactions (announced
  races, GO to the counted press, from the logged edges) and closest
  finishes (the gap between the deciding press or release and the next
  one), from effective race events only; phone (virtual) presses, which are
  only millisecond-accurate, never set a record;
* :meth:`LeagueStore.export_json` / :meth:`LeagueStore.export_csv`.

Only what the tables published is here, and they publish only public
information (see :mod:`companion.league.publisher`).
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
import time
from pathlib import Path

from ..eventlog import effective_events
from ..history import race_tally

US = 1_000

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tables (
        table_id TEXT PRIMARY KEY,
        state TEXT,                 -- the last retained state (JSON)
        state_ns INTEGER,           -- its sent_ns (the table's wall clock)
        online INTEGER,             -- 1 / 0 / NULL (never heard)
        since INTEGER NOT NULL DEFAULT 0,
        seen_ns INTEGER NOT NULL    -- last message from the table (league clock)
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        table_id TEXT NOT NULL,
        event_id INTEGER NOT NULL,
        prev INTEGER NOT NULL,
        game_id INTEGER NOT NULL,
        type TEXT,
        line TEXT,
        body TEXT NOT NULL,         -- the public event (JSON)
        logged_ns INTEGER,          -- when the table logged it (its wall clock)
        received_ns INTEGER NOT NULL,
        PRIMARY KEY (table_id, event_id)
    )""",
    "CREATE INDEX IF NOT EXISTS events_by_game ON events (table_id, game_id, event_id)",
    """CREATE TABLE IF NOT EXISTS games (
        table_id TEXT NOT NULL,
        game_id INTEGER NOT NULL,
        game TEXT NOT NULL,
        title TEXT,
        players TEXT NOT NULL,      -- JSON list of names
        finished INTEGER NOT NULL DEFAULT 0,
        version INTEGER,            -- the result's version (last event id)
        summary TEXT,               -- the final public summary (JSON)
        created_ns INTEGER,
        finished_ns INTEGER,
        PRIMARY KEY (table_id, game_id)
    )""",
)


def _tiebreak(game: str) -> str:
    """The game's ranking rule in its own words (its ``ranking`` docstring)."""
    try:
        from ..games import get_game
        doc = type(get_game(game)).ranking.__doc__ or ""
    except (KeyError, ImportError, AttributeError):
        return ""
    return " ".join(doc.split())


class LeagueStore:
    """The league's SQLite file (``":memory:"`` in tests). Thread-safe."""

    def __init__(self, path):
        self.path = path
        self._lock = threading.RLock()
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(path), timeout=10.0, isolation_level=None,
                                    check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        for sql in SCHEMA:
            self.conn.execute(sql)

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def _rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self.conn.execute(sql, args).fetchall()

    # -- what arrives ------------------------------------------------------------
    def _touch(self, table: str, now: int) -> None:
        self.conn.execute("INSERT INTO tables (table_id, seen_ns) VALUES (?, ?) ON CONFLICT"
                          " (table_id) DO UPDATE SET seen_ns = excluded.seen_ns", (table, now))

    def add_event(self, table: str, msg: dict, now: int | None = None) -> bool:
        """Keep one event message; False if it was already here (a duplicate)."""
        now = time.time_ns() if now is None else now
        eid, prev, gid = msg["id"], msg["prev"], msg["game_id"]
        for name, value in (("id", eid), ("prev", prev), ("game_id", gid)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"event {name} must be a whole number")
        if not isinstance(msg.get("event"), dict) or not isinstance(msg.get("game"), str):
            raise ValueError("an event message needs its event and game")
        players = msg.get("players") if isinstance(msg.get("players"), list) else []
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self._touch(table, now)
                since = msg.get("since")
                if isinstance(since, int) and not isinstance(since, bool):
                    self.conn.execute("UPDATE tables SET since = ? WHERE table_id = ?",
                                      (since, table))
                cur = self.conn.execute(
                    "INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (table, eid, prev, gid, str(msg.get("type")), str(msg.get("line") or ""),
                     json.dumps(msg["event"]), msg.get("logged_ns"), now))
                self.conn.execute(
                    "INSERT OR IGNORE INTO games (table_id, game_id, game, title, players,"
                    " created_ns) VALUES (?, ?, ?, ?, ?, ?)",
                    (table, gid, msg["game"], str(msg.get("title") or msg["game"]),
                     json.dumps([p for p in players if isinstance(p, str)]),
                     msg.get("logged_ns")))
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return cur.rowcount == 1

    def set_state(self, table: str, msg: dict, now: int | None = None) -> bool:
        """Keep a table's state if it is newer than the one held."""
        now = time.time_ns() if now is None else now
        sent = msg.get("sent_ns") if isinstance(msg.get("sent_ns"), int) else 0
        with self._lock:
            self._touch(table, now)
            cur = self.conn.execute(
                "UPDATE tables SET state = ?, state_ns = ? WHERE table_id = ? AND"
                " (state_ns IS NULL OR state_ns <= ?)", (json.dumps(msg), sent, table, sent))
        return cur.rowcount == 1

    def set_status(self, table: str, online: bool, now: int | None = None) -> None:
        now = time.time_ns() if now is None else now
        with self._lock:
            self._touch(table, now)
            self.conn.execute("UPDATE tables SET online = ? WHERE table_id = ?",
                              (int(bool(online)), table))

    def set_result(self, table: str, game_id: int, msg: dict, now: int | None = None) -> bool:
        """A game's result (or "playing again"); a later version wins."""
        now = time.time_ns() if now is None else now
        done = bool(msg.get("finished"))
        summary = msg.get("summary") if done else None
        if done and not isinstance(summary, dict):
            raise ValueError("a finished game's result needs its summary")
        version = msg.get("version") if isinstance(msg.get("version"), int) else 0
        players = [p.get("name") if isinstance(p, dict) else p
                   for p in msg.get("players") or []]
        with self._lock:
            self._touch(table, now)
            self.conn.execute(
                "INSERT OR IGNORE INTO games (table_id, game_id, game, title, players,"
                " created_ns) VALUES (?, ?, ?, ?, ?, ?)",
                (table, game_id, str(msg.get("game")), str(msg.get("title") or msg.get("game")),
                 json.dumps([p for p in players if isinstance(p, str)]), msg.get("created_ns")))
            cur = self.conn.execute(
                "UPDATE games SET finished = ?, version = ?, summary = ?, finished_ns = ?"
                " WHERE table_id = ? AND game_id = ? AND (version IS NULL OR version <= ?)",
                (int(done), version, None if summary is None else json.dumps(summary),
                 msg.get("finished_ns"), table, game_id, version))
        return cur.rowcount == 1

    # -- views --------------------------------------------------------------------
    def event_ids(self, table: str) -> list[int]:
        return [r[0] for r in self._rows(
            "SELECT event_id FROM events WHERE table_id = ? ORDER BY event_id", (table,))]

    def gaps(self, table: str) -> list[int]:
        """Events whose predecessor in the table's log never arrived (their ``prev``)."""
        return [r[0] for r in self._rows(
            "SELECT e.prev FROM events e JOIN tables t ON t.table_id = e.table_id"
            " WHERE e.table_id = ? AND e.prev > t.since AND NOT EXISTS (SELECT 1 FROM"
            " events p WHERE p.table_id = e.table_id AND p.event_id = e.prev)", (table,))]

    def _game_events(self, table: str, game_id: int) -> list[dict]:
        return [json.loads(b) for (b,) in self._rows(
            "SELECT body FROM events WHERE table_id = ? AND game_id = ? ORDER BY event_id",
            (table, game_id))]

    def tables(self) -> list[dict]:
        """Every table heard from, by id: live state, online, counts, gaps."""
        out = []
        for table, state, online, seen in self._rows(
                "SELECT table_id, state, online, seen_ns FROM tables ORDER BY table_id"):
            st = json.loads(state) if state else {}
            count, last = self._rows("SELECT COUNT(*), MAX(event_id) FROM events"
                                     " WHERE table_id = ?", (table,))[0]
            race = self._rows("SELECT line FROM events WHERE table_id = ? AND type = 'race'"
                              " ORDER BY event_id DESC LIMIT 1", (table,))
            live_race = st.get("race") if isinstance(st.get("race"), dict) else None
            out.append({
                "table": table, "online": None if online is None else bool(online),
                "game": st.get("game"), "title": st.get("title"), "game_id": st.get("game_id"),
                "players": st.get("players") or [], "current_player": st.get("current_player"),
                "scores": st.get("scores"), "score_unit": st.get("score_unit"),
                "finished": bool(st.get("finished")), "ranking": st.get("ranking"),
                "last_event": st.get("last_event"),
                "race": live_race,
                "last_race": (live_race or {}).get("text") or (race[0][0] if race else None),
                "events": count, "last_id": last or 0, "gaps": len(self.gaps(table)),
                "seen_ns": seen})
        return out

    def results(self) -> list[dict]:
        """Each finished game: table, game, ranking groups with scores, tiebreak rule."""
        out = []
        for table, gid, game, title, players, summary, fin_ns in self._rows(
                "SELECT table_id, game_id, game, title, players, summary, finished_ns FROM games"
                " WHERE finished = 1 ORDER BY finished_ns, table_id, game_id"):
            s = json.loads(summary)
            out.append({"table": table, "game_id": gid, "game": game, "title": title,
                        "players": s.get("players") or json.loads(players),
                        "ranking": s.get("ranking") or [], "scores": s.get("scores") or {},
                        "tiebreak": _tiebreak(game), "finished_ns": fin_ns})
        return out

    def standings(self) -> list[dict]:
        """Players across every finished game (the league's order, see the
        module doc): ``name``, ``games``, ``wins``, ``beaten``, ``places``
        (their place in each game, 1 = first, shared places equal),
        ``points`` (sum of final scores), ``rank`` (1-based, shared on a tie)."""
        per: dict[str, dict] = {}
        for r in self.results():
            ranking = [g for g in r["ranking"] if isinstance(g, list)]
            below = sum(len(g) for g in ranking)
            place = 1
            for group in ranking:
                below -= len(group)
                for name in group:
                    if not isinstance(name, str):
                        continue
                    p = per.setdefault(name, {"name": name, "games": 0, "wins": 0, "beaten": 0,
                                              "places": [], "points": 0})
                    p["games"] += 1
                    p["wins"] += place == 1
                    p["beaten"] += below
                    p["places"].append(place)
                    score = r["scores"].get(name)
                    if isinstance(score, (int, float)) and not isinstance(score, bool):
                        p["points"] += score
                place += len(group)
        order = sorted(per.values(), key=lambda p: (-p["wins"], -p["beaten"], p["games"],
                                                    p["name"]))
        last, rank = None, 0
        for i, p in enumerate(order, start=1):
            key = (p["wins"], p["beaten"], p["games"])
            if key != last:
                rank, last = i, key
            p["rank"] = rank
        return order

    def records(self, limit: int = 10) -> dict:
        """``{"reactions": [...], "finishes": [...]}``, best first: each
        reaction ``{table, game_id, game, player, reaction_us}``; each finish
        ``{table, game_id, game, reason, kind, first, second, margin_us}``."""
        reactions, finishes = [], []
        for table, gid, game in self._rows(
                "SELECT DISTINCT table_id, game_id, game FROM games ORDER BY table_id, game_id"):
            races = [e for e in effective_events(self._game_events(table, gid))
                     if e.get("type") == "race"]
            for race in races:
                virtual = set(race.get("virtual_players") or [])
                if race.get("virtual") and not virtual:
                    virtual = None          # a phone race without the list: trust no press
                tally = race_tally([race])
                for player, t in tally.items():
                    if virtual is None or player in virtual:
                        continue
                    for us in t["reactions"]:
                        if us >= 0:
                            reactions.append({"table": table, "game_id": gid, "game": game,
                                              "player": player, "reaction_us": us})
                margin = self._margin(race, virtual)
                if margin is not None:
                    finishes.append({"table": table, "game_id": gid, "game": game,
                                     "reason": race.get("reason"),
                                     "kind": race.get("kind"), **margin})
        reactions.sort(key=lambda r: (r["reaction_us"], r["table"], r["player"]))
        finishes.sort(key=lambda r: (r["margin_us"], r["table"]))
        return {"reactions": reactions[:limit], "finishes": finishes[:limit]}

    @staticmethod
    def _margin(race: dict, virtual) -> dict | None:
        """The gap between the edge that decided a race and the nearest
        other counted edge (first-press and first-release: first two;
        last-press: last two); None without a decision or two edges."""
        order = [o for o in race.get("order") or [] if isinstance(o, dict)
                 and isinstance(o.get("t_ns"), int) and isinstance(o.get("player"), str)]
        if len(order) < 2 or not (race.get("winner") or race.get("loser")):
            return None
        kind = race.get("kind") or (race.get("spec") or {}).get("kind")
        a, b = (order[-1], order[-2]) if kind == "last-press" else (order[0], order[1])
        if virtual is None or a["player"] in virtual or b["player"] in virtual:
            return None
        if kind == "last-press" and race.get("loser") != a["player"]:
            return None             # the loser never pressed: no finish to measure
        return {"first": a["player"], "second": b["player"],
                "margin_us": abs(a["t_ns"] - b["t_ns"]) // US}

    def league(self) -> dict:
        """Everything the league page shows, in one JSON object."""
        return {"tables": self.tables(), "standings": self.standings(),
                "results": self.results(), "records": self.records()}

    # -- export ---------------------------------------------------------------------
    def export_json(self) -> dict:
        """The night as data: the league view plus every event received."""
        events = [{"table": t, "id": i, "game_id": g, "type": ty, "line": ln,
                   "event": json.loads(b), "logged_ns": lg}
                  for t, i, g, ty, ln, b, lg in self._rows(
                      "SELECT table_id, event_id, game_id, type, line, body, logged_ns"
                      " FROM events ORDER BY table_id, event_id")]
        return {"format": "tabletop-companion-league", "version": 1, **self.league(),
                "events": events}

    CSV_COLUMNS = ("rank", "player", "games", "wins", "beaten", "points", "places")

    def export_csv(self) -> str:
        """The standings, one row per player, then one row per game result."""
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(self.CSV_COLUMNS)
        for p in self.standings():
            w.writerow([p["rank"], p["name"], p["games"], p["wins"], p["beaten"], p["points"],
                        " ".join(map(str, p["places"]))])
        w.writerow([])
        w.writerow(("table", "game_id", "game", "place", "player", "score"))
        for r in self.results():
            place = 1
            for group in r["ranking"]:
                for name in group:
                    w.writerow([r["table"], r["game_id"], r["game"], place, name,
                                r["scores"].get(name)])
                place += len(group)
        return buf.getvalue()


__all__ = ["LeagueStore", "SCHEMA"]
