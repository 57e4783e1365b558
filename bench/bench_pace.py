"""Fair races at a real table's pace, played by simulated people
(tests/kit/pacesim.py: the real arming, referee, tracker and store; reactions
150 ms + a log-normal (median 345 ms, p99 ~1.1 s), missed Mynahs, false
slams on Food cards, double slams, near ties, bounce, delivery latency, a
host who logs 0.1 to 2 s late, after the next flip or out of order).

For a flip every 1.0, 1.5, 2.5 and 4.0 s (2,000 race cards each): the share
of race cards given to the wrong player without asking the host (the worst
pace is ``race_pace_wrong_pct``), the share that asked, the share still
wrong after the host's true answer, and the true winning presses (a Table's
first slam, a Mynah's last slap) counted for no card or another card.

``race_pace_flipper_arms_wrong_pct_*``: the same people with the setting
``flipper_arms`` on and a flipper who presses as they turn each card (95 %
of cards, 0-120 ms after it lies face up), 320 race cards at 1.0 and
2.5 s, wrong and asked (docs/rules-notes.md, "Flipper arming").

``race_pace_cpu_ms_per_card_2500ms``: the CPU time the simulated game takes
per race card at 2.5 s (the session, the judge and the order check on
every change of state: what the slow tests of tests/test_race_pace.py
spend, issue 30)."""

from __future__ import annotations

import time

from tests.kit.pacesim import Pace, simulate

CARDS = 2_000
PACES_MS = (1_000, 1_500, 2_500, 4_000)


def run():
    wrong, after = [], []
    for pace in PACES_MS:
        cpu = time.process_time()
        tally = simulate(CARDS, pace, seed=pace)
        if pace == 2_500:
            yield ("race_pace_cpu_ms_per_card_2500ms",
                   (time.process_time() - cpu) * 1e3 / tally.cards, "ms CPU")
        wrong.append(tally.pct(tally.wrong))
        after.append(tally.pct(tally.wrong_after_answer))
        yield f"race_pace_wrong_pct_{pace}ms", tally.pct(tally.wrong), "%"
        yield f"race_pace_flagged_pct_{pace}ms", tally.pct(tally.flagged), "%"
        if pace == 2_500:
            yield "race_pace_flagged_pct", tally.pct(tally.flagged), "%"
        if pace == 1_500:
            yield "race_pace_lost_presses_pct", tally.summary()["lost_presses_pct"], "%"
    yield "race_pace_wrong_pct", max(wrong), "%"
    yield "race_pace_wrong_after_answer_pct", max(after), "%"
    for pace in (1_000, 2_500):
        tally = simulate(300, pace, seed=pace, settings={"flipper_arms": True},
                         pace=Pace(pace_ms=pace, mark_chance=0.95))
        yield f"race_pace_flipper_arms_wrong_pct_{pace}ms", tally.pct(tally.wrong), "%"
        yield f"race_pace_flipper_arms_flagged_pct_{pace}ms", tally.pct(tally.flagged), "%"
