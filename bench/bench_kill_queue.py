"""kill -9 never loses a card acknowledged as queued behind a race (issue 31's figure).

A card the host logs while a race is open is answered ``queued`` and must
survive a crash, whatever then ends or starts a race. Each of ``RUNS`` runs
starts the real table (``python -m companion serve``: waitress, the buzzer
pipeline, mock buzzers, a Chope! game) as a subprocess on a fresh SQLite
file, drives it over HTTP as the host, queues cards behind a race, takes
one path that ends or starts a race, and is killed with SIGKILL at a random
moment after the first cards' ack. A first run of each path, not killed,
measures how long it takes to settle on this machine (nothing queued, no
race open or asking); its kill runs split ``AFTER`` times that into equal
spans, and each is killed at a uniform moment of its own span, so the kills
land before, during and after each step of each path. The table is then
started again on the same file, and one host snapshot of it says where each
acknowledged card is: in the log, or still queued. The paths, as many runs
each:

* ``verdict``: Red's race ends on its default verdict (nobody slams) and
  the queued Foods are logged;
* ``first-card``: the same, and the first queued card, a Table, starts its
  own race, with another card queued behind that one;
* ``answer``: Bo slams, the host is asked and picks the reading that is
  not the default;
* ``again``: Bo slams, the host is asked and answers "race again";
* ``cancel``: the host cancels Red's race, then logs its verdict by hand;
* ``siam``: Bo, Cy and Dee slap a Mynah and Ana, who holds two Foods,
  does not (the host, asked, names her the last): the queued cards wait
  for her choice of a card to lose, which the host logs.

Figures:

* ``queued_lost_on_kill``: acknowledged queued cards in neither the log
  nor the queue after the restart (goal: 0);
* ``queued_doubled_on_kill``: acknowledged queued cards in both, or twice
  in the log (goal: 0);
* ``queued_acked_on_kill``: the cards acknowledged as queued before a kill;
* ``queued_kill_runs``: the runs.

Loopback only; every wait has a deadline. Each run starts the table twice
(about 0.5 s each on a desktop core) and lives at most 2 s in between:
about 80 s in all on two shared cores. Run it alone with
``python -m bench kill_queue``.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = "246810"
PLAYERS = "ana,bo,cy,dee"
PATHS = ("verdict", "first-card", "answer", "again", "cancel", "siam")
RUNS = 30
#: a path's kills are spread over this much of the time it takes to settle
#: (a dry run first, on this machine): a few land once all is done
AFTER = 1.2
SETTLE_MAX_S = 30.0
SEED = 31
#: the cards each path queues behind its race (each turned once in a run)
QUEUED = {"verdict": ("food:laksa", "food:kaya-toast"), "siam": ("food:laksa", "table:blue")}
QUEUED_DEFAULT = ("table:blue", "food:laksa")
#: the card queued behind the second race (the first queued card's own)
LATE_CARD = "food:rojak"
BANNER = re.compile(r"Host console: http://127\.0\.0\.1:(\d+)/host")


class Killed(Exception):
    """The table went away (the kill)."""


class Refused(Exception):
    """A 4xx: the table moved on between the host's look and tap (a race
    decided, a version logged), as on a real console."""


class Table:
    """``companion serve`` on ``db`` in a subprocess, its output in a file."""

    def __init__(self, db: Path, out: Path):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("COMPANION_SOURCE", None)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self.out = out
        with open(out, "w") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1",
                 "--port", "0", "--db", str(db), "--pin", PIN, "--source", "mock", "--demo",
                 "--players", PLAYERS, "--threads", "8"],
                cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT)
        self.port = self._port()

    def _port(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = BANNER.search(self.out.read_text(errors="replace"))
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.kill()
        raise RuntimeError("the table did not start: " + self.out.read_text()[-2000:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)


class Host:
    """The host console's JSON API over one keep-alive connection."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.cookie, self.csrf, self.seq = "", "", int(time.time() * 1e6)
        self.csrf = self.call("GET", "/api/csrf")["csrf"]
        self.csrf = self.call("POST", "/api/host/login", {"pin": PIN})["csrf"]

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        headers = {"Cookie": self.cookie} if self.cookie else {}
        data = None if body is None else json.dumps(body)
        if data is not None:
            headers.update({"Content-Type": "application/json", "X-CSRF-Token": self.csrf})
        try:
            self.conn.request(method, path, body=data, headers=headers)
            resp = self.conn.getresponse()
            raw = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            raise Killed(str(exc)) from None
        for name, value in resp.getheaders():
            if name.lower() == "set-cookie" and value.startswith("companion="):
                self.cookie = value.split(";", 1)[0]
        out = json.loads(raw)
        if 400 <= resp.status < 500:
            raise Refused(f"{method} {path}: {resp.status} {out}")
        if resp.status >= 500:
            raise RuntimeError(f"{method} {path}: {resp.status} {out}")
        return out

    def state(self) -> dict:
        return self.call("GET", "/api/host/state")

    def log(self, event: dict) -> dict:
        """Log ``event`` against the table's version: its update."""
        version = self.state()["version"]
        return self.call("POST", "/api/host/event",
                         {"event": event, "expected_version": version})["update"]

    def slam(self, *players: str) -> None:
        """Each of ``players`` presses a virtual buzzer, then all let go."""
        for down in (True, False):
            for p in players:
                self.seq += 1
                self.call("POST", "/api/host/press",
                          {"player": p, "pressed": down, "seq": self.seq, "page": "bench"})
                time.sleep(0.04)


def queue_cards(host: Host, path: str) -> list[str]:
    """The race and the cards queued behind it: the lines of those
    acknowledged ``queued``."""
    if path == "siam":                  # Ana claims two Foods; Bo turns a Mynah
        for ev in ({"type": "flip", "card": "food:satay"},
                   {"type": "flip", "card": "food:otah"}, {"type": "stop"}):
            host.log(ev)
        host.log({"type": "flip", "card": "mynah"})
    else:
        host.log({"type": "flip", "card": "table:red"})
    acked = []
    for card in QUEUED.get(path, QUEUED_DEFAULT):
        update = host.log({"type": "flip", "card": card})
        if update.get("type") != "queued":
            raise RuntimeError(f"{card} was not queued: {update}")
        acked.append(update["data"]["line"])
    return acked


def answer(host: Host, path: str, race: dict, asked: int) -> None:
    """The host's answer to the race's question: on the first, the
    reading that is not the default (``answer``, and ``siam``: Ana was
    last) or "race again" (``again``); else the default."""
    choices = race.get("choices") or []
    if asked == 0 and path in ("answer", "siam") and len(choices) > 1:
        body = {"accept": True, "t_ns": choices[0]["t_ns"]}
    elif asked == 0 and path in ("answer", "again"):
        body = {"accept": False}
    else:
        body = {"accept": True}
    host.call("POST", "/api/host/race/confirm", body)


def step(host: Host, path: str, s: dict, done: dict, acked: list[str]) -> None:
    """One look at the table and what the host does about it."""
    race, legal = s.get("race") or {}, s.get("legal_events") or []
    if race.get("confirm"):
        answer(host, path, race, done.setdefault("asked", 0))
        done["asked"] += 1
    elif path == "cancel" and race.get("phase") == "pending" and legal \
            and legal[0].get("type") == "race":
        host.log(legal[0])              # the host logs the cancelled race by hand
    elif legal and legal[0].get("type") == "lose":
        host.log(legal[0])              # the Siam! loser's choice
    elif race.get("card") == "table:blue" and race.get("phase") == "live" \
            and "late" not in done:
        done["late"] = True
        update = host.log({"type": "flip", "card": LATE_CARD})
        if update.get("type") == "queued":
            acked.append(update["data"]["line"])


def settled(s: dict) -> bool:
    """Nothing left to happen: no card queued, no race open or asking, no
    choice waiting."""
    race, legal = s.get("race") or {}, s.get("legal_events") or []
    return not s["queued"] and not race.get("confirm") and not race.get("judging") \
        and race.get("phase") not in ("live", "countdown", "pending", "interrupted") \
        and not (legal and legal[0].get("type") == "lose")


def drive(host: Host, path: str, acked: list[str], until: float,
          stop: bool = False) -> float | None:
    """Play the path's host until the table is killed (Killed), until
    ``until``, or (``stop``) until it settled: the seconds it took to
    settle (None: it did not)."""
    start = time.monotonic()
    if path in ("answer", "again"):
        time.sleep(0.3)
        host.slam("bo")
    elif path == "siam":
        time.sleep(0.25)
        host.slam("bo", "cy", "dee")
    elif path == "cancel":
        host.call("POST", "/api/host/race/cancel", {})
    done: dict = {}
    took = None
    while time.monotonic() < until:
        s = host.state()
        if took is None and settled(s):
            took = time.monotonic() - start
            if stop:
                return took
        try:
            step(host, path, s, done, acked)
        except Refused:
            pass                        # look again
        time.sleep(0.03)
    return took


def settle_time(tmp: Path, path: str) -> float:
    """How long ``path`` takes from the first cards' ack until the table
    has nothing left to do, on this machine (a run not killed)."""
    table = Table(tmp / f"{path}.db", tmp / f"{path}.out")
    try:
        host = Host(table.port)
        took = drive(host, path, queue_cards(host, path), time.monotonic() + SETTLE_MAX_S,
                     stop=True)
    finally:
        table.kill()
    if took is None:
        raise RuntimeError(f"the {path} path did not settle in {SETTLE_MAX_S} s")
    return took


def where(port: int, acked: list[str]) -> tuple[int, int]:
    """(lost, doubled) of the acknowledged cards, from one host snapshot of
    the restarted table: each should be in its log or its queue, once."""
    s = Host(port).state()
    logged = [row["line"] for row in s["log"] if row.get("type") == "flip"]
    seen = [logged.count(line) + s["queued"].count(line) for line in acked]
    lost, doubled = sum(1 for n in seen if n == 0), sum(1 for n in seen if n > 1)
    if lost or doubled:
        print(f"# acknowledged {acked}; after the restart logged {logged}, "
              f"queued {s['queued']}", file=sys.stderr)
    return lost, doubled


def one_run(tmp: Path, k: int, path: str, delay: float) -> tuple[int, int, int]:
    """(acknowledged, lost, doubled) of one run killed ``delay`` seconds
    after the first cards' ack."""
    db = tmp / f"run{k}.db"
    table = Table(db, tmp / f"run{k}.out")
    acked: list[str] = []
    try:
        host = Host(table.port)
        acked.extend(queue_cards(host, path))
        killer = threading.Timer(delay, table.kill)
        killer.start()
        try:
            drive(host, path, acked, time.monotonic() + delay + 10.0)
        except Killed:
            pass
        killer.join()
    finally:
        table.kill()
    again = Table(db, tmp / f"run{k}.again.out")
    try:
        lost, doubled = where(again.port, acked)
    finally:
        again.kill()
    if lost or doubled:
        print(f"# run {k}, {path}, killed {delay:.3f} s after the ack: {lost} lost, "
              f"{doubled} doubled", file=sys.stderr)
    return len(acked), lost, doubled


def run() -> list[tuple[str, float, str]]:
    rng = random.Random(SEED)
    acked = lost = doubled = 0
    spans = RUNS // len(PATHS)
    with tempfile.TemporaryDirectory(prefix="companion-kill-") as d:
        tmp = Path(d)
        horizon = {path: settle_time(tmp, path) * AFTER for path in PATHS}
        for k in range(RUNS):
            path = PATHS[k % len(PATHS)]
            delay = horizon[path] * (k // len(PATHS) + rng.random()) / spans
            got = one_run(tmp, k, path, delay)
            acked, lost, doubled = acked + got[0], lost + got[1], doubled + got[2]
    return [("queued_lost_on_kill", lost, "cards"), ("queued_doubled_on_kill", doubled, "cards"),
            ("queued_acked_on_kill", acked, "cards"), ("queued_kill_runs", RUNS, "runs")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value} {unit}")
