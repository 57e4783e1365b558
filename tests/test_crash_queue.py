"""kill -9 never loses a card acknowledged as queued behind a race (issue 31,
item 3). The queue used to be saved only inside the live race's row: a later
race saved a record without it and cancelling deleted the row, so a crash then
lost 0 of 1, 0 of 2, 0 of 1 queued cards. Now the queue has its own row,
written before the card is acknowledged and, as each card is logged, in the
same transaction as its event (so it is logged once, never twice).

Each run is a real process (a Chope! table on a SQLite file) killed with
SIGKILL after it printed what it acknowledged; a fresh session resumes the
file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = [{"name": n, "buzzer": f"b{i + 1}"} for i, n in enumerate(["ana", "bo", "cy", "dee"])]
MS = 1_000_000


def table_writer(db: str, path: str) -> None:
    """Flip the Red Table (its race open, nobody slams yet), queue Blue and
    a Laksa behind it (acknowledged each), then take one path that ends or
    starts a race, say it is done, and wait for the kill."""
    from companion.races.edges import Edge
    from companion.record.store import Store
    from companion.table.session import TableSession

    s = TableSession(Store(db))
    s.new_game("chope", PLAYERS)
    s.log({"type": "flip", "card": "table:red"})
    for card in ("table:blue", "food:laksa"):
        out = s.log({"type": "flip", "card": card})
        print(json.dumps({"acked": out["type"]}), flush=True)
    if path == "cancel":                    # the live race's row is deleted
        s.cancel_race()
    elif path == "decided":                 # Red goes to Bo; Blue is logged, its race starts
        s.feed_edge(Edge("b2", True, s.clock()))
        s.feed_edge(Edge("b2", False, s.clock() + 80 * MS))
        end = time.monotonic() + 20
        while time.monotonic() < end and len(s.snapshot()["queued"]) != 1:
            time.sleep(0.01)
            s.tick()
            race = s.snapshot()["race"] or {}
            pick = [c for c in race.get("choices") or () if c.get("player") == "bo"]
            if race.get("confirm") and pick:        # the host answers: Bo's slam is Red's
                s.confirm_race(True, pick[0]["t_ns"])
    print(json.dumps({"done": s.snapshot()["queued"]}), flush=True)
    while True:
        time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.parametrize("path, queued", [
    ("none", ["flip Blue Table", "flip Laksa"]),
    ("cancel", ["flip Blue Table", "flip Laksa"]),
    ("decided", ["flip Laksa"]),
])
def test_a_kill_keeps_every_card_acknowledged_as_queued(tmp_path, path, queued):
    from companion.record.store import Store
    from companion.table.session import TableSession

    db = tmp_path / "t.db"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, __file__, str(db), path], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(ROOT), bufsize=0)
    try:
        acked = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert acked == [{"acked": "queued"}] * 2, proc.stderr.read().decode()[-2000:]
        done = json.loads(proc.stdout.readline())
        assert done == {"done": queued}
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    with Store(db) as store:
        assert store.integrity_check() == "ok"
        s = TableSession(store)
        assert s.resume()
        assert s.snapshot()["queued"] == queued
        flips = [e["card"] for _, e in store.events(s.game_id) if e.get("type") == "flip"]
        # a card leaves the queue as it enters the log: in one, never both
        assert flips == ["table:red"] + (["table:blue"] if path == "decided" else [])


if __name__ == "__main__":
    table_writer(sys.argv[1], sys.argv[2])
