"""The host's slip on a phone (issue 29, G): the real server, buzzer
pipeline and mock buzzers, the host console at 390 x 844. Ana busts on a
second Laksa (her turn ends) and the host forgets to log it; Bo turns the
Blue Table, Ana slams it first. The host logs the Blue Table, then the
forgotten Laksa: the console asks "Laksa was turned before Blue Table?"
and one tap on "Swap them" logs them in their order: the Blue Table is
Ana's, as it was at the table."""

from __future__ import annotations

import pytest

from tests.kit.browser import BROWSER, expect_text, open_host, shot
from tests.kit.helpers import wait_for
from tests.kit.moments import tap
from tests.kit.scene import on_time

pytestmark = BROWSER

DECK = {"tables": {"red": 2, "blue": 2, "green": 1}, "mynahs": 2, "favourite_cards": ["laksa"],
        "foods": {"laksa": {"name": "Laksa", "kind": "main", "copies": 2},
                  "teh": {"name": "Teh tarik", "kind": "side", "copies": 2}}}
COLOURS = {"Ana": "blue", "Bo": "red", "Cy": "green"}


def races(s):
    from companion.record.eventlog import effective_events

    return [e for e in effective_events(e for _, e in s.store.events(s.game_id))
            if e.get("type") == "race"]


@pytest.mark.browser
def test_the_host_swaps_a_forgotten_card_with_one_tap(live_server, phone):
    t = live_server
    s = t.session
    h = open_host(phone(), t)

    def play(scene):
        s.new_game("chope", [{"name": n, "colour": c} for n, c in COLOURS.items()],
                   dict(DECK, colours=COLOURS))
        s.log({"type": "flip", "card": "food:laksa"})      # Ana's first Laksa
        # 1.0: Ana's second Laksa (a bust: her turn ends), not logged;
        # 2.5: Bo turns the Blue Table
        scene.at(2.8, "Ana's slam")
        tap(t, "Ana", 0.05)
        scene.at(3.0, "Cy's slam")
        tap(t, "Cy", 0.05)
        scene.at(3.3, "the Blue Table")
        s.log({"type": "flip", "card": "table:blue"})      # logged as if Ana turned it
        scene.at(3.9, "the forgotten Laksa")
        if s.desk.race is not None:     # the table's thread came late: a machine's slip
            scene.slip("the Blue Table's race still open at 3.9 s")
        s.log({"type": "flip", "card": "food:laksa"})      # the forgotten card
        scene.by(3.9, "the forgotten Laksa's log")
    on_time(play)
    expect_text(h, "#reorder", "Laksa was turned before Blue Table?")
    # the offer came above the cards, which stayed put: the bar at the
    # screen's top asks it, and a tap there brings it into view
    peek = h.locator("#race-peek")
    expect_text(h, "#race-peek", "^Laksa was turned before Blue Table\\?$")
    peek.click()
    peek.wait_for(state="hidden")
    assert h.locator("#reorder .reorder-q").bounding_box()["y"] >= 0
    swap = h.locator("#reorder-swap")
    assert swap.is_visible() and h.locator("#reorder-keep").is_visible()
    box = h.locator("#reorder").bounding_box()
    assert box is not None and box["width"] <= 390          # readable at 390 px
    shot(h, "host-slip-offer.png", full_page=False)
    swap.click()                                            # one tap
    assert wait_for(lambda: [r.get("winner") for r in races(s)] == ["Ana"], timeout=20)
    expect_text(h, "#logged", "Swapped: Laksa, then Blue Table")
    assert h.locator("#reorder").is_hidden()
    assert s.game.current_player(s.state) == "Bo"
    shot(h, "host-slip-swapped.png", full_page=False)
    assert h.errors == []
