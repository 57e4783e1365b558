"""`companion serve` drives the buzzer box: LEDs follow the session's verdicts,
the cue counts down announced starts. Checked on gpiozero mock pin states."""

from __future__ import annotations

from tests.kit.helpers import toggles, wait_for


def lit(table, buzzer):
    return bool(table.feedback.leds[buzzer].pin.state)


def test_a_chope_table_race_lights_the_winners_led(live_server):
    table = live_server
    s = table.session
    assert s.game.name == "chope" and table.feedback is not None
    s.log({"type": "flip", "card": "table:red"})      # Ana flips a Table: Bo and Cy race
    table.source.press("Cy")
    assert wait_for(lambda: s.snapshot()["race"] and s.snapshot()["race"]["phase"] == "decided")
    assert s.snapshot()["race"]["verdict"]["winner"] == "Cy"
    assert wait_for(lambda: lit(table, "Cy"))
    assert not lit(table, "Bo") and not lit(table, "Ana")


def test_an_announced_start_counts_down_on_the_cue(live_server):
    table = live_server
    s = table.session
    s.new_game("chomp", [{"name": n, "buzzer": n} for n in ("Ana", "Bo", "Cy")])
    assert wait_for(lambda: table.feedback.referee is s.referee)
    s.log({"type": "reveal", "cards": {"Ana": "shrimp", "Bo": "seal", "Cy": "shark"}})
    cue = table.feedback.cue_led
    before = toggles(cue.pin)
    race = s.start_race(countdown_ms=300)
    assert race["phase"] == "countdown"
    assert wait_for(lambda: s.snapshot()["race"]["phase"] == "live")
    assert wait_for(lambda: toggles(cue.pin) >= before + 1)             # GO sounds
    table.source.press("Ana")                                           # the shrimp's owner
    table.source.press("Bo")
    assert wait_for(lambda: (s.snapshot()["race"] or {}).get("phase") == "decided"), \
        (s.snapshot()["race"], s.snapshot()["faults"])
    assert s.snapshot()["race"]["verdict"]["winner"] == "Bo"
    assert s.snapshot()["race"]["verdict"]["ineligible"] == ["Ana"]         # a Bad Chomp
    assert wait_for(lambda: lit(table, "Bo"))
