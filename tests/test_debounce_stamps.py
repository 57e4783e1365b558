"""The debounce is settled on the edges' stamps, not on when they arrive
(docs/rules-notes.md, "Races", Debounce and delivery margin).

Every edge carries its source's stamp ``t_ns`` and reaches the referee a
little later (up to ~2 ms on bare pins); one buzzer's edges arrive in the
order they were stamped (one queue per source), different buzzers' edges
in any order. The referee takes a debounce decision (the end of a burst's
window) only once its clock is past the burst's stamp + the window + the
delivery margin, so a bounce edge that arrives late still lands in its
window. Here the pipeline is simulated exactly: it polls the referee at
every ``next_deadline()`` that falls before the next delivery (and at a few
other moments, as other deadlines of the table would make it)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from companion.races.edges import Edge
from companion.races.referee import (FIRST_PRESS, FIRST_RELEASE, KINDS, MS, US, RaceSpec, Referee,
                               debounce)

try:        # the margin is new: without it, the tests below must fail, not error
    from companion.races.referee import DEFAULT_DELIVERY_MARGIN_NS
except ImportError:
    DEFAULT_DELIVERY_MARGIN_NS = None

P = ("A", "B", "C")
WINDOW = 20 * MS
MAX_LATENCY = 2 * MS


def run(deliveries, kind=None, polls=(), arm_ns=0, players=P, end_ns=None, **spec):
    """Feed ``deliveries`` (``(arrival_ns, edge)``) to a fresh referee in
    arrival order, polling it as the pipeline does: at each deadline that
    falls before the next arrival, and at each of ``polls``. Returns the
    accepted edges (as the referee's listeners hear them, sorted) and the
    verdict of a race of ``kind`` armed at ``arm_ns`` (None: no race)."""
    ref = Referee(players, debounce_ns=WINDOW)
    accepted: list[Edge] = []
    ref.listeners.append(lambda k, e: k == "edge" and accepted.append(e))
    race = ref.start(RaceSpec(kind, players, arm_ns=arm_ns, **spec)) if kind else None
    todo = sorted([(t, 0, i, e) for i, (t, e) in enumerate(deliveries)]
                  + [(t, 1, i, None) for i, t in enumerate(polls)], key=lambda x: x[:3])
    now = 0
    for at, _, _, edge in todo:
        now = max(now, at)
        while (dl := ref.next_deadline()) is not None and dl <= now:
            ref.poll(dl)
        if edge is None:
            ref.poll(now)
        else:
            ref.feed(edge)
    end = end_ns if end_ns is not None else now + 10_000 * MS
    while (dl := ref.next_deadline()) is not None and dl <= end:
        ref.poll(dl)
    ref.poll(end)
    verdict = None
    if race is not None:
        verdict = (race.verdict or race.finish()).to_json()
    return sorted(accepted, key=lambda e: (e.t_ns, e.player)), verdict


def on_time(edges):
    return [(e.t_ns, e) for e in edges]


def presses(edges):
    return [(e.player, e.t_ns) for e in edges if e.pressed]


def test_a_late_bounce_inside_the_window_is_no_press():
    """A press, then a bounce (release, press) 19.9 ms after it, both
    delivered 0.5 ms late: the referee's 20 ms window of the press has ended
    on its clock when they arrive, but on the stamps they are inside it."""
    raw = [Edge("A", True, 0), Edge("A", False, 19_900 * US), Edge("A", True, 19_950 * US),
           Edge("A", False, 200 * MS)]
    late = [(e.t_ns + 500 * US, e) for e in raw]
    got, _ = run(late)
    assert presses(got) == [("A", 0)]
    assert got == run(on_time(raw))[0] == debounce(raw, WINDOW)["A"]


def test_a_late_bounce_after_a_release_is_no_press_and_does_not_lose_a_release_race():
    """Food Poisoning: A lets go at 100 ms; her buzzer bounces 19.8 ms later
    and that bounce reaches the Pi 1.5 ms late. She let go once."""
    raw = [Edge("A", True, 0), Edge("B", True, 1 * MS),
           Edge("A", False, 100 * MS), Edge("A", True, 119_800 * US),
           Edge("A", False, 119_900 * US), Edge("B", False, 300 * MS)]
    late = [(e.t_ns + (1_500 * US if e.t_ns > 110 * MS else 50 * US), e) for e in raw]
    got, verdict = run(late, FIRST_RELEASE, players=("A", "B"), arm_ns=50 * MS)
    assert presses(got) == [("A", 0), ("B", 1 * MS)]
    assert verdict["loser"] == "A"
    assert (got, verdict) == run(on_time(raw), FIRST_RELEASE, players=("A", "B"),
                                 arm_ns=50 * MS)


def test_the_margin_is_a_setting_of_the_referee():
    assert DEFAULT_DELIVERY_MARGIN_NS == 2 * MS
    ref = Referee(P, debounce_ns=WINDOW, delivery_margin_ns=5 * MS)
    ref.feed(Edge("A", True, 0))
    ref.feed(Edge("A", False, 1 * MS))           # a short tap: its release settles
    assert ref.next_deadline() == WINDOW + 5 * MS
    ref.poll(WINDOW + 5 * MS - 1)
    assert ref.level("A")
    ref.poll(WINDOW + 5 * MS)
    assert not ref.level("A")


# -- the property: latency 0-2 ms per edge changes nothing ---------------------

#: gaps between one buzzer's raw changes: bounces well inside the window,
#: near its end (either side), and clean changes well outside it
GAPS = st.one_of(st.integers(10 * US, 3 * MS),
                 st.integers(WINDOW - 2 * MS, WINDOW + 2 * MS),
                 st.integers(25 * MS, 120 * MS))


@st.composite
def raw_edges(draw):
    """Each buzzer's raw changes (alternating, from released), with bursts
    of bounces inside and outside the debounce window."""
    out = []
    for p in P:
        t = draw(st.integers(0, 40 * MS))
        level = False
        for gap in draw(st.lists(GAPS, max_size=14)):
            level = not level
            out.append(Edge(p, level, t))
            t += gap
    return out


@st.composite
def late(draw, edges):
    """Each edge delivered 0-2 ms after its stamp; one buzzer's edges in
    their stamped order (one queue), different buzzers' in any order."""
    out, last = [], {}
    for e in sorted(edges, key=lambda e: e.t_ns):
        at = max(e.t_ns + draw(st.integers(0, MAX_LATENCY)), last.get(e.player, 0))
        last[e.player] = at
        out.append((at, e))
    return out


@settings(max_examples=300, deadline=None)
@given(st.data(), raw_edges(), st.sampled_from(KINDS),
       st.lists(st.integers(0, 700 * MS), max_size=6), st.sampled_from([0, 300 * US]))
def test_latency_up_to_the_margin_changes_no_press_and_no_verdict(data, raw, kind, polls, tie):
    arm = 10 * MS
    deliveries = data.draw(late(raw))
    got, verdict = run(deliveries, kind, polls, arm_ns=arm, tie_window_ns=tie)
    want, want_verdict = run(on_time(raw), kind, polls, arm_ns=arm, tie_window_ns=tie)
    assert got == want
    assert verdict == want_verdict
    batch = debounce(raw, WINDOW)
    assert got == sorted((e for p in batch for e in batch[p]), key=lambda e: (e.t_ns, e.player))


def test_the_verdict_waits_no_longer_with_the_margin():
    """A first-press race is decided the decision hold after the winner's
    stamp, as before: the margin (2 ms) is inside the hold (30 ms)."""
    ref = Referee(P, debounce_ns=WINDOW)
    race = ref.start(RaceSpec(FIRST_PRESS, P, arm_ns=0))
    ref.feed(Edge("B", True, 5 * MS))
    assert ref.next_deadline() == 5 * MS + ref.hold_ns
    ref.poll(5 * MS + ref.hold_ns - 1)
    assert race.verdict is None
    ref.poll(5 * MS + ref.hold_ns)
    assert race.verdict.winner == "B"


def test_a_hold_shorter_than_the_margin_still_waits_for_the_margin():
    ref = Referee(P, debounce_ns=WINDOW, hold_ns=0)
    race = ref.start(RaceSpec(FIRST_PRESS, P, arm_ns=0))
    ref.feed(Edge("B", True, 5 * MS))
    ref.poll(5 * MS + 1 * MS)
    ref.feed(Edge("A", True, 5 * MS - 1))         # 1 ms late, stamped first
    ref.poll(5 * MS + DEFAULT_DELIVERY_MARGIN_NS)
    assert race.verdict.winner == "A"
