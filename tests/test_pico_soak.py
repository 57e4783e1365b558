"""A soak of the real firmware under the MicroPython unix port
(firmware/sim/soak.py): simulated play on six buzzers with bounce storms,
garbage collection pauses, a host that stops reading and a cable pulled and
put back. What the host read must show no clock jump, no invented edge, and
every change it did not get as an edge reported as a fault.

The test runs 60 simulated seconds; ``python -m bench pico`` (and
``PICO_SOAK_S=600``) run the ten minutes."""

from __future__ import annotations

import os

import pytest

from tests.kit.pico import MICROPYTHON, check, run_slam, run_soak


@pytest.mark.slow
@pytest.mark.skipif(not MICROPYTHON.exists(), reason="no MicroPython unix port")
def test_a_soak_of_simulated_play_keeps_the_clock_and_invents_nothing(tmp_path):
    seconds = int(os.environ.get("PICO_SOAK_S", "60"))
    res = check(run_soak(seconds, 21, tmp_path))
    assert res["pauses"] and res["stalls"] and res["unplugs"] and res["storms"], res
    assert res["heartbeats"] >= seconds * 3 and res["edges"] > seconds, res
    assert res["clock_jumps"] == 0, res
    assert res["invented_edges"] == 0, res
    assert res["unreported_losses"] == 0, res
    assert res["corrupt_after_open"] == 0, res


@pytest.mark.skipif(not MICROPYTHON.exists(), reason="no MicroPython unix port")
def test_the_worst_slam_loses_no_edge_and_never_overflows(tmp_path):
    # all six buzzers within 1 ms, 20 bounces each, twice a second, garbage
    # collection pauses of up to 400 ms, 40 us a drained word (the budget
    # the 1024-word ring is sized for; 256 words overflowed in 60 s); local
    # ticks rebased every 8.4 s here (every 134 s on a box) so a minute
    # crosses several. `python -m bench pico` runs ten minutes.
    res = run_slam(60, 5, tmp_path, rebase_bits=24)
    assert res["slams"] >= 110 and res["words"] > 50_000 and res["rebases"] >= 3, res
    assert res["lost_edges"] == 0 and res["overflows"] == 0, res
    assert res["clock_jumps"] == 0 and res["invented_edges"] == 0, res
    assert res["max_local"] < 2**30, res
