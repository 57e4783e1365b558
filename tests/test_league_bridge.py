"""Two real brokers (issue 24): a café broker bridged to a central one with
Mosquitto's own bridge (``companion league config --bridge``), the tables on
the café broker, the league (its own process) on the central one.

The long test runs issue 24's faults while three tables keep logging (see
tests/kit/league_faults.py): the bridge cut for 60 s times the fault-time scale
(``LEAGUE_FAULT_SCALE``, default 0.1), the league killed with SIGKILL, the
central broker killed with SIGKILL and its persistence file 5 s stale, both
started again: every event reaches the league exactly once, nobody resets
anything by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit.league_faults import MOSQUITTO, CafeNight, fault_scale, night
from tests.kit.helpers import wait_for

pytestmark = pytest.mark.skipif(not Path(MOSQUITTO).exists(),
                                reason="Debian's mosquitto is not installed")


def test_the_bridge_config_is_generated_by_the_league_command(tmp_path, capsys):
    from companion.league.__main__ import main

    central = tmp_path / "central"
    assert main(["config", "--out", str(central), "--tables", "t9",
                 "--cafe", "cafe1=t1,t2"]) == 0
    acl = (central / "acl").read_text()
    assert "user cafe1\ntopic write tabletop/t1/event" in acl
    assert "topic read tabletop/t2/mark" in acl
    cafe = tmp_path / "cafe"
    assert main(["config", "--out", str(cafe), "--tables", "t1,t2", "--bridge",
                 "mqtt://central.local:1883", "--bridge-user", "cafe1",
                 "--bridge-password-file", str(central / "secrets" / "cafe1.password")]) == 0
    conf = (cafe / "mosquitto.conf").read_text()
    password = (central / "secrets" / "cafe1.password").read_text().strip()
    for line in ("connection cafe1", "address central.local:1883", "remote_username cafe1",
                 f"remote_password {password}", "cleansession false",
                 "topic tabletop/+/event out 1", "topic tabletop/+/game/+ out 1",
                 "topic tabletop/+/mark in 1", "use_username_as_clientid true"):
        assert line in conf.splitlines(), line
    assert oct((cafe / "mosquitto.conf").stat().st_mode & 0o777) == "0o600"  # a password
    assert "user league" not in (cafe / "acl").read_text()       # no league at a café
    assert main(["config", "--out", str(cafe), "--tables", "t1", "--bridge", "mqtt://x"]) == 2


def test_a_table_on_a_cafe_broker_reaches_the_league_on_the_central_one(tmp_path):
    n = CafeNight(tmp_path, ["t1"]).start()
    try:
        t = n.tables[0]
        gid = t.session.new_game("chope", ["ana", "bo"])
        t.store.append(gid, {"type": "flip", "card": "food:laksa"})
        t.pub._wake.set()
        assert t.pub.delivered(30), t.pub.status()     # the mark came back over the bridge
        assert wait_for(lambda: n.tally() == (0, 0), timeout=10)
    finally:
        n.close()


@pytest.mark.slow
def test_every_event_reaches_the_league_exactly_once_through_bridge_cut_and_kills(tmp_path):
    result = night(tmp_path, tables=3, per_table=500, rate=20.0, scale=fault_scale(),
                   settle_s=120)
    assert result["logged"] == 1500
    assert (result["lost"], result["duplicated"]) == (0, 0), result
    assert [what for _, what in result["faults"]] == [
        "bridge cut", "bridge back", "league kill -9",
        "central broker kill -9 (file 5 s stale)", "central broker back", "league back"]
    assert result["rewinds"] >= 1          # the broker lost what it had acknowledged
