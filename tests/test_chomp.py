"""Chomp! tracker tests, written from the rulebook (Chomp!, by Origame)
and the readings in docs/rules-notes.md (Chomp!).

Besides one scenario per rule, an independent model of a real table (cards as
list items, written from the rulebook, not from the tracker) scores random
games from their logs and plays real shuffled deals, which the tracker must
always accept.
"""

from __future__ import annotations

import copy
import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from companion.games import RulesError, get_game
from companion.games.chomp import MAX_REVEALS
from companion.record.gamefile import replay_lines
from tests.kit.helpers import run_until
from tests.kit.rulebooks import ChompTable, chomp_card_counts, chomp_options

ROOT = Path(__file__).resolve().parents[1]
G = get_game("chomp")
FOOD_CHAIN = {"shark": 6, "seal": 5, "big-fish": 4, "little-fish": 3, "shrimp": 2, "plankton": 1}
DEFAULTS = G.default_options()


def new(players="ana bo cy di", **options):
    return G.setup(players.split(), options)


def reveal(s, **cards):
    return G.apply(s, {"type": "reveal", "cards": cards})


def race(s, winner=None, tied=(), false_starts=(), ineligible=(), **extra):
    ev = {"type": "race", "winner": winner, "loser": None, "tied": list(tied),
          "false_starts": list(false_starts), "ineligible": list(ineligible), **extra}
    return G.apply(s, ev)


def seat(s, p):
    return next(x for x in G.public_view(s)["players"] if x["name"] == p)


def discards(s):
    return {x["name"]: x["discard"] for x in G.public_view(s)["players"]}


def illegal(s, ev, match):
    before = copy.deepcopy(s)
    with pytest.raises(RulesError, match=match):
        G.apply(s, ev)
    assert s == before


# -- set-up and the food chain --------------------------------------------

def test_setup_deals_all_fifty_cards_equally_extras_back_in_the_box():
    assert sum(DEFAULTS["counts"].values()) == 50           # 52 minus the 2 sequence cards
    for players, each, out in (("ana bo cy", 16, 2), ("ana bo cy di", 12, 2), ("a b c d e", 10, 0)):
        view = G.public_view(new(players))
        assert [x["pile"] for x in view["players"]] == [each] * len(players.split())
        assert view["out_of_play"] == out and view["deck_size"] == 50
        assert view["phase"] == "reveal" and view["mode"] == "multi"
    assert G.public_view(new("ana bo"))["mode"] == "underwater_war"


def test_food_chain_who_chomps_what():
    from companion.games.chomp import chomps
    assert all(chomps("shark", k) for k in FOOD_CHAIN if k != "shark")
    assert not chomps("shark", "shark") and not chomps("seal", "shark")
    assert chomps("shrimp", "plankton") and not chomps("plankton", "plankton")
    assert not any(chomps(k, "plankton") for k in ("octopus", "eel"))
    assert not any(chomps("shark", k) for k in ("octopus", "eel"))


# -- the rulebook's own example --------------------------------------------

def example():
    return reveal(new(), ana="seal", bo="shark", cy="big-fish", di="big-fish")


def test_rulebook_example_only_seal_and_shark_may_chomp_the_big_fish():
    req = G.race_request(example())
    assert (req.kind, req.reason, req.announced) == ("first-press", "chomp", True)
    assert req.eligible == ("ana", "bo") and req.players == ("ana", "bo", "cy", "di")
    view = G.public_view(example())
    assert view["lowest"] == "big-fish" and view["may_chomp"] == ["ana", "bo"]
    assert view["phase"] == "race" and view["revealed"]["bo"] == "shark"


def test_rulebook_example_shark_chomping_first_takes_all_the_cards():
    s = race(example(), "bo")
    assert discards(s) == {"ana": 0, "bo": 4, "cy": 0, "di": 0}
    assert G.scores(s) == {"ana": 11, "bo": 15, "cy": 11, "di": 11}


def test_rulebook_example_seal_takes_both_big_fish_and_her_own_card_shark_to_its_owner():
    s = race(example(), "ana")
    assert discards(s) == {"ana": 3, "bo": 1, "cy": 0, "di": 0}
    assert G.public_view(s)["last_round"]["took"] == 3


def test_the_lowest_card_is_yours_you_may_not_chomp():
    s = reveal(new("ana bo cy"), ana="seal", bo="shark", cy="plankton")
    assert G.race_request(s).eligible == ("ana", "bo")
    illegal(s, {"type": "race", "winner": "cy"}, "the lowest card, the Plankton, is theirs")


# -- Bad Chomps --------------------------------------------------------------

def test_bad_chomp_slapping_your_own_card_winner_takes_both_your_cards():
    s = reveal(new("ana bo cy"), ana="seal", bo="shark", cy="plankton")
    s = race(s, "bo", ineligible=["cy"])
    assert discards(s) == {"ana": 0, "bo": 4, "cy": 0}     # seal, plankton, cy's penalty, own
    assert seat(s, "cy")["pile"] == 14 and G.public_view(s)["last_round"]["bad_chomps"] == ["cy"]


def test_bad_chomp_slapping_a_card_the_same_as_yours():
    s = race(example(), "ana", ineligible=["cy"])
    assert discards(s) == {"ana": 4, "bo": 1, "cy": 0, "di": 0}
    assert seat(s, "cy")["pile"] == 10


def test_bad_chomp_slapping_a_higher_card_cannot_be_pressed():
    """A buzzer press means "I chomp the lowest card"; a player whose card is
    higher than the lowest may do that, so her press is never ineligible."""
    illegal(example(), {"type": "race", "winner": "bo", "ineligible": ["ana"]},
            "cannot be ineligible")


def test_an_ink_out_needs_no_race_and_no_tap():
    """"Since no one can see, no one can chomp and all cards played are set
    aside. Each player plays another card": the tracker sets them aside at
    once; nothing waits for a race."""
    s = reveal(new("ana bo cy"), ana="octopus", bo="seal", cy="plankton")
    assert G.race_request(s) is None
    view = G.public_view(s)
    assert view["phase"] == "reveal" and view["next"] == "ink-out"
    assert view["set_aside_count"] == 3 and view["last_round"]["result"] == "ink-out"
    assert view["ink_out"] and "Ink Out" in view["status"]
    assert [e["type"] for e in G.host_events(s)].count("turn") == 3 * 8


def test_bad_chomp_in_an_octopus_ink_out():
    """"slap a card in an Octopus Ink Out": logged after the tracker set the
    cards aside, it costs the top card of the slapper's pile."""
    s = reveal(new("ana bo cy"), ana="octopus", bo="seal", cy="plankton")
    offered = [e for e in G.host_events(s) if e["type"] == "race"]
    assert [e["ineligible"] for e in offered] == [["ana"], ["bo"], ["cy"]]
    illegal(s, {"type": "race", "reason": "ink-out", "winner": "bo"},
            "no one can chomp in an Octopus Ink Out")
    illegal(s, {"type": "race", "reason": "ink-out", "tied": ["bo", "cy"]}, "no tie")
    illegal(s, {"type": "race", "reason": "ink-out", "ineligible": ["zed"]}, "zed")
    illegal(s, {"type": "race", "reason": "chomp", "ineligible": ["bo"]}, "no race is pending")
    s = race(s, ineligible=["bo"], reason="ink-out")
    aside = G.public_view(s)["set_aside"]
    assert len(aside) == 4 and [i["why"] for i in aside].count("bad-chomp") == 1
    assert {"owner": "bo", "card": None, "face_down": True, "why": "bad-chomp"} in aside
    assert seat(s, "bo")["pile"] == 14 and G.public_view(s)["last_round"]["bad_chomps"] == ["bo"]
    G.check_invariants(s)


def test_an_ink_out_logged_anyway_is_the_same_step():
    """An old console (or file) logs the Ink Out's race: "nobody" changes
    nothing, even after some of the next round's cards are turned over."""
    s = reveal(new("ana bo cy"), ana="octopus", bo="seal", cy="plankton")
    s = G.apply(s, {"type": "turn", "player": "ana", "card": "shark"})
    again = race(s, reason="ink-out")
    assert G.public_view(again) == G.public_view(s)
    s = G.apply(again, {"type": "turn", "player": "bo", "card": "seal"})
    s = G.apply(s, {"type": "turn", "player": "cy", "card": "plankton"})
    assert G.race_request(s).reason == "chomp"
    illegal(s, {"type": "race", "reason": "ink-out"}, "the race under way is 'chomp'")


def test_a_bad_chomp_in_an_ink_out_can_wash_a_player_up():
    s = new("ana bo cy", counts={"octopus": 1, "seal": 2, "plankton": 2, "shark": 1})
    s = reveal(s, ana="octopus", bo="seal", cy="plankton")
    s = race(s, reason="ink-out", ineligible=["ana"])       # her last card, face down
    view = G.public_view(s)
    assert seat(s, "ana")["eliminated"] and view["set_aside_count"] == 4
    G.check_invariants(s)
    illegal(s, {"type": "race", "reason": "ink-out", "ineligible": ["ana"]}, "washed up")


def test_bad_chomp_with_no_winner_the_next_winner_takes_your_cards():
    s = reveal(new("ana bo cy"), ana="shark", bo="seal", cy="seal")
    s = race(s, ineligible=["cy"])                      # cy slaps bo's seal, nobody chomps
    assert discards(s) == {"ana": 1, "bo": 1, "cy": 0}
    assert [(i["owner"], i["card"]) for i in G.public_view(s)["set_aside"]] == [
        ("cy", "seal"), ("cy", None)]
    s = reveal(s, ana="plankton", bo="shrimp", cy="little-fish")
    s = race(s, "bo")                                   # the seal is higher than bo's shrimp
    assert discards(s) == {"ana": 1, "bo": 1 + 4, "cy": 1}
    assert G.public_view(s)["set_aside"] == []


def test_bad_chomp_with_no_cards_left_gives_only_the_turned_card():
    s = new("ana bo cy", counts={"seal": 1, "shark": 1, "plankton": 1})
    s = race(reveal(s, ana="seal", bo="shark", cy="plankton"), "bo", ineligible=["cy"])
    assert G.finished(s) and G.public_view(s)["winner"] == "bo"
    assert G.scores(s) == {"ana": 0, "bo": 3, "cy": 0}


def test_false_start_is_not_a_bad_chomp_by_default():
    s = race(example(), "ana", false_starts=["bo"])
    assert seat(s, "bo")["pile"] == 11 and discards(s)["bo"] == 1


def test_false_start_is_a_bad_chomp_with_the_option():
    s = reveal(new(false_start_is_bad_chomp=True), ana="seal", bo="shark", cy="big-fish",
               di="big-fish")
    illegal(s, {"type": "race", "winner": "bo", "false_starts": ["bo"]}, "false start")
    s = race(s, "ana", false_starts=["bo"])
    assert seat(s, "bo")["pile"] == 10 and discards(s) == {"ana": 5, "bo": 0, "cy": 0, "di": 0}


def test_a_referee_verdict_from_buzzer_edges_settles_the_round():
    """The race as the session logs it: the spec from race_request, the
    edges, the verdict; replaying the file re-judges it (photo finish)."""
    from companion.races.edges import Edge
    from companion.races.referee import RaceSpec, judge
    from companion.record.gamefile import header
    req = G.race_request(example())
    spec = RaceSpec(req.kind, players=req.players, eligible=req.eligible, arm_ns=10_000_000)
    edges = [Edge("di", True, 9_000_000), Edge("cy", True, 10_001_000),
             Edge("bo", True, 10_002_000), Edge("ana", True, 10_003_000)]
    verdict = judge(spec, edges).to_json()
    assert (verdict["winner"], verdict["ineligible"], verdict["false_starts"]) == (
        "bo", ["cy"], ["di"])
    lines = [json.dumps(header("chomp", ["ana", "bo", "cy", "di"])),
             json.dumps({"type": "reveal", "cards": req.info["cards"]}),
             json.dumps({"type": "race", "reason": req.reason, "spec": spec.to_json(),
                         "edges": [e.to_json() for e in edges], **verdict})]
    s = replay_lines(lines).state
    assert discards(s) == {"ana": 0, "bo": 5, "cy": 0, "di": 0}   # 4 turned + cy's penalty


# -- Electric Eel and Octopus ------------------------------------------------

def test_feeding_frenzy_first_press_takes_all_even_higher_cards():
    s = reveal(new("ana bo cy"), ana="eel", bo="shark", cy="plankton")
    req = G.race_request(s)
    assert (req.reason, req.eligible) == ("feeding-frenzy", ("ana", "bo", "cy"))
    assert G.public_view(s)["feeding_frenzy"] and G.public_view(s)["lowest"] is None
    s = race(s, "cy", reason="feeding-frenzy")
    assert discards(s) == {"ana": 0, "bo": 0, "cy": 3}


def test_octopus_vs_electric_eel_the_eel_prevails():
    s = reveal(new("ana bo cy"), ana="octopus", bo="eel", cy="shark")
    assert G.race_request(s).reason == "feeding-frenzy"
    assert discards(race(s, "ana")) == {"ana": 3, "bo": 0, "cy": 0}


def test_ink_out_cards_set_aside_next_winner_takes_them_and_what_she_can_chomp():
    s = reveal(new("ana bo cy"), ana="octopus", bo="shark", cy="seal")
    view = G.public_view(s)
    assert view["set_aside_count"] == 3 and view["next"] == "ink-out"
    assert "Ink Out" in view["status"]
    s2 = reveal(s, ana="seal", bo="big-fish", cy="plankton")
    assert discards(race(s2, "ana")) == {"ana": 6, "bo": 0, "cy": 0}
    # the big fish can't chomp the seal: "reclaimed by the players who turned them over"
    assert discards(race(s2, "bo")) == {"ana": 1, "bo": 5, "cy": 0}


# -- ties, nobody chomping ---------------------------------------------------

def tie_round(**options):
    s = reveal(new("ana bo cy", **options), ana="shark", bo="shark", cy="plankton")
    s = race(s, tied=["ana", "bo"])
    assert G.public_view(s)["set_aside_count"] == 3 and G.public_view(s)["next"] == "tie"
    return race(reveal(s, ana="plankton", bo="little-fish", cy="seal"), "bo")


def test_tie_winner_of_the_next_round_takes_all_the_tie_round_cards():
    assert discards(tie_round()) == {"ana": 0, "bo": 5, "cy": 1}


def test_tie_round_cards_chompable_option_unchompable_ones_go_back():
    assert discards(tie_round(tie_round_cards="chompable")) == {"ana": 1, "bo": 4, "cy": 1}


def test_tie_needs_two_players_who_may_chomp():
    s = reveal(new("ana bo cy"), ana="shark", bo="seal", cy="plankton")
    illegal(s, {"type": "race", "tied": ["ana"]}, "two or more")
    illegal(s, {"type": "race", "tied": ["ana", "cy"]}, "two or more")


def test_all_cards_the_same_nobody_may_chomp_and_they_go_back():
    s = reveal(new("ana bo cy"), ana="seal", bo="seal", cy="seal")
    assert G.race_request(s).eligible == ()
    assert "No one can chomp" in G.public_view(s)["status"]
    assert discards(race(s)) == {"ana": 1, "bo": 1, "cy": 1}
    s = race(s, ineligible=["ana"])                       # slapped a card the same as hers
    assert len(G.public_view(s)["set_aside"]) == 2


def test_nobody_chomps_cards_go_to_their_owners_or_stay_with_the_option():
    s = race(example())
    assert discards(s) == {"ana": 1, "bo": 1, "cy": 1, "di": 1}
    assert G.public_view(s)["last_round"]["result"] == "no-chomp"
    s = reveal(new(no_chomp="set_aside"), ana="seal", bo="shark", cy="big-fish", di="big-fish")
    s = race(s)
    assert discards(s) == {"ana": 0, "bo": 0, "cy": 0, "di": 0}
    assert G.public_view(s)["set_aside_count"] == 4


# -- running out -------------------------------------------------------------

SIX = {"shark": 1, "seal": 1, "big-fish": 1, "little-fish": 1, "shrimp": 1, "plankton": 1}


def two_rounds(**options):
    """3 players, 2 cards each: ana sweeps round 1, bo wins round 2, cy is washed up."""
    s = new("ana bo cy", counts=SIX, **options)
    s = race(reveal(s, ana="shark", bo="seal", cy="plankton"), "ana")
    assert [seat(s, p)["pile"] for p in ("ana", "bo", "cy")] == [1, 1, 1]
    return race(reveal(s, ana="big-fish", bo="little-fish", cy="shrimp"), "bo")


def test_pile_runs_out_shuffle_the_discard_pile_and_play_on():
    s = two_rounds(two_player_end="underwater_war")
    assert (seat(s, "ana")["pile"], seat(s, "ana")["discard"]) == (4, 0)
    assert (seat(s, "bo")["pile"], seat(s, "bo")["discard"]) == (2, 0)
    assert G.host_view(s)["known"]["bo"]["pile"] == {"little-fish": 1, "shrimp": 1}


def test_washed_up_when_all_your_cards_are_chomped():
    s = two_rounds(two_player_end="underwater_war")
    assert seat(s, "cy")["eliminated"] and seat(s, "cy")["eliminated_round"] == 2
    assert G.ranking(s)[-1] == ["cy"]
    illegal(s, {"type": "reveal", "cards": {"ana": "shark", "bo": "shrimp", "cy": "seal"}},
            "washed up")


def test_two_player_end_count_the_most_cards_wins():
    s = two_rounds()
    assert G.finished(s) and G.public_view(s)["winner"] == "ana"
    assert G.scores(s) == {"ana": 4, "bo": 2, "cy": 0}
    assert G.ranking(s) == [["ana"], ["bo"], ["cy"]]
    illegal(s, {"type": "reveal", "cards": {"ana": "shark", "bo": "shrimp"}}, "over")


def test_two_player_end_count_equal_cards_share_the_win():
    s = new("ana bo cy", counts={"shark": 2, "seal": 2, "plankton": 2})
    s = race(reveal(s, ana="shark", bo="seal", cy="plankton"), "ana")
    s = race(reveal(s, ana="plankton", bo="shark", cy="seal"), "bo")
    assert G.finished(s) and G.scores(s) == {"ana": 3, "bo": 3, "cy": 0}
    assert G.ranking(s) == [["ana", "bo"], ["cy"]] and G.public_view(s)["winner"] is None


def test_two_player_end_underwater_war_switches_games():
    s = two_rounds(two_player_end="underwater_war")
    view = G.public_view(s)
    assert not G.finished(s) and view["mode"] == "underwater_war"
    assert view["status"].startswith("Underwater War")
    s = reveal(s, ana="shark", bo="shrimp")              # no race: the higher takes both
    assert G.race_request(s) is None and discards(s)["ana"] == 2


def test_last_player_with_cards_wins_and_sweeps_the_centre():
    s = new("ana bo cy", counts={**SIX, "big-fish": 0, "octopus": 1})
    s = race(reveal(s, ana="shark", bo="seal", cy="plankton"), "ana")
    s = reveal(s, ana="octopus", bo="little-fish", cy="shrimp")     # Ink Out: no race
    assert G.finished(s) and G.public_view(s)["winner"] == "ana"
    assert G.scores(s) == {"ana": 6, "bo": 0, "cy": 0}
    assert G.ranking(s) == [["ana"], ["bo", "cy"]]


def test_everyone_out_of_cards_while_cards_are_set_aside_is_a_draw():
    s = new("ana bo cy", counts={"shark": 2, "plankton": 1})
    s = race(reveal(s, ana="shark", bo="shark", cy="plankton"), tied=["ana", "bo"])
    assert G.finished(s) and G.public_view(s)["winner"] is None
    assert G.ranking(s) == [["ana", "bo", "cy"]]


# -- Underwater War (2 players) ----------------------------------------------

def test_underwater_war_the_higher_creature_takes_both_cards():
    s = reveal(new("ana bo"), ana="seal", bo="shark")
    assert G.race_request(s) is None
    assert discards(s) == {"ana": 0, "bo": 2}
    assert G.public_view(s)["last_round"]["result"] == "higher"


def test_underwater_war_tie_two_face_down_one_face_up_higher_takes_all():
    s = reveal(new("ana bo"), ana="seal", bo="seal")
    view = G.public_view(s)
    assert view["next"] == "war" and view["set_aside_count"] == 6
    assert [i["face_down"] for i in view["set_aside"]].count(True) == 4
    assert seat(s, "ana")["pile"] == 22
    s = reveal(s, ana="plankton", bo="shrimp")
    assert discards(s) == {"ana": 0, "bo": 8}


def test_underwater_war_tie_short_of_cards_turns_up_the_last_one():
    s = new("ana bo", counts={"seal": 2, "shark": 1, "plankton": 1})
    s = reveal(s, ana="seal", bo="seal")                 # 1 card each left: none face down
    assert G.public_view(s)["set_aside_count"] == 2
    s = reveal(s, ana="shark", bo="plankton")
    assert G.finished(s) and G.scores(s) == {"ana": 4, "bo": 0}


def test_underwater_war_tie_with_no_card_left_loses():
    s = new("ana bo", counts={"seal": 2, "shark": 1, "plankton": 1})
    s = reveal(s, ana="shark", bo="plankton")
    s = reveal(s, ana="seal", bo="seal")                 # bo has nothing to put down
    assert G.finished(s) and G.public_view(s)["winner"] == "ana"
    assert G.scores(s) == {"ana": 4, "bo": 0} and G.ranking(s) == [["ana"], ["bo"]]


def test_underwater_war_electric_eel_first_to_press_takes_the_cards():
    s = reveal(new("ana bo"), ana="eel", bo="shark")
    req = G.race_request(s)
    assert (req.reason, req.eligible, req.announced) == ("feeding-frenzy", ("ana", "bo"), True)
    assert discards(race(s, "bo")) == {"ana": 0, "bo": 2}


def test_underwater_war_has_no_bad_chomps():
    s = reveal(new("ana bo", false_start_is_bad_chomp=True), ana="eel", bo="shark")
    s = race(s, "ana", false_starts=["bo"])
    assert discards(s) == {"ana": 2, "bo": 0} and seat(s, "bo")["pile"] == 24


def test_underwater_war_octopus_each_turns_over_the_next_card():
    s = reveal(new("ana bo"), ana="octopus", bo="seal")
    assert G.race_request(s) is None and G.public_view(s)["next"] == "next-card"
    s = reveal(s, ana="shark", bo="plankton")
    assert discards(s) == {"ana": 4, "bo": 0}


# -- impossible cards and malformed events -----------------------------------

def test_more_creatures_than_the_deck_holds_is_refused_state_unchanged():
    s = new()                                            # 3 Electric Eels in the deck
    illegal(s, {"type": "reveal", "cards": dict.fromkeys(["ana", "bo", "cy", "di"], "eel")},
            "3 Electric Eel cards are already accounted for")
    illegal(new(counts={"shark": 8}), {"type": "reveal", "cards": {
        "ana": "shark", "bo": "shark", "cy": "shark", "di": "octopus"}}, "no Octopus in this deck")
    illegal(s, {"type": "reveal", "cards": {"ana": "whale", "bo": "eel", "cy": "eel",
                                            "di": "eel"}}, "not a Chomp! card")


def test_seen_cards_are_remembered_across_rounds():
    s = new("ana bo cy", counts={**SIX, "shark": 2, "seal": 2, "shrimp": 2},
            two_player_end="underwater_war")               # 9 cards: 3 each
    s = race(reveal(s, ana="shark", bo="seal", cy="plankton"), "ana")
    s = race(reveal(s, ana="shark", bo="little-fish", cy="shrimp"), "ana")
    s = race(reveal(s, ana="big-fish", bo="seal", cy="shrimp"), "bo")
    # ana's pile is her shuffled discard pile: six cards, every one seen
    assert seat(s, "ana")["pile"] == 6 and G.host_view(s)["unseen"] == {}
    illegal(s, {"type": "reveal", "cards": {"ana": "big-fish", "bo": "seal"}}, "already seen")
    illegal(s, {"type": "reveal", "cards": {"ana": "shark"}}, "missing bo")
    assert discards(reveal(s, ana="shark", bo="big-fish")) == {"ana": 2, "bo": 0, "cy": 0}


def test_events_in_the_wrong_phase_or_malformed_are_refused():
    s = example()
    illegal(s, {"type": "reveal", "cards": {}}, "settle the race")
    illegal(s, {"type": "race", "reason": "feeding-frenzy", "winner": "bo"}, "race under way")
    illegal(s, {"type": "race", "winner": "bo", "loser": "cy"}, "never a loser")
    illegal(s, {"type": "race", "winner": "bo", "tied": ["ana", "bo"]}, "not both")
    illegal(s, {"type": "race", "winner": "zed"}, "turned no card")
    illegal(s, {"type": "race", "ineligible": "cy"}, "list")
    illegal(s, {"type": "slap"}, "unknown event")
    illegal(new(), {"type": "race", "winner": "bo"}, "no race is pending")
    illegal(new(), {"type": "reveal", "cards": ["seal"]}, "must be an object")


@pytest.mark.parametrize("options, match", [
    ({"two_player_end": "sudden_death"}, "two_player_end"),
    ({"false_start_is_bad_chomp": "yes"}, "false_start_is_bad_chomp"),
    ({"counts": {"shark": -1}}, "whole number"),
    ({"counts": {"kraken": 3}}, "not a Chomp! card"),
    ({"counts": {"shark": 2}}, "cannot be dealt"),
    ({"colour": "red"}, "unknown option"),
])
def test_setup_options_are_checked(options, match):
    with pytest.raises(RulesError, match=match):
        G.setup(["ana", "bo", "cy"], options)


def test_card_names_as_the_host_types_them():
    s = G.apply(new("ana bo cy"), {"type": "reveal", "cards": {
        "ana": "Big Fish", "bo": "Electric Eel", "cy": "little_fish"}})
    assert G.public_view(s)["revealed"] == {"ana": "big-fish", "bo": "eel", "cy": "little-fish"}


# -- views and the host console ----------------------------------------------

def test_public_view_is_json_and_keeps_face_down_cards_secret():
    s = new("ana bo cy", counts={"shark": 3, "seal": 3})   # piles of Sharks and Seals only
    s = race(reveal(s, ana="shark", bo="shark", cy="seal"), ineligible=["cy"])
    view = G.public_view(s)
    json.dumps(view)
    assert {"mode", "round", "phase", "next", "status", "players", "revealed", "lowest",
            "may_chomp", "feeding_frenzy", "ink_out", "race", "set_aside", "set_aside_count",
            "out_of_play", "deck", "deck_size", "cards", "last_round", "finished", "winner",
            "rules"} <= set(view)
    assert view["cards"]["big-fish"] == {"name": "Big Fish", "rank": 4}
    assert set(view["players"][0]) == {"name", "pile", "discard", "cards", "card", "may_chomp",
                                       "eliminated", "eliminated_round"}
    assert view["set_aside"][-1] == {"owner": "cy", "card": None, "face_down": True,
                                     "why": "bad-chomp"}
    assert "unseen" in G.host_view(s) and "unseen" not in view
    json.dumps(G.host_view(s))


def test_reveal_chance_two_players_every_reveal_with_its_exact_probability():
    """A fresh deal: both piles are face down, so ana's card is any of the 50
    with equal chance, and bo's any of the 49 others (drawing without
    replacement from the deck composition)."""
    counts = DEFAULTS["counts"]
    outcomes = G.chance_outcomes(new("ana bo"))
    assert len(outcomes) == 8 * 8 and G.decisions(new("ana bo")) == []
    for ev, p in outcomes:
        a, b = ev["cards"]["ana"], ev["cards"]["bo"]
        assert p == Fraction(counts[a], 50) * Fraction(counts[b] - (a == b), 49)
    assert sum(p for _, p in outcomes) == 1
    shown = {tuple(sorted(set(ev["cards"].values()))) for ev, _ in outcomes}
    assert ("eel", "shark") in shown and ("octopus",) in shown     # Frenzies, wars


def test_reveal_chance_six_players_one_card_at_a_time():
    """8**6 whole reveals are too many to list: the chance is each player's
    card in seating order, exact given the cards already turned over."""
    counts = DEFAULTS["counts"]
    s = new("a b c d e f")
    assert 8 ** 6 > MAX_REVEALS
    turned = []
    for p in "abcdef":
        outcomes = G.chance_outcomes(s)
        assert {ev["player"] for ev, _ in outcomes} == {p}
        assert {ev["type"] for ev, _ in outcomes} == {"turn"}
        left = 50 - len(turned)
        for ev, q in outcomes:
            assert q == Fraction(counts[ev["card"]] - turned.count(ev["card"]), left)
        assert G.legal_events(s) == [ev for ev, _ in outcomes]
        card = "eel" if p == "c" else "plankton"
        s = G.apply(s, {"type": "turn", "player": p, "card": card})
        turned.append(card)
        assert G.public_view(s)["revealed"][p] == card
    assert G.race_request(s).reason == "feeding-frenzy"
    assert G.chance_outcomes(s) == []


def test_reveal_chance_seen_cards_count_for_their_pile():
    """A pile whose cards are all seen turns up each of them with its share
    of the pile (its order is shuffled, its contents known)."""
    s = new("ana bo cy", counts={**SIX, "shark": 2, "seal": 2, "shrimp": 2},
            two_player_end="underwater_war")
    s = race(reveal(s, ana="shark", bo="seal", cy="plankton"), "ana")
    s = race(reveal(s, ana="shark", bo="little-fish", cy="shrimp"), "ana")
    s = race(reveal(s, ana="big-fish", bo="seal", cy="shrimp"), "bo")
    # ana's pile is her discard pile: 2 Sharks, Seal, Plankton, Little Fish, Shrimp;
    # bo's is his: Big Fish, Shrimp, Seal. Every card is seen.
    odds = dict(((ev["cards"]["ana"], ev["cards"]["bo"]), p) for ev, p in G.chance_outcomes(s))
    assert odds[("shark", "seal")] == Fraction(2, 6) * Fraction(1, 3)
    assert odds[("shrimp", "big-fish")] == Fraction(1, 6) * Fraction(1, 3)
    assert len(odds) == 5 * 3 and sum(odds.values()) == 1


def test_whole_reveal_odds_are_the_product_of_each_players_odds():
    s = race(reveal(new("ana bo cy"), ana="shark", bo="seal", cy="plankton"), "ana")
    whole = G.chance_outcomes(s)
    assert len(whole) > 100 and {ev["type"] for ev, _ in whole} == {"reveal"}
    for ev, p in whole[::37]:
        q = Fraction(1)
        # one player at a time, through the tracker's own turn events
        t = s
        for player, card in ev["cards"].items():
            t_odds = {}
            for e, x in G.chance_outcomes(t):
                if e["type"] == "reveal":
                    t_odds.setdefault(e["cards"][player], Fraction(0))
                    t_odds[e["cards"][player]] += x
                else:
                    t_odds[e["card"]] = x
            q *= t_odds[card]
            t = G.apply(t, {"type": "turn", "player": player, "card": card})
        assert q == p
        assert G.public_view(t) == G.public_view(G.apply(s, ev))


def test_a_copy_of_the_state_shares_only_what_never_changes():
    from companion.games.chomp import FIXED
    s = race(reveal(new("ana bo cy"), ana="shark", bo="shark", cy="plankton"), ineligible=["cy"])
    c = G.copy_state(s)
    assert c == s
    for key, value in s.items():
        if isinstance(value, (dict, list)):
            assert (c[key] is value) == (key in FIXED), key


def test_turn_events_and_a_reveal_of_the_rest_make_one_round():
    s = G.apply(new("ana bo cy"), {"type": "turn", "player": "bo", "card": "shark"})
    assert G.race_request(s) is None and G.public_view(s)["phase"] == "reveal"
    illegal(s, {"type": "turn", "player": "bo", "card": "seal"}, "already turned")
    illegal(s, {"type": "turn", "player": "zed", "card": "seal"}, "not in the game")
    illegal(s, {"type": "reveal", "cards": {"ana": "seal", "bo": "seal", "cy": "seal"}},
            "already turned")
    illegal(s, {"type": "reveal", "cards": {"ana": "seal"}}, "missing cy")
    s = G.apply(s, {"type": "reveal", "cards": {"cy": "big-fish", "ana": "seal"}})
    req = G.race_request(s)
    assert req.players == ("ana", "bo", "cy") and req.eligible == ("ana", "bo")
    assert G.describe({"type": "turn", "player": "bo", "card": "eel"}) == \
        "bo turns over Electric Eel"


def test_race_outcomes_cover_winners_ties_bad_chomps_and_all_apply():
    s = example()
    outcomes = G.legal_events(s)
    assert outcomes == G.race_outcomes(s)
    assert {e["winner"] for e in outcomes} == {"ana", "bo", None}
    assert any(e["tied"] for e in outcomes) and any(e["ineligible"] == ["cy"] for e in outcomes)
    assert any(e["ineligible"] == ["cy", "di"] for e in outcomes)
    for ev in outcomes:
        G.check_invariants(G.apply(s, ev))


def test_declared_race_reasons_and_score_unit():
    info = G.info()
    assert info["score_unit"] == "cards"
    assert set(info["race_reasons"]) == {"chomp", "feeding-frenzy", "ink-out"}
    assert G.race_reason("chomp").word({"winner": "bo"}) == "bo chomps!"
    assert G.race_reason("ink-out").ineligible == "Bad Chomp"
    assert {st.name for st in G.settings} == set(DEFAULTS)
    assert next(st for st in G.settings if st.name == "counts").assumed


def test_describe_says_what_happened():
    assert G.describe({"type": "reveal", "cards": {"ana": "big-fish"}}) \
        == "turned over: ana Big Fish"
    assert G.describe({"type": "race", "reason": "chomp", "winner": "bo", "ineligible": ["cy"]}) \
        == "bo chomps; Bad Chomp: cy"
    assert G.describe({"type": "race", "reason": "ink-out"}) == "Ink Out! nobody chomps"


# -- an independent model of the table (tests.kit.rulebooks, one copy) --------

RealTable = ChompTable
rulebook_card_counts = chomp_card_counts
random_options = chomp_options


@pytest.mark.parametrize("seed", range(40))
def test_real_shuffled_deals_are_always_accepted(seed):
    """Cards really dealt and reshuffled: every reveal must be legal, the races
    must be the ones the rulebook calls, and the card counts must agree."""
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(rng.choice([2, 3, 4, 5, 6]))]
    options = random_options(rng, players) if seed % 2 else {"two_player_end": "underwater_war"}
    deck = [k for k, n in {**DEFAULTS, **options}["counts"].items() for _ in range(n)]
    rng.shuffle(deck)
    table = RealTable(players, options, deck, rng)
    s = G.setup(players, options)
    for _ in range(3000):
        if table.over:
            break
        cards = table.turn_over()
        s = G.apply(s, {"type": "reveal", "cards": dict(cards)})
        if table.reason:
            assert G.race_request(s).eligible == tuple(table.may_chomp())
            ev = rng.choice(G.legal_events(s))
            s = G.apply(s, ev)
            table.race(ev)
        elif not table.war and not table.over and "octopus" in cards.values() \
                and "eel" not in cards.values() and rng.random() < 0.5:
            assert G.race_request(s) is None          # an Ink Out: set aside, no race
            ev = rng.choice([e for e in G.host_events(s) if e["type"] == "race"])
            s = G.apply(s, ev)                        # someone slapped in it
            table.race(ev)
        G.check_invariants(s)
        assert G.scores(s) == table.cards()
    assert table.over and G.finished(s)


def test_example_game_replays_to_the_end():
    with open(ROOT / "docs" / "examples" / "chomp.jsonl") as f:
        rep = replay_lines(f)
    summary = rep.summary()
    assert summary["finished"] and summary["game"] == "chomp"
    assert summary["scores"] == rulebook_card_counts(rep, rep.players)
    kinds = {json.dumps(e.get("reason")) for e in rep.events}
    assert {'"chomp"', '"feeding-frenzy"', '"ink-out"'} <= kinds
    assert 40 <= len(rep.events) <= 100


# -- the host console: one tap a card, the race by itself ---------------------

def test_the_console_offers_one_button_a_card_in_any_order():
    s = new("ana bo cy")
    offered = G.host_events(s)
    assert {e["type"] for e in offered} == {"turn"}
    assert [e["player"] for e in offered] == ["ana"] * 8 + ["bo"] * 8 + ["cy"] * 8
    assert [e["card"] for e in offered[:8]] == list(FOOD_CHAIN) + ["octopus", "eel"]
    s = G.apply(s, {"type": "turn", "player": "bo", "card": "shark"})     # out of order
    assert {e["player"] for e in G.host_events(s)} == {"ana", "cy"}
    s = G.apply(s, {"type": "turn", "player": "ana", "card": "seal"})
    s = G.apply(s, {"type": "turn", "player": "cy", "card": "plankton"})
    req = G.race_request(s)
    assert req.auto_start and req.to_json()["auto_start"] is True
    assert G.host_events(s) == G.race_outcomes(s)


def test_a_card_that_cannot_be_there_is_not_offered():
    s = new("ana bo cy", counts={"shark": 1, "plankton": 5})
    s = G.apply(s, {"type": "turn", "player": "ana", "card": "shark"})
    assert {e["card"] for e in G.host_events(s)} == {"plankton"}    # the only Shark is out


def test_the_last_card_logged_starts_the_race_with_no_tap():
    """On a table whose ``auto_start`` setting is off, Chomp!'s race still
    starts by itself: its countdown begins with the round's last card."""
    from companion.record.store import Store
    from companion.table.session import TableSession

    t = TableSession(Store(":memory:"), clock=lambda: 10**12)
    assert t.settings["auto_start"] is False
    t.new_game("chomp", [{"name": n} for n in ("ana", "bo", "cy")])
    t.log({"type": "turn", "player": "ana", "card": "seal"})
    t.log({"type": "turn", "player": "bo", "card": "shark"})
    assert t.snapshot()["race"] is None
    t.log({"type": "turn", "player": "cy", "card": "plankton"})
    assert t.snapshot()["race"]["phase"] == "countdown"
    t.log({"type": "race", "reason": "chomp", "winner": "ana"})      # decided by hand
    t.log({"type": "turn", "player": "ana", "card": "octopus"})
    t.log({"type": "turn", "player": "bo", "card": "seal"})
    t.log({"type": "turn", "player": "cy", "card": "plankton"})
    assert t.snapshot()["race"] is None                   # an Ink Out: nothing to wait for
    assert t.snapshot()["view"]["next"] == "ink-out"


# -- a Bad Chomp just after the winning slap (docs/rules-notes.md, Bad Chomps) --

def chomp_table(**settings):
    """A live Chomp! table on a clock the test moves: ana Seal, bo Shark,
    cy Big Fish, di Big Fish (only ana and bo may chomp), the race counting
    down by itself; returns the session, the clock and GO."""
    from companion.record.store import Store
    from companion.table.session import TableSession
    from tests.kit.helpers import Clock

    clock = Clock()
    t = TableSession(Store(":memory:"), clock=clock, settings=settings or None)
    t.new_game("chomp", [{"name": n} for n in ("ana", "bo", "cy", "di")])
    for p, card in (("ana", "seal"), ("bo", "shark"), ("cy", "big-fish"), ("di", "big-fish")):
        t.log({"type": "turn", "player": p, "card": card})
    assert t.snapshot()["race"]["phase"] == "countdown"
    return t, clock, t.snapshot()["race"]["go_ns"]


def run_table(t, clock, until_ns, deliveries=()):
    """Move the clock to ``until_ns`` as the pipeline would: tick at every
    deadline, and feed each ``(arrival_ns, edge)`` when it arrives."""
    run_until(t, clock, until_ns, deliveries)


def chomp_races(t):
    return [e for _, e in t._log if e["type"] == "race"]


def test_the_reveal_race_asks_for_the_bad_chomp_window():
    from companion.games.chomp import BAD_CHOMP_AFTER_MS
    assert G.race_request(example()).info["out_of_turn_ms"] == BAD_CHOMP_AFTER_MS == 500


@pytest.mark.parametrize("after_ms", [30, 120, 400])
def test_the_referee_charges_a_bad_chomp_just_after_the_winning_slap(after_ms):
    """The reveal race as the referee runs it once the request's window is in
    its spec: cy's slap ``after_ms`` after bo's, reaching the Pi 0.5 ms
    late, is in the verdict's ``ineligible``, and the round charges it."""
    from companion.races.edges import Edge
    from companion.races.referee import MS, RaceSpec, Referee
    from companion.record.gamefile import header
    req = G.race_request(example())
    spec = RaceSpec(req.kind, players=req.players, eligible=req.eligible, arm_ns=0,
                    out_of_turn_ns=req.info["out_of_turn_ms"] * MS)
    ref = Referee(req.players)
    race = ref.start(spec)
    win, bad = 250 * MS, 250 * MS + after_ms * MS
    ref.feed(Edge("bo", True, win))
    ref.poll(win + ref.hold_ns)                       # the usual verdict time: not yet
    assert race.verdict is None
    ref.poll(bad + 500_000 - 1)
    ref.feed(Edge("cy", True, bad))
    while race.verdict is None:
        ref.poll(ref.next_deadline())
    verdict = race.verdict.to_json()
    assert verdict["winner"] == "bo" and verdict["ineligible"] == ["cy"]
    lines = [json.dumps(header("chomp", ["ana", "bo", "cy", "di"])),
             json.dumps({"type": "reveal", "cards": req.info["cards"]}),
             json.dumps({"type": "race", "reason": req.reason, **race.record()})]
    assert discards(replay_lines(lines).state) == {"ana": 0, "bo": 5, "cy": 0, "di": 0}


@pytest.mark.parametrize("after_ms", [1, 30, 120, 400])
def test_a_bad_chomp_just_after_the_winning_slap_is_still_charged(after_ms):
    """bo (Shark) slaps first; cy, whose Big Fish is the lowest card, slaps
    her own kind ``after_ms`` later, her press reaching the Pi 0.5 ms after
    its stamp: a Bad Chomp, charged as the rulebook says ("put the top card
    of your pile face down ... The winner of the round takes both of your
    cards")."""
    from companion.races.edges import Edge
    t, clock, go = chomp_table()
    win = go + 250 * 1_000_000
    bad = win + after_ms * 1_000_000
    run_table(t, clock, bad + 2_000_000_000,
              [(win + 100_000, Edge("bo", True, win)), (win + 80_000_000, Edge("bo", False, win + 80_000_000)),
               (bad + 500_000, Edge("cy", True, bad)), (bad + 80_000_000, Edge("cy", False, bad + 80_000_000))])
    ev = chomp_races(t)[-1]
    assert ev["winner"] == "bo" and ev["ineligible"] == ["cy"]
    s = t.state
    assert discards(s) == {"ana": 0, "bo": 5, "cy": 0, "di": 0}   # 4 turned + cy's penalty


def test_a_slap_long_after_the_winning_one_is_no_longer_this_rounds():
    """A slap more than the Bad Chomp window after the winning slap belongs
    to no round: the winner has taken the cards."""
    from companion.races.edges import Edge
    from companion.races.referee import DEFAULT_OUT_OF_TURN_NS
    t, clock, go = chomp_table()
    win = go + 250 * 1_000_000
    late = win + DEFAULT_OUT_OF_TURN_NS + 50 * 1_000_000
    run_table(t, clock, late + 2_000_000_000,
              [(win, Edge("bo", True, win)), (late, Edge("di", True, late))])
    ev = chomp_races(t)[-1]
    assert ev["winner"] == "bo" and ev["ineligible"] == []


def test_the_verdict_waits_for_the_bad_chomp_window_only_while_a_slap_could_come():
    """When everyone who could make a Bad Chomp has already slapped, the
    verdict is out at the usual hold after the winning slap."""
    from companion.races.edges import Edge
    from companion.races.referee import DEFAULT_HOLD_NS
    t, clock, go = chomp_table()
    win = go + 250 * 1_000_000
    run_table(t, clock, win + DEFAULT_HOLD_NS - 1,
              [(go + 100 * 1_000_000, Edge("cy", True, go + 100 * 1_000_000)),
               (go + 120 * 1_000_000, Edge("di", True, go + 120 * 1_000_000)),
               (win, Edge("bo", True, win))])
    assert not chomp_races(t)
    run_table(t, clock, win + DEFAULT_HOLD_NS)
    ev = chomp_races(t)[-1]
    assert ev["winner"] == "bo" and ev["ineligible"] == ["cy", "di"]
