"""SIGKILL at random points in a stream of logged events (issue #4).

A writer subprocess logs events through a real TableSession (events, undo,
redo) and prints each acknowledged update to stdout, flushed. The test kills
it with SIGKILL at random moments, many times, restarting it on the same file
each time (the writer resumes the game), then checks: every acknowledged event
is in the log with its exact body, nothing is half-written (integrity check,
every body parses, the log replays), and the resumed state equals a replay of
the log and a model built from the acknowledged events alone.

Run this file as a script (``python tests/test_crash.py DB SEED``) to be the writer.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KILLS = 24


def register_counter_game():
    """The Counter game (tests.kit.games), registered by hand (this file also
    runs as the writer)."""
    from companion import games
    from tests.kit.games import Counter

    games.register_game(Counter, replace=True)


def writer(db: str, seed: int) -> None:
    register_counter_game()
    from companion.record.store import Store
    from companion.table.session import TableSession

    session = TableSession(Store(db))
    if not session.resume():
        session.new_game("counter", ["ana", "bo", "cy"])
    print(json.dumps({"ready": session.version}), flush=True)
    rng = random.Random(seed)
    while True:
        r = rng.random()
        snap = session.snapshot()
        if r < 0.12 and snap["can_undo"]:
            upd = session.undo(session.version)
        elif r < 0.2 and snap["can_redo"]:
            upd = session.redo(session.version)
        else:
            ev = {"type": "add", "player": rng.choice(["ana", "bo", "cy"]),
                  "n": rng.randint(1, 9), "pad": "x" * rng.randint(0, 3000), "seed": seed}
            upd = session.log(ev, expected_version=session.version)
        print(json.dumps({"id": upd["id"], "event": upd["data"]["event"]}), flush=True)


def register_relay_game():
    """The Relay game (tests.kit.games): its ``go`` asks for an announced
    last-press race that waits for every player, a race that stays live for a while."""
    from companion import games
    from tests.kit.games import Relay

    games.register_game(Relay, replace=True)


RELAY = ["ana", "bo", "cy"]


def _registered_for_one_test(register, name):
    """Register a game for one test, then forget it: the worker goes on to
    other tests that list every game."""
    from companion import games

    register()
    try:
        yield
    finally:
        games.unregister_game(name)


@pytest.fixture
def relay_game():
    yield from _registered_for_one_test(register_relay_game, "relay")


@pytest.fixture
def counter_game():
    yield from _registered_for_one_test(register_counter_game, "counter")


def race_writer(db: str) -> None:
    """Start a race, then press one buzzer after another, acknowledging each
    press once ``feed_edge`` returned (what a source sees)."""
    register_relay_game()
    from companion.races.edges import Edge
    from companion.record.store import Store
    from companion.table.session import TableSession

    session = TableSession(Store(db))
    session.new_game("relay", RELAY)
    session.log({"type": "go"})
    session.start_race(0)
    print(json.dumps({"ready": session.version}), flush=True)
    for name in RELAY:
        time.sleep(0.4)
        session.feed_edge(Edge(name, True, session.clock()))
        print(json.dumps({"pressed": name}), flush=True)
    while True:
        time.sleep(0.01)
        session.tick()


@pytest.mark.slow
def test_sigkill_during_a_race_resumes_it_interrupted_with_its_presses(tmp_path, relay_game):
    """No press is synced to disk on the edge path, yet a kill mid-race
    resumes the race as interrupted (its record was written at arming), with
    every press acknowledged half a second before the kill."""
    from companion.record.store import Store
    from companion.table.session import TableSession

    rng = random.Random(8)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    seen_interrupted = 0
    for run in range(6):
        db = tmp_path / f"race{run}.db"
        proc = subprocess.Popen([sys.executable, __file__, str(db), "race"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                cwd=str(ROOT), bufsize=0)
        head = proc.stdout.readline()
        assert head.startswith(b'{"ready"'), proc.stderr.read().decode()[-2000:]
        wait_for = rng.choice([0, 1, 2, 2, 3]) if run else 0
        acked = [json.loads(proc.stdout.readline())["pressed"] for _ in range(wait_for)]
        time.sleep(0.5)
        proc.send_signal(signal.SIGKILL)
        out, _err = proc.communicate()
        with Store(db) as store:
            assert store.integrity_check() == "ok"
            session = TableSession(store)
            assert session.resume()
            race = session.snapshot()["race"]
            logged = [e for _, e in store.events(session.game_id)]
            if logged[-1]["type"] == "race":            # all three pressed: decided, logged
                assert logged[-1]["loser"] == "cy" and race["phase"] == "decided"
                continue
            seen_interrupted += 1
            assert race["phase"] == "interrupted" and race["reason"] == "siam"
            order = [o["player"] for o in race["order"]]
            assert order == RELAY[:len(order)]         # only presses that were made
            assert order[:len(acked)] == acked         # every press acknowledged 0.5 s ago
    assert seen_interrupted >= 3


def _model(events):
    """Totals from the events alone (undo/redo by hand, no tracker)."""
    eff, undone = [], []
    for ev in events:
        if ev["type"] == "undo":
            undone.append(eff.pop())
        elif ev["type"] == "redo":
            eff.append(undone.pop())
        else:
            eff.append(ev)
            undone.clear()
    totals = {"ana": 0, "bo": 0, "cy": 0}
    for ev in eff:
        totals[ev["player"]] += ev["n"]
    return totals, len(eff)


@pytest.mark.slow
def test_sigkill_at_random_points_loses_nothing_acknowledged(tmp_path, counter_game):
    from companion.record.gamefile import replay_lines
    from companion.record.store import Store
    from companion.table.session import TableSession

    db = tmp_path / "table.db"
    rng = random.Random(20240604)
    acked: dict[int, dict] = {}
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    killed_before_ready = 0
    for run in range(KILLS):
        # bufsize=0: readline() takes exactly one line from the pipe; a buffered
        # reader would read ahead, and communicate() (which reads the pipe's
        # file descriptor) would never see the lines it had read ahead
        proc = subprocess.Popen([sys.executable, __file__, str(db), str(run)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                cwd=str(ROOT), bufsize=0)
        head = b""
        if rng.random() < 0.2:           # sometimes during start-up and resume
            time.sleep(rng.uniform(0.0, 0.3))
        else:                            # mostly mid-stream
            head = proc.stdout.readline()
            assert head.startswith(b'{"ready"'), proc.stderr.read().decode()[-2000:]
            time.sleep(rng.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
        lines = (head + out).decode().split("\n")
        complete = lines[:-1]            # a line cut by the kill has no newline: not acknowledged
        if len(complete) <= 1:
            killed_before_ready += 1
        for line in complete:
            msg = json.loads(line)
            if "id" in msg:
                acked[msg["id"]] = msg["event"]

        # after every kill: reopen and check everything
        with Store(db) as store:
            assert store.integrity_check() == "ok"
            gid = store.current_game()
            if gid is None:
                assert not acked
                continue
            stored = dict(store.events(gid))
            missing = sorted(set(acked) - set(stored))
            assert not missing, f"run {run}: acknowledged events lost: {missing[:5]}"
            for i, ev in acked.items():
                assert stored[i] == ev, f"event {i} differs"
            ids = sorted(stored)
            session = TableSession(store)
            assert session.resume()
            text = session.export_game()
            rep = replay_lines(text.splitlines())
            assert session.state == rep.state
            totals, n = _model([stored[i] for i in ids])
            assert session.state["totals"] == totals and session.state["n"] == n
            assert session.version == ids[-1]
    print(f"{KILLS} kills, {killed_before_ready} before the first event, {len(acked)} acknowledged")
    assert len(acked) > 200, f"too few events to mean anything ({len(acked)})"


if __name__ == "__main__":
    if sys.argv[2] == "race":
        race_writer(sys.argv[1])
    else:
        writer(sys.argv[1], int(sys.argv[2]))
