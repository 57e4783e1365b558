"""Small helpers shared by the hardware-facing tests (and an installed
distribution faked for the plug-in tests)."""

from __future__ import annotations

import os
import time

#: every :func:`wait_for` limit is multiplied by this (``COMPANION_TEST_SLACK``,
#: default 6): a limit is only "give up eventually", and CI may run under a
#: load average of 16 (with 3, a box's race waited 9 s for a verdict that
#: came later once, with four busy processes beside the suite); a condition
#: that holds returns at once, so only a failing test waits longer.
SLACK = float(os.environ.get("COMPANION_TEST_SLACK", "6"))


def wait_for(cond, timeout=10.0, step=0.002):
    """Poll ``cond`` until it is true or ``timeout`` seconds (times
    :data:`SLACK`) pass; its last value. Wait for a condition with this,
    never assert how long something took."""
    end = time.monotonic() + timeout * SLACK
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())


def toggles(pin):
    """How many times a gpiozero MockPin changed level (from its history)."""
    return sum(1 for a, b in zip(pin.states, pin.states[1:]) if bool(a.state) != bool(b.state))


# -- a table session driven by hand (the session and game-night tests) --------

MS = 1_000_000
S = 1_000 * MS
T0 = 100 * S


class Clock:
    """The session's clock, moved by the test (integer ns)."""

    def __init__(self, t: int = T0):
        self.t = t

    def __call__(self) -> int:
        return self.t

    def advance(self, ms: int = 0, us: int = 0) -> int:
        self.t += ms * MS + us * 1000
        return self.t


def run_until(session, clock: Clock, until_ns: int, deliveries=()) -> list:
    """Move ``clock`` to ``until_ns`` as the pipeline's thread would: tick at
    every deadline on the way and feed each ``(arrival_ns, edge)`` when it
    arrives (an edge fed at its stamp: ``(edge.t_ns, edge)``). Returns the
    deliveries still to come, in arrival order."""
    todo = sorted(deliveries, key=lambda d: d[0])
    i = 0
    while True:
        nxt = min(todo[i][0] if i < len(todo) else until_ns, until_ns)
        for _ in range(10_000):         # a deadline that does not move on stops here
            dl = session.next_deadline()
            if dl is None or dl > nxt:
                break
            clock.t = max(clock.t, dl)
            session.tick()
        if i >= len(todo) or todo[i][0] > until_ns:
            break
        clock.t = max(clock.t, todo[i][0])
        session.feed_edge(todo[i][1])
        i += 1
    clock.t = max(clock.t, until_ns)
    session.tick()
    return todo[i:]


def press(s, clock, buzzer, hold_ms=60):
    """A hardware press (and release ``hold_ms`` later) at the clock now."""
    from companion.races.edges import Edge

    t = clock.t
    s.feed_edge(Edge(buzzer, True, t))
    s.feed_edge(Edge(buzzer, False, t + hold_ms * MS))
    return t


def run(s, clock, ms, step=5):
    """Advance the clock ``ms`` in steps, ticking like the pipeline thread."""
    for _ in range(ms // step):
        clock.advance(step)
        s.tick()


# -- a distribution installed by hand (the entry-point tests) ------------------

def fake_distribution(folder, name: str, modules: dict[str, str],
                      entry_points: dict[str, dict[str, str]]) -> None:
    """Leave in ``folder`` what ``pip install`` of distribution ``name`` would:
    its ``modules`` (module name -> source text) and a ``.dist-info`` with
    METADATA and entry_points.txt (``{group: {name: "module:attr"}}``). Put
    ``folder`` on ``sys.path`` (``monkeypatch.syspath_prepend``) to install it."""
    for module, text in modules.items():
        (folder / f"{module}.py").write_text(text)
    info = folder / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
        for group, eps in entry_points.items()))
