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
