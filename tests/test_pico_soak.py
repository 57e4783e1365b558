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

from tests.kit.pico import MICROPYTHON, check, run_soak


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
