"""The words a new host read wrong on the phones (issue 33, "The words and
console items above fixed, each with a test"): each line as the page gets
it (the log's line, the page's JSON, the league's and the command's words)."""

from __future__ import annotations

from companion.record.store import Store
from companion.table.session import TableSession
from tests.test_food_poisoning import hawker_at_food_poisoning


# -- 1. Hawker Wars: Food Poisoning's log line and its banner -------------------

def test_food_poisoning_log_line_says_how_many_cards_the_loser_gives_up():
    """It read "cy let go first and loses  cards": the log words a race from
    the event alone, and the stake was only in the live race's info."""
    s = hawker_at_food_poisoning(Store(":memory:"), ["ana", "bo", "cy"])
    s.cancel_race()                              # the host logs the verdict by hand
    update = s.log({"type": "race", "loser": "cy"})
    assert update["data"]["line"] == "Food Poisoning! cy let go first and loses 2 cards"
    assert s.host_snapshot()["log"][-1]["line"].endswith("cy let go first and loses 2 cards")
    pending = s.host_snapshot()["view"]["pending"]
    assert (pending["kind"], pending["count"]) == ("lose", 2)   # the banner's "2 cards"


# -- 2. Chomp!: the Bad Chomp in an Ink Out ----------------------------------------

def test_a_bad_chomp_in_an_ink_out_says_the_bad_chomp_and_its_cost():
    """It read "Ink Out! Nobody" after cy's Bad Chomp cost cy 2 cards: the
    log's race line left out the penalties."""
    s = TableSession(Store(":memory:"))
    s.new_game("chomp", [{"name": n} for n in ("ana", "bo", "cy")])
    s.log({"type": "reveal", "cards": {"ana": "octopus", "bo": "seal", "cy": "plankton"}})
    s.cancel_race()
    update = s.log({"type": "race", "reason": "ink-out", "winner": None, "loser": None,
                    "tied": [], "false_starts": [], "ineligible": ["cy"]})
    assert update["data"]["line"] == (
        "Ink Out! nobody chomps; Bad Chomp: cy put their turned card and the top card "
        "of their pile in the centre")
    assert s.host_snapshot()["log"][-1]["line"] == update["data"]["line"]


# -- 3. The league screen: a game's place in its pod -------------------------------

def test_convention_standings_give_each_place_with_its_pod_size_not_a_fraction():
    """The standings read "1/3 2/3" (a fraction, like the points beside it):
    each place now comes as its round, place and pod size for the page to
    word ("1st of 3", "1er sur 3")."""
    from companion.league.convention import Convention
    from companion.league.store import LeagueStore
    from tests.kit.league import convention_result, plan

    store = LeagueStore(":memory:")
    conv = Convention(store, plan(), send=lambda t, p: None).open()
    pod = conv.current.pods[0]
    convention_result(store, pod.table, 1, [[p] for p in pod.players])
    conv.sweep()
    by_name = {s["name"]: s["places"] for s in conv.view()["standings"]}
    assert by_name[pod.players[1]] == [{"round": 1, "place": 2, "of": 3}]
    store.close()
