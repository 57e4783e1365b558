"""The pin map: one source (hardware/pinmap.toml) that the package copy and
wiring.md mirror, validated with clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from companion.buzzers import pinmap as pinmap_mod
from companion.buzzers.mock import ClockedMockFactory
from companion.buzzers.pinmap import (MAX_PLAYERS, RESERVED, PinMap, PinMapBadNumber,
                                      PinMapDuplicate, PinMapError, PinMapReserved, Slot,
                                      default_pinmap_path, load_pinmap, packaged_pinmap_path,
                                      parse_pinmap)

ROOT = Path(__file__).resolve().parents[1]
HARDWARE_MAP = ROOT / "hardware" / "pinmap.toml"
WIRING = ROOT / "wiring.md"


def minimal(**extra) -> str:
    lines = ["[[player]]", "button = 17", "led = 27"]
    return "\n".join(lines) + "\n" + "\n".join(f"{k} = {v}" for k, v in extra.items())


# ---------------------------------------------------------------------------
# The shipped map


def test_the_shipped_pin_map_is_valid_with_six_buzzers_and_a_cue():
    pm = load_pinmap(HARDWARE_MAP)
    assert len(pm.slots) == MAX_PLAYERS == 6
    assert all(s.led is not None for s in pm.slots)
    assert pm.cue_led is not None and pm.piezo is not None
    assert len(pm.pins()) == 2 * 6 + 2


def test_the_shipped_pin_map_keeps_i2c_spi_uart_and_the_id_eeprom_free():
    used = set(load_pinmap(HARDWARE_MAP).pins())
    assert not used & {0, 1, 2, 3, 7, 8, 9, 10, 11, 14, 15}
    assert set(RESERVED) == {0, 1, 2, 3, 7, 8, 9, 10, 11, 14, 15}


def test_the_package_copy_is_identical_to_hardware_pinmap():
    assert packaged_pinmap_path().read_bytes() == HARDWARE_MAP.read_bytes()


def test_the_default_is_the_repository_map(monkeypatch):
    monkeypatch.delenv("COMPANION_PINMAP", raising=False)
    assert default_pinmap_path().resolve() == HARDWARE_MAP.resolve()
    assert load_pinmap().slots == load_pinmap(HARDWARE_MAP).slots


def test_an_environment_variable_names_another_map(monkeypatch, tmp_path):
    other = tmp_path / "mine.toml"
    other.write_text(minimal())
    monkeypatch.setenv("COMPANION_PINMAP", str(other))
    assert default_pinmap_path() == other
    assert load_pinmap().slots == (Slot(1, 17, 27),)


def test_without_the_source_tree_the_package_copy_is_used(monkeypatch, tmp_path):
    monkeypatch.delenv("COMPANION_PINMAP", raising=False)
    fake = tmp_path / "site-packages" / "companion" / "buzzers" / "pinmap.py"
    monkeypatch.setattr(pinmap_mod, "__file__", str(fake))
    assert default_pinmap_path() == packaged_pinmap_path()


def test_header_pins_in_the_comments_match_gpiozero_board_data():
    f = ClockedMockFactory()
    try:
        for line in HARDWARE_MAP.read_text().splitlines():
            m = re.match(r"\s*(?:button|led|piezo)\s*=\s*(\d+)\s*#\s*header pin (\d+)", line)
            if m:
                (header, info), = f.board_info.find_pin(f"GPIO{m[1]}")
                assert info.number == int(m[2]), line
    finally:
        f.close()


# ---------------------------------------------------------------------------
# wiring.md mirrors the toml


def _table(text: str, name: str) -> list[list[str]]:
    block = re.search(rf"<!-- pinmap:{name}\b.*?-->(.*?)<!-- /pinmap:{name} -->", text, re.S)
    assert block, f"wiring.md has no pinmap:{name} table"
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in block[1].strip().splitlines() if line.strip().startswith("|")]
    return [r for r in rows[1:] if not set("".join(r)) <= set("-: ")]


def test_wiring_md_buzzer_table_matches_the_toml():
    pm = load_pinmap(HARDWARE_MAP)
    rows = _table(WIRING.read_text(), "buzzers")
    assert [(int(r[0]), int(r[1]), int(r[3])) for r in rows] == \
        [(s.slot, s.button, s.led) for s in pm.slots]


def test_wiring_md_cue_table_matches_the_toml():
    pm = load_pinmap(HARDWARE_MAP)
    rows = {r[0].split()[0]: int(r[1]) for r in _table(WIRING.read_text(), "cue")}
    assert rows == {"LED": pm.cue_led, "piezo": pm.piezo}
    assert f"piezo ({pm.piezo_kind})" in WIRING.read_text()


def test_wiring_md_header_pins_are_right():
    f = ClockedMockFactory()
    try:
        def header(gpio):
            (_, info), = f.board_info.find_pin(f"GPIO{gpio}")
            return info.number
        text = WIRING.read_text()
        for r in _table(text, "buzzers"):
            assert int(r[2]) == header(int(r[1])) and int(r[4]) == header(int(r[3])), r
        for r in _table(text, "cue"):
            assert int(r[2]) == header(int(r[1])), r
    finally:
        f.close()


# ---------------------------------------------------------------------------
# Errors


def test_a_pin_used_twice_names_both_uses():
    text = minimal() + "\n[[player]]\nbutton = 22\nled = 17\n"
    with pytest.raises(PinMapDuplicate, match="GPIO17 is used twice: slot 1 button and slot 2 led"):
        parse_pinmap(text)


def test_the_cue_cannot_share_a_buzzer_pin():
    with pytest.raises(PinMapDuplicate, match="cue piezo"):
        parse_pinmap(minimal() + "\n[cue]\npiezo = 27\n")


@pytest.mark.parametrize("bad", ["28", "-1", "\"17\"", "17.0", "true", "99"])
def test_a_pin_that_is_not_a_header_gpio_is_refused(bad):
    with pytest.raises(PinMapBadNumber, match="slot 1 button"):
        parse_pinmap(f"[[player]]\nbutton = {bad}\n")


@pytest.mark.parametrize("pin, why", [(2, "I2C1 SDA"), (3, "I2C1 SCL"), (10, "SPI0 MOSI"),
                                      (14, "UART TXD"), (0, "ID EEPROM")])
def test_a_reserved_pin_is_refused_and_says_why(pin, why):
    with pytest.raises(PinMapReserved, match=why):
        parse_pinmap(f"[[player]]\nbutton = {pin}\n")


def test_a_reserved_pin_can_be_allowed_explicitly():
    pm = parse_pinmap("allow_reserved = [14, 15]\n[[player]]\nbutton = 14\nled = 15\n")
    assert pm.slots == (Slot(1, 14, 15),)


def test_more_than_six_buzzers_is_refused():
    text = "".join(f"[[player]]\nbutton = {p}\n" for p in (4, 5, 6, 12, 13, 16, 17))
    with pytest.raises(PinMapError, match="at most 6"):
        parse_pinmap(text)


@pytest.mark.parametrize("text, message", [
    ("", "no \\[\\[player\\]\\] tables"),
    ("[[player]]\nled = 27\n", "slot 1 has no button"),
    ("[[player]]\nslot = 2\nbutton = 17\n", "slots must be numbered"),
    ("[[player]]\nbutton = 17\ncolour = 'red'\n", "unknown key"),
    ("pins = 3\n[[player]]\nbutton = 17\n", "unknown key"),
    ("[[player]]\nbutton = 17\n[cue]\npiezo = 18\npiezo_kind = 'loud'\n", "piezo_kind"),
    ("led_kind = 'rgb'\n[[player]]\nbutton = 17\n", "led_kind"),
    ("schema = 2\n[[player]]\nbutton = 17\n", "schema"),
    ("[[player]\nbutton = 17\n", "not valid TOML"),
])
def test_bad_pin_maps_get_a_clear_error(text, message):
    with pytest.raises(PinMapError, match=message):
        parse_pinmap(text, source="box.toml")


def test_errors_name_the_file_and_are_value_errors(tmp_path):
    bad = tmp_path / "box.toml"
    bad.write_text("[[player]]\nbutton = 2\n")
    with pytest.raises(ValueError, match="box.toml"):
        load_pinmap(bad)
    with pytest.raises(PinMapError, match="cannot read pin map"):
        load_pinmap(tmp_path / "missing.toml")


def test_players_take_slots_in_order():
    pm = load_pinmap(HARDWARE_MAP)
    slots = pm.for_players(["ana", "bo", "cy"])
    assert [s.slot for s in slots.values()] == [1, 2, 3]
    with pytest.raises(PinMapError, match="distinct"):
        pm.for_players(["ana", "ana"])
    with pytest.raises(PinMapError, match="only 1 buzzer slots"):
        PinMap((Slot(1, 17),)).for_players(["ana", "bo"])


# ---------------------------------------------------------------------------
# The Pico box ([pico] table)

#: The Pico's physical pins of its GPIOs (Raspberry Pi Pico datasheet pinout).
PICO_PIN = {0: 1, 1: 2, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 8: 11, 9: 12, 10: 14, 11: 15,
            12: 16, 13: 17, 14: 19, 15: 20, 16: 21, 17: 22, 18: 24, 19: 25, 20: 26, 21: 27,
            22: 29, 26: 31, 27: 32, 28: 34}


def _boxconfig():
    import importlib.util
    spec = importlib.util.spec_from_file_location("boxconfig", ROOT / "firmware" / "boxconfig.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_shipped_map_has_a_pico_box_whose_sampled_pins_are_consecutive():
    pico = load_pinmap(HARDWARE_MAP).pico
    assert pico is not None and len(pico.buttons) == len(pico.leds) == 6
    s = pico.sampled()
    assert list(s) == list(range(s[0], s[0] + 10))
    assert len(pico.pins()) == 6 + 6 + 4 + 1


def test_the_firmware_pin_table_mirrors_the_pico_map():
    pico = load_pinmap(HARDWARE_MAP).pico
    c = _boxconfig()
    assert tuple(g for _, _, g in c.INPUTS) == pico.sampled()
    assert c.IN_BASE == pico.sampled()[0]
    assert [(r, n) for r, n, _ in c.INPUTS] == [(1, i) for i in range(1, 7)] + \
        [(2, 0), (3, 0), (4, 0), (5, 0)]
    assert tuple(g for _, g in c.LEDS) == pico.leds and c.PIEZO == pico.piezo
    assert (c.BIT_SELFTEST_IN, c.BIT_TEST_OUT, c.BIT_CUE, c.BIT_MARK) == (6, 7, 8, 9)


def test_wiring_md_pico_table_matches_the_toml_and_the_picos_pinout():
    pico = load_pinmap(HARDWARE_MAP).pico
    rows = _table(WIRING.read_text(), "pico")
    assert {int(r[1]): r[0] for r in rows} == {
        g: {"buzzer": "buzzer", "self-test input": "self-test input"}.get(w, w)
        .replace("cue led", "cue LED").replace(" led", " LED")
        .replace("sync mark", "sync mark (leave unconnected)")
        .replace("cue piezo", "cue piezo (active)")
        for g, w in pico.pins().items()}
    for r in rows:
        assert int(r[2]) == PICO_PIN[int(r[1])], r


@pytest.mark.parametrize("change, message", [
    ({"buttons": "[2, 3, 4, 5, 6]"}, "6 GP numbers"),
    ({"leds": "[12, 13]"}, "one GP number per button"),
    ({"cue_led": "19"}, "ten consecutive GPIOs"),
    ({"leds": "[12, 13, 14, 15, 16, 2]"}, "GP2 is used twice"),
    ({"piezo": "24"}, "not on the Pico's edge pins"),
    ({"piezo": "'loud'"}, "not a GP number"),
    ({"colour": "3"}, "unknown key"),
    ({"sync_mark": None}, "missing"),
])
def test_bad_pico_tables_get_a_clear_error(change, message):
    table = {"buttons": "[2, 3, 4, 5, 6, 7]", "leds": "[12, 13, 14, 15, 16, 17]",
             "selftest_in": "8", "test_out": "9", "cue_led": "10", "sync_mark": "11",
             "piezo": "18"}
    table.update(change)
    text = minimal() + "\n[pico]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()
                                              if v is not None)
    with pytest.raises(PinMapError, match=message):
        parse_pinmap(text)


def test_a_map_without_a_pico_table_has_no_pico_box():
    assert parse_pinmap(minimal()).pico is None
