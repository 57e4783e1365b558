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
import logging
import sqlite3
import threading
import time
from pathlib import Path

from ..record.eventlog import effective_events
from ..record.history import race_tally
from .topics import NO_STORE, LeagueError, check_event, check_result, check_state

log = logging.getLogger(__name__)

US = 1_000
#: The league store's schema; a file of another version is refused (a league
#: store is one night's: start a new file).
SCHEMA_VERSION = 2

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS tables (
        table_id TEXT PRIMARY KEY,
        state TEXT,                 -- the last retained state (JSON)
        state_ns INTEGER,           -- its sent_ns, never later than the league's clock
        online INTEGER,             -- 1 / 0 / NULL (never heard)
        store TEXT,                 -- the table store's id of its latest event
        refused INTEGER NOT NULL DEFAULT 0,   -- messages refused (bad fields, too big)
        refused_why TEXT,           -- the last refusal
        seen_ns INTEGER NOT NULL    -- last message from the table (league clock)
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        table_id TEXT NOT NULL,
        store TEXT NOT NULL,        -- the table store's id: a fresh store is a new sequence
        event_id INTEGER NOT NULL,
        prev INTEGER NOT NULL,
        seq INTEGER NOT NULL,       -- its place among the store's published events
        game_id INTEGER NOT NULL,
        type TEXT,
        line TEXT,
        body TEXT NOT NULL,         -- the public event (JSON)
        logged_ns INTEGER,          -- when the table logged it (its wall clock)
        received_ns INTEGER NOT NULL,
        PRIMARY KEY (table_id, store, event_id)
    )""",
    "CREATE INDEX IF NOT EXISTS events_by_game ON events (table_id, store, game_id, event_id)",
    """CREATE TABLE IF NOT EXISTS marks (
        table_id TEXT NOT NULL,
        store TEXT NOT NULL,
        since INTEGER NOT NULL,     -- where the table joined the league
        upto INTEGER NOT NULL,      -- every event from since up to this id is held
        PRIMARY KEY (table_id, store)
    )""",
    """CREATE TABLE IF NOT EXISTS games (
        table_id TEXT NOT NULL,
        store TEXT NOT NULL,
        game_id INTEGER NOT NULL,
        game TEXT NOT NULL,
        title TEXT,
        players TEXT NOT NULL,      -- JSON list of names
        finished INTEGER NOT NULL DEFAULT 0,  -- what the table says
        version INTEGER,            -- the result's version (last event id)
        claim TEXT,                 -- the table's result message (JSON)
        counted INTEGER NOT NULL DEFAULT 0,   -- 1: in the standings (events held, replayed)
        checked TEXT,               -- how (replayed / held) or why not
        ranking TEXT,               -- the counted ranking (JSON)
        scores TEXT,                -- the counted scores (JSON)
        created_ns INTEGER,
        finished_ns INTEGER,
        PRIMARY KEY (table_id, store, game_id)
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


def replay_result(game: str, players: list[str], options: dict, events: list[dict]):
    """``(ranking, scores)`` of a game replayed from its public events with
    the game's own tracker; LeagueError if the events do not end the game
    or the tracker refuses one."""
    from ..record.eventlog import Replay

    try:
        rep = Replay.start(game, players, options)
        for ev in events:
            rep.apply(ev)
        if not rep.game.finished(rep.state):
            raise LeagueError("its events do not end the game")
        return rep.game.ranking(rep.state), rep.game.scores(rep.state)
    except LeagueError:
        raise
    except Exception as exc:        # RulesError, or a tracker's bug on odd input
        raise LeagueError(f"the {game} tracker cannot replay its events: {exc}") from None



#: an event within the version the table's latest state reports (or any,
#: while no state says one): ``e`` the event, ``t`` its table's row
WITHIN_STATE = ("(json_extract(t.state, '$.version') IS NULL"
                " OR e.event_id <= json_extract(t.state, '$.version'))")


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
        cols = [r[1] for r in self.conn.execute("PRAGMA table_info(events)")]
        if cols and "store" not in cols:
            self.conn.close()
            raise LeagueError(f"{path} is a league store of an older version: start the "
                              f"night on a new --db file")
        for sql in SCHEMA:
            self.conn.execute(sql)
        self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                          (str(SCHEMA_VERSION),))
        self.marks_changed: set[str] = set()     # tables whose mark moved (for the subscriber)
        self._marks: dict[tuple[str, str], tuple[int, int]] = {}   # (since, upto), as stored
        #: (table, store) -> the sent_ns of the last event message heard from it
        self.heard: dict[tuple[str, str], int] = {}
        #: results counted since the subscriber last looked (take_counted)
        self.counted_now: list[dict] = []
        # (table, store, game) known to have a row / a finished result not yet counted
        self._games: set[tuple] = set()
        self._pending: set[tuple] = {tuple(r) for r in self.conn.execute(
            "SELECT table_id, store, game_id FROM games WHERE finished = 1 AND counted = 0")}

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        """The rows of one query, under the store's lock."""
        with self._lock:
            return self.conn.execute(sql, args).fetchall()

    def execute(self, sql: str, args: tuple = ()) -> None:
        """Run one statement (its own transaction), under the store's lock."""
        with self._lock:
            self.conn.execute(sql, args)

    def _tx(self, fn):
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                out = fn()
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                self._marks.clear()         # they may hold what was rolled back
                self._games.clear()
                raise
            return out

    # -- what arrives ------------------------------------------------------------
    def _touch(self, table: str, now: int) -> None:
        new = self.conn.execute("SELECT 1 FROM tables WHERE table_id = ?",
                                (table,)).fetchone() is None
        self.conn.execute("INSERT INTO tables (table_id, seen_ns) VALUES (?, ?) ON CONFLICT"
                          " (table_id) DO UPDATE SET seen_ns = excluded.seen_ns", (table, now))
        if new:     # its first mark goes out at once (see :meth:`mark`)
            self.marks_changed.add(table)

    def refuse(self, table: str, why: str, now: int | None = None) -> None:
        """Count a refused message against its table (shown on its card)."""
        now = time.time_ns() if now is None else now
        with self._lock:
            self._touch(table, now)
            self.conn.execute("UPDATE tables SET refused = refused + 1, refused_why = ?"
                              " WHERE table_id = ?", (why[:200], table))

    def add_event(self, table: str, msg: dict, now: int | None = None) -> bool:
        """Keep one event message (checked first: LeagueError names a bad
        field); False if it was already here (a duplicate). Keyed by the
        table, its store's id and the event id."""
        now = time.time_ns() if now is None else now
        check_event(msg, now)
        store, eid, gid = msg["store"], msg["id"], msg["game_id"]
        self.heard[(table, store)] = msg["sent_ns"]       # copies too: the stream moves

        def tx():
            self.conn.execute("INSERT INTO tables (table_id, seen_ns, store) VALUES (?, ?, ?)"
                              " ON CONFLICT (table_id) DO UPDATE SET seen_ns = excluded.seen_ns,"
                              " store = excluded.store", (table, now, store))
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (table, store, eid, msg["prev"], msg["seq"], gid, msg.get("type"),
                 msg.get("line") or "", json.dumps(msg["event"]), msg.get("logged_ns"), now))
            new = cur.rowcount == 1
            if not new:      # sent again after the table reset its progress: its new place
                self.conn.execute("UPDATE events SET seq = ? WHERE table_id = ? AND store = ?"
                                  " AND event_id = ?", (msg["seq"], table, store, eid))
            if (table, store, gid) not in self._games:
                self.conn.execute(
                    "INSERT OR IGNORE INTO games (table_id, store, game_id, game, title,"
                    " players, created_ns) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (table, store, gid, msg["game"], msg.get("title") or msg["game"],
                     json.dumps(msg["players"]), msg.get("logged_ns")))
            self._advance(table, store, msg["since"])
            if new and (table, store, gid) in self._pending:
                self._verify(table, store, gid)
            self._games.add((table, store, gid))
            return new
        return self._tx(tx)

    def _advance(self, table: str, store: str, since: int) -> None:
        """Move the table's mark along its chain of events (each names its ``prev``)."""
        row = self._marks.get((table, store))
        if row is None:
            row = self.conn.execute("SELECT since, upto FROM marks WHERE table_id = ? AND"
                                    " store = ?", (table, store)).fetchone()
        if row is None or row[0] != since:
            upto = since if row is None or since < row[0] else max(row[1], since)
            self.conn.execute("INSERT OR REPLACE INTO marks VALUES (?, ?, ?, ?)",
                              (table, store, since, upto))
        else:
            upto = row[1]
        start = upto
        while True:     # the chain follows the ids: the next one held, if its prev is here
            nxt = self.conn.execute("SELECT event_id, prev FROM events WHERE table_id = ? AND"
                                    " store = ? AND event_id > ? ORDER BY event_id LIMIT 1",
                                    (table, store, upto)).fetchone()
            if nxt is None or nxt[1] != upto:
                break
            upto = nxt[0]
        if upto != start or row is None or row[0] != since:
            self.conn.execute("UPDATE marks SET upto = ? WHERE table_id = ? AND store = ?",
                              (upto, table, store))
            self.marks_changed.add(table)
        self._marks[(table, store)] = (since, upto)

    def set_state(self, table: str, msg: dict, now: int | None = None) -> bool:
        """Keep a table's state if it is newer than the one held. Its
        ``sent_ns`` is checked and held as at most the league's own clock, so
        a table clock far ahead cannot freeze the card."""
        now = time.time_ns() if now is None else now
        sent = min(check_state(msg, now)["sent_ns"], now)
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
        """A game's result (or "playing again"), checked; a later version
        wins. It counts in the standings only once the league holds every
        event of the game and its replay agrees (:meth:`_verify`)."""
        now = time.time_ns() if now is None else now
        check_result(msg, now)
        store, version = msg["store"], msg["version"]
        players = [p.get("name") if isinstance(p, dict) else p for p in msg["players"]]

        def tx():
            self._touch(table, now)
            self.conn.execute(
                "INSERT OR IGNORE INTO games (table_id, store, game_id, game, title, players,"
                " created_ns) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (table, store, game_id, msg["game"], msg.get("title") or msg["game"],
                 json.dumps(players), msg.get("created_ns")))
            cur = self.conn.execute(
                "UPDATE games SET finished = ?, version = ?, claim = ?, finished_ns = ?,"
                " counted = 0, checked = NULL, ranking = NULL, scores = NULL"
                " WHERE table_id = ? AND store = ? AND game_id = ? AND game = ?"
                " AND (version IS NULL OR version <= ?)",
                (int(msg["finished"]), version, json.dumps(msg), msg.get("finished_ns"),
                 table, store, game_id, msg["game"], version))
            if cur.rowcount == 1:
                self._pending.add((table, store, game_id))
                self._verify(table, store, game_id)
                self.marks_changed.add(table)
            return cur.rowcount == 1
        return self._tx(tx)

    def _verify(self, table: str, store: str, game_id: int) -> None:
        """Count a claimed result if the league holds all its events (as
        many as the result says, the last one its version) and the game's
        tracker, replaying them, ends the game with the same ranking. A game
        whose public events hide something (a secret card) cannot be
        replayed from them: holding every event is then what counts."""
        row = self.conn.execute("SELECT game, players, finished, version, claim, counted FROM"
                                " games WHERE table_id = ? AND store = ? AND game_id = ?",
                                (table, store, game_id)).fetchone()
        if row is None or not row[2] or row[5]:
            self._pending.discard((table, store, game_id))
            return
        game, players, _, version, claim, _ = row
        claim = json.loads(claim)
        held = self.conn.execute("SELECT event_id, body FROM events WHERE table_id = ? AND"
                                 " store = ? AND game_id = ? ORDER BY event_id",
                                 (table, store, game_id)).fetchall()
        if len(held) != claim["events"] or not held or held[-1][0] != version:
            why = f"waiting for its events ({len(held)} of {claim['events']} held)"
            self.conn.execute("UPDATE games SET checked = ? WHERE table_id = ? AND store = ?"
                              " AND game_id = ?", (why, table, store, game_id))
            return
        ranking, scores = claim["summary"]["ranking"], claim["summary"]["scores"]
        how = "held"
        if not claim.get("hidden"):
            try:
                ranking, scores = replay_result(game, json.loads(players),
                                                claim.get("options") or {},
                                                [json.loads(b) for _, b in held])
                how = "replayed"
            except LeagueError as exc:
                how = None
                why = f"refused: {exc}"
            if how and ranking != claim["summary"]["ranking"]:
                how, why = None, "refused: its replay ranks the players otherwise"
            if how is None:
                log.warning("league: %s game %s not counted: %s", table, game_id, why)
                self.conn.execute("UPDATE games SET checked = ? WHERE table_id = ? AND"
                                  " store = ? AND game_id = ?", (why, table, store, game_id))
                return
        self.conn.execute("UPDATE games SET counted = 1, checked = ?, ranking = ?, scores = ?"
                          " WHERE table_id = ? AND store = ? AND game_id = ?",
                          (how, json.dumps(ranking), json.dumps(scores), table, store, game_id))
        self._pending.discard((table, store, game_id))
        self.counted_now.append({"table": table, "game_id": game_id, "finished": True})

    def take_marks_changed(self) -> set[str]:
        """The tables whose mark moved since the last call (the subscriber
        publishes their marks)."""
        with self._lock:
            out = set(self.marks_changed)
            self.marks_changed.clear()
        return out

    def take_counted(self) -> list[dict]:
        """The results that came to count in the standings since the last call
        (a result whose last events arrived after it): ``{table, game_id, finished}``."""
        with self._lock:
            out, self.counted_now = self.counted_now, []
        return out

    # -- views --------------------------------------------------------------------
    def event_ids(self, table: str, store: str | None = None) -> list[int]:
        """The ids of a table's events held (of its latest store, or ``store``)."""
        if store is None:
            row = self.rows("SELECT store FROM tables WHERE table_id = ?", (table,))
            store = row[0][0] if row else None
        return [r[0] for r in self.rows(
            "SELECT event_id FROM events WHERE table_id = ? AND store = ? ORDER BY event_id",
            (table, store))]

    def mark(self, table: str) -> dict | None:
        """The league's delivery mark for a table (its latest store): what
        the table's publisher reads on ``<prefix>/<table>/mark``: ``upto``
        (every event up to it is held), ``ahead`` and ``next`` (the first
        event held beyond a hole, or None), ``heard_ns`` (the table's
        ``sent_ns`` of the last event message this league process heard
        from it, copies included: whether the table's stream is still
        arriving), ``results`` (each game's result version held)."""
        row = self.rows("SELECT m.store, m.since, m.upto FROM marks m JOIN tables t ON"
                         " t.table_id = m.table_id AND t.store = m.store WHERE m.table_id = ?",
                         (table,))
        if not row:
            # a table heard of (its retained state, status or result) whose
            # events went out before this league listened: "no store held"
            # makes its publisher send them all again (topics.NO_STORE)
            if not self.rows("SELECT 1 FROM tables WHERE table_id = ?", (table,)):
                return None
            return {"store": NO_STORE, "since": 0, "upto": 0, "ahead": False, "next": None,
                    "heard_ns": 0, "results": {}}
        store, since, upto = row[0]
        nxt = self.rows("SELECT MIN(event_id) FROM events WHERE table_id = ? AND store = ?"
                         " AND event_id > ?", (table, store, upto))[0][0]
        results = {str(g): v for g, v in self.rows(
            "SELECT game_id, version FROM games WHERE table_id = ? AND store = ? AND"
            " version IS NOT NULL", (table, store))}
        return {"store": store, "since": since, "upto": upto, "ahead": nxt is not None,
                "next": nxt, "heard_ns": self.heard.get((table, store), 0), "results": results}

    def missing(self, table: str) -> int:
        """How many of the table's events (of its latest store) the league
        has not received, of those up to the last one it has and at most the
        version the table's own latest state reports (an event id beyond
        it is none the table logged: a forged id far ahead cannot leave the
        card counting events that never existed)."""
        row = self.rows("SELECT m.since, MAX(e.seq), COUNT(e.event_id) FROM marks m JOIN"
                         " tables t ON t.table_id = m.table_id AND t.store = m.store LEFT JOIN"
                         " events e ON e.table_id = m.table_id AND e.store = m.store AND"
                         " e.event_id > m.since AND " + WITHIN_STATE +
                         " WHERE m.table_id = ?", (table,))
        if not row or row[0][1] is None:
            return 0
        return max(0, row[0][1] - row[0][2])

    def gaps(self, table: str) -> list[int]:
        """Events whose predecessor in the table's log never arrived (their
        ``prev``), of those within the table's reported version."""
        return [r[0] for r in self.rows(
            "SELECT e.prev FROM events e JOIN marks m ON m.table_id = e.table_id AND"
            " m.store = e.store JOIN tables t ON t.table_id = e.table_id AND t.store = e.store"
            " WHERE e.table_id = ? AND " + WITHIN_STATE + " AND e.prev > m.since AND NOT EXISTS (SELECT 1 FROM"
            " events p WHERE p.table_id = e.table_id AND p.store = e.store AND"
            " p.event_id = e.prev)", (table,))]

    def _game_events(self, table: str, store: str, game_id: int) -> list[dict]:
        return [json.loads(b) for (b,) in self.rows(
            "SELECT body FROM events WHERE table_id = ? AND store = ? AND game_id = ?"
            " ORDER BY event_id", (table, store, game_id))]

    def tables(self) -> list[dict]:
        """Every table heard from, by id: live state, online, counts, events missing."""
        out = []
        for table, state, online, seen, store, refused, why in self.rows(
                "SELECT table_id, state, online, seen_ns, store, refused, refused_why"
                " FROM tables ORDER BY table_id"):
            st = json.loads(state) if state else {}
            count, last = self.rows("SELECT COUNT(*), MAX(event_id) FROM events"
                                     " WHERE table_id = ? AND store IS ?", (table, store))[0]
            race = self.rows("SELECT line FROM events WHERE table_id = ? AND store IS ? AND"
                              " type = 'race' ORDER BY event_id DESC LIMIT 1", (table, store))
            live_race = st.get("race") if isinstance(st.get("race"), dict) else None
            missing = self.missing(table)
            out.append({
                "table": table, "online": None if online is None else bool(online),
                "game": st.get("game"), "title": st.get("title"), "game_id": st.get("game_id"),
                "players": st.get("players") or [], "current_player": st.get("current_player"),
                "scores": st.get("scores"), "score_unit": st.get("score_unit"),
                "finished": bool(st.get("finished")), "ranking": st.get("ranking"),
                "last_event": st.get("last_event"),
                "race": live_race,
                "last_race": (live_race or {}).get("text") or (race[0][0] if race else None),
                "events": count, "last_id": last or 0, "store": store,
                "gaps": missing, "missing": missing,
                "refused": refused, "refused_why": why, "seen_ns": seen})
        return out

    def results(self) -> list[dict]:
        """Each counted game: table, game, ranking groups with scores, tiebreak rule."""
        out = []
        for table, store, gid, game, title, players, ranking, scores, fin_ns, how in self.rows(
                "SELECT table_id, store, game_id, game, title, players, ranking, scores,"
                " finished_ns, checked FROM games WHERE finished = 1 AND counted = 1"
                " ORDER BY finished_ns, table_id, store, game_id"):
            out.append({"table": table, "store": store, "game_id": gid, "game": game,
                        "title": title, "players": json.loads(players),
                        "ranking": json.loads(ranking), "scores": json.loads(scores),
                        "checked": how, "tiebreak": _tiebreak(game), "finished_ns": fin_ns})
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
        for table, store, gid, game in self.rows(
                "SELECT table_id, store, game_id, game FROM games"
                " ORDER BY table_id, created_ns, game_id"):
            races = [e for e in effective_events(self._game_events(table, store, gid))
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
        events = [{"table": t, "store": st, "id": i, "game_id": g, "type": ty, "line": ln,
                   "event": json.loads(b), "logged_ns": lg}
                  for t, st, i, g, ty, ln, b, lg in self.rows(
                      "SELECT table_id, store, event_id, game_id, type, line, body, logged_ns"
                      " FROM events ORDER BY table_id, store, event_id")]
        return {"format": "tabletop-companion-league", "version": 2, **self.league(),
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
