"""League benchmark (issue 24): a hall of spectators on the league screen.

``run()`` returns ``[(name, value, unit), ...]``:

* ``league_spectators_p95_ms``: 500 live pages (plain HTTP clients of
  ``/api/live``, in five processes of their own: bench/hall_clients.py) watch
  the league while tables play; for each of :data:`SAMPLES` events logged
  at a table (``session.log``), the time until *every* page has its live
  notice, through the broker and the league; the 95th percentile. Goal: at
  most 100 ms.
* ``league_spectators_each_p95_ms``: the same, over every (event, page)
  delivery rather than the last page of each event.
* ``league_spectators_hall_p95_ms``: the part of the first figure from the
  league's own notice (the store holds the event) to the last page.
* ``league_spectators_cpu_ms_per_event``: the league process's CPU time per
  table event meanwhile (storing it and its state, and the notices to 500
  pages): what the latency is made of on an idle machine, whatever else
  the machine runs while the benchmark does.
* ``league_spectators_pages``: pages the league held at once (all 500, or
  the benchmark fails: a refused page is a failure, not a smaller hall).

The league runs as ``companion league serve`` in a process of its own,
with its default limits (room for :data:`~companion.league.app.MAX_PAGES`
live pages); a few tables (real stores, sessions and publishers, in this
process) log an event every :data:`PACE_S` between them. Needs Debian's ``mosquitto``. Run it alone with
``python -m bench.bench_league_hall``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.league.publisher import LeaguePublisher  # noqa: E402
from companion.league.topics import Credentials  # noqa: E402
from companion.record.store import Store  # noqa: E402
from companion.table.session import TableSession  # noqa: E402
from tests.kit.mosquitto import Broker, free_port, stop_process  # noqa: E402

PAGES = 500
HALLS = 5
TABLES = 5
SAMPLES = 200
PACE_S = 0.05
CLIENTS = Path(__file__).with_name("hall_clients.py")


def run() -> list[tuple[str, float, str]]:
    ids = [f"t{i}" for i in range(1, TABLES + 1)]
    with tempfile.TemporaryDirectory(prefix="bench-hall-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        broker = Broker(root / "broker", ids).start()
        stack.callback(broker.stop)
        url, made = broker.url, broker.files
        web, proc = _league(stack, url, root, made["secrets"]["league"])
        tables = _tables(stack, root, ids, url, made["secrets"])
        hall, pages = _hall(stack, web)
        cpu0 = _cpu_s(proc.pid)
        sent = _play(tables)
        cpu_ms = (_cpu_s(proc.pid) - cpu0) * 1000 / len(sent)
        seen = _collect(hall)
    last, each, hub = [], [], []
    for key, t0 in sent.items():
        pub_ns, *times = seen.get(key, [0])
        if len(times) < pages:
            raise RuntimeError(f"event {key} reached {len(times)} of {pages} pages")
        last.append((max(times) - t0) / 1e6)
        hub.append((max(times) - pub_ns) / 1e6)
        each += [(t - t0) / 1e6 for t in times]
    return [("league_spectators_p95_ms", _p95(last), "ms"),
            ("league_spectators_each_p95_ms", _p95(each), "ms"),
            ("league_spectators_hall_p95_ms", _p95(hub), "ms"),
            ("league_spectators_pages", float(pages), "pages"),
            ("league_spectators_cpu_ms_per_event", cpu_ms, "ms")]


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _league(stack: ExitStack, url: str, root: Path, secret) -> tuple[int, subprocess.Popen]:
    """``companion league serve`` in a process of its own (as on the league
    machine: the tables are other Pis), with its default limits; its port."""
    web = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion.league", "serve", "--broker", url, "--db",
         str(root / "league.db"), "--password-file", str(secret), "--host", "127.0.0.1",
         "--port", str(web)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=Path(__file__).resolve().parents[1])
    stack.callback(stop_process, proc)
    end = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{web}/api/league", timeout=2) as r:
                if (json.loads(r.read()).get("broker") or {}).get("connected"):
                    return web, proc
        except OSError:
            pass
        if time.monotonic() > end or proc.poll() is not None:
            raise RuntimeError("the league server did not start")
        time.sleep(0.1)


def _tables(stack: ExitStack, root: Path, ids, url: str, secrets) -> list:
    """A playing table for each id, publishing, everything sent."""
    out = []
    for tid in ids:
        store = Store(root / f"{tid}.db")
        session = TableSession(store)
        session.new_game("chope", ["ana", "bo", "cy"])
        pub = LeaguePublisher(session, store, url, tid,
                              Credentials.from_file(tid, secrets[tid])).start()
        stack.callback(store.close)
        stack.callback(pub.close, 2)
        out.append((tid, session, pub))
    for _, _, pub in out:
        if not pub.flush(30):
            raise RuntimeError(f"a table could not publish: {pub.status()}")
    return out


def _hall(stack: ExitStack, port: int) -> tuple[list[subprocess.Popen], int]:
    """The spectators' processes (:data:`HALLS`, the pages shared out: 500
    phones are not one program), every page connected; (processes, pages)."""
    procs, ok = [], 0
    for i in range(HALLS):
        n = PAGES // HALLS + (1 if i < PAGES % HALLS else 0)
        proc = subprocess.Popen([sys.executable, str(CLIENTS), str(port), str(n)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        stack.callback(_end, proc)
        procs.append(proc)
    for proc in procs:
        line = proc.stdout.readline().split()
        if len(line) != 3 or line[0] != "ready":
            raise RuntimeError(f"the spectators did not start: {line}")
        ok += int(line[1])
        if int(line[2]):
            raise RuntimeError(f"the league refused {line[2]} live pages of {PAGES}")
    time.sleep(0.5)
    return procs, ok


def _play(tables) -> dict[str, int]:
    """:data:`SAMPLES` events over the tables, :data:`PACE_S` apart:
    ``{"table/id": monotonic ns before the log}``."""
    sent = {}
    for i in range(SAMPLES):
        tid, session, _ = tables[i % len(tables)]
        if session.game.finished(session.state):
            session.new_game("chope", ["ana", "bo", "cy"])
        legal = [e for e in session.legal_events() if e.get("type") != "race"] or \
            session.legal_events()
        t0 = time.monotonic_ns()
        eid = session.log(legal[0])["id"]
        sent[f"{tid}/{eid}"] = t0
        time.sleep(PACE_S)
    time.sleep(2.0)
    return sent


def _collect(procs: list[subprocess.Popen]) -> dict[str, list[int]]:
    """Every page's arrival times by event: ``{key: [pub_ns, ns, ...]}``."""
    seen: dict[str, list[int]] = {}
    for proc in procs:
        proc.stdin.write("report\n")
        proc.stdin.flush()
        for key, (pub_ns, *times) in json.loads(proc.stdout.readline()).items():
            seen.setdefault(key, [pub_ns]).extend(times)
    return seen


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(5)


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
