"""Screens at the table (issue 33): phones awake over plain HTTP, verdicts
spoken, the TV that fits. Drives Debian's chromium (Playwright) against real
tables in this process, as the browser tests do:

* ``speech_after_verdict_ms_p95`` (and ``_max``): a Chope! verdict's live
  message reaching the TV's page (1280 x 800, the voice on by default) until
  the page calls ``speechSynthesis.speak()`` with the verdict's line, over
  20 races (speech stubbed in the page to record the call:
  tests/kit/screens.py). Goal: at most 300 ms.
* ``tv_overflow_px``: the most the scoreboard at 1280 x 800 is taller than
  800 px over every game x 3-6 players x moment (tests/kit/screens.py's
  ``MOMENTS``; English). Goal: 0.
* ``phone_awake_http``: 1 when a phone page opened at the machine's LAN
  address (plain HTTP, no Wake Lock there) keeps the screen on after its
  first tap (the muted video playing), else 0. Goal: 1.

Without chromium at ``$COMPANION_CHROMIUM`` (default ``/usr/bin/chromium``)
or without Playwright it prints why on stderr and returns no figures. Run
it alone with ``python -m bench screens``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bench.tapkit import CHROMIUM, CHROMIUM_ARGS, missing
from tests.kit.browser import PHONE
from tests.kit.screens import LATENCIES, NAMES, PLAYERS, TV, VOICE_STUB, tv_heights
from tests.kit.web import start_table

RACES = 20
#: a card every 3 s, as at a table: a press this far from the next card is
#: never that card's
PACE_S = 3.0


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]


def speech(browser, root: Path) -> list[tuple[str, float, str]]:
    table = start_table(root / "speech")
    ctx = browser.new_context(**TV)
    try:
        table.session.new_game("chope", [{"name": n, "buzzer": n} for n in NAMES[:3]])
        ctx.add_init_script(VOICE_STUB)
        page = ctx.new_page()
        page.goto(table.url + "/")
        page.wait_for_selector("#conn.live")
        for i in range(RACES):
            card = "table:" + ("red", "orange", "yellow", "green", "blue", "purple")[i % 6]
            table.session.log({"type": "flip", "card": card})
            buzzer = NAMES[1 + i % 2]
            table.source.press(buzzer)
            table.source.release(buzzer)
            page.wait_for_function("(n) => window.__verdicts.length > n", arg=i, timeout=20_000)
            time.sleep(PACE_S)
        got = page.evaluate(LATENCIES)
    finally:
        ctx.close()
        table.close()
    ms = [m for _, m, _ in got if m is not None]
    unspoken = sum(1 for _, m, _ in got if m is None)
    return [("speech_after_verdict_ms_p95", p95(ms) if ms else float("nan"),
             f"ms ({len(got)} verdicts; goal <= 300)"),
            ("speech_after_verdict_ms_max", max(ms) if ms else float("nan"), "ms"),
            ("speech_verdicts_unspoken", unspoken, "verdicts never spoken (goal 0)")]


def overflow(browser, root: Path) -> list[tuple[str, float, str]]:
    worst, where, seen = 0, "", 0
    for game, n, moment, got in tv_heights(browser, root, PLAYERS):
        seen += 1
        if got["height"] - 800 > worst:
            worst, where = got["height"] - 800, f" worst: {game} {n} players {moment}"
    return [("tv_overflow_px", worst, f"px over 800 ({seen} screens;{where or ' none over'}; goal 0)")]


def awake(browser, root: Path) -> list[tuple[str, float, str]]:
    from playwright.sync_api import TimeoutError

    from companion.web.join import lan_ip

    ip = lan_ip()
    if not ip:
        print("# phone_awake_http skipped: no non-loopback address", file=sys.stderr)
        return []
    table = start_table(root / "awake", host="0.0.0.0")
    ctx = browser.new_context(**PHONE)
    try:
        page = ctx.new_page()
        page.goto(f"http://{ip}:{table.port}/")
        page.wait_for_selector("#conn.live")
        page.locator("#banner").click()
        try:
            page.wait_for_function("""() => { const v = document.getElementById('awake-video');
                return !!v && !v.paused && v.currentTime > 0.1; }""", timeout=20_000)
            ok = 1
        except TimeoutError:        # the video never played: the figure says so
            ok = 0
        lock = page.evaluate("'wakeLock' in navigator")
    finally:
        ctx.close()
        table.close()
    note = f"1: kept awake at http://<LAN address> (wake lock there: {'yes' if lock else 'no'}; goal 1)"
    return [("phone_awake_http", ok, note)]


def run() -> list[tuple[str, float, str]]:
    why = missing()
    if why:
        print(f"# bench_screens skipped: {why}", file=sys.stderr)
        return []
    from playwright.sync_api import sync_playwright

    out = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            out += awake(browser, Path(tmp))
            out += speech(browser, Path(tmp))
            out += overflow(browser, Path(tmp))
        finally:
            browser.close()
    return out


if __name__ == "__main__":
    for metric, value, unit in run():
        print(f"{metric} {value:.6g} {unit}", flush=True)
