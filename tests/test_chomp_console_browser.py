"""Chomp! on the host console at a phone's 390 x 844 (issue 23): one tap a
card turned over (a grid of the creatures, one player's card at a time, the
grid never moving), the race starting by itself after the round's last
card, an Ink Out with no race and no wait (a Bad Chomp in it one tap, only
if someone slapped), and Undo under the host's thumb."""

from __future__ import annotations

from tests.kit.browser import BROWSER, expect_text, open_host, shot
from tests.kit.helpers import wait_for

pytestmark = BROWSER

PLAYERS = ("Ana", "Bo", "Cy")
GRID = "#chomp-cards button.event"


def on_screen(page, selector) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 844


def chomp_host(t, phone, **options):
    t.session.new_game("chomp", [{"name": n, "buzzer": n} for n in PLAYERS], options)
    host = open_host(phone(), t, strict=True)
    expect_text(host, "#chomp-whose", "Ana’s card")
    return host


def tap_card(host, card):
    before = host.evaluate("() => document.body.dataset.version")
    host.locator(GRID, has_text=card).first.click()
    host.wait_for_function("v => document.body.dataset.version !== v", arg=before)


def test_one_tap_a_card_and_the_race_starts_by_itself(live_server, phone):
    t = live_server
    host = chomp_host(t, phone)
    texts = host.locator(f"{GRID}").all_inner_texts()
    assert texts == ["Shark", "Seal", "Big Fish", "Little Fish", "Shrimp", "Plankton",
                     "Octopus", "Electric Eel"]
    top = host.locator(GRID).first.bounding_box()["y"]
    tap_card(host, "Seal")
    expect_text(host, "#logged", "^Logged: Ana: Seal$")
    expect_text(host, "#chomp-whose", "Bo’s card")
    assert host.locator(GRID).first.bounding_box()["y"] == top     # the grid never moves
    assert wait_for(lambda: on_screen(host, "#undo") and on_screen(host, f"{GRID} >> nth=7"), 10)
    shot(host, "host-chomp-grid.png")
    tap_card(host, "Shark")
    tap_card(host, "Plankton")                     # the last card: the race starts itself
    race = t.session.snapshot()["race"]
    assert race["phase"] in ("countdown", "live") and race["reason"] == "chomp"
    assert host.locator("#start-race").is_hidden()
    expect_text(host, "#race-phase", "[Cc]ountdown|[Gg][Oo]")
    shot(host, "host-chomp-race.png")
    t.source.press("Bo")
    expect_text(host, "#chomp-whose", "Ana’s card")          # round 2, nothing else tapped
    assert t.session.snapshot()["view"]["last_round"]["winner"] == "Bo"
    assert host.errors == []


def test_another_players_card_first_and_undo(live_server, phone):
    t = live_server
    host = chomp_host(t, phone)
    host.locator(".chomp-who button", has_text="Cy").click()
    expect_text(host, "#chomp-whose", "Cy’s card")
    tap_card(host, "Shrimp")
    expect_text(host, "#logged", "^Logged: Cy: Shrimp$")
    assert t.session.snapshot()["view"]["revealed"] == {"Cy": "shrimp"}
    expect_text(host, "#chomp-whose", "Ana’s card")
    host.click("#undo")
    expect_text(host, "#logged", "^Undone: ")
    assert t.session.snapshot()["view"]["revealed"] == {}
    assert host.errors == []


def test_an_ink_out_needs_no_race_and_a_slap_in_it_is_one_tap(live_server, phone):
    t = live_server
    host = chomp_host(t, phone)
    for card in ("Octopus", "Seal", "Plankton"):
        tap_card(host, card)
    snap = t.session.snapshot()
    assert snap["race"] is None and snap["view"]["next"] == "ink-out"
    expect_text(host, "#banner", "Ink Out")
    expect_text(host, "#chomp-whose", "Ana’s card")          # the next round at once
    expect_text(host, "#legal", "Who slapped in the Ink Out")
    slap = host.locator("#chomp-slaps button.event", has_text="Bo")
    shot(host, "host-chomp-ink-out.png")
    slap.click()
    expect_text(host, "#logged", "Bad Chomp: Bo slapped in the Ink Out")
    assert t.session.snapshot()["view"]["set_aside_count"] == 4
    text = host.locator("body").inner_text()
    assert "card(s)" not in text and "ink-out" not in text
    assert host.errors == []
