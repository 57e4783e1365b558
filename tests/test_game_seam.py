"""The games seam: what every game declares as data, checked in one place.

Settings are refused in :meth:`Game.setup` by their declaration (the
setting's name in the message), every game describes itself as JSON, the
registry refuses what is not a game, chance odds come from the one general
mechanism (Chope!'s bust odds against an independent count), and a toy game
of a few lines, registered from a test, goes through the same conformance
machinery as the real ones.
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction

import pytest

from companion.games import (Game, RulesError, Setting, available_games, game_names,
                             get_game, register_game, unregister_game)
from tests.kit.conformance import conformance
from tests.kit.toygame import CoinRace


@pytest.fixture
def toy():
    name = register_game(CoinRace)
    yield get_game(name)
    unregister_game(name)


# -- the toy game through the conformance machinery ---------------------------
def test_a_registered_toy_game_is_known_by_name_and_plays_to_the_end(toy, random_play):
    games, seed = random_play
    assert "coinrace" in game_names() and "coinrace" in available_games()
    figures = conformance("coinrace", games, seed=seed)
    assert figures["games"] == games and figures["events"] > games * 4
    assert "coinrace" in game_names()


def test_unregistered_game_is_gone(toy):
    unregister_game("coinrace")
    with pytest.raises(KeyError, match="coinrace"):
        get_game("coinrace")
    register_game(CoinRace)            # the fixture's unregister finds it again


def test_toy_game_race_false_starts_and_coin_flip_chance(toy):
    s = toy.setup(["ana", "bo"], {"false_start_costs": True, "target": 2})
    assert toy.chance_outcomes(s) == [({"type": "flip", "side": "heads"}, Fraction(1, 2)),
                                      ({"type": "flip", "side": "tails"}, Fraction(1, 2))]
    assert toy.legal_events(s) == [e for e, _ in toy.chance_outcomes(s)]
    s = toy.apply(s, {"type": "flip", "side": "heads"})
    outcomes = toy.race_outcomes(s)
    assert toy.legal_events(s) == outcomes and toy.chance_outcomes(s) == []
    assert {"type": "race", "reason": "grab", "winner": "ana", "loser": None, "tied": [],
            "false_starts": ["bo"], "ineligible": []} in outcomes
    s = toy.apply(s, {"type": "race", "reason": "grab", "winner": "ana"})
    s = toy.apply(s, {"type": "flip", "side": "tails"})
    s = toy.apply(s, {"type": "race", "reason": "grab", "winner": "bo", "false_starts": ["ana"]})
    assert toy.scores(s) == {"ana": 0, "bo": 0}
    with pytest.raises(RulesError, match="'grab', not 'chope'"):
        toy.apply(toy.apply(s, {"type": "flip", "side": "heads"}),
                  {"type": "race", "reason": "chope", "winner": "bo"})


# -- settings: declared, checked in one place ------------------------------------
@pytest.mark.parametrize("options, named", [
    ({"false_start_costs": "yes"}, "false_start_costs"),           # bool
    ({"false_start_costs": 1}, "false_start_costs"),
    ({"tails": "double"}, "tails"),                                # choice
    ({"tails": None}, "tails"),
    ({"target": 0}, "target"),                                     # int, below
    ({"target": 6}, "target"),                                     # above
    ({"target": True}, "target"),                                  # a bool is no number
    ({"target": "3"}, "target"),
    ({"target": 2.5}, "target"),
    ({"colour": "red"}, "colour"),                                 # unknown option
])
def test_a_bad_option_is_refused_naming_the_setting(toy, options, named):
    with pytest.raises(RulesError, match=named) as err:
        toy.setup(["ana", "bo"], options)
    assert err.value.rule == "setup"


def test_a_player_setting_must_name_a_player():
    chope = get_game("chope")
    with pytest.raises(RulesError, match="starting_player.*must name a player"):
        chope.setup(["ana", "bo"], {"starting_player": "zed"})
    assert chope.setup(["ana", "bo"], {"starting_player": None})["starting_player"] == "ana"
    assert chope.setup(["ana", "bo"], {"starting_player": "bo"})["starting_player"] == "bo"


def test_options_default_to_the_declared_settings(toy):
    assert toy.default_options() == {"target": 3, "tails": "minus", "false_start_costs": False}
    assert toy.setup(["a", "b"], {"target": 5})["rules"] == {
        "target": 5, "tails": "minus", "false_start_costs": False}


def test_int_setting_message_gives_its_range():
    with pytest.raises(RulesError, match="whole number from 1 to 5"):
        CoinRace().setup(["a", "b"], {"target": 9})
    with pytest.raises(RulesError, match=r"whole number >= 0"):
        get_game("chope").setup(["a", "b"], {"mynahs": -1})


def test_setting_declarations_are_checked_when_written():
    with pytest.raises(ValueError, match="kind"):
        Setting("x", 1, "float")
    with pytest.raises(ValueError, match="default"):
        Setting("x", "c", "choice", ("a", "b"))


# -- every game described as data --------------------------------------------
@pytest.mark.parametrize("name", sorted(available_games()))
def test_every_game_describes_itself_as_json(name):
    game = get_game(name)
    info = json.loads(json.dumps(game.info()))
    assert info["name"] == name and info["title"]
    assert info["min_players"] <= info["max_players"]
    assert info["score_unit"]
    names = [s["name"] for s in info["settings"]]
    assert len(names) == len(set(names)) and set(names) == set(game.default_options())
    players = [f"p{i}" for i in range(game.min_players)]
    for s in game.settings:        # every default passes its own check
        assert s.check(game.default_options()[s.name], players) == s.default
    for reason in game.race_reasons:
        assert info["race_reasons"][reason.name]["title"] == reason.title
        assert reason.kind in ("first-press", "last-press", "first-release")
    game.setup(players)            # the defaults make a game


def test_house_rule_settings_quote_the_rulebook():
    for name in ("chope", "chomp"):
        for s in get_game(name).settings:
            assert s.label and s.rule, (name, s.name)
    from pathlib import Path
    notes = Path(__file__).resolve().parents[1] / "docs" / "rules-notes.md"
    text = " ".join(notes.read_text().split())
    for name in ("chope", "chomp"):     # each quote stands in the project's own notes
        for s in get_game(name).settings:
            assert " ".join(s.rule.split()) in text, (name, s.name, s.rule)


def test_race_reasons_word_the_verdict_as_the_page_did():
    chope, chomp = get_game("chope"), get_game("chomp")
    assert chope.race_reason("chope").word({"winner": "bo"}) == "bo chopes it!"
    assert chope.race_reason("siam").word({"loser": "cy"}) == "cy was last: Siam!"
    assert chope.race_reason("siam").word({"tied": ["a", "b"]}) == "Tie: a and b"
    assert chope.race_reason("chope").word({}) == "Nobody"
    assert chomp.race_reason("feeding-frenzy").title == "Feeding Frenzy!"
    assert chomp.race_reason("chomp").announced and not chope.race_reason("chope").announced
    assert chope.info()["score_unit"] == "points" and chomp.info()["score_unit"] == "cards"


# -- the registry --------------------------------------------------------------
def test_register_game_refuses_a_taken_name_and_what_is_not_a_game(toy):
    with pytest.raises(ValueError, match="already registered"):
        register_game(CoinRace)
    with pytest.raises(ValueError, match="already registered"):
        register_game("tests.kit.toygame:CoinRace", "chope")
    with pytest.raises(TypeError, match="not a Game"):
        register_game(dict)
    with pytest.raises(TypeError, match="not a Game"):
        register_game(object())
    with pytest.raises(ValueError, match="identifier"):
        register_game(CoinRace, "coin race")
    with pytest.raises(ValueError, match="needs a name"):
        register_game("tests.kit.toygame:CoinRace")
    assert register_game(CoinRace, replace=True) == "coinrace"


def test_register_game_by_module_path_is_imported_on_first_use():
    name = register_game("tests.kit.toygame:CoinRace", "lazycoin")
    try:
        assert isinstance(get_game(name), CoinRace)
    finally:
        unregister_game(name)


def test_game_is_abstract_until_its_rules_are_given():
    with pytest.raises(TypeError):
        Game()


# -- chance: one mechanism for odds ---------------------------------------------
SMALL = {"tables": {"red": 2, "blue": 2}, "mynahs": 1,
         "foods": {"laksa": {"kind": "main", "copies": 3}, "satay": {"kind": "side", "copies": 2},
                   "otah": {"kind": "side", "copies": 2}}}


def test_chope_flip_odds_are_copies_left_over_cards_left():
    g = get_game("chope")
    s = g.setup(["ana", "bo"], SMALL)
    for card in ("food:laksa", "food:satay"):
        s = g.apply(s, {"type": "flip", "card": card})
    deck = Counter({"table:red": 2, "table:blue": 2, "mynah": 1, "food:laksa": 2,
                    "food:satay": 1, "food:otah": 2})           # 12 cards less the two flipped
    outcomes = dict((e["card"], p) for e, p in g.chance_outcomes(s))
    assert outcomes == {c: Fraction(n, 10) for c, n in deck.items()}
    assert g.decisions(s) == [{"type": "stop"}]


def test_chope_bust_odds_equal_an_independent_count():
    """Count the deck's cards one by one: the flips that bust are the Food
    cards of a type already face-up."""
    g = get_game("chope")
    s = g.setup(["ana", "bo"], SMALL)
    flipped = []
    for card in ("food:laksa", "food:satay", "table:red"):
        s = g.apply(s, {"type": "flip", "card": card})
        flipped.append(card)
        if card.startswith("table:"):
            s = g.apply(s, {"type": "race", "reason": "chope", "winner": "bo"})
    cards = [c for c, n in [("table:red", 2), ("table:blue", 2), ("mynah", 1),
                            ("food:laksa", 3), ("food:satay", 2), ("food:otah", 2)]
             for _ in range(n)]
    for c in flipped:
        cards.remove(c)
    busting = [c for c in cards if c in ("food:laksa", "food:satay")]
    expected = Fraction(len(busting), len(cards))
    assert expected == Fraction(3, 9)
    assert g.chance_probability(s, lambda e: e["card"] in ("food:laksa", "food:satay")) \
        == expected
    assert g.bust_odds(s) == {"cards": 3, "of": 9, "probability": round(3 / 9, 4)}
    assert g.public_view(s)["bust_odds"] == g.bust_odds(s)


def test_no_odds_when_the_next_step_is_not_chance():
    g = get_game("chope")
    s = g.apply(g.setup(["ana", "bo"], SMALL), {"type": "flip", "card": "table:red"})
    assert g.chance_outcomes(s) == [] and g.chance_probability(s, lambda e: True) is None
    assert g.bust_odds(s) is None
