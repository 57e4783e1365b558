"""Fair races at a real table's pace: the share of race cards the session
gives to the wrong player without asking the host, and the share it asks
about, over simulated Chope! games at a flip every 1.0, 1.5 and 2.5 s
(companion.pacesim: real arming, referee, tracker and store; flips 0.8 to
4 s apart, slams 150 to 700 ms after a flip, host logs 0.1 to 2 s after it,
bounce, reflex presses by the flipper)."""

from __future__ import annotations

from companion.pacesim import simulate

CARDS = 2_000
PACES_MS = (1_000, 1_500, 2_500)


def run():
    wrong = []
    for pace in PACES_MS:
        tally = simulate(CARDS, pace, seed=pace)
        wrong.append(tally.pct(tally.wrong))
        yield f"race_pace_wrong_pct_{pace}ms", tally.pct(tally.wrong), "%"
        yield f"race_pace_flagged_pct_{pace}ms", tally.pct(tally.flagged), "%"
        if pace == 1_500:
            yield "race_pace_flagged_pct", tally.pct(tally.flagged), "%"
    yield "race_pace_wrong_pct", max(wrong), "%"
